// The Trend view's data: which series the run list offers, and a trend's captures as chart series
// (median step, p10–p90 spread, the noise band around each segment, the change points). Pure, so
// the same numbers feed Chart.js in the tab and the unit tests.

import { formatDeltaPct, formatMs, formatPValue, formatPct } from "./format";
import type { RunInfo, TrendCapture, TrendChangePoint, TrendSeries } from "./types";

export interface SeriesChoice {
  /** The pattern sent to the trend route: a run directory's first path component. */
  value: string;
  label: string;
  captures: number;
}

/**
 * One choice per first path component of the run names: the runs route lists each capture
 * (`job/2026_01_01_00_00_00`), and the trend route matches a pattern by path component, so the
 * component names the series those captures form. Most captures first, then by name.
 */
export function seriesChoices(runs: readonly RunInfo[]): SeriesChoice[] {
  const counts = new Map<string, number>();
  for (const r of runs) {
    const first = r.run.split("/")[0];
    if (first) counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
    .map(([value, n]) => ({ value, captures: n, label: `${value} · ${n} capture${n === 1 ? "" : "s"}` }));
}

/** The series to show first: the URL's, else the one holding the report's run when it is a
 * series (2+ captures), else the largest. */
export function defaultSeries(choices: readonly SeriesChoice[], fromUrl?: string, reportRun?: string): string {
  if (fromUrl) return fromUrl;
  const own = reportRun ? choices.find((c) => c.value === reportRun.split("/")[0]) : undefined;
  if (own && own.captures >= 2) return own.value;
  return choices[0]?.value ?? "";
}

function finite(x: unknown): x is number {
  return typeof x === "number" && Number.isFinite(x);
}

/** A capture that enters the statistics: read, with a positive median step. */
export function usable(c: TrendCapture): boolean {
  return !c.error && finite(c.step_ms) && c.step_ms > 0;
}

/** "11-27 09:22:42" from the ISO capture time (UTC, as the server writes it); "" when absent. */
export function captureTimeLabel(iso: string | undefined): string {
  const m = /^\d{4}-(\d\d-\d\d)T(\d\d:\d\d:\d\d)/.exec(iso ?? "");
  return m ? `${m[1]} ${m[2]}` : "";
}

/** The significant change points, oldest first. */
export function significantChanges(s: TrendSeries): TrendChangePoint[] {
  return (s.change_points ?? []).filter((p) => p.significant === true && finite(p.index)).sort((a, b) => (a.index as number) - (b.index as number));
}

/** Moves the server reports but does not count: a uniform shift the machine made, and the strongest
 * candidate when nothing was significant. In capture order. */
export function uncountedMoves(s: TrendSeries): TrendChangePoint[] {
  return (s.change_points ?? []).filter((p) => p.significant !== true && finite(p.index)).sort((a, b) => (a.index as number) - (b.index as number));
}

/** Why a move is not counted, as its label. */
export function uncountedLabel(p: TrendChangePoint): string {
  return p.machine_change ? "Machine change, not counted" : "Largest move, not significant";
}

/** Position in `captures` of the capture whose `index` is `index` (the server numbers them 0..n-1). */
export function capturePosition(s: TrendSeries, index: number | undefined): number {
  const captures = s.captures ?? [];
  const at = captures.findIndex((c) => c.index === index);
  return at >= 0 ? at : finite(index) && index >= 0 && index < captures.length ? index : -1;
}

export interface TrendChartData {
  /** Per capture: its number and capture time (a two-line axis label). */
  labels: string[][];
  /** Median step per capture (null: unreadable or no steps). */
  median: (number | null)[];
  /** p10–p90 of the capture's steps, a floating bar. */
  spread: ([number, number] | null)[];
  /** The segment's level ± the series' noise between captures, a band stepping at each change. */
  band: ([number, number] | null)[];
  /** Median at the first capture after each significant change, null elsewhere (the markers). */
  marks: (number | null)[];
  /** Positions of the captures where a significant change starts. */
  changes: number[];
}

/**
 * The chart's series. The band is what the server's noise model calls the same: around each segment
 * between significant changes, its geometric mean level times / divided by (1 + noise_pct / 100)
 * (noise_pct is the standard deviation of the log medians, as a %).
 */
export function trendChartData(s: TrendSeries): TrendChartData {
  const captures = s.captures ?? [];
  const changes = significantChanges(s)
    .map((p) => capturePosition(s, p.index))
    .filter((i) => i > 0);
  const bounds = [0, ...changes, captures.length];
  const band: ([number, number] | null)[] = captures.map(() => null);
  const noise = finite(s.noise_pct) && s.noise_pct >= 0 ? s.noise_pct : null;
  for (let k = 0; k + 1 < bounds.length; k++) {
    const logs = captures.slice(bounds[k], bounds[k + 1]).filter(usable).map((c) => Math.log(c.step_ms as number));
    if (noise === null || logs.length === 0) continue;
    const level = Math.exp(logs.reduce((a, b) => a + b, 0) / logs.length);
    const f = 1 + noise / 100;
    for (let i = bounds[k]; i < bounds[k + 1]; i++) band[i] = [level / f, level * f];
  }
  const marked = new Set(changes);
  return {
    labels: captures.map((c, i) => [`#${(finite(c.index) ? c.index : i) + 1}`, captureTimeLabel(c.captured_at)].filter((x) => x !== "")),
    median: captures.map((c) => (usable(c) ? (c.step_ms as number) : null)),
    spread: captures.map((c) => (usable(c) && finite(c.p10_ms) && finite(c.p90_ms) ? [c.p10_ms, c.p90_ms] : null)),
    band,
    marks: captures.map((c, i) => (marked.has(i) && usable(c) ? (c.step_ms as number) : null)),
    changes,
  };
}

/** "51.8 ms → 193 ms (+272 %)": the levels on both sides of a change point. */
export function changeLine(p: TrendChangePoint): string {
  return `${formatMs(p.step_ms_before)} → ${formatMs(p.step_ms_after)} (${formatDeltaPct(p.delta_pct)})`;
}

/** The statistics behind a change point, as the CLI words them. */
export function changeEvidence(p: TrendChangePoint): string {
  const parts = [`p = ${formatPValue(p.p_value)} between captures`];
  if (finite(p.p_value_steps)) parts.push(`${formatPValue(p.p_value_steps)} on steps`);
  const noise = finite(p.noise_pct) ? `; noise ±${formatPct(p.noise_pct)}` : "";
  const sides = finite(p.captures_before) && finite(p.captures_after) ? `; ${p.captures_before} captures before, ${p.captures_after} after` : "";
  const outliers = (p.outlier_captures ?? []).filter(finite);
  const leftOut = outliers.length ? `; outlier captures left out: ${outliers.map((i) => `#${i}`).join(", ")}` : "";
  return `${parts.join(", ")}${noise}${sides}${leftOut}`;
}

/** One line under the chart: how many captures, the noise between them, and what changed. */
export function seriesSummary(s: TrendSeries): string {
  const n = (s.captures ?? []).length;
  const noise = finite(s.noise_pct) ? `, noise between captures ±${formatPct(s.noise_pct)}` : "";
  const changes = significantChanges(s).length;
  const what = changes === 0 ? "no change point: every capture is within the noise of the series" : `${changes} change point${changes === 1 ? "" : "s"}`;
  return `${n} capture${n === 1 ? "" : "s"}${noise}; ${what}.`;
}
