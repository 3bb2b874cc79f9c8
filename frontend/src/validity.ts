// What the trace supports (the report's `validity`): which rows a person needs to see, whether the
// card opens, and whether it comes first. Pure: the layout is views/validity.ts.

import type { Validity, ValidityRow } from "./types";

/** The analyses the verdict card's headline is decided on: when one is unsupported, the verdict
 * itself stands on what the trace lacks, so the card comes first. */
export const VERDICT_ANALYSES = ["steps", "step_time_breakdown", "input_pipeline"];

const SEVERITY: Record<string, number> = { unsupported: 2, degraded: 1 };

export const ANALYSIS_LABELS: Record<string, string> = {
  steps: "Steps",
  step_time_breakdown: "Step-time breakdown",
  input_pipeline: "Input pipeline",
  precision: "Precision",
  tensor_cores: "Tensor Cores",
  kernel_stats: "Kernel statistics",
  memory: "Memory",
  roofline: "FLOPs, roofline and MFU",
  collectives: "Collectives",
  evidence_spans: "Evidence spans",
  op_attribution: "Op attribution",
  multi_host: "Comparing hosts",
};

export interface ValidityView {
  /** The rows not fully supported, most severe first. */
  limited: ValidityRow[];
  rows: ValidityRow[];
  /** Collapsed when everything is supported. */
  open: boolean;
  /** Before the verdict when something the verdict relies on is unsupported. */
  first: boolean;
  summary: string;
}

export function validityView(v: Validity | undefined): ValidityView | null {
  const rows = v?.rows ?? [];
  if (rows.length === 0) return null; // a report from before the matrix
  const limited = rows
    .filter((r) => (SEVERITY[r.status] ?? 0) > 0)
    .sort((a, b) => (SEVERITY[b.status] ?? 0) - (SEVERITY[a.status] ?? 0));
  const unsupported = limited.filter((r) => r.status === "unsupported").length;
  const degraded = limited.length - unsupported;
  const parts = [unsupported ? `${unsupported} unsupported` : "", degraded ? `${degraded} with a caveat` : ""].filter(Boolean);
  return {
    limited,
    rows,
    open: limited.length > 0,
    first: limited.some((r) => r.status === "unsupported" && VERDICT_ANALYSES.includes(r.analysis)),
    summary: limited.length === 0 ? `Every one of the ${rows.length} analyses` : `${parts.join(", ")} of ${rows.length} analyses`,
  };
}

/** The reason a number of `analysis` is withheld ("" when the trace supports it): the tab shows "—"
 * with this on hover. */
export function withheldReason(v: Validity | undefined, analysis: string): string {
  const row = (v?.rows ?? []).find((r) => r.analysis === analysis);
  return row && row.status === "unsupported" ? (row.reason ?? "") : "";
}

export function analysisLabel(analysis: string): string {
  return ANALYSIS_LABELS[analysis] ?? analysis;
}
