// The roofline panel: MFU and its basis, the findings, a log-log chart of the ops against the device's
// roof (Chart.js, bundled, like the other charts) and the op table. Data and geometry: deep/roofline.ts.

import { logScatterChart, type Chart } from "../charts";
import type { Theme } from "../chartdata";
import { formatRate, rooflineFacts, rooflinePlot, type Roofline, type RooflineOp } from "../deep/roofline";
import { h } from "../dom";
import { formatNumber, formatPct } from "../format";
import { card, chartBox, list, note } from "./common";
import { findingCards } from "./deep";

const COLUMNS = ["Op", "Calls", "ms", "% time", "Precision", "FLOP/byte", "Achieved", "Roof", "% of roof", "Bound", "FLOPs from"];

function cells(o: RooflineOp): (Node | string)[] {
  const known = o.precision_source;
  const precision = (o.precision ?? "–") + (known === "assumed" ? " (assumed)" : known && known !== "dtype" ? " (inferred from the rate)" : "");
  return [
    h("span", { class: "adv-name" }, o.name),
    formatNumber(o.calls),
    formatNumber(o.time_ms),
    typeof o.time_pct === "number" ? formatPct(o.time_pct) : "–",
    precision,
    typeof o.intensity_flops_per_byte === "number" ? formatNumber(o.intensity_flops_per_byte) : "–",
    (o.flops_upper_bound ? "≤ " : "") + formatRate(o.achieved_flops_per_s),
    formatRate(o.roof_flops_per_s),
    typeof o.roof_pct === "number" ? formatPct(o.roof_pct) : "–",
    o.bound ?? "–",
    o.source ?? "",
  ];
}

export function rooflineCard(report: object, theme: Theme, drawers: (() => Chart | null)[]): HTMLElement | null {
  const roof = (report as { roofline?: Roofline }).roofline;
  const ops = roof?.ops ?? [];
  if (!roof || !ops.length) return null;
  const plot = rooflinePlot(roof);
  const { box, canvas } = chartBox("roofline-chart", 320, "roofline: ops against the device's roof");
  if (plot) {
    const tip = (name: string, x: number, y: number) => `${name}: ${formatRate(y)} at ${formatNumber(x)} FLOP/byte`;
    drawers.push(() =>
      logScatterChart(canvas, [
        { label: `roof (${roof.mfu_precision} peak, memory bandwidth)`, color: "#757575", points: plot.roof, line: true },
        { label: "memory-bound ops", color: "#c62828", points: plot.memory },
        { label: "compute-bound ops", color: "#1565c0", points: plot.compute },
      ], theme, "arithmetic intensity (FLOP/byte)", "achieved FLOP/s", tip, formatRate),
    );
  }
  return card(
    "Roofline and MFU",
    "roofline-card",
    list(rooflineFacts(roof), "roofline-facts"),
    findingCards(roof.findings, "roofline-finding"),
    plot ? box : note("No roof to draw: the device is not in the peak table, or no op has a byte count.", "roofline-no-chart"),
    plot ? note(`Ridge point ${formatNumber(plot.ridge)} FLOP/byte: ops left of it are limited by memory bandwidth, right of it by the ${roof.mfu_precision} peak (${formatRate(plot.peak)}). Peaks from ${roof.accelerator?.source ?? ""}.`, "roofline-ridge") : null,
    h("div", { class: "adv-scroll" }, h("table", { class: "adv-table", testid: "roofline-table" },
      h("thead", null, h("tr", null, COLUMNS.map((c, i) => h("th", { class: i > 0 && i !== 4 && i < 9 ? "num" : "" }, c)))),
      h("tbody", null, ops.slice(0, 50).map((o) => h("tr", { testid: "roofline-row", attrs: { "data-name": o.name, "data-bound": o.bound ?? "" } }, cells(o).map((c, i) => h("td", { class: i > 0 && i !== 4 && i < 9 ? "num" : "" }, c))))))),
  );
}
