// Turn report/diff JSON into plain chart series. No chart library here: the same output feeds
// Chart.js in the tab and the unit tests.

import { CATEGORIES, PRECISIONS, categoryInfo, orderedKeys } from "./categories";
import type { CategoryMap, Diff, Report } from "./types";

export type Theme = "light" | "dark";

export interface Series {
  key: string;
  label: string;
  data: number[];
  color: string;
}

export interface BarData {
  labels: string[];
  series: Series[];
}

function num(x: unknown): number {
  return typeof x === "number" && Number.isFinite(x) ? x : 0;
}

function colorOf(key: string, theme: Theme): string {
  const c = categoryInfo(key);
  return theme === "dark" ? c.dark : c.light;
}

export function stepLabel(step: number | null | undefined, index: number): string {
  return typeof step === "number" ? String(step) : `#${index + 1}`;
}

/**
 * One stacked series per category for the per-step chart; categories that are zero in every step
 * are left out so the legend only names what happened.
 */
export function perStepBars(report: Report, theme: Theme): BarData {
  const perStep = report.steps?.per_step ?? [];
  if (perStep.length > 0) {
    const keys = orderedKeys(
      perStep.flatMap((s) => Object.keys(s.breakdown_ms ?? {})),
      CATEGORIES,
    );
    const series = keys
      .map((key) => ({
        key,
        label: categoryInfo(key).label,
        data: perStep.map((s) => num(s.breakdown_ms?.[key])),
        color: colorOf(key, theme),
      }))
      .filter((s) => s.data.some((v) => v !== 0));
    return { labels: perStep.map((s, i) => stepLabel(s.step, i)), series };
  }
  const times = report.steps?.times_ms ?? [];
  const numbers = report.steps?.numbers ?? [];
  if (times.length === 0) return { labels: [], series: [] };
  return {
    labels: times.map((_, i) => stepLabel(numbers[i], i)),
    series: [{ key: "step", label: "Step time", data: times.map(num), color: colorOf("device_compute", theme) }],
  };
}

export interface BreakdownRow {
  key: string;
  label: string;
  help: string;
  ms: number;
  pct: number;
}

export function breakdownRows(report: Report): BreakdownRow[] {
  const ms = report.breakdown_ms ?? {};
  const pct = report.breakdown_pct ?? {};
  const keys = orderedKeys([...Object.keys(ms), ...Object.keys(pct)], CATEGORIES);
  return keys.map((key) => {
    const c = categoryInfo(key);
    return { key, label: c.label, help: c.help, ms: num(ms[key]), pct: num(pct[key]) };
  });
}

const PRECISION_COLORS: Record<Theme, { low: string; high: string; unknown: string }> = {
  light: { low: "#188038", high: "#1a73e8", unknown: "#9aa0a6" },
  dark: { low: "#81c995", high: "#8ab4f8", unknown: "#5f6368" },
};

/** Precision shares as one horizontal bar per format that has a non-zero share. */
export function precisionBars(pct: CategoryMap | undefined, theme: Theme): BarData & { colors: string[] } {
  const keys = orderedKeys(Object.keys(pct ?? {}), PRECISIONS).filter((k) => num(pct?.[k]) > 0);
  const palette = PRECISION_COLORS[theme];
  const colors = keys.map((k) => {
    const p = PRECISIONS.find((x) => x.key === k);
    if (!p || k === "unknown") return palette.unknown;
    return p.low ? palette.low : palette.high;
  });
  return {
    labels: keys.map((k) => PRECISIONS.find((x) => x.key === k)?.label ?? k),
    series: [{ key: "precision", label: "% of compute time", data: keys.map((k) => num(pct?.[k])), color: palette.high }],
    colors,
  };
}

/** Share of compute time in reduced precision formats (TF32/FP16/BF16/FP8/INT8). */
export function lowPrecisionPct(pct: CategoryMap | undefined): number {
  return PRECISIONS.filter((p) => p.low).reduce((s, p) => s + num(pct?.[p.key]), 0);
}

const DELTA_COLORS: Record<Theme, { faster: string; slower: string }> = {
  light: { faster: "#188038", slower: "#d93025" },
  dark: { faster: "#81c995", slower: "#f28b82" },
};

/** Per-category change in ms per step; green where the candidate got faster, red where slower. */
export function deltaBars(diff: Diff, theme: Theme): BarData & { colors: string[] } {
  const d = diff.breakdown_delta_ms ?? {};
  const keys = orderedKeys(Object.keys(d), CATEGORIES);
  const data = keys.map((k) => num(d[k]));
  const palette = DELTA_COLORS[theme];
  return {
    labels: keys.map((k) => categoryInfo(k).label),
    series: [{ key: "delta", label: "Δ ms per step (candidate − baseline)", data, color: palette.slower }],
    colors: data.map((v) => (v <= 0 ? palette.faster : palette.slower)),
  };
}
