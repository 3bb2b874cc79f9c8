"""XSpace (`<host>.xplane.pb`): what TensorFlow >= 2.2, JAX and the Profile tab's capture button write,
one file per host in `plugins/profile/<session>/`."""

from __future__ import annotations

from typing import Optional

from tb_plugin_advisor.model import Profile
from tb_plugin_advisor.readers.formats.descriptor import (
    NAMED,
    SESSION_DIRECTORY,
    TRACE_VIEWER,
    FileProgress,
    OutsideLayout,
    ProfileFormat,
    SpanCoordinates,
)
from tb_plugin_advisor.readers.xplane import FORMAT_ID, XPLANE_SUFFIX
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.readers.xplane.signature import check_xspace


def _is_xspace(name: str) -> bool:
    return name.endswith(XPLANE_SUFFIX)


def _host(name: str) -> str:
    return name[: -len(XPLANE_SUFFIX)]


def _read(path: str, host: Optional[str], on_progress: Optional[FileProgress]) -> Profile:
    return read_xplane(path, host=host, on_progress=on_progress)


XSPACE = ProfileFormat(
    id=FORMAT_ID,
    framework=None,  # TensorFlow or JAX: the analyses tell them apart by their events
    names=_is_xspace,
    layout=SESSION_DIRECTORY,
    where_written="<logdir>/**/plugins/profile/<session>/<host>.xplane.pb (TensorFlow, JAX)",
    file_pattern="*.xplane.pb",
    host_of=_host,
    read=_read,
    reads_what="XSpace profiles written by TensorFlow >= 2.2 or JAX",
    check_content=check_xspace,
    outside_layout=OutsideLayout(
        found_by=NAMED,
        finding="loose_file",
        what=".xplane.pb files outside plugins/profile/<session>/",
        fix="move",
    ),
    doctor_checks=("keras3_markers_only", "no_step_markers", "loop_steps", "profiler_errors", "no_kernels",
                   "idle_gpus"),
    spans=SpanCoordinates(label="xspace", as_written=False, id_names=("plane", "line"), viewer=TRACE_VIEWER),
)
