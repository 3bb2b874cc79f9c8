"""A plane's event metadata map → names and per-op stats, in ascending metadata id (display names are
not kept: nothing reads them).

A profile with 100,000 distinct kernels and ops holds as many metadata entries per plane, and reading
each through the protobuf runtime's map costs a wrapper object and several attribute reads (most
of such a profile's read time). The optional C walker (readers/xplane/_wire.c `metadata_table`) takes
the names straight from the plane's bytes; the entries it marks (with stats, or a TraceMe-encoded
name) and any plane it declines are read from the runtime's message, entry by entry, as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from tb_plugin_advisor.model import NO_STATS
from tb_plugin_advisor.readers.xplane import event_columns, schema
from tb_plugin_advisor.readers.xplane.lines import EventBudget, usable_number
from tb_plugin_advisor.readers.xplane.wire import ByteSource

_TRACEME_ENCODED = re.compile(r"^(?P<name>[^#]*)#(?P<args>[^#]*)#$")
_INT = re.compile(r"^-?\d+$")
_FLOAT = re.compile(r"^-?\d+\.\d*(?:[eE][-+]?\d+)?$")


@dataclass
class EventMetadata:
    """The plane's metadata entries by dense index (ascending metadata id)."""

    ids: np.ndarray  # int64, ascending
    names: List[str]
    stats: List[Mapping[str, Any]]  # model.NO_STATS for the entries without any
    with_stats: np.ndarray  # the dense indices whose stats are not empty, ascending


_Header = Tuple[Any, Dict[int, str], EventMetadata]  # (runtime message, stat names by id, event metadata)
Spans = List[Tuple[int, int]]


def read_plane_header(source: ByteSource, runs: Spans, budget: EventBudget) -> _Header:
    """A plane's non-line fields (the byte ranges `runs` of `source`): the runtime's message of them,
    stat names by id, and the event metadata. Where the C walker reads the metadata map, the message
    holds every field but the map, and the map is read a window of the file at a time: neither the
    whole map's bytes nor the runtime's message of it (36 MB and 190 MB for a million names) are
    held beside the names."""
    if event_columns.COMPILED:
        found = _walked_header(source, runs, budget)
        if found is not None:
            return found
    header_bytes = b"".join(bytes(source.read(start, end)) for start, end in runs)
    header = schema.XPlane.FromString(header_bytes)
    stat_names = {key: meta.name for key, meta in header.stat_metadata.items()}
    return header, stat_names, read_event_metadata(header_bytes, header, stat_names, budget)


WINDOW = 2 << 20  # bytes of the metadata map read, checked and named at a time
_METADATA_TAG = b"\x22"  # XPlane field 4 (the event metadata map), length-delimited


def _walked_header(source: ByteSource, runs: Spans, budget: EventBudget) -> Optional[_Header]:
    """read_plane_header with the walker; None where it declines or the runtime sees the map otherwise.

    Each window of whole fields is parsed by the runtime too (it decides what is valid: an entry it
    drops or merges sends the plane to the whole parse, as before, and an error is its error), and
    dropped once its entries are counted; the walker names the same window's entries. The entries the
    walker marks (stats, TraceMe names) are kept raw and read by the runtime at the end."""
    others: List[bytes] = []  # the non-map fields, in file order
    marked: List[bytes] = []  # the marked entries, as fields of their own
    keys: List[np.ndarray] = []
    special: List[np.ndarray] = []
    names: List[str] = []
    in_runtime = 0
    for begin, end in runs:
        pos = begin
        while pos < end:
            window = source.read(pos, min(pos + WINDOW, end))
            found = event_columns._wire.split_window(window, pos, end, 4, 0, -1, 0, end - pos, 0)
            if found is None or found[2] <= pos:
                return None
            spans, other_runs, stop, run_start, _ = found
            chunk = bytes(window[: stop - pos] if stop - pos <= len(window) else source.read(pos, stop))
            del window
            pairs = np.frombuffer(other_runs, dtype=np.int64).reshape(-1, 2).tolist()
            if run_start >= 0:
                pairs.append([run_start, stop])
            others += [chunk[a - pos : b - pos] for a, b in pairs]
            in_runtime += len(schema.XPlane.FromString(chunk).event_metadata)
            table = event_columns._wire.metadata_table(chunk)
            entries = np.frombuffer(spans, dtype=np.int64).reshape(-1, 2) - pos
            if table is None or len(table[1]) != entries.shape[0]:
                return None
            keys.append(np.frombuffer(table[0], dtype=np.int64))
            names += table[1]
            special.append(np.frombuffer(table[3], dtype=np.uint8))
            for a, b in entries[np.flatnonzero(special[-1])].tolist():
                marked.append(_METADATA_TAG + schema.encode_varint(b - a) + chunk[a:b])
            del table, chunk
            pos = stop
    if in_runtime != len(names):
        return None
    ordered = _in_key_order(np.concatenate(keys + [np.zeros(0, np.int64)]), names,
                            np.concatenate(special + [np.zeros(0, np.uint8)]))
    del keys, special
    if ordered is None:
        return None
    header = schema.XPlane.FromString(b"".join(others))
    stat_names = {key: meta.name for key, meta in header.stat_metadata.items()}
    ids, names, by_key = ordered
    runtime = schema.XPlane.FromString(b"".join(marked))
    return header, stat_names, _with_marked(ids, names, by_key, runtime.event_metadata, stat_names, budget)


