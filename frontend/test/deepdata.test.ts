import { describe, expect, it } from "vitest";
import { DEFAULT_KERNEL_QUERY, dim3, memoryGeometry, occupancyLabel, queryKernels } from "../src/deep/data";
import type { Allocator, KernelRow } from "../src/deep/types";

const rows: KernelRow[] = [
  { name: "ampere_bf16_s16816gemm_bf16_128x256", total_ms: 10, launches: 4, occupancy_pct: 12.5 },
  { name: "void elementwise_kernel<float>", total_ms: 3, launches: 400, occupancy_pct: 50 },
  { name: "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", total_ms: 6, launches: 8, occupancy_pct: null },
  { name: "void reduce_kernel<float>", total_ms: 1, launches: 40 },
];

describe("queryKernels", () => {
  it("sorts by total time, descending, by default and keeps the top N", () => {
    const res = queryKernels(rows, { ...DEFAULT_KERNEL_QUERY, top: 2 });
    expect(res.rows.map((r) => r.total_ms)).toEqual([10, 6]);
    expect(res.matched).toBe(4);
  });
  it("filters on every word, case-insensitively, and a leading '-' excludes", () => {
    expect(queryKernels(rows, { ...DEFAULT_KERNEL_QUERY, filter: "VOID float" }).rows.map((r) => r.total_ms)).toEqual([3, 1]);
    expect(queryKernels(rows, { ...DEFAULT_KERNEL_QUERY, filter: "kernel -nccl" }).matched).toBe(2);
  });
  it("puts rows without the sorted value last in both directions", () => {
    const up = queryKernels(rows, { ...DEFAULT_KERNEL_QUERY, sort: "occupancy_pct", descending: false, top: 0 });
    expect(up.rows.map((r) => r.occupancy_pct ?? null)).toEqual([12.5, 50, null, null]);
    const down = queryKernels(rows, { ...DEFAULT_KERNEL_QUERY, sort: "occupancy_pct", descending: true, top: 0 });
    expect(down.rows.map((r) => r.occupancy_pct ?? null)).toEqual([50, 12.5, null, null]);
  });
  it("sorts names alphabetically", () => {
    const res = queryKernels(rows, { ...DEFAULT_KERNEL_QUERY, sort: "name", descending: false, top: 0 });
    expect(res.rows[0].name.startsWith("ampere")).toBe(true);
  });
});

describe("labels", () => {
  it("names where occupancy comes from", () => {
    expect(occupancyLabel("computed_theoretical")).toMatch(/computed/);
    expect(occupancyLabel("profile_achieved_estimate")).toMatch(/achieved/);
    expect(occupancyLabel(undefined)).toBe("");
  });
  it("writes launch shapes", () => {
    expect(dim3([40, 8, 1])).toBe("40×8×1");
    expect(dim3(null)).toBe("–");
  });
});

describe("memoryGeometry", () => {
  const a: Allocator = {
    allocator: "GPU_0_bfc",
    peak_bytes: 400,
    peak_ms: 10,
    capacity_bytes: 500,
    timeline: { t_ms: [0, 10, 20], in_use_bytes: [100, 400, 200], reserved_bytes: [450, 450, null] },
  };
  it("scales time to the width and bytes to the height, with the capacity on top", () => {
    const g = memoryGeometry(a, { width: 100, height: 50 })!;
    expect(g.maxBytes).toBe(500);
    expect(g.top).toBeCloseTo(550);
    // y = 50 − bytes / 550 · 50
    expect(g.inUse).toBe("0.0,40.9 50.0,13.6 100.0,31.8");
    expect(g.reserved).toBe("0.0,9.1 50.0,9.1");
    expect(g.capacityY).toBeCloseTo(50 - (500 / 550) * 50);
    expect(g.peak!.x).toBe(50);
    expect(g.peak!.y).toBeCloseTo(50 - (400 / 550) * 50);
  });
  it("leaves the capacity line out when the peak is far below it", () => {
    const g = memoryGeometry({ ...a, capacity_bytes: 10_000 }, { width: 100, height: 50 })!;
    expect(g.capacityY).toBeNull();
    expect(g.maxBytes).toBe(450);
  });
  it("needs two points", () => {
    expect(memoryGeometry({ ...a, timeline: { t_ms: [1], in_use_bytes: [1] } }, { width: 1, height: 1 })).toBeNull();
  });
});
