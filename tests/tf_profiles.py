"""Real profiles written by TensorFlow on CPU, for tests that must not rely on synthetic data.

TensorFlow runs in a child process (`python tests/tf_profiles.py generate OUT`), so the pytest process
never imports it: TF import costs seconds, starts thread pools, and would hide a plugin/CLI that wrongly
imports it. `python tests/tf_profiles.py inspect FILE.xplane.pb` prints, as JSON, what TensorFlow's own
xplane proto sees in one file (step markers, get-next waits, allocation dtypes): an oracle independent of
the Advisor's reader.

Fixture API (tests/fixtures_tf.py, session scope) — `tf_profiles` is a frozen `TFProfiles`:

    .logdir              Path  holds the three runs below. Shared by every test: treat it as read-only.
                               A test that starts TensorBoard/xprof on it or writes markers must use
                               `tf_profiles.copy_to(tmp_path)` first (xprof writes caches into sessions).
    .keras_fit           Path  logdir/"keras_fit": Keras 3 `model.fit` with
                               `keras.callbacks.TensorBoard(log_dir=..., profile_batch=(4, 13))`; holds
                               train/events.out.tfevents.* and train/plugins/profile/<ts>/<host>.xplane.pb.
                               Steps are `Profiled batch` events with step_num, no `_r`.
    .loop_input_bound    Path  logdir/"loop_input_bound": custom loop under
                               tf.profiler.experimental.start/stop, each step (next(it) included) inside
                               `Trace('train', step_num=s, _r=1)`; sequential image map, no prefetch,
                               tf.data autotune / map+batch fusion / injected prefetch / map
                               parallelisation / parallel batch off. Holds only
                               plugins/profile/<ts>/<host>.xplane.pb (no events file).
    .loop_fixed          Path  the same loop, model and map with num_parallel_calls=AUTOTUNE and
                               .prefetch(AUTOTUNE), autotune on.
    .host                str   host name = the xplane file's stem.
    .loop_fixed_repeat   Path  the .xplane.pb of loop_fixed's configuration captured once more, outside
                               logdir (same-configuration diffs keep their precision verdict; load
                               between the captures may move the step time for real).
    .loop_fixed_repeat_measured  dict  the repeat's Python-side timing (as .measured["loop_fixed"]).
    .xplane(name)        Path  the single <host>.xplane.pb of run `name` (one of NAMES).
    .session(name)       str   the <ts> session directory name.
    .run_name(name)      str   the run name discovery and xprof use: "keras_fit/train/<ts>",
                               "loop_input_bound/<ts>", "loop_fixed/<ts>".
    .steps(name)         list  profiled step numbers: 3..12 for all three runs (loops warm up steps 0-2
                               before the profiler starts; Keras numbers batch 4 as step 3).
    .measured[name]      dict  Python-side timing of the profiled steps. Loops: step_ms, wait_ms (time in
                               next(it)), input_wait_pct = sum(wait)/sum(step)*100. keras_fit: step_ms
                               (every batch), profiled_step_ms.
    .facts[name]         dict  `inspect()` of the xplane, made right after writing it: planes, host_lines,
                               step_marker ("train" | "Profiled batch"), step_nums, steps_with_r,
                               step_ms, get_next_events, iterator_events, per_step_input_wait_pct,
                               input_wait_pct, memory_allocation_data_types (empty: default allocator
                               with oneDNN off; oneDNN's mklcpu allocator records them), onednn_op_types
                               (`_Mkl…` op types seen; empty with oneDNN off).
    .onednn              bool  TensorFlow ran its oneDNN rewrite (TF_ENABLE_ONEDNN_OPTS=1, or unset on a
                               CPU with AVX512-VNNI/BF16/AMX); the cache is keyed by that variable.
    .manifest            dict  everything above as written (TF version, seconds, attempts per run).
    .copy_to(dst)        TFProfiles  the same runs copied under dst (a fresh, writable logdir).

Guaranteed by generation (checked in tests/sources/test_tf_profiles.py): loop_input_bound waits >= 30 % of its
step time in the iterator get-next (>= 20 % in every single step), loop_fixed < 10 % (< 20 % in every
step but one), both measured in Python and in the xplane. The images are sized per machine so that the
sequential map costs about one train step (the `calibration` entry of the manifest). The generator
makes a run up to 4 times until one meets stricter targets (35 % / 5 % in the profile, 8 % in Python,
and every step on its side of 20 %), and keeps the attempt that keeps the promise and is nearest them,
so a transient load spike does not produce a borderline profile.
Set TB_ADVISOR_TF_PROFILES_CACHE=DIR to reuse profiles across pytest runs (keyed by this file's content;
regenerated when the installed TensorFlow differs from the one that wrote them; used as-is where
TensorFlow is not installed, e.g. CI's oldest-protobuf pair). By default every session generates fresh
ones (~10-40 s on 2 cores).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import hashlib
import importlib.metadata
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, ContextManager, Dict, List, Optional, Tuple

NAMES = ("keras_fit", "loop_input_bound", "loop_fixed")
MANIFEST = "manifest.json"
CACHE_ENV = "TB_ADVISOR_TF_PROFILES_CACHE"
# TensorFlow's oneDNN switch, inherited by the generator: CI runs the real-TF tests with 1 and with 0.
ONEDNN_ENV = "TF_ENABLE_ONEDNN_OPTS"

# Loop runs: steps 0..WARMUP-1 run before the profiler starts; PROFILED steps follow under it.
WARMUP_STEPS = 3
PROFILED_STEPS = 10
KERAS_PROFILE_BATCH = (4, 13)
KERAS_STEPS = 15
# Promised to tests (see the docstring) ...
INPUT_BOUND_MIN_PCT = 30.0
FIXED_MAX_PCT = 10.0
# ... and the stricter targets the generator retries for, so that an engine using the built-in tab's
# 20 % / 5 % thresholds sees "high" and "low" with margin even after a transient load spike.
RETRY_INPUT_BOUND_BELOW_PCT = 35.0
RETRY_FIXED_ABOVE_PCT = 5.0
# The Python figure also pays the interpreter's own next(it) call (about 1.5 ms a step here, 5 % of a
# fixed step on a fast CPU), which the profile does not see: its retry line sits under the promise.
RETRY_FIXED_PYTHON_ABOVE_PCT = 8.0
# The steps are promised too: every input-bound step >= 20 %, every fixed step but one < 20 % (one
# prefetch-refill stall, 25.6 % in a fixed loop averaging < 5 %, was seen); the retries aim at every one.
STEP_LINE_PCT = 20.0
MAX_ATTEMPTS = 4

# The loops are built so that the sequential map over one batch costs about as much as one training
# step of the CNN below: the naive loop then waits about half of each step in get-next, and the
# parallel map has the second core to itself (0.3-3 % wait on a 2-core CPU). The ratio is a property
# of the CPU, not of the code: on a 2-core Xeon with AMX and oneDNN the step is 2x faster while the
# image ops are not, so 384x384 images made the map 2.8x the step and the "fixed" loop starve for
# seconds at a time (CI saw two steps > 20 %). So the generator measures the ratio at
# CALIBRATION_SIDE, and sizes the images (area is what the map pays for) to MAP_TO_STEP_TARGET,
# within IMAGE_SIDE_RANGE.
CALIBRATION_SIDE = 384
MAP_TO_STEP_TARGET = 1.0
IMAGE_SIDE_RANGE = (192, 448)
CALIBRATION_BATCHES = 7
MODEL_SIDE = 64
NUM_IMAGES = 64
BATCH = 16
NUM_CLASSES = 10


@dataclasses.dataclass(frozen=True)
class TFProfiles:
    """Where the generated runs live and what was measured while writing them."""

    logdir: Path
    keras_fit: Path
    loop_input_bound: Path
    loop_fixed: Path
    host: str
    manifest: Dict[str, Any] = dataclasses.field(compare=False, repr=False)

    @classmethod
    def load(cls, root: Path) -> TFProfiles:
        """Read a generated tree (root holds manifest.json and logdir/)."""
        manifest = json.loads((root / MANIFEST).read_text())
        logdir = root / "logdir"
        return cls(
            logdir=logdir,
            keras_fit=logdir / "keras_fit",
            loop_input_bound=logdir / "loop_input_bound",
            loop_fixed=logdir / "loop_fixed",
            host=manifest["host"],
            manifest=manifest,
        )

    def _run(self, name: str) -> Dict[str, Any]:
        if name not in NAMES:
            raise KeyError(f"unknown run {name!r}; expected one of {NAMES}")
        return self.manifest["runs"][name]

    def session(self, name: str) -> str:
        return self._run(name)["session"]

    def run_name(self, name: str) -> str:
        return self._run(name)["run_name"]

    def xplane(self, name: str) -> Path:
        return self.logdir / self._run(name)["xplane"]

    @property
    def loop_fixed_repeat(self) -> Path:
        """The .xplane.pb of a second loop_fixed run (same configuration, captured right after it)."""
        return self.logdir.parent / self.manifest["repeat_of_loop_fixed"]

    @property
    def loop_fixed_repeat_measured(self) -> Dict[str, Any]:
        """Python-side timing of the repeat's profiled steps (the keys of `.measured["loop_fixed"]`)."""
        return self.manifest["repeat_of_loop_fixed_measured"]

    def steps(self, name: str) -> List[int]:
        return list(self._run(name)["facts"]["step_nums"])

    @property
    def onednn(self) -> bool:
        """Did TensorFlow run its oneDNN rewrite (op types `_Mkl…` in the profiles)?"""
        return any(run["facts"]["onednn_op_types"] for run in self.manifest["runs"].values())

    @property
    def measured(self) -> Dict[str, Dict[str, Any]]:
        return {name: self._run(name)["measured"] for name in NAMES}

    @property
    def facts(self) -> Dict[str, Dict[str, Any]]:
        return {name: self._run(name)["facts"] for name in NAMES}

    def copy_to(self, dst: Path) -> TFProfiles:
        """Copy the runs into dst/logdir (dst must not contain it yet) for tests that write."""
        dst = Path(dst)
        dst.mkdir(parents=True, exist_ok=True)
        shutil.copytree(self.logdir, dst / "logdir")
        if (self.logdir.parent / "repeat").is_dir():
            shutil.copytree(self.logdir.parent / "repeat", dst / "repeat")
        (dst / MANIFEST).write_text(json.dumps(self.manifest, indent=1))
        return TFProfiles.load(dst)


