import { describe, expect, it } from "vitest";
import {
  BOTTLENECKS,
  STEP_SOURCES,
  deviceLine,
  hasAccelerator,
  evidenceList,
  inputBoundLine,
  precisionView,
  sortRecommendations,
  tensorCoresEmptyText,
  stepsLine,
  verdictView,
  worseSeverity,
} from "../src/verdict";

describe("verdictView", () => {
  it("builds the input-bound sentence from the input share", () => {
    const v = verdictView({ bottleneck: "input", input_bound: "high", input_pct: 41.2 }, { breakdownPct: { input: 40 } });
    expect(v.short).toBe("Input-bound: 41 % of each step waits for the input pipeline");
    expect(v.headline).toBe(v.short);
    expect(v.severity).toBe("bad");
  });

  it("prefers the server's own sentence as the headline but keeps the short form", () => {
    const v = verdictView({
      bottleneck: "input",
      input_bound: "high",
      input_pct: 57,
      summary: " Input-bound: 57 % of each step waits for the input pipeline, mostly in its map stage. ",
    });
    expect(v.headline).toBe("Input-bound: 57 % of each step waits for the input pipeline, mostly in its map stage.");
    expect(v.short).toBe("Input-bound: 57 % of each step waits for the input pipeline");
  });

  it("falls back to breakdown_pct when input_pct is missing, amber when moderate", () => {
    const v = verdictView({ bottleneck: "input", input_bound: "moderate" }, { breakdownPct: { input: 12.4 } });
    expect(v.short).toBe("Input-bound: 12 % of each step waits for the input pipeline");
    expect(v.severity).toBe("warn");
  });

  it("quotes the bottleneck's own category for other verdicts", () => {
    const v = verdictView(
      { bottleneck: "device", input_bound: "low", input_pct: 0.4 },
      { breakdownPct: { device_compute: 87.3, input: 0.4 } },
    );
    expect(v.short).toBe("Compute-bound: 87 % of each step is device compute");
    expect(v.severity).toBe("ok");
  });

  it("raises severity when a compute-bound step still waits on input", () => {
    const v = verdictView({ bottleneck: "device", input_bound: "moderate", input_pct: 8 }, { breakdownPct: { device_compute: 70 } });
    expect(v.severity).toBe("warn");
  });

  it("treats host compute as the compute on CPU-only profiles", () => {
    const pct = { breakdownPct: { host_compute: 97.2, input: 0.3 } };
    const cpu = verdictView({ bottleneck: "host", input_bound: "low" }, { ...pct, accelerator: false });
    expect(cpu.short).toBe("Compute-bound: 97 % of each step is computed on the CPU");
    expect(cpu.severity).toBe("ok");
    const gpu = verdictView({ bottleneck: "host", input_bound: "low" }, { ...pct, accelerator: true });
    expect(gpu.short).toBe("Host-bound: 97 % of each step is computed on the host CPU");
    expect(gpu.severity).toBe("warn");
    expect(verdictView({ bottleneck: "host", input_bound: "low" }, pct).severity).toBe("warn");
  });

  it("handles a missing verdict and unknown bottleneck keys", () => {
    expect(verdictView(undefined).headline).toBe("No verdict: the profile has no usable steps to diagnose");
    expect(verdictView(undefined).severity).toBe("neutral");
    const odd = verdictView({ bottleneck: "tpu_infeed" }, { breakdownPct: { tpu_infeed: 30 } });
    expect(odd.short).toBe("tpu infeed-bound: 30 % of each step");
  });

  it("says only the label when the share is unknown", () => {
    expect(verdictView({ bottleneck: "device", input_bound: "low" }).short).toBe("Compute-bound");
    expect(verdictView({ bottleneck: "input", input_bound: "high" }).short).toBe("Input-bound");
  });

  it("has a table entry for every bottleneck the report schema allows", () => {
    for (const k of ["input", "device", "host", "launch", "memcpy", "communication", "balanced", "unknown"]) {
      expect(BOTTLENECKS[k], k).toBeDefined();
    }
  });
});

