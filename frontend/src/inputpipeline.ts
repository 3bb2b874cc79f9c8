// What the input pipeline card says, by what feeds the step (input_pipeline.kind): a tf.data
// pipeline, a PyTorch DataLoader, or the user's own input annotations (JAX, custom loops). Pure:
// rows of label, value and severity plus tables; the card in views/input.ts only lays them out.

import { formatBytes, formatMs, formatNumber, formatPct } from "./format";
import type { AnnotatedInput, DataLoaderInput, InputPipeline } from "./types";
import type { Severity } from "./verdict";

export interface InputRow {
  label: string;
  value: string;
  severity: Severity;
  testid: string;
}

export interface InputTable {
  title: string;
  testid: string;
  headers: string[];
  rows: string[][];
  numericCols: number[];
}

export interface InputPanelView {
  title: string;
  kind: string;
  rows: InputRow[];
  tables: InputTable[];
  notes: string[];
}

/** Input wait shares as the server's verdict grades them (thresholds.INPUT_HIGH_PCT / _MODERATE_PCT). */
const WAIT_BAD_PCT = 20;
const WAIT_WARN_PCT = 5;

function waitSeverity(pct: number | undefined): Severity {
  if (typeof pct !== "number") return "neutral";
  return pct >= WAIT_BAD_PCT ? "bad" : pct >= WAIT_WARN_PCT ? "warn" : "ok";
}

function yesNo(b: boolean | null | undefined): string {
  return b === true ? "yes" : b === false ? "no" : "unknown";
}

function stepLabel(step: number | null | undefined): string {
  return typeof step === "number" ? `step ${step}` : "a step";
}

export function inputPanelView(ip: InputPipeline | undefined): InputPanelView | null {
  if (!ip) return null;
  if (ip.kind === "dataloader" && ip.dataloader) return dataLoaderView(ip.dataloader);
  if (ip.kind === "annotations" && ip.annotations) return annotationsView(ip.annotations);
  return tfDataView(ip);
}

function tfDataView(ip: InputPipeline): InputPanelView {
  if (ip.kind === "none") {
    return {
      title: "Input pipeline",
      kind: "none",
      rows: [{ label: "Source", value: "none seen: no tf.data iterators, DataLoader or input annotations in the profiled steps", severity: "neutral", testid: "input-none" }],
      tables: [],
      notes: [],
    };
  }
  const stages = Object.entries(ip.stages_ms ?? {}).filter(([, v]) => typeof v === "number" && v > 0);
  return {
    title: "Input pipeline",
    kind: ip.kind ?? "tf.data",
    rows: [
      {
        label: "tf.data",
        value: `Dominant stage: ${ip.dominant_stage ?? "unknown"} · parallelism ${ip.parallelism ?? "unknown"} · prefetch ${yesNo(ip.prefetch)} · autotune ${yesNo(ip.autotune)}`,
        severity: "neutral",
        testid: "input-tfdata",
      },
    ],
    tables: stages.length
      ? [{ title: "", testid: "input-stages", headers: ["Stage", "ms per step"], rows: stages.map(([k, v]) => [k, formatNumber(v)]), numericCols: [1] }]
      : [],
    notes: ip.evidence ?? [],
  };
}

function iteratorValue(dl: DataLoaderInput): string {
  const name = dl.iterator ?? "unknown iterator";
  if (dl.workers === "none") return `${name} · num_workers=0: batches are loaded in the training process`;
  if (dl.workers === "processes") return `${name} · worker processes (num_workers > 0; the count is not in the trace)`;
  return name;
}

function pinnedRow(dl: DataLoaderInput): InputRow {
  const c = dl.h2d_copies ?? {};
  const copies = (c.pinned ?? 0) + (c.pageable ?? 0);
  let value: string;
  let severity: Severity;
  if (dl.pinned_memory === true) {
    value = "yes: batches are copied from page-locked memory";
    severity = "ok";
  } else if (dl.pinned_memory === false) {
    value = "no: batches are copied from pageable memory (pin_memory=False)";
    severity = "warn";
  } else if (copies > 0) {
    value = `partly: ${c.pinned ?? 0} copies from pinned, ${c.pageable ?? 0} from pageable memory`;
    severity = "warn";
  } else {
    value = "unknown: no host-to-device copies in the steps";
    severity = "neutral";
  }
  return { label: "Pinned memory", value, severity, testid: "dl-pinned" };
}

function nonBlockingRow(dl: DataLoaderInput): InputRow | null {
  const c = dl.h2d_copies ?? {};
  if (!((c.waited ?? 0) + (c.staged ?? 0) + (c.overlapped ?? 0))) return null;
  const asked = dl.non_blocking === true ? "True" : dl.non_blocking === false ? "False" : "mixed";
  const source = dl.non_blocking_source === "concrete_inputs" ? "aten::copy_ inputs" : "a sync after each copy or not";
  const blocked = formatMs(c.host_blocked_ms_per_step);
  let value: string;
  let severity: Severity;
  if ((c.waited ?? 0) > 0) {
    value = `${asked}: the host waits for ${c.waited} copies to finish (${blocked} per step)`;
    severity = "warn";
  } else if ((c.staged ?? 0) > 0) {
    value = `${asked}, but no effect: from pageable memory the host waits while each copy is staged (${blocked} per step)`;
    severity = "warn";
  } else {
    value = `${asked}: the copies overlap the step (${blocked} per step in the copy calls)`;
    severity = "ok";
  }
  return { label: "non_blocking", value: `${value} · from ${source}`, severity, testid: "dl-non-blocking" };
}

