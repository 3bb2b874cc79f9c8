import { describe, expect, it } from "vitest";
import { formatPValue } from "../src/format";
import { progressFraction, progressLine, progressParts } from "../src/progress";
import {
  captureTimeLabel,
  changeEvidence,
  changeLine,
  defaultSeries,
  seriesChoices,
  seriesSummary,
  significantChanges,
  trendChartData,
  uncountedLabel,
  uncountedMoves,
} from "../src/trenddata";
import type { TrendChangePoint, TrendSeries } from "../src/types";
import { trendUrl } from "../src/urls";
import { parsePageState, pageHashWith } from "../src/urlstate";

// The shape `tb-advisor trend` gives on the bundled H200 ResNet-50 captures: four same-config
// repeats, then the single-process DataLoader (+272 %).
const series: TrendSeries = {
  run: "resnet50",
  captures: [
    { index: 0, run: "resnet50/a", captured_at: "2026-11-27T09:22:42.672Z", step_ms: 59.3567, p10_ms: 50.99, p90_ms: 67.72 },
    { index: 1, run: "resnet50/b", captured_at: "2026-11-27T09:41:43.051Z", step_ms: 46.1763, p10_ms: 41.47, p90_ms: 53.03 },
    { index: 2, run: "resnet50/c", captured_at: "2026-11-27T09:41:45.379Z", step_ms: 48.9803, p10_ms: 38.18, p90_ms: 66.56 },
    { index: 3, run: "resnet50/d", captured_at: "2026-11-27T09:41:47.798Z", step_ms: 54.7139, p10_ms: 47.5, p90_ms: 69.81 },
    { index: 4, run: "resnet50/e", captured_at: "2026-11-27T09:43:20.000Z", step_ms: 192.7719, p10_ms: 190.49, p90_ms: 242.41 },
  ],
  change_points: [
    {
      index: 4, run: "resnet50/e", previous_run: "resnet50/d", step_ms_before: 51.7678, step_ms_after: 192.7719,
      delta_pct: 272.38, direction: "slower", significant: true, p_value: 0.007515823211692499,
      p_value_steps: 0.0006535947712424939, noise_pct: 11.88, captures_before: 4, captures_after: 1,
      cause: { category: "input", summary: "DataLoader wait +144 ms" },
    },
  ],
  noise_pct: 11.88,
};

describe("trend chart data", () => {
  it("plots every capture's median and p10–p90, and marks exactly the significant change", () => {
    const d = trendChartData(series);
    expect(d.median).toEqual([59.3567, 46.1763, 48.9803, 54.7139, 192.7719]);
    expect(d.spread[4]).toEqual([190.49, 242.41]);
    expect(d.changes).toEqual([4]);
    expect(d.marks).toEqual([null, null, null, null, 192.7719]);
    expect(d.labels[0]).toEqual(["#1", "11-27 09:22:42"]);
  });
  it("draws the noise band around each segment's geometric mean, stepping at the change", () => {
    const d = trendChartData(series);
    const level = Math.exp([59.3567, 46.1763, 48.9803, 54.7139].map(Math.log).reduce((a, b) => a + b) / 4);
    for (let i = 0; i < 4; i++) {
      expect(d.band[i]?.[0]).toBeCloseTo(level / 1.1188, 9);
      expect(d.band[i]?.[1]).toBeCloseTo(level * 1.1188, 9);
    }
    expect(d.band[4]?.[0]).toBeCloseTo(192.7719 / 1.1188, 9);
  });
  it("leaves unreadable captures out of the lines and the band's level, but keeps their slot", () => {
    const broken: TrendSeries = {
      ...series,
      captures: [...(series.captures ?? []).slice(0, 2), { index: 2, run: "resnet50/x", error: "not a trace", step_ms: null }],
      change_points: [{ index: 1, significant: false, reason: "within the noise between captures of the same series" }],
    };
    const d = trendChartData(broken);
    expect(d.median).toEqual([59.3567, 46.1763, null]);
    expect(d.spread[2]).toBeNull();
    expect(d.changes).toEqual([]);
    expect(d.marks.every((m) => m === null)).toBe(true);
    expect(d.band[2]).toEqual(d.band[0]);
    expect(uncountedMoves(broken).map((p) => p.index)).toEqual([1]);
    expect(uncountedLabel(uncountedMoves(broken)[0])).toBe("Largest move, not significant");
    expect(seriesSummary(broken)).toBe("3 captures, noise between captures ±12 %; no change point: every capture is within the noise of the series.");
  });
  it("draws no band without a noise estimate", () => {
    expect(trendChartData({ ...series, noise_pct: null }).band.every((b) => b === null)).toBe(true);
  });
});

