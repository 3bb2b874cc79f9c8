"""Text and Markdown renderings of a trend (`tb-advisor/trend/1`): per series, a table of captures
(median step and its p10–p90 spread, the main shares, the verdict), change points marked, and one
line per change point with its p-values and its cause. Markdown is meant for a CI comment."""

from __future__ import annotations

from typing import Any, Callable, Dict, List

from tb_plugin_advisor.formatting import format_number, format_pct, significant
from tb_plugin_advisor.views.export.markup import markdown_escape, terminal_data, terminal_output

ARROW = "\u2192"


def _p(value: Any) -> str:
    return "n/a" if value is None else significant(float(value), 2)


def _pct_signed(value: Any) -> str:
    if value is None:
        return "n/a"
    text = format_pct(abs(value))
    return ("+" if value >= 0 else "\u2212") + text


def _share(capture: Dict[str, Any], key: str) -> str:
    return format_pct((capture.get("breakdown_pct") or {}).get(key))


def _change_line(cp: Dict[str, Any]) -> str:
    verdict = "significant" if cp["significant"] else f"not significant: {cp['reason']}"
    outliers = cp.get("outlier_captures") or []
    left_out = f"; outlier captures left out: {', '.join(f'#{i}' for i in outliers)}" if outliers else ""
    return (
        f"#{cp['index']} {cp['run']}: step {format_number(cp['step_ms_before'])} {ARROW} "
        f"{format_number(cp['step_ms_after'])} ms ({_pct_signed(cp['delta_pct'])}, {verdict}; "
        f"p = {_p(cp['p_value'])} between captures, {_p(cp['p_value_steps'])} on steps; "
        f"noise ±{format_pct(cp['noise_pct'])}{left_out}). Cause: {cp['cause']['summary']}."
    )


def _rows(series: Dict[str, Any]) -> List[List[str]]:
    marks = {cp["index"]: ("\u25b2" if cp["delta_pct"] > 0 else "\u25bc") for cp in series["change_points"]
             if cp["significant"]}
    rows = []
    for c in series["captures"]:
        if c.get("error"):
            rows.append([str(c["index"]), c["run"], "error", "", "", "", "", "", c["error"]])
            continue
        spread = f"{format_number(c.get('p10_ms'))}\u2013{format_number(c.get('p90_ms'))}"
        rows.append([
            str(c["index"]) + (" " + marks[c["index"]] if c["index"] in marks else ""),
            c["run"], format_number(c.get("step_ms")), spread, str(c.get("steps")),
            _share(c, "input"), _share(c, "device_compute"), format_pct(c.get("mfu_pct")),
            str(c.get("bottleneck") or ""),
        ])
    return rows


def _label(cp: Dict[str, Any]) -> str:
    """How a change point is introduced: counted, made by the machine, or only the largest move."""
    if cp["significant"]:
        return "Change point"
    return "Machine change, not counted:" if cp.get("machine_change") else "Largest move"


HEADER = ["#", "capture", "median ms", "p10\u2013p90", "steps", "input", "device", "MFU", "bottleneck"]


def _text(trend: Dict[str, Any]) -> str:
    out: List[str] = []
    for s in trend["series"]:
        out.append(f"Trend of {s['run']}: {len(s['captures'])} captures, noise between captures "
                   f"±{format_pct(s.get('noise_pct'))}")
        rows = [HEADER] + _rows(s)
        widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
        for r in rows:
            out.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        significant_points = [cp for cp in s["change_points"] if cp["significant"]]
        if not significant_points:
            out.append("No change point: every capture is within the noise of the series.")
        for cp in s["change_points"]:
            out.append(f"{_label(cp)} {_change_line(cp)}")
        out += s.get("notes") or []
        out.append("")
    return "\n".join(out)


def _markdown(trend: Dict[str, Any]) -> str:
    esc: Callable[[Any], str] = markdown_escape
    out: List[str] = []
    for s in trend["series"]:
        out.append(f"### Trend of {esc(s['run'])}")
        out.append("")
        significant_points = [cp for cp in s["change_points"] if cp["significant"]]
        if significant_points:
            for cp in significant_points:
                out.append(f"- **{'Regression' if cp['delta_pct'] > 0 else 'Speed-up'}** at "
                           + esc(_change_line(cp)))
        else:
            out.append(f"- No change point: every capture is within the noise of the series "
                       f"(±{format_pct(s.get('noise_pct'))} between captures).")
        for cp in s["change_points"]:
            if not cp["significant"]:
                out.append(f"- {_label(cp)} " + esc(_change_line(cp)))
        out.append("")
        out.append("| " + " | ".join(HEADER) + " |")
        out.append("|" + "---|" * len(HEADER))
        for r in _rows(s):
            out.append("| " + " | ".join(esc(cell) for cell in r) + " |")
        for note in s.get("notes") or []:
            out.append("")
            out.append(f"_{esc(note)}_")
        out.append("")
    return "\n".join(out)


def render(trend: Dict[str, Any], fmt: str) -> str:
    """`text` or `md` (JSON is written by the command itself)."""
    data = terminal_data(trend)
    return terminal_output(_markdown(data) if fmt == "md" else _text(data))
