"""The step-time categories in one table: their keys in the JSON's order (ARCHITECTURE.md §2), the
words people read, what each one means, and the tab's chart colours.

The verdict's sentences, the diff's summary and tables, the text/Markdown/HTML exports and the tab
(frontend/src/categories.ts, held to this table by tests/analysis/step_time/test_categories.py) all take their
words from here, so a category reads the same wherever it appears. Sentences use the label in lower case.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Tuple


@dataclass(frozen=True)
class Category:
    """One category of step time, with the words and colours every view shows it in."""

    key: str
    label: str  # a table row or chart legend; sentences use label.lower()
    help: str  # what the time is, as the tab's tooltip says it
    light: str  # chart colour on a light background (the exports use it too)
    dark: str  # and on a dark one


TABLE: Tuple[Category, ...] = (
    Category("input", "Input wait",
             "waiting for the input pipeline (tf.data get-next, host-to-device input copies)",
             "#d93025", "#f28b82"),
    Category("device_compute", "Device compute", "kernels running on the accelerator", "#1a73e8", "#8ab4f8"),
    Category("host_compute", "Host compute", "ops computed on the host CPU", "#188038", "#81c995"),
    Category("kernel_launch", "Kernel launch", "host time spent launching kernels", "#e37400", "#fcad70"),
    Category("memcpy", "Memory copies", "copies between host and device memory", "#9334e6", "#c58af9"),
    Category("communication", "Communication", "collectives and send/receive between devices or hosts",
             "#007b83", "#78d9ec"),
    Category("idle", "Idle", "nothing recorded on the device or host threads", "#9aa0a6", "#5f6368"),
    Category("other", "Other host work",
             "recorded time that fits no other category (Python, framework overhead)", "#795548", "#bcaaa4"),
)

CATEGORIES: Tuple[str, ...] = tuple(c.key for c in TABLE)  # the JSON's order
LABELS: Dict[str, str] = {c.key: c.label for c in TABLE}
COLORS: Dict[str, str] = {c.key: c.light for c in TABLE}
# Tables and bars in the exports: every category, idle (the time nobody claimed) last.
DISPLAY_ORDER: Tuple[str, ...] = tuple(k for k in CATEGORIES if k != "idle") + ("idle",)


def in_words(key: str) -> str:
    """The category as a sentence names it ("memory copies"); an unknown key as itself."""
    return LABELS[key].lower() if key in LABELS else key.replace("_", " ")
