"""Reading evidence spans back from the trace files they point into, independently of the Advisor's
readers: Kineto JSON through `json`, XSpace through the protobuf runtime (the schema's message
classes, not the columnar decoder). Used by the span tests and the browser tests."""

from __future__ import annotations

import gzip
import json
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, Iterator, List, Set, Tuple

from tb_plugin_advisor.readers.xplane.schema import XSpace


def report_spans(report: Dict[str, Any]) -> Iterator[Tuple[str, Dict[str, Any]]]:
    """(advice id, span) for every span of every recommendation and deeper-view finding."""
    for advice in report.get("recommendations", []):
        for span in advice["evidence_spans"]:
            yield advice["id"], span
    for key in ("kernel_stats", "memory", "collectives", "roofline"):
        for finding in (report.get(key) or {}).get("findings", []):
            for span in finding.get("evidence_spans", []):
                yield finding["id"], span


def kineto_events(path: Path) -> Set[Tuple[str, Any, Any, int, int]]:
    """Every complete event as (name, pid, tid, ts in ns, dur in ns), exactly as the JSON writes them."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    trace = json.loads(raw, parse_float=Decimal)  # exact: an epoch in µs with ns has 19 digits
    out = set()
    for e in trace["traceEvents"]:
        if e.get("ph") == "X" and "ts" in e and "dur" in e:
            out.add((e.get("name"), e.get("pid"), e.get("tid"), int(Decimal(e["ts"]) * 1000),
                     int(Decimal(e["dur"]) * 1000)))
    return out


def kineto_missing(path: Path, spans: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The spans that are no event of the file (name, pid, tid, ts, dur all compared)."""
    events = kineto_events(path)
    missing = []
    for s in spans:
        exact = (s["name"], s["pid"], s["tid"], s["start_ns"], s["duration_ns"])
        as_float = (float(Decimal(s["start_ns"]) / 1000), float(Decimal(s["duration_ns"]) / 1000))
        if exact not in events or (s["ts_us"], s["dur_us"]) != as_float:
            missing.append(s)
    return missing


def xspace_missing(path: Path, spans: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The spans that are no event of the XSpace: plane id, line id, name, start and duration (ps
    compared to the ns of the span, within the ns rounding)."""
    space = XSpace()
    space.ParseFromString(path.read_bytes())
    lines = {(p.id, line.id): (p, line) for p in space.planes for line in p.lines}
    missing = []
    for s in spans:
        found = lines.get((int(s["pid"]), int(s["tid"])))  # ids beyond 2^53 come as strings
        if found is None or not _xspace_has(found[0], found[1], s):
            missing.append(s)
    return missing


def _xspace_has(plane: Any, line: Any, span: Dict[str, Any]) -> bool:
    start_ps, duration_ps = span["start_ns"] * 1000, span["duration_ns"] * 1000
    for event in line.events:
        if abs(line.timestamp_ns * 1000 + event.offset_ps - start_ps) >= 1000:
            continue
        if abs(event.duration_ps - duration_ps) >= 1000:
            continue
        meta = plane.event_metadata[event.metadata_id]
        if span["name"] in (meta.name, meta.display_name, meta.name.split("#")[0]):
            return True
    return False
