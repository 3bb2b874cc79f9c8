"""PyTorch profiler (Kineto) trace (`*.pt.trace.json[.gz]`) → Profile, the same one XSpace gives.

Host events become one `/host:CPU` plane with a line per (pid, tid) thread; device events become
`/device:GPU:<n>` planes with a `Stream #<tid>` line per stream (user ranges projected onto a stream
go to a separate `GPU annotations #<tid>` line, so they are never mistaken for kernels). Times are
int64 ns since the epoch. Events on one line must nest: Kineto rounds to µs (old traces) or to ns
after an offset (new ones), so neighbours can overlap by a hair, and Python stack events and user
annotations straddle other ranges; those are clipped, deterministically (a step marker never: the
events it outlives end where it starts); each line keeps which (Line.clipped), and the validity
matrix (analysis/validity/) says what they affect.
"""

from __future__ import annotations

import gc
import os
from typing import Any, Dict, Iterator, List, Optional, Tuple

import numpy as np

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.model import Plane, Profile, StepMarker, StringTable
from tb_plugin_advisor.process_memory.gc_pause import collector_paused
from tb_plugin_advisor.process_memory.heap import hands_back_memory
from tb_plugin_advisor.process_memory.packed_strings import repack
from tb_plugin_advisor.readers.devices import build_device
from tb_plugin_advisor.readers.guarded_io import current, inflate, pieces_of, read_pieces
from tb_plugin_advisor.readers.kineto import tables
from tb_plugin_advisor.readers.kineto.lines import LineBuilder, device_plane_stats
from tb_plugin_advisor.readers.kineto.load import (
    TIME_LIMIT_NS,
    KinetoTrace,
    TraceEvent,
    decode_args,
    decode_event,
    decode_trace,
    micros_to_ns,
    read_trace_bytes,
    repair_utf8,
)
from tb_plugin_advisor.readers.kineto.stream import Declined, EventStream

HOST_PLANE = "/host:CPU"


@hands_back_memory(reads=True)
@collector_paused
def read_kineto(path: str, host: Optional[str] = None) -> Profile:
    """Read one Kineto trace from a local path or any path TensorBoard's file layer understands."""
    source = os.fspath(path)
    host = host or tables.worker_from_filename(source)
    profile = _read_streamed(read_pieces(source, current(), PIECE_BYTES), source, host)
    return profile if profile is not None else _read([read_trace_bytes(source)], source, host)


@hands_back_memory(reads=True)
@collector_paused
def read_kineto_bytes(data: bytes, source: str = "<bytes>", host: str = "") -> Profile:
    """Decode a trace held in memory (plain or gzip JSON); ProfileReadError names `source`."""
    profile = _read_streamed(pieces_of(data, source, current(), PIECE_BYTES), source, host)
    return profile if profile is not None else _read([inflate(data, source, current())], source, host)


# Bytes of text read (or inflated) at a time on the streamed path: a few MB of undecoded text and
# decoded events in memory at once, and few enough pieces that their cost does not show.
PIECE_BYTES = 2 << 20


def _read_streamed(pieces: Iterator[bytes], source: str, host: str) -> Optional[Profile]:
    """The profile, its events decoded a batch at a time as the text streams by (stream.py); None
    when that path cannot vouch for the document or meets any error: the whole-document path
    (`_read`) then reads it and words the error, so both give the same profile or the same message."""
    stream = EventStream(pieces)
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        converter = _TraceConverter(source, host, _base_ns(stream.head()))
        if not converter.base_ns:  # a base time may still come after the events (ROCm traces)
            converter.track_times()
        for first, events, bad_utf8 in stream.batches():
            converter.invalid_utf8 += bad_utf8
            converter.add_events(events, first)
            del events
        trace = stream.trace()
        if _base_ns(trace) != converter.base_ns:
            converter.rebase(_base_ns(trace))
    except (Declined, ProfileReadError):
        return None
    finally:
        stream.close()
        if gc_was_enabled:
            gc.enable()
    return converter.profile(trace, stream.size)


