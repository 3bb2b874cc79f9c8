"""PyTorch (Kineto) traces written by a real `torch.profiler` in the test session, with the truth.

pytest never imports torch: `load_or_generate` runs this file as a child process (`python
torch_traces.py generate ROOT`), which captures four runs with `tensorboard_trace_handler` under
ROOT/logdir and writes ROOT/manifest.json with what Python measured while they ran:

  slow_loader   DataLoader(num_workers=0) whose __getitem__ sleeps: the loop waits in next(iterator)
  fast_loader   the same data pre-built as tensors: next(iterator) is cheap
  bf16          the model, its optimiser and each batch in torch.bfloat16 (small: bf16 is emulated on
                CPUs without AVX512-BF16/AMX). Not autocast: there the fp32 share of weight casts and
                the optimiser depends on how fast the CPU's bf16 matmuls are, and falls below half
                on a CPU with AMX; pure bf16 keeps bf16 dominant on any CPU
  no_step       the same loop without prof.step(): no ProfilerStep# markers, steps must be inferred

Captures made the way users make a series, one `python` run each (and the ranks of a job), are
tests/torch_processes.py's; it reuses the loop and the datasets below.

The truth for the DataLoader share (DESIGN §10: torch-tb-profiler shows 0 % on current traces) is
measured around `next(iterator)` with time.perf_counter for each recorded step: manifest
runs[name]["measured"]["wait_share_pct"]. A sleep makes the wait independent of the CPU's speed.

Set TB_ADVISOR_TORCH_TRACES_CACHE=DIR to reuse traces across pytest runs and on CI's oldest pair
(keyed by this file's content and the torch version that wrote them).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

CACHE_ENV = "TB_ADVISOR_TORCH_TRACES_CACHE"
MANIFEST = "manifest.json"
NAMES = ("slow_loader", "fast_loader", "bf16", "no_step")

# profiler schedule: steps WAIT + WARMUP are skipped, then ACTIVE steps are recorded
WAIT, WARMUP, ACTIVE = 1, 1, 6
BATCH, FEATURES, HIDDEN = 16, 256, 512
SLOW_ITEM_SLEEP_S = 0.0006  # per sample: ~10 ms per batch of 16, about as long as the step's compute


@dataclasses.dataclass
class TorchTraces:
    """Where the generated runs live and what Python measured while writing them."""

    logdir: Path
    manifest: Dict[str, Any] = dataclasses.field(compare=False, repr=False)

    @classmethod
    def load(cls, root: Path) -> TorchTraces:
        return cls(logdir=root / "logdir", manifest=json.loads((root / MANIFEST).read_text()))

    def run_dir(self, name: str) -> Path:
        if name not in NAMES:
            raise KeyError(f"unknown run {name!r}; expected one of {NAMES}")
        return self.logdir / name

    def trace(self, name: str) -> Path:
        """The run's one trace file."""
        (path,) = sorted(self.run_dir(name).glob("*.pt.trace.json*"))
        return path

    def measured(self, name: str) -> Dict[str, Any]:
        return self.manifest["runs"][name]["measured"]


# ---------------------------------------------------------------------------------------------------
# Loading / caching (pytest side: no torch import here)


def torch_version() -> Optional[str]:
    try:
        return f"torch=={importlib.metadata.version('torch')}"
    except importlib.metadata.PackageNotFoundError:
        return None


def cache_key(script: Path = Path(__file__)) -> str:
    return hashlib.sha256(Path(script).read_bytes()).hexdigest()[:16]


def _cached_is_current(root: Path) -> bool:
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    installed = torch_version()
    return installed is None or manifest.get("torch_dist") == installed


def generate_in_subprocess(root: Path, timeout_s: float = 300.0, script: Path = Path(__file__)) -> None:
    """`python SCRIPT generate ROOT` in a child process (pytest never imports torch)."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")  # CPU traces on any machine
    proc = subprocess.run(
        [sys.executable, str(Path(script).resolve()), "generate", str(root)],
        env=env, capture_output=True, text=True, timeout=timeout_s,
    )
    if proc.returncode != 0:
        tail = (proc.stdout[-3000:] + "\n" + proc.stderr[-6000:]).strip()
        raise RuntimeError(f"capturing PyTorch traces under {root} failed (exit {proc.returncode}):\n{tail}")


def generated_root(fresh_root: Path, script: Path = Path(__file__), timeout_s: float = 300.0) -> Path:
    """Where SCRIPT's traces are: written fresh under fresh_root, or the cached copy when
    TB_ADVISOR_TORCH_TRACES_CACHE is set (keyed by SCRIPT's content and the torch version)."""
    cache = os.environ.get(CACHE_ENV)
    if not cache:
        if torch_version() is None:
            raise RuntimeError(
                "torch is not installed: it writes the real-trace fixtures (pip install -e '.[test]'), "
                f"or point {CACHE_ENV} at traces written elsewhere"
            )
        generate_in_subprocess(fresh_root, timeout_s, script)
        return fresh_root
    keyed = Path(cache) / f"{Path(script).stem}-{cache_key(script)}"
    if _cached_is_current(keyed):
        return keyed
    if torch_version() is None:
        raise RuntimeError(
            f"{CACHE_ENV}={cache} holds no traces for this generator ({keyed.name}) and torch is not "
            "installed to write them; run the suite once where torch is installed"
        )
    keyed.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=keyed.parent))
    generate_in_subprocess(staging, timeout_s, script)
    shutil.rmtree(keyed, ignore_errors=True)
    try:
        staging.rename(keyed)
    except OSError:  # another session won the race
        shutil.rmtree(staging, ignore_errors=True)
    return keyed


