"""One rounding rule for every number a person reads: the verdict's sentence, the exports' tables and
the tab (frontend/src/format.ts) write the same value the same way.

JavaScript's toFixed rounds the exact binary value half away from zero; Python's format() rounds
half to even, so 12.5 would read "13 %" in the tab and "12 %" in an export. These functions round
like toFixed. frontend/test/format_cases.json holds the cases both test suites check.

No function here raises, whatever the number: a profile can hold any value (a tensor shape of 2^41, a
count past the float range), and an export that dies on one figure loses every other. Huge values
are written as toFixed writes them from 1e21 up ("4.2e+47"), non-finite ones as a dash (or as
toFixed's "NaN" / "Infinity" where its exact text is asked for).
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_UP, Context, Decimal
from typing import Any, Optional

DASH = "–"
# toFixed writes numbers from 1e21 up as Number.toString does (an exponent), not digit by digit.
EXPONENT_FROM = 1e21
# Digits a rounded value can need: 21 before the point and toFixed's 100 after it, with room.
_DECIMALS = Context(prec=160, rounding=ROUND_HALF_UP)


def _as_float(x: float) -> float:
    """`x` as a float; an int past the float range is infinite (what JavaScript would read)."""
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _half_up(x: float, exponent: int) -> Decimal:
    """The exact value of finite `x` rounded half up to a multiple of 10**exponent (what toFixed does)."""
    return Decimal(x).quantize(Decimal(1).scaleb(exponent), context=_DECIMALS)


def _number_string(x: float) -> str:
    """Number.prototype.toString for a float: the shortest digits that read back as `x` (Python's
    repr chooses the same digits and writes the same exponent from 1e16 up)."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    return repr(x)


def fixed(x: float, digits: int) -> str:
    """`x.toFixed(digits)` as JavaScript writes it."""
    value = _as_float(x)
    if not math.isfinite(value) or abs(value) >= EXPONENT_FROM:
        return _number_string(value)
    return str(_half_up(value, -digits))


def signed(x: float, digits: int) -> str:
    """`fixed` with a sign always written: "+1.5", "-0.3", "+0.0"."""
    text = fixed(x, digits)
    return text if text.startswith("-") else "+" + text


def _rounded_float(x: float, exponent: int) -> float:
    """`x` rounded half up to a multiple of 10**exponent, as a float; `x` itself when the rounding
    carries it past the largest float (format() then rounds it the same way)."""
    value = float(_half_up(x, exponent))
    return value if math.isfinite(value) else x


def significant(x: float, digits: int) -> str:
    """`digits` significant digits, rounded half up like `fixed`, written as Python's `g` writes them
    (no trailing zeros; an exponent only for very small or large values): 0.0012, 3.5, 1.2e-05."""
    x = _as_float(x)
    if not math.isfinite(x) or x == 0:
        return format(x, f".{digits}g")
    exponent = math.floor(math.log10(abs(x)))
    return format(_rounded_float(x, exponent - digits + 1), f".{digits}g")


def scientific(x: float, digits: int) -> str:
    """An exponent and `digits` decimals, rounded half up like `fixed`: 1.2e-05."""
    x = _as_float(x)
    if not math.isfinite(x) or x == 0:
        return format(x, f".{digits}e")
    exponent = math.floor(math.log10(abs(x)))
    return format(_rounded_float(x, exponent - digits), f".{digits}e")


def plain(x: float) -> str:
    """A count or a configured constant as people write it: 3, 0.05, 1.5 (up to six significant digits)."""
    return format(_as_float(x), "g")


def _finite(x: Optional[float]) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(_as_float(x))


def _clean(s: str) -> str:
    """Trailing zeros of the decimals dropped ("2.50" → "2.5"), never those of an exponent."""
    if "." in s and "e" not in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def pct_number(x: float) -> str:
    """The digits of a percent: whole from 10 up, one decimal below ("41", "4.2", "0.3")."""
    s = fixed(x, 1) if x != 0 and abs(x) < 10 else fixed(x, 0)
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


def format_pct(x: Optional[float]) -> str:
    """ "41 %", "4.2 %", "0 %"; a dash for a missing or non-finite value."""
    return f"{pct_number(x)} %" if _finite(x) else DASH


def format_number(x: Optional[float]) -> str:
    """About three significant digits, thousands grouped: 0.042, 4.26, 42.3, 1,234."""
    if not _finite(x):
        return DASH
    a = abs(_as_float(x))
    s = _clean("0" if a == 0 else fixed(x, 3 if a < 1 else 2 if a < 10 else 1 if a < 100 else 0))
    whole, _, frac = s.partition(".")
    sign = "-" if whole.startswith("-") else ""
    digits = whole.lstrip("-")
    grouped = f"{int(digits):,}" if digits.isdigit() else digits  # "4e+47" stays as it is
    return sign + grouped + (f".{frac}" if frac else "")


def trace_micros(x: Optional[float]) -> str:
    """A time in a trace as the trace writes it, µs to the ns ("708607.752 µs"), as the tab's
    formatTraceTime: how a span is found again in a trace viewer, so never rounded to a few digits."""
    return f"{_clean(fixed(x, 3))} µs" if _finite(x) else DASH


def format_ms(x: Optional[float]) -> str:
    return f"{format_number(x)} ms" if _finite(x) else DASH


def format_elapsed(ms: Optional[float]) -> str:
    """How far into a step or a trace something happens, as a person says it: ms below a second
    ("12.4 ms"), seconds from there ("1.52 s"); as the tab's formatElapsed."""
    if not _finite(ms):
        return DASH
    return f"{format_number(ms / 1000)} s" if abs(_as_float(ms)) >= 1000 else format_ms(ms)


def rounded(value: Optional[float], digits: int = 4) -> Optional[float]:
    """A number for the JSON contracts, rounded to `digits` decimals; None for None and for a value
    that is not a finite number (JSON has no NaN or infinity: it would fail the whole answer). Scripts
    read these, people read the strings above."""
    if value is None:
        return None
    number = _as_float(value)
    return round(number, digits) if math.isfinite(number) else None


def finite_json(value: Any) -> Any:
    """A JSON value (dicts, lists, numbers, strings) with every number that is not finite replaced
    by None, as `rounded` does one at a time: figures derived from hostile inputs (a difference of
    two values near the float maximum, a share of a value near zero) must not fail the whole answer,
    and null already means "unknown" in every contract."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite_json(v) for v in value]
    return value


BINARY_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10))


def format_bytes(x: Optional[float], digits: int = 1) -> str:
    """A size in binary units: "1.5 GiB", "640 KiB" (`digits` decimals), whole bytes below 1 KiB; a
    dash for a missing or non-finite value."""
    if not _finite(x):
        return DASH
    x = _as_float(x)
    for unit, size in BINARY_UNITS:
        if abs(x) >= size:
            return f"{fixed(x / size, digits)} {unit}"
    return f"{fixed(x, 0)} B"


def format_memory(x: Optional[float]) -> str:
    """A memory size as the deeper views' findings write it: GiB with two decimals from 1 GiB up,
    else MiB with one ("0.5 MiB" for a small message: one unit below the GiB, never KiB or bytes); a
    dash for a missing or non-finite value."""
    if not _finite(x):
        return DASH
    x = _as_float(x)
    gib, mib = dict(BINARY_UNITS)["GiB"], dict(BINARY_UNITS)["MiB"]
    return f"{fixed(x / gib, 2)} GiB" if x >= gib else f"{fixed(x / mib, 1)} MiB"
