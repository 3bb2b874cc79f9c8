"""Advice as a rule engine: each rule is one table entry with a stable id, a condition over the
analysis results, a severity, the evidence that made it fire, and what to write (TF/Keras and JAX).

Rules see a `Facts` object (numbers already computed by the analyses), never the Profile, so they
stay small and each is tested on both sides of its condition (tests/test_recommend.py). Ids are
stable (ARCHITECTURE.md §2): scripts may test for them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import List, Tuple

from tb_plugin_advisor.advice.facts import SEVERITIES, Facts, Recommendation, Rule
from tb_plugin_advisor.advice.gains import expected_gain
from tb_plugin_advisor.advice.rules import core as rules_core
from tb_plugin_advisor.advice.rules import cpu as rules_cpu
from tb_plugin_advisor.advice.rules import device as rules_device
from tb_plugin_advisor.advice.rules.mixed_precision import mixed_precision_snippets
from tb_plugin_advisor.advice.rules.pytorch import PYTORCH, PYTORCH_RULES, PYTORCH_SNIPPETS

# ---------------------------------------------------------------------------------------------------
# The table

RULES: Tuple[Rule, ...] = (
    Rule(
        "input.parallel_map",
        "Parallelise the tf.data map",
        "The step waits for a map that processes one element at a time. Let tf.data run it on several "
        "cores and size the parallelism itself.",
        rules_core.parallel_map,
        snippet="dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)",
        snippet_jax="# tf.data feeding JAX: the same fix\n"
        "dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)",
    ),
    Rule(
        "input.prefetch",
        "Prefetch batches while the model trains",
        "Nothing prepares the next batch while the current step runs, so every step waits for the "
        "input pipeline. A prefetch buffer at the end of the pipeline overlaps the two.",
        rules_core.prefetch,
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
        rules_core.cache,
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
        rules_core.interleave,
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
        rules_core.preprocess_offline,
        snippet="# once, offline: dataset.map(expensive_decode).save('/data/preprocessed')\n"
        "dataset = tf.data.Dataset.load('/data/preprocessed').prefetch(tf.data.AUTOTUNE)\n"
        "# or run augmentation on the GPU inside the model:\n"
        "model = keras.Sequential([keras.layers.RandomFlip(), keras.layers.RandomContrast(0.2),\n"
        "                          base_model])",
        snippet_jax="# preprocess once offline and load ready arrays,\n"
        "# or augment on the device inside the jitted step",
    ),
    Rule(
        "input.background_prefetch",
        "Prepare the next batches while the step runs",
        "The training thread makes each batch itself, inside its input annotation, while the device "
        "waits. Prepare batches ahead of the step: in a background thread that also puts them on the "
        "device (flax.jax_utils.prefetch_to_device), or in a pipeline with its own workers and prefetch "
        "(grain, tf.data); and move augmentation into the jitted step so it runs on the accelerator.",
        rules_core.background_prefetch,
        snippet="# tf.data makes batches on its own threads, ahead of the step\n"
        "ds = tf.data.Dataset.from_generator(make_batches, output_signature=spec)  # or read files\n"
        "ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)\n"
        "for batch in ds.as_numpy_iterator():  # JAX; in a TF loop: for batch in ds\n"
        "    state = train_step(state, batch)",
        snippet_jax="import queue, threading\n"
        "def prefetched(batches, size=2):  # make and copy the next batches in a background thread\n"
        "    q = queue.Queue(maxsize=size)\n"
        "    def fill():\n"
        "        for b in batches:\n"
        "            q.put(jax.device_put(b))\n"
        "        q.put(None)\n"
        "    threading.Thread(target=fill, daemon=True).start()\n"
        "    while (b := q.get()) is not None:\n"
        "        yield b\n"
        "# or flax.jax_utils.prefetch_to_device(batches, 2)  (batches with a leading device axis)\n"
        "# or grain.DataLoader(..., worker_count=8) with prefetch: worker processes, free of the GIL\n"
        "# and augment inside the jitted step (jax.random, jax.image.resize) instead of in numpy",
    ),
    Rule(
        "precision.mixed",
        "Use mixed precision",
        "Most device time runs in 32-bit. With mixed precision matmuls and convolutions run in 16-bit on "
        "Tensor Cores while variables stay in fp32 (bf16 needs compute capability 8.0+, fp16 7.0+).",
        rules_core.mixed_precision,
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
        rules_core.tf32,
        snippet="tf.config.experimental.enable_tensor_float_32_execution(True)",
        snippet_jax="jax.config.update('jax_default_matmul_precision', 'tensorfloat32')",
    ),
    Rule(
        "compile.xla",
        "Compile the step with XLA",
        "The step launches many small kernels and the GPU waits between them. XLA fuses them into fewer, "
        "larger kernels.",
        rules_core.xla,
        snippet="model.compile(optimizer, loss, jit_compile=True)\n"
        "# custom loop: @tf.function(jit_compile=True)\n# def train_step(x, y): ...",
    ),
    Rule(
        "host.tf_function",
        "Compile the whole step instead of running ops one by one",
        "Each op of the step is dispatched from Python separately; the host spends the step launching "
        "work. Tracing the step into one function removes the per-op overhead.",
        rules_core.tf_function,
        snippet="@tf.function  # add jit_compile=True to also fuse kernels\ndef train_step(x, y):\n    ...",
        snippet_jax="@jax.jit\ndef train_step(state, batch):\n    ...  # jit the whole step, not each op",
    ),
    Rule(
        "layout.transpose",
        "Avoid layout transposes",
        "The GPU spends a noticeable share of its time converting tensors between NCHW and NHWC. Keep one "
        "layout end to end: channels-last (NHWC) suits Tensor Cores; with mixed precision cuDNN picks "
        "NHWC kernels and the transposes go away.",
        rules_core.transpose,
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
        rules_core.no_kernels,
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
        rules_core.warmup,
        snippet="keras.callbacks.TensorBoard(log_dir, profile_batch=(10, 20))\n"
        "# custom loop: start tf.profiler.experimental.start(logdir) after ~10 steps",
        snippet_jax="# run a few steps first, then: jax.profiler.start_trace(logdir) ... stop_trace()",
    ),
    Rule(
        "profile.few_steps",
        "Profile more steps",
        "With few steps one slow step (a GC pause, an epoch boundary) moves every average; profile at "
        "least 5–10 steady steps.",
        rules_core.few_steps,
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
        rules_core.step_markers,
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
            rule.id, severity, rule.title, rule.message, evidence, rule.snippet, rule.snippet_jax,
            expected_gain=expected_gain(rule.id, facts),
        )
        if facts.framework == PYTORCH:  # a TF/JAX snippet does not apply to a PyTorch run
            advice = replace(
                advice, snippet=PYTORCH_SNIPPETS.get(rule.id, ""), snippet_jax="", snippet_label="PyTorch"
            )
        if rule.id == "precision.mixed":  # fp16 + loss scaling where the GPU has no bf16
            chosen = mixed_precision_snippets(facts.framework, facts.compute_capability)
            if chosen is not None:
                advice = replace(advice, snippet=chosen[0], snippet_jax=chosen[1])
        out.append(advice)
    out.sort(key=rank)
    return out


def rank(advice: Recommendation) -> Tuple[int, float]:
    """Most severe first; within a severity, the largest expected gain first (no estimate last)."""
    gain = advice.expected_gain.middle_ms if advice.expected_gain is not None else -1.0
    return SEVERITIES.index(advice.severity), -gain