def load_or_generate(fresh_root: Path) -> TorchTraces:
    """Fresh traces under fresh_root, or the cached copy when TB_ADVISOR_TORCH_TRACES_CACHE is set."""
    return TorchTraces.load(generated_root(fresh_root))


# ---------------------------------------------------------------------------------------------------
# Generation (child process: imports torch)


def _datasets(torch, item_sleep_s: float = SLOW_ITEM_SLEEP_S):
    class SlowDataset(torch.utils.data.Dataset):
        """Decoding made deliberately costly: each sample sleeps (independent of the CPU's speed)."""

        def __init__(self, n: int):
            self.n = n

        def __len__(self) -> int:
            return self.n

        def __getitem__(self, i: int):
            time.sleep(item_sleep_s)
            g = torch.Generator().manual_seed(i)
            return torch.randn(FEATURES, generator=g), torch.randint(0, 10, (), generator=g)

    class FastDataset(torch.utils.data.Dataset):
        """The same samples decoded once up front."""

        def __init__(self, n: int):
            slow = SlowDataset(n)
            self.items = [(torch.randn(FEATURES, generator=torch.Generator().manual_seed(i)),
                           torch.randint(0, 10, (), generator=torch.Generator().manual_seed(i)))
                          for i in range(slow.n)]

        def __len__(self) -> int:
            return len(self.items)

        def __getitem__(self, i: int):
            return self.items[i]

    return SlowDataset, FastDataset


def _capture(torch, out: Path, name: str, dataset, *, bf16: bool = False, mark_steps: bool = True,
             worker_name: Optional[str] = "worker0", wrap: Optional[Callable[[Any], Any]] = None):
    """Train a small MLP for the scheduled steps; measure the wait in next(iterator) of each step.
    `worker_name` None: the handler's own, `<host>_<pid>`; `wrap`: applied to the model (DDP)."""
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(FEATURES, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
        torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10),
    )
    if bf16:
        model = model.to(torch.bfloat16)
    if wrap is not None:
        model = wrap(model)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = torch.utils.data.DataLoader(dataset, batch_size=BATCH, num_workers=0)
    total = WAIT + WARMUP + ACTIVE
    waits: List[float] = []
    steps: List[float] = []
    run_dir = out / name
    handler = tensorboard_trace_handler(str(run_dir), worker_name=worker_name)
    kwargs: Dict[str, Any] = {
        "activities": [ProfilerActivity.CPU], "record_shapes": True, "on_trace_ready": handler,
    }
    if mark_steps:
        kwargs["schedule"] = schedule(wait=WAIT, warmup=WARMUP, active=ACTIVE, repeat=1)
    iterator = iter(loader)
    with profile(**kwargs) as prof:
        for _ in range(total):
            t0 = time.perf_counter()
            x, y = next(iterator)
            t1 = time.perf_counter()
            if bf16:
                x = x.to(torch.bfloat16)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            t2 = time.perf_counter()  # before prof.step(): the last one writes the trace
            if mark_steps:
                prof.step()
            waits.append(t1 - t0)
            steps.append(t2 - t0)
    recorded = slice(WAIT + WARMUP, total) if mark_steps else slice(0, total)
    wait_s, step_s = sum(waits[recorded]), sum(steps[recorded])
    return {
        "marked_steps": mark_steps,
        "recorded_steps": len(steps[recorded]),
        "wait_ms": [round(w * 1e3, 3) for w in waits[recorded]],
        "step_ms": [round(s * 1e3, 3) for s in steps[recorded]],
        "wait_share_pct": round(100.0 * wait_s / step_s, 2),
    }


def generate(root: Path) -> None:
    import torch

    torch.set_num_threads(1)
    root.mkdir(parents=True, exist_ok=True)
    logdir = root / "logdir"
    slow_dataset, fast_dataset = _datasets(torch)
    n = BATCH * (WAIT + WARMUP + ACTIVE + 1)
    runs = {
        "slow_loader": _capture(torch, logdir, "slow_loader", slow_dataset(n)),
        "fast_loader": _capture(torch, logdir, "fast_loader", fast_dataset(n)),
        "bf16": _capture(torch, logdir, "bf16", fast_dataset(n), bf16=True),
        "no_step": _capture(torch, logdir, "no_step", slow_dataset(n), mark_steps=False),
    }
    manifest = {"torch_dist": torch_version(), "runs": {k: {"measured": v} for k, v in runs.items()}}
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "generate":
        sys.exit(f"usage: {sys.argv[0]} generate ROOT")
    generate(Path(sys.argv[2]))
