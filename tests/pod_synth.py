"""Multi-host logdirs of synthetic GPU profiles whose step time and input wait are known exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Dict, Sequence, Tuple

from synth import XSpaceBuilder

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
SESSION = "2024_01_01_00_00_00"


def gpu_host(host: str, step_ms: int, input_ms: int, steps: int = 8) -> XSpaceBuilder:
    """`steps` steps of `step_ms`: `input_ms` in get-next, then 5 ms GEMM kernels back to back."""
    b = XSpaceBuilder(hostnames=[host])
    cpu = b.plane("/host:CPU")
    python = cpu.line("python3", id=1)
    launches = cpu.line("tf_Compute/2", id=2)
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    correlation = 0
    for s in range(steps):
        t = T0 + s * (step_ms + 20) * MS
        python.event("train", t, step_ms * MS, stats={"step_num": 10 + s, "_r": 1})
        python.event("IteratorGetNextOp::DoCompute", t, input_ms * MS)
        python.event(
            "EagerLocalExecute: __inference_train_step_5", t + input_ms * MS, (step_ms - input_ms) * MS
        )
        k = t + input_ms * MS
        while k + 5 * MS <= t + step_ms * MS:
            correlation += 1
            launches.event("cudaLaunchKernel", k - 50_000, 20_000, stats={"correlation_id": correlation})
            stream.kernel(
                "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
                k,
                5 * MS,
                tf_op="model/dense/MatMul:MatMul",
                correlation_id=correlation,
            )
            k += 5 * MS
    return b


def write_pod(logdir: Path, run: str, hosts: Dict[str, Tuple[int, int]]) -> Path:
    """`hosts`: name -> (step_ms, input_ms); returns the session directory."""
    session = logdir / run / "plugins" / "profile" / SESSION
    session.mkdir(parents=True, exist_ok=True)
    for name, (step_ms, input_ms) in hosts.items():
        (session / f"{name}.xplane.pb").write_bytes(gpu_host(name, step_ms, input_ms).to_bytes())
    return session


def even_pod(
    count: int, slow: Sequence[str] = (), input_heavy: Sequence[str] = ()
) -> Dict[str, Tuple[int, int]]:
    """`count` hosts of 100 ms steps with 10 ms input; `slow` ones take 130 ms, `input_heavy` wait 40 ms."""
    out = {}
    for i in range(count):
        name = f"worker{i}"
        out[name] = (130 if name in slow else 100, 40 if name in input_heavy else 10)
    return out
