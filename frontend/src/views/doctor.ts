// The doctor panel: for each profile session found under the logdir, whether TensorBoard lists it,
// what is wrong, and the command or change that fixes it.

import { h, table } from "../dom";
import type { Doctor } from "../types";
import { badge, card, list, note, snippet } from "./common";

export function doctorProblemCount(d: Doctor | null): number {
  return (d?.sessions ?? []).reduce((n, s) => n + (s.problems?.length ?? 0), 0);
}

export function renderDoctor(d: Doctor): HTMLElement {
  const sessions = d.sessions ?? [];
  const problems = doctorProblemCount(d);
  const ok = d.ok ?? problems === 0;
  const bad = sessions.filter((s) => (s.problems?.length ?? 0) > 0);
  const good = sessions.filter((s) => (s.problems?.length ?? 0) === 0);
  return h(
    "div",
    { class: "adv-report", testid: "doctor" },
    h(
      "section",
      { class: `adv-card adv-verdict sev-${ok ? "ok" : "warn"}`, testid: "doctor-status" },
      h(
        "h2",
        null,
        sessions.length === 0
          ? "No profile sessions found under the logdir"
          : ok
            ? `All ${sessions.length} profile session${sessions.length === 1 ? "" : "s"} look fine`
            : `${problems} problem${problems === 1 ? "" : "s"} in ${sessions.length} profile session${sessions.length === 1 ? "" : "s"}`,
      ),
      sessions.length === 0
        ? note(
            "Profiles are read from <logdir>/**/plugins/profile/<session>/<host>.xplane.pb. Profile with the Keras TensorBoard callback (profile_batch) or tf.profiler.experimental.start/stop, and point --logdir at the directory above plugins/.",
          )
        : null,
    ),
    // Problems first, one card each with its fix; sessions that are fine share one compact table.
    bad.map((s) =>
      card(
        s.run ?? s.path ?? "session",
        "doctor-session",
        h(
          "p",
          null,
          badge(`${s.problems?.length ?? 0} problem${s.problems?.length === 1 ? "" : "s"}`, "warn"),
          " ",
          badge(s.visible_in_tensorboard_runs ? "listed in TensorBoard's runs" : "not in TensorBoard's run list", s.visible_in_tensorboard_runs ? "ok" : "neutral"),
          " ",
          badge(`format: ${s.format ?? "unknown"}`, "neutral"),
          " ",
          badge(`step markers: ${s.step_markers ?? "unknown"}`, "neutral"),
        ),
        s.path ? note(`Path: ${s.path}`) : null,
        s.hosts?.length ? note(`Hosts: ${s.hosts.join(", ")}`) : null,
        list(s.problems ?? [], "doctor-problems"),
        s.fix ? snippet("Fix", s.fix, "doctor-fix") : null,
      ),
    ),
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
              s.step_markers ?? "unknown",
              s.visible_in_tensorboard_runs ? "yes" : "no",
            ]),
          ),
        )
      : null,
  );
}
