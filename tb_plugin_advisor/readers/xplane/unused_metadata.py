"""A plane's event metadata that no event of it uses is dropped once its lines are read.

An XLA device plane names every op of the compiled program, while a capture holds the ops that ran in
its window: a plane of a million metadata names can have hundreds of thousands no event refers to. Each
is a Python string (about 70 bytes), and every analysis that classifies a plane's names would classify
those too. Nothing reads a name but through an event's dense index, so the name table is cut to the used
entries (in their order) and the lines' indices renumbered. A plane without events keeps its names:
`/host:metadata` names the compiled programs as metadata entries, not as events.
"""

from __future__ import annotations

from typing import Any, List

import numpy as np

from tb_plugin_advisor.model import Plane


def drop_unused_metadata(plane: Plane) -> None:
    """Cut the plane's name table to the entries its events use, and renumber every line's
    metadata_index to match. The table is cut in place: lines hold it (model.Line's plane tables),
    not a copy."""
    count = len(plane.event_names)
    if not any(len(line) for line in plane.lines):
        return
    used = np.zeros(count, dtype=bool)
    for line in plane.lines:
        used[line.metadata_index] = True
    kept = np.flatnonzero(used)
    if kept.size == count:
        return
    renumbered = np.full(count, -1, dtype=np.int32)
    renumbered[kept] = np.arange(kept.size, dtype=np.int32)
    for line in plane.lines:
        line.metadata_index = renumbered[line.metadata_index]
    _keep_only(plane.event_names, kept)


def _keep_only(table: List[Any], kept: np.ndarray) -> None:
    """Cut `table` to the positions `kept` (ascending), in place. Where the dropped entries lie in a few
    runs (an XLA program's ops that ran are mostly one stretch of its ids), each run is deleted as a
    slice, the last first: a move of the entries after it, no Python step per entry. Otherwise the
    entries are held by an object array while the list is emptied, so the dropped ones are freed before
    the list is refilled (a list of the kept entries made beside the whole one, by a Python int per
    position, was the read's peak)."""
    runs = _dropped_runs(kept, len(table))
    if runs.shape[0] <= SLICED_RUNS:
        for start, stop in runs[::-1].tolist():
            del table[start:stop]
        return
    entries = np.fromiter(table, dtype=object, count=len(table))
    table.clear()
    entries = entries[kept]
    table.extend(entries.tolist())


SLICED_RUNS = 64  # runs of dropped entries deleted one slice at a time (each moves the entries after it)


def _dropped_runs(kept: np.ndarray, count: int) -> np.ndarray:
    """The [start, stop) runs of the positions below `count` that `kept` (ascending) leaves out."""
    bounds = np.concatenate(([-1], kept, [count]))
    gaps = np.flatnonzero(np.diff(bounds) > 1)
    return np.stack((bounds[gaps] + 1, bounds[gaps + 1]), axis=1)
