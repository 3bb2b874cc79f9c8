"""The CPU this process runs on: host name and instruction-set flags (/proc/cpuinfo, Linux).

A CPU-only profile that computes in bf16/fp16 is fast only where the CPU has native 16-bit math. These
flags describe the machine running the Advisor, which is not necessarily the one that captured the
profile: a host name is no identity (`vm`, `localhost`, a container id are shared by many machines),
so the report quotes them as context and never lets them lower a warning. Read once per process;
unreadable (not Linux, a sandbox) means "not known", never an error.
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass
from functools import lru_cache
from typing import Dict, FrozenSet, Optional

CPUINFO = "/proc/cpuinfo"

# Host names that many machines share, so a match says even less
# (tests/analysis/precision/test_cpu_16bit_evidence.py backs each entry with a name).
GENERIC_HOST_NAMES: Dict[str, re.Pattern] = {
    "loopback": re.compile(r"^(localhost|localhost\.localdomain|127\.0\.0\.1)$", re.I),
    # default names of VM images, cloud shells and notebook services
    "image_default": re.compile(r"^(vm|ubuntu|debian|fedora|centos|raspberrypi|instance(-\d+)?|"
                                r"cs-\d+-default|colab|sagemaker|jupyter(-\w+)?)$", re.I),
    # Docker's default host name: the container id's first 12 hex digits
    "container_id": re.compile(r"^[0-9a-f]{12}$"),
    # Kubernetes pods and CI runners: generated names reused across jobs and machines
    "generated": re.compile(r"^(runner|runnervm\w*|fv-az\d+-\d+|buildkitsandbox|pod|worker-?\d*)$", re.I),
}


def is_generic_host_name(name: Optional[str]) -> bool:
    """Is `name` one that many machines share (so matching it identifies nothing)?"""
    return bool(name) and any(p.match(name) for p in GENERIC_HOST_NAMES.values())


@dataclass(frozen=True)
class LocalCpu:
    """The machine running the Advisor (never assumed to be the one that captured a profile)."""

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
