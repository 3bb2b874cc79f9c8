"""PyTorch captures made the way users make them: one `python` process per capture, every process
writing into the same directory through `tensorboard_trace_handler` with its default worker name
(`<host>_<pid>`), and the ranks of a job running side by side. Written in the test session with the
truth of what was run.

pytest never imports torch: `processes(fresh_root)` runs this file as a child (`python
torch_processes.py generate ROOT`), which starts one grandchild per capture and writes
ROOT/manifest.json:

  series   SERIES_SAME captures of the fast loader, then SERIES_SLOW of the slow one, one process
           each, one after the other. The slow loader sleeps SERIES_ITEM_SLEEP_S per sample (64 ms
           a batch of 16): far above the step's compute (a few ms) and above what another busy
           process on the machine can add to it, so the change is the loader's on any machine.
           Three slow captures: the change stays judged against the spread between them even when
           the machine's load moved the last fast capture into a change of its own.
           manifest["series"]: per capture, in the order taken, its file, configuration and what
           Python measured around next(iterator).
  ranks    RANK_JOBS jobs of WORLD processes each (torch.distributed, gloo, DistributedDataParallel
           over the fast loader), the ranks of a job started together, the jobs one after the other.
           manifest["ranks"]: per job, its ranks' files.

The loop, the model and the datasets are tests/torch_traces.py's. TB_ADVISOR_TORCH_TRACES_CACHE
caches these as it caches those (keyed by this file's content and the torch version).
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Dict, List

import torch_traces as tt

SERIES = "series"
SERIES_SAME, SERIES_SLOW = 5, 3
SERIES_ITEM_SLEEP_S = 0.004
RANKS = "ranks"
RANK_JOBS, WORLD = 2, 2
CHILD_TIMEOUT_S = 120.0


@dataclasses.dataclass
class ProcessCaptures:
    """Where the captures live and what was run."""

    logdir: Path
    manifest: Dict[str, Any] = dataclasses.field(compare=False, repr=False)

    @classmethod
    def load(cls, root: Path) -> ProcessCaptures:
        return cls(logdir=root / "logdir", manifest=json.loads((root / tt.MANIFEST).read_text()))

    def series_dir(self) -> Path:
        return self.logdir / SERIES

    def series_captures(self) -> List[Dict[str, Any]]:
        """Per capture in the order taken: its trace file's name, configuration, what Python measured."""
        return self.manifest[SERIES]

    def ranks_dir(self) -> Path:
        return self.logdir / RANKS

    def rank_jobs(self) -> List[List[str]]:
        """Per job in the order run: its ranks' trace file names."""
        return self.manifest[RANKS]


def processes(fresh_root: Path) -> ProcessCaptures:
    """Fresh captures under fresh_root, or the cached copy when TB_ADVISOR_TORCH_TRACES_CACHE is set."""
    return ProcessCaptures.load(tt.generated_root(fresh_root, Path(__file__), timeout_s=600.0))


# ---------------------------------------------------------------------------------------------------
# Generation (child processes: import torch)


def _written_by_this_process(run_dir: Path) -> str:
    """The trace file this process wrote: the handler names it `<host>_<pid>.<stamp>.pt.trace.json`."""
    (path,) = run_dir.glob(f"{socket.gethostname()}_{os.getpid()}.*.pt.trace.json*")
    return path.name


def capture(logdir: Path, config: str, out: Path) -> None:
    """One capture of the series, in this process."""
    import torch

    torch.set_num_threads(1)
    slow, fast = tt._datasets(torch, SERIES_ITEM_SLEEP_S)
    n = tt.BATCH * (tt.WAIT + tt.WARMUP + tt.ACTIVE + 1)
    dataset = (slow if config == "slow_loader" else fast)(n)
    measured = tt._capture(torch, logdir, SERIES, dataset, worker_name=None)
    out.write_text(json.dumps({"file": _written_by_this_process(logdir / SERIES), "config": config,
                               "measured": measured}))


def rank(logdir: Path, rank_index: int, world: int, rendezvous: Path, out: Path) -> None:
    """One rank of a data-parallel job, in this process."""
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{rendezvous}", rank=rank_index, world_size=world)
    try:
        _, fast = tt._datasets(torch)
        n = tt.BATCH * (tt.WAIT + tt.WARMUP + tt.ACTIVE + 1)
        ddp = torch.nn.parallel.DistributedDataParallel
        tt._capture(torch, logdir, RANKS, fast(n), worker_name=None, wrap=ddp)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    out.write_text(json.dumps({"file": _written_by_this_process(logdir / RANKS)}))


def _child(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait(children: List[subprocess.Popen]) -> None:
    for child in children:
        output, _ = child.communicate(timeout=CHILD_TIMEOUT_S)
        if child.returncode != 0:
            raise RuntimeError(f"{' '.join(child.args)} failed (exit {child.returncode}):\n{output[-4000:]}")


def generate(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    logdir = root / "logdir"
    scratch = Path(tempfile.mkdtemp(prefix="processes-", dir=root))
    series = []
    for i, config in enumerate(["fast_loader"] * SERIES_SAME + ["slow_loader"] * SERIES_SLOW):
        out = scratch / f"series-{i}.json"
        _wait([_child("capture", str(logdir), config, str(out))])  # one after the other, as a user runs them
        series.append(json.loads(out.read_text()))
    jobs = []
    for job in range(RANK_JOBS):
        outs = [scratch / f"job{job}-rank{r}.json" for r in range(WORLD)]
        rendezvous = scratch / f"job{job}.rendezvous"
        _wait([_child("rank", str(logdir), str(r), str(WORLD), str(rendezvous), str(outs[r]))
               for r in range(WORLD)])
        jobs.append(sorted(json.loads(o.read_text())["file"] for o in outs))
    manifest = {"torch_dist": tt.torch_version(), SERIES: series, RANKS: jobs}
    (root / tt.MANIFEST).write_text(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    command = sys.argv[1:2]
    if command == ["generate"] and len(sys.argv) == 3:
        generate(Path(sys.argv[2]))
    elif command == ["capture"] and len(sys.argv) == 5:
        capture(Path(sys.argv[2]), sys.argv[3], Path(sys.argv[4]))
    elif command == ["rank"] and len(sys.argv) == 7:
        rank(Path(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), Path(sys.argv[5]), Path(sys.argv[6]))
    else:
        sys.exit(f"usage: {sys.argv[0]} generate ROOT | capture LOGDIR CONFIG OUT | "
                 "rank LOGDIR RANK WORLD RENDEZVOUS OUT")
