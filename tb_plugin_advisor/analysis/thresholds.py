"""Every number that turns measurements into a verdict, a note or a recommendation — in one place.

The starting points are the built-in Profile tab's own rules (ARCHITECTURE.md §6): input ≥ 20 % of the step
is "highly" and ≥ 5 % "moderately" input-bound; kernel launch / collectives ≥ 15 % high, ≥ 3 %
moderate. Changing a number here changes the product's advice, so each one says why it is what it is
and tests assert the behaviour on both sides of it.
"""

from __future__ import annotations

# ---------------------------------------------------------------------------------------------------
# Verdict

# Share of the step spent waiting for input (percent of step time).
INPUT_HIGH_PCT = 20.0  # the built-in tab's "HIGHLY input-bound"
INPUT_MODERATE_PCT = 5.0  # its "MODERATELY input-bound"

# A non-input overhead category (kernel launch, memcpy, communication) names the bottleneck when its
# share reaches this (the built-in tab's "high" for launch and collectives).
OVERHEAD_HIGH_PCT = 15.0
OVERHEAD_MODERATE_PCT = 3.0

# Device or host compute names the bottleneck when it fills at least this share of the step;
# below it no single category dominates and the run is called "balanced".
COMPUTE_BOUND_PCT = 50.0

# When idle time (nothing recorded at all) is at least this share, the verdict says so: the profile
# misses what the step waits for (an unprofiled thread, a sync, a sleep).
IDLE_NOTE_PCT = 30.0

# ---------------------------------------------------------------------------------------------------
# Steps

# Fewer profiled steps than this makes means and shares noisy (one slow step moves them a lot).
FEW_STEPS = 5
# A leading step this many times slower than the median of the others is warm-up (tracing,
# compilation, allocator growth) and is left out of the per-step breakdown averages.
WARMUP_FACTOR = 2.0
# Step numbers at or below this are warm-up by position (step 0 traces, step 1 often still compiles).
WARMUP_STEP_NUM_MAX = 1

# Inferred steps: a launch name / kernel must repeat at least this often to define steps, and the
# spacing of its occurrences must be this regular (coefficient of variation of the periods).
INFER_MIN_REPEATS = 2
INFER_MAX_PERIOD_CV = 0.5

# Device-clock steps (analysis/step_time/device_clock.py). The last step with device work is cut off
# by the end of the capture when it holds fewer device events than this share of the median of the
# other steps (torch-tb-profiler's 0.8: a step's kernels repeat exactly in a training loop, so a
# fifth missing is the capture's end, not the model).
CUT_OFF_SHARE = 0.8
# Steps move onto the device's clock only where at least this share of the device events running
# during the steps can be tied to a launch inside a step: below it (HTA's trace_compare fixtures tie
# 7–11 %, an MTIA trace 13 %; every H200 capture and GPU corpus trace ties 70–100 %) the device's
# timeline is mostly work the steps cannot be shown to have launched.
DEVICE_CLOCK_MIN_SHARE = 0.5
# What a trace can support (analysis/validity/rules.py). Op attribution and the device-clock steps are
# degraded below DEVICE_CLOCK_MIN_SHARE of device events tied to a launch, and unsupported at none.
# Evidence spans are degraded when the Kineto reader clipped more than this share of the host events
# to make their lines nest (a clipped event is never a span; rounding clips a few dozen of an H200
# capture's 30,000, well under it; a `with_stack` trace whose frames straddle the steps clips more).
CLIPPED_EVENTS_DEGRADED_PCT = 1.0
# Hosts' clocks (report/combine.py): ranks leave a collective together, so the offset between two
# hosts is the most common difference between the ends of their same-named collective kernels,
# counted in bins of CLOCK_OFFSET_BIN_US (the two ranks of HTA's sampled trace end their SendRecv
# kernels within 55 µs) over the last CLOCK_OFFSET_ENDS_KEPT calls per name and host. Hosts whose
# offsets spread more than CLOCK_SKEW_DEGRADED_US apart make timestamps compared across hosts wrong
# by as much.
CLOCK_OFFSET_BIN_US = 100.0
CLOCK_OFFSET_ENDS_KEPT = 1000
CLOCK_SKEW_DEGRADED_US = 500.0
# The steps' note says they were moved to the device's clock when that moved a step's end by more
# than this share of its length (below it the two clocks agree and there is nothing to say).
DEVICE_CLOCK_NOTE_PCT = 1.0

