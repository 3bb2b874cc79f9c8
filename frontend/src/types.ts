// JSON shapes served by the plugin (DESIGN.md §2 plus the keys agreed in TEAM.md).
// Every field is optional on purpose: an older or partial report must still render what it has.

export type Category =
  | "input"
  | "device_compute"
  | "host_compute"
  | "kernel_launch"
  | "memcpy"
  | "communication"
  | "idle"
  | "other";

export type CategoryMap = Partial<Record<string, number>>;

export interface RunInfo {
  run: string;
  hosts?: string[];
  format?: string;
  size_bytes?: number;
  /** "pytorch" / "tensorflow" where the format says; absent or "" when TF or JAX (XSpace) */
  framework?: string;
}

export interface RunsResponse {
  runs: RunInfo[];
}

export interface PerStep {
  step?: number | null;
  start_ms?: number;
  total_ms?: number;
  breakdown_ms?: CategoryMap;
}

export interface Steps {
  count?: number;
  source?: string;
  mean_ms?: number;
  median_ms?: number;
  p90_ms?: number;
  times_ms?: number[];
  numbers?: (number | null)[];
  per_step?: PerStep[];
  notes?: string[];
}

export interface Verdict {
  bottleneck?: string;
  input_bound?: string;
  input_pct?: number;
  summary?: string;
  evidence?: string[];
}

export interface InputPipeline {
  /** What feeds the step: "tf.data" | "dataloader" | "annotations" | "none" (absent in older reports: tf.data). */
  kind?: string;
  dominant_stage?: string;
  stages_ms?: CategoryMap;
  parallelism?: number | null;
  prefetch?: boolean | null;
  autotune?: boolean | null;
  evidence?: string[];
  dataloader?: DataLoaderInput | null;
  annotations?: AnnotatedInput | null;
}

/** A PyTorch DataLoader (input_pipeline.kind "dataloader"); times per steady step. */
export interface DataLoaderInput {
  iterator?: string;
  /** "none" (num_workers=0) | "processes" (num_workers > 0) | "unknown" */
  workers?: string;
  num_workers?: number | null;
  /** the host's time in next(), in the host's ranges of the steps */
  wait_ms_per_step?: number;
  wait_pct?: number;
  /** the part of that wait while no device ran anything (null without a device) */
  exposed_wait_ms_per_step?: number | null;
  exposed_wait_pct?: number | null;
  calls_per_step?: number;
  longest_waits?: { step?: number | null; ms?: number }[];
  main_process_ms_per_step?: { collate?: number; dataset?: number; python?: number };
  main_process_ops?: { name: string; ms_per_step?: number }[];
  pinned_memory?: boolean | null;
  non_blocking?: boolean | null;
  /** "concrete_inputs" (aten::copy_ inputs) | "runtime_calls" (a sync after each copy or not) | "" */
  non_blocking_source?: string;
  h2d_copies?: {
    per_step?: number;
    pinned?: number;
    pageable?: number;
    bytes_per_step?: number;
    device_ms_per_step?: number;
    host_blocked_ms_per_step?: number;
    waited?: number;
    staged?: number;
    overlapped?: number;
  };
  pin_memory_ops_per_step?: number;
  host_alloc?: { calls?: number; ms?: number };
}

/** The user's own input annotations (input_pipeline.kind "annotations"); times per steady step. */
export interface AnnotatedInput {
  wait_ms_per_step?: number;
  wait_pct?: number;
  names?: { name: string; ms_per_step?: number; pct?: number; calls_per_step?: number }[];
  longest_waits?: { name?: string; step?: number | null; ms?: number }[];
  inside?: { name: string; ms_per_step?: number }[];
}

export interface Precision {
  verdict?: string;
  /** "device" (kernel types) or "host" (CPU ops typed by their output tensors). */
  basis?: string;
  summary?: string;
  top_fp32_ops?: { name: string; short_name?: string; time_ms: number }[];
  evidence?: string[];
}

/** A row a person reads by a kernel's or op's name: `short_name` (analysis/classify/short_names.py) is
 * what a table shows, `name` its full form on hover. Reports written before it lack `short_name`. */
export interface Named {
  name: string;
  short_name?: string;
}

export interface TensorCoreKernel {
  name: string;
  short_name?: string;
  uses_tensor_cores?: boolean;
  precision?: string;
  time_ms?: number;
}

export interface EligibleNotUsing {
  /** The op that launched the kernel (TF/XLA annotation, or the PyTorch aten op). */
  op?: string;
  /** The kernel's full name (C++ signature). */
  kernel?: string;
  /** The same without return type, parameters and template arguments. */
  kernel_short?: string;
  time_ms?: number;
  reason?: string;
  reason_id?: string;
}