def _read(holder: List[bytes], source: str, host: str) -> Profile:
    """The whole-document path: `holder` hands over the only reference to the bytes, so they are
    freed once the events are read."""
    data = holder.pop()
    size = len(data)
    gc_was_enabled = gc.isenabled()
    gc.disable()  # millions of small acyclic objects: the cyclic GC would rescan them over and over
    try:
        trace = decode_trace(data, source)
        del data
        raws = trace.traceEvents or []
        trace.traceEvents = None
        converter = _TraceConverter(source, host, _base_ns(trace))
        converter.add_raw_events(raws)
        del raws
        return converter.profile(trace, size)
    finally:
        if gc_was_enabled:
            gc.enable()


def _base_ns(trace: KinetoTrace) -> int:
    base = trace.baseTimeNanoseconds
    return int(base) if isinstance(base, int) and base > 0 else 0


class _TraceConverter:
    """One pass over the events, filling per-line builders; then columns, devices and markers."""

    def __init__(self, source: str, host: str, base_ns: int):
        self.trace = KinetoTrace()  # the top-level fields, given to `profile` once the events are read
        self.source = source
        self.host = host
        self.size = 0
        self.base_ns = base_ns
        self.roles: Dict[str, Optional[str]] = {}
        self.host_names: Dict[str, int] = {}
        self.host_strings = StringTable()
        self.host_lines: Dict[Tuple[Any, Any], LineBuilder] = {}
        # devices are (plane name prefix, number): GPUs, and other accelerators (MTIA) apart
        self.device_names: Dict[Tuple[str, int], Dict[str, int]] = {}
        self.device_strings: Dict[Tuple[str, int], StringTable] = {}
        self.device_lines: Dict[Tuple[Tuple[str, int], str], LineBuilder] = {}
        self.device_line_of: Dict[Tuple[str, int, int], LineBuilder] = {}  # (category, pid, tid) → line
        # per line (not per event): the pid/tid its first event was written with, and the built
        # line's (plane id, line id) -> those ids, so evidence spans name the file's own coordinates
        self.written_ids: Dict[Any, Tuple[Any, Any]] = {}
        self.trace_ids: Dict[Tuple[int, int], Tuple[Any, Any]] = {}
        self.process_names: Dict[Any, str] = {}
        self.process_labels: Dict[Any, str] = {}
        self.thread_names: Dict[Tuple[Any, Any], str] = {}
        self.unknown_categories: Dict[str, int] = {}
        self.ignored_phases: Dict[str, int] = {}
        self.launch_flows = 0
        self.spans: List[Tuple[str, int, int]] = []
        self.warnings: List[str] = []
        self.invalid_utf8 = 0  # events whose bytes held invalid UTF-8 (read with U+FFFD)
        self.memory_out_of_range = 0  # [memory] instants whose time is out of range (skipped)
        # the least and greatest start of the complete events and of the memory records, kept while
        # a base time may still come (track_times), to move them by it once it does (rebase)
        self.starts: Optional[List[int]] = None
        self.memory_starts: Optional[List[int]] = None

    # -- the pass ----------------------------------------------------------------------------------

    def add_raw_events(self, raws: List[Any]) -> None:
        """The whole-document path's events: raw slices, decoded (and dropped) one at a time."""
        source = self.source
        for index in range(len(raws)):
            try:
                event = decode_event(raws[index], index, source)
            except UnicodeDecodeError:
                event = decode_event(repair_utf8(raws[index]), index, source)
                self.invalid_utf8 += 1
            raws[index] = None  # each raw slice goes as soon as it is read; the bytes go after the last
            self._event(index, event)
        # (no event is left referring to the text here: its raw fields would keep all of it alive)

    def add_events(self, events: List[TraceEvent], first: int) -> None:
        """Decoded events, the first of them traceEvents[first]."""
        complete, other, roles = self._complete, self._event, self.roles
        for index, event in enumerate(events, first):
            if event.ph == "X":  # nearly every event: dispatched here, one call fewer
                complete(index, event, roles)
            else:
                other(index, event)

    def _event(self, index: int, event: TraceEvent) -> None:
        phase = event.ph
        if phase == "X":
            self._complete(index, event, self.roles)
        elif phase == "M":
            self._metadata(event)
        elif phase in ("i", "I"):
            if event.name == tables.MEMORY_EVENT:
                self._memory(index, event)
        elif phase in ("s", "f", "t"):
            if isinstance(event.cat, str) and event.cat.lower() in tables.LAUNCH_FLOW_CATEGORIES:
                self.launch_flows += 1
        else:
            self.ignored_phases[phase] = self.ignored_phases.get(phase, 0) + 1

    def track_times(self) -> None:
        self.starts = [TIME_LIMIT_NS, -TIME_LIMIT_NS]
        self.memory_starts = [TIME_LIMIT_NS, -TIME_LIMIT_NS]

    def rebase(self, base_ns: int) -> None:
        """Move every time by a base time read after the events (they were read with no base, from
        track_times on), as if it had come first; Declined where that would have changed what was
        read (a time out of range, a memory record skipped or not): the whole-document path says."""
        if self.starts is None or self.memory_starts is None or self.base_ns or self.memory_out_of_range:
            raise Declined("a base time after the events, and no record of the times")
        for lowest, highest in (self.starts, self.memory_starts):
            in_range = -TIME_LIMIT_NS < lowest + base_ns and highest + base_ns < TIME_LIMIT_NS  # noqa: SIM300
            if lowest <= highest and not in_range:
                raise Declined("a time out of range with the base time")
        for builder in (*self.host_lines.values(), *self.device_lines.values()):
            if builder.starts:
                starts = np.frombuffer(builder.starts, dtype=np.int64)
                starts += base_ns
                del starts
        self.spans = [(name, start + base_ns, length) for name, start, length in self.spans]
        self.base_ns = base_ns

    def profile(self, trace: KinetoTrace, size: int) -> Profile:
        """The Profile, once every event was added: `trace` holds the other top-level fields."""
        self.trace = trace
        self.size = size
        return self._assemble()

    def _time(self, index: int, event) -> Tuple[int, int]:
        start, length = micros_to_ns(event.ts), micros_to_ns(event.dur)
        if start is None or length is None:
            key, raw = ("ts", event.ts) if start is None else ("dur", event.dur)
            shown = bytes(raw)[:40].decode(errors="replace")
            problem = f"whose '{key}' is not a finite number ({shown})" if raw else f"without '{key}'"
            raise ProfileReadError(
                self.source,
                f"traceEvents[{index}].{key}: ({_shown_name(event)}) is a complete event {problem}")
        if length < 0:
            raise ProfileReadError(
                self.source, f"traceEvents[{index}] ({_shown_name(event)}) has a negative duration "
                f"({bytes(event.dur).decode(errors='replace')} µs)")
        start += self.base_ns
        for key, value in (("ts", start), ("dur", length)):
            if not -TIME_LIMIT_NS < value < TIME_LIMIT_NS:
                raise ProfileReadError(
                    self.source, f"traceEvents[{index}].{key} ({_shown_name(event)}) is out of range "
                    f"({bytes(getattr(event, key))[:40].decode(errors='replace')} µs): more than 146 years")
        bounds = self.starts
        if bounds is not None:
            if start < bounds[0]:
                bounds[0] = start
            if start > bounds[1]:
                bounds[1] = start
        return start, length

    def _complete(self, index: int, event, roles: Dict[str, Optional[str]]) -> None:
        start, length = self._time(index, event)  # first: a malformed event is refused whatever its kind
        category = event.cat if isinstance(event.cat, str) else str(event.cat)
        role = tables.role_of(category, roles)
        if role is None:
            self.unknown_categories[category] = self.unknown_categories.get(category, 0) + 1
            return
        name = event.name if isinstance(event.name, str) else str(event.name)
        if role == tables.SPAN:
            self.spans.append((name, start, length))
            return
        if role in tables.DEVICE_ROLES:
            pid, tid = event.pid, event.tid
            if type(pid) is int and type(tid) is int:  # (1, 1.0 and True are one dict key)
                line = self.device_line_of.get((category, pid, tid))
                if line is None:
                    line = self.device_line_of[(category, pid, tid)] = self._device_line(index, event, role,
                                                                                         category)
            else:
                line = self._device_line(index, event, role, category)
            line.add(name, start, length, decode_args(event.args), role)
        else:
            self._host_line(event.pid, event.tid).add(name, start, length, decode_args(event.args))

    def _host_line(self, pid: Any, tid: Any) -> LineBuilder:
        key = (pid, tid if isinstance(tid, int) or tid == tables.MEMORY_EVENT else _as_int(tid))
        line = self.host_lines.get(key)
        if line is None:
            line = self.host_lines[key] = LineBuilder(self.host_names, self.host_strings)
            self.written_ids[key] = (pid, tid)
        return line

    def _device_line(self, index: int, event, role: str, category: str) -> LineBuilder:
        number = _device_number(event.pid)
        if number > tables.LARGEST_DEVICE_NUMBER:
            raise ProfileReadError(
                self.source, f"traceEvents[{index}].pid ({_shown_name(event)}) is device {number}, "
                f"out of range (device numbers go up to {tables.LARGEST_DEVICE_NUMBER})")
        device = (tables.DEVICE_PLANES.get(category.lower(), tables.GPU_PLANE), number)
        stream = _stream_number(event.tid)
        prefix = "GPU annotations #" if role == tables.GPU_ANNOTATION else "Stream #"
        key = (device, f"{prefix}{stream}")
        line = self.device_lines.get(key)
        if line is None:
            names = self.device_names.setdefault(device, {})
            strings = self.device_strings.setdefault(device, StringTable())
            line = self.device_lines[key] = LineBuilder(names, strings)
            self.written_ids[key] = (event.pid, event.tid)
        return line

    def _metadata(self, event) -> None:
        args = decode_args(event.args)
        label = args.get("name") if isinstance(args.get("name"), str) else None
        if event.name == tables.PROCESS_NAME and label:
            known = self.process_names.get(event.pid)
            if known is not None and known != label:
                self.warnings.append(
                    f"process id {event.pid} is named twice ({known!r}, {label!r}); kept the first")
            else:
                self.process_names[event.pid] = label
        elif event.name == tables.THREAD_NAME and label:
            self.thread_names.setdefault((str(event.pid), str(event.tid)), label)
        elif event.name == tables.PROCESS_LABELS:
            labels = args.get("labels")
            if isinstance(labels, str):
                self.process_labels[event.pid] = labels

    def _memory(self, index: int, event) -> None:
        start = micros_to_ns(event.ts)
        if start is None:
            return
        bounds = self.memory_starts
        if bounds is not None:
            bounds[0], bounds[1] = min(bounds[0], start), max(bounds[1], start)
        if not -TIME_LIMIT_NS < start + self.base_ns < TIME_LIMIT_NS:
            self.memory_out_of_range += 1
            return
        line = self._host_line(event.pid, tables.MEMORY_EVENT)
        line.add(tables.MEMORY_EVENT, self.base_ns + start, 0, decode_args(event.args))

    # -- assembly ----------------------------------------------------------------------------------

    def _assemble(self) -> Profile:
        planes: List[Plane] = []
        host_plane = Plane(0, HOST_PLANE, [], {}, self.host_strings)
        step_names = np.array([i for name, i in self.host_names.items() if tables.PROFILER_STEP.match(name)],
                              dtype=np.int32)
        for line_id, ((pid, tid), builder) in enumerate(sorted(self.host_lines.items(), key=_line_order)):
            name, display = self._thread_label(pid, tid)
            line, _ = builder.build(line_id, name, display, host_plane, kept_whole=step_names)
            self.trace_ids[(host_plane.id, line_id)] = self.written_ids[(pid, tid)]
            host_plane.lines.append(line)
        _finish_names(host_plane, self.host_names)
        planes.append(host_plane)
        properties = _device_properties(self.trace.deviceProperties)
        for plane_id, device in enumerate(sorted(self.device_names), start=1):
            prefix, number = device
            found = self._properties_of(number, properties) if prefix == tables.GPU_PLANE else None
            stats = device_plane_stats(found)
            plane = Plane(plane_id, f"{prefix}{number}", [], stats, self.device_strings[device])
            keys = sorted((k for k in self.device_lines if k[0] == device), key=lambda k: _stream_order(k[1]))
            for line_id, key in enumerate(keys):
                line, _ = self.device_lines[key].build(line_id, key[1], "", plane)
                self.trace_ids[(plane_id, line_id)] = self.written_ids[key]
                plane.lines.append(line)
            _finish_names(plane, self.device_names[device])
            planes.append(plane)
        devices = [build_device(p) for p in planes[1:]]
        builders = (*self.host_lines.values(), *self.device_lines.values())
        dropped = sum(builder.out_of_range for builder in builders)
        if dropped:
            self.warnings.append(
                f"{dropped} argument value(s) out of range (beyond ±2^63, or not finite) were treated as "
                "unknown")
        if self.memory_out_of_range:
            self.warnings.append(
                f"{self.memory_out_of_range} memory record(s) with a time out of range were skipped")
        if self.invalid_utf8:
            self.warnings.append(
                f"{self.invalid_utf8} event(s) held invalid UTF-8; those bytes are shown as U+FFFD")
        self._note_unknowns()
        return Profile(
            path=self.source,
            host=self.host,
            size_bytes=self.size,
            planes=planes,
            devices=devices,
            step_markers=_profiler_steps(host_plane),
            hostnames=[self.trace.host_name] if isinstance(self.trace.host_name, str) else [],
            errors=[],
            warnings=self.warnings,
            framework="pytorch",
            format=tables.FORMAT_ID,
            properties=self._properties(properties),
        )

    def _properties_of(self, device: int, properties: Dict[int, Dict[str, Any]]) -> Optional[Dict[str, Any]]:
        """A device's `deviceProperties` entry; with one entry and one device, that entry (ROCm traces
        number the visible device by its global index but list it as id 0)."""
        found = properties.get(device)
        if found is None and len(properties) == 1 and len(self.device_names) == 1:
            found = next(iter(properties.values()))
        if found is not None and (self.trace.roctracer_version is not None
                                  or self.trace.hip_runtime_version is not None):
            found = {**found, "warpSize": found.get("warpSize", 64), "vendor": "AMD"}
        return found

    def _thread_label(self, pid: Any, tid: Any) -> Tuple[str, str]:
        if tid == tables.MEMORY_EVENT:
            return f"[memory] pid {pid}", ""
        thread = self.thread_names.get((str(pid), str(tid)))
        process = self.process_names.get(pid) or f"pid {pid}"
        name = thread or f"thread {tid}"
        if thread and str(tid) not in thread:  # line names stay unique: Kineto's names carry the tid
            name = f"{thread} ({tid})"
        return name, f"{process} / {name}"

    def _note_unknowns(self) -> None:
        if self.unknown_categories:
            listed = ", ".join(f"{c!r} ×{n}" for c, n in sorted(self.unknown_categories.items()))
            self.warnings.append(f"events of unknown categories were not read: {listed}")
        if self.ignored_phases:
            listed = ", ".join(f"{p!r} ×{n}" for p, n in sorted(self.ignored_phases.items()))
            self.warnings.append(f"trace events of phases the Advisor does not use were skipped: {listed}")

    def _properties(self, devices: Dict[int, Dict[str, Any]]) -> Dict[str, Any]:
        trace = self.trace
        info = trace.distributedInfo if isinstance(trace.distributedInfo, dict) else {}
        return {
            "schema_version": trace.schemaVersion,
            "schema_era": "relative-ns" if self.base_ns else "absolute-us",
            "rank": info.get("rank"),
            "world_size": info.get("world_size"),
            "backend": info.get("backend"),
            "trace_name": trace.traceName,
            "record_shapes": trace.record_shapes,
            "profile_memory": trace.profile_memory,
            "with_stack": trace.with_stack,
            "rocm": trace.roctracer_version is not None or trace.hip_runtime_version is not None,
            "device_properties": devices,
            "process_names": {str(k): v for k, v in self.process_names.items()},
            "spans": [{"name": n, "start_ns": s, "duration_ns": d} for n, s, d in self.spans],
            "launch_flows": self.launch_flows,
            "base_ns": self.base_ns,
            "trace_ids": self.trace_ids,
        }


