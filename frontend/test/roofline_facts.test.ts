import { describe, expect, it } from "vitest";
import { deviceName, rooflineFacts, uncostedFact } from "../src/deep/roofline";
import type { Roofline } from "../src/deep/types";

// The corpus ResNet-50 on a V100 as the report JSON holds it (rounded), and an MI250 GCD.
const V100: Roofline = {
  device: "NVIDIA V100 SXM2",
  peak_tflops: 15.7,
  peak_precision: "fp32",
  bandwidth_gbps: 900,
  ridge_flops_per_byte: 17.44,
  basis: "steps",
  steps: 6,
  step_ms: 174.83,
  model_flops_per_step: 777570484224,
  achieved_tflops: 4.4476,
  mfu_pct: 28.33,
  costed_time_pct: 67.71,
  mfu_lower_bound: false,
  ops_with_flops: 654,
  sources: ["shapes"],
  ops: [{ name: "aten::conv2d" }],
  uncosted_ops: [
    { name: "aten::cudnn_batch_norm_backward", time_pct: 10.47 },
    { name: "aten::cudnn_batch_norm", time_pct: 5.79 },
  ],
};

describe("rooflineFacts", () => {
  it("says the MFU, the FLOPs per step and the share of compute time it covers", () => {
    const facts = rooflineFacts(V100);
    expect(facts[0]).toBe("654 ops with known FLOPs (shapes), 68 % of compute time");
    expect(facts[1]).toContain("NVIDIA V100 SXM2: 15.7 TFLOP/s fp32 peak");
    expect(facts[2]).toContain("778 GFLOP per step");
    expect(facts[2]).toContain("MFU 28 % over the 68 % of compute time with known FLOPs");
    expect(facts[3]).toBe("No known FLOPs (share of compute time): aten::cudnn_batch_norm_backward 10 %, aten::cudnn_batch_norm 5.8 %");
  });
  it("names an AMD device by product and gfx target, never a compute capability", () => {
    const mi250 = { ...V100, device: "AMD Instinct MI250 (one GCD) or MI210", gfx_target: "gfx90a" };
    expect(deviceName(mi250)).toBe("AMD Instinct MI250 (one GCD) or MI210 (gfx90a)");
    expect(rooflineFacts(mi250).join(" ")).not.toMatch(/compute capability/i);
  });
  it("says a CPU-only profile has no MFU but still its FLOPs", () => {
    const cpu = { ...V100, cpu_only: true, peak_tflops: null, mfu_pct: null, device: null };
    const facts = rooflineFacts(cpu);
    expect(facts[0]).toContain("of op time on the CPU");
    expect(facts[1]).toBe("CPU only: no CPU peak is known, so no roof and no MFU.");
    expect(facts[2]).toContain("on the CPU per step");
    expect(facts[2]).not.toContain("MFU");
    expect(uncostedFact({ ...cpu, ops: [] })).toBeNull();
  });
});
