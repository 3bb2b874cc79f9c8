"""The CPU this process runs on: host name and instruction-set flags (/proc/cpuinfo, Linux).

A CPU-only profile that computes in bf16/fp16 is fast only where the CPU has native 16-bit math; the
report can state that as evidence only when it runs on the host that captured the profile (same host
name). Read once per process; unreadable (not Linux, a sandbox) means "not known", never an error.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from functools import lru_cache
from typing import FrozenSet, Optional

CPUINFO = "/proc/cpuinfo"


@dataclass(frozen=True)
class LocalCpu:
    hostname: str
    flags: Optional[FrozenSet[str]]  # None: could not be read
    model: str = ""


def parse_cpuinfo(text: str) -> tuple[Optional[FrozenSet[str]], str]:
    """The `flags` of the first processor (x86; `Features` on ARM) and its model name."""
    flags: Optional[FrozenSet[str]] = None
    model = ""
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key in ("flags", "features") and flags is None:
            flags = frozenset(value.split())
        elif key == "model name" and not model:
            model = value.strip()
    return flags, model


@lru_cache(maxsize=1)
def read_local_cpu() -> LocalCpu:
    try:
        with open(CPUINFO, encoding="utf-8", errors="replace") as f:
            flags, model = parse_cpuinfo(f.read())
    except OSError:
        flags, model = None, ""
    return LocalCpu(socket.gethostname(), flags, model)