# ---------------------------------------------------------------------------------------------------
# Recommendations

# Input pipeline rules fire when the run is at least moderately input-bound (INPUT_MODERATE_PCT);
# "high" severity when at least INPUT_HIGH_PCT.
# The stage that holds at least this share of the input time is called dominant.
DOMINANT_STAGE_SHARE = 0.4

# Mixed precision: fp32 (incl. tf32) holds at least this share of device compute time, and device
# compute is at least this share of the step (otherwise precision is not what bounds the step).
PRECISION_FP32_SHARE_PCT = 50.0
PRECISION_DEVICE_SHARE_PCT = 30.0
# Mixed precision pays off from Volta (Tensor Cores for fp16) on; bf16 from Ampere.
MIXED_PRECISION_MIN_CC = (7, 0)
TF32_MIN_CC = (8, 0)
# TF32 advice: fp32 (non-tf32) matmul/conv time on an Ampere+ GPU at least this share of device time.
TF32_FP32_MATMUL_SHARE_PCT = 10.0

# XLA: many small kernels — at least this many kernels per step with a mean duration below this —
# or kernel launch at least OVERHEAD_MODERATE_PCT of the step, on a GPU run not compiled with XLA.
XLA_MIN_KERNELS_PER_STEP = 200
XLA_MAX_MEAN_KERNEL_US = 20.0

# tf.function: eager op executions per step on the step's thread, with no compiled function call.
EAGER_OPS_PER_STEP = 50

# Layout transposes: transpose kernels at least this share of device compute time.
TRANSPOSE_SHARE_PCT = 5.0

# ---------------------------------------------------------------------------------------------------
# Tables in the report

TOP_OPS = 200
TOP_KERNELS = 200

# ---------------------------------------------------------------------------------------------------
# bf16/fp16 on a CPU-only profile: the 16-bit type holds at least this share of host compute with a
# known type (the bundled mixed_bfloat16 run: ~90 %; float32 runs: 0 %).
CPU_16BIT_DOMINANT_PCT = 50.0

# Preprocessing ops (decode, resize, colour augmentation …) take at least this much CPU time per step,
# as % of the step's wall time, on a CPU-only run (where they compete with training for the cores) or
# an input-bound one; "high" from PREPROCESSING_HIGH_PCT. The sample: run2/run4 ~90 %, run3 ~18 %.
PREPROCESSING_STEP_PCT = 25.0
PREPROCESSING_HIGH_PCT = 50.0

# Host synchronisations stall the device: the host waits in sync calls for at least HOST_SYNC_STEP_PCT
# of the step and the device is idle for at least HOST_SYNC_IDLE_PCT of the step during those waits
# ("high" from HOST_SYNC_IDLE_HIGH_PCT, the built-in tab's "high" for overheads).
HOST_SYNC_STEP_PCT = 5.0
HOST_SYNC_IDLE_PCT = 5.0
HOST_SYNC_IDLE_HIGH_PCT = 15.0

# Launch-bound JAX/XLA: on a GPU, at least this many kernels per step with a median below this, and
# the device idle (nothing running) for at least this share of the step.
LAUNCH_BOUND_MIN_KERNELS = 200
LAUNCH_BOUND_MAX_MEDIAN_US = 20.0
LAUNCH_BOUND_MIN_IDLE_PCT = 20.0

# ---------------------------------------------------------------------------------------------------
# PyTorch rules (advice/rules/: input_pipeline.py, optimizer.py)

# Copies from pageable host memory at least this share of the step: recommend pin_memory.
TORCH_PAGEABLE_COPY_PCT = 1.0
# A stream/device sync that starts within this long after a copy call, when no aten::copy_ op
# encloses both, is the copy's own wait (PyTorch's non_blocking=False is cudaMemcpyAsync then
# cudaStreamSynchronize, 1–2 µs apart in the corpus traces; unrelated syncs are milliseconds away).
COPY_SYNC_GAP_NS = 50_000

