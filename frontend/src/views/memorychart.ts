// An allocator's memory over time as an SVG curve (in use, reserved, the device's capacity, the peak):
// the tab's Memory card and the HTML export (exportcharts.ts) both draw it with this code, with the
// deeper views' stylesheet. Layout only; the geometry is deep/data.ts's memoryGeometry.

import deepCss from "../deep/deep.css?inline";
import { memoryGeometry } from "../deep/data";
import { s, tip } from "../deep/svg";
import type { Allocator } from "../deep/types";
import { formatBytes, formatNumber } from "../format";
import { note } from "./common";

export const MEMORY_BOX = { width: 1000, height: 220 };

export function memoryChart(a: Allocator): SVGSVGElement | HTMLElement {
  const g = memoryGeometry(a, MEMORY_BOX);
  if (!g) return note("Too few allocator records to draw a curve.", "memory-chart-empty");
  const svg = s(
    "svg",
    { viewBox: `0 0 ${MEMORY_BOX.width} ${MEMORY_BOX.height}`, width: "100%", height: MEMORY_BOX.height, preserveAspectRatio: "none", role: "img", "aria-label": `memory in use over time, ${a.allocator}`, "data-testid": "memory-chart", "data-points": a.timeline?.points ?? 0 },
    g.capacityY !== null ? s("line", { x1: 0, x2: MEMORY_BOX.width, y1: g.capacityY, y2: g.capacityY, class: "adv-mem-capacity", "data-testid": "memory-capacity" }, tip(`device memory ${formatBytes(a.capacity_bytes)}`)) : null,
    g.reserved ? s("polyline", { points: g.reserved, class: "adv-mem-reserved", fill: "none" }, tip("reserved")) : null,
    s("polyline", { points: g.inUse, class: "adv-mem-inuse", fill: "none", "data-testid": "memory-curve" }, tip("in use")),
    g.peak ? s("circle", { cx: g.peak.x, cy: g.peak.y, r: 5, class: "adv-mem-peak", "data-testid": "memory-peak" }, tip(`peak ${formatBytes(a.peak_bytes)} at ${formatNumber(a.peak_ms)} ms`)) : null,
  );
  return svg;
}

/** The deeper views' stylesheet, added to the document once (the tab and an export alike). */
export function ensureDeepStyle(): void {
  if (document.querySelector("style[data-adv-deep]")) return;
  const style = document.createElement("style");
  style.setAttribute("data-adv-deep", "");
  style.textContent = deepCss;
  document.head.appendChild(style);
}
