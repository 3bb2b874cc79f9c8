import { describe, expect, it } from "vitest";
import { inputPanelView } from "../src/inputpipeline";
import type { InputPipeline } from "../src/types";

// The input_pipeline of the H200 ResNet-50 captures (tests/captures/h200), as the report serves it.
const WORKERS0: InputPipeline = {
  kind: "dataloader",
  dominant_stage: "unknown",
  evidence: ["DataLoader iterator: _SingleProcessDataLoaderIter (num_workers=0): …"],
  dataloader: {
    iterator: "_SingleProcessDataLoaderIter",
    workers: "none",
    num_workers: 0,
    wait_ms_per_step: 147.27,
    wait_pct: 70.23,
    exposed_wait_ms_per_step: 147.27,
    exposed_wait_pct: 70.23,
    calls_per_step: 1,
    longest_waits: [
      { step: 2, ms: 200.85 },
      { step: 3, ms: 132.21 },
    ],
    main_process_ms_per_step: { collate: 25.79, dataset: 0.2352, python: 121.25 },
    main_process_ops: [{ name: "aten::stack", ms_per_step: 25.79 }],
    pinned_memory: false,
    non_blocking: true,
    non_blocking_source: "concrete_inputs",
    h2d_copies: { per_step: 2, pinned: 0, pageable: 8, bytes_per_step: 38535680, device_ms_per_step: 6.212, host_blocked_ms_per_step: 6.4948, waited: 0, staged: 8, overlapped: 0 },
  },
};
const WORKERS8: InputPipeline = {
  kind: "dataloader",
  dataloader: {
    iterator: "_MultiProcessingDataLoaderIter",
    workers: "processes",
    num_workers: null,
    wait_ms_per_step: 0.073,
    wait_pct: 0.12,
    exposed_wait_ms_per_step: 0.0,
    exposed_wait_pct: 0.0,
    main_process_ms_per_step: { collate: 0, dataset: 0, python: 0.073 },
    pinned_memory: true,
    non_blocking: true,
    non_blocking_source: "concrete_inputs",
    h2d_copies: { per_step: 2, pinned: 4, pageable: 0, bytes_per_step: 38535680, device_ms_per_step: 0.7334, host_blocked_ms_per_step: 0.0474, waited: 0, staged: 0, overlapped: 4 },
  },
};

function row(view: ReturnType<typeof inputPanelView>, testid: string) {
  const found = view?.rows.find((r) => r.testid === testid);
  if (!found) throw new Error(`no row ${testid}`);
  return found;
}