# ---------------------------------------------------------------------------------------------------
# Helpers


def _shown_name(event) -> str:
    """An event's name for an error message: quoted, and short whatever the file holds."""
    text = repr(event.name)
    return text if len(text) <= 80 else text[:77] + "..."


def _as_int(value: Any) -> Any:
    """2021 traces write thread ids as strings ("5555") in events and ints in flows: one thread."""
    return int(value) if isinstance(value, str) and value.isdigit() else value


def _device_number(pid: Any) -> int:
    if isinstance(pid, int) and pid >= 0:
        return pid
    digits = "".join(ch for ch in str(pid) if ch.isdigit())
    return int(digits) if digits else 0


def _stream_number(tid: Any) -> str:
    if isinstance(tid, int):
        return str(tid)
    text = str(tid)
    digits = "".join(ch for ch in text if ch.isdigit())
    return digits or text


def _stream_order(name: str) -> Tuple[int, int, str]:
    prefix, _, number = name.partition("#")
    return (0 if prefix == "Stream " else 1, int(number) if number.isdigit() else 1 << 62, name)


def _line_order(item) -> Tuple[str, str]:
    (pid, tid), _ = item
    return (str(pid), "~" if tid == tables.MEMORY_EVENT else f"{str(tid):>24}")


def _finish_names(plane: Plane, names: Dict[str, int]) -> None:
    """The plane's name table from the names its lines interned; `names` is emptied (its int ids
    and its hash table were half the memory of a million names), and the names are made again,
    packed (they were made among the events' temporaries: process_memory/packed_strings.py)."""
    ordered = [""] * len(names)
    for text, index in names.items():
        ordered[index] = text
    names.clear()
    repack(ordered)  # (`ordered` holds the only references now)
    plane.event_names.extend(ordered)


