// Which op rows a table shows: a case-insensitive filter on the name or category, then the top N by
// time. Pure, so the same rule is tested without a browser.

import { categoryLabel } from "./categories";
import type { OpRow } from "./types";

/** Top-N choices of the op tables; 0 means all rows. */
export const TOP_N_CHOICES: readonly number[] = [10, 25, 50, 100, 0];
export const DEFAULT_TOP_N = 10;

export interface OpView {
  rows: OpRow[];
  /** Rows that match the filter, before the top-N cut. */
  matching: number;
  total: number;
}

export function filterOps(ops: readonly OpRow[], query: string, topN: number): OpView {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const matches = (o: OpRow) => {
    const hay = `${o.name} ${o.onednn_op ?? ""} ${o.category ?? ""} ${categoryLabel(o.category ?? "")}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  };
  const sorted = ops.filter(matches).sort((a, b) => (b.time_ms ?? 0) - (a.time_ms ?? 0));
  return { rows: topN > 0 ? sorted.slice(0, topN) : sorted, matching: sorted.length, total: ops.length };
}

/** An op's share of the mean step: the one rule every table uses for "% of step". */
export function pctOfStep(timeMs: number | undefined, stepMs: number | null | undefined): number | null {
  if (typeof timeMs !== "number" || typeof stepMs !== "number" || !(stepMs > 0)) return null;
  return (100 * timeMs) / stepMs;
}