export interface TensorCores {
  device_time_pct?: number;
  eligible_time_pct?: number;
  kernels?: TensorCoreKernel[];
  eligible_not_using?: EligibleNotUsing[];
  evidence?: string[];
}

export interface Recommendation {
  id: string;
  severity?: string;
  title?: string;
  /** Why and what to change, in a sentence or two. */
  message?: string;
  evidence?: string | string[];
  snippet?: string;
  snippet_jax?: string;
  /** what `snippet` is written for: "TF/Keras" (default) or "PyTorch" */
  snippet_label?: string;
  /** Step time the fix can save: an interval, or null with the reason in `basis`. */
  expected_gain?: ExpectedGain;
  /** The trace events that show it, in the trace file's own coordinates. */
  evidence_spans?: EvidenceSpan[];
}

/** An event of the trace file (docs/ARCHITECTURE.md §2): Kineto's pid/tid/ts/dur as written (µs),
 * XSpace's plane id, line id and start on the profile's time base. */
export interface EvidenceSpan {
  kind: string;
  host: string;
  pid: number | string;
  tid: number | string;
  ts_us: number;
  dur_us: number;
  start_ns: number;
  duration_ns: number;
  name: string;
  short_name?: string;
  step: number | null;
  /** ms from the start of its step (null outside the steps), and from the trace's first event. */
  step_offset_ms?: number | null;
  trace_offset_ms?: number | null;
  thread: string;
  format: "kineto" | "xspace";
}

export interface ExpectedGain {
  ms_per_step: [number, number] | null;
  pct: [number, number] | null;
  basis?: string;
}

export interface OpRow {
  name: string;
  short_name?: string;
  /** The oneDNN op TensorFlow ran it as (`_MklMatMul`); `name` is the familiar op. */
  onednn_op?: string;
  category?: string;
  /** Self time per step: where ops nest (host ops), without the ops inside. */
  time_ms?: number;
  /** Inclusive time per step, where ops nest. */
  total_ms?: number;
  /** The outermost op this one mostly runs inside. */
  within?: string;
  count?: number;
}

export interface Device {
  name?: string;
  kind?: string;
  vendor?: string;
  model?: string;
  compute_capability?: string | number | null;
  gfx_target?: string | null; // AMD: "gfx90a" (no compute capability)
  product?: string | null; // AMD: the product its gfx target, CUs and memory pin down
  core_count?: number | null;
  kernel_count?: number | null;
  busy_pct?: number | null;
}

export interface HostSummary {
  host: string;
  steps?: Steps;
  breakdown_pct?: CategoryMap;
  verdict?: Verdict;
  step_time_ms?: number;
  input_pct?: number;
  device_util_pct?: number;
  straggler?: boolean;
}

export interface StragglerInfo {
  host: string;
  metric: "step_time" | "input";
  value: number;
  median: number;
  excess: number;
  message: string;
}

export interface Report {
  schema?: string;
  run: string;
  hosts?: string[];
  steps?: Steps;
  breakdown_ms?: CategoryMap;
  breakdown_pct?: CategoryMap;
  verdict?: Verdict;
  input_pipeline?: InputPipeline;
  precision_pct?: CategoryMap;
  precision?: Precision;
  tensor_cores?: TensorCores;
  recommendations?: Recommendation[];
  ops?: OpRow[];
  devices?: Device[];
  per_host?: HostSummary[];
  stragglers?: StragglerInfo[];
  peak_memory_bytes?: number | null;
  warnings?: string[];
  validity?: Validity;
}

/** One analysis of the validity matrix (docs/ARCHITECTURE.md §2 `validity`). */
export interface ValidityRow {
  analysis: string;
  status: "supported" | "degraded" | "unsupported" | string;
  reason?: string;
  fix?: string;
  rules?: string[];
}

export interface Validity {
  rows?: ValidityRow[];
}

export interface DiffOp {
  name: string;
  category?: string | null;
  baseline_ms?: number;
  candidate_ms?: number;
  delta_ms?: number;
  status?: string;
}

/** What became of one recommendation of the baseline in the candidate (diff/outcomes.py). */
export interface RecommendationOutcome {
  id?: string;
  acted_on?: boolean;
  predicted_ms_per_step?: [number, number] | null;
  /** Step time saved (baseline − candidate, ms per step). */
  realized_ms_per_step?: number | null;
  target_category?: string | null;
  realized_category_ms_per_step?: number | null;
  verdict?: "within" | "below" | "above" | null;
  together_with?: string[];
}

