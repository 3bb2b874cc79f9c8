// The doctor panel: for each profile session found under the logdir, whether TensorBoard lists it,
// what is wrong, and the command or change that fixes it.

import { h, table } from "../dom";
import type { Doctor, DoctorSession } from "../types";
import { stepMarkerLabel } from "../verdict";
import { badge, card, list, note, snippet } from "./common";

/** A session's weight: "problem" hurts what the Advisor shows, "tip" only TensorBoard's own run
 * list or Profile tab. Older servers send no severity: any problem counts as one then. */
export function sessionSeverity(s: DoctorSession): "ok" | "tip" | "problem" {
  if (s.severity === "ok" || s.severity === "tip" || s.severity === "problem") return s.severity;
  return (s.problems?.length ?? 0) > 0 ? "problem" : "ok";
}

/** The number on the Doctor button: problems only, so a healthy logdir with tips stays calm. */
export function doctorProblemCount(d: Doctor | null): number {
  return (d?.sessions ?? []).filter((s) => sessionSeverity(s) === "problem").reduce((n, s) => n + (s.problems?.length ?? 0), 0);
}

/** Fixes that several sessions share (e.g. one `tb-advisor fix-logdir`), each with the runs it fixes,
 * so the page says each fix once. */
export function sharedFixes(sessions: readonly DoctorSession[]): { fix: string; runs: string[] }[] {
  const byFix = new Map<string, string[]>();
  for (const s of sessions) {
    for (const fix of s.fixes ?? (s.fix ? [s.fix] : [])) {
      byFix.set(fix, [...(byFix.get(fix) ?? []), s.run ?? s.path ?? "session"]);
    }
  }
  return [...byFix].filter(([, runs]) => runs.length > 1).map(([fix, runs]) => ({ fix, runs }));
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

export function doctorHeadline(d: Doctor): { text: string; severity: "ok" | "warn" | "neutral" } {
  const sessions = d.sessions ?? [];
  if (sessions.length === 0) return { text: "No profile sessions found under the logdir", severity: "warn" };
  const problems = doctorProblemCount(d);
  const tips = sessions.filter((s) => sessionSeverity(s) === "tip").length;
  if (problems > 0) {
    return { text: `${plural(problems, "problem")} in ${plural(sessions.length, "profile session")}`, severity: "warn" };
  }
  const readAll = `The Advisor reads all ${plural(sessions.length, "profile session")}`;
  return tips > 0
    ? { text: `${readAll}; ${plural(tips, "tip")} for TensorBoard's built-in Profile tab`, severity: "ok" }
    : { text: `All ${plural(sessions.length, "profile session")} look fine`, severity: "ok" };
}

export function renderDoctor(d: Doctor): HTMLElement {
  const sessions = d.sessions ?? [];
  const headline = doctorHeadline(d);
  const bad = sessions.filter((s) => sessionSeverity(s) === "problem");
  const tips = sessions.filter((s) => sessionSeverity(s) === "tip");
  const good = sessions.filter((s) => sessionSeverity(s) === "ok");
  const shared = sharedFixes([...bad, ...tips]);
  const sharedSet = new Set(shared.map((f) => f.fix));
  const sessionCard = (s: DoctorSession, severity: "warn" | "neutral") => {
    const own = (s.fixes ?? (s.fix ? [s.fix] : [])).filter((f) => !sharedSet.has(f));
    const n = s.problems?.length ?? 0;
    return card(
      s.run ?? s.path ?? "session",
      "doctor-session",
      h(
        "p",
        null,
        badge(severity === "warn" ? plural(n, "problem") : plural(n, "tip"), severity),
        " ",
        badge(s.visible_in_tensorboard_runs ? "listed in TensorBoard's runs" : "not in TensorBoard's run list", s.visible_in_tensorboard_runs ? "ok" : "neutral"),
        " ",
        badge(`format: ${s.format ?? "unknown"}`, "neutral"),
        " ",
        badge(`steps marked by: ${stepMarkerLabel(s.step_markers)}`, "neutral"),
      ),
      s.path ? note(`Path: ${s.path}`) : null,
      s.hosts?.length ? note(`Hosts: ${s.hosts.join(", ")}`) : null,
      list(s.problems ?? [], "doctor-problems"),
      own.length ? snippet("Fix", own.join("\n"), "doctor-fix") : null,
      (s.fixes ?? []).some((f) => sharedSet.has(f)) ? note("Fixed by the shared fix above.", "doctor-shared-ref") : null,
    );
  };
  return h(
    "div",
    { class: "adv-report", testid: "doctor" },
    h(
      "section",
      { class: `adv-card adv-verdict sev-${headline.severity}`, testid: "doctor-status", attrs: { "data-severity": headline.severity } },
      h("h2", null, headline.text),
      sessions.length === 0
        ? note(
            "Profiles are read from <logdir>/**/plugins/profile/<session>/<host>.xplane.pb. Profile with the Keras TensorBoard callback (profile_batch) or tf.profiler.experimental.start/stop, and point --logdir at the directory above plugins/.",
          )
        : null,
    ),
    shared.map((f) =>
      card(
        `One fix for ${plural(f.runs.length, "session")}`,
        "doctor-shared-fix",
        note(f.runs.join(", ")),
        snippet("Fix", f.fix, "doctor-fix"),
      ),
    ),
    bad.map((s) => sessionCard(s, "warn")),
    tips.map((s) => sessionCard(s, "neutral")),
    good.length
      ? card(
          `Sessions without problems (${good.length})`,
          "doctor-ok-sessions",
          table(
            "doctor-ok-table",
            ["Run", "Hosts", "Format", "Step markers", "In TensorBoard's runs"],
            good.map((s) => [
              h("span", { class: "adv-name", testid: "doctor-session" }, s.run ?? s.path ?? "session"),
              (s.hosts ?? []).join(", "),
              s.format ?? "unknown",
              stepMarkerLabel(s.step_markers),
              s.visible_in_tensorboard_runs ? "yes" : "no",
            ]),
          ),
        )
      : null,
  );
}
