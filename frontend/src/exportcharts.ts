// An HTML export (tb-advisor report/diff --format html) embeds this bundle and its answer's JSON:
// its charts are drawn here by the tab's own chart code, so the export looks like the tab.

import type { Chart } from "./charts";
import type { Theme } from "./chartdata";
import type { DeepReport } from "./deep/types";
import { EXPORT_CHARTS } from "./reportcharts";
import { ensureDeepStyle, memoryChart } from "./views/memorychart";

export const EXPORT_DATA_ID = "advisor-export-data";

interface ExportData {
  report?: unknown;
  diff?: unknown;
}

/** Draw every `canvas[data-advisor-chart]` of the page; the count lands on `<html data-charts-drawn>`. */
export function drawExportCharts(doc: Document): Chart[] {
  const root = doc.documentElement;
  try {
    const data = JSON.parse(doc.getElementById(EXPORT_DATA_ID)?.textContent ?? "{}") as ExportData;
    const theme: Theme = doc.defaultView?.matchMedia?.("(prefers-color-scheme: dark)").matches ? "dark" : "light";
    const charts: Chart[] = [];
    doc.querySelectorAll<HTMLCanvasElement>("canvas[data-advisor-chart]").forEach((canvas) => {
      const kind = EXPORT_CHARTS[canvas.dataset.advisorChart ?? ""];
      const source = kind ? data[kind.from] : undefined;
      const chart = kind && source ? kind.draw(canvas, source as never, theme) : null;
      if (chart) charts.push(chart);
    });
    root.dataset.chartsDrawn = String(charts.length);
    root.dataset.memoryChartsDrawn = String(drawMemoryCharts(doc, data.report as DeepReport | undefined));
    return charts;
  } catch (e) {
    root.dataset.chartsError = String(e);
    return [];
  }
}

/** Fill every `[data-advisor-memory=INDEX]` slot with the tab's memory chart of that allocator. */
function drawMemoryCharts(doc: Document, report: DeepReport | undefined): number {
  const allocators = report?.memory?.allocators ?? [];
  const slots = doc.querySelectorAll<HTMLElement>("[data-advisor-memory]");
  let drawn = 0;
  slots.forEach((slot) => {
    const allocator = allocators[Number(slot.dataset.advisorMemory)];
    if (!allocator) return;
    ensureDeepStyle();
    slot.appendChild(memoryChart(allocator));
    drawn += 1;
  });
  return drawn;
}
