import { describe, expect, it } from "vitest";
import { defaultDiffPair, opDelta, outcomeRows, sideAccelerator, sideBreakdownPct, opStatus, sortOpsByChange, stepTimeChange, stepTimeLine, significantPrecision, summaryLines } from "../src/diffops";

describe("sortOpsByChange", () => {
  it("puts the largest absolute change first, ties by name", () => {
    const ops = sortOpsByChange([
      { name: "b", delta_ms: 1 },
      { name: "a", delta_ms: -1 },
      { name: "big", delta_ms: -50 },
      { name: "mid", baseline_ms: 10, candidate_ms: 30 },
    ]);
    expect(ops.map((o) => o.name)).toEqual(["big", "mid", "a", "b"]);
  });
  it("does not modify its input", () => {
    const input = [{ name: "x", delta_ms: 1 }, { name: "y", delta_ms: 5 }];
    sortOpsByChange(input);
    expect(input[0].name).toBe("x");
  });
});

describe("op delta and status", () => {
  it("computes a missing delta", () => {
    expect(opDelta({ name: "x", baseline_ms: 3, candidate_ms: 1 })).toBe(-2);
    expect(opDelta({ name: "x", delta_ms: 7, baseline_ms: 0, candidate_ms: 0 })).toBe(7);
  });
  it("derives new/vanished when the server gave no status", () => {
    expect(opStatus({ name: "x", baseline_ms: 0, candidate_ms: 2 })).toBe("new");
    expect(opStatus({ name: "x", baseline_ms: 2, candidate_ms: 0 })).toBe("vanished");
    expect(opStatus({ name: "x", baseline_ms: 2, candidate_ms: 3 })).toBe("changed");
    expect(opStatus({ name: "x", status: "vanished", baseline_ms: 2, candidate_ms: 3 })).toBe("vanished");
  });
});

describe("step time", () => {
  it("writes a before/after line with significance", () => {
    expect(
      stepTimeLine({ baseline: "a", candidate: "b", step_time: { baseline_ms: 200, candidate_ms: 155, delta_pct: -22.5, significant: true } }),
    ).toBe("Step time 200 ms → 155 ms (-23 %, significant)");
    expect(
      stepTimeLine({ baseline: "a", candidate: "b", step_time: { baseline_ms: 100, candidate_ms: 101, delta_pct: 1, significant: false, noise_pct: 3 } }),
    ).toBe("Step time 100 ms → 101 ms (+1 %, within noise (±3 %))");
    expect(
      stepTimeLine({ baseline: "a", candidate: "b", step_time: { baseline_ms: 100, candidate_ms: 101, delta_pct: 1, significant: false, noise_pct: 3, reason_code: "noise" } }),
    ).toBe("Step time 100 ms → 101 ms (+1 %, within noise (±3 %))");
  });
  it("says too few steps to test, never within noise, where no test could decide", () => {
    expect(
      stepTimeLine({ baseline: "a", candidate: "b", step_time: { baseline_ms: 210, candidate_ms: 46.9, delta_pct: -77.7, significant: false, noise_pct: null, reason_code: "too_few_steps" } }),
    ).toBe("Step time 210 ms → 46.9 ms (-78 %, too few steps to test)");
    expect(
      stepTimeLine({ baseline: "a", candidate: "b", step_time: { baseline_ms: 100, candidate_ms: 80, delta_pct: -20, significant: false, noise_pct: 4, reason_code: "below_min_effect" } }),
    ).toBe("Step time 100 ms → 80 ms (-20 %, not significant)");
    expect(stepTimeLine({ baseline: "a", candidate: "b" })).toBeNull();
  });
  it("classifies the change", () => {
    expect(stepTimeChange({ baseline: "a", candidate: "b", step_time: { delta_pct: -20, significant: true } })).toBe("faster");
    expect(stepTimeChange({ baseline: "a", candidate: "b", step_time: { delta_pct: 20, significant: true } })).toBe("slower");
    expect(stepTimeChange({ baseline: "a", candidate: "b", step_time: { delta_pct: 20, significant: false } })).toBe("same");
  });
});

describe("defaultDiffPair", () => {
  it("compares the newest run with the one before it", () => {
    expect(defaultDiffPair(["run3", "run2", "run1"])).toEqual(["run2", "run3"]);
    expect(defaultDiffPair(["only"])).toEqual(["only", "only"]);
    expect(defaultDiffPair([])).toEqual(["", ""]);
  });
});

describe("sideBreakdownPct", () => {
  it("picks one side's shares and skips missing ones", () => {
    const diff = {
      baseline: "a",
      candidate: "b",
      breakdown: { input: { baseline_pct: 45, candidate_pct: 0.5 }, idle: { baseline_pct: null, candidate_pct: 2 } },
    };
    expect(sideBreakdownPct(diff, "baseline")).toEqual({ input: 45 });
    expect(sideBreakdownPct(diff, "candidate")).toEqual({ input: 0.5, idle: 2 });
  });
});

describe("sideAccelerator", () => {
  it("reads accelerator activity from one side's breakdown", () => {
    const diff = {
      baseline: "a",
      candidate: "b",
      breakdown: {
        host_compute: { baseline_pct: 97, candidate_pct: 40 },
        device_compute: { baseline_pct: 0, candidate_pct: 55 },
      },
    };
    expect(sideAccelerator(diff, "baseline")).toBe(false);
    expect(sideAccelerator(diff, "candidate")).toBe(true);
    expect(sideAccelerator({ baseline: "a", candidate: "b" }, "baseline")).toBeUndefined();
  });
});

describe("diff summary and precision moves", () => {
  it("splits the summary into its sentences, keeping op names whole", () => {
    const s = "Step time −36 % (52.2 → 33.2 ms, significant): input wait −32.7 ms. Bottleneck: input pipeline → host compute. Largest op changes per step: a/b.c:Conv2D +3.21 ms.";
    expect(summaryLines(s)).toEqual([
      "Step time −36 % (52.2 → 33.2 ms, significant): input wait −32.7 ms.",
      "Bottleneck: input pipeline → host compute.",
      "Largest op changes per step: a/b.c:Conv2D +3.21 ms.",
    ]);
    expect(summaryLines(undefined)).toEqual([]);
  });
  it("shows only precision moves the diff found significant", () => {
    const diff = { baseline: "a", candidate: "b", precision_delta_pct: { fp32: 0.8, unknown: -0.8, bf16: 40 }, precision_significant: { fp32: false, unknown: false, bf16: true } };
    expect(significantPrecision(diff as never)).toEqual([["bf16", 40]]);
  });
});

describe("outcomeRows", () => {
  it("shows what each recommendation of the baseline predicted and what the candidate saved", () => {
    const rows = outcomeRows({
      baseline: "a",
      candidate: "b",
      recommendation_outcomes: [
        { id: "input.prefetch", acted_on: true, predicted_ms_per_step: [17.2, 34.3], realized_ms_per_step: 41.2, target_category: "input", realized_category_ms_per_step: 33.5, verdict: "within", together_with: ["input.cache"] },
        { id: "profile.step_markers", acted_on: false, predicted_ms_per_step: null, realized_ms_per_step: -2, target_category: null, realized_category_ms_per_step: null, verdict: null },
      ],
    });
    expect(rows[0]).toEqual(["input.prefetch", "yes", "17.2–34.3", "+41.2 (shared with input.cache)", "+33.5 (Input wait)", "within (the 2 together)"]);
    expect(rows[1]).toEqual(["profile.step_markers", "no", "not estimated", "–", "–", ""]);
    expect(outcomeRows({ baseline: "a", candidate: "b" })).toEqual([]);
  });
});
