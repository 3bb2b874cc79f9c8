"""What feeds the step, as one `input_pipeline` result whose `kind` says which of three sources it
read: a tf.data pipeline ("tf.data": which stage the step waits for and how the pipeline is
configured — parallelism, prefetch, autotune — from the `Iterator::…` events TensorFlow records),
a PyTorch DataLoader ("dataloader": dataloader.py), or the user's own input annotations
("annotations", JAX and custom loops: input_annotations.py); "none" when the profile shows none.
The tf.data keys keep their meaning for every kind (unknown/null outside tf.data), so scripts that
read them keep working.

Iterator events nest by name (`Iterator::Root::BatchV2::Map` runs inside `Iterator::Root::BatchV2`),
so a node's own ("self") time is its total minus its children's totals. Consumer threads (the step's
get-next) show what the step waits for; when the consumer only waits on a prefetch buffer, the wait
is shared out over the stages that fill it, as measured on the producer threads. tf.data rewrites
pipelines (map+batch → MapAndBatch, injected Prefetch), so node kinds can differ from the user's code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import numpy as np

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify import tf_data_names as tf_data
from tb_plugin_advisor.analysis.intervals import in_windows
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown, is_producer_line
from tb_plugin_advisor.analysis.step_time.dataloader import DataLoaderInput, analyze_dataloader
from tb_plugin_advisor.analysis.step_time.input_annotations import AnnotatedInput, analyze_input_annotations
from tb_plugin_advisor.analysis.step_time.steps import Steps
from tb_plugin_advisor.analysis.step_time.windows import StepWindows
from tb_plugin_advisor.formatting import fixed, format_pct
from tb_plugin_advisor.lookup import unique_codes, unique_inverse
from tb_plugin_advisor.model import Line, Profile

STAGES = ("source", "map", "batch", "prefetch", "other")
KINDS = ("tf.data", "dataloader", "annotations", "none")
NO_TF_DATA = "No tf.data iterator events in the profiled steps."
NO_TORCH_INPUT = "No DataLoader next() ranges and no input annotations in the profiled steps."


@dataclass
class IteratorNode:
    """One tf.data iterator (by event name), summed over the steady steps."""

    name: str
    kind: str
    stage: str
    role: str  # consumer | producer
    dataset: str  # the dataset op behind it, e.g. "MapDataset:7" or "fused(ParallelMapDatasetV2:12,…)"
    total_ns: int = 0
    self_ns: int = 0
    count: int = 0
    parallelism: Optional[int] = None
    autotune: Optional[bool] = None
    buffer: Optional[int] = None


@dataclass
class InputPipeline:
    """What the input pipeline waits for and how it is built (tf.data options seen in the trace)."""

    dominant_stage: str  # source | map | batch | prefetch | other | unknown
    stages_ms: Dict[str, float]  # per steady step, what the step waits for, by stage
    parallelism: Optional[int]
    prefetch: Optional[bool]
    autotune: Optional[bool]
    cache: Optional[bool]
    interleave: Optional[bool]
    file_source: Optional[bool]
    sequential_map: Optional[bool]
    evidence: List[str] = field(default_factory=list)
    nodes: List[IteratorNode] = field(default_factory=list)
    steps: int = 1  # node times are totals over this many steady steps
    kind: str = "tf.data"  # one of KINDS
    dataloader: Optional[DataLoaderInput] = None  # kind "dataloader"
    annotations: Optional[AnnotatedInput] = None  # kind "annotations"

    def to_json(self) -> Dict[str, Any]:
        return {
            "kind": self.kind,
            "dataloader": self.dataloader.to_json() if self.dataloader else None,
            "annotations": self.annotations.to_json() if self.annotations else None,
            "dominant_stage": self.dominant_stage,
            "stages_ms": {k: round(v, 4) for k, v in self.stages_ms.items()},
            "parallelism": self.parallelism,
            "prefetch": self.prefetch,
            "autotune": self.autotune,
            "cache": self.cache,
            "interleave": self.interleave,
            "file_source": self.file_source,
            "sequential_map": self.sequential_map,
            "evidence": list(self.evidence),
            "nodes": [
                {
                    "name": n.name,
                    "kind": n.kind,
                    "stage": n.stage,
                    "role": n.role,
                    "dataset": n.dataset,
                    "self_ms": round(n.self_ns / 1e6 / self.steps, 4),
                    "total_ms": round(n.total_ns / 1e6 / self.steps, 4),
                    "count": round(n.count / self.steps, 3),
                    "parallelism": n.parallelism,
                    "autotune": n.autotune,
                }
                for n in self.nodes[:20]
            ],
        }


def analyze_input_pipeline(
    profile: Profile, breakdown: Breakdown, steps: Optional[Steps] = None
) -> InputPipeline:
    """tf.data when its iterators run in the steady steps, else a PyTorch DataLoader, else the user's
    input annotations (these need `steps`: they are looked for on the steps' own threads)."""
    lo = breakdown.window_start_ns[breakdown.steady]
    hi = breakdown.window_end_ns[breakdown.steady]
    order = np.argsort(lo, kind="stable")
    lo, hi = lo[order], hi[order]
    per_step = max(int(lo.size), 1)
    nodes: Dict[tuple, IteratorNode] = {}
    for plane in profile.host_planes:
        is_iterator = np.array([n.startswith("Iterator::") for n in plane.event_names] + [False])
        if not is_iterator.any():
            continue
        for line in plane.lines:
            if len(line) == 0:
                continue
            mask = is_iterator[line.metadata_index]
            if lo.size:
                mask &= in_windows(lo, hi, line.start_ns)
            if mask.any():
                role = "producer" if is_producer_line(line) else "consumer"
                _collect(line, np.flatnonzero(mask), role, nodes)
    if not nodes:
        return _without_tf_data(profile, breakdown, steps)
    _self_times(nodes)
    stages = _stage_wait(nodes)
    stages_ms = {s: stages[s] / 1e6 / per_step for s in STAGES}
    ranked = sorted(nodes.values(), key=lambda n: (-n.self_ns, n.name))
    kinds = {n.kind for n in nodes.values()}
    result = InputPipeline(
        dominant_stage=_dominant(stages_ms),
        stages_ms=stages_ms,
        parallelism=_parallelism(nodes),
        prefetch="Prefetch" in kinds,
        autotune=any(n.autotune for n in nodes.values()),
        cache=bool(kinds & set(tf_data.TF_DATA_CACHE_KINDS)),
        interleave=bool(kinds & set(tf_data.TF_DATA_INTERLEAVE_KINDS)),
        file_source=bool(kinds & set(tf_data.TF_DATA_FILE_SOURCE_KINDS)),
        sequential_map=bool(kinds & set(tf_data.TF_DATA_SEQUENTIAL_MAP_KINDS))
        and not kinds & set(tf_data.TF_DATA_PARALLEL_MAP_KINDS),
        nodes=ranked,
        steps=per_step,
    )
    result.evidence = _evidence(result, ranked)
    return result


def _without_tf_data(profile: Profile, breakdown: Breakdown, steps: Optional[Steps]) -> InputPipeline:
    """The tf.data keys empty (as before kinds existed), and what feeds the step instead."""
    windows = StepWindows.of(breakdown, steps)
    host_windows = StepWindows.of(breakdown, steps, on_host=True)  # where the host waited
    nothing = NO_TORCH_INPUT if profile.framework == "pytorch" else NO_TF_DATA
    result = InputPipeline("unknown", {s: 0.0 for s in STAGES}, None, None, None, None, None, None, None,
                           [nothing], kind="none", steps=max(windows.count, 1))
    result.dataloader = analyze_dataloader(profile, host_windows, windows)
    if result.dataloader is not None:
        result.kind = "dataloader"
        result.evidence = result.dataloader.evidence()
        return result
    result.annotations = analyze_input_annotations(profile, host_windows, steps)
    if result.annotations is not None:
        result.kind = "annotations"
        result.evidence = result.annotations.evidence()
    return result


def _collect(line: Line, index: np.ndarray, role: str, nodes: Dict[tuple, IteratorNode]) -> None:
    plane = line.plane
    meta = line.metadata_index[index]
    durations = line.duration_ns[index]
    used, inverse = unique_inverse(meta)
    totals = np.bincount(inverse, weights=durations, minlength=used.size)
    counts = np.bincount(inverse, minlength=used.size)
    firsts = _first_of_each(inverse, used.size)
    for k, m in enumerate(used.tolist()):
        event_name = plane.event_names[m]
        key = (event_name, role)
        node = nodes.get(key)
        if node is None:
            kind = tf_data.iterator_kind(event_name) or "?"
            dataset = line.stat_value("name", int(index[firsts[k]]))
            dataset_name = str(dataset) if dataset is not None else ""
            stage = tf_data.stage_of_kind(kind)
            node = nodes[key] = IteratorNode(event_name, kind, stage, role, dataset_name)
        node.total_ns += int(totals[k])
        node.count += int(counts[k])
        rows = index[inverse == k]
        node.parallelism = _max_int(node.parallelism, line, "parallelism", rows)
        node.buffer = _max_int(node.buffer, line, "buffer_limit", rows)
        autotune = _any_true(line, "autotune", rows)
        if autotune is not None:
            node.autotune = bool(node.autotune) or autotune


def _first_of_each(inverse: np.ndarray, groups: int) -> np.ndarray:
    first = np.full(groups, inverse.size, dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(inverse.size))
    return first


def _max_int(current: Optional[int], line: Line, stat: str, rows: np.ndarray) -> Optional[int]:
    column = line.stats.get(stat)
    if column is None or column.kind == "str":
        return current
    present = column.present[rows]
    if not present.any():
        return current
    value = int(column.values[rows][present].max())
    return value if current is None else max(current, value)


def _any_true(line: Line, stat: str, rows: np.ndarray) -> Optional[bool]:
    column = line.stats.get(stat)
    if column is None:
        return None
    present = column.present[rows]
    if not present.any():
        return None
    values = column.values[rows][present]
    if column.kind == "str":
        strings = line.plane.strings
        return any(strings[int(v)].lower() in ("true", "1") for v in unique_codes(values).tolist())
    return bool((values != 0).any())


def _self_times(nodes: Dict[tuple, IteratorNode]) -> None:
    children_total: Dict[tuple, int] = {}
    for (event_name, role), node in nodes.items():
        parent = tf_data.iterator_parent(event_name)
        if parent is not None:
            children_total[(parent, role)] = children_total.get((parent, role), 0) + node.total_ns
    for key, node in nodes.items():
        node.self_ns = max(node.total_ns - children_total.get(key, 0), 0)


def _stage_wait(nodes: Dict[tuple, IteratorNode]) -> Dict[str, float]:
    """Self time per stage on consumer threads; prefetch waits shared out by the producers' stages."""
    consumer = {s: 0.0 for s in STAGES}
    producer = {s: 0.0 for s in STAGES}
    for node in nodes.values():
        target = consumer if node.role == "consumer" else producer
        if node.kind != "Root":
            target[node.stage] += node.self_ns
    if not any(consumer.values()):  # everything ran on producer threads (tf.data service, odd setups)
        return producer
    filled = {s: v for s, v in producer.items() if s != "prefetch" and v > 0}
    total_filled = sum(filled.values())
    if consumer["prefetch"] > 0 and total_filled > 0:
        wait = consumer.pop("prefetch")
        consumer["prefetch"] = 0.0
        for stage, value in filled.items():
            consumer[stage] += wait * value / total_filled
    return consumer


def _dominant(stages_ms: Dict[str, float]) -> str:
    total = sum(stages_ms.values())
    if total <= 0:
        return "unknown"
    stage, value = max(stages_ms.items(), key=lambda kv: kv[1])
    return stage if value / total >= th.DOMINANT_STAGE_SHARE else "other"


def _parallelism(nodes: Dict[tuple, IteratorNode]) -> Optional[int]:
    maps = [n for n in nodes.values() if n.stage == "map"]
    parallel = [n.parallelism for n in maps if n.kind in tf_data.TF_DATA_PARALLEL_MAP_KINDS and n.parallelism]
    if parallel:
        return max(parallel)
    if any(n.kind in tf_data.TF_DATA_SEQUENTIAL_MAP_KINDS for n in maps):
        return 1
    others = [n.parallelism for n in nodes.values() if n.parallelism]
    return max(others) if others else None


def _evidence(result: InputPipeline, ranked: List[IteratorNode]) -> List[str]:
    out: List[str] = []
    total = sum(result.stages_ms.values())
    if total > 0:
        parts = ", ".join(
            f"{stage} {fixed(ms, 1)} ms ({format_pct(ms * 100 / total)})"
            for stage, ms in sorted(result.stages_ms.items(), key=lambda kv: -kv[1])
            if ms > 0
        )
        out.append(f"Time in tf.data iterators on the get-next path, per step, by stage: {parts}.")
    top = [n for n in ranked if n.self_ns > 0][:3]
    if top:
        out.append(
            "Slowest iterators (own time per step): "
            + "; ".join(
                f"{n.name} [{n.dataset or n.kind}, {n.role}] {fixed(n.self_ns / 1e6 / result.steps, 1)} ms"
                for n in top
            )
            + "."
        )
    opaque = [n for n in top if n.kind in tf_data.TF_DATA_OPAQUE_KINDS]
    if opaque and result.dominant_stage == "other":
        out.append(
            f"The step mostly waits on a generator node ({opaque[0].name}): Dataset.from_generator or "
            "tf.distribute's per-device iterator, whose own stages the profile does not show."
        )
    if result.sequential_map:
        out.append("The map runs sequentially (MapDataset without num_parallel_calls).")
    elif result.parallelism:
        out.append(f"Map parallelism seen: {result.parallelism}.")
    out.append("Prefetch is in the pipeline." if result.prefetch else "No Prefetch iterator was seen.")
    out.append("Autotune is on." if result.autotune else "No iterator reports autotune.")
    if result.cache:
        out.append("The pipeline caches (Cache iterator present).")
    return out
