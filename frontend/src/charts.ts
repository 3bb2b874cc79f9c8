// The one place that knows Chart.js. Only the pieces the bar charts and the roofline (a scatter with
// line roofs on log axes) need are registered, so the bundle carries nothing else from the library.

import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
} from "chart.js";
import type { BarData, Theme } from "./chartdata";
import { formatNumber } from "./format";
import type { TrendChartData } from "./trenddata";
import type { RooflineSeries } from "./deep/roofline";
import { boundLabel } from "./deep/roofline";
import { CHART_PALETTES } from "./theme";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);
Chart.register(ScatterController, LineController, PointElement, LineElement, LogarithmicScale);

export interface BarOptions {
  stacked?: boolean;
  horizontal?: boolean;
  /** One colour per bar instead of one per series. */
  colors?: string[];
  unit?: string;
  xTitle?: string;
  yTitle?: string;
  legend?: boolean;
}

export function barChart(canvas: HTMLCanvasElement, data: BarData, theme: Theme, opts: BarOptions = {}): Chart<"bar"> {
  const pal = CHART_PALETTES[theme];
  const valueAxis = opts.horizontal ? "x" : "y";
  const unit = opts.unit ?? "";
  const axis = (title: string | undefined, stacked: boolean, isValue: boolean) => ({
    stacked,
    grid: { color: pal.grid, display: isValue },
    ticks: { color: pal.text, ...(isValue ? {} : { autoSkip: true, maxRotation: 0 }) },
    title: { display: !!title, text: title ?? "", color: pal.text },
    border: { color: pal.grid },
  });
  const chart = new Chart(canvas, {
    type: "bar",
    data: {
      labels: data.labels,
      datasets: data.series.map((s) => ({
        label: s.label,
        data: s.data,
        backgroundColor: opts.colors ?? s.color,
        borderWidth: 0,
        maxBarThickness: 48,
      })),
    },
    options: {
      indexAxis: opts.horizontal ? "y" : "x",
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: {
        legend: { display: opts.legend ?? data.series.length > 1, labels: { color: pal.text, boxWidth: 12 } },
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const v = ctx.parsed[valueAxis];
              return `${ctx.dataset.label ?? ""}: ${typeof v === "number" ? v.toFixed(2) : v}${unit}`;
            },
          },
        },
      },
      scales: {
        x: axis(opts.xTitle, !!opts.stacked, !!opts.horizontal),
        y: axis(opts.yTitle, !!opts.stacked, !opts.horizontal),
      },
    },
  });
  canvas.setAttribute("data-chart-ready", String(data.series.reduce((n, s) => n + s.data.length, 0)));
  return chart;
}

const ROOF_COLORS: Record<Theme, string[]> = {
  light: ["#5f6368", "#9aa0a6", "#bdc1c6", "#dadce0"],
  dark: ["#e8eaed", "#bdc1c6", "#9aa0a6", "#80868b"],
};
const POINT_COLORS: Record<Theme, { memory: string; compute: string }> = {
  light: { memory: "#1a73e8", compute: "#e8710a" },
  dark: { memory: "#8ab4f8", compute: "#fcad70" },
};

/** Log axes label their decades only: 0.01, 0.1, 1, 10, 100, 1k, 10k. */
export function decadeLabel(v: number): string {
  const e = Math.log10(v);
  if (!(v > 0) || Math.abs(e - Math.round(e)) > 1e-6) return "";
  return v >= 1000 ? `${Math.round(v / 1000)}k` : String(Number(v.toPrecision(1)));
}

/** Ops as points (intensity, achieved TFLOP/s) under one roof per precision, log-log. */
export function rooflineChart(canvas: HTMLCanvasElement, series: RooflineSeries, theme: Theme): Chart {
  const pal = CHART_PALETTES[theme];
  const axis = (title: string, min: number, max?: number) => ({
    type: "logarithmic" as const,
    min,
    max,
    grid: { color: pal.grid },
    ticks: { color: pal.text, callback: (v: string | number) => decadeLabel(Number(v)) },
    title: { display: true, text: title, color: pal.text },
    border: { color: pal.grid },
  });
  const yMin = Math.min(...series.points.map((p) => p.y), ...series.roofs.map((r) => r.line[0].y));
  const yMax = Math.max(...series.roofs.map((r) => r.line[2].y));
  const chart = new Chart(canvas, {
    type: "scatter",
    data: {
      datasets: [
        ...series.roofs.map((roof, i) => ({
          type: "line" as const,
          label: `${roof.precision} roof`,
          data: roof.line,
          borderColor: ROOF_COLORS[theme][i % ROOF_COLORS[theme].length],
          borderWidth: 2,
          pointRadius: 0,
          fill: false,
        })),
        {
          type: "scatter" as const,
          label: "ops",
          data: series.points.map((p) => ({ x: p.x, y: p.y })),
          backgroundColor: series.points.map((p) => POINT_COLORS[theme][p.op.bound === "compute" ? "compute" : "memory"]),
          pointRadius: 5,
        },
      ],
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: {
        legend: { labels: { color: pal.text, boxWidth: 12 } },
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const op = series.points[ctx.dataIndex]?.op;
              if (ctx.dataset.label !== "ops" || !op) return `${ctx.dataset.label ?? ""}`;
              const point = series.points[ctx.dataIndex];
              return `${op.name}: ${point.y.toPrecision(3)} TFLOP/s at ${point.x.toPrecision(3)} FLOP/byte (${boundLabel(op)})`;
            },
          },
        },
      },
      scales: {
        x: axis("arithmetic intensity, FLOP/byte", series.xMin, series.xMax),
        y: axis("achieved TFLOP/s", 10 ** Math.floor(Math.log10(yMin)), 10 ** Math.ceil(Math.log10(yMax))),
      },
    },
  });
  canvas.setAttribute("data-chart-ready", String(series.points.length));
  return chart;
}

