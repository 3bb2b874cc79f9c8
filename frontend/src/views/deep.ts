// The deeper-view panels of a report: kernel statistics, memory over time, collectives (the roofline
// panel, which draws a Chart.js chart, is views/roofline.ts). Layout only; filtering, sorting and
// geometry live in deep/data.ts.

import { DEFAULT_KERNEL_QUERY, TOP_CHOICES, dim3, memoryGeometry, occupancyLabel, queryKernels } from "../deep/data";
import type { KernelSortKey } from "../deep/data";
import type { Allocator, DeepReport, KernelRow } from "../deep/types";
import { capped, h, option, replace } from "../dom";
import { formatBytes, formatNumber, formatPct } from "../format";
import { collectivesCard } from "./collectives";
import { badge, card, list, note } from "./common";
import { findingCards } from "./findings";
import { MEMORY_BOX, ensureDeepStyle, memoryChart } from "./memorychart";

// ---------------------------------------------------------------------------------------------------
// Kernel statistics

// Grid and block ("1024×1×1") read as one figure: never broken inside the cell.
const KERNEL_COLUMNS: { key: KernelSortKey | null; label: string; numeric: boolean; nowrap?: boolean }[] = [
  { key: "name", label: "Kernel", numeric: false },
  { key: "launches", label: "Launches", numeric: true },
  { key: "total_ms", label: "Total ms", numeric: true },
  { key: "mean_us", label: "Mean µs", numeric: true },
  { key: "min_us", label: "Min µs", numeric: true },
  { key: "max_us", label: "Max µs", numeric: true },
  { key: null, label: "Grid", numeric: false, nowrap: true },
  { key: null, label: "Block", numeric: false, nowrap: true },
  { key: "registers_per_thread", label: "Regs", numeric: true },
  { key: "shared_memory_bytes", label: "Shared", numeric: true },
  { key: "occupancy_pct", label: "Occupancy", numeric: true },
  { key: "tensor_core_pct", label: "Tensor Cores", numeric: true },
];

function kernelCells(k: KernelRow): (Node | string)[] {
  const occ =
    typeof k.occupancy_pct === "number"
      ? h("span", { title: occupancyLabel(k.occupancy_source) + (k.occupancy_limiter ? `; limited by ${k.occupancy_limiter.replace("_", " ")}` : ""), attrs: { "data-source": k.occupancy_source ?? "" } }, formatPct(k.occupancy_pct), k.occupancy_source === "computed_theoretical" ? "*" : "")
      : "–";
  return [
    h("span", { class: "adv-name", attrs: { title: k.name } }, k.short_name || k.name),
    formatNumber(k.launches),
    formatNumber(k.total_ms),
    formatNumber(k.mean_us),
    formatNumber(k.min_us),
    formatNumber(k.max_us),
    dim3(k.grid),
    dim3(k.block),
    typeof k.registers_per_thread === "number" ? String(k.registers_per_thread) : "–",
    typeof k.shared_memory_bytes === "number" ? formatBytes(k.shared_memory_bytes) : "–",
    occ,
    k.tensor_cores ? badge("yes", "ok") : badge("no", "neutral"),
  ];
}

