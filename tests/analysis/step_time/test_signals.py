"""Device signals on synthetic profiles whose truth is known exactly."""

from __future__ import annotations

from synth import XSpaceBuilder

from tb_plugin_advisor.analysis.step_time.breakdown import compute_breakdown
from tb_plugin_advisor.analysis.step_time.signals import collect_signals
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
TO_HOST = "%copy-start.3 = (bf16[8,128]{1,0:T(8,128)S(5)}, u32[]) copy-start(bf16[8,128]{1,0:T(8,128)} %p)"
ON_DEVICE = "%copy-start.4 = (bf16[8,128]{1,0:T(8,128)}, u32[]) copy-start(bf16[8,128]{1,0:T(8,128)} %q)"
GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"


def test_host_offload_share_counts_the_copies_inside_the_steps_only():
    """Per step: 2 ms of copies to host memory, 6 ms of copies on the device, 10 ms of GEMM; after the
    last step one more copy to host memory (50 ms) that no step holds: 2 / (2 + 6) = 25 %."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    stream = b.gpu_plane(0, model="NVIDIA A100-SXM4-40GB", compute_capability=(8, 0),
                         vendor="Nvidia").line("Stream #7(Kernel)", id=7)
    step_ns = 30 * MS
    for step in range(6):
        t = T0 + step * step_ns
        python.event("train", t, step_ns - 1000, stats={"step_num": step, "_r": 1})
        for name, ms in ((GEMM, 10), (TO_HOST, 2), (ON_DEVICE, 6)):
            stream.kernel(name, t + MS, ms * MS)
            t += ms * MS + 1000
    stream.kernel(TO_HOST, T0 + 6 * step_ns + 5 * MS, 50 * MS)
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    steps = find_steps(profile)
    signals = collect_signals(profile, steps, compute_breakdown(profile, steps))
    assert abs(signals.host_offload_copy_pct - 25.0) <= 1e-9
