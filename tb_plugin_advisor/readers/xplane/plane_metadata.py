"""A plane's event metadata map → names, display names and per-op stats, in ascending metadata id.

A profile with 100,000 distinct kernels and ops holds as many metadata entries per plane, and reading
each through the protobuf runtime's map costs a wrapper object and several attribute reads (most
of such a profile's read time). The optional C walker (readers/xplane/_wire.c `metadata_table`) takes
the names straight from the plane's bytes; the entries it marks (with stats, or a TraceMe-encoded
name) and any plane it declines are read from the runtime's message, entry by entry, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

import numpy as np

from tb_plugin_advisor.readers.xplane import event_columns
from tb_plugin_advisor.readers.xplane.lines import EventBudget, usable_number

_TRACEME_ENCODED = re.compile(r"^(?P<name>[^#]*)#(?P<args>[^#]*)#$")
_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d*(?:[eE][-+]?\d+)?$")


@dataclass
class EventMetadata:
    """The plane's metadata entries by dense index (ascending metadata id)."""

    ids: List[int]
    names: List[str]
    display_names: List[str]
    stats: List[Dict[str, Any]]


def read_event_metadata(header_bytes: bytes, header, stat_names: Dict[int, str],
                        budget: EventBudget) -> EventMetadata:
    """`header`: the plane's non-line fields as parsed by the runtime; `header_bytes`: the same fields
    serialized (what the C walker reads)."""
    table = _wire_table(header_bytes, header) if event_columns.COMPILED else None
    if table is None:
        ids = sorted(header.event_metadata.keys())
        found = [entry_of(header.event_metadata[mid], stat_names, budget) for mid in ids]
        return EventMetadata(ids, [f[0] for f in found], [f[1] for f in found], [f[2] for f in found])
    ids, names, display_names, special = table
    stats: List[Dict[str, Any]] = [{} for _ in ids]
    for i in np.flatnonzero(special).tolist():
        names[i], display_names[i], stats[i] = entry_of(header.event_metadata[ids[i]], stat_names, budget)
    return EventMetadata(ids, names, display_names, stats)


def _wire_table(header_bytes: bytes, header):
    """The C walker's table in ascending id, or None where it declines or disagrees with the runtime
    (a key given twice: the runtime's map keeps the last entry)."""
    found = event_columns._wire.metadata_table(header_bytes)
    if found is None:
        return None
    keys, names, display_names, special = found
    keys = np.frombuffer(keys, dtype=np.int64)
    special = np.frombuffer(special, dtype=np.uint8)
    if keys.size != len(header.event_metadata):
        return None
    if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):  # (writers emit them in order)
        order = np.argsort(keys, kind="stable")
        keys, special = keys[order], special[order]
        if bool(np.any(keys[1:] == keys[:-1])):
            return None
        names = [names[i] for i in order.tolist()]
        display_names = [display_names[i] for i in order.tolist()]
    return keys.tolist(), names, display_names, special


def entry_of(meta, stat_names: Dict[int, str], budget: EventBudget) -> Tuple[str, str, Dict[str, Any]]:
    """One entry from the runtime's message: name (TraceMe arguments split off), display name, stats."""
    name, encoded = split_traceme_name(meta.name)
    stats = dict(encoded)
    stats.update(usable_stats(meta.stats, stat_names, budget))
    return name, meta.display_name, stats


def usable_stats(stats, stat_names: Dict[int, str], budget: EventBudget) -> Dict[str, Any]:
    """Stat messages → {name: value}; bytes values are left out, NaN/inf/huge numbers counted and
    dropped."""
    out: Dict[str, Any] = {}
    for stat in stats:
        value = stat_value(stat, stat_names)
        if value is not None and not isinstance(value, bytes):
            if not usable_number(value):
                budget.ignored_values += 1
                continue
            out[stat_names.get(stat.metadata_id, str(stat.metadata_id))] = value
    return out


def _parse_value(text: str) -> Any:
    if _INT.match(text):
        return int(text)
    if _FLOAT.match(text):
        return float(text)
    return text


def split_traceme_name(name: str) -> Tuple[str, Dict[str, Any]]:
    """`train#step_num=5,_r=1#` → ("train", {"step_num": 5, "_r": 1}); other names unchanged."""
    if not name.endswith("#"):
        return name, {}
    match = _TRACEME_ENCODED.match(name)
    if not match:
        return name, {}
    stats: Dict[str, Any] = {}
    for pair in match.group("args").split(","):
        key, sep, value = pair.partition("=")
        if sep and key:
            stats[key.strip()] = _parse_value(value.strip())
    return match.group("name"), stats


def stat_value(stat, stat_names: Dict[int, str]) -> Any:
    kind = stat.WhichOneof("value")
    if kind == "ref_value":
        return stat_names.get(stat.ref_value, "")
    if kind == "str_value":
        return stat.str_value
    if kind == "int64_value":
        return stat.int64_value
    if kind == "uint64_value":
        return stat.uint64_value
    if kind == "double_value":
        return stat.double_value
    if kind == "bytes_value":
        return bytes(stat.bytes_value)
    return None
