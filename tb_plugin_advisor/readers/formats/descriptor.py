"""One on-disk profile format as one record: everything the Advisor must know about a format outside
its reader, so that discovery, doctor, the trace route, the evidence spans and the outputs ask the
record and never compare format names.

A format's files sit in one of two layouts:

- SESSION_DIRECTORY: `plugins/profile/<session>/<host><suffix>`, as xprof and TensorFlow's profiler
  write them; a session directory is one capture and each file one host (`host_of`);
- RUN_DIRECTORY: the files lie directly in a run directory, one per worker and capture, and the
  format says which files are one capture (`group`, from the names and, where discovery may read the
  files, when each starts: `capture_start`).

Files of a format lying where no tab lists them (`outside_layout`) are found either by their own
names outside a session directory (NAMED) or, for JSON written under any name, by sniffing the head
of a local file (SNIFFED); doctor reports them with the finding the record names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, List, Mapping, Optional, Sequence, Tuple

from tb_plugin_advisor.model import Profile

SESSION_DIRECTORY = "session_directory"
RUN_DIRECTORY = "run_directory"

NAMED = "named"
SNIFFED = "sniffed"

# How a person opens an evidence span of the format: the built-in Profile tab's trace viewer (a link
# per span selects it), or Perfetto (the file loaded there, the span found by its pid, tid and ts).
TRACE_VIEWER = "trace_viewer"
PERFETTO = "perfetto"

# (capture label, [(worker, file name), …]): one capture of a RUN_DIRECTORY format.
Capture = Tuple[str, List[Tuple[str, str]]]
# on_progress(done_bytes, file_bytes) while one file is read.
FileProgress = Callable[[int, int], None]
# (path, host or None for the file's own name, on_progress or None) → Profile; ProfileReadError.
Reader = Callable[[str, Optional[str], Optional[FileProgress]], Profile]


@dataclass(frozen=True)
class SpanCoordinates:
    """How an evidence span (analysis/evidence/) addresses an event of the format's files, so that a
    trace viewer can select it (ARCHITECTURE.md §2, `evidence_spans`)."""

    label: str  # the span's `format` in the report JSON
    # True: `pid`/`tid` as the file writes them (the reader's `trace_ids` property maps a line's
    # (plane id, line id) to them) and times relative to the file's base time (its `base_ns`
    # property). False: the plane and line ids themselves, times on the profile's own (epoch) base.
    as_written: bool
    id_names: Tuple[str, str]  # what `pid` and `tid` are called to people
    viewer: str  # TRACE_VIEWER | PERFETTO


@dataclass(frozen=True)
class OutsideLayout:
    """Files of the format that no tab lists where they lie, and what doctor and fix-logdir say."""

    found_by: str  # NAMED | SNIFFED
    finding: str  # doctor's finding for them (sources/doctor/findings.py, checks.py)
    what: str  # fix-logdir's words for such files
    fix: str  # the verb of doctor's fix ("move", "rename")
    # SNIFFED: the host of a file that may be the format under another name (None: not a candidate),
    # and whether a local file's head shows it is one.
    host_of: Optional[Callable[[str], Optional[str]]] = None
    sniff: Optional[Callable[[str], bool]] = None


@dataclass(frozen=True)
class ProfileFormat:
    """One on-disk format. Registered once, in registry.FORMATS."""

    id: str  # Session.format and Profile.format; `format` in the doctor and runs JSON
    framework: Optional[str]  # the framework every file of it comes from; None when it varies
    names: Callable[[str], bool]  # is this file name one of its files, as its writer names them
    layout: str  # SESSION_DIRECTORY | RUN_DIRECTORY
    where_written: str  # where its files lie, for people ("<logdir>/**/…")
    file_pattern: str  # its files' names as a person would glob them ("*.xplane.pb")
    # SESSION_DIRECTORY: a file name → its host.
    host_of: Optional[Callable[[str], str]] = None
    # RUN_DIRECTORY: the directory's file names and when each starts (ns; absent or None: unknown)
    # → its captures, and what reads a start (name, path, size, mtime_ns) → ns or None.
    group: Optional[Callable[[Sequence[str], Mapping[str, Optional[int]]], List[Capture]]] = None
    capture_start: Optional[Callable[[str, str, int, Optional[int]], Optional[int]]] = None
    read: Optional[Reader] = None  # None: listed and explained, never analysed
    reads_what: str = ""  # an analysed format, for "the Advisor reads …"
    # a format that is not analysed: why, after "run 'R' holds " ({files}: the first few names)
    not_read_because: str = ""
    # The bytes of a file, a piece at a time, and its path → None when they are a profile of this
    # format; ProfileReadError naming what is not. None: no file of it is ever served.
    check_content: Optional[Callable[[Iterator[bytes], str], None]] = None
    outside_layout: Optional[OutsideLayout] = None
    doctor_checks: Tuple[str, ...] = ()  # doctor's checks for its captures, in order (checks.py)
    spans: Optional[SpanCoordinates] = None

    @property
    def analysed(self) -> bool:
        return self.read is not None
