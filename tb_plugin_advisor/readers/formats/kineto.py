"""PyTorch profiler (Kineto) traces: `tensorboard_trace_handler(dir)` writes
`dir/<worker>.<ms>.pt.trace.json[.gz]` once per worker and capture, directly in the run directory
(ARCHITECTURE.md §10); `prof.export_chrome_trace` writes the same JSON under any name."""

from __future__ import annotations

from typing import Optional

from tb_plugin_advisor.model import Profile
from tb_plugin_advisor.readers.formats.descriptor import (
    PERFETTO,
    RUN_DIRECTORY,
    SNIFFED,
    FileProgress,
    OutsideLayout,
    ProfileFormat,
    SpanCoordinates,
)
from tb_plugin_advisor.readers.kineto.captures import capture_start, group_captures
from tb_plugin_advisor.readers.kineto.head import check_trace_head, looks_like_trace
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.readers.kineto.tables import (
    FORMAT_ID,
    JSON_SUFFIXES,
    is_trace_file,
    worker_from_filename,
)


def _exported_worker(name: str) -> Optional[str]:
    """The worker of a JSON file that may be a trace exported under any name; None for other files."""
    return worker_from_filename(name) if name.endswith(JSON_SUFFIXES) else None


def _read(path: str, host: Optional[str], on_progress: Optional[FileProgress]) -> Profile:
    return read_kineto(path, host=host)  # read whole, then analysed: progress is counted per file


KINETO = ProfileFormat(
    id=FORMAT_ID,
    framework="pytorch",
    names=is_trace_file,
    layout=RUN_DIRECTORY,
    where_written="<logdir>/**/<worker>.<timestamp>.pt.trace.json[.gz] (PyTorch)",
    file_pattern="*.pt.trace.json[.gz]",
    group=group_captures,
    capture_start=capture_start,
    read=_read,
    reads_what="PyTorch profiler traces (*.pt.trace.json[.gz])",
    check_content=check_trace_head,
    outside_layout=OutsideLayout(
        found_by=SNIFFED,
        finding="torch_outside_handler",
        what="PyTorch traces not named <worker>.<timestamp>.pt.trace.json",
        fix="rename",
        host_of=_exported_worker,
        sniff=looks_like_trace,
    ),
    doctor_checks=("torch_empty_trace", "torch_no_profiler_steps", "torch_no_gpu_events"),
    spans=SpanCoordinates(label="kineto", as_written=True, id_names=("pid", "tid"), viewer=PERFETTO),
)