# ---------------------------------------------------------------------------------------------------
# Stragglers (multi-host runs)

# A host straggles when its mean steady step is at least this much longer than the median host's
# (percent): in synchronous data-parallel training every host waits for the slowest, so 10 % on one
# host is 10 % on the whole job, and run-to-run noise of one healthy host stays well below it.
STRAGGLER_STEP_PCT = 10.0
# … or when its input wait is at least this many percentage points of the step above the median
# host's: the same as the "moderately input-bound" line, so a host that alone is input-bound shows up.
STRAGGLER_INPUT_POINTS = INPUT_MODERATE_PCT


# ---------------------------------------------------------------------------------------------------
# Deeper views (kernels, memory, collectives, roofline) and their findings (advice/rules/)

KERNEL_STATS_TOP = 200  # kernel names listed in the report (the rest are counted in the totals)
TINY_KERNEL_US = 10.0  # a launch costs ~5 µs of host time: kernels shorter than ~2 launches are "tiny"
TINY_LAUNCH_SHARE_PCT = 50.0  # tiny kernels dominate when they are at least half of the launches …
TINY_MIN_LAUNCHES_PER_STEP = 100  # … and numerous enough to cost ≥ ~0.5 ms of launch time per step
TINY_MIN_LAUNCHES = 1000  # the same without steps: launches in the whole profile
HOT_KERNEL_PCT = 5.0  # a kernel is hot with at least this share of the host's kernel time
LOW_OCCUPANCY_PCT = 25.0  # below a quarter of the SM's warps, latency is rarely hidden (non-GEMM kernels)

MEMORY_TIMELINE_POINTS = 2000  # points per allocator curve in the report (the tab draws them)
MEMORY_TOP_LIVE = 10  # largest live allocations listed at the peak
MEMORY_LOW_HEADROOM_PCT = 10.0  # peak within 10 % of the device's memory: one larger batch will OOM
MEMORY_FRAGMENTATION_PCT = 30.0  # allocator fragmentation at the peak worth a note

COLLECTIVES_EXPOSED_PCT = 10.0  # exposed communication ≥ 10 % of the step: worth overlapping
COLLECTIVES_EXPOSED_HIGH_PCT = 25.0
COLLECTIVES_SMALL_MESSAGE_BYTES = 1 << 20  # mean message < 1 MiB with many calls: latency-bound
COLLECTIVES_SMALL_MIN_PER_STEP = 20
COLLECTIVES_SKEW_PCT = 20.0  # the slowest rank's collective time ≥ 20 % above the median rank's

ROOFLINE_FAR_BELOW_PCT = 10.0  # an op reaching < 10 % of its roof …
ROOFLINE_MIN_TIME_PCT = 5.0  # … with at least 5 % of the device time is worth a look
ROOFLINE_TOP_OPS = 200
LOW_MFU_PCT = 20.0  # model FLOPs utilisation below this on a GPU/TPU: say so (informational) …
ROOFLINE_MIN_COSTED_PCT = 50.0  # … when at least half the compute time has known FLOPs (else MFU is a
#                                 lower bound only: ResNet convolutions without with_flops, say)
# Sanity of the FLOPs counted. No device runs faster than its fastest peak: the highest of its
# precisions' dense peaks, doubled for 2:4 structured sparsity (an MFU over 100 % of the dominant
# precision's peak alone can be real: fp32 tensors on TF32 Tensor Cores). A rate above it means the
# recorded shapes or FLOP counts are wrong: flagged and left out (no rate, no MFU), not shown as
# 4e47 %. Without a known peak (a CPU, an unknown model) the bound is 1 EFLOP/s per device, 50x the
# fastest accelerator's sparse fp4 peak. A tensor beyond 2^40 elements (4 TiB at fp32, more than any
# device holds) is a broken `Input Dims`, not a shape: the op is left uncosted.
PEAK_SPARSITY_FACTOR = 2.0
MAX_DEVICE_FLOPS = 1e18
MAX_TENSOR_ELEMENTS = 1 << 40
# Matrix kernels (cuBLAS, cuDNN, flash attention) trade occupancy for large tiles on purpose: low
# occupancy there is no finding.
LIBRARY_TILED_FAMILIES = ("gemm", "conv", "attention")
