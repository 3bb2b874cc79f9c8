// What the verdict card says and which colour it gets. The server decides the bottleneck;
// this table only turns its keys into one readable sentence and a severity.

import { categoryLabel } from "./categories";
import { formatMs, formatNumber, formatPct } from "./format";
import type { CategoryMap, ExpectedGain, Precision, Recommendation, Report, Verdict } from "./types";

export type Severity = "bad" | "warn" | "ok" | "neutral";

interface BottleneckText {
  label: string;
  /** Breakdown category whose share of the step the sentence quotes. */
  category: string | null;
  phrase: string;
  severity: Severity;
}

export const BOTTLENECKS: Readonly<Record<string, BottleneckText>> = {
  input: { label: "Input-bound", category: "input", phrase: "of each step waits for the input pipeline", severity: "bad" },
  device: { label: "Compute-bound", category: "device_compute", phrase: "of each step is device compute", severity: "ok" },
  host: { label: "Host-bound", category: "host_compute", phrase: "of each step is computed on the host CPU", severity: "warn" },
  launch: { label: "Launch-bound", category: "kernel_launch", phrase: "of each step is spent launching kernels", severity: "warn" },
  memcpy: { label: "Copy-bound", category: "memcpy", phrase: "of each step copies memory between host and device", severity: "warn" },
  communication: { label: "Communication-bound", category: "communication", phrase: "of each step is spent communicating between devices", severity: "warn" },
  balanced: { label: "Balanced", category: null, phrase: "no single part of the step dominates", severity: "ok" },
  unknown: { label: "No verdict", category: null, phrase: "the profile has no usable steps to diagnose", severity: "neutral" },
};

/** Severity of the input-bound level alone (high/moderate/low as the server classifies it). */
export const INPUT_BOUND_SEVERITY: Readonly<Record<string, Severity>> = {
  high: "bad",
  moderate: "warn",
  low: "ok",
  unknown: "neutral",
};

const SEVERITY_RANK: Record<Severity, number> = { neutral: 0, ok: 1, warn: 2, bad: 3 };

export function worseSeverity(a: Severity, b: Severity): Severity {
  return SEVERITY_RANK[a] >= SEVERITY_RANK[b] ? a : b;
}

export interface VerdictView {
  /** The server's own sentence when it wrote one, else `short`. */
  headline: string;
  /** Built here from the bottleneck key and its share: "Input-bound: 41 % of each step …". */
  short: string;
  severity: Severity;
}

/** On a machine without an accelerator the host *is* the compute: say so, and it is no problem. */
const CPU_ONLY_HOST: BottleneckText = {
  label: "Compute-bound",
  category: "host_compute",
  phrase: "of each step is computed on the CPU",
  severity: "ok",
};

