"""tf.data's iterator events as data: which node kinds make up each pipeline stage, and which kinds
say parallel map, cache, interleave or file reading. Read by analysis/step_time/inputs.py, which turns the
`Iterator::…` events of a profile into the input-pipeline diagnosis."""

from __future__ import annotations

import re
from typing import Dict, Optional, Tuple

TF_DATA_STAGES: Dict[str, Tuple[str, ...]] = {
    "source": (
        "TFRecord",
        "TextLine",
        "FixedLengthRecord",
        "TensorSlice",
        "Tensor",
        "Range",
        "FlatMap",
        "Interleave",
        "ParallelInterleave",
        "ParallelInterleaveV2",
        "ParallelInterleaveV3",
        "ParallelInterleaveV4",
        "LegacyParallelInterleave",
        "SSTable",
        "Csv",
        "SqlDataset",
        "ListFiles",
        "Snapshot",
        "Load",
        "DataService",
    ),
    "map": ("Map", "ParallelMap", "ParallelMapV2", "MapAndBatch", "Filter", "ParallelFilter"),
    "batch": ("Batch", "BatchV2", "PaddedBatch", "PaddedBatchV2", "ParallelBatch", "Rebatch", "Unbatch"),
    "prefetch": ("Prefetch",),
}
# `Generator` nodes (Dataset.from_generator, and tf.distribute's per-device iterators that pull from
# the host pipeline) hide whatever runs inside them: their time stays stage "other".
TF_DATA_OPAQUE_KINDS = ("Generator", "FromGenerator")
TF_DATA_CACHE_KINDS = ("Cache", "MemoryCache", "CacheDataset")
TF_DATA_PARALLEL_MAP_KINDS = ("ParallelMap", "ParallelMapV2", "MapAndBatch")
TF_DATA_SEQUENTIAL_MAP_KINDS = ("Map",)
TF_DATA_INTERLEAVE_KINDS = (
    "ParallelInterleave",
    "ParallelInterleaveV2",
    "ParallelInterleaveV3",
    "ParallelInterleaveV4",
    "LegacyParallelInterleave",
    "Interleave",
)
TF_DATA_FILE_SOURCE_KINDS = ("TFRecord", "TextLine", "FixedLengthRecord", "SSTable", "Csv")

_ITERATOR_KIND = re.compile(r"^Iterator::(?:.*::)?(?P<kind>[A-Za-z]\w*?)(?:\[\d+\])?$")
_STAGE_OF_KIND = {kind: stage for stage, kinds in TF_DATA_STAGES.items() for kind in kinds}


def iterator_kind(event_name: str) -> Optional[str]:
    """`Iterator::Root::BatchV2::Map::ForeverRepeat[1]::TensorSlice` → `TensorSlice`."""
    match = _ITERATOR_KIND.match(event_name)
    return match.group("kind") if match else None


def iterator_parent(event_name: str) -> Optional[str]:
    """The enclosing iterator's event name (`Iterator::Root::BatchV2::Map` → `Iterator::Root::BatchV2`)."""
    head, sep, _tail = event_name.rpartition("::")
    if not sep or head == "Iterator":
        return None
    return re.sub(r"\[\d+\]$", "", head)


def stage_of_kind(kind: Optional[str]) -> str:
    """source | map | batch | prefetch | other."""
    if kind is None:
        return "other"
    return _STAGE_OF_KIND.get(kind, "other")
