"""Rules about how the accelerator spends the step, or is kept from it: the host stalling it in
synchronisations (`host.sync`), memory copies on the critical path (`device.copy_bound`), layout
transposes (`layout.transpose`), and a device the profile did not trace at all (`device.no_kernels`).
Each check reads only `Facts`."""

from __future__ import annotations

from typing import Iterator, Tuple

from tb_plugin_advisor.advice import gains
from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rule import Fired, Outcome, Rule, Snippets, category_fell
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import fixed, format_pct


def host_sync(f: Facts) -> Iterator[Fired]:
    if not f.device_kind or f.host_sync_pct < th.HOST_SYNC_STEP_PCT:
        return
    if f.host_sync_idle_pct is None or f.host_sync_idle_pct < th.HOST_SYNC_IDLE_PCT:
        return
    severity = "high" if f.host_sync_idle_pct >= th.HOST_SYNC_IDLE_HIGH_PCT else "medium"
    calls = ", ".join(f.host_sync_calls[:4])
    yield Fired(severity, (
        f"{fixed(f.host_sync_count, 0)} host synchronisations per step take {format_pct(f.host_sync_pct)} of "
        f"the step; the device is idle for {format_pct(f.host_sync_idle_pct)} of the step while the host "
        f"waits ({calls})."
    ))


HOST_SYNC = Rule(
    id="host.sync",
    title="Stop the host from waiting on the device every step",
    message="The host blocks in synchronisations (stream/device syncs, synchronous copies, `.item()`, "
    "`block_until_ready`, `device_get`, TF `_Recv` on the host) while the device has nothing queued, "
    "so the device idles. Keep values on the device, read metrics every N steps instead of every "
    "step, use async copies from pinned memory, and let the next step be dispatched before the "
    "previous one's results are read.",
    check=host_sync,
    gain=gains.host_sync_idle,
    evidence=("host_sync", "worst_step"),
    snippets=Snippets(
        tf="# log every 100 steps, not every step; keep the running sum on the device\n"
        "if step % 100 == 0:\n    print(float(loss))  # one sync per 100 steps\n"
        "# PyTorch: no loss.item() per step; x.to(device, non_blocking=True) with pin_memory=True",
        jax="# don't call jax.device_get / .block_until_ready() / float(x) every step:\n"
        "metrics = train_step(state, batch)  # async dispatch\n"
        "if step % 100 == 0:\n    print(jax.device_get(metrics))",
        pytorch="# keep values on the device inside the step; read them every N steps\n"
        "running_loss += loss.detach()          # not loss.item()\n"
        "if step % 100 == 0:\n"
        "    print(running_loss.item() / 100); running_loss.zero_()",
    ),
    outcome=category_fell("idle"),
)


def copy_bound(f: Facts) -> Iterator[Fired]:
    """Device copies on the critical path; host offload named when the copies move host memory."""
    if f.bottleneck != "memcpy":
        return
    pct = f.breakdown_pct.get("memcpy", 0.0)
    severity = "high" if pct >= th.OVERHEAD_HIGH_PCT else "medium"
    offload = (
        f"; {format_pct(f.host_offload_copy_pct)} of the copy time moves arrays between device and host "
        "memory (XLA copy-start/copy-done with memory space S(5): host offload)"
        if f.host_offload_copy_pct >= 50.0 else ""
    )
    yield Fired(severity, f"Device memory copies take {format_pct(pct)} of the step{offload}.")


COPY_BOUND = Rule(
    id="device.copy_bound",
    title="Keep the step's data in device memory",
    message="The device spends most of the step waiting for memory copies. When they move arrays to "
    "and from host memory (host offload), keep the working set in device memory if it fits (smaller "
    "batch, sharding, rematerialisation instead of offload), offload only what is not needed soon, and "
    "give each transfer enough compute to hide behind. On GPUs: pinned host memory and async copies.",
    check=copy_bound,
    gain=gains.exposed_copies,
    evidence=("longest_copy", "worst_step"),
    snippets=Snippets(
        tf="# GPU input: pinned host memory and async copies overlap the transfer with compute\n"
        "# tf.data: dataset.prefetch(tf.data.AUTOTUNE); PyTorch: pin_memory=True, non_blocking=True",
        jax="# keep arrays on the device: jax.device_put(x, sharding), no memory_kind='pinned_host'\n"
        "# offload only activations that are reused late: jax.checkpoint(..., policy=\n"
        "#   jax.checkpoint_policies.save_and_offload_only_these_names(...))",
        pytorch="# keep tensors on the device across steps; copy each batch once, pinned and asynchronously\n"
        "loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True)\n"
        "x = x.to(device, non_blocking=True)   # and avoid .cpu()/.numpy() inside the step",
    ),
    outcome=category_fell("memcpy"),
)