def _device_properties(raw: Any) -> Dict[int, Dict[str, Any]]:
    found: Dict[int, Dict[str, Any]] = {}
    if isinstance(raw, list):
        for position, entry in enumerate(raw):
            if isinstance(entry, dict):
                ident = entry.get("id", position)
                found[int(ident) if isinstance(ident, int) else position] = entry
    return found


def _profiler_steps(host_plane: Plane) -> List[StepMarker]:
    markers: List[StepMarker] = []
    numbers: Dict[int, int] = {}
    for index, name in enumerate(host_plane.event_names):
        match = tables.PROFILER_STEP.match(name)
        if match:
            numbers[index] = int(match.group(1))
    if not numbers:
        return markers
    wanted = np.array(sorted(numbers), dtype=np.int32)
    for line in host_plane.lines:
        if len(line) == 0:
            continue
        for i in np.flatnonzero(np.isin(line.metadata_index, wanted)).tolist():
            meta = int(line.metadata_index[i])
            markers.append(StepMarker(
                source="profiler_step",
                name=host_plane.event_names[meta],
                step_num=numbers[meta],
                start_ns=int(line.start_ns[i]),
                duration_ns=int(line.duration_ns[i]),
                line_name=line.label,
            ))
    markers.sort(key=lambda m: m.start_ns)
    return markers
