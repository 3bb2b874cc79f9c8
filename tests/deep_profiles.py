"""A synthetic multi-stream GPU training profile for the deeper views, shared by the report, API and
browser tests: every number it leads to is known by construction (see the constants).

Per step (STEP_MS long, STEPS of them): a bf16 GEMM with CUPTI's reported occupancy, an elementwise
kernel without one (occupancy computed), TINY_PER_STEP tiny kernels, and allocator records on a
host thread that peak in step PEAK_STEP.
"""

from __future__ import annotations

from pathlib import Path

from synth import XSpaceBuilder

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
US = 1_000
MiB = 1 << 20

STEPS = 5
STEP_MS = 20
PEAK_STEP = 3  # step_num whose allocation is the largest
GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"
GEMM_DETAILS = "regs:168 static_shared:0 dynamic_shared:73728 grid:40,8,1 block:256,1,1 occ_pct:12.5"
ELEMENTWISE = "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)"
ELEMENTWISE_DETAILS = "regs:64 static_shared:0 dynamic_shared:0 grid:1024,1,1 block:256,1,1"
TINY = "void at::native::unrolled_elementwise_kernel<at::native::FillFunctor<float>>(int)"
TINY_DETAILS = "regs:16 static_shared:0 dynamic_shared:0 grid:1,1,1 block:128,1,1"
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
REDUCE_SCATTER = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"
# per step on NCCL's stream: a reduce-scatter [1, 3) ms hidden under the GEMM, an all-reduce [7, 10) ms
# after every compute kernel ended: 5 ms of collectives, 3 ms exposed (15 % of the step), 40 % hidden
COLLECTIVE_MS, EXPOSED_MS = 5.0, 3.0
TINY_PER_STEP = 120  # ≥ findings.TINY_MIN_LAUNCHES_PER_STEP: kernels.tiny_launches fires
# XLA cost stats (roofline): on the GEMM's events, on the elementwise kernel's metadata. On the A100
# (bf16 312 TFLOP/s, fp32 19.5 TFLOP/s, 1555 GB/s) the GEMM reaches 156 TFLOP/s (50 % of its
# compute roof), the elementwise kernel 120 GB/s (7.7 % of its memory roof: a finding, at 9.7 % of
# device time).
GEMM_FLOPS, GEMM_MODEL_FLOPS, GEMM_BYTES = 624e9, 468e9, 1e9
ELEMENTWISE_FLOPS, ELEMENTWISE_BYTES = 1e8, 1.2e8


def gpu_training_profile(host: str = "gpu-host") -> XSpaceBuilder:
    b = XSpaceBuilder(hostnames=[host])
    cpu = b.plane("/host:CPU")
    python = cpu.line("python3", id=1)
    compute = cpu.line("tf_Compute", id=2)
    gpu = b.gpu_plane(0, memory_size=16 << 30)
    stream = gpu.line("Stream #7(Kernel)", id=7)
    nccl = gpu.line("Stream #13(Kernel)", id=13)
    for s in range(STEPS):
        t = T0 + s * STEP_MS * MS
        python.event("train", t, STEP_MS * MS - 1, stats={"step_num": s + 1, "_r": 1})
        k = t + 200 * US
        stream.kernel(GEMM, k, 4 * MS, details=GEMM_DETAILS, tf_op="model/dense/MatMul:MatMul",
                      stats={"flops": GEMM_FLOPS, "model_flops": GEMM_MODEL_FLOPS,
                             "bytes_accessed": GEMM_BYTES})
        k += 4 * MS + 10 * US
        stream.event(ELEMENTWISE, k, 1 * MS, ref_stats={"kernel_details": ELEMENTWISE_DETAILS,
                                                        "tf_op": "model/add:AddV2"},
                     metadata_stats={"flops": ELEMENTWISE_FLOPS, "bytes_accessed": ELEMENTWISE_BYTES})
        k += 1 * MS + 10 * US
        for _ in range(TINY_PER_STEP):
            stream.kernel(TINY, k, 3 * US, details=TINY_DETAILS, tf_op="model/fill:Fill")
            k += 8 * US
        nccl.kernel(REDUCE_SCATTER, t + 1 * MS, 2 * MS, details=TINY_DETAILS,
                    stats={"in_msg_nelems": 32 * MiB, "dtype": "BFloat16", "group_size": 8})
        nccl.kernel(ALL_REDUCE, t + 7 * MS, 3 * MS, details=TINY_DETAILS,
                    stats={"in_msg_nelems": 16 * MiB, "dtype": "BFloat16", "group_size": 8})
        size = (900 if s + 1 == PEAK_STEP else 300) * MiB
        for offset_ms, sign in ((1, 1), (12, -1)):
            compute.event(
                "MemoryAllocation" if sign > 0 else "MemoryDeallocation", t + offset_ms * MS, 0,
                stats={"allocator_name": "GPU_0_bfc", "bytes_allocated": size if sign > 0 else 0,
                       "allocation_bytes": size, "addr": 4096 * (s + 1), "data_type": 14,
                       "tf_op": "model/dense/MatMul", "shape": "[64,4096,1024]", "region_type": "output"})
    return b


def write_gpu_run(logdir: Path, run: str = "gpu_synthetic", host: str = "gpu-host") -> str:
    """Write the profile as `<logdir>/<run>/plugins/profile/2024_01_01_00_00_00/<host>.xplane.pb`;
    returns the run name the Advisor lists."""
    session = "2024_01_01_00_00_00"
    target = Path(logdir) / run / "plugins" / "profile" / session / f"{host}.xplane.pb"
    gpu_training_profile(host).write(target)
    return f"{run}/{session}"


def deep_section(profile, key: str, steps=None):
    """One deeper view of `profile` as the report shows it (its JSON, ending with its findings):
    the analysis, then the advice engine's findings over it (report/sections.py's table)."""
    from tb_plugin_advisor.report.combine import Found

    section = _section(key)
    view = getattr(_views(profile, steps), key)
    return Found(view, section.findings(view)).to_json()


def deep_findings(profile, key: str):
    """The findings (Finding objects) the advice engine draws from one deeper view of `profile`."""
    return _section(key).findings(getattr(_views(profile), key))


def _section(key: str):
    from tb_plugin_advisor.report.sections import SECTIONS

    return next(s for s in SECTIONS if s.key == key)


def _views(profile, steps=None):
    from tb_plugin_advisor.analysis.step_time.steps import find_steps
    from tb_plugin_advisor.report.analyze import analyze_deep

    return analyze_deep(profile, find_steps(profile) if steps is None else steps)
