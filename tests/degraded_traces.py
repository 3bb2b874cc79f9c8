"""Real Kineto traces degraded on purpose: each function removes or shifts exactly what one validity
rule needs (analysis/validity/rules.py) and writes the edited trace to a new directory, so a test can
check that the report stops claiming what the trace no longer supports.

Each edit works on the trace's own JSON, as a user's capture settings would have left it."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Callable, Dict, List

Trace = Dict[str, Any]


def load_trace(path: Path) -> Trace:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        return json.load(f)


def write_trace(trace: Trace, directory: Path, name: str) -> Path:
    """The trace as `<directory>/<name>` (a run directory of its own)."""
    directory.mkdir(parents=True, exist_ok=True)
    out = directory / name
    with gzip.open(out, "wt") as f:
        json.dump(trace, f)
    return out


def _events(trace: Trace) -> List[Dict[str, Any]]:
    return trace["traceEvents"]


def without_correlation(trace: Trace) -> Trace:
    """No launch correlation: the flow events and every `correlation` / `External id` tie between a
    runtime call and its kernel, copy or memset go (a trace whose launches cannot be matched)."""
    kept = []
    for e in _events(trace):
        if e.get("cat") in ("ac2g",) or e.get("ph") in ("s", "f") and e.get("cat") == "ac2g":
            continue
        args = e.get("args")
        if isinstance(args, dict) and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime",
                                                        "cuda_driver"):
            args.pop("correlation", None)
            args.pop("External id", None)
        kept.append(e)
    trace["traceEvents"] = kept
    return trace


def without_input_dims(trace: Trace) -> Trace:
    """Captured without `record_shapes=True`: no op carries `Input Dims` or `Input type`."""
    for e in _events(trace):
        args = e.get("args")
        if isinstance(args, dict):
            for key in ("Input Dims", "Input type", "Input Strides", "Concrete Inputs"):
                args.pop(key, None)
    return trace


def without_memory(trace: Trace) -> Trace:
    """Captured without `profile_memory=True`: no `[memory]` records."""
    trace["traceEvents"] = [e for e in _events(trace) if e.get("name") != "[memory]"]
    return trace


def last_step_cut_off(trace: Trace, kept_share: float = 0.25) -> Trace:
    """The capture ended while the last step's kernels ran: of the device events launched (by
    correlation id) inside the last `ProfilerStep#N` host range, only the first `kept_share` stay."""
    events = _events(trace)
    steps = [e for e in events if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("ph") == "X"
             and e.get("cat") != "gpu_user_annotation"]  # the host's ranges, not their GPU-side copies
    last = max(steps, key=lambda e: float(e["ts"]))
    begin, end = float(last["ts"]), float(last["ts"]) + float(last["dur"])
    launched = {e["args"]["correlation"] for e in events
                if e.get("cat") in ("cuda_runtime", "cuda_driver") and begin <= float(e.get("ts", -1)) < end
                and isinstance(e.get("args"), dict) and "correlation" in e["args"]}
    device = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
                     and e.get("args", {}).get("correlation") in launched), key=lambda e: float(e["ts"]))
    dropped = {id(e) for e in device[int(len(device) * kept_share):]}
    trace["traceEvents"] = [e for e in events if id(e) not in dropped]
    return trace


DEGRADATIONS: Dict[str, Callable[[Trace], Trace]] = {
    "no_correlation": without_correlation,
    "no_input_dims": without_input_dims,
    "no_memory": without_memory,
    "last_step_cut_off": last_step_cut_off,
}