const TREND_COLORS: Record<Theme, { median: string; spread: string; band: string; change: string }> = {
  light: { median: "#1a73e8", spread: "rgba(26,115,232,0.28)", band: "rgba(95,99,104,0.13)", change: "#d93025" },
  dark: { median: "#8ab4f8", spread: "rgba(138,180,248,0.32)", band: "rgba(232,234,237,0.12)", change: "#f28b82" },
};

export interface TrendChartOptions {
  /** A click on a capture (its position in the series). */
  onCapture?: (position: number) => void;
  /** Tooltip title of a capture: its run name. */
  titleOf?: (position: number) => string;
}

/**
 * Step time per capture: the median as a line of points, its p10–p90 spread as a floating bar, the
 * noise band of each segment behind them, a triangle and a dashed line where a significant change
 * starts. Category axis: captures are evenly spaced, in series order.
 */
export function trendChart(canvas: HTMLCanvasElement, data: TrendChartData, theme: Theme, opts: TrendChartOptions = {}): Chart {
  const pal = CHART_PALETTES[theme];
  const col = TREND_COLORS[theme];
  const changeLines = {
    id: "advisorChangeLines",
    afterDatasetsDraw(chart: Chart) {
      const x = chart.scales.x;
      const area = chart.chartArea;
      const g = chart.ctx;
      g.save();
      g.strokeStyle = col.change;
      g.lineWidth = 1.5;
      g.setLineDash([5, 4]);
      for (const i of data.changes) {
        const at = (x.getPixelForValue(i - 1) + x.getPixelForValue(i)) / 2;
        g.beginPath();
        g.moveTo(at, area.top);
        g.lineTo(at, area.bottom);
        g.stroke();
      }
      g.restore();
    },
  };
  const floating = { type: "bar" as const, grouped: false, borderWidth: 0 };
  // Floating bars ([p10, p90], the band) and lines (median, markers) share one category axis.
  type Point = number | [number, number] | null;
  const chart = new Chart<"bar" | "line", Point[], string[]>(canvas, {
    type: "bar",
    data: {
      labels: data.labels,
      datasets: [
        { ...floating, label: "noise band", data: data.band, backgroundColor: col.band, barPercentage: 1, categoryPercentage: 1, order: 3 },
        { ...floating, label: "p10–p90", data: data.spread, backgroundColor: col.spread, barPercentage: 0.3, order: 2 },
        { type: "line" as const, label: "median step", data: data.median, borderColor: col.median, backgroundColor: col.median, pointRadius: 4, pointHoverRadius: 6, borderWidth: 2, spanGaps: true, order: 1 },
        { type: "line" as const, label: "change point", data: data.marks, borderColor: col.change, backgroundColor: col.change, pointStyle: "triangle", pointRadius: 9, pointHoverRadius: 10, showLine: false, order: 0 },
      ],
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      onClick: (_ev, elements) => {
        if (elements.length && opts.onCapture) opts.onCapture(elements[0].index);
      },
      onHover: (_ev, elements) => {
        if (opts.onCapture) canvas.style.cursor = elements.length ? "pointer" : "default";
      },
      plugins: {
        legend: { labels: { color: pal.text, boxWidth: 12 } },
        tooltip: {
          callbacks: {
            title: (items) => (items.length && opts.titleOf ? opts.titleOf(items[0].dataIndex) : ""),
            label: (ctx) => {
              const raw = ctx.raw;
              const value = Array.isArray(raw) ? `${formatNumber(raw[0])}–${formatNumber(raw[1])}` : typeof raw === "number" ? formatNumber(raw) : "";
              return `${ctx.dataset.label ?? ""}: ${value} ms`;
            },
          },
        },
      },
      scales: {
        x: { grid: { display: false }, ticks: { color: pal.text, autoSkip: true, maxRotation: 0 }, title: { display: true, text: "capture", color: pal.text }, border: { color: pal.grid } },
        y: { beginAtZero: true, grid: { color: pal.grid }, ticks: { color: pal.text }, title: { display: true, text: "ms per step", color: pal.text }, border: { color: pal.grid } },
      },
    },
    plugins: [changeLines],
  });
  canvas.setAttribute("data-chart-ready", String(data.median.filter((v) => v !== null).length));
  return chart;
}

export type { Chart };