export function kernelStatsCard(r: DeepReport): HTMLElement | null {
  const ks = r.kernel_stats;
  const rows = ks?.kernels ?? [];
  if (!ks || !rows.length) return null;
  const q = { ...DEFAULT_KERNEL_QUERY };
  const tbody = h("tbody");
  const count = h("span", { class: "adv-muted", testid: "kernel-count" });
  const head = h("tr");
  const filter = h("input", { testid: "kernel-filter", attrs: { type: "search", placeholder: "filter kernels (words, -exclude)", "aria-label": "filter kernels" } });
  const top = h("select", { testid: "kernel-top", attrs: { "aria-label": "rows shown" } }, TOP_CHOICES.map((n) => option(String(n), n ? `top ${n}` : "all", n === q.top)));

  const draw = () => {
    const res = queryKernels(rows, q);
    replace(tbody, res.rows.map((k) => h("tr", { testid: "kernel-row", attrs: { "data-name": k.name } }, kernelCells(k).map((c, i) => h("td", { class: KERNEL_COLUMNS[i].numeric ? "num" : KERNEL_COLUMNS[i].nowrap ? "adv-nowrap" : "" }, c)))));
    count.textContent = `${res.rows.length} of ${res.matched} matching (${rows.length} kernels listed)`;
    replace(
      head,
      KERNEL_COLUMNS.map((c) => {
        const active = c.key === q.sort;
        const th = h("th", { class: c.numeric ? "num" : "", attrs: active ? { "aria-sort": q.descending ? "descending" : "ascending" } : {} }, c.key ? h("button", { class: "adv-sort", testid: `kernel-sort-${c.key}`, attrs: { type: "button" } }, c.label, active ? (q.descending ? " ▼" : " ▲") : "") : c.label);
        if (c.key) {
          const key = c.key;
          th.querySelector("button")?.addEventListener("click", () => {
            q.descending = q.sort === key ? !q.descending : key !== "name";
            q.sort = key;
            draw();
          });
        }
        return th;
      }),
    );
  };
  filter.addEventListener("input", () => {
    q.filter = filter.value;
    draw();
  });
  top.addEventListener("change", () => {
    q.top = Number(top.value);
    draw();
  });
  draw();
  const facts = [
    `${formatNumber(ks.launches)} launches of ${formatNumber(ks.distinct)} kernels, ${formatNumber(ks.total_ms)} ms`,
    typeof ks.launches_per_step === "number" ? `${formatNumber(ks.launches_per_step)} launches per step` : null,
    `${formatPct(ks.tiny_launch_pct)} of launches under 10 µs`,
    typeof ks.occupancy_pct === "number" ? `occupancy ${formatPct(ks.occupancy_pct)} (time-weighted)` : null,
    `${formatPct(ks.tensor_core_time_pct)} of kernel time on Tensor Cores`,
  ].filter((x): x is string => !!x);
  return card(
    "Kernel statistics",
    "kernel-stats",
    h("p", { testid: "kernel-summary" }, facts.join(" · ")),
    findingCards(ks.findings, "kernel-finding", r.run),
    h("div", { class: "adv-controls" }, filter, top, count),
    h("div", { class: "adv-scroll" }, h("table", { class: "adv-table", testid: "kernel-table" }, h("thead", null, head), tbody)),
    note("Occupancy marked * is computed from the launch shape and the GPU's per-SM limits; the others come from the profile (hover for which)."),
  );
}

// ---------------------------------------------------------------------------------------------------
// Memory over time


function allocatorFacts(a: Allocator): string[] {
  const out = [
    `Peak ${formatBytes(a.peak_bytes)} at ${formatNumber(a.peak_ms)} ms` + (typeof a.peak_step === "number" ? ` in step ${a.peak_step}` : "") + (a.peak_op ? `, during ${a.peak_op}` : "") + (a.relative ? " (relative: no in-use count recorded)" : ""),
  ];
  if (typeof a.capacity_bytes === "number") out.push(`Headroom ${formatBytes(a.headroom_bytes)} (${formatPct(a.headroom_pct)}) of ${formatBytes(a.capacity_bytes)} (${(a.capacity_source ?? "").replace(/_/g, " ")})`);
  if (typeof a.fragmentation_pct === "number") out.push(`Fragmentation at the peak ${formatPct(a.fragmentation_pct)} (${(a.fragmentation_source ?? "").replace(/_/g, " ")})`);
  if (a.live_at_peak_count) {
    const dtypes = Object.entries(a.live_at_peak_by_dtype ?? {}).map(([k, v]) => `${k} ${formatBytes(v)}`).join(", ");
    out.push(`${a.live_at_peak_count} allocations live at the peak, ${formatBytes(a.live_at_peak_bytes)}` + (dtypes ? ` (${dtypes})` : "") + (a.live_at_peak_unrecorded_bytes ? `; ${formatBytes(a.live_at_peak_unrecorded_bytes)} allocated before the capture` : ""));
  }
  return out;
}

