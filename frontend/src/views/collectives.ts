// The collectives panel: how much communication each step does, how much of it compute hides, message
// sizes and bandwidth per collective type, the ranks' skew, and the findings. Layout only.

import type { Collectives, DeepReport } from "../deep/types";
import { h, table } from "../dom";
import { formatBytes, formatMs, formatNumber, formatPct } from "../format";
import { card, note } from "./common";
import { findingCards } from "./findings";

const dash = (x: number | null | undefined, f: (v: number) => string) => (typeof x === "number" ? f(x) : "–");

/** "8 ms of collectives per step, 4 ms of it exposed (20 % of the step); 50 % hidden behind compute". */
export function collectivesLine(c: Collectives): string {
  const parts: string[] = [];
  if (typeof c.per_step_ms === "number") {
    let text = `${formatMs(c.per_step_ms)} of collectives per step`;
    if (typeof c.exposed_per_step_ms === "number") {
      text += `, ${formatMs(c.exposed_per_step_ms)} of it exposed`;
      if (typeof c.exposed_step_pct === "number") text += ` (${formatPct(c.exposed_step_pct)} of the step)`;
    }
    parts.push(text);
  }
  if (typeof c.hidden_pct === "number") parts.push(`${formatPct(c.hidden_pct)} hidden behind compute`);
  return parts.join("; ");
}

export function collectivesCard(r: DeepReport): HTMLElement | null {
  const c = r.collectives;
  if (!c || !c.calls) return null;
  const types = c.types ?? [];
  const skew = c.skew;
  return card(
    "Collectives",
    "collectives-card",
    h("p", { testid: "collectives-summary" }, collectivesLine(c)),
    findingCards(c.findings, "collective-finding", r.run),
    table(
      "collectives-table",
      ["Collective", "Calls per step", "ms per step", "Exposed ms per step", "Hidden", "Mean message", "Ranks", "Bus GB/s"],
      types.map((t) => [
        t.type.replace(/_/g, " "),
        dash(t.calls_per_step, formatNumber),
        dash(t.per_step_ms, formatNumber),
        dash(t.exposed_per_step_ms, formatNumber),
        dash(t.hidden_pct, formatPct),
        dash(t.mean_message_bytes, formatBytes),
        dash(t.group_size, String),
        dash(t.busbw_gbps ?? t.algbw_gbps, formatNumber),
      ]),
      [1, 2, 3, 4, 5, 6, 7],
    ),
    skew
      ? h(
          "p",
          { testid: "collectives-skew" },
          `Slowest of ${skew.ranks} ranks: ${skew.slowest}, computing ${dash(skew.slowest_compute_per_step_ms, formatMs)} per step ` +
            `against a median of ${dash(skew.median_compute_per_step_ms, formatMs)} (${dash(skew.compute_skew_pct, formatPct)} more); ` +
            `the others wait for it inside their collectives.`,
        )
      : null,
    note("Exposed: collective time during which no compute kernel runs on any stream of the same device. Bus bandwidth follows nccl-tests (algorithm bandwidth × the collective's factor).", "collectives-help"),
  );
}
