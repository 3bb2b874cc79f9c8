// The one place that knows Chart.js. Only the pieces a bar chart needs are registered, so the
// bundle carries nothing else from the library.

import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from "chart.js";
import type { BarData, Theme } from "./chartdata";
import { CHART_PALETTES } from "./theme";

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Legend, Tooltip);

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

export type { Chart };
