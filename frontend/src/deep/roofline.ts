// The roofline report key (tb_plugin_advisor/analysis/roofline.py) and the chart's data: ops as
// points (arithmetic intensity, achieved FLOP/s) and the roof of the precision MFU is measured in.
// No DOM here, so the unit tests check every number.

import type { Finding } from "./types";

export interface RooflineOp {
  name: string;
  source?: string;
  calls?: number;
  flops?: number;
  bytes?: number | null;
  time_ms?: number;
  time_pct?: number | null;
  precision?: string | null;
  precision_source?: string | null;
  intensity_flops_per_byte?: number | null;
  achieved_flops_per_s?: number | null;
  roof_flops_per_s?: number | null;
  roof_pct?: number | null;
  bound?: string | null;
  flops_upper_bound?: boolean;
}

export interface Roofline {
  device_model?: string | null;
  accelerator?: { name: string; source: string; peak_flops: Record<string, number>; memory_bandwidth: number } | null;
  devices?: number;
  ops_with_flops?: number;
  flops_total?: number;
  flops_sources?: Record<string, number>;
  steps?: number;
  flops_per_step?: number | null;
  achieved_flops_per_s?: number | null;
  mfu_precision?: string | null;
  mfu_basis?: string;
  mfu_pct?: number | null;
  mfu_upper_bound?: boolean;
  per_step?: { flops: number; ms: number; achieved_flops_per_s: number | null; mfu_pct: number | null }[];
  ops?: RooflineOp[];
  findings?: Finding[];
}

export interface XY {
  x: number;
  y: number;
}

export interface RooflinePlot {
  memory: (XY & { name: string; op: RooflineOp })[];
  compute: (XY & { name: string; op: RooflineOp })[];
  roof: XY[]; // bandwidth slope up to the ridge, then flat at the peak
  peak: number;
  bandwidth: number;
  ridge: number;
}

/** FLOP/s in the unit a person reads. */
export function formatRate(v: number | null | undefined): string {
  if (typeof v !== "number" || !Number.isFinite(v)) return "–";
  for (const [unit, size] of [["PFLOP/s", 1e15], ["TFLOP/s", 1e12], ["GFLOP/s", 1e9]] as const) {
    if (v >= size) return `${(v / size).toFixed(2)} ${unit}`;
  }
  return `${(v / 1e6).toFixed(2)} MFLOP/s`;
}

/** Points and roof for the chart, or null when there is no known peak or no op with an intensity. */
export function rooflinePlot(r: Roofline | undefined): RooflinePlot | null {
  const acc = r?.accelerator;
  const peak = acc?.peak_flops?.[r?.mfu_precision ?? ""];
  const bandwidth = acc?.memory_bandwidth;
  if (!r || !peak || !bandwidth) return null;
  const ops = (r.ops ?? []).filter((o) => (o.intensity_flops_per_byte ?? 0) > 0 && (o.achieved_flops_per_s ?? 0) > 0);
  if (!ops.length) return null;
  const point = (o: RooflineOp) => ({ x: o.intensity_flops_per_byte as number, y: o.achieved_flops_per_s as number, name: o.name, op: o });
  const ridge = peak / bandwidth;
  const xs = ops.map((o) => o.intensity_flops_per_byte as number).concat([ridge]);
  const lo = 10 ** Math.floor(Math.log10(Math.min(...xs)) - 1);
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...xs)) + 1);
  return {
    memory: ops.filter((o) => o.bound === "memory").map(point),
    compute: ops.filter((o) => o.bound !== "memory").map(point),
    roof: [{ x: lo, y: lo * bandwidth }, { x: ridge, y: peak }, { x: hi, y: peak }],
    peak,
    bandwidth,
    ridge,
  };
}

/** The one-line facts above the chart. */
export function rooflineFacts(r: Roofline): string[] {
  const out = [`${r.ops_with_flops ?? 0} ops with FLOP counts, ${((r.flops_total ?? 0) / 1e12).toFixed(3)} TFLOP in all`];
  if (typeof r.flops_per_step === "number") out.push(`${(r.flops_per_step / 1e12).toFixed(3)} TFLOP per step, ${formatRate(r.achieved_flops_per_s)} per device`);
  else if (typeof r.achieved_flops_per_s === "number") out.push(`${formatRate(r.achieved_flops_per_s)} per device`);
  if (typeof r.mfu_pct === "number" && r.accelerator) {
    const basis = r.mfu_basis && r.mfu_basis !== "steps" ? `, over the ${r.mfu_basis}` : "";
    out.push(`MFU ${r.mfu_upper_bound ? "at most " : ""}${r.mfu_pct.toFixed(1)} % of the ${r.accelerator.name} ${r.mfu_precision} peak (${formatRate(r.accelerator.peak_flops[r.mfu_precision ?? ""])}${basis})`);
  } else if (r.device_model && !r.accelerator) {
    out.push(`no peak known for ${r.device_model}: FLOP/s without roofs`);
  }
  const perStep = (r.per_step ?? []).map((x) => x.mfu_pct).filter((x): x is number => typeof x === "number");
  if (perStep.length > 1) out.push(`MFU per step ${Math.min(...perStep).toFixed(1)} to ${Math.max(...perStep).toFixed(1)} % over ${perStep.length} steps`);
  const sources = Object.entries(r.flops_sources ?? {});
  if (sources.length) out.push("FLOPs from " + sources.map(([k, v]) => `${k} (${v} calls)`).join(", "));
  return out;
}

interface Pair {
  baseline?: number | null;
  candidate?: number | null;
  delta?: number | null;
}

/** The Compare view's MFU line, from the diff's roofline object; null unless both runs have an MFU. */
export function mfuChangeLine(roofline: { mfu_pct?: Pair; mfu_precision?: { baseline?: string | null; candidate?: string | null } } | null | undefined): string | null {
  const m = roofline?.mfu_pct;
  if (!m || typeof m.baseline !== "number" || typeof m.candidate !== "number") return null;
  const p = roofline?.mfu_precision;
  const precision = p?.baseline && p.baseline === p.candidate ? ` of the ${p.baseline} peak` : " (peaks of different precisions)";
  const delta = m.candidate - m.baseline;
  return `MFU ${m.baseline.toFixed(1)} % → ${m.candidate.toFixed(1)} %${precision} (${delta >= 0 ? "+" : "−"}${Math.abs(delta).toFixed(1)} points)`;
}
