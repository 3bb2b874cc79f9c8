"""Conditions of the recommendation rules about CPU hosts: 16-bit math without native support, and
input preprocessing competing with training. Kept beside recommend.py (which holds the table) so that
file stays one job; each check reads only `Facts`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Tuple

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import fixed, format_pct

if TYPE_CHECKING:
    from tb_plugin_advisor.advice.facts import Facts


def cpu_16bit(f: Facts) -> Optional[Tuple[str, str]]:
    """bf16/fp16 dominate a CPU-only profile: low (and saying it is fine) where the profile itself
    shows native 16-bit kernels; medium otherwise, never high: emulated 16-bit math is several times
    slower than fp32, but native math is faster than fp32, and a profile without named kernels cannot
    tell the two apart (nor can the flags of the machine running the Advisor, whatever its host name).
    The evidence says how to find out."""
    if not f.cpu_16bit_dtype:
        return None
    return ("low" if f.cpu_16bit_native is True else "medium"), f.cpu_16bit_evidence


def preprocessing(f: Facts) -> Optional[Tuple[str, str]]:
    share = f.preprocessing_pct
    competes = not f.device_kind or f.input_bound in ("high", "moderate")
    if share < th.PREPROCESSING_STEP_PCT or not competes:
        return None
    severity = "high" if share >= th.PREPROCESSING_HIGH_PCT and not f.device_kind else "medium"
    where = []
    if f.preprocessing_input_threads_ms:
        where.append(f"{fixed(f.preprocessing_input_threads_ms, 1)} ms on tf.data threads")
    if f.preprocessing_step_threads_ms:
        where.append(f"{fixed(f.preprocessing_step_threads_ms, 1)} ms inside the step")
    ops = ", ".join(f.preprocessing_ops[:5])
    host = "on a CPU-only host they compete with training for the same cores" if not f.device_kind else (
        "and the step waits for input")
    return severity, (
        f"Input preprocessing takes {format_pct(share)} of the step's time in CPU time per step "
        f"({'; '.join(where)}); {host}. Largest: {ops}."
    )