# ---------------------------------------------------------------------------------------------------
# Loading / caching (pytest side: no TensorFlow import here)


def tensorflow_version() -> Optional[str]:
    """'tensorflow-cpu==2.21.0' or None where TensorFlow is not installed (CI's oldest-protobuf pair)."""
    for dist in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tf-nightly-cpu"):
        try:
            return f"{dist}=={importlib.metadata.version(dist)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def onednn_setting() -> str:
    """TF_ENABLE_ONEDNN_OPTS for the capture: "0", "1" or "default" (TensorFlow decides by CPU)."""
    return os.environ.get(ONEDNN_ENV, "").strip() or "default"


def cache_key() -> str:
    """Profiles depend on this generator and the oneDNN setting; the TensorFlow that wrote them is
    checked separately."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16] + f"-onednn-{onednn_setting()}"


def _cached_is_current(root: Path) -> bool:
    """A cached tree is reused when it is complete and, if TensorFlow is installed, was written by it."""
    try:
        manifest = json.loads((root / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    installed = tensorflow_version()
    return installed is None or manifest.get("tensorflow_dist") == installed


def generate_in_subprocess(root: Path, timeout_s: float = 300.0) -> TFProfiles:
    """Run the generator in a child Python (CPU only) and load what it wrote under root."""
    env = dict(os.environ)
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["CUDA_VISIBLE_DEVICES"] = "-1"  # the fixtures are CPU profiles even on a GPU machine
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "generate", str(root)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    if proc.returncode != 0:
        tail = (proc.stdout[-3000:] + "\n" + proc.stderr[-6000:]).strip()
        raise RuntimeError(
            f"generating TensorFlow profiles under {root} failed (exit {proc.returncode}):\n{tail}"
        )
    return TFProfiles.load(root)


def load_or_generate(fresh_root: Path) -> TFProfiles:
    """Fresh profiles under fresh_root, or the cached copy when TB_ADVISOR_TF_PROFILES_CACHE is set."""
    cache = os.environ.get(CACHE_ENV)
    if not cache:
        if tensorflow_version() is None:
            raise RuntimeError(
                "TensorFlow is not installed: it is needed to write the real-profile fixtures "
                f"(pip install -e '.[test]'), or point {CACHE_ENV} at profiles written elsewhere"
            )
        return generate_in_subprocess(fresh_root)
    keyed = Path(cache) / f"tf_profiles-{cache_key()}"
    if _cached_is_current(keyed):
        return TFProfiles.load(keyed)
    if tensorflow_version() is None:
        raise RuntimeError(
            f"{CACHE_ENV}={cache} holds no profiles for this generator ({keyed.name}) and TensorFlow "
            "is not installed to write them; run the suite once where TensorFlow is installed"
        )
    keyed.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=keyed.parent))
    generate_in_subprocess(staging)
    shutil.rmtree(keyed, ignore_errors=True)  # written by another TensorFlow version
    try:
        staging.rename(keyed)
    except OSError:  # another session won the race; its copy is as good as ours
        shutil.rmtree(staging, ignore_errors=True)
    return TFProfiles.load(keyed)


# ---------------------------------------------------------------------------------------------------
# Inspection with TensorFlow's own xplane proto (child-process side)


def _xplane_pb2():
    try:
        from tsl.profiler.protobuf import xplane_pb2
    except ImportError:
        from tensorflow.tsl.profiler.protobuf import xplane_pb2
    return xplane_pb2


def _stat_value(stat, stat_names: Dict[int, str]) -> Any:
    kind = stat.WhichOneof("value")
    if kind == "ref_value":
        return stat_names.get(stat.ref_value, "")
    if kind is None:
        return None
    value = getattr(stat, kind)
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _trace_me_kwargs(name: str) -> Dict[str, str]:
    """TraceMe may keep kwargs in the name: 'train#step_num=5,_r=1#'."""
    if "#" not in name:
        return {}
    body = name.split("#", 2)[1]
    pairs = (item.split("=", 1) for item in body.split(",") if "=" in item)
    return {key: value for key, value in pairs}


def _union_ps(intervals: List[tuple]) -> int:
    total, cur_start, cur_end = 0, None, None
    for start, end in sorted(intervals):
        if cur_end is None or start > cur_end:
            if cur_end is not None:
                total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    if cur_end is not None:
        total += cur_end - cur_start
    return total


def inspect(path: Path) -> Dict[str, Any]:
    """Summarise one .xplane.pb: planes, step markers, iterator get-next waits, allocation dtypes."""
    xplane_pb2 = _xplane_pb2()
    space = xplane_pb2.XSpace()
    space.ParseFromString(Path(path).read_bytes())
    facts: Dict[str, Any] = {
        "planes": [plane.name for plane in space.planes],
        "hostnames": list(space.hostnames),
        "host_lines": [],
        "step_marker": None,
        "step_nums": [],
        "steps_with_r": 0,
        "step_ms": [],
        "get_next_events": 0,
        "iterator_events": 0,
        "per_step_input_wait_pct": [],
        "input_wait_pct": None,
        "memory_allocation_data_types": {},
        "onednn_op_types": [],
    }
    for plane in space.planes:
        if plane.name != "/host:CPU":
            continue
        stat_names = {key: meta.name for key, meta in plane.stat_metadata.items()}
        facts["host_lines"] = [line.name for line in plane.lines]
        steps, get_next, dtypes = [], [], {}
        facts["onednn_op_types"] = sorted(
            {meta.name.rsplit(":", 1)[1] for meta in plane.event_metadata.values() if ":_Mkl" in meta.name}
        )
        for line in plane.lines:
            base_ps = line.timestamp_ns * 1000
            for event in line.events:
                meta = plane.event_metadata[event.metadata_id]
                name = meta.name
                start = base_ps + event.offset_ps
                end = start + event.duration_ps
                if "IteratorGetNext" in name:
                    facts["get_next_events"] += 1
                    get_next.append((start, end))
                elif name.startswith("Iterator::"):
                    facts["iterator_events"] += 1
                short = name.split("#", 1)[0]
                if short in ("train", "Profiled batch") or name == "MemoryAllocation":
                    stats = {
                        stat_names.get(s.metadata_id, ""): _stat_value(s, stat_names) for s in meta.stats
                    }
                    stats.update(
                        {stat_names.get(s.metadata_id, ""): _stat_value(s, stat_names) for s in event.stats}
                    )
                    stats.update(_trace_me_kwargs(name))
                    if name == "MemoryAllocation":
                        dtype = str(stats.get("data_type"))
                        dtypes[dtype] = dtypes.get(dtype, 0) + 1
                    elif "step_num" in stats:
                        steps.append((start, end, short, int(stats["step_num"]), "_r" in stats))
        steps.sort()
        facts["memory_allocation_data_types"] = dtypes
        if steps:
            facts["step_marker"] = steps[0][2]
        facts["step_nums"] = [step[3] for step in steps]
        facts["steps_with_r"] = sum(1 for step in steps if step[4])
        facts["step_ms"] = [round((end - start) / 1e9, 3) for start, end, *_ in steps]
        waits, totals = [], []
        for start, end, *_ in steps:
            inside = [(max(s, start), min(e, end)) for s, e in get_next if e > start and s < end]
            wait = _union_ps(inside)
            waits.append(wait)
            totals.append(end - start)
            facts["per_step_input_wait_pct"].append(round(100.0 * wait / max(end - start, 1), 2))
        if totals:
            facts["input_wait_pct"] = round(100.0 * sum(waits) / max(sum(totals), 1), 2)
    return facts


# ---------------------------------------------------------------------------------------------------
# Generation (child-process side: imports TensorFlow)


def _images(np, image_side: int):
    """Image-like uint8 tensors: smooth colour gradients plus noise, deterministic."""
    rng = np.random.default_rng(0)
    side = np.linspace(0.0, 1.0, image_side, dtype=np.float32)
    yy, xx = np.meshgrid(side, side, indexing="ij")
    images = np.empty((NUM_IMAGES, image_side, image_side, 3), dtype=np.uint8)
    for i in range(NUM_IMAGES):
        phase = rng.uniform(0, 2 * np.pi, size=3)
        base = np.stack([np.sin(3 * xx + phase[c]) * np.cos(2 * yy - phase[c]) for c in range(3)], axis=-1)
        noise = rng.normal(0.0, 0.15, size=base.shape)
        images[i] = np.clip((base * 0.5 + 0.5 + noise) * 255.0, 0, 255).astype(np.uint8)
    labels = rng.integers(0, NUM_CLASSES, size=NUM_IMAGES).astype(np.int32)
    return images, labels


def _preprocess(tf):
    def preprocess(image, label):
        x = tf.image.convert_image_dtype(image, tf.float32)
        x = tf.image.central_crop(x, 0.875)
        x = tf.image.random_contrast(x, 0.7, 1.3)
        x = tf.image.random_saturation(x, 0.7, 1.3)
        x = tf.image.resize(x, (MODEL_SIDE, MODEL_SIDE))
        return x, label

    return preprocess


def _dataset(tf, images, labels, fixed: bool):
    ds = tf.data.Dataset.from_tensor_slices((images, labels)).repeat()
    if fixed:
        return (
            ds.map(_preprocess(tf), num_parallel_calls=tf.data.AUTOTUNE)
            .batch(BATCH)
            .prefetch(tf.data.AUTOTUNE)
        )
    # Without these switches tf.data fuses map+batch, parallelises it and injects a prefetch, and the
    # "naive" pipeline stops being input-bound on a small CPU.
    options = tf.data.Options()
    options.autotune.enabled = False
    options.experimental_optimization.map_and_batch_fusion = False
    options.experimental_optimization.inject_prefetch = False
    options.experimental_optimization.map_parallelization = False
    options.experimental_optimization.parallel_batch = False
    return ds.map(_preprocess(tf)).batch(BATCH).with_options(options)


def _model(keras):
    return keras.Sequential(
        [
            keras.Input((MODEL_SIDE, MODEL_SIDE, 3)),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(NUM_CLASSES),
        ]
    )


def _session_of(run_dir: Path) -> tuple:
    """The single <ts>/<host>.xplane.pb under run_dir/plugins/profile."""
    found = sorted(run_dir.glob("plugins/profile/*/*.xplane.pb"))
    if len(found) != 1:
        raise RuntimeError(f"expected one .xplane.pb under {run_dir}/plugins/profile, found {found}")
    return found[0].parent.name, found[0]


def _timed_step(iterator, train_step, around: Callable[[], ContextManager[Any]]) -> Tuple[float, float]:
    """Seconds in next(it) and in the train step after it, both inside `around()` (a step's Trace,
    made inside the timed span as well)."""
    t0 = time.perf_counter()
    with around():
        batch = next(iterator)
        t1 = time.perf_counter()
        train_step(*batch).numpy()
    return t1 - t0, time.perf_counter() - t1


def _loop_run(tf, run_dir: Path, dataset, train_step) -> Dict[str, Any]:
    """Warm up, then profile PROFILED_STEPS steps, timing next(it) and the whole step in Python."""
    iterator = iter(dataset)
    for step in range(WARMUP_STEPS):
        with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
            train_step(*next(iterator)).numpy()
    step_ms, wait_ms = [], []
    tf.profiler.experimental.start(str(run_dir))
    try:
        for step in range(WARMUP_STEPS, WARMUP_STEPS + PROFILED_STEPS):
            trace = functools.partial(tf.profiler.experimental.Trace, "train", step_num=step, _r=1)
            wait_s, train_s = _timed_step(iterator, train_step, trace)
            wait_ms.append(wait_s * 1e3)
            step_ms.append((wait_s + train_s) * 1e3)
    finally:
        tf.profiler.experimental.stop()
    return {
        "step_ms": [round(v, 3) for v in step_ms],
        "wait_ms": [round(v, 3) for v in wait_ms],
        "input_wait_pct": round(100.0 * sum(wait_ms) / sum(step_ms), 2),
    }


def _keras_fit_run(tf, keras, run_dir: Path, images, labels) -> Dict[str, Any]:
    step_ms: List[float] = []

    class StepTimer(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            self._t0 = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            step_ms.append(round((time.perf_counter() - self._t0) * 1e3, 3))

    model = _model(keras)
    model.compile(
        optimizer=keras.optimizers.SGD(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    board = keras.callbacks.TensorBoard(log_dir=str(run_dir), profile_batch=KERAS_PROFILE_BATCH)
    model.fit(
        _dataset(tf, images, labels, fixed=True),
        epochs=1,
        steps_per_epoch=KERAS_STEPS,
        callbacks=[board, StepTimer()],
        verbose=0,
    )
    first, last = KERAS_PROFILE_BATCH
    return {"step_ms": step_ms, "profiled_step_ms": step_ms[first - 1 : last]}


def _calibrated_side(tf, np, train_step) -> Tuple[int, Dict[str, Any]]:
    """The image side at which the sequential map of one batch costs MAP_TO_STEP_TARGET train steps.

    Medians of CALIBRATION_BATCHES batches of the naive pipeline at CALIBRATION_SIDE, each map timed
    in next(it) and its train step right after, as the loop does (the first batch traces the step)."""
    images, labels = _images(np, CALIBRATION_SIDE)
    iterator = iter(_dataset(tf, tf.constant(images), tf.constant(labels), fixed=False))
    train_step(*next(iterator)).numpy()
    map_s, step_s = zip(*(_timed_step(iterator, train_step, contextlib.nullcontext)
                          for _ in range(CALIBRATION_BATCHES)))
    ratio = statistics.median(map_s) / statistics.median(step_s)
    side = CALIBRATION_SIDE * math.sqrt(MAP_TO_STEP_TARGET / ratio)
    low, high = IMAGE_SIDE_RANGE
    image_side = int(min(high, max(low, round(side / 16) * 16)))
    return image_side, {
        "side": CALIBRATION_SIDE,
        "map_ms": round(statistics.median(map_s) * 1e3, 2),
        "step_ms": round(statistics.median(step_s) * 1e3, 2),
        "ratio": round(ratio, 3),
        "image_side": image_side,
    }


def _attempt_miss(
    fixed: bool, python_pct: float, profile_pct: float, steps: List[float]
) -> Tuple[bool, float]:
    """(breaks the promise to tests, points short of the retry targets) of one loop attempt.

    Attempts sort by this pair: one that keeps the promise beats any that does not, however near."""
    ranked = sorted(steps)
    if fixed:
        broken = (
            max(python_pct, profile_pct, statistics.median(ranked)) >= FIXED_MAX_PCT
            or (len(ranked) > 1 and ranked[-2] >= STEP_LINE_PCT)
        )
        short = max(
            profile_pct - RETRY_FIXED_ABOVE_PCT,
            python_pct - RETRY_FIXED_PYTHON_ABOVE_PCT,
            ranked[-1] - STEP_LINE_PCT,
            0.0,
        )
    else:
        least = min(python_pct, profile_pct)
        broken = min(least, statistics.median(ranked)) < INPUT_BOUND_MIN_PCT or ranked[0] < STEP_LINE_PCT
        short = max(RETRY_INPUT_BOUND_BELOW_PCT - least, STEP_LINE_PCT - ranked[0], 0.0)
    return broken, short


def generate(root: Path) -> Dict[str, Any]:
    """Write the three runs under root/logdir and root/manifest.json; return the manifest."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    started = time.perf_counter()
    import keras
    import numpy as np
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    logdir = root / "logdir"
    logdir.mkdir(parents=True, exist_ok=False)
    runs: Dict[str, Dict[str, Any]] = {}

    model = _model(keras)
    optimizer = keras.optimizers.SGD(0.01)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    image_side, calibration = _calibrated_side(tf, np, train_step)
    print(f"calibration: {calibration}", file=sys.stderr)
    images, labels = _images(np, image_side)
    images, labels = tf.constant(images), tf.constant(labels)

    run_dir = logdir / "keras_fit"
    measured = _keras_fit_run(tf, keras, run_dir, images, labels)
    session, xplane = _session_of(run_dir / "train")
    runs["keras_fit"] = {
        "session": session,
        "run_name": f"keras_fit/train/{session}",
        "xplane": str(xplane.relative_to(logdir)),
        "measured": measured,
        "attempts": 1,
    }

    for name, fixed in (("loop_input_bound", False), ("loop_fixed", True)):
        run_dir = logdir / name
        best: Optional[Tuple[Tuple[bool, float], Path, Dict[str, Any]]] = None  # (miss, dir, measured)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            attempt_dir = root / "attempts" / f"{name}-{attempt}"
            shutil.rmtree(attempt_dir, ignore_errors=True)
            measured = _loop_run(tf, attempt_dir, _dataset(tf, images, labels, fixed), train_step)
            seen = inspect(_session_of(attempt_dir)[1])
            figures = (measured["input_wait_pct"], seen["input_wait_pct"])
            steps = seen["per_step_input_wait_pct"] or [0.0]
            print(f"{name}: attempt {attempt}: get-next wait python/xplane {figures} %, per step {steps}",
                  file=sys.stderr)
            miss = _attempt_miss(fixed, *figures, steps)
            if best is None or miss < best[0]:
                best = (miss, attempt_dir, measured)
            if miss == (False, 0.0):
                break
        # the attempt that keeps the promise and is nearest the targets is kept (the last is not the best)
        assert best is not None
        shutil.rmtree(run_dir, ignore_errors=True)
        shutil.move(str(best[1]), str(run_dir))
        shutil.rmtree(root / "attempts", ignore_errors=True)
        measured = best[2]
        session, xplane = _session_of(run_dir)
        runs[name] = {
            "session": session,
            "run_name": f"{name}/{session}",
            "xplane": str(xplane.relative_to(logdir)),
            "measured": measured,
            "attempts": attempt,
        }

    # The same configuration once more, outside logdir (the runs there are what tests list): two runs
    # of one configuration keep their precision verdict, and the diff measures the step time Python
    # timed (load between them may move it for real).
    repeat_dir = root / "repeat" / "loop_fixed"
    repeat_measured = _loop_run(tf, repeat_dir, _dataset(tf, images, labels, True), train_step)
    repeat_xplane = _session_of(repeat_dir)[1]

    for run in runs.values():
        run["facts"] = inspect(logdir / run["xplane"])
    manifest = {
        "host": socket.gethostname(),
        "tensorflow": tf.__version__,
        "tensorflow_dist": tensorflow_version(),
        "keras": keras.__version__,
        "onednn_setting": onednn_setting(),
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "seconds": round(time.perf_counter() - started, 1),
        "calibration": calibration,
        "runs": runs,
        "repeat_of_loop_fixed": str(repeat_xplane.relative_to(root)),
        "repeat_of_loop_fixed_measured": repeat_measured,
    }
    (root / MANIFEST).write_text(json.dumps(manifest, indent=1))
    return manifest


def summary(manifest: Dict[str, Any]) -> str:
    lines = [f"TF {manifest['tensorflow']}, generated in {manifest['seconds']} s"]
    for name in NAMES:
        run = manifest["runs"][name]
        facts, measured = run["facts"], run["measured"]
        step_ms = facts["step_ms"]
        mean = sum(step_ms) / len(step_ms) if step_ms else float("nan")
        lines.append(
            f"{name:17s} {facts['step_marker']!s:15s} steps={facts['step_nums']} mean={mean:.1f} ms "
            f"input wait: python={measured.get('input_wait_pct', '-')} % xplane={facts['input_wait_pct']} % "
            f"attempts={run['attempts']}"
        )
    return "\n".join(lines)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate", help="write the three runs under ROOT/logdir and ROOT/manifest.json")
    gen.add_argument("root", type=Path)
    ins = sub.add_parser("inspect", help="print TensorFlow's view of one .xplane.pb as JSON")
    ins.add_argument("xplane", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "generate":
        print(summary(generate(args.root)))
    else:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        print(json.dumps({str(p): inspect(p) for p in args.xplane}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