describe("inputPanelView", () => {
  it("shows the DataLoader panel for num_workers=0: input-bound, pageable, non_blocking without effect", () => {
    const v = inputPanelView(WORKERS0);
    expect(v?.title).toBe("Input pipeline · PyTorch DataLoader");
    expect(row(v, "dl-iterator").value).toContain("num_workers=0");
    expect(row(v, "dl-wait").label).toBe("Wait in next() on the host");
    expect(row(v, "dl-wait").value).toBe("147 ms per step (70 % of the step)");
    expect(row(v, "dl-wait").severity).toBe("bad");
    expect(v?.rows.some((r) => r.testid === "dl-exposed")).toBe(false); // nothing hidden: no second row
    expect(row(v, "dl-longest").value).toBe("step 2: 201 ms · step 3: 132 ms");
    expect(row(v, "dl-pinned").severity).toBe("warn");
    expect(row(v, "dl-non-blocking").value).toMatch(/^True, but no effect/);
    expect(row(v, "dl-copies").value).toBe("2 per step · 36.8 MiB per step · 6.21 ms of GPU time per step");
    const main = v?.tables.find((t) => t.testid === "dl-main-process");
    expect(main?.rows.map((r) => r[1])).toEqual(["25.8", "0.235", "121"]);
    expect(v?.notes).toEqual(["Largest ops inside next(): aten::stack 25.8 ms."]);
  });

  it("shows worker processes, pinned memory and overlapped copies for the fixed run", () => {
    const v = inputPanelView(WORKERS8);
    expect(row(v, "dl-iterator").value).toContain("worker processes");
    expect(row(v, "dl-wait").severity).toBe("ok");
    expect(row(v, "dl-pinned").value).toMatch(/^yes/);
    expect(row(v, "dl-non-blocking").value).toMatch(/^True: the copies overlap the step/);
    expect(row(v, "dl-non-blocking").severity).toBe("ok");
    expect(v?.tables).toEqual([]);
  });

  it("separates the host's wait from what left the device idle when the device hid part of it", () => {
    const dl = { ...WORKERS0.dataloader, wait_ms_per_step: 40, wait_pct: 20, exposed_wait_ms_per_step: 4, exposed_wait_pct: 2 };
    const v = inputPanelView({ kind: "dataloader", dataloader: dl });
    expect(row(v, "dl-wait").value).toBe("40 ms per step (20 % of the step)");
    expect(row(v, "dl-exposed").value).toBe("4 ms per step (2 % of the step); the rest overlapped device work");
    expect(row(v, "dl-wait").severity).toBe("ok"); // judged on what the step lost, not on the host's wait
  });

  it("says the host waits when a sync follows each copy (non_blocking=False, 2021 traces)", () => {
    const dl = { ...WORKERS0.dataloader, non_blocking: false, non_blocking_source: "runtime_calls", h2d_copies: { per_step: 2, pageable: 12, waited: 12, host_blocked_ms_per_step: 2.1 } };
    const v = inputPanelView({ kind: "dataloader", dataloader: dl });
    expect(row(v, "dl-non-blocking").value).toBe("False: the host waits for 12 copies to finish (2.1 ms per step) · from a sync after each copy or not");
  });

  it("shows the user's input annotations for a JAX run", () => {
    const v = inputPanelView({
      kind: "annotations",
      annotations: {
        wait_ms_per_step: 140.04,
        wait_pct: 98.57,
        names: [{ name: "input", ms_per_step: 140.04, pct: 98.57, calls_per_step: 1 }],
        longest_waits: [{ name: "input", step: 5, ms: 150.05 }],
        inside: [{ name: "$capture_gpu_profiles.py:199 host_batch", ms_per_step: 137.75 }],
      },
    });
    expect(v?.title).toBe("Input pipeline · your input annotations");
    expect(row(v, "ann-wait").value).toBe("140 ms per step (99 % of the step), on the training thread");
    expect(row(v, "ann-longest").value).toBe("'input' in step 5: 150 ms");
    expect(v?.tables.map((t) => t.testid)).toEqual(["ann-names", "ann-inside"]);
  });

  it("says when nothing feeding the step was seen", () => {
    const v = inputPanelView({ kind: "none", dominant_stage: "unknown", evidence: ["No tf.data iterator events in the profiled steps."] });
    expect(row(v, "input-none").value).toMatch(/^none seen: no tf.data iterators, DataLoader or input annotations/);
    expect(v?.tables).toEqual([]);
  });

  it("keeps the tf.data card for tf.data and for reports without a kind", () => {
    for (const kind of ["tf.data", undefined]) {
      const v = inputPanelView({ kind, dominant_stage: "map", parallelism: 1, prefetch: false, autotune: false, stages_ms: { map: 40 }, evidence: ["x"] });
      expect(v?.title).toBe("Input pipeline");
      expect(row(v, "input-tfdata").value).toBe("Dominant stage: map · parallelism 1 · prefetch no · autotune no");
      expect(v?.tables[0].rows).toEqual([["map", "40"]]);
    }
    expect(inputPanelView(undefined)).toBeNull();
    // a DataLoader kind without its object (a partial report) falls back to the plain card
    expect(inputPanelView({ kind: "dataloader" })?.title).toBe("Input pipeline");
  });
});
