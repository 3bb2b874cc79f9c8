// Diff helpers: ordering ops by how much they changed and the one-line step-time comparison.

import { categoryLabel } from "./categories";
import { formatDeltaPct, formatMs, formatNumber, formatSigned } from "./format";
import type { CategoryMap, Diff, DiffOp } from "./types";

function num(x: unknown): number | undefined {
  return typeof x === "number" && Number.isFinite(x) ? x : undefined;
}

/** delta_ms from the server, or candidate − baseline when it left the field out. */
export function opDelta(op: DiffOp): number {
  const d = num(op.delta_ms);
  if (d !== undefined) return d;
  return (num(op.candidate_ms) ?? 0) - (num(op.baseline_ms) ?? 0);
}

export function opStatus(op: DiffOp): string {
  if (op.status) return op.status;
  const b = num(op.baseline_ms) ?? 0;
  const c = num(op.candidate_ms) ?? 0;
  if (b === 0 && c > 0) return "new";
  if (c === 0 && b > 0) return "vanished";
  return "changed";
}

/** Largest absolute change first; ties by name so the order is stable between renders. */
export function sortOpsByChange(ops: readonly DiffOp[] | undefined): DiffOp[] {
  return [...(ops ?? [])].sort((a, b) => {
    const d = Math.abs(opDelta(b)) - Math.abs(opDelta(a));
    if (d !== 0) return d;
    return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
}

/**
 * Why a step-time change is not significant, in a few words: "within noise" only where a test found
 * the steps overlapping (reason_code "noise", or a server that sends no code); too few steps to test,
 * and a real change below what the test may call, say so instead. The reason itself is shown below.
 */
function notSignificant(st: NonNullable<Diff["step_time"]>): string {
  const code = st.reason_code;
  if (code === "too_few_steps") return ", too few steps to test";
  if (code !== undefined && code !== null && code !== "noise") return ", not significant";
  const noise = num(st.noise_pct ?? undefined);
  return `, within noise${noise !== undefined ? ` (±${formatDeltaPct(noise).replace(/^\+/, "")})` : ""}`;
}

export function stepTimeLine(diff: Diff): string | null {
  const st = diff.step_time;
  if (!st || (num(st.baseline_ms) === undefined && num(st.candidate_ms) === undefined)) return null;
  const sig = st.significant === undefined ? "" : st.significant ? ", significant" : notSignificant(st);
  return `Step time ${formatMs(st.baseline_ms)} → ${formatMs(st.candidate_ms)} (${formatDeltaPct(st.delta_pct)}${sig})`;
}

export type Change = "faster" | "slower" | "same";

export function stepTimeChange(diff: Diff): Change {
  const st = diff.step_time;
  const d = num(st?.delta_pct);
  if (d === undefined || st?.significant === false || d === 0) return "same";
  return d < 0 ? "faster" : "slower";
}

/** Runs arrive newest first (xprof's order): compare the newest (candidate) with the one before. */
export function defaultDiffPair(names: readonly string[]): [string, string] {
  if (names.length === 0) return ["", ""];
  return [names[Math.min(1, names.length - 1)], names[0]];
}

/** One side's breakdown shares from the diff's per-category rows (for that side's verdict line). */
export function sideBreakdownPct(diff: Diff, side: "baseline" | "candidate"): CategoryMap {
  const out: CategoryMap = {};
  for (const [k, row] of Object.entries(diff.breakdown ?? {})) {
    const v = side === "baseline" ? row.baseline_pct : row.candidate_pct;
    if (typeof v === "number" && Number.isFinite(v)) out[k] = v;
  }
  return out;
}

/**
 * Whether one side ran on an accelerator, judged from its breakdown (a diff carries no device
 * list): any device compute, kernel launch or copy time says yes. Undefined without a breakdown.
 */
export function sideAccelerator(diff: Diff, side: "baseline" | "candidate"): boolean | undefined {
  const pct = sideBreakdownPct(diff, side);
  if (Object.keys(pct).length === 0) return undefined;
  return ["device_compute", "kernel_launch", "memcpy"].some((k) => (pct[k] ?? 0) > 0);
}

/** The diff's summary as separate sentences, one line each, instead of one paragraph. */
export function summaryLines(summary: string | undefined): string[] {
  return (summary ?? "").split(/(?<=[.!?])\s+(?=[A-Z])/).map((t) => t.trim()).filter(Boolean);
}

/** Precision moves worth showing: the diff marked them significant (same rules as times). */
export function significantPrecision(diff: Diff): [string, number][] {
  const marks = diff.precision_significant ?? {};
  return Object.entries(diff.precision_delta_pct ?? {}).filter(
    (e): e is [string, number] => typeof e[1] === "number" && Math.abs(e[1]) >= 0.05 && marks[e[0]] !== false,
  );
}

/** The cells of the "what the baseline's advice bought" table, one row per recommendation of the
 * baseline: id, acted on, predicted saving, saved on the step, saved on the category it targets,
 * verdict (as the exports print them). */
export function outcomeRows(diff: Diff): string[][] {
  return (diff.recommendation_outcomes ?? []).map((o) => {
    const p = o.predicted_ms_per_step;
    const interval = p && p.length === 2 && num(p[0]) !== undefined && num(p[1]) !== undefined ? `${formatNumber(p[0])}–${formatNumber(p[1])}` : "not estimated";
    const category = num(o.realized_category_ms_per_step) !== undefined && o.target_category
      ? `${formatSigned(o.realized_category_ms_per_step, formatNumber)} (${categoryLabel(o.target_category)})`
      : "";
    const together = o.verdict && o.together_with?.length ? ` (the ${o.together_with.length + 1} together)` : "";
    // a rule not acted on saved nothing: a dash, not the step's whole change
    if (!o.acted_on) return [o.id ?? "", "no", interval, "–", "–", ""];
    const shared = o.together_with?.length ? ` (shared with ${o.together_with.join(", ")})` : "";
    return [
      o.id ?? "",
      o.acted_on ? "yes" : "no",
      interval,
      formatSigned(o.realized_ms_per_step, formatNumber) + shared,
      category,
      o.verdict ? o.verdict + together : "",
    ];
  });
}
