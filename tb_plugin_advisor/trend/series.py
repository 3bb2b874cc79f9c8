"""One capture of a series, summarised from its report dict (`tb-advisor/report/1`): the figures a
trend shows per capture, and the per-step samples its statistics need. Reports are read through
report/document.py, as the diff reads them (older versions or other hosts may lack keys)."""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

from tb_plugin_advisor.analysis.classify.patterns import SIXTEEN_BIT
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES
from tb_plugin_advisor.formatting import rounded
from tb_plugin_advisor.report.document import OpRow, number, read_report

# `…/2026_11_27_09_22_42.672` (PyTorch captures, UTC) or `…/2024_05_01_12_00_00` (TF/JAX sessions):
# the time the capture was taken, as its run is named.
_SESSION_TIME = re.compile(r"(\d{4})_(\d\d)_(\d\d)_(\d\d)_(\d\d)_(\d\d)(?:\.(\d{1,6}))?$")


def capture_time(run: str, mtime_ns: Optional[int]) -> str:
    """ISO 8601 time of a capture: from its session name when it is a timestamp, else its files'
    newest modification time (UTC), else "" (such captures sort first, by name)."""
    last = run.rstrip("/").rsplit("/", 1)[-1]
    m = _SESSION_TIME.search(last)
    if m:
        y, mo, d, h, mi, s, frac = m.groups()
        return f"{y}-{mo}-{d}T{h}:{mi}:{s}" + (f".{frac}" if frac else "") + "Z"
    if mtime_ns:
        moment = _dt.datetime.fromtimestamp(mtime_ns / 1e9, tz=_dt.timezone.utc)
        return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    return ""


def _per_name(rows: List[OpRow]) -> Dict[str, float]:
    out: Dict[str, float] = {}
    for row in rows:
        if row.name:
            out[row.name] = out.get(row.name, 0.0) + (row.time_ms or 0.0)
    return out


@dataclass
class Capture:
    """A capture's trend entry (`summary`, the JSON) and what the statistics read (`samples`…)."""

    run: str
    captured_at: str
    summary: Dict[str, Any]
    samples: np.ndarray  # steady step times, ms
    categories: Dict[str, np.ndarray] = field(default_factory=dict)  # per-step ms per category
    ops: Dict[str, float] = field(default_factory=dict)  # op name → ms per step
    kernels: Dict[str, float] = field(default_factory=dict)  # kernel name → ms per step
    op_categories: Dict[str, str] = field(default_factory=dict)  # op name → breakdown category
    dataloader_wait_ms: Optional[float] = None
    dataloader_iterator: str = ""  # _SingleProcessDataLoaderIter (num_workers=0) or the multi-process one
    framework: str = ""

    @property
    def step_ms(self) -> Optional[float]:
        return number(self.summary.get("step_ms"))


def capture_from_report(run: str, captured_at: str, report: Dict[str, Any]) -> Capture:
    """Summarise one report dict for the trend."""
    doc = read_report(report)
    steps = doc.steps
    times = np.asarray(steps.times, dtype=float)
    median = steps.median_ms
    if median is None and times.size:
        median = float(np.median(times))
    if not times.size:
        median = None
    p10 = float(np.percentile(times, 10)) if times.size else None
    p90 = float(np.percentile(times, 90)) if times.size else None
    steady = steps.steady
    categories = {
        key: np.asarray([s.breakdown_ms.at(key) or 0.0 for s in steady], dtype=float) for key in CATEGORIES
    }
    precision = dict(doc.precision_pct.items())
    sixteen = sum((doc.precision_pct.at(k) or 0.0) for k in SIXTEEN_BIT) if precision else None
    verdict = doc.verdict
    dataloader = doc.input_pipeline.dataloader
    spread = (
        100.0 * (p90 - p10) / median if median and p10 is not None and p90 is not None else None
    )
    summary = {
        "run": run,
        "captured_at": captured_at,
        "hosts": doc.hosts,
        "framework": doc.framework,
        "steps": int(times.size),
        "clock": steps.clock or None,  # device | host | mixed (None: a report from before clocks)
        "step_ms": rounded(median),
        "mean_ms": rounded(steps.mean_ms if times.size else None),
        "p10_ms": rounded(p10),
        "p90_ms": rounded(p90),
        "min_ms": rounded(float(times.min())) if times.size else None,
        "max_ms": rounded(float(times.max())) if times.size else None,
        "spread_pct": rounded(spread, 2),
        "breakdown_ms": {k: rounded(v) for k, v in doc.breakdown_ms.items()},
        "breakdown_pct": {k: rounded(v, 2) for k, v in doc.breakdown_pct.items()},
        "precision_pct": {k: rounded(v, 2) for k, v in precision.items()},
        "sixteen_bit_pct": rounded(sixteen, 2),
        "tensor_cores_pct": rounded(doc.tensor_cores.device_time_pct, 2),
        "mfu_pct": rounded(doc.roofline.mfu_pct, 3),
        "bottleneck": verdict.written("bottleneck"),
        "input_bound": verdict.written("input_bound"),
        "verdict": verdict.summary,
        "warnings": doc.warnings[:5],
        "error": None,
    }
    return Capture(
        run=run,
        captured_at=captured_at,
        summary=summary,
        samples=times,
        categories=categories,
        ops=_per_name(doc.ops),
        kernels=_per_name(doc.kernel_rows),
        op_categories={row.name: row.category for row in doc.ops if row.name},
        dataloader_wait_ms=dataloader.wait_ms_per_step,
        dataloader_iterator=dataloader.iterator,
        framework=doc.framework,
    )


def failed_capture(run: str, captured_at: str, error: str) -> Capture:
    """A capture that could not be read: listed with its error, left out of the statistics."""
    summary = {"run": run, "captured_at": captured_at, "steps": 0, "step_ms": None, "error": error}
    return Capture(run=run, captured_at=captured_at, summary=summary, samples=np.zeros(0))
