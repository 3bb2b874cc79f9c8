"""A plane's metadata ids → dense indices into its name table, for the events' metadata_id column.

The ids are kept as one sorted int64 array (8 bytes an entry) rather than a dict (a dict and an int
object per entry: 70 bytes, 70 MB for a plane of a million kernel names), and looked up a line at a
time with numpy. An id the plane does not define still counts: it gets a placeholder name
(`<unknown event N>`), appended to the plane's names, in ascending id order as they are met.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Sequence

import numpy as np

from tb_plugin_advisor.lookup import unique_inverse
from tb_plugin_advisor.model import Plane


class DenseIds:
    """Metadata id → dense index: position in the plane's sorted ids, or a placeholder's index; the
    per-op stats of each sorted id (the plane does not keep them: the lines merge them into their
    events' stats as they are read), and which dense indices carry any (a line looks only at those,
    not at every name it uses)."""

    def __init__(self, ids: np.ndarray, stats: Sequence[Mapping[str, Any]], with_stats: np.ndarray):
        self.ids = ids  # ascending, distinct
        self.stats = stats
        self.placeholders: Dict[int, int] = {}
        self.with_stats = with_stats  # the indices whose stats are not empty, ascending

    def __len__(self) -> int:
        return int(self.ids.size) + len(self.placeholders)

    def get(self, metadata_id: int) -> int:
        """The dense index of `metadata_id`, or -1."""
        k = int(np.searchsorted(self.ids, metadata_id))
        if k < self.ids.size and int(self.ids[k]) == metadata_id:
            return k
        return self.placeholders.get(metadata_id, -1)

    def placeholder(self, plane: Plane, metadata_id: int) -> int:
        """An event whose metadata is missing still counts; it gets a visible placeholder name."""
        index = self.placeholders[metadata_id] = len(plane.event_names)
        plane.event_names.append(f"<unknown event {metadata_id}>")
        return index

    def index_of(self, metadata_id: int, plane: Plane) -> int:
        found = self.get(metadata_id)
        return found if found >= 0 else self.placeholder(plane, metadata_id)

    def lookup(self, metadata_ids: np.ndarray, plane: Plane) -> np.ndarray:
        """Metadata ids → dense int32 indices (via a lookup table over the ids' range: no sort)."""
        if metadata_ids.size == 0:
            return np.zeros(0, dtype=np.int32)
        low, high = int(metadata_ids.min()), int(metadata_ids.max())
        if low < 0 or high > 4 * (len(self) + metadata_ids.size):  # sparse or odd ids: sort instead
            unique, inverse = unique_inverse(metadata_ids)
            mapped = self._indices(unique)
            for k in np.flatnonzero(mapped < 0).tolist():
                mapped[k] = self.placeholder(plane, int(unique[k]))
            return mapped[inverse.reshape(-1)]
        table = np.full(high + 1, -1, dtype=np.int32)
        upto = int(np.searchsorted(self.ids, high, side="right"))
        start = int(np.searchsorted(self.ids, 0))
        table[self.ids[start:upto]] = np.arange(start, upto, dtype=np.int32)
        for metadata_id, index in self.placeholders.items():
            if 0 <= metadata_id <= high:
                table[metadata_id] = index
        result = table[metadata_ids]
        missing = np.unique(metadata_ids[result < 0])
        if missing.size:
            for metadata_id in missing.tolist():
                table[metadata_id] = self.placeholder(plane, metadata_id)
            result = table[metadata_ids]
        return result

    def _indices(self, unique: np.ndarray) -> np.ndarray:
        """Dense indices of ascending distinct ids, -1 where neither defined nor a placeholder yet."""
        at = np.minimum(np.searchsorted(self.ids, unique), max(self.ids.size - 1, 0))
        found = np.full(unique.size, -1, dtype=np.int32)
        if self.ids.size:
            hit = self.ids[at] == unique
            found[hit] = at[hit]
        for k in np.flatnonzero(found < 0).tolist():
            found[k] = self.placeholders.get(int(unique[k]), -1)
        return found