/** The descriptive columns of the live-at-peak table; one that no row fills is left out, not dashed. */
// Allocations listed before "Show all": the few largest explain a peak.
const LIVE_ROWS = 5;
const LIVE_OPTIONAL = [
  { key: "op", label: "Op" },
  { key: "shape", label: "Shape" },
  { key: "dtype", label: "Dtype" },
  { key: "region", label: "Region" },
] as const;

function liveTable(live: NonNullable<Allocator["live_at_peak"]>): HTMLElement {
  const shown = LIVE_OPTIONAL.filter((c) => live.some((x) => x[c.key]));
  const cell = (key: (typeof LIVE_OPTIONAL)[number]["key"], value: string | null | undefined) =>
    h("td", null, key === "op" ? h("span", { class: "adv-name" }, value ?? "–") : (value ?? "–"));
  return h("div", { class: "adv-scroll" }, capped("memory-live", live.length, (rows) => h("table", { class: "adv-table", testid: "memory-live" },
    h("thead", null, h("tr", null, h("th", { class: "num" }, "Bytes"), shown.map((c) => h("th", null, c.label)), h("th", { class: "num" }, "Allocated at ms"))),
    h("tbody", null, live.slice(0, rows).map((x) => h("tr", null,
      h("td", { class: "num" }, formatBytes(x.bytes)), shown.map((c) => cell(c.key, x[c.key])), h("td", { class: "num" }, formatNumber(x.allocated_ms)))))), LIVE_ROWS));
}

function allocatorBody(a: Allocator): HTMLElement {
  const live = a.live_at_peak ?? [];
  return h(
    "div",
    { testid: "memory-allocator", attrs: { "data-allocator": a.allocator } },
    h("div", { class: "adv-chart" }, memoryChart(a)),
    note(`${a.timeline?.points ?? 0} points${a.timeline?.downsampled ? " (down-sampled; the peak is kept exactly)" : ""}; ${formatNumber(a.timeline?.t_ms?.[0])} to ${formatNumber(a.timeline?.t_ms?.[a.timeline.t_ms.length - 1])} ms from the first step's start; the chart's top is ${formatBytes((memoryGeometry(a, MEMORY_BOX)?.top ?? 0))}.`, "memory-axis"),
    list(allocatorFacts(a), "memory-facts"),
    live.length
      ? [
          h("h3", null, "Largest allocations live at the peak"),
          liveTable(live),
        ]
      : null,
  );
}

export function memoryCard(r: DeepReport): HTMLElement | null {
  const allocators = r.memory?.allocators ?? [];
  if (!allocators.length) return null;
  const label = (a: Allocator) => `${a.host ? `${a.host}: ` : ""}${a.allocator} (${a.kind ?? ""}, peak ${formatBytes(a.peak_bytes)})`;
  const body = h("div");
  const select = h("select", { testid: "memory-allocator-select", attrs: { "aria-label": "allocator" } }, allocators.map((a, i) => option(String(i), label(a), i === 0)));
  select.addEventListener("change", () => replace(body, allocatorBody(allocators[Number(select.value)])));
  replace(body, allocatorBody(allocators[0]));
  return card(
    "Memory over time",
    "memory-card",
    allocators.length > 1 ? h("div", { class: "adv-controls" }, h("label", null, "Allocator ", select)) : null,
    findingCards(r.memory?.findings, "memory-finding", r.run),
    body,
  );
}

/** Every deeper-view panel this report has data for, in reading order. */
export function deepCards(r: DeepReport): (HTMLElement | null)[] {
  ensureDeepStyle();
  return [kernelStatsCard(r), memoryCard(r), collectivesCard(r)];
}
