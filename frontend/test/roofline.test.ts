import { describe, expect, it } from "vitest";
import { formatRate, mfuChangeLine, rooflineFacts, rooflinePlot } from "../src/deep/roofline";
import type { Roofline } from "../src/deep/roofline";

const A100 = { name: "NVIDIA A100 40GB", source: "https://www.nvidia.com/", peak_flops: { bf16: 312e12, fp32: 19.5e12 }, memory_bandwidth: 1555e9 };
const r: Roofline = {
  accelerator: A100,
  mfu_precision: "bf16",
  mfu_pct: 4.5,
  mfu_basis: "steps",
  ops_with_flops: 3,
  flops_total: 2e12,
  flops_per_step: 5e11,
  achieved_flops_per_s: 1.4e13,
  flops_sources: { shapes: 8 },
  ops: [
    { name: "aten::mm", intensity_flops_per_byte: 1365.3, achieved_flops_per_s: 1.37e14, bound: "compute" },
    { name: "aten::add", intensity_flops_per_byte: 0.125, achieved_flops_per_s: 1.68e10, bound: "memory" },
    { name: "no_bytes", intensity_flops_per_byte: null, achieved_flops_per_s: 1e12, bound: null },
  ],
};

describe("rooflinePlot", () => {
  it("splits ops by bound and draws the roof through the ridge point", () => {
    const p = rooflinePlot(r)!;
    expect(p.compute.map((x) => x.name)).toEqual(["aten::mm"]);
    expect(p.memory.map((x) => [x.x, x.y])).toEqual([[0.125, 1.68e10]]);
    expect(p.ridge).toBeCloseTo(312e12 / 1555e9, 6);
    expect(p.roof[1]).toEqual({ x: p.ridge, y: 312e12 });
    expect(p.roof[0].y / p.roof[0].x).toBeCloseTo(1555e9, 0); // the slope is the bandwidth
    expect(p.roof[0].x).toBeLessThan(0.125);
    expect(p.roof[2].x).toBeGreaterThan(1365.3);
  });
  it("has nothing to draw without a known peak", () => {
    expect(rooflinePlot({ ...r, accelerator: null })).toBeNull();
    expect(rooflinePlot({ ...r, mfu_precision: "fp8" })).toBeNull();
    expect(rooflinePlot(undefined)).toBeNull();
  });
});

describe("facts and rates", () => {
  it("formats FLOP/s in readable units", () => {
    expect(formatRate(1.37e14)).toBe("137.00 TFLOP/s");
    expect(formatRate(1.68e10)).toBe("16.80 GFLOP/s");
    expect(formatRate(2.5e15)).toBe("2.50 PFLOP/s");
    expect(formatRate(null)).toBe("–");
  });
  it("names MFU, its basis and the FLOP sources", () => {
    expect(rooflineFacts(r)).toContain("MFU 4.5 % of the NVIDIA A100 40GB bf16 peak (312.00 TFLOP/s)");
    expect(rooflineFacts({ ...r, mfu_basis: "device span" }).join(" ")).toContain("over the device span");
    expect(rooflineFacts({ ...r, mfu_upper_bound: true })).toContain("MFU at most 4.5 % of the NVIDIA A100 40GB bf16 peak (312.00 TFLOP/s)");
    expect(rooflineFacts({ ...r, accelerator: null, device_model: "NVIDIA L40S" })).toContain("no peak known for NVIDIA L40S: FLOP/s without roofs");
    expect(rooflineFacts(r)).toContain("FLOPs from shapes (8 calls)");
    const steps = [{ flops: 1, ms: 1, achieved_flops_per_s: 1, mfu_pct: 4.44 }, { flops: 1, ms: 1, achieved_flops_per_s: 1, mfu_pct: 5.06 }];
    expect(rooflineFacts({ ...r, per_step: steps })).toContain("MFU per step 4.4 to 5.1 % over 2 steps");
    expect(rooflineFacts({ ...r, per_step: steps.slice(0, 1) }).join(" ")).not.toContain("per step 4.4");
  });
});

describe("mfuChangeLine", () => {
  it("says the MFU move in points and the peak it is measured against", () => {
    const d = { mfu_pct: { baseline: 4.4, candidate: 8.9 }, mfu_precision: { baseline: "bf16", candidate: "bf16" } };
    expect(mfuChangeLine(d)).toBe("MFU 4.4 % → 8.9 % of the bf16 peak (+4.5 points)");
    expect(mfuChangeLine({ ...d, mfu_pct: { baseline: 9, candidate: 6 } })).toBe("MFU 9.0 % → 6.0 % of the bf16 peak (−3.0 points)");
    expect(mfuChangeLine({ ...d, mfu_precision: { baseline: "bf16", candidate: "fp32" } })).toContain("(peaks of different precisions)");
  });
  it("is absent when a side has no MFU", () => {
    expect(mfuChangeLine({ mfu_pct: { baseline: null, candidate: 3 } })).toBeNull();
    expect(mfuChangeLine(undefined)).toBeNull();
  });
});
