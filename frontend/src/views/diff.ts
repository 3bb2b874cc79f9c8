// The diff view: the server's summary, step time before/after, per-category delta chart and the
// op table ordered by how much each op changed.

import type { Chart } from "../charts";
import { drawDeltaChart } from "../reportcharts";
import { deltaBars, type Theme } from "../chartdata";
import { opDelta, opStatus, outcomeRows, sideAccelerator, sideBreakdownPct, significantPrecision, sortOpsByChange, stepTimeChange, stepTimeLine, summaryLines } from "../diffops";
import { h, table } from "../dom";
import { formatBytes, formatDeltaMs, formatDeltaPct, formatNumber } from "../format";
import type { Diff, DiffOp } from "../types";
import { verdictView, type Severity } from "../verdict";
import { badge, card, chartBox, list, note } from "./common";

const CHANGE_SEVERITY: Record<string, Severity> = { faster: "ok", slower: "bad", same: "neutral" };

function opsTable(testid: string, ops: DiffOp[], limit: number): HTMLElement {
  const sorted = sortOpsByChange(ops).slice(0, limit);
  return table(
    testid,
    ["Name", "Baseline ms", "Candidate ms", "Δ ms", "Status"],
    sorted.map((o) => {
      const d = opDelta(o);
      return [
        h("span", { class: "adv-name" }, o.name),
        formatNumber(o.baseline_ms),
        formatNumber(o.candidate_ms),
        h("span", { class: d < 0 ? "adv-faster" : d > 0 ? "adv-slower" : "", attrs: { "data-delta": String(d) } }, formatDeltaMs(d)),
        h("span", { class: "adv-nowrap" }, opStatus(o)),
      ];
    }),
    [1, 2, 3],
  );
}

function verdictsLine(diff: Diff): HTMLElement {
  const side = (which: "baseline" | "candidate") =>
    verdictView(diff.verdict?.[which], { breakdownPct: sideBreakdownPct(diff, which), accelerator: sideAccelerator(diff, which) });
  const vb = side("baseline");
  const vc = side("candidate");
  return h(
    "p",
    { testid: "diff-verdicts", class: "adv-verdicts" },
    h("span", { class: "adv-muted" }, "Baseline "),
    badge(vb.short, vb.severity),
    h("span", { class: "adv-muted" }, " → candidate "),
    badge(vc.short, vc.severity),
  );
}

function memoryLine(diff: Diff): HTMLElement | null {
  const m = diff.peak_memory_bytes;
  if (!m || typeof m.baseline !== "number" || typeof m.candidate !== "number") return null;
  return note(`Peak memory ${formatBytes(m.baseline)} → ${formatBytes(m.candidate)} (${formatDeltaPct(m.delta_pct ?? null)})`, "diff-memory");
}

export function renderDiff(diff: Diff, theme: Theme): { el: HTMLElement; draw: () => Chart[] } {
  const warnings = diff.warnings ?? [];
  const change = stepTimeChange(diff);
  const line = stepTimeLine(diff);
  const bars = deltaBars(diff, theme);
  const { box, canvas } = chartBox("chart-delta", 240, "Change of each category, ms per step");
  const vb = diff.verdict?.baseline;
  const vc = diff.verdict?.candidate;
  const ops = diff.ops ?? [];
  const kernels = diff.kernels ?? [];
  const precision = significantPrecision(diff);
  const lines = summaryLines(diff.summary);
  const outcomes = outcomeRows(diff);
  const el = h(
    "div",
    { class: "adv-report", testid: "diff", attrs: { "data-baseline": diff.baseline, "data-candidate": diff.candidate } },
    h(
      "section",
      { class: `adv-card adv-verdict sev-${CHANGE_SEVERITY[change]}`, testid: "diff-card", attrs: { "data-change": change } },
      h("h2", null, `${diff.baseline} → ${diff.candidate}`),
      line ? h("p", { class: "adv-big", testid: "diff-steptime" }, line) : null,
      lines.length ? h("ul", { class: "adv-list", testid: "diff-summary" }, lines.map((t) => h("li", { testid: "diff-summary-line" }, t))) : null,
      diff.step_time?.significant === false && diff.step_time.reason ? note(diff.step_time.reason, "diff-reason") : null,
      vb || vc ? verdictsLine(diff) : null,
      memoryLine(diff),
      precision.length
        ? note(`Precision change: ${precision.map(([k, v]) => `${k} ${formatDeltaPct(v)}`).join(", ")}`, "diff-precision")
        : null,
      typeof diff.tensor_cores_delta_pct === "number" && diff.tensor_cores_delta_pct !== 0
        ? note(`Tensor Core share of device time: ${formatDeltaPct(diff.tensor_cores_delta_pct)}`)
        : null,
    ),
    warnings.length ? card("Warnings", "diff-warnings", list(warnings)) : null,
    outcomes.length
      ? card(
          "The baseline's advice: what it predicted, what the candidate saved",
          "diff-outcomes-card",
          table("diff-outcomes", ["Recommendation", "Acted on", "Predicted ms/step", "Saved on the step", "Saved on its category", "Verdict"], outcomes, [2, 3, 4]),
          note("Positive: faster. A fix is acted on when the signal it targets moved (or the rule no longer fires); fixes made together are judged on their combined interval, with 10 % of the baseline step for run-to-run noise."),
        )
      : null,
    card(
      "Change per category (ms per step)",
      "diff-delta-card",
      bars.labels.length ? box : note("No breakdown change in this diff."),
    ),
    card(
      "Ops, largest change first",
      "diff-ops-card",
      ops.length ? opsTable("diff-ops", ops, 100) : note("No per-op data in this diff."),
    ),
    kernels.length
      ? card("Kernels", "diff-kernels-card", h("details", null, h("summary", null, `Kernels, largest change first (${kernels.length})`), opsTable("diff-kernels", kernels, 100)))
      : null,
  );
  return {
    el,
    draw: () =>
      bars.labels.length
        ? [drawDeltaChart(canvas, diff, theme)].filter((c): c is Chart => c !== null)
        : [],
  };
}