describe("uncounted moves", () => {
  it("lists the machine's uniform shift beside the significant change, in capture order", () => {
    const machine: TrendChangePoint = {
      index: 2, significant: false, machine_change: true, reason: "uniform slowdown across all ops: the machine, not the code?",
      cause: { category: "machine", uniform: { factor: 1.6, ops: 15, time_share: 0.99, reason: "uniform slowdown across all ops: the machine, not the code?" } },
    };
    const real: TrendChangePoint = { index: 5, significant: true, cause: { category: "input", uniform: null } };
    const s: TrendSeries = { ...series, change_points: [real, machine] };
    expect(significantChanges(s).map((p) => p.index)).toEqual([5]);
    expect(uncountedMoves(s).map((p) => p.index)).toEqual([2]);
    expect(uncountedLabel(machine)).toBe("Machine change, not counted");
    // a uniform cause alone (too few captures to count anything) is not a machine change
    expect(uncountedLabel({ ...machine, machine_change: false })).toBe("Largest move, not significant");
  });
});

describe("trend words", () => {
  it("says what changed and on what evidence, with the tab's number formats", () => {
    const cp = series.change_points?.[0] ?? {};
    expect(changeLine(cp)).toBe("51.8 ms → 193 ms (+272 %)");
    expect(changeEvidence(cp)).toBe("p = 0.0075 between captures, 0.00065 on steps; noise ±12 %; 4 captures before, 1 after");
    expect(changeEvidence({ ...cp, outlier_captures: [3] })).toBe(
      "p = 0.0075 between captures, 0.00065 on steps; noise ±12 %; 4 captures before, 1 after; outlier captures left out: #3");
    expect(seriesSummary(series)).toBe("5 captures, noise between captures ±12 %; 1 change point.");
  });
  it("writes p-values in two significant digits like the CLI", () => {
    expect(formatPValue(0.007515823211692499)).toBe("0.0075");
    expect(formatPValue(0.0006535947712424939)).toBe("0.00065");
    expect(formatPValue(1.234e-5)).toBe("1.2e-05");
    expect(formatPValue(1e-7)).toBe("1e-07");
    expect(formatPValue(0.5)).toBe("0.5");
    expect(formatPValue(null)).toBe("–");
  });
  it("labels capture times from the ISO string, without the browser's time zone", () => {
    expect(captureTimeLabel("2026-01-02T03:04:05.600Z")).toBe("01-02 03:04:05");
    expect(captureTimeLabel(undefined)).toBe("");
  });
});

describe("series choices", () => {
  const runs = [
    { run: "resnet50/2026_11_27_09_22_42.672" },
    { run: "resnet50/2026_11_27_09_41_43.051" },
    { run: "bert/2026_11_27_09_00_00" },
    { run: "alone" },
  ];
  it("groups the run list by first path component, most captures first", () => {
    expect(seriesChoices(runs)).toEqual([
      { value: "resnet50", captures: 2, label: "resnet50 · 2 captures" },
      { value: "alone", captures: 1, label: "alone · 1 capture" },
      { value: "bert", captures: 1, label: "bert · 1 capture" },
    ]);
  });
  it("starts from the URL's series, else the report run's series, else the largest", () => {
    const choices = seriesChoices(runs);
    expect(defaultSeries(choices, "bert*")).toBe("bert*");
    expect(defaultSeries(choices, undefined, "resnet50/2026_11_27_09_41_43.051")).toBe("resnet50");
    expect(defaultSeries(choices, undefined, "bert/2026_11_27_09_00_00")).toBe("resnet50");
    expect(defaultSeries([], undefined, undefined)).toBe("");
  });
});

describe("trend route and state", () => {
  it("asks the trend route for a pattern, relative to the plugin's base", () => {
    expect(trendUrl("resnet50")).toBe("trend?run=resnet50");
    expect(trendUrl("job/a b*", "given")).toBe("trend?run=job%2Fa+b*&order=given");
  });
  it("counts captures while the trend's 202 reports them", () => {
    const body = { status: "running", progress: { stage: "analysing captures", done: 2, total: 5, elapsed_s: 1.25 } };
    const [part] = progressParts(body);
    expect(progressFraction(part.progress)).toBeCloseTo(0.4, 9);
    expect(progressLine(part.progress)).toBe("analysing captures · 2 of 5 · 1.3 s");
  });
  it("keeps the Trend view and its pattern in TensorBoard's page hash", () => {
    const hash = pageHashWith("#advisor", { view: "trend", trend: "resnet50_fp32_*" });
    expect(parsePageState(hash)).toEqual({ view: "trend", trend: "resnet50_fp32_*" });
  });
});
