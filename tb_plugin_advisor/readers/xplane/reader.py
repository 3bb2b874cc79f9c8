"""XSpace (`<host>.xplane.pb`) → Profile: the file is walked at the wire level, plane by plane.

Memory and safety shape this module (ARCHITECTURE.md §8): a whole-file parse holds ~7x the
file size, and a memory-mapped file kills the process with SIGBUS when it is truncated under the
reader. So field headers are read through a small window, each plane's metadata and each line are
copied out with pread (guarded_io.py) and decoded on their own, then dropped; a file that changes
meanwhile gives `ProfileChangedError`, and every count that costs memory is checked against
`ReadLimits` first.
"""

from __future__ import annotations

import gc
import os
from typing import Callable, List, Optional, Tuple, Union

from google.protobuf.message import DecodeError

from tb_plugin_advisor.errors import ProfileChangedError, ProfileReadError
from tb_plugin_advisor.formatting import format_number
from tb_plugin_advisor.model import Plane, Profile, StringTable
from tb_plugin_advisor.process_memory.gc_pause import collector_paused
from tb_plugin_advisor.process_memory.heap import hands_back_memory, release_free_memory
from tb_plugin_advisor.readers import guarded_io
from tb_plugin_advisor.readers.devices import build_device, step_markers
from tb_plugin_advisor.readers.guarded_io import GZIP_MAGIC, ProfileFile, ReadLimits, inflate, too_big
from tb_plugin_advisor.readers.xplane import FORMAT_ID, XPLANE_SUFFIX, event_columns
from tb_plugin_advisor.readers.xplane.line_windows import LineRange
from tb_plugin_advisor.readers.xplane.lines import EventBudget, read_line
from tb_plugin_advisor.readers.xplane.metadata_ids import DenseIds
from tb_plugin_advisor.readers.xplane.plane_metadata import read_plane_header, usable_stats
from tb_plugin_advisor.readers.xplane.unused_metadata import drop_unused_metadata
from tb_plugin_advisor.readers.xplane.wire import (
    ByteSource,
    Progress,
    Window,
    split_fields,
    utf8,
)

ProgressCallback = Callable[[int, int], None]


# ---------------------------------------------------------------------------------------------------
# Entry points


@hands_back_memory(reads=True)
@collector_paused
def read_xplane(
    path: Union[str, os.PathLike],
    host: Optional[str] = None,
    on_progress: Optional[ProgressCallback] = None,
    limits: Optional[ReadLimits] = None,
) -> Profile:
    """Read one `.xplane.pb` from a local path or any path TensorBoard's file layer understands.

    `on_progress(done_bytes, total_bytes)` is called as the reader moves through the file (from the
    reading thread). Local files must be regular files; they are read with pread, never mapped.
    """
    source = os.fspath(path)
    host = host or host_from_filename(source)
    limits = limits or guarded_io.current()
    if "://" in source:
        return read_xplane_bytes(guarded_io.read_remote(source, limits), source=source, host=host,
                                 on_progress=on_progress, limits=limits)
    with ProfileFile(source, limits) as handle:
        if handle.size == 0 or handle.read(0, min(2, handle.size)) == GZIP_MAGIC:
            data = handle.read(0, handle.size)
            if handle.changed():
                raise handle.changed_error()
            return read_xplane_bytes(data, source=source, host=host, on_progress=on_progress, limits=limits)
        byte_source = ByteSource(source, handle.size, handle.read)
        try:
            profile = _decode(byte_source, host, on_progress, limits)
        except ProfileChangedError:
            raise
        except ProfileReadError as exc:
            if handle.changed():  # garbage read from a file being rewritten: say so, not "corrupt"
                raise handle.changed_error() from exc
            raise
        if handle.changed():
            raise handle.changed_error()
        return profile


def host_from_filename(path: str) -> str:
    """`…/<session>/<host>.xplane.pb` → `<host>`."""
    base = path.replace("\\", "/").rsplit("/", 1)[-1]
    return base[: -len(XPLANE_SUFFIX)] if base.endswith(XPLANE_SUFFIX) else base


@hands_back_memory(reads=True)
@collector_paused
def read_xplane_bytes(
    data: bytes,
    source: str = "<bytes>",
    host: str = "",
    on_progress: Optional[ProgressCallback] = None,
    limits: Optional[ReadLimits] = None,
) -> Profile:
    """Decode an XSpace held in memory; raises ProfileReadError naming `source` on bad input."""
    limits = limits or guarded_io.current()
    if not data:
        raise ProfileReadError(source, "the file is empty (0 bytes)")
    if data[:2] == GZIP_MAGIC:  # some tools gzip profiles; be kind, within the size cap
        data = inflate(data, source, limits)
    if len(data) > limits.max_profile_bytes:
        raise too_big(source, len(data), limits)
    with memoryview(data) as view:
        return _decode(ByteSource.of_memory(source, view), host, on_progress, limits)


def _decode(data: ByteSource, host: str, on_progress: Optional[ProgressCallback],
            limits: ReadLimits) -> Profile:
    # Building millions of small containers triggers the cyclic GC over and over; none of them form
    # cycles, so it stays off while reading (restored after).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _read_space(data, host, Progress(on_progress, data.size), limits)
    except DecodeError as exc:
        raise ProfileReadError(data.name, f"corrupt protobuf data ({exc})") from exc
    except RecursionError as exc:
        raise ProfileReadError(data.name, "corrupt protobuf data (nested too deeply)") from exc
    finally:
        if gc_was_enabled:
            gc.enable()


