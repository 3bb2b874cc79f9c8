"""How much of the system's memory this process holds now (its resident set).

A worker that serves many analyses asks it after each one, once the freed pages went back
(heap.py): what it still holds then is what it would keep holding while it waits for the next.
"""

from __future__ import annotations

import os
from typing import Optional


def resident_bytes() -> Optional[int]:
    """This process's resident set in bytes, or None where the system does not say (no /proc)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError, AttributeError):
        return None
