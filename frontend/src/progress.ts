// The progress of a running analysis, as the server's 202 answer reports it: one line of words and
// the fraction a progress bar shows. Pure.

import { formatBytes } from "./format";

export interface AnalysisProgress {
  stage?: string;
  done_bytes?: number;
  total_bytes?: number;
  /** A trend's captures analysed so far, and how many it has (no byte counts there). */
  done?: number;
  total?: number;
  elapsed_s?: number;
}

const STAGES: Readonly<Record<string, string>> = {
  queued: "waiting for a worker",
  starting: "starting",
  reading: "reading the profile",
  analysing: "analysing",
  done: "read",
};

export function progressFraction(p: AnalysisProgress | undefined): number | null {
  if (p && typeof p.total === "number" && p.total > 0 && typeof p.done === "number" && p.total_bytes === undefined) {
    return Math.max(0, Math.min(1, p.done / p.total));
  }
  if (!p || !(typeof p.total_bytes === "number" && p.total_bytes > 0) || typeof p.done_bytes !== "number") return null;
  return Math.max(0, Math.min(1, p.done_bytes / p.total_bytes));
}

export function progressLine(p: AnalysisProgress | undefined): string | null {
  if (!p || !p.stage) return null;
  const stage = STAGES[p.stage] ?? p.stage;
  const bytes = typeof p.total_bytes === "number" && p.total_bytes > 0 ? ` · ${formatBytes(p.done_bytes ?? 0)} of ${formatBytes(p.total_bytes)}` : "";
  const count = typeof p.total === "number" && p.total > 0 ? ` · ${p.done ?? 0} of ${p.total}` : "";
  const time = typeof p.elapsed_s === "number" ? ` · ${p.elapsed_s.toFixed(1)} s` : "";
  return `${stage}${bytes}${count}${time}`;
}

/** The progress objects of a 202 body: `progress` for a report, `progress.baseline/candidate` for a diff. */
export function progressParts(body: unknown): { label: string; progress: AnalysisProgress }[] {
  const p = (body as { progress?: unknown } | null)?.progress as Record<string, unknown> | undefined;
  if (!p || typeof p !== "object") return [];
  if ("stage" in p) return [{ label: "", progress: p as AnalysisProgress }];
  return (["baseline", "candidate"] as const)
    .filter((k) => p[k] && typeof p[k] === "object")
    .map((k) => ({ label: k === "baseline" ? "Baseline" : "Candidate", progress: p[k] as AnalysisProgress }));
}
