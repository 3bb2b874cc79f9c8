"""Lay out the PyTorch half of the bundled sample from the real H200 captures in tests/captures/h200.

    python demo/torch_sample.py [--sample tb_plugin_advisor/sample_logdir]

The story is ResNet-50 (batch 64) on one H200, as `tensorboard_trace_handler` wrote it, one directory per
configuration under torch_resnet50/ (the tab's Trend view groups runs by their first path component,
so the four directories are one series):

  1_fp32_workers0          fp32, DataLoader num_workers=0 with CPU-heavy samples: input-bound
  2_fp32_workers8          num_workers=8, pin_memory, prefetch 4: the DataLoader fix
  3_bf16_workers8          the same under bf16 autocast: the mixed-precision change on top
  4_fp32_workers8_repeats  the configuration of 2 run again as three separate processes: same-config
                           noise, three captures in one directory

Each directory also gets an events file with the step time measured without the profiler, as a
`SummaryWriter` next to the profiler would write it: TensorBoard lists a run only where it finds
one, and a newcomer's doctor page should not open on "not in TensorBoard's run list".
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

from tensorboard.compat.proto import event_pb2, summary_pb2
from tensorboard.summary.writer.record_writer import RecordWriter

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "tests" / "captures" / "h200"
SERIES = "torch_resnet50"
# sample directory -> the captures it holds, oldest first
LAYOUT = {
    "1_fp32_workers0": ["resnet50_fp32_workers0"],
    "2_fp32_workers8": ["resnet50_fp32_workers8"],
    "3_bf16_workers8": ["resnet50_bf16_workers8"],
    "4_fp32_workers8_repeats": [
        "resnet50_fp32_workers8_repeat1",
        "resnet50_fp32_workers8_repeat2",
        "resnet50_fp32_workers8_repeat3",
    ],
}
TAG = "step_time/unprofiled_ms"


def _event_bytes(wall_time: float, step: int, value: float) -> bytes:
    summary = summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=TAG, simple_value=value)])
    return event_pb2.Event(wall_time=wall_time, step=step, summary=summary).SerializeToString()


def _capture_time(trace: Path) -> int:
    """The trace file's name carries the capture's start in ns since the epoch; seconds are enough."""
    return int(trace.name.split(".")[1]) // 1_000_000_000


def write_directory(directory: Path, captures: list, facts: dict) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    traces = []
    for capture in captures:
        (trace,) = (CAPTURES / capture).glob("*.pt.trace.json.gz")
        shutil.copy2(trace, directory / trace.name)
        traces.append((trace, facts[capture]["unprofiled_step_ms"]))
    first = _capture_time(traces[0][0])
    # One fixed name and wall times from the captures: the sample is the same byte for byte on every run.
    with open(directory / f"events.out.tfevents.{first}.vm.0.v2", "wb") as handle:
        writer = RecordWriter(handle)
        writer.write(event_pb2.Event(wall_time=first, file_version="brain.Event:2").SerializeToString())
        for step, (trace, step_ms) in enumerate(traces):
            writer.write(_event_bytes(_capture_time(trace), step, step_ms))
        writer.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=Path, default=ROOT / "tb_plugin_advisor" / "sample_logdir")
    args = parser.parse_args()
    facts = json.loads((CAPTURES / "captures.json").read_text())
    shutil.rmtree(args.sample / SERIES, ignore_errors=True)
    for name, captures in LAYOUT.items():
        write_directory(args.sample / SERIES / name, captures, facts)
    print(f"wrote {args.sample / SERIES}")


if __name__ == "__main__":
    main()
