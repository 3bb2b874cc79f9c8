"""A one-line progress bar on stderr while the CLI reads profiles: stage, bytes read, elapsed time.

Only drawn when stderr is a terminal, so logs, pipes and `--format json` output never see it; the
line is erased when the work ends.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Optional, TextIO

from tb_plugin_advisor.formatting import fixed

BAR_CELLS = 24
MIN_INTERVAL_S = 0.1  # redraws per second are capped: a 300 MB file calls back thousands of times


def _mb(n: int) -> str:
    return f"{fixed(n / 1e6, 1)}"


class ProgressBar:
    """`bar.callback(stage)` gives an on_progress(done_bytes, total_bytes) for one stage (e.g.
    "reading baseline run1_naive/…"); `bar.close()` erases the line."""

    def __init__(self, stream: Optional[TextIO] = None, clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock = clock
        self.started = clock()
        self.last_drawn = -1.0
        self.width = 0

    def line(self, stage: str, done: int, total: int, now: float) -> str:
        fraction = min(1.0, done / total) if total > 0 else 1.0
        filled = int(round(fraction * BAR_CELLS))
        bar = "#" * filled + "." * (BAR_CELLS - filled)
        elapsed = now - self.started
        percent = fixed(fraction * 100, 0).rjust(3)
        return f"{stage} [{bar}] {percent} % {_mb(done)}/{_mb(total)} MB {fixed(elapsed, 1)} s"

    def callback(self, stage: str) -> Callable[[int, int], None]:
        def on_progress(done: int, total: int) -> None:
            if not self.enabled:
                return
            now = self.clock()
            if done < total and now - self.last_drawn < MIN_INTERVAL_S:
                return
            self.last_drawn = now
            self._draw(self.line(stage, done, total, now))

        return on_progress

    def _draw(self, text: str) -> None:
        pad = max(0, self.width - len(text))
        self.stream.write("\r" + text + " " * pad)
        self.stream.flush()
        self.width = len(text)

    def close(self) -> None:
        if self.enabled and self.width:
            self.stream.write("\r" + " " * self.width + "\r")
            self.stream.flush()
            self.width = 0
