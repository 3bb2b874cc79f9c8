"""The expected gain of a recommendation: the type every rule and finding carries (advice/gains.py makes
the rules' ones; the deeper views' findings make their own)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Optional


@dataclass(frozen=True)
class ExpectedGain:
    """Step time a fix can save, ms per step: [low_ms, high_ms] (None: no estimate), and why."""

    low_ms: Optional[float]
    high_ms: Optional[float]
    step_ms: float
    basis: str

    def to_json(self) -> Dict[str, Any]:
        if self.low_ms is None or self.high_ms is None or self.step_ms <= 0:
            return {"ms_per_step": None, "pct": None, "basis": self.basis}
        share = 100.0 / self.step_ms
        return {
            "ms_per_step": [round(self.low_ms, 3), round(self.high_ms, 3)],
            "pct": [round(self.low_ms * share, 2), round(self.high_ms * share, 2)],
            "basis": self.basis,
        }

    @property
    def middle_ms(self) -> float:
        """For ranking: the interval's middle; -1 without an estimate (ranked last)."""
        if self.low_ms is None or self.high_ms is None:
            return -1.0
        return (self.low_ms + self.high_ms) / 2