function pctOf(map: CategoryMap | undefined, key: string): number | undefined {
  const v = map?.[key];
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

export interface VerdictContext {
  breakdownPct?: CategoryMap;
  /** False for CPU-only profiles, true with a GPU/TPU, undefined when the report does not say. */
  accelerator?: boolean;
}

export function verdictView(verdict: Verdict | undefined, ctx: VerdictContext = {}): VerdictView {
  const key = verdict?.bottleneck ?? "unknown";
  const text =
    key === "host" && ctx.accelerator === false
      ? CPU_ONLY_HOST
      : (BOTTLENECKS[key] ?? {
          label: `${categoryLabel(key)}-bound`,
          category: key,
          phrase: "of each step",
          severity: "warn" as Severity,
        });
  let pct: number | undefined;
  if (key === "input") pct = verdict?.input_pct ?? pctOf(ctx.breakdownPct, "input");
  else if (text.category) pct = pctOf(ctx.breakdownPct, text.category);
  // Without a share to quote, a category verdict is just its label ("Compute-bound").
  const short =
    pct !== undefined
      ? `${text.label}: ${formatPct(pct)} ${text.phrase}`
      : text.category
        ? text.label
        : `${text.label}: ${text.phrase}`;
  const inputSeverity = INPUT_BOUND_SEVERITY[verdict?.input_bound ?? "unknown"] ?? "neutral";
  let severity = text.severity;
  // An input-bound verdict is as severe as the input-bound level says (moderate is amber, not red);
  // a compute-bound step that still waits noticeably on input is not "all good" either.
  if (key === "input") severity = inputSeverity === "neutral" ? text.severity : inputSeverity;
  else if (key !== "unknown") severity = worseSeverity(severity, inputSeverity);
  const summary = verdict?.summary?.trim();
  return { headline: summary || short, short, severity };
}

/** Whether the report's devices include an accelerator; undefined when it lists none at all. */
export function hasAccelerator(report: Report): boolean | undefined {
  const devs = report.devices;
  if (!devs) return undefined;
  return devs.some((d) => d.kind === "gpu" || d.kind === "tpu");
}

export const STEP_SOURCES: Readonly<Record<string, string>> = {
  root_marker: "step markers (_r=1)",
  keras3_marker: "Keras \"Profiled batch\" markers",
  legacy_marker: "tf.keras TraceContext markers",
  profiler_step: "PyTorch profiler steps (prof.step())",
  inferred: "inferred from repeating work, no step markers",
  none: "no steps found",
};

/** Doctor's step-marker kinds in words (never the internal ids such as `keras3_marker`). */
export function stepMarkerLabel(source: string | undefined): string {
  if (source === "none") return "nothing (no step markers)";
  if (source === "profiler_step") return "PyTorch ProfilerStep#N";
  if (!source || source === "unknown") return "unknown";
  return STEP_SOURCES[source] ?? source.replace(/_/g, " ");
}

export function stepsLine(steps: Report["steps"]): string | null {
  if (!steps || steps.count === undefined) return null;
  const source = STEP_SOURCES[steps.source ?? ""] ?? steps.source ?? "unknown source";
  return `Steps: ${steps.count} (${source}) · mean ${formatMs(steps.mean_ms)} · median ${formatMs(steps.median_ms)} · p90 ${formatMs(steps.p90_ms)}`;
}

export function inputBoundLine(verdict: Verdict | undefined): string | null {
  const level = verdict?.input_bound;
  if (!level || level === "unknown") return null;
  const pct = verdict?.input_pct;
  return `Input pipeline: ${level}${typeof pct === "number" ? ` (${formatPct(pct)} of the step)` : ""}`;
}

export const PRECISION_VERDICTS: Readonly<Record<string, { label: string; severity: Severity }>> = {
  active: { label: "Mixed precision is active", severity: "ok" },
  partial: { label: "Mixed precision is partly active", severity: "warn" },
  not_active: { label: "Mixed precision is not active", severity: "warn" },
  unknown: { label: "Precision could not be determined", severity: "neutral" },
};

/** A CPU run in plain fp32 is the frameworks' default, not a failure: neutral, in plain words. */
export const CPU_FP32_VIEW = { label: "FP32 throughout (the default on a CPU)", severity: "neutral" as Severity };

export function precisionView(p: Precision | undefined): { label: string; severity: Severity; detail: string | null } {
  const cpuDefault = p?.verdict === "not_active" && p?.basis === "host";
  const v = cpuDefault ? CPU_FP32_VIEW : PRECISION_VERDICTS[p?.verdict ?? "unknown"] ?? PRECISION_VERDICTS.unknown;
  return { label: v.label, severity: v.severity, detail: p?.summary?.trim() || null };
}

/** Why the Tensor Core card is empty: on a CPU-only run the reason is the hardware, not the model. */
export function tensorCoresEmptyText(accelerator: boolean, evidence: readonly string[] | undefined): string {
  if (!accelerator) {
    return "Tensor Cores are units of NVIDIA GPUs; this run used only the CPU, so there is nothing to show here.";
  }
  return evidence?.length ? evidence.join(" ") : "This report lists no GPU kernels to check for Tensor Core use.";
}

export const REC_SEVERITY_ORDER: Readonly<Record<string, number>> = { high: 0, medium: 1, low: 2 };

export function recommendationSeverity(r: Recommendation): Severity {
  return r.severity === "high" ? "bad" : r.severity === "medium" ? "warn" : "ok";
}

/** Most severe first; the server's order is kept within a severity. */
export function sortRecommendations(recs: readonly Recommendation[] | undefined): Recommendation[] {
  return (recs ?? [])
    .map((r, i) => ({ r, i }))
    .sort((a, b) => (REC_SEVERITY_ORDER[a.r.severity ?? "low"] ?? 3) - (REC_SEVERITY_ORDER[b.r.severity ?? "low"] ?? 3) || a.i - b.i)
    .map((x) => x.r);
}

/** What a recommendation's fix is worth, in the words the exports use. */
export function gainText(gain: ExpectedGain | undefined): string {
  if (!gain || !gain.ms_per_step || !gain.pct) return `Not estimated: ${gain?.basis ?? "no estimate for this finding"}`;
  const [low, high] = gain.ms_per_step;
  const [lowPct, highPct] = gain.pct;
  return `Saves ~${formatNumber(low)}–${formatNumber(high)} ms per step (${formatPct(lowPct).replace(" %", "")}–${formatPct(highPct)})`;
}

export function evidenceList(e: string | string[] | undefined): string[] {
  if (e === undefined || e === null) return [];
  return (Array.isArray(e) ? e : [e]).map((s) => String(s)).filter((s) => s.trim() !== "");
}

export function deviceLine(report: Report): string | null {
  const devs = report.devices ?? [];
  if (devs.length === 0) return null;
  const parts = new Map<string, number>();
  for (const d of devs) {
    // An AMD device by its gfx target: ROCm's major.minor is no compute capability.
    const cc = d.gfx_target ? ` (${d.gfx_target})` : d.compute_capability ? ` (cc ${d.compute_capability})` : "";
    // Group by what the device is, not its index: "16× Nvidia GPU (cc 7.0)", not 16 names.
    const what = d.product || d.model || [d.vendor, d.kind?.toUpperCase()].filter(Boolean).join(" ") || d.name || "device";
    const name = what + cc;
    parts.set(name, (parts.get(name) ?? 0) + 1);
  }
  return [...parts].map(([name, n]) => (n > 1 ? `${n}× ${name}` : name)).join(", ");
}
