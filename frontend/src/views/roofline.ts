// The roofline panel of a report: MFU and the device's peaks (an AMD device by product and gfx target,
// never a "compute capability"), model FLOPs per step, the share of compute time with known FLOPs and
// the ops without, the findings, the roofline chart (ops on log-log axes under their roofs, drawn once
// the card is attached) and the op table.

import type { Chart } from "../charts";
import { drawRooflineChart } from "../reportcharts";
import type { Theme } from "../chartdata";
import { boundLabel, rooflineFacts, rooflineSeries } from "../deep/roofline";
import type { DeepReport, RooflineOp } from "../deep/types";
import { capped, h } from "../dom";
import { formatNumber, formatPct } from "../format";
import { card, chartBox, list, note } from "./common";
import { findingCards } from "./findings";

const TOP = 50;
// Rows before "Show all": the heaviest ops carry the picture; the chart plots every one.
const SHOWN_ROWS = 8;
const COLUMNS = ["Op", "Source", "Precision", "Calls", "Total ms", "Time %", "FLOP/byte", "TFLOP/s", "GB/s", "Bound", "% of roof"];

function cells(op: RooflineOp): (Node | string)[] {
  const n = (v: number | null | undefined) => (typeof v === "number" ? formatNumber(v) : "–");
  return [
    h("span", { class: "adv-name" }, op.host ? `${op.host}: ${op.name}` : op.name),
    op.source ?? "–",
    op.precision ?? "–",
    n(op.calls),
    n(op.total_ms),
    typeof op.time_pct === "number" ? formatPct(op.time_pct) : "–",
    n(op.intensity),
    n(op.achieved_tflops),
    n(op.achieved_gbps),
    h("span", { title: boundLabel(op) }, op.bound ?? "–"),
    typeof op.roof_pct === "number" ? formatPct(op.roof_pct) : "–",
  ];
}

export function rooflineCard(r: DeepReport, theme: Theme, drawers: (() => Chart | null)[]): HTMLElement | null {
  const rl = r.roofline;
  const ops = rl?.ops ?? [];
  if (!rl || !ops.length) return null;
  const series = rooflineSeries(rl);
  let chart: HTMLElement | null = null;
  if (series && series.points.length) {
    const { box, canvas } = chartBox("roofline-chart", 260, "Roofline: achieved TFLOP/s against arithmetic intensity, log-log");
    chart = box;
    drawers.push(() => drawRooflineChart(canvas, r, theme));
  }
  return card(
    "Roofline",
    "roofline-card",
    list(rooflineFacts(rl), "roofline-facts"),
    findingCards(rl.findings, "roofline-finding", r.run),
    chart ?? note("No op has both a FLOP and a byte count with a known device peak: nothing to place on a roofline.", "roofline-chart-empty"),
    h("div", { class: "adv-scroll" }, capped("roofline-table", Math.min(TOP, ops.length), (shown) => h("table", { class: "adv-table", testid: "roofline-table" },
      h("thead", null, h("tr", null, COLUMNS.map((c, i) => h("th", { class: i >= 3 && i !== 9 ? "num" : "" }, c)))),
      h("tbody", null, ops.slice(0, shown).map((op) => h("tr", { testid: "roofline-row", attrs: { "data-name": op.name, "data-bound": op.bound ?? "" } }, cells(op).map((c, i) => h("td", { class: i >= 3 && i !== 9 ? "num" : "" }, c)))))), SHOWN_ROWS)),
    rl.peaks_source ? note(`Peaks (dense) from ${rl.peaks_source}. FLOPs labelled "profile" come from the profiler (XLA cost analysis, PyTorch with_flops); "shapes" are computed from the recorded input shapes.`, "roofline-source") : null,
  );
}
