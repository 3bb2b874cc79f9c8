// Pure geometry of the roofline chart: the ops as (intensity, achieved TFLOP/s) points and one roof
// per precision, min(peak, intensity × bandwidth), on log-log axes. No DOM, so unit tests check it.

import type { Roofline, RooflineOp } from "./types";

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
