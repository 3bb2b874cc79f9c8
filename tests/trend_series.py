"""A synthetic series of PyTorch captures with exact truth, for the trend tests: the same training
loop captured `len(drift)` times while the machine's speed drifts (every op and kernel scaled by the
drift factor, steps jittered ±1 %), then captures whose DataLoader wait grows by `regression_ms`
per step (a real input regression: nothing else changes)."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from synth_kineto import BASE_NS, KinetoTrace

# the machine's speed per same-config capture: ±6 %, no trend (real captures on a shared box)
DRIFT = (1.00, 1.05, 0.96, 1.03, 0.98, 1.06, 1.01)
STEP_JITTER = (1.00, 1.01, 0.99, 1.005, 0.995, 1.0, 1.01, 0.99)


def capture(path: Path, factor: float, loader_ms: float, steps: int = 8) -> Path:
    """One capture: per step a DataLoader wait, an H2D copy, conv + relu with kernels, an optimizer."""
    trace = KinetoTrace()
    t = BASE_NS + 1_000_000_000
    s = t
    starts = []
    for n in range(steps):
        j = factor * STEP_JITTER[n % len(STEP_JITTER)]
        loader = int(loader_ms * 1e6)
        conv = int(5_000_000 * j)
        relu = int(1_000_000 * j)
        opt = int(2_000_000 * j)
        dur = loader + 300_000 + conv + relu + opt + 400_000
        starts.append((s, dur))
        trace.step(n + 1, s, dur - 1_000)
        trace.dataloader(s + 10_000, loader, 0)
        c = s + loader + 50_000
        trace.memcpy("HtoD", c, 200_000, 4 * 1024**2, launch_start_ns=c)
        c += 300_000
        trace.op("aten::conv2d", c, conv, ["float", "float", "float"],
                 [[32, 3, 224, 224], [64, 3, 7, 7], [64]])
        trace.launch("void implicit_convolve_sgemm<float>(int)", c + 10_000, 20_000, c + 50_000,
                     conv - 100_000)
        c += conv
        trace.op("aten::relu", c, relu, ["float"], [[32, 64, 112, 112]])
        trace.launch("void at::native::vectorized_elementwise_kernel<4>(int)", c + 10_000, 10_000,
                     c + 30_000, relu - 60_000)
        c += relu
        trace.op("aten::add_", c, opt // 2, ["float"], [[64]])
        trace.op("aten::mul_", c + opt // 2, opt // 2, ["float"], [[64]])
        trace.annotation("Optimizer.step#SGD.step", c, opt)
        s += dur
    trace.span(t, s - t)
    return trace.write(path)


def write_series(directory: Path, drift: Sequence[float] = DRIFT, regressed: int = 1,
                 loader_ms: float = 1.0, regression_ms: float = 7.0) -> Path:
    """`len(drift)` same-config captures, then `regressed` with the slower DataLoader, one directory."""
    directory.mkdir(parents=True, exist_ok=True)
    factors = list(drift) + [drift[-1]] * regressed
    for i, f in enumerate(factors):
        slow = i >= len(drift)
        capture(directory / f"w0.{1_700_000_000_000 + 60_000 * i}.pt.trace.json", f,
                loader_ms + (regression_ms if slow else 0.0))
    return directory
