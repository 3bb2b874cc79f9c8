import { describe, expect, it } from "vitest";
import { CATEGORIES, orderedKeys } from "../src/categories";
import { breakdownRows, deltaBars, lowPrecisionPct, perStepBars, precisionBars, stepLabel } from "../src/chartdata";
import type { Report } from "../src/types";

const report: Report = {
  run: "r",
  steps: {
    per_step: [
      { step: 5, total_ms: 200, breakdown_ms: { input: 90, device_compute: 100, idle: 10, memcpy: 0 } },
      { step: 6, total_ms: 180, breakdown_ms: { input: 70, device_compute: 105, idle: 5, memcpy: 0 } },
      { step: null, total_ms: 150, breakdown_ms: { device_compute: 150 } },
    ],
  },
  breakdown_ms: { device_compute: 118.3, input: 53.3, idle: 5, custom_thing: 1 },
  breakdown_pct: { device_compute: 67, input: 30, idle: 2.8, custom_thing: 0.2 },
};

describe("perStepBars", () => {
  it("makes one stacked series per non-zero category in table order", () => {
    const bars = perStepBars(report, "light");
    expect(bars.labels).toEqual(["5", "6", "#3"]);
    expect(bars.series.map((s) => s.key)).toEqual(["input", "device_compute", "idle"]);
    expect(bars.series[0].data).toEqual([90, 70, 0]);
    expect(bars.series[1].data).toEqual([100, 105, 150]);
  });

  it("uses the theme's colours", () => {
    const light = perStepBars(report, "light").series[0].color;
    const dark = perStepBars(report, "dark").series[0].color;
    expect(light).toBe(CATEGORIES[0].light);
    expect(dark).toBe(CATEGORIES[0].dark);
    expect(light).not.toBe(dark);
  });

  it("falls back to plain step times without per-step breakdowns", () => {
    const bars = perStepBars({ run: "r", steps: { times_ms: [10, 12], numbers: [1, null] } }, "light");
    expect(bars.labels).toEqual(["1", "#2"]);
    expect(bars.series).toHaveLength(1);
    expect(bars.series[0].data).toEqual([10, 12]);
  });

  it("is empty when the report has no steps", () => {
    expect(perStepBars({ run: "r" }, "light")).toEqual({ labels: [], series: [] });
  });
});

describe("breakdownRows", () => {
  it("lists known categories in table order, then unknown keys", () => {
    const rows = breakdownRows(report);
    expect(rows.map((r) => r.key)).toEqual(["input", "device_compute", "idle", "custom_thing"]);
    expect(rows[0]).toMatchObject({ label: "Input wait", ms: 53.3, pct: 30 });
    expect(rows[3].label).toBe("custom thing");
  });
});

describe("precision", () => {
  it("keeps non-zero formats and colours reduced precision apart", () => {
    const bars = precisionBars({ fp32: 30, bf16: 65, fp16: 0, unknown: 5 }, "light");
    expect(bars.labels).toEqual(["FP32", "BF16", "Unknown"]);
    expect(bars.series[0].data).toEqual([30, 65, 5]);
    expect(new Set(bars.colors).size).toBe(3);
  });
  it("sums the reduced-precision share", () => {
    expect(lowPrecisionPct({ fp32: 30, bf16: 60, tf32: 5, fp64: 5 })).toBe(65);
    expect(lowPrecisionPct(undefined)).toBe(0);
  });
});

describe("deltaBars", () => {
  it("colours faster categories green and slower red", () => {
    const bars = deltaBars(
      { baseline: "a", candidate: "b", breakdown_delta_ms: { idle: 2, input: -80, device_compute: -1.5 } },
      "light",
    );
    expect(bars.labels).toEqual(["Input wait", "Device compute", "Idle"]);
    expect(bars.series[0].data).toEqual([-80, -1.5, 2]);
    expect(bars.colors[0]).toBe(bars.colors[1]);
    expect(bars.colors[2]).not.toBe(bars.colors[0]);
  });
});

describe("helpers", () => {
  it("labels steps", () => {
    expect(stepLabel(0, 4)).toBe("0");
    expect(stepLabel(undefined, 4)).toBe("#5");
  });
  it("orders keys: table first, extras sorted", () => {
    expect(orderedKeys(["z", "idle", "a", "input"], CATEGORIES)).toEqual(["input", "idle", "a", "z"]);
  });
});
