import { describe, expect, it } from "vitest";
import {
  BOTTLENECKS,
  deviceLine,
  evidenceList,
  inputBoundLine,
  precisionView,
  sortRecommendations,
  verdictView,
  worseSeverity,
} from "../src/verdict";

describe("verdictView", () => {
  it("writes the input-bound sentence with the input share", () => {
    const v = verdictView(
      { bottleneck: "input", input_bound: "high", input_pct: 41.2, summary: "The step waits for tf.data." },
      { input: 40 },
    );
    expect(v.headline).toBe("Input-bound: 41 % of each step waits for the input pipeline");
    expect(v.severity).toBe("bad");
    expect(v.detail).toBe("The step waits for tf.data.");
  });

  it("falls back to breakdown_pct when input_pct is missing", () => {
    const v = verdictView({ bottleneck: "input", input_bound: "moderate" }, { input: 12.4 });
    expect(v.headline).toBe("Input-bound: 12 % of each step waits for the input pipeline");
    expect(v.severity).toBe("warn");
  });

  it("quotes the bottleneck's own category for other verdicts", () => {
    const v = verdictView({ bottleneck: "device", input_bound: "low", input_pct: 0.4 }, { device_compute: 87.3, input: 0.4 });
    expect(v.headline).toBe("Compute-bound: 87 % of each step is device compute");
    expect(v.severity).toBe("ok");
  });

  it("raises severity when a compute-bound step still waits on input", () => {
    const v = verdictView({ bottleneck: "device", input_bound: "moderate", input_pct: 8 }, { device_compute: 70 });
    expect(v.severity).toBe("warn");
  });

  it("handles a missing verdict and unknown bottleneck keys", () => {
    expect(verdictView(undefined).headline).toBe("No verdict: the profile has no usable steps to diagnose");
    expect(verdictView(undefined).severity).toBe("neutral");
    const odd = verdictView({ bottleneck: "tpu_infeed" }, { tpu_infeed: 30 });
    expect(odd.headline).toBe("tpu infeed-bound: 30 % of each step");
  });

  it("says only the label when the share is unknown", () => {
    expect(verdictView({ bottleneck: "device", input_bound: "low" }).headline).toBe("Compute-bound");
    expect(verdictView({ bottleneck: "input", input_bound: "high" }).headline).toBe("Input-bound");
  });

  it("hides a summary that only repeats the headline", () => {
    const v = verdictView(
      { bottleneck: "balanced", summary: "Balanced: no single part of the step dominates" },
      {},
    );
    expect(v.detail).toBeNull();
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
      headline: "Mixed precision is active",
      severity: "ok",
      detail: "bf16 dominant",
    });
    expect(precisionView({ verdict: "weird" }).severity).toBe("neutral");
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
    expect(line).toBe("2× NVIDIA A100 (cc 8.0), cpu");
    expect(deviceLine({ run: "r" })).toBeNull();
  });
});
