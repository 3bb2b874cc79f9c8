// The step-time categories and precision kinds, in display order, with labels and chart colours.
// One table each: tables, charts and the verdict text all read from here. The step-time table is
// tb_plugin_advisor/analysis/step_time/categories.py's, word for word (tests/analysis/step_time/test_categories.py).

export interface CategoryInfo {
  key: string;
  label: string;
  /** What the category means, shown as a tooltip in the breakdown table. */
  help: string;
  light: string;
  dark: string;
}

export const CATEGORIES: readonly CategoryInfo[] = [
  { key: "input", label: "Input wait", help: "waiting for the input pipeline (tf.data get-next, host-to-device input copies)", light: "#d93025", dark: "#f28b82" },
  { key: "device_compute", label: "Device compute", help: "kernels running on the accelerator", light: "#1a73e8", dark: "#8ab4f8" },
  { key: "host_compute", label: "Host compute", help: "ops computed on the host CPU", light: "#188038", dark: "#81c995" },
  { key: "kernel_launch", label: "Kernel launch", help: "host time spent launching kernels", light: "#e37400", dark: "#fcad70" },
  { key: "memcpy", label: "Memory copies", help: "copies between host and device memory", light: "#9334e6", dark: "#c58af9" },
  { key: "communication", label: "Communication", help: "collectives and send/receive between devices or hosts", light: "#007b83", dark: "#78d9ec" },
  { key: "idle", label: "Idle", help: "nothing recorded on the device or host threads", light: "#9aa0a6", dark: "#5f6368" },
  { key: "other", label: "Other host work", help: "recorded time that fits no other category (Python, framework overhead)", light: "#795548", dark: "#bcaaa4" },
];

/** Op-table categories that are not step-breakdown categories (ops beside the step). */
export const OP_ONLY_CATEGORIES: readonly CategoryInfo[] = [
  { key: "input_pipeline", label: "Input pipeline", help: "tf.data work on its own threads, beside the step", light: "#c5221f", dark: "#f6aea9" },
];

export interface PrecisionInfo {
  key: string;
  label: string;
  /** True for the reduced-precision formats that mixed precision aims for. */
  low: boolean;
}

export const PRECISIONS: readonly PrecisionInfo[] = [
  { key: "fp64", label: "FP64", low: false },
  { key: "fp32", label: "FP32", low: false },
  { key: "tf32", label: "TF32", low: true },
  { key: "fp16", label: "FP16", low: true },
  { key: "bf16", label: "BF16", low: true },
  { key: "fp8", label: "FP8", low: true },
  { key: "int8", label: "INT8", low: true },
  { key: "unknown", label: "Unknown", low: false },
];

export function categoryInfo(key: string): CategoryInfo {
  return (
    CATEGORIES.find((c) => c.key === key) ??
    OP_ONLY_CATEGORIES.find((c) => c.key === key) ?? {
      key,
      label: key.replace(/_/g, " "),
      help: "",
      light: "#5f6368",
      dark: "#9aa0a6",
    }
  );
}

export function categoryLabel(key: string): string {
  return categoryInfo(key).label;
}

/** Known keys first in table order, then any extra keys the server added, alphabetically. */
export function orderedKeys(keys: Iterable<string>, table: readonly { key: string }[]): string[] {
  const present = new Set(keys);
  const known = table.map((t) => t.key).filter((k) => present.has(k));
  const extra = [...present].filter((k) => !table.some((t) => t.key === k)).sort();
  return [...known, ...extra];
}
