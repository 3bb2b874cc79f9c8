// Pure helpers for the deeper-view panels: kernel table filter/sort/top-N and chart geometry.
// No DOM here, so the unit tests check every rule.

import type { Allocator, KernelRow } from "./types";

export type KernelSortKey =
  | "name"
  | "launches"
  | "total_ms"
  | "mean_us"
  | "min_us"
  | "max_us"
  | "registers_per_thread"
  | "shared_memory_bytes"
  | "occupancy_pct"
  | "tensor_core_pct";

export interface KernelQuery {
  filter: string;
  sort: KernelSortKey;
  descending: boolean;
  top: number; // 0: all
}

export const DEFAULT_KERNEL_QUERY: KernelQuery = { filter: "", sort: "total_ms", descending: true, top: 10 };
export const TOP_CHOICES = [10, 25, 50, 100, 0];

/**
 * Case-insensitive filter on the kernel name (space-separated words must all match; a leading "-"
 * excludes), then sort (missing values last whatever the direction), then the first `top` rows.
 */
export function queryKernels(rows: KernelRow[], q: KernelQuery): { rows: KernelRow[]; matched: number } {
  const words = q.filter.toLowerCase().split(/\s+/).filter(Boolean);
  const include = words.filter((w) => !w.startsWith("-"));
  const exclude = words.filter((w) => w.startsWith("-") && w.length > 1).map((w) => w.slice(1));
  const matched = rows.filter((r) => {
    const name = r.name.toLowerCase();
    return include.every((w) => name.includes(w)) && !exclude.some((w) => name.includes(w));
  });
  const sorted = [...matched].sort((a, b) => compare(a, b, q));
  return { rows: q.top > 0 ? sorted.slice(0, q.top) : sorted, matched: matched.length };
}

function compare(a: KernelRow, b: KernelRow, q: KernelQuery): number {
  if (q.sort === "name") {
    const c = a.name.localeCompare(b.name);
    return q.descending ? -c : c;
  }
  const x = a[q.sort];
  const y = b[q.sort];
  const xm = typeof x !== "number";
  const ym = typeof y !== "number";
  if (xm || ym) return xm === ym ? 0 : xm ? 1 : -1;
  return q.descending ? (y as number) - (x as number) : (x as number) - (y as number);
}

export function occupancyLabel(source: string | null | undefined): string {
  switch (source) {
    case "profile_theoretical":
      return "theoretical, from the profile";
    case "profile_achieved_estimate":
      return "estimated achieved, from the profile";
    case "computed_theoretical":
      return "theoretical, computed from the launch shape";
    default:
      return "";
  }
}

export function dim3(v: number[] | null | undefined): string {
  return v && v.length ? v.join("×") : "–";
}

// ---------------------------------------------------------------------------------------------------
// Memory curve geometry (SVG user units)

export interface Box {
  width: number;
  height: number;
}

export interface MemoryGeometry {
  inUse: string; // polyline points
  reserved: string | null;
  capacityY: number | null; // a horizontal line at the device's memory, when it is on the chart
  peak: { x: number; y: number } | null;
  maxBytes: number;
  top: number; // bytes at the top edge: 10 % above the largest value, so the peak marker stays inside
  t0: number;
  t1: number;
}

/** Scale an allocator's curve into a box; the capacity line is drawn only when the peak is within 2× of it. */
export function memoryGeometry(a: Allocator, box: Box): MemoryGeometry | null {
  const t = a.timeline?.t_ms ?? [];
  const y = a.timeline?.in_use_bytes ?? [];
  if (t.length < 2 || y.length !== t.length) return null;
  const reserved = a.timeline?.reserved_bytes ?? null;
  const peak = a.peak_bytes ?? Math.max(...y);
  const capacity = a.capacity_bytes ?? null;
  const showCapacity = capacity !== null && capacity > 0 && peak * 2 >= capacity;
  const maxReserved = reserved ? Math.max(0, ...reserved.map((v) => v ?? 0)) : 0;
  const maxBytes = Math.max(...y, maxReserved, showCapacity ? (capacity as number) : 0, 1);
  const t0 = Math.min(...t);
  const t1 = Math.max(...t);
  const span = t1 - t0 || 1;
  const sx = (v: number) => ((v - t0) / span) * box.width;
  const top = maxBytes * 1.1;
  const sy = (v: number) => box.height - (v / top) * box.height;
  const pts = (vals: (number | null)[]) =>
    vals
      .map((v, i) => (v === null ? null : `${sx(t[i]).toFixed(1)},${sy(v).toFixed(1)}`))
      .filter((p): p is string => p !== null)
      .join(" ");
  return {
    inUse: pts(y),
    reserved: reserved ? pts(reserved) : null,
    capacityY: showCapacity ? sy(capacity as number) : null,
    peak: typeof a.peak_ms === "number" ? { x: sx(a.peak_ms), y: sy(peak) } : null,
    maxBytes,
    top,
    t0,
    t1,
  };
}
