"""Input preprocessing (decoding, resizing, colour augmentation …) wherever it runs: on tf.data's
producer threads beside the step, or inside the step function itself.

On a small CPU host the tf.data map threads compete with training for the same cores, so a run the
breakdown calls "compute-bound" can spend most of its CPU time preparing images (the bundled sample's
run2 and run4 on 2 cores). The share is CPU time per step relative to the step's wall time: with
several threads it can exceed 100 %.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.onednn_ops import familiar_tf_op
from tb_plugin_advisor.analysis.intervals import in_windows
from tb_plugin_advisor.analysis.step_time.breakdown import Breakdown, is_producer_line
from tb_plugin_advisor.model import Profile

ANYWHERE = "anywhere"
INPUT_THREADS = "input_threads"  # also used by models (dropout …): counted only on tf.data threads

# TF op type → (what it is, where it counts as preprocessing).
PREPROCESSING_OPS: Dict[str, Tuple[str, str]] = {
    "DecodePng": ("image decoding", ANYWHERE),
    "DecodeJpeg": ("image decoding", ANYWHERE),
    "DecodeAndCropJpeg": ("image decoding", ANYWHERE),
    "DecodeImage": ("image decoding", ANYWHERE),
    "DecodeBmp": ("image decoding", ANYWHERE),
    "DecodeGif": ("image decoding", ANYWHERE),
    "DecodeWebP": ("image decoding", ANYWHERE),
    "DecodeRaw": ("record decoding", ANYWHERE),
    "DecodeCSV": ("record decoding", ANYWHERE),
    "DecodeWav": ("audio decoding", ANYWHERE),
    "ParseExampleV2": ("record parsing", ANYWHERE),
    "ParseSingleExample": ("record parsing", ANYWHERE),
    "ParseSequenceExampleV2": ("record parsing", ANYWHERE),
    "AdjustSaturation": ("colour augmentation", ANYWHERE),
    "AdjustContrastv2": ("colour augmentation", ANYWHERE),
    "AdjustContrast": ("colour augmentation", ANYWHERE),
    "AdjustHue": ("colour augmentation", ANYWHERE),
    "RGBToHSV": ("colour augmentation", ANYWHERE),
    "HSVToRGB": ("colour augmentation", ANYWHERE),
    "ResizeBilinear": ("resizing", ANYWHERE),
    "ResizeBicubic": ("resizing", ANYWHERE),
    "ResizeNearestNeighbor": ("resizing", ANYWHERE),
    "ResizeArea": ("resizing", ANYWHERE),
    "ScaleAndTranslate": ("resizing", ANYWHERE),
    "CropAndResize": ("cropping", ANYWHERE),
    "ImageProjectiveTransformV3": ("geometric augmentation", ANYWHERE),
    "AudioSpectrogram": ("audio features", ANYWHERE),
    "Mfcc": ("audio features", ANYWHERE),
    "RandomUniform": ("random augmentation", INPUT_THREADS),
    "RandomUniformInt": ("random augmentation", INPUT_THREADS),
    "StatelessRandomUniformV2": ("random augmentation", INPUT_THREADS),
    "Slice": ("cropping", INPUT_THREADS),
    "ReverseV2": ("flip augmentation", INPUT_THREADS),
    "Cast": ("type conversion", INPUT_THREADS),
}
MAX_OPS = 8


@dataclass
class Preprocessing:
    """Preprocessing CPU time per steady step, by op type and by where it ran."""

    step_ms: float = 0.0  # mean steady step (wall)
    op_ms: Dict[str, float] = field(default_factory=dict)  # op type → ms per step
    input_threads_ms: float = 0.0
    step_threads_ms: float = 0.0

    @property
    def total_ms(self) -> float:
        return self.input_threads_ms + self.step_threads_ms

    @property
    def share_pct(self) -> float:
        return 100.0 * self.total_ms / self.step_ms if self.step_ms else 0.0

    def top_ops(self) -> List[Tuple[str, float]]:
        return sorted(self.op_ms.items(), key=lambda kv: -kv[1])[:MAX_OPS]

    def to_json(self) -> Dict[str, Any]:
        return {
            "share_of_step_pct": round(self.share_pct, 2),
            "time_ms": round(self.total_ms, 4),
            "input_threads_ms": round(self.input_threads_ms, 4),
            "step_threads_ms": round(self.step_threads_ms, 4),
            "ops": [
                {"op": op, "kind": PREPROCESSING_OPS[op][0], "time_ms": round(ms, 4)}
                for op, ms in self.top_ops()
            ],
        }


def preprocessing_op(op_type: str, on_input_thread: bool) -> bool:
    entry = PREPROCESSING_OPS.get(op_type)
    return entry is not None and (entry[1] == ANYWHERE or on_input_thread)


def _op_types(event_names: List[str], is_op: re.Pattern) -> List[str]:
    """The familiar op type of each TF op event name ('' for other events); the few distinct types are
    made familiar once each, not once per name (100,000 op names)."""
    familiar: Dict[str, str] = {}
    out = []
    for name in event_names:
        if not is_op.search(name):
            out.append("")
            continue
        op_type = name.rpartition(":")[2]
        found = familiar.get(op_type)
        if found is None:
            found = familiar[op_type] = familiar_tf_op(name)[0].rsplit(":", 1)[1]
        out.append(found)
    return out


def analyze_preprocessing(profile: Profile, breakdown: Breakdown) -> Preprocessing:
    out = Preprocessing()
    lo, hi = breakdown.steady_windows()
    if not lo.size:
        return out
    n = int(lo.size)
    out.step_ms = float((hi - lo).sum()) / n / 1e6
    is_op = names.HOST_COMPUTE[0].compiled
    for plane in profile.host_planes:
        types = _op_types(plane.event_names, is_op)
        distinct = sorted(set(types))
        code = {t: i for i, t in enumerate(distinct)}
        codes = np.array([code[t] for t in types] + [len(distinct)], dtype=np.int64)
        for line in plane.lines:
            if len(line) == 0:
                continue
            producer = is_producer_line(line)
            wanted = np.array([preprocessing_op(t, producer) for t in distinct] + [False])[codes]
            mask = wanted[line.metadata_index]
            if not mask.any():
                continue
            mask &= in_windows(lo, hi, line.start_ns)
            per_name = np.bincount(
                line.metadata_index[mask], weights=line.duration_ns[mask].astype(np.float64),
                minlength=len(types) + 1,
            )
            for i in np.nonzero(per_name)[0].tolist():
                ms = float(per_name[i]) / n / 1e6
                out.op_ms[types[i]] = out.op_ms.get(types[i], 0.0) + ms
                if producer:
                    out.input_threads_ms += ms
                else:
                    out.step_threads_ms += ms
    return out