def _read_space(data: ByteSource, host: str, progress: Progress, limits: ReadLimits) -> Profile:
    source = data.name
    planes: List[Plane] = []
    errors: List[str] = []
    warnings: List[str] = []
    hostnames: List[str] = []
    budget = EventBudget(source, limits.max_events)
    for number, wire_type, value in Window(data, data.size).fields(0, "XSpace"):
        if wire_type != 2 or number not in (1, 2, 3, 4):
            raise ProfileReadError(
                source, f"not an XSpace profile (corrupt data: field {number}, wire type {wire_type})"
            )
        start, end = value
        if number == 1:
            if len(planes) >= limits.max_planes:
                raise ProfileReadError(source, "the profile holds more than "
                                       f"{format_number(limits.max_planes)} planes, the reader's limit")
            planes.append(_read_plane(data, start, end, progress, limits, budget))
        else:
            (errors, warnings, hostnames)[number - 2].append(utf8(data.read(start, end), source))
    if not planes:
        raise ProfileReadError(source, "the XSpace holds no planes (an empty or aborted capture)")
    progress.done(data.size)
    if budget.ignored_values:
        count = budget.ignored_values
        warnings.append(f"{count} stat value(s) were NaN, infinite or out of range and were ignored")
    if budget.unknown_metadata:
        warnings.append(f"{budget.unknown_metadata} event(s) reference metadata the file does not define; "
                        "shown as <unknown event N>")
    return _assemble(planes, source, host, data.size, errors, warnings, hostnames)


# ---------------------------------------------------------------------------------------------------
# Planes


def _read_plane(data: ByteSource, begin: int, finish: int, progress: Progress, limits: ReadLimits,
                budget: EventBudget) -> Plane:
    fast = split_fields(data, begin, finish, 3, (4, 5), limits.max_lines_per_plane,
                        limits.max_metadata_per_plane, compiled=event_columns.COMPILED)
    if fast is not None:
        line_slices, runs = fast
        header_source = data
    else:  # something is wrong or over a limit: the field walk below says what
        header_parts, line_slices = _walk_plane(data, begin, finish, limits)
        header_bytes = b"".join(header_parts)
        del header_parts
        runs = [(0, len(header_bytes))]
        header_source = ByteSource.of_memory(data.name, memoryview(header_bytes))
    if sum(end - start for start, end in runs) >= BIG_HEADER:
        # what the earlier lines' decoding freed goes back first: the names are made in Python's own
        # arenas, which never reuse it (17 MB of a 100 MB profile with a million names)
        release_free_memory()
    header, stat_names, metadata = read_plane_header(header_source, runs, budget)
    del header_source
    dense = DenseIds(metadata.ids, metadata.stats, metadata.with_stats)
    plane_stats = usable_stats(header.stats, stat_names, budget)
    strings = StringTable()

    plane = Plane(
        id=header.id,
        name=header.name,
        event_names=metadata.names,
        stats=plane_stats,
        strings=strings,
    )
    del header
    for start, end in line_slices:
        # the bytes are handed over (no name keeps them here): read_line drops them once decoded
        line = read_line(LineRange(data, start, end), plane, dense, stat_names, strings, progress.at(start),
                         budget)
        plane.lines.append(line)
    budget.unknown_metadata += len(dense.placeholders)
    drop_unused_metadata(plane)
    progress.done(finish)
    return plane


BIG_HEADER = 8 << 20  # bytes of a plane's non-line fields (~100,000 metadata entries)


def _walk_plane(data: ByteSource, begin: int, finish: int,
                limits: ReadLimits) -> Tuple[List[bytes], List[Tuple[int, int]]]:
    """The plane's non-line fields (raw) and its line slices, field by field with precise errors."""
    source = data.name
    header_parts: List[bytes] = []
    line_slices: List[Tuple[int, int]] = []
    metadata_entries = 0
    window = Window(data, finish)
    run: List[int] = []  # [start, end) of consecutive non-line fields: copied with one read
    for number, wire_type, value in window.fields(begin, "XPlane"):
        if number == 3 and wire_type == 2:
            _copy_run(data, run, header_parts)
            line_slices.append(value)
            if len(line_slices) > limits.max_lines_per_plane:
                raise ProfileReadError(source, "a plane holds more than "
                                       f"{format_number(limits.max_lines_per_plane)} lines, "
                                       "the reader's limit")
            continue
        if wire_type != 0:
            metadata_entries += number in (4, 5)
            if metadata_entries > limits.max_metadata_per_plane:
                raise ProfileReadError(source, "a plane holds more than "
                                       f"{format_number(limits.max_metadata_per_plane)} metadata entries, "
                                       "the reader's limit")
        start = window.field_start
        if not run or run[1] != start:
            _copy_run(data, run, header_parts)
            run.extend((start, start))
        run[1] = window.field_end
    _copy_run(data, run, header_parts)
    return header_parts, line_slices


def _copy_run(data: ByteSource, run: List[int], parts: List[bytes]) -> None:
    """Copy the fields in [run[0], run[1]) as they are (raw fields are a valid encoding) and reset run.

    A plane's metadata entries are many and small: one read per entry was most of their cost."""
    if run:
        parts.append(bytes(data.read(run[0], run[1])))
        run.clear()


def _assemble(
    planes: List[Plane],
    source: str,
    host: str,
    size: int,
    errors: List[str],
    warnings: List[str],
    hostnames: List[str],
) -> Profile:
    devices = [build_device(p) for p in planes if p.kind in ("gpu", "tpu", "device")]
    devices.sort(key=lambda d: (d.kind, d.ordinal))
    return Profile(
        path=source,
        host=host or (hostnames[0] if hostnames else ""),
        size_bytes=size,
        planes=planes,
        devices=devices,
        step_markers=step_markers(planes),
        hostnames=hostnames,
        errors=errors,
        warnings=warnings,
        format=FORMAT_ID,
    )
