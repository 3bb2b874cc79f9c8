"""HTML exports embed two scripts of ours (the answer's JSON and the tab's bundle, export_charts.py):
checks of escaping look at the rest of the page, after making sure those two are exactly what we put."""

from __future__ import annotations

import json
import re

from tb_plugin_advisor.views.export.charts import BUNDLE, DATA_ID

_SCRIPTS = re.compile(
    rf'<script type="application/json" id="{DATA_ID}">(?P<data>[^<]*)</script>\n'
    r'<script type="module">(?P<bundle>.*?)</script>',
    re.S,
)


def outside_scripts(page: str) -> str:
    """The page without its embedded JSON and bundle; fails when either is not ours or is there twice."""
    found = list(_SCRIPTS.finditer(page))
    assert len(found) == 1, f"{len(found)} embedded script pairs"
    match = found[0]
    json.loads(match["data"])  # no "<" in it: nothing in the JSON can close its script element
    assert match["bundle"] == BUNDLE.read_text(encoding="utf-8").replace("</script", "<\\/script")
    return page[: match.start()] + page[match.end():]
