"""Report dicts (`tb-advisor/report/1`) built by hand, with known per-step numbers, for the diff tests."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

CATEGORIES = (
    "input",
    "device_compute",
    "host_compute",
    "kernel_launch",
    "memcpy",
    "communication",
    "idle",
    "other",
)


def jitter(n: int, amplitude: float) -> List[float]:
    """A deterministic, zero-mean wobble: +a, −a, +a/2, −a/2, … (exactly zero sum for even n)."""
    out = []
    for i in range(n):
        size = amplitude if (i // 2) % 2 == 0 else amplitude / 2
        out.append(size if i % 2 == 0 else -size)
    return out


def make_report(
    run: str,
    per_step: Sequence[Dict[str, float]],
    verdict: Optional[Dict] = None,
    precision_pct: Optional[Dict[str, float]] = None,
    tensor_core_pct: Optional[float] = None,
    ops: Optional[List[Dict]] = None,
    kernels: Optional[List[Dict]] = None,
    peak_memory_bytes: Optional[int] = None,
    host: str = "host0",
) -> Dict:
    """A report whose steps are `per_step` (each a {category: ms} dict) and whose means follow from them."""
    n = len(per_step)
    totals = [sum(step.values()) for step in per_step]
    breakdown = {c: (sum(s.get(c, 0.0) for s in per_step) / n if n else 0.0) for c in CATEGORIES}
    mean = sum(totals) / n if n else 0.0
    ordered = sorted(totals)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2 if n else 0.0
    report = {
        "schema": "tb-advisor/report/1",
        "run": run,
        "hosts": [host],
        "steps": {
            "count": n,
            "source": "root_marker",
            "mean_ms": mean,
            "median_ms": median,
            "p90_ms": ordered[int(0.9 * (n - 1))] if n else 0.0,
            "times_ms": totals,
            "numbers": list(range(1, n + 1)),
            "per_step": [
                {
                    "step": i + 1,
                    "start_ms": sum(totals[:i]),
                    "total_ms": totals[i],
                    "breakdown_ms": {c: float(step.get(c, 0.0)) for c in CATEGORIES},
                }
                for i, step in enumerate(per_step)
            ],
            "notes": [],
        },
        "breakdown_ms": breakdown,
        "breakdown_pct": {c: (100.0 * v / mean if mean else 0.0) for c, v in breakdown.items()},
        "verdict": verdict
        or {"bottleneck": "unknown", "input_bound": "unknown", "input_pct": 0.0, "summary": ""},
        "precision_pct": precision_pct or {},
        "tensor_cores": {
            "device_time_pct": tensor_core_pct,
            "eligible_time_pct": 0.0,
            "kernels": kernels or [],
            "eligible_not_using": [],
        },
        "recommendations": [],
        "ops": ops or [],
        "kernels": [dict(k, category="device_compute") for k in kernels or []],
        "peak_memory_bytes": peak_memory_bytes,
        "devices": [],
        "warnings": [],
    }
    return report


def steps(n: int, wobble: float = 0.0, wobble_category: str = "device_compute", **mean_ms: float):
    """n steps with the given per-category ms, `wobble` ms of zero-mean jitter on one category."""
    noise = jitter(n, wobble)
    out = []
    for i in range(n):
        step = dict(mean_ms)
        step[wobble_category] = step.get(wobble_category, 0.0) + noise[i]
        out.append(step)
    return out


INPUT_HIGH = {"bottleneck": "input", "input_bound": "high", "input_pct": 40.0, "summary": "input-bound"}
DEVICE = {"bottleneck": "device", "input_bound": "low", "input_pct": 1.0, "summary": "device-bound"}


# The builder's own checks: the diff tests' exact numbers rest on it.


def test_jitter_has_zero_mean_and_the_stated_amplitude():
    wobble = jitter(20, 4.0)
    assert abs(sum(wobble)) < 1e-12
    assert max(wobble) == 4.0 and min(wobble) == -4.0


def test_make_report_means_follow_from_the_steps():
    report = make_report("r", steps(10, wobble=2.0, input=30.0, device_compute=70.0))
    assert abs(report["steps"]["mean_ms"] - 100.0) < 1e-9
    assert abs(report["breakdown_ms"]["input"] - 30.0) < 1e-9
    assert abs(sum(report["breakdown_pct"].values()) - 100.0) < 1e-9
    assert len(report["steps"]["per_step"]) == 10
    assert report["steps"]["times_ms"][0] == 102.0
