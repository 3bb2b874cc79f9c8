import { describe, expect, it } from "vitest";
import { boundLabel, rooflineSeries } from "../src/deep/roofline";
import type { Roofline } from "../src/deep/types";

const R: Roofline = {
  bandwidth_gbps: 1555,
  roofs: [
    { precision: "bf16", peak_tflops: 312, ridge_flops_per_byte: 200.64 },
    { precision: "fp32", peak_tflops: 19.5, ridge_flops_per_byte: 12.54 },
  ],
  ops: [
    { name: "gemm", intensity: 624, achieved_tflops: 156, bound: "compute", roof_pct: 50 },
    { name: "add", intensity: 0.833, achieved_tflops: 0.1, bound: "memory", roof_pct: 7.72 },
    { name: "conv", intensity: null, achieved_tflops: 3, bound: null },
    { name: "copy", intensity: 0, achieved_tflops: 0, bound: "memory", roof_pct: 80 },
  ],
};

describe("rooflineSeries", () => {
  it("places only ops with positive intensity and rate", () => {
    const s = rooflineSeries(R)!;
    expect(s.points.map((p) => [p.op.name, p.x, p.y])).toEqual([["gemm", 624, 156], ["add", 0.833, 0.1]]);
  });
  it("spans the points and ridges by a decade each side and draws min(peak, I × bw)", () => {
    const s = rooflineSeries(R)!;
    expect(s.xMin).toBe(0.01);
    expect(s.xMax).toBe(10000);
    const bf16 = s.roofs[0].line;
    expect(bf16[0]).toEqual({ x: 0.01, y: 0.01 * 1.555 });
    expect(bf16[1]).toEqual({ x: 200.64, y: 312 });
    expect(bf16[2]).toEqual({ x: 10000, y: 312 });
    expect(s.roofs.map((r) => r.precision)).toEqual(["bf16", "fp32"]);
  });
  it("has nothing to draw without peaks", () => {
    expect(rooflineSeries(undefined)).toBeNull();
    expect(rooflineSeries({ ops: R.ops, roofs: [] })).toBeNull();
  });
  it("labels the bound", () => {
    expect(boundLabel(R.ops![1])).toBe("memory-bound, 7.7 % of roof");
    expect(boundLabel(R.ops![2])).toBe("no byte count: not placed");
  });
});

describe("decadeLabel", () => {
  it("labels decades only", async () => {
    const { decadeLabel } = await import("../src/charts");
    expect([0.01, 0.1, 1, 10, 100, 1000, 10000].map(decadeLabel)).toEqual(["0.01", "0.1", "1", "10", "100", "1k", "10k"]);
    expect([0.02, 5, 200, 0, -1].map(decadeLabel)).toEqual(["", "", "", "", ""]);
  });
});
