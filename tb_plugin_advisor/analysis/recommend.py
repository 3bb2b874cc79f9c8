"""Advice as a rule engine: each rule is one table entry with a stable id, a condition over the
analysis results, a severity, the evidence that made it fire, and what to write (TF/Keras and JAX).

Rules see a `Facts` object (numbers already computed by the analyses), never the Profile, so they
stay small and each is tested on both sides of its condition (tests/test_recommend.py). Ids are
stable (ARCHITECTURE.md §2): scripts may test for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Optional, Tuple

from tb_plugin_advisor.analysis import rules_cpu, rules_device
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.recommend_pytorch import PYTORCH, PYTORCH_RULES, PYTORCH_SNIPPETS

SEVERITIES = ("high", "medium", "low")


@dataclass
class Facts:
    """What the rules may look at (filled by report.py from the analyses)."""

    framework: str = "unknown"  # tf | jax | pytorch | unknown
    # PyTorch (analysis/torch_signals.py)
    torch_dataloader: str = ""  # "single" (num_workers=0) | "multi" | ""
    torch_pageable_h2d_ms: float = 0.0
    torch_pageable_h2d_pct: float = 0.0
    torch_zero_grad_fills: float = 0.0
    input_wait_event: str = ""  # the host event the step waits in longest (PyTorch: the DataLoader)
    device_kind: str = ""  # "GPU" | "TPU" | "" (CPU only)
    compute_capability: Optional[Tuple[int, int]] = None  # of the GPUs, when known
    breakdown_pct: Dict[str, float] = field(default_factory=dict)
    input_bound: str = "unknown"
    bottleneck: str = "unknown"
    step_count: int = 0
    step_source: str = "none"
    early_step_numbers: List[int] = field(default_factory=list)
    warmup_steps: int = 0  # leading steps left out of the averages
    # tf.data
    dominant_stage: str = "unknown"
    sequential_map: Optional[bool] = None
    map_parallelism: Optional[int] = None
    prefetch: Optional[bool] = None
    cache: Optional[bool] = None
    interleave: Optional[bool] = None
    file_source: Optional[bool] = None  # TFRecord / text / fixed-length record files are read
    autotune: Optional[bool] = None
    # precision / Tensor Cores (shares of device compute time, %)
    precision_pct: Dict[str, float] = field(default_factory=dict)
    precision_verdict: str = "unknown"
    top_fp32_ops: List[str] = field(default_factory=list)
    fp32_matmul_pct: float = 0.0  # eligible matmul/conv time in plain fp32 (no TF32), % of device time
    # kernels
    kernels_per_step: float = 0.0
    mean_kernel_us: float = 0.0
    xla_compiled: bool = False
    transpose_pct: float = 0.0  # layout-transpose kernels, % of device compute time
    transpose_kernels: List[str] = field(default_factory=list)
    eager_ops_per_step: float = 0.0
    compiled_step: bool = False  # a tf.function / jitted function runs inside the steps
    # devices
    gpu_planes: int = 0
    active_devices: int = 0
    cupti_problem: str = ""  # id of the CUPTI problem found in XSpace errors/warnings ("" none)
    cupti_message: str = ""
    # bf16/fp16 on a CPU-only profile (analysis/cpu_precision.py): "" when 16-bit does not dominate
    cpu_16bit_dtype: str = ""
    cpu_16bit_native: Optional[bool] = None  # None: not checked (another host, flags unreadable)
    cpu_16bit_evidence: str = ""
    # input preprocessing ops wherever they run (analysis/preprocessing.py)
    preprocessing_pct: float = 0.0  # CPU time per step, % of step wall time
    preprocessing_input_threads_ms: float = 0.0
    preprocessing_step_threads_ms: float = 0.0
    preprocessing_ops: List[str] = field(default_factory=list)  # "DecodePng 31.4 ms" …
    # host synchronisations per steady step (analysis/host_sync.py)
    host_sync_count: float = 0.0
    host_sync_pct: float = 0.0  # host time in syncs, % of the step
    host_sync_idle_pct: Optional[float] = None  # device idle during the syncs, % of the step
    host_sync_calls: List[str] = field(default_factory=list)  # "cudaStreamSynchronize ×12, 3.1 ms" …
    # launch-bound XLA
    median_kernel_us: float = 0.0
    device_idle_pct: float = 0.0  # 100 − the busiest device's busy share of the steady steps
    host_offload_copy_pct: float = 0.0  # of device copy time, to/from host memory (XLA S(5))


@dataclass(frozen=True)
class Recommendation:
    id: str
    severity: str
    title: str
    message: str
    evidence: str
    snippet: str = ""
    snippet_jax: str = ""
    snippet_label: str = "TF/Keras"  # what `snippet` is written for ("PyTorch" on PyTorch runs)

    def to_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "severity": self.severity,
            "title": self.title,
            "message": self.message,
            "evidence": self.evidence,
            "snippet": self.snippet,
            "snippet_jax": self.snippet_jax,
            "snippet_label": self.snippet_label,
        }


# A rule's check returns (severity, evidence) when it fires, else None.
Check = Callable[[Facts], Optional[Tuple[str, str]]]


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    message: str
    check: Check
    snippet: str = ""
    snippet_jax: str = ""


def _input_severity(f: Facts) -> str:
    return "high" if f.input_bound == "high" else "medium"


def _input_bound(f: Facts) -> bool:
    return f.input_bound in ("high", "moderate")


def _input_pct(f: Facts) -> str:
    return f"input wait {f.breakdown_pct.get('input', 0.0):.0f} % of the step ({f.input_bound})"


# ---------------------------------------------------------------------------------------------------
# Conditions


def _parallel_map(f: Facts):
    if _input_bound(f) and f.dominant_stage == "map" and (f.sequential_map or (f.map_parallelism or 1) <= 1):
        how = "runs sequentially" if f.sequential_map else f"runs with parallelism {f.map_parallelism or 1}"
        return _input_severity(f), f"{_input_pct(f)}; the map stage dominates and {how}."
    return None


def _prefetch(f: Facts):
    if _input_bound(f) and f.prefetch is False:
        return _input_severity(f), f"{_input_pct(f)}; no Prefetch iterator in the pipeline."
    return None


def _cache(f: Facts):
    """Reading files or an expensive map, every epoch again, with nothing cached."""
    reads_files = f.dominant_stage == "source" and f.file_source
    if _input_bound(f) and (reads_files or f.dominant_stage == "map") and f.cache is False:
        severity = "medium" if reads_files else "low"
        return severity, f"{_input_pct(f)}; the {f.dominant_stage} stage dominates and nothing is cached."
    return None


def _interleave(f: Facts):
    if _input_bound(f) and f.dominant_stage == "source" and f.file_source and f.interleave is False:
        return (
            _input_severity(f),
            f"{_input_pct(f)}; reading files dominates and they are read one at a time.",
        )
    return None


def _preprocess_offline(f: Facts):
    parallel = not f.sequential_map and (f.map_parallelism or 0) > 1
    if _input_bound(f) and f.dominant_stage == "map" and parallel:
        return (
            _input_severity(f),
            f"{_input_pct(f)}; the map stage dominates although it already runs with "
            f"parallelism {f.map_parallelism}{' (autotune)' if f.autotune else ''}.",
        )
    return None


def _mixed_precision(f: Facts):
    capability = f.compute_capability
    if f.device_kind != "GPU" or capability is None or capability < th.MIXED_PRECISION_MIN_CC:
        return None
    fp32 = f.precision_pct.get("fp32", 0.0) + f.precision_pct.get("tf32", 0.0)
    device = f.breakdown_pct.get("device_compute", 0.0)
    if fp32 >= th.PRECISION_FP32_SHARE_PCT and device >= th.PRECISION_DEVICE_SHARE_PCT:
        ops = f"; largest fp32 ops: {', '.join(f.top_fp32_ops[:3])}" if f.top_fp32_ops else ""
        severity = "high" if f.bottleneck == "device" else "medium"
        return severity, (
            f"{fp32:.0f} % of device compute runs in fp32/tf32 and device compute is "
            f"{device:.0f} % of the step{ops}."
        )
    return None


def _tf32(f: Facts):
    if f.device_kind != "GPU" or f.compute_capability is None or f.compute_capability < th.TF32_MIN_CC:
        return None
    if f.fp32_matmul_pct >= th.TF32_FP32_MATMUL_SHARE_PCT and f.precision_pct.get("tf32", 0.0) < 1.0:
        major, minor = f.compute_capability
        return "medium", (
            f"{f.fp32_matmul_pct:.0f} % of device time is matmul/convolution in plain fp32 "
            f"on a GPU with TF32 Tensor Cores (compute capability {major}.{minor})."
        )
    return None


def _xla(f: Facts):
    if f.device_kind != "GPU" or f.framework != "tf" or f.xla_compiled or not f.step_count:
        return None
    launch = f.breakdown_pct.get("kernel_launch", 0.0)
    many_small = (
        f.kernels_per_step >= th.XLA_MIN_KERNELS_PER_STEP and f.mean_kernel_us < th.XLA_MAX_MEAN_KERNEL_US
    )
    if many_small or launch >= th.OVERHEAD_MODERATE_PCT:
        severity = "high" if f.bottleneck == "launch" else "medium"
        return severity, (
            f"{f.kernels_per_step:.0f} kernels per step, {f.mean_kernel_us:.1f} µs on average; "
            f"kernel launch {launch:.0f} % of the step; no XLA-compiled kernels."
        )
    return None


def _tf_function(f: Facts):
    if f.eager_ops_per_step >= th.EAGER_OPS_PER_STEP and not f.compiled_step:
        severity = "high" if f.bottleneck in ("host", "launch") else "medium"
        return severity, (
            f"{f.eager_ops_per_step:.0f} ops per step are dispatched one by one from Python "
            "(no compiled step function runs in the steps)."
        )
    return None


def _transpose(f: Facts):
    if f.transpose_pct >= th.TRANSPOSE_SHARE_PCT:
        kernels = f"; e.g. {', '.join(f.transpose_kernels[:2])}" if f.transpose_kernels else ""
        return "medium", f"Layout transposes take {f.transpose_pct:.0f} % of device compute time{kernels}."
    return None


def _no_kernels(f: Facts):
    if f.cupti_problem:
        return "high", f"The profiler reported: {f.cupti_message}"
    if f.gpu_planes and not f.active_devices:
        return "high", (
            f"The profile has {f.gpu_planes} GPU plane{'s' if f.gpu_planes != 1 else ''} but no "
            "kernel or copy on any of them."
        )
    return None


def _warmup(f: Facts):
    if f.early_step_numbers or f.warmup_steps:
        which = (
            f"step {', '.join(str(s) for s in f.early_step_numbers)} is in the profiled range"
            if f.early_step_numbers
            else f"{f.warmup_steps} leading step{'s were' if f.warmup_steps > 1 else ' was'} much slower "
            "than the rest"
        )
        return "low", f"{which}; warm-up (tracing, compilation, allocator growth) distorts the numbers."
    return None


def _few_steps(f: Facts):
    if f.step_source != "none" and 0 < f.step_count < th.FEW_STEPS:
        return "low", f"Only {f.step_count} step{'s' if f.step_count != 1 else ''} in the profile."
    return None


def _step_markers(f: Facts):
    if f.step_source in ("none", "inferred"):
        found = (
            "no steps could be found"
            if f.step_source == "none"
            else "steps were inferred from a repeating pattern"
        )
        return "low", f"No step markers were recorded; {found}."
    return None


# ---------------------------------------------------------------------------------------------------
# The table

RULES: Tuple[Rule, ...] = (
    Rule(
        "input.parallel_map",
        "Parallelise the tf.data map",
        "The step waits for a map that processes one element at a time. Let tf.data run it on several "
        "cores and size the parallelism itself.",
        _parallel_map,
        snippet="dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)",
        snippet_jax="# tf.data feeding JAX: the same fix\n"
        "dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)",
    ),
    Rule(
        "input.prefetch",
        "Prefetch batches while the model trains",
        "Nothing prepares the next batch while the current step runs, so every step waits for the "
        "input pipeline. A prefetch buffer at the end of the pipeline overlaps the two.",
        _prefetch,
        snippet="dataset = dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)",
        snippet_jax="dataset = dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)\n"
        "# and keep one batch on the device ahead of the step, e.g. flax.jax_utils.prefetch_to_device(it, 2)",
    ),
    Rule(
        "input.cache",
        "Cache what does not change between epochs",
        "Reading and decoding the same data every epoch costs the step time. If the decoded data fits in "
        "memory (or on local disk), cache it after the expensive deterministic work and before random "
        "augmentation.",
        _cache,
        snippet="dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache()"
        "  # or .cache('/local/ssd/cache')\n"
        "dataset = dataset.shuffle(10_000).map(augment, num_parallel_calls=tf.data.AUTOTUNE)",
        snippet_jax="dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache()",
    ),
    Rule(
        "input.interleave",
        "Read files in parallel",
        "The pipeline spends its time reading the source one file at a time. Interleave several files "
        "and read them in parallel.",
        _interleave,
        snippet="files = tf.data.Dataset.list_files(pattern, shuffle=True)\n"
        "dataset = files.interleave(tf.data.TFRecordDataset, cycle_length=8,\n"
        "                           num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)",
        snippet_jax="files = tf.data.Dataset.list_files(pattern, shuffle=True)\n"
        "dataset = files.interleave(tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE)",
    ),
    Rule(
        "input.preprocess_offline",
        "Move preprocessing out of the training step",
        "The map already runs in parallel and the step still waits for it: the CPU cannot preprocess "
        "fast enough. Preprocess once offline (store ready-to-train records), use cheaper operations, "
        "or move the augmentation into the model so it runs on the accelerator.",
        _preprocess_offline,
        snippet="# once, offline: dataset.map(expensive_decode).save('/data/preprocessed')\n"
        "dataset = tf.data.Dataset.load('/data/preprocessed').prefetch(tf.data.AUTOTUNE)\n"
        "# or run augmentation on the GPU inside the model:\n"
        "model = keras.Sequential([keras.layers.RandomFlip(), keras.layers.RandomContrast(0.2),\n"
        "                          base_model])",
        snippet_jax="# preprocess once offline and load ready arrays,\n"
        "# or augment on the device inside the jitted step",
    ),
    Rule(
        "precision.mixed",
        "Use mixed precision",
        "Most device time runs in 32-bit. With mixed precision matmuls and convolutions run in 16-bit on "
        "Tensor Cores while variables stay in fp32 (bf16 needs compute capability 8.0+, fp16 7.0+).",
        _mixed_precision,
        snippet="keras.mixed_precision.set_global_policy('mixed_bfloat16')  # 'mixed_float16' before Ampere\n"
        "# with mixed_float16 and a custom loop: optimizer = keras.optimizers.LossScaleOptimizer(optimizer)",
        snippet_jax="# compute in bf16, keep params in fp32\n"
        "logits = model.apply(params, batch.astype(jnp.bfloat16))  # flax: nn.Dense(..., dtype=jnp.bfloat16)",
    ),
    Rule(
        "precision.cpu_16bit",
        "bf16/fp16 on a CPU: check it has native 16-bit math",
        "16-bit math is fast on a CPU only with AMX or AVX512-BF16 (bf16) / AMX-FP16 or AVX512-FP16 "
        "(fp16); elsewhere it is emulated and runs several times slower than float32 (the bundled "
        "sample's bf16 run is 8× slower than its fp32 run). Check the flags with lscpu; without them, "
        "train in float32 on this CPU and keep mixed precision for GPUs/TPUs or CPUs with AMX.",
        rules_cpu.cpu_16bit,
        snippet="# lscpu | grep -o -w -E 'amx_bf16|avx512_bf16|amx_fp16|avx512_fp16'   (empty: emulated)\n"
        "keras.mixed_precision.set_global_policy('float32')  # on CPUs without those flags",
        snippet_jax="# without amx_bf16/avx512_bf16 keep CPU compute in float32:\n"
        "params = jax.tree_util.tree_map(lambda p: p.astype(jnp.float32), params)",
    ),
    Rule(
        "input.preprocessing",
        "Take image decoding and augmentation off the training cores",
        "Decoding, resizing and augmenting inputs uses a large share of the CPU time each step, wherever "
        "it runs (tf.data map threads or inside the step function). Cache the decoded data, preprocess "
        "once offline, use cheaper augmentation, move augmentation to the accelerator, or give the "
        "pipeline more cores.",
        rules_cpu.preprocessing,
        snippet="# decode once and cache before random augmentation:\n"
        "ds = ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache()\n"
        "ds = ds.map(cheap_augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)\n"
        "# or preprocess offline: ds.map(decode_resize).save('/data/ready'); tf.data.Dataset.load(...)\n"
        "# or augment on the accelerator: keras.layers.RandomContrast(0.2) inside the model\n"
        "# more cores for the pipeline: tf.data.experimental.service, or a bigger host",
        snippet_jax="# decode/resize once offline and load arrays; augment on the device inside the jitted\n"
        "# step (jax.random + jax.image.resize), or cache the decoded dataset",
    ),
    Rule(
        "host.sync",
        "Stop the host from waiting on the device every step",
        "The host blocks in synchronisations (stream/device syncs, synchronous copies, `.item()`, "
        "`block_until_ready`, `device_get`, TF `_Recv` on the host) while the device has nothing queued, "
        "so the device idles. Keep values on the device, read metrics every N steps instead of every "
        "step, use async copies from pinned memory, and let the next step be dispatched before the "
        "previous one's results are read.",
        rules_device.host_sync,
        snippet="# log every 100 steps, not every step; keep the running sum on the device\n"
        "if step % 100 == 0:\n    print(float(loss))  # one sync per 100 steps\n"
        "# PyTorch: no loss.item() per step; x.to(device, non_blocking=True) with pin_memory=True",
        snippet_jax="# don't call jax.device_get / .block_until_ready() / float(x) every step:\n"
        "metrics = train_step(state, batch)  # async dispatch\n"
        "if step % 100 == 0:\n    print(jax.device_get(metrics))",
    ),
    Rule(
        "compile.launch_bound_xla",
        "Give the GPU bigger pieces of work per launch",
        "The step runs many tiny XLA kernels and the device waits between them for the host to launch the "
        "next. Jit a larger function (the whole train step, several steps with lax.scan or "
        "lax.fori_loop), use a larger batch, let XLA record command buffers / CUDA graphs, and avoid "
        "host round-trips inside the loop.",
        rules_device.launch_bound_xla,
        snippet="# TF + XLA: compile the whole step\n"
        "@tf.function(jit_compile=True)\ndef train_step(x, y): ...",
        snippet_jax="@jax.jit\ndef train_steps(state, batches):  # several steps per launch\n"
        "    return jax.lax.scan(train_step, state, batches)\n"
        "# XLA command buffers / CUDA graphs (XLA_FLAGS):\n"
        "#   --xla_gpu_enable_command_buffer=FUSION,CUBLAS,CUDNN,CUSTOM_CALL  (command types to capture)\n"
        "#   --xla_gpu_graph_min_graph_size=1  (capture short kernel sequences too)",
    ),
    Rule(
        "device.copy_bound",
        "Keep the step's data in device memory",
        "The device spends most of the step waiting for memory copies. When they move arrays to and from "
        "host memory (host offload), keep the working set in device memory if it fits (smaller batch, "
        "sharding, rematerialisation instead of offload), offload only what is not needed soon, and give "
        "each transfer enough compute to hide behind. On GPUs: pinned host memory and async copies.",
        rules_device.copy_bound,
        snippet="# GPU input: pinned host memory and async copies overlap the transfer with compute\n"
        "# tf.data: dataset.prefetch(tf.data.AUTOTUNE); PyTorch: pin_memory=True, non_blocking=True",
        snippet_jax="# keep arrays on the device: jax.device_put(x, sharding), no memory_kind='pinned_host'\n"
        "# offload only activations that are reused late: jax.checkpoint(..., policy=\n"
        "#   jax.checkpoint_policies.save_and_offload_only_these_names(...))",
    ),
    Rule(
        "precision.tf32",
        "Let fp32 matmuls use TF32 Tensor Cores",
        "On Ampere and newer GPUs fp32 matmuls and convolutions can run on Tensor Cores in TF32 (10-bit "
        "mantissa inputs, fp32 accumulate). These ran in full fp32 on the FMA units: TF32 was turned off.",
        _tf32,
        snippet="tf.config.experimental.enable_tensor_float_32_execution(True)",
        snippet_jax="jax.config.update('jax_default_matmul_precision', 'tensorfloat32')",
    ),
    Rule(
        "compile.xla",
        "Compile the step with XLA",
        "The step launches many small kernels and the GPU waits between them. XLA fuses them into fewer, "
        "larger kernels.",
        _xla,
        snippet="model.compile(optimizer, loss, jit_compile=True)\n"
        "# custom loop: @tf.function(jit_compile=True)\n# def train_step(x, y): ...",
    ),
    Rule(
        "host.tf_function",
        "Compile the whole step instead of running ops one by one",
        "Each op of the step is dispatched from Python separately; the host spends the step launching "
        "work. Tracing the step into one function removes the per-op overhead.",
        _tf_function,
        snippet="@tf.function  # add jit_compile=True to also fuse kernels\ndef train_step(x, y):\n    ...",
        snippet_jax="@jax.jit\ndef train_step(state, batch):\n    ...  # jit the whole step, not each op",
    ),
    Rule(
        "layout.transpose",
        "Avoid layout transposes",
        "The GPU spends a noticeable share of its time converting tensors between NCHW and NHWC. Keep one "
        "layout end to end: channels-last (NHWC) suits Tensor Cores; with mixed precision cuDNN picks "
        "NHWC kernels and the transposes go away.",
        _transpose,
        snippet="keras.config.set_image_data_format('channels_last')  # and build every layer channels-last\n"
        "keras.mixed_precision.set_global_policy('mixed_float16')",
        snippet_jax="# keep activations NHWC: lax.conv_general_dilated(x, w, ..., "
        "dimension_numbers=('NHWC', 'HWIO', 'NHWC'))",
    ),
    Rule(
        "device.no_kernels",
        "The GPU was not traced: fix CUPTI",
        "The profile has GPUs but no device activity, so device compute, Tensor Core and precision numbers "
        "are missing. CUPTI (the CUDA profiling library) was not loaded or was not allowed to read the "
        "GPU counters.",
        _no_kernels,
        snippet="# 1. libcupti must be findable:\n"
        "export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:$LD_LIBRARY_PATH\n"
        "# 2. CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: allow profiling for non-admin users, then reboot\n"
        "echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | "
        "sudo tee /etc/modprobe.d/nvidia-profiling.conf\n"
        "# in Docker: docker run --cap-add=SYS_ADMIN ...   (or --privileged)",
        snippet_jax="# same fix for JAX: libcupti on LD_LIBRARY_PATH (pip: nvidia-cuda-cupti-cu12) and "
        "NVreg_RestrictProfilingToAdminUsers=0",
    ),
    Rule(
        "profile.warmup_step",
        "Profile steady steps, not the first ones",
        "The first steps trace and compile functions and warm up allocators; profiled, they make the step "
        "look slower and differently shaped than it is.",
        _warmup,
        snippet="keras.callbacks.TensorBoard(log_dir, profile_batch=(10, 20))\n"
        "# custom loop: start tf.profiler.experimental.start(logdir) after ~10 steps",
        snippet_jax="# run a few steps first, then: jax.profiler.start_trace(logdir) ... stop_trace()",
    ),
    Rule(
        "profile.few_steps",
        "Profile more steps",
        "With few steps one slow step (a GC pause, an epoch boundary) moves every average; profile at "
        "least 5–10 steady steps.",
        _few_steps,
        snippet="keras.callbacks.TensorBoard(log_dir, profile_batch=(10, 20))",
        snippet_jax="for step in range(10):\n"
        "    with jax.profiler.StepTraceAnnotation('train', step_num=step):\n"
        "        state = train_step(state, next(batches))",
    ),
    Rule(
        "profile.step_markers",
        "Mark the steps in the profile",
        "Without step markers steps must be guessed from repeating patterns (or not found at all). Mark "
        "each step so every tool splits the timeline the same way.",
        _step_markers,
        snippet="for step, (x, y) in enumerate(dataset):\n"
        "    with tf.profiler.experimental.Trace('train', step_num=step, _r=1):\n"
        "        train_step(x, y)",
        snippet_jax="with jax.profiler.StepTraceAnnotation('train', step_num=step):\n"
        "    state = train_step(state, batch)",
    ),
)

RULES += tuple(Rule(id_, title, message, check) for id_, title, message, check in PYTORCH_RULES)

RULE_IDS = tuple(rule.id for rule in RULES)


def recommend(facts: Facts) -> List[Recommendation]:
    """Every rule that fires, most severe first (table order within a severity)."""
    out: List[Recommendation] = []
    for rule in RULES:
        fired = rule.check(facts)
        if fired is None:
            continue
        severity, evidence = fired
        advice = Recommendation(
            rule.id, severity, rule.title, rule.message, evidence, rule.snippet, rule.snippet_jax
        )
        if facts.framework == PYTORCH:  # a TF/JAX snippet does not apply to a PyTorch run
            advice = replace(
                advice, snippet=PYTORCH_SNIPPETS.get(rule.id, ""), snippet_jax="", snippet_label="PyTorch"
            )
        out.append(advice)
    out.sort(key=lambda r: SEVERITIES.index(r.severity))
    return out