def transpose(f: Facts) -> Iterator[Fired]:
    if f.transpose_pct >= th.TRANSPOSE_SHARE_PCT:
        kernels = f"; e.g. {', '.join(f.transpose_kernels[:2])}" if f.transpose_kernels else ""
        share = format_pct(f.transpose_pct)
        yield Fired("medium", f"Layout transposes take {share} of device compute time{kernels}.")


TRANSPOSE = Rule(
    id="layout.transpose",
    title="Avoid layout transposes",
    message="The GPU spends a noticeable share of its time converting tensors between NCHW and NHWC. "
    "Keep one layout end to end: channels-last (NHWC) suits Tensor Cores; with mixed precision cuDNN "
    "picks NHWC kernels and the transposes go away.",
    check=transpose,
    gain=gains.transposes,
    evidence=("transpose_kernel",),  # the transposes themselves, never another kernel beside them
    snippets=Snippets(
        tf="keras.config.set_image_data_format('channels_last')  # and build every layer channels-last\n"
        "keras.mixed_precision.set_global_policy('mixed_float16')",
        jax="# keep activations NHWC: lax.conv_general_dilated(x, w, ..., "
        "dimension_numbers=('NHWC', 'HWIO', 'NHWC'))",
        pytorch="model = model.to(memory_format=torch.channels_last)\n"
        "x = x.to(memory_format=torch.channels_last)  # each input batch too",
    ),
    # acted on when the transposes no longer fire it: their share alone is no signal
    outcome=Outcome("device_compute"),
)


def no_kernels(f: Facts) -> Iterator[Fired]:
    if f.cupti_problem:
        yield Fired("high", f"The profiler reported: {f.cupti_message}")
    elif f.gpu_planes and not f.active_devices:
        yield Fired("high", (
            f"The profile has {f.gpu_planes} GPU plane{'s' if f.gpu_planes != 1 else ''} but no "
            "kernel or copy on any of them."
        ))


NO_KERNELS = Rule(
    id="device.no_kernels",
    title="The GPU was not traced: fix CUPTI",
    message="The profile has GPUs but no device activity, so device compute, Tensor Core and precision "
    "numbers are missing. CUPTI (the CUDA profiling library) was not loaded or was not allowed to read "
    "the GPU counters.",
    check=no_kernels,
    gain=gains.measurement_only,
    evidence=("worst_step",),
    snippets=Snippets(
        tf="# 1. libcupti must be findable:\n"
        "export LD_LIBRARY_PATH=/usr/local/cuda/extras/CUPTI/lib64:$LD_LIBRARY_PATH\n"
        "# 2. CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: allow profiling for non-admin users, then reboot\n"
        "echo 'options nvidia NVreg_RestrictProfilingToAdminUsers=0' | "
        "sudo tee /etc/modprobe.d/nvidia-profiling.conf\n"
        "# in Docker: docker run --cap-add=SYS_ADMIN ...   (or --privileged)",
        jax="# same fix for JAX: libcupti on LD_LIBRARY_PATH (pip: nvidia-cuda-cupti-cu12) and "
        "NVreg_RestrictProfilingToAdminUsers=0",
        pytorch="with torch.profiler.profile(\n"
        "        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],\n"
        "        schedule=torch.profiler.schedule(wait=1, warmup=2, active=5),\n"
        "        on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir)) as prof:\n"
        "    ...  # and libcupti must load: pip install nvidia-cuda-cupti-cu12",
    ),
)

# Registration order is the tie order among advice of equal severity and gain (advice/registry.py).
RULES: Tuple[Rule[Facts], ...] = (HOST_SYNC, COPY_BOUND, TRANSPOSE, NO_KERNELS)