export interface Diff {
  schema?: string;
  baseline: string;
  candidate: string;
  step_time?: {
    baseline_ms?: number;
    candidate_ms?: number;
    delta_pct?: number;
    significant?: boolean;
    baseline_median_ms?: number;
    candidate_median_ms?: number;
    noise_pct?: number | null;
    baseline_steps?: number;
    candidate_steps?: number;
    p_value?: number | null;
    reason?: string;
    /** The test the step counts chose: mann_whitney_exact | mann_whitney_normal | welch_log | welch | none. */
    test?: string;
    /** significant | no_steps | too_few_steps | noise | below_min_effect | opposite_directions | uniform */
    reason_code?: string | null;
    /** The smallest change the chosen test may call significant, % either way (null: no test). */
    min_effect_pct?: number | null;
  };
  /** Per category: both sides' share of the step, so verdicts can quote a percentage. */
  breakdown?: Record<string, { baseline_pct?: number | null; candidate_pct?: number | null; significant?: boolean }>;
  warnings?: string[];
  breakdown_delta_ms?: CategoryMap;
  precision_delta_pct?: CategoryMap;
  /** Per precision: did its share move beyond noise (diff.py's significance rules)? */
  precision_significant?: Record<string, boolean>;
  tensor_cores_delta_pct?: number;
  ops?: DiffOp[];
  kernels?: DiffOp[];
  verdict?: { baseline?: Verdict; candidate?: Verdict };
  peak_memory_bytes?: { baseline?: number | null; candidate?: number | null; delta_pct?: number | null } | null;
  recommendation_outcomes?: RecommendationOutcome[];
  summary?: string;
}

export interface DoctorSession {
  run?: string;
  path?: string;
  hosts?: string[];
  format?: string;
  visible_in_tensorboard_runs?: boolean;
  has_marker?: boolean;
  step_markers?: string;
  problems?: string[];
  fix?: string;
  fixes?: string[];
  notes?: string[];
  /** "problem": the Advisor's view suffers; "tip": only TensorBoard's run list / Profile tab does. */
  severity?: string;
}

export interface Doctor {
  schema?: string;
  ok?: boolean;
  sessions?: DoctorSession[];
}

/** One capture of a trend series (`tb-advisor/trend/1`, docs/ARCHITECTURE.md §2). */
export interface TrendCapture {
  index?: number;
  run?: string;
  captured_at?: string;
  framework?: string;
  steps?: number;
  step_ms?: number | null;
  mean_ms?: number | null;
  p10_ms?: number | null;
  p90_ms?: number | null;
  spread_pct?: number | null;
  breakdown_pct?: CategoryMap;
  mfu_pct?: number | null;
  bottleneck?: string;
  verdict?: string;
  warnings?: string[];
  /** A capture that could not be read: listed, left out of the statistics. */
  error?: string | null;
}

export interface TrendCause {
  category?: string;
  categories?: { category?: string; before_ms?: number; after_ms?: number; delta_ms?: number; p_value?: number | null }[];
  ops?: { name?: string; kind?: string; before_ms?: number; after_ms?: number; delta_ms?: number }[];
  /** Set when nearly every op moved by the step's own factor: the machine changed, not the code. */
  uniform?: { factor?: number; ops?: number; time_share?: number; reason?: string } | null;
  summary?: string;
}

/** A shift between captures `index - 1` and `index`: the significant ones, a uniform one the machine
 * made (not significant), and, when none is significant, the strongest candidate. */
export interface TrendChangePoint {
  index?: number;
  run?: string;
  previous_run?: string;
  step_ms_before?: number;
  step_ms_after?: number;
  delta_pct?: number;
  direction?: string;
  significant?: boolean;
  /** Beyond the noise, but every op moved by the step's own factor: the machine's, not counted. */
  machine_change?: boolean;
  reason?: string;
  p_value?: number | null;
  p_value_steps?: number | null;
  noise_pct?: number | null;
  captures_before?: number;
  captures_after?: number;
  /** Captures (their `index`) left out of both tests as outliers of their side. */
  outlier_captures?: number[];
  cause?: TrendCause | null;
}

export interface TrendSeries {
  run?: string;
  captures?: TrendCapture[];
  change_points?: TrendChangePoint[];
  noise_pct?: number | null;
  newest_change?: TrendChangePoint | null;
  notes?: string[];
}

export interface Trend {
  schema?: string;
  series?: TrendSeries[];
}
