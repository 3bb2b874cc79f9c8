"""Caps on what one profile may make the reader hold: a hostile or broken file must end in a clear
error naming the file and the cap, never in a process grown past a few GB.

One table of defaults; `configure()` changes them for the process (TensorBoard's
`--advisor_max_profile_mb`, the CLI's `--max-profile-mb`), a `ReadLimits` passed to the reader
overrides them for one read.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from tb_plugin_advisor.formatting import fixed

MB = 1 << 20


@dataclass(frozen=True)
class ReadLimits:
    """Largest accepted sizes and counts; each is checked before the memory it costs is taken."""

    # Bytes of profile data (after gzip): reader + report peak near 3x this today (bench_report.py),
    # so 512 MB keeps the process under ~2 GB; larger captures raise the cap explicitly.
    max_profile_bytes: int = 512 * MB
    # Planes in one XSpace: real captures have one per device plus a few host planes.
    max_planes: int = 4096
    # Lines (threads, streams) in one plane.
    max_lines_per_plane: int = 200_000
    # Event and stat metadata entries in one plane (each becomes a Python object).
    max_metadata_per_plane: int = 2_000_000
    # Events in one file: decoding costs up to ~64 bytes per event while it runs, and an event can be
    # two bytes of file, so this (not the file size) bounds a hostile file to ~2 GB. Real profiles
    # hold ~30,000 events per MB (a 300 MB GPU profile: 9.5 M).
    max_events: int = 30_000_000

    def with_profile_mb(self, megabytes: float) -> ReadLimits:
        return dataclasses.replace(self, max_profile_bytes=int(megabytes * MB))


# The cap also travels in the environment: TensorBoard's analyses run in spawned worker processes
# (views/server/analysis_service.py), which inherit the variable but not this module's state.
CAP_ENV = "TB_ADVISOR_MAX_PROFILE_MB"


def _from_environment() -> ReadLimits:
    try:
        megabytes = float(os.environ.get(CAP_ENV, ""))
    except ValueError:
        return ReadLimits()
    return ReadLimits().with_profile_mb(megabytes) if megabytes > 0 else ReadLimits()


_current = _from_environment()


def current() -> ReadLimits:
    return _current


def configure(max_profile_mb: float, export: bool = False) -> ReadLimits:
    """Set the process-wide profile size cap (megabytes of profile data, after decompression);
    `export` also hands it to the worker processes started later (TensorBoard's analysis pool)."""
    global _current
    if not max_profile_mb > 0:
        raise ValueError(f"the profile size cap must be positive, not {max_profile_mb!r}")
    _current = _current.with_profile_mb(max_profile_mb)
    if export:
        os.environ[CAP_ENV] = repr(float(max_profile_mb))
    return _current


def describe_bytes(count: int) -> str:
    return f"{fixed(count / MB, 0)} MB" if count >= MB else f"{count} bytes"
