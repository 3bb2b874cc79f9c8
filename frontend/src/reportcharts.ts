// The report's and the diff's charts, drawn the same way in the tab and in the HTML export: each
// function takes the answer's JSON and a canvas, so both paths use one set of data and options.

import { barChart, rooflineChart, type Chart } from "./charts";
import { rooflineSeries } from "./deep/roofline";
import type { DeepReport } from "./deep/types";
import { deltaBars, perStepBars, precisionBars, type Theme } from "./chartdata";
import type { Diff, Report } from "./types";

/** Stacked per-step bars, one colour per category, in ms. */
export function drawStepsChart(canvas: HTMLCanvasElement, r: Report, theme: Theme): Chart | null {
  const bars = perStepBars(r, theme);
  if (bars.labels.length === 0) return null;
  return barChart(canvas, bars, theme, { stacked: true, unit: " ms", xTitle: "step", yTitle: "ms per step" });
}

/** Share of compute time per precision, in %. */
export function drawPrecisionChart(canvas: HTMLCanvasElement, r: Report, theme: Theme): Chart | null {
  const bars = precisionBars(r.precision_pct, theme);
  if (bars.labels.length === 0) return null;
  return barChart(canvas, bars, theme, { horizontal: true, colors: bars.colors, unit: " %", legend: false, xTitle: "% of compute time" });
}

/** Change of each category between two runs, in ms per step. */
export function drawDeltaChart(canvas: HTMLCanvasElement, diff: Diff, theme: Theme): Chart | null {
  const bars = deltaBars(diff, theme);
  if (bars.labels.length === 0) return null;
  return barChart(canvas, bars, theme, { horizontal: true, colors: bars.colors, unit: " ms", legend: false, xTitle: "Δ ms per step (candidate − baseline)" });
}

/** The roofline of a report's `roofline` key: ops on log-log axes under their roofs. */
export function drawRooflineChart(canvas: HTMLCanvasElement, r: DeepReport, theme: Theme): Chart | null {
  const series = rooflineSeries(r.roofline);
  if (!series || series.points.length === 0) return null;
  return rooflineChart(canvas, series, theme);
}

type Drawer = (canvas: HTMLCanvasElement, data: never, theme: Theme) => Chart | null;

/** The charts an HTML export may name in `data-advisor-chart`, and what each draws from. */
export const EXPORT_CHARTS: Readonly<Record<string, { from: "report" | "diff"; draw: Drawer }>> = {
  steps: { from: "report", draw: drawStepsChart as Drawer },
  precision: { from: "report", draw: drawPrecisionChart as Drawer },
  delta: { from: "diff", draw: drawDeltaChart as Drawer },
  roofline: { from: "report", draw: drawRooflineChart as Drawer },
};
