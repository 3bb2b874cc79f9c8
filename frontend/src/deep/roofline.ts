// Pure geometry of the roofline chart: the ops as (intensity, achieved TFLOP/s) points and one roof
// per precision, min(peak, intensity × bandwidth), on log-log axes; and the facts the panel lists
// above it. No DOM, so unit tests check it.

import { formatNumber, formatPct } from "../format";
import type { Roofline, RooflineOp } from "./types";

const TOP_UNCOSTED = 5; // ops named in the "no known FLOPs" fact

export interface RoofPoint {
  x: number; // FLOP/byte
  y: number; // TFLOP/s
}

export interface RooflineSeries {
  points: (RoofPoint & { op: RooflineOp })[];
  roofs: { precision: string; line: RoofPoint[] }[];
  xMin: number;
  xMax: number;
}

/** Ops that can sit on log axes (positive intensity and rate), and each roof over the x range. */
export function rooflineSeries(r: Roofline | undefined): RooflineSeries | null {
  if (!r || !r.bandwidth_gbps || !(r.roofs ?? []).length) return null;
  const points = (r.ops ?? [])
    .filter((op) => (op.intensity ?? 0) > 0 && (op.achieved_tflops ?? 0) > 0)
    .map((op) => ({ x: op.intensity as number, y: op.achieved_tflops as number, op }));
  const ridges = (r.roofs ?? []).map((roof) => roof.ridge_flops_per_byte);
  const xs = [...points.map((p) => p.x), ...ridges];
  const xMin = 10 ** Math.floor(Math.log10(Math.min(...xs)) - 1);
  const xMax = 10 ** Math.ceil(Math.log10(Math.max(...xs)) + 1);
  const perTflop = r.bandwidth_gbps / 1000; // TFLOP/s per FLOP/byte of intensity
  const roofs = (r.roofs ?? []).map((roof) => ({
    precision: roof.precision,
    line: [
      { x: xMin, y: xMin * perTflop },
      { x: roof.ridge_flops_per_byte, y: roof.peak_tflops },
      { x: xMax, y: roof.peak_tflops },
    ],
  }));
  return { points, roofs, xMin, xMax };
}

/** "memory-bound, 7.7 % of roof" — the words a point's tooltip and the table use. */
export function boundLabel(op: RooflineOp): string {
  if (!op.bound) return "no byte count: not placed";
  const pct = typeof op.roof_pct === "number" ? `, ${op.roof_pct.toFixed(1)} % of roof` : "";
  return `${op.bound}-bound${pct}`;
}

/** The device as a person reads it: an AMD one with its gfx target, "AMD Instinct MI300X (gfx942)". */
export function deviceName(r: Roofline): string {
  const name = r.device || r.device_model || "unknown";
  return r.gfx_target ? `${name} (${r.gfx_target})` : name;
}

/** The device's peaks, or why there are none (CPU only, a device not in the table). */
function peaksFact(r: Roofline): string {
  if (r.cpu_only) return "CPU only: no CPU peak is known, so no roof and no MFU.";
  if (typeof r.peak_tflops === "number") {
    return `${deviceName(r)}: ${formatNumber(r.peak_tflops)} TFLOP/s ${r.peak_precision} peak, ${formatNumber(r.bandwidth_gbps)} GB/s, ridge ${formatNumber(r.ridge_flops_per_byte)} FLOP/byte`;
  }
  return `Device ${deviceName(r)} is not in the peak table: no roof and no MFU.`;
}

function achievedFact(r: Roofline): string {
  const basis = r.basis === "steps" ? `per step (${r.steps} steps of ${formatNumber(r.step_ms)} ms)` : "over the span of the costed ops (no steps)";
  const perStep = typeof r.model_flops_per_step === "number" ? `, ${formatNumber(r.model_flops_per_step / 1e9)} GFLOP per step` : "";
  let out = `${formatNumber(r.achieved_tflops)} TFLOP/s of model FLOPs ${r.cpu_only ? "on the CPU" : "per device"} ${basis}${perStep}`;
  if (typeof r.mfu_pct === "number") {
    out += ` — MFU ${formatPct(r.mfu_pct)} over the ${formatPct(r.costed_time_pct)} of compute time with known FLOPs`;
    if (r.mfu_lower_bound) out += " (a lower bound: most compute time has no known FLOPs)";
  }
  return out;
}

/** The largest ops whose time no rule costs: what the MFU leaves out. */
export function uncostedFact(r: Roofline): string | null {
  const ops = (r.uncosted_ops ?? []).slice(0, TOP_UNCOSTED);
  if (!ops.length || !(r.ops ?? []).length) return null;
  const what = r.cpu_only ? "op time on the CPU" : "compute time";
  return `No known FLOPs (share of ${what}): ` + ops.map((op) => `${op.host ? `${op.host}: ` : ""}${op.name} ${formatPct(op.time_pct)}`).join(", ");
}

/** The lines the roofline panel lists above its chart (the exports' summary, line by line). */
export function rooflineFacts(r: Roofline): string[] {
  const what = r.cpu_only ? "op time on the CPU" : "compute time";
  const out = [`${formatNumber(r.ops_with_flops)} ops with known FLOPs (${(r.sources ?? []).join(", ")}), ${formatPct(r.costed_time_pct)} of ${what}`, peaksFact(r)];
  if (typeof r.achieved_tflops === "number") out.push(achievedFact(r));
  const uncosted = uncostedFact(r);
  if (uncosted) out.push(uncosted);
  return out;
}