describe("small verdict helpers", () => {
  it("orders severities", () => {
    expect(worseSeverity("ok", "warn")).toBe("warn");
    expect(worseSeverity("bad", "warn")).toBe("bad");
    expect(worseSeverity("neutral", "ok")).toBe("ok");
  });
  it("describes the input-bound level", () => {
    expect(inputBoundLine({ input_bound: "high", input_pct: 48.6 })).toBe("Input pipeline: high (49 % of the step)");
    expect(inputBoundLine({ input_bound: "unknown" })).toBeNull();
  });
  it("maps precision verdicts", () => {
    expect(precisionView({ verdict: "active", summary: "bf16 dominant" })).toEqual({
      label: "Mixed precision is active",
      severity: "ok",
      detail: "bf16 dominant",
    });
    expect(precisionView({ verdict: "weird" }).severity).toBe("neutral");
  });
  it("shows a plain fp32 CPU run as the neutral default, a GPU one as a warning", () => {
    const cpu = precisionView({ verdict: "not_active", basis: "host", summary: "fp32 throughout" });
    expect(cpu.severity).toBe("neutral");
    expect(cpu.label).toBe("FP32 throughout (the default on a CPU)");
    expect(cpu.label).not.toMatch(/not active/);
    const gpu = precisionView({ verdict: "not_active", basis: "device" });
    expect(gpu).toMatchObject({ label: "Mixed precision is not active", severity: "warn" });
  });
  it("says why the Tensor Core card is empty", () => {
    expect(tensorCoresEmptyText(false, ["no device kernels"])).toMatch(/only the CPU/);
    expect(tensorCoresEmptyText(true, ["no device kernels"])).toBe("no device kernels");
    expect(tensorCoresEmptyText(true, [])).toMatch(/no GPU kernels/);
  });
  it("sorts recommendations by severity, keeping server order within one", () => {
    const ids = sortRecommendations([
      { id: "a", severity: "low" },
      { id: "b", severity: "high" },
      { id: "c", severity: "medium" },
      { id: "d", severity: "high" },
    ]).map((r) => r.id);
    expect(ids).toEqual(["b", "d", "c", "a"]);
  });
  it("accepts evidence as a string or a list", () => {
    expect(evidenceList("one")).toEqual(["one"]);
    expect(evidenceList(["a", " ", "b"])).toEqual(["a", "b"]);
    expect(evidenceList(undefined)).toEqual([]);
  });
  it("summarises devices, counting identical ones", () => {
    const line = deviceLine({
      run: "r",
      devices: [
        { model: "NVIDIA A100", compute_capability: "8.0" },
        { model: "NVIDIA A100", compute_capability: "8.0" },
        { kind: "cpu" },
      ],
    });
    expect(line).toBe("2× NVIDIA A100 (cc 8.0), CPU");
    const unnamed = deviceLine({
      run: "r",
      devices: [0, 1, 2].map((i) => ({ name: `/device:GPU:${i}`, kind: "gpu", vendor: "Nvidia", model: "", compute_capability: "7.0" })),
    });
    expect(unnamed).toBe("3× Nvidia GPU (cc 7.0)");
    expect(deviceLine({ run: "r" })).toBeNull();
  });
});

describe("report facts", () => {
  it("knows whether the profile had an accelerator", () => {
    expect(hasAccelerator({ run: "r", devices: [] })).toBe(false);
    expect(hasAccelerator({ run: "r", devices: [{ kind: "cpu" }, { kind: "gpu" }] })).toBe(true);
    expect(hasAccelerator({ run: "r" })).toBeUndefined();
  });
  it("names where the steps came from", () => {
    expect(stepsLine({ count: 10, source: "keras3_marker", mean_ms: 71.2, median_ms: 70.6, p90_ms: 77.5 })).toBe(
      'Steps: 10 (Keras "Profiled batch" markers) · mean 71.2 ms · median 70.6 ms · p90 77.5 ms',
    );
    expect(stepsLine({ count: 1, source: "weird" })).toBe("Steps: 1 (weird) · mean – · median – · p90 –");
    expect(stepsLine(undefined)).toBeNull();
    for (const k of ["root_marker", "keras3_marker", "legacy_marker", "inferred", "none"]) expect(STEP_SOURCES[k], k).toBeDefined();
  });
});