def read_event_metadata(header_bytes: bytes, header, stat_names: Dict[int, str],
                        budget: EventBudget) -> EventMetadata:
    """`header`: the plane's non-line fields as parsed by the runtime; `header_bytes`: the same fields
    serialized (what the C walker reads)."""
    table = _wire_table(header_bytes, header) if event_columns.COMPILED else None
    if table is None:
        ids = sorted(header.event_metadata.keys())
        found = [entry_of(header.event_metadata[mid], stat_names, budget) for mid in ids]
        stats = [f[1] or NO_STATS for f in found]
        return EventMetadata(np.array(ids, dtype=np.int64), [f[0] for f in found], stats,
                             np.array([i for i, entry in enumerate(stats) if entry], dtype=np.int64))
    ids, names, special = table
    return _with_marked(ids, names, special, header.event_metadata, stat_names, budget)


def _with_marked(ids: np.ndarray, names: List[str], marked: np.ndarray, entries: Mapping[int, Any],
                 stat_names: Dict[int, str], budget: EventBudget) -> EventMetadata:
    """The walker's names, with the entries it marked (stats, TraceMe-encoded names) read from the
    runtime's map `entries`; the others have no stats."""
    stats: List[Mapping[str, Any]] = [NO_STATS] * len(names)
    with_stats: List[int] = []  # (only marked entries can have any: no pass over a million names)
    for i in np.flatnonzero(marked).tolist():
        names[i], stats[i] = entry_of(entries[int(ids[i])], stat_names, budget)
        if stats[i]:
            with_stats.append(i)
    return EventMetadata(ids, names, stats, np.array(with_stats, dtype=np.int64))


def _wire_table(header_bytes: bytes, header):
    """The C walker's table in ascending id, or None where it declines or disagrees with the runtime
    (a key given twice: the runtime's map keeps the last entry)."""
    found = event_columns._wire.metadata_table(header_bytes)
    if found is None:
        return None
    keys, names, _, special = found
    keys = np.frombuffer(keys, dtype=np.int64)
    special = np.frombuffer(special, dtype=np.uint8)
    if keys.size != len(header.event_metadata):
        return None
    return _in_key_order(keys, names, special)


def _in_key_order(keys: np.ndarray, names: List[str], special: np.ndarray):
    """The walker's entries (file order) by ascending key; None when a key is given twice."""
    if keys.size > 1 and not bool(np.all(keys[1:] > keys[:-1])):  # (writers emit them in order)
        order = np.argsort(keys, kind="stable")
        keys, special = keys[order], special[order]
        if bool(np.any(keys[1:] == keys[:-1])):
            return None
        names = [names[i] for i in order.tolist()]
    return keys, names, special


def entry_of(meta, stat_names: Dict[int, str], budget: EventBudget) -> Tuple[str, Dict[str, Any]]:
    """One entry from the runtime's message: name (TraceMe arguments split off), stats."""
    name, encoded = split_traceme_name(meta.name)
    stats = dict(encoded)
    stats.update(usable_stats(meta.stats, stat_names, budget))
    return name, stats


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