function dataLoaderView(dl: DataLoaderInput): InputPanelView {
  const c = dl.h2d_copies ?? {};
  const longest = (dl.longest_waits ?? []).map((w) => `${stepLabel(w.step)}: ${formatMs(w.ms)}`).join(" · ");
  // what the step lost: the wait while the device was idle, where the report could measure it
  const exposed = typeof dl.exposed_wait_pct === "number" ? dl.exposed_wait_pct : dl.wait_pct;
  const rows: InputRow[] = [
    { label: "Iterator", value: iteratorValue(dl), severity: dl.workers === "none" ? waitSeverity(exposed) : "neutral", testid: "dl-iterator" },
    {
      label: "Wait in next() on the host",
      value: `${formatMs(dl.wait_ms_per_step)} per step (${formatPct(dl.wait_pct)} of the step)`,
      severity: waitSeverity(exposed),
      testid: "dl-wait",
    },
  ];
  const hidden = (dl.wait_ms_per_step ?? 0) - (dl.exposed_wait_ms_per_step ?? dl.wait_ms_per_step ?? 0);
  if (typeof dl.exposed_wait_ms_per_step === "number" && hidden > 0) {
    rows.push({
      label: "Of it, with the device idle",
      value: `${formatMs(dl.exposed_wait_ms_per_step)} per step (${formatPct(dl.exposed_wait_pct)} of the step); the rest overlapped device work`,
      severity: waitSeverity(exposed),
      testid: "dl-exposed",
    });
  }
  if (longest) rows.push({ label: "Longest waits", value: longest, severity: "neutral", testid: "dl-longest" });
  rows.push(pinnedRow(dl));
  if ((c.per_step ?? 0) > 0) {
    rows.push({
      label: "Host-to-device copies",
      value: `${formatNumber(c.per_step)} per step · ${formatBytes(c.bytes_per_step)} per step · ${formatMs(c.device_ms_per_step)} of GPU time per step`,
      severity: "neutral",
      testid: "dl-copies",
    });
  }
  const nonBlocking = nonBlockingRow(dl);
  if (nonBlocking) rows.push(nonBlocking);
  const tables: InputTable[] = [];
  const inside = dl.main_process_ms_per_step ?? {};
  if (dl.workers === "none") {
    tables.push({
      title: "Inside next(), in the training process",
      testid: "dl-main-process",
      headers: ["Work", "ms per step"],
      rows: [
        ["Collate (stacking samples into a batch)", formatNumber(inside.collate)],
        ["Dataset ops (fetch and transforms)", formatNumber(inside.dataset)],
        ["Dataset Python code (no op recorded)", formatNumber(inside.python)],
      ],
      numericCols: [1],
    });
  }
  const ops = (dl.main_process_ops ?? []).map((o) => `${o.name} ${formatMs(o.ms_per_step)}`);
  const notes = dl.workers === "none" && ops.length ? [`Largest ops inside next(): ${ops.join(", ")}.`] : [];
  return { title: "Input pipeline · PyTorch DataLoader", kind: "dataloader", rows, tables, notes };
}

function annotationsView(a: AnnotatedInput): InputPanelView {
  const longest = (a.longest_waits ?? []).map((w) => `'${w.name ?? ""}' in ${stepLabel(w.step)}: ${formatMs(w.ms)}`).join(" · ");
  const rows: InputRow[] = [
    {
      label: "Wait in input annotations",
      value: `${formatMs(a.wait_ms_per_step)} per step (${formatPct(a.wait_pct)} of the step), on the training thread`,
      severity: waitSeverity(a.wait_pct),
      testid: "ann-wait",
    },
  ];
  if (longest) rows.push({ label: "Longest waits", value: longest, severity: "neutral", testid: "ann-longest" });
  const tables: InputTable[] = [
    {
      title: "Annotations",
      testid: "ann-names",
      headers: ["Annotation", "ms per step", "% of step", "calls per step"],
      rows: (a.names ?? []).map((n) => [n.name, formatNumber(n.ms_per_step), formatPct(n.pct), formatNumber(n.calls_per_step)]),
      numericCols: [1, 2, 3],
    },
  ];
  if ((a.inside ?? []).length) {
    tables.push({
      title: "Inside them",
      testid: "ann-inside",
      headers: ["Event", "ms per step"],
      rows: (a.inside ?? []).map((n) => [n.name, formatNumber(n.ms_per_step)]),
      numericCols: [1],
    });
  }
  return {
    title: "Input pipeline · your input annotations",
    kind: "annotations",
    rows,
    tables,
    notes: ["No tf.data pipeline or DataLoader: the training thread prepares each batch inside these annotations."],
  };
}
