// JSON of the deeper views (report keys kernel_stats, memory, collectives, roofline; docs/ARCHITECTURE.md §2).
// Every field optional: an older report without them renders without these panels.

import type { EvidenceSpan, Report } from "../types";

export interface Finding {
  id: string;
  severity?: string;
  title?: string;
  message?: string;
  evidence?: string;
  snippet?: string;
  host?: string;
  /** The trace events that show it (docs/ARCHITECTURE.md §2). */
  evidence_spans?: EvidenceSpan[];
}

export interface KernelRow {
  name: string;
  short_name?: string;
  family?: string;
  launches?: number;
  total_ms?: number;
  time_pct?: number;
  mean_us?: number;
  min_us?: number;
  max_us?: number;
  per_step_ms?: number | null;
  launches_per_step?: number | null;
  grid?: number[] | null;
  block?: number[] | null;
  threads_per_block?: number | null;
  registers_per_thread?: number | null;
  shared_memory_bytes?: number | null;
  configs?: number;
  occupancy_pct?: number | null;
  occupancy_source?: string | null;
  theoretical_occupancy_pct?: number | null;
  occupancy_limiter?: string | null;
  tensor_cores?: boolean;
  tensor_core_pct?: number;
  precision?: string;
  hosts?: string[];
}

export interface KernelStats {
  launches?: number;
  distinct?: number;
  total_ms?: number;
  steps?: number;
  launches_per_step?: number | null;
  tiny_launch_pct?: number;
  occupancy_pct?: number | null;
  tensor_core_time_pct?: number;
  kernels?: KernelRow[];
  findings?: Finding[];
}

export interface LiveAllocation {
  bytes?: number;
  requested_bytes?: number | null;
  op?: string | null;
  shape?: string | null;
  dtype?: string | null;
  region?: string | null;
  allocated_ms?: number;
}

export interface Allocator {
  allocator: string;
  host?: string;
  kind?: string;
  device?: string | null;
  records?: number;
  relative?: boolean;
  peak_bytes?: number;
  peak_ms?: number;
  peak_step?: number | null;
  peak_op?: string | null;
  peak_op_source?: string | null;
  allocator_peak_bytes?: number | null;
  reserved_peak_bytes?: number | null;
  fragmentation_pct?: number | null;
  fragmentation_source?: string | null;
  capacity_bytes?: number | null;
  capacity_source?: string | null;
  headroom_bytes?: number | null;
  headroom_pct?: number | null;
  live_at_peak?: LiveAllocation[];
  live_at_peak_count?: number;
  live_at_peak_bytes?: number;
  live_at_peak_by_dtype?: Record<string, number>;
  live_at_peak_unrecorded_bytes?: number | null;
  per_step_peak_bytes?: (number | null)[];
  timeline?: { t_ms?: number[]; in_use_bytes?: number[]; reserved_bytes?: (number | null)[] | null; points?: number; downsampled?: boolean };
}

export interface Memory {
  allocators?: Allocator[];
  main_allocator?: string | null;
  peak_bytes?: number | null;
  findings?: Finding[];
}

export interface RooflineOp {
  name: string;
  host?: string;
  source?: string;
  precision?: string;
  peak_precision?: string | null;
  calls?: number;
  total_ms?: number;
  time_pct?: number | null;
  flops?: number;
  bytes?: number | null;
  intensity?: number | null;
  achieved_tflops?: number | null;
  achieved_gbps?: number | null;
  roof_tflops?: number | null;
  ridge_flops_per_byte?: number | null;
  bound?: string | null;
  roof_pct?: number | null;
}

export interface Roof {
  precision: string;
  peak_tflops: number;
  ridge_flops_per_byte: number;
}

export interface UncostedOp {
  name: string;
  host?: string;
  calls?: number;
  total_ms?: number;
  time_pct?: number | null;
}

export interface Roofline {
  device_model?: string | null;
  device?: string | null;
  device_model_source?: string | null;
  gfx_target?: string | null;
  cpu_only?: boolean;
  peaks_source?: string | null;
  devices?: number;
  dominant_precision?: string | null;
  peak_precision?: string | null;
  peak_tflops?: number | null;
  bandwidth_gbps?: number | null;
  ridge_flops_per_byte?: number | null;
  roofs?: Roof[];
  basis?: string;
  steps?: number;
  step_ms?: number | null;
  model_flops_per_step?: number | null;
  achieved_tflops?: number | null;
  mfu_pct?: number | null;
  per_step?: { step?: number | null; model_flops?: number; ms?: number; achieved_tflops?: number | null; mfu_pct?: number | null }[];
  ops_with_flops?: number;
  sources?: string[];
  costed_time_pct?: number | null;
  mfu_lower_bound?: boolean;
  ops?: RooflineOp[];
  uncosted_ops?: UncostedOp[];
  findings?: Finding[];
}

export interface CollectiveType {
  type: string;
  calls?: number;
  calls_per_step?: number | null;
  per_step_ms?: number | null;
  exposed_per_step_ms?: number | null;
  hidden_pct?: number | null;
  mean_message_bytes?: number | null;
  group_size?: number | null;
  algbw_gbps?: number | null;
  busbw_gbps?: number | null;
}

export interface CollectiveSkew {
  ranks: number;
  slowest: string;
  slowest_compute_per_step_ms?: number;
  median_compute_per_step_ms?: number;
  compute_skew_pct?: number | null;
  collective_spread_per_step_ms?: number;
}

export interface Collectives {
  calls?: number;
  per_step_ms?: number | null;
  exposed_per_step_ms?: number | null;
  exposed_step_pct?: number | null;
  hidden_pct?: number | null;
  devices_with_collectives?: number;
  types?: CollectiveType[];
  per_device?: { device: string; per_step_ms?: number | null; exposed_per_step_ms?: number | null; compute_per_step_ms?: number | null }[];
  skew?: CollectiveSkew | null;
  findings?: Finding[];
}

export type DeepReport = Report & {
  kernel_stats?: KernelStats;
  memory?: Memory;
  collectives?: Collectives;
  roofline?: Roofline;
};
