"""The one result type of the precision analyses: precision shares of compute time, the mixed-precision
verdict and its evidence. The device analysis (device.py) and the CPU ones (cpu_tf.py, cpu_torch.py)
all fill the same PrecisionResult, so every later stage reads one shape whatever the profile was.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from tb_plugin_advisor.analysis.classify.patterns import LOW_PRECISION, PRECISIONS, SIXTEEN_BIT
from tb_plugin_advisor.analysis.classify.short_names import short_name


@dataclass
class PrecisionResult:
    """Precision shares of compute time and the mixed-precision verdict.

    basis: "device" (kernel time on GPUs/TPUs), "host" (TF op time on CPU threads, typed by each op's
    output allocation) or "none" (no compute in the profile).
    """

    time_ns: Dict[str, int] = field(default_factory=lambda: {p: 0 for p in PRECISIONS})
    basis: str = "none"
    verdict: str = "unknown"
    summary: str = ""
    evidence: List[str] = field(default_factory=list)
    top_fp32_ops: List[Tuple[str, int]] = field(default_factory=list)
    matrix_time_ns: Dict[str, int] = field(default_factory=lambda: {p: 0 for p in PRECISIONS})
    tf32_possible: bool = False
    steps: Optional[int] = None
    # familiar op label → the oneDNN op type TensorFlow ran it as (onednn_ops.py)
    onednn_ops: Dict[str, str] = field(default_factory=dict)

    # -- plain numbers the recommendation rules test ------------------------------------------------

    @property
    def compute_ns(self) -> int:
        return int(sum(self.time_ns.values()))

    @property
    def precision_pct(self) -> Dict[str, float]:
        return _shares(self.time_ns)

    def share_pct(self, *precisions: str) -> float:
        total = self.compute_ns
        return 100.0 * sum(self.time_ns[p] for p in precisions) / total if total else 0.0

    @property
    def fp32_share_pct(self) -> float:
        """32-bit float (fp32 and TF32) share of compute time."""
        return self.share_pct("fp32", "tf32")

    @property
    def tf32_share_pct(self) -> float:
        return self.share_pct("tf32")

    @property
    def sixteen_bit_share_pct(self) -> float:
        """fp16 + bf16 share of compute time."""
        return self.share_pct(*SIXTEEN_BIT)

    @property
    def low_precision_share_pct(self) -> float:
        """fp16 + bf16 + fp8 + int8 share of compute time."""
        return self.share_pct(*LOW_PRECISION)

    @property
    def unknown_share_pct(self) -> float:
        return self.share_pct("unknown")

    @property
    def matrix_low_precision_pct(self) -> Optional[float]:
        """16/8-bit share of matrix work whose type is known (None when there is none)."""
        known = sum(v for p, v in self.matrix_time_ns.items() if p != "unknown")
        if not known:
            return None
        return 100.0 * sum(self.matrix_time_ns[p] for p in LOW_PRECISION) / known

    def to_json(self) -> Dict[str, Any]:
        scale = 1e-6 / self.steps if self.steps else 1e-6
        return {
            "precision_pct": _rounded_shares(self.time_ns),
            "precision": {
                "verdict": self.verdict,
                "summary": self.summary,
                "top_fp32_ops": [self._op_json(n, t * scale) for n, t in self.top_fp32_ops],
                "evidence": list(self.evidence),
                "basis": self.basis,
                "matrix_low_precision_pct": (
                    None if self.matrix_low_precision_pct is None else round(self.matrix_low_precision_pct, 3)
                ),
                "tf32_possible": self.tf32_possible,
                "time_basis": "per_step" if self.steps else "total",
            },
        }


    def _op_json(self, name: str, time_ms: float) -> Dict[str, Any]:
        row: Dict[str, Any] = {"name": name, "short_name": short_name(name), "time_ms": round(time_ms, 4)}
        if name in self.onednn_ops:
            row["onednn_op"] = self.onednn_ops[name]
        return row


def _shares(time_ns: Dict[str, int]) -> Dict[str, float]:
    total = float(sum(time_ns.values()))
    return {p: (100.0 * time_ns[p] / total if total else 0.0) for p in PRECISIONS}


def _rounded_shares(time_ns: Dict[str, int]) -> Dict[str, float]:
    """Shares rounded for JSON, nudged so they still add up to exactly 100 (or are all 0)."""
    shares = {p: round(v, 3) for p, v in _shares(time_ns).items()}
    total = sum(shares.values())
    if total:
        largest = max(shares, key=lambda p: shares[p])
        shares[largest] = round(shares[largest] + (100.0 - total), 3)
    return shares
