// The one place that knows Chart.js. Only the pieces the bar charts and the roofline's log-log scatter
// need are registered, so the bundle carries nothing else from the library.

import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LineController,
  LineElement,
  LinearScale,
  LogarithmicScale,
  PointElement,
  ScatterController,
  Tooltip,
} from "chart.js";
import type { BarData, Theme } from "./chartdata";
import { CHART_PALETTES } from "./theme";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);
// the roofline: points and a line on two log axes
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

export interface ScatterSeries {
  label: string;
  color: string;
  points: { x: number; y: number; name?: string }[];
  line?: boolean; // drawn as a line through the points (the roof), not as dots
}

/** Log-log scatter (the roofline): `tip` labels a point; data-chart-ready counts the dots. */
export function logScatterChart(canvas: HTMLCanvasElement, series: ScatterSeries[], theme: Theme, xTitle: string, yTitle: string, tip: (name: string, x: number, y: number) => string, yTick: (v: number) => string = String): Chart<"scatter"> {
  const pal = CHART_PALETTES[theme];
  const axis = (title: string, fmt?: (v: number) => string) => ({
    type: "logarithmic" as const,
    grid: { color: pal.grid },
    ticks: { color: pal.text, maxTicksLimit: 8, ...(fmt ? { callback: (v: string | number) => fmt(Number(v)) } : {}) },
    title: { display: true, text: title, color: pal.text },
    border: { color: pal.grid },
  });
  const chart = new Chart(canvas, {
    type: "scatter",
    data: {
      datasets: series.map((s) => ({
        label: s.label,
        data: s.points,
        backgroundColor: s.color,
        borderColor: s.color,
        showLine: !!s.line,
        pointRadius: s.line ? 0 : 5,
        borderWidth: s.line ? 2 : 0,
      })),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      plugins: {
        legend: { display: true, labels: { color: pal.text, boxWidth: 12 } },
        tooltip: {
          callbacks: {
            label: (ctx) => {
              const raw = ctx.raw as { x: number; y: number; name?: string };
              return tip(raw.name ?? ctx.dataset.label ?? "", raw.x, raw.y);
            },
          },
        },
      },
      scales: { x: axis(xTitle), y: axis(yTitle, yTick) },
    },
  });
  canvas.setAttribute("data-chart-ready", String(series.filter((s) => !s.line).reduce((n, s) => n + s.points.length, 0)));
  return chart;
}

export type { Chart };
