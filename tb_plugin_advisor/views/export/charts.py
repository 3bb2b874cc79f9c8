"""HTML exports draw their charts with the tab's own bundle, so an export looks like the tab.

The page embeds the answer's JSON and the bundle (static/index.js, ~230 kB, Chart.js included) as
inline scripts: it stays one offline file. The bundle sees the JSON and draws each
`<canvas data-advisor-chart=NAME>` with the same data functions and options the tab uses
(frontend/src/reportcharts.ts). Without JavaScript the tables around the charts still tell
everything.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

from tb_plugin_advisor.views.export.markup import html_escape as esc

BUNDLE = Path(__file__).resolve().parents[2] / "static" / "index.js"
DATA_ID = "advisor-export-data"  # frontend/src/exportcharts.ts EXPORT_DATA_ID

# Inline scripts and styles only; nothing may be fetched (the page must open offline, from a file).
CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

CHART_CSS = ".adv-chart{position:relative;width:100%;max-width:1100px;margin:8px 0}"

# name -> (the tab's data-testid for the same chart, height in px, accessible label)
CHARTS: Dict[str, tuple] = {
    "steps": ("chart-steps", 280, "Per-step time breakdown, ms per step"),
    "precision": ("chart-precision", 150, "Precision of compute time, %"),
    "delta": ("chart-delta", 240, "Change of each category, ms per step"),
    "roofline": ("roofline-chart", 320, "Roofline: achieved TFLOP/s against arithmetic intensity, log-log"),
}


def csp_meta() -> str:
    return f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">'


def chart_canvas(name: str) -> str:
    """A fixed-height box with the canvas the bundle draws chart `name` into."""
    testid, height, label = CHARTS[name]
    return (
        f'<div class="adv-chart" style="height:{height}px"><canvas data-advisor-chart="{name}" '
        f'data-testid="{testid}" role="img" aria-label="{esc(label)}"></canvas></div>'
    )


def chart_scripts(data: Dict[str, Any]) -> str:
    """The answer's JSON (`{"report": …}` or `{"diff": …}`) and the bundle that draws the charts."""
    payload = json.dumps(data, allow_nan=False, separators=(",", ":"))
    # "<" never appears raw inside the script element, so no profile string can close it early.
    payload = payload.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    bundle = BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script")
    return (
        f'<script type="application/json" id="{DATA_ID}">{payload}</script>\n'
        f'<script type="module">{bundle}</script>'
    )
