// The doctor panel: for each profile session found under the logdir, whether TensorBoard lists it,
// what is wrong, and the command or change that fixes it.

import { h } from "../dom";
import type { Doctor } from "../types";
import { badge, card, list, note, snippet } from "./common";

export function doctorProblemCount(d: Doctor | null): number {
  return (d?.sessions ?? []).reduce((n, s) => n + (s.problems?.length ?? 0), 0);
}

export function renderDoctor(d: Doctor): HTMLElement {
  const sessions = d.sessions ?? [];
  const problems = doctorProblemCount(d);
  const ok = d.ok ?? problems === 0;
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
    sessions.map((s) =>
      card(
        s.run ?? s.path ?? "session",
        "doctor-session",
        h(
          "p",
          null,
          s.problems && s.problems.length ? badge(`${s.problems.length} problem${s.problems.length === 1 ? "" : "s"}`, "warn") : badge("ok", "ok"),
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
  );
}
