"""Replay the classic TensorFlow profiling story on this machine, so the Advisor can tell it.

    python demo/profiling_story.py --logdir logs [--size small|full]
    tensorboard --logdir logs            # then open the Advisor tab
    tb-advisor doctor logs               # lists the run names
    tb-advisor diff logs run1_naive/train/<session> run2_parallel/train/<session>

Synthetic photo-like PNGs are written to disk (no downloads) and read back by a tf.data pipeline
(read -> decode_png -> central_crop -> convert_image_dtype -> random_contrast -> random_saturation ->
resize) that feeds a small CNN, profiled with the Keras TensorBoard callback (`profile_batch`):

  run1_naive        sequential map, no prefetch, and tf.data's autotune / map+batch fusion / injected
                    prefetch / map parallelisation / parallel batch switched off (tf.data would otherwise
                    quietly rewrite the pipeline, and a small CPU hides the problem)
  run2_parallel     map(num_parallel_calls=AUTOTUNE) + prefetch(AUTOTUNE)
  run3_mixed        run2 + mixed precision: mixed_float16 on a GPU, mixed_bfloat16 on a CPU
  run4_custom_loop  run2's pipeline in a custom training loop under tf.profiler.experimental.start/stop,
                    each step inside Trace('train', step_num=s, _r=1) so profilers see the steps

Each run is a fresh Python process, like re-running a script after changing one thing: runs do not
share TensorFlow state (graph collection, autotune history, allocator growth).

What to expect: run1 waits on its input pipeline for a large share of each step; run2 does not. On
a GPU, or a CPU with cores to spare, run2's steps are also shorter. run3's profile shows bf16/fp16
in use; it is faster where the hardware has native 16-bit math (GPU Tensor Cores, CPUs with
AVX512-BF16/AMX) and slower on CPUs without it, where bf16 convolutions are emulated.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional

# With TensorFlow's BFC allocator on the CPU, every allocation is recorded in the profile with its
# dtype (MemoryAllocation events: data_type 1 = float32, 14 = bfloat16). CPU op events carry no
# dtype, so this is the only precision evidence a CPU profile has. Read when TensorFlow starts.
CHILD_ENV = {"TF_CPP_MIN_LOG_LEVEL": "2", "TF_CPU_ALLOCATOR_USE_BFC": "true"}


@dataclass(frozen=True)
class Size:
    """How much work one run does. Profiled batches are 1-based, as Keras counts them."""

    images: int
    batch: int
    steps: int
    profile_batch: tuple
    loop_warmup: int
    loop_steps: int


SIZES: Dict[str, Size] = {
    # ~2-3 minutes on 2 CPU cores: 10 profiled steps per run for stable per-step statistics.
    "full": Size(images=320, batch=32, steps=16, profile_batch=(5, 14), loop_warmup=8, loop_steps=10),
    # ~1 minute: used by the tests and for the bundled sample logdir. Six profiled steps (the
    # Advisor needs five to call a change significant), batch 16 to keep the profiles small.
    "small": Size(images=64, batch=8, steps=10, profile_batch=(5, 10), loop_warmup=8, loop_steps=6),
}

IMAGE_SIDE = 384  # what is written to disk: decoding a photo-sized PNG is a real cost
MODEL_SIDE = 128
CLASSES = 4
RUNS = ("run1_naive", "run2_parallel", "run3_mixed", "run4_custom_loop")


# --------------------------------------------------------------------------------------------------
# Data: synthetic photo-like PNGs


def write_images(directory: Path, count: int, seed: int = 0) -> List[str]:
    """Soft colour blobs over a gradient with mild sensor noise; the class sets the blob count."""
    import numpy as np
    import tensorflow as tf

    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    low = 96  # drawn at low resolution and upsampled: smooth like a photo, cheap to make
    yy, xx = np.mgrid[0:low, 0:low].astype(np.float32) / low
    paths = []
    for index in range(count):
        label = index % CLASSES
        canvas = np.empty((low, low, 3), np.float32)
        canvas[:] = rng.uniform(0.1, 0.6, 3) * (0.6 + 0.4 * yy[..., None])
        for _ in range(2 + 2 * label):
            cy, cx = rng.uniform(0, 1, 2)
            radius = rng.uniform(0.05, 0.25)
            blob = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * radius * radius))
            canvas += blob[..., None] * rng.uniform(0, 0.8, 3)
        big = tf.image.resize(canvas[None], (IMAGE_SIDE, IMAGE_SIDE), method="bilinear")[0].numpy()
        big += rng.normal(0.0, 0.02, big.shape).astype(np.float32)
        pixels = np.clip(big / max(float(big.max()), 1e-3) * 255.0, 0, 255).astype(np.uint8)
        path = directory / f"class{label}_{index:05d}.png"
        path.write_bytes(tf.io.encode_png(pixels).numpy())
        paths.append(str(path))
    return paths


def image_paths(directory: Path) -> List[str]:
    paths = sorted(str(p) for p in directory.glob("class*_*.png"))
    if not paths:
        raise SystemExit(f"no class*_*.png images in {directory}")
    return paths


def load(path, label):
    """The per-image preprocessing every tutorial shows; its cost is what the story is about."""
    import tensorflow as tf

    image = tf.io.decode_png(tf.io.read_file(path), channels=3)
    image = tf.image.central_crop(image, 0.875)
    image = tf.image.convert_image_dtype(image, tf.float32)
    image = tf.image.random_contrast(image, 0.7, 1.3)
    image = tf.image.random_saturation(image, 0.7, 1.3)
    image = tf.image.resize(image, (MODEL_SIDE, MODEL_SIDE))
    return image, label


def dataset(paths: List[str], batch: int, parallel: bool):
    import tensorflow as tf

    labels = [int(Path(p).name[len("class")]) for p in paths]
    ds = tf.data.Dataset.from_tensor_slices((paths, labels)).shuffle(len(paths), seed=0).repeat()
    if parallel:
        return ds.map(load, num_parallel_calls=tf.data.AUTOTUNE).batch(batch).prefetch(tf.data.AUTOTUNE)
    # The naive pipeline as written, run the way it reads: no rewrites behind the user's back.
    options = tf.data.Options()
    options.autotune.enabled = False
    options.experimental_optimization.map_and_batch_fusion = False
    options.experimental_optimization.inject_prefetch = False
    options.experimental_optimization.map_parallelization = False
    options.experimental_optimization.parallel_batch = False
    return ds.map(load).batch(batch).with_options(options)


# --------------------------------------------------------------------------------------------------
# Model and runs (each in its own process)


def build_model():
    import keras

    return keras.Sequential(
        [
            keras.Input((MODEL_SIDE, MODEL_SIDE, 3)),
            keras.layers.Conv2D(16, 3, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(32, 3, activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, activation="relu"),
            keras.layers.GlobalAveragePooling2D(),
            keras.layers.Dense(32, activation="relu"),
            # Logits stay float32 under mixed precision (numerically safe softmax and loss).
            keras.layers.Dense(CLASSES, dtype="float32"),
        ]
    )


def keras_run(name: str, logdir: Path, paths: List[str], size: Size) -> dict:
    import keras
    import tensorflow as tf

    parallel = name != "run1_naive"
    policy = "float32"
    if name == "run3_mixed":
        policy = "mixed_float16" if tf.config.list_physical_devices("GPU") else "mixed_bfloat16"
    keras.mixed_precision.set_global_policy(policy)
    keras.utils.set_random_seed(0)
    step_ms: List[float] = []

    class StepTimer(keras.callbacks.Callback):
        """Wall time per batch as Python sees it, printed next to what the profile will say."""

        def on_train_batch_begin(self, batch, logs=None):
            self._t0 = time.perf_counter()

        def on_train_batch_end(self, batch, logs=None):
            step_ms.append((time.perf_counter() - self._t0) * 1e3)

    model = build_model()
    model.compile(
        optimizer=keras.optimizers.SGD(0.01),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    board = keras.callbacks.TensorBoard(log_dir=str(logdir / name), profile_batch=size.profile_batch)
    model.fit(
        dataset(paths, size.batch, parallel),
        epochs=1,
        steps_per_epoch=size.steps,
        callbacks=[board, StepTimer()],
        verbose=0,
    )
    first, last = size.profile_batch
    # Keras numbers the profiled batches from 0 in the profile ("Profiled batch" step_num).
    return {
        "policy": policy,
        "profiled_steps": list(range(first - 1, last)),
        "profiled_step_ms": step_ms[first - 1 : last],
    }


def custom_loop_run(name: str, logdir: Path, paths: List[str], size: Size) -> dict:
    """The profiler API with explicit step markers: what custom loops need for step analysis."""
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(0)
    model = build_model()
    optimizer = keras.optimizers.SGD(0.01)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    iterator = iter(dataset(paths, size.batch, parallel=True))
    # Tracing, autotune and the prefetch buffer's first fill stay out of the profile.
    for _ in range(size.loop_warmup):
        train_step(*next(iterator))
    step_ms: List[float] = []
    steps = list(range(size.loop_warmup, size.loop_warmup + size.loop_steps))
    tf.profiler.experimental.start(str(logdir / name))
    try:
        for step in steps:
            t0 = time.perf_counter()
            with tf.profiler.experimental.Trace("train", step_num=step, _r=1):
                images, labels = next(iterator)
                train_step(images, labels).numpy()
            step_ms.append((time.perf_counter() - t0) * 1e3)
    finally:
        tf.profiler.experimental.stop()
    return {"policy": "float32", "profiled_steps": steps, "profiled_step_ms": step_ms}


def child(task: str, logdir: Path, size: Size, data_dir: Path, result: Path) -> int:
    """One task in this (fresh) process: write the images, or one run; the result goes to JSON."""
    started = time.perf_counter()
    if task == "images":
        outcome: dict = {"images": len(write_images(data_dir, size.images))}
    elif task == "run4_custom_loop":
        outcome = custom_loop_run(task, logdir, image_paths(data_dir), size)
    else:
        outcome = keras_run(task, logdir, image_paths(data_dir), size)
    outcome["seconds"] = round(time.perf_counter() - started, 1)
    result.write_text(json.dumps(outcome))
    return 0


# --------------------------------------------------------------------------------------------------
# Orchestration (no TensorFlow in this process)


def run_task(task: str, args: argparse.Namespace, data_dir: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="tb-advisor-demo-") as tmp:
        result = Path(tmp) / "result.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--logdir",
            str(args.logdir),
            "--size",
            args.size,
            "--data-dir",
            str(data_dir),
            "--child",
            task,
            "--child-result",
            str(result),
        ]
        env = {**CHILD_ENV, **os.environ}
        proc = subprocess.run(command, env=env)
        if proc.returncode != 0 or not result.is_file():
            raise SystemExit(f"demo step {task!r} failed (exit code {proc.returncode}); see above")
        return json.loads(result.read_text())


def median(values: List[float]) -> Optional[float]:
    ordered = sorted(values)
    if not ordered:
        return None
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logdir", type=Path, required=True, help="where the runs are written")
    parser.add_argument("--size", choices=sorted(SIZES), default="full", help="full: ~3 min; small: ~1 min")
    parser.add_argument("--data-dir", type=Path, help="where the PNGs go (default: a temporary directory)")
    parser.add_argument("--runs", nargs="+", choices=RUNS, help="only these runs (default: all four)")
    parser.add_argument("--summary-json", type=Path, help="also write per-run Python-side timings here")
    parser.add_argument("--child", choices=("images", *RUNS), help=argparse.SUPPRESS)
    parser.add_argument("--child-result", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    size = SIZES[args.size]
    if args.child:
        return child(args.child, args.logdir, size, args.data_dir, args.child_result)

    runs = args.runs or list(RUNS)
    existing = [name for name in runs if (args.logdir / name).exists()]
    if existing:
        parser.error(f"{args.logdir} already holds {', '.join(existing)}; choose another --logdir")
    args.logdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="tb-advisor-demo-images-"))
    results: Dict[str, dict] = {}
    try:
        if not list(data_dir.glob("class*_*.png")):
            made = run_task("images", args, data_dir)
            print(f"wrote {made['images']} {IMAGE_SIDE}x{IMAGE_SIDE} PNGs in {made['seconds']} s", flush=True)
        for name in runs:
            result = run_task(name, args, data_dir)
            result["median_step_ms"] = median(result["profiled_step_ms"])
            results[name] = result
            print(
                f"{name:17s} {result['policy']:15s} median profiled step "
                f"{result['median_step_ms']:.1f} ms (run took {result['seconds']} s)",
                flush=True,
            )
    finally:
        if args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)
    total = round(time.perf_counter() - started, 1)
    if args.summary_json:
        summary = {"size": args.size, "seconds": total, "runs": results}
        args.summary_json.write_text(json.dumps(summary, indent=1))
    print(f"\ndone in {total} s. Next:")
    print(f"  tensorboard --logdir {args.logdir}     # open the Advisor tab")
    print(f"  tb-advisor doctor {args.logdir}        # run names, and what TensorBoard will show")
    print(f"  tb-advisor report {args.logdir} --run RUN")
    print(f"  tb-advisor diff {args.logdir} BASELINE_RUN CANDIDATE_RUN")
    return 0


if __name__ == "__main__":
    sys.exit(main())
