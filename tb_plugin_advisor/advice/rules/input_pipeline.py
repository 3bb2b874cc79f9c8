"""Rules about the step waiting for its input: tf.data pipelines (a sequential map, no prefetch, no
cache, files read one at a time, a map already parallel and still too slow), batches made on the
training thread inside the user's own annotation, preprocessing competing with training for the
cores, and PyTorch's DataLoader (no worker processes, pageable copies). Each check reads only
`Facts`; every fix here shows its gain in the `input` category (pinned copies in `memcpy`)."""

from __future__ import annotations

from typing import Iterator, Tuple

from tb_plugin_advisor.advice import gains
from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rule import PYTORCH, Fired, Rule, Snippets, category_fell
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import fixed, format_pct

# The user's input annotations, else the framework's input waits, and the step they hold up.
INPUT_EVIDENCE = ("input_annotation", "input_wait", "worst_step")
INPUT_FELL = category_fell("input")


def _input_severity(f: Facts) -> str:
    return "high" if f.input_bound == "high" else "medium"


def _input_bound(f: Facts) -> bool:
    return f.input_bound in ("high", "moderate")


def _input_pct(f: Facts) -> str:
    return f"input wait {format_pct(f.breakdown_pct.get('input', 0.0))} of the step ({f.input_bound})"


def parallel_map(f: Facts) -> Iterator[Fired]:
    if _input_bound(f) and f.dominant_stage == "map" and (f.sequential_map or (f.map_parallelism or 1) <= 1):
        how = "runs sequentially" if f.sequential_map else f"runs with parallelism {f.map_parallelism or 1}"
        yield Fired(_input_severity(f), f"{_input_pct(f)}; the map stage dominates and {how}.")


PARALLEL_MAP = Rule(
    id="input.parallel_map",
    title="Parallelise the tf.data map",
    message="The step waits for a map that processes one element at a time. Let tf.data run it on "
    "several cores and size the parallelism itself.",
    check=parallel_map,
    gain=gains.parallel_producer,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(
        tf="dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)",
        jax="# tf.data feeding JAX: the same fix\n"
        "dataset = dataset.map(preprocess, num_parallel_calls=tf.data.AUTOTUNE)",
    ),
    outcome=INPUT_FELL,
)


def prefetch(f: Facts) -> Iterator[Fired]:
    if _input_bound(f) and f.prefetch is False:
        yield Fired(_input_severity(f), f"{_input_pct(f)}; no Prefetch iterator in the pipeline.")


PREFETCH = Rule(
    id="input.prefetch",
    title="Prefetch batches while the model trains",
    message="Nothing prepares the next batch while the current step runs, so every step waits for the "
    "input pipeline. A prefetch buffer at the end of the pipeline overlaps the two.",
    check=prefetch,
    gain=gains.prefetch_overlap,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(
        tf="dataset = dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)",
        jax="dataset = dataset.batch(batch_size).prefetch(tf.data.AUTOTUNE)\n"
        "# and keep one batch on the device ahead of the step, e.g. "
        "flax.jax_utils.prefetch_to_device(it, 2)",
    ),
    outcome=INPUT_FELL,
)


def cache(f: Facts) -> Iterator[Fired]:
    """Reading files or an expensive map, every epoch again, with nothing cached."""
    reads_files = f.dominant_stage == "source" and f.file_source
    if _input_bound(f) and (reads_files or f.dominant_stage == "map") and f.cache is False:
        severity = "medium" if reads_files else "low"
        yield Fired(severity, f"{_input_pct(f)}; the {f.dominant_stage} stage dominates and nothing is "
                    "cached.")


CACHE = Rule(
    id="input.cache",
    title="Cache what does not change between epochs",
    message="Reading and decoding the same data every epoch costs the step time. If the decoded data "
    "fits in memory (or on local disk), cache it after the expensive deterministic work and before "
    "random augmentation.",
    check=cache,
    gain=gains.cache_reads,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(
        tf="dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache()"
        "  # or .cache('/local/ssd/cache')\n"
        "dataset = dataset.shuffle(10_000).map(augment, num_parallel_calls=tf.data.AUTOTUNE)",
        jax="dataset = dataset.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache()",
    ),
    outcome=INPUT_FELL,
)


def interleave(f: Facts) -> Iterator[Fired]:
    if _input_bound(f) and f.dominant_stage == "source" and f.file_source and f.interleave is False:
        yield Fired(_input_severity(f), f"{_input_pct(f)}; reading files dominates and they are read one at "
                    "a time.")


INTERLEAVE = Rule(
    id="input.interleave",
    title="Read files in parallel",
    message="The pipeline spends its time reading the source one file at a time. Interleave several "
    "files and read them in parallel.",
    check=interleave,
    gain=gains.parallel_producer,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(
        tf="files = tf.data.Dataset.list_files(pattern, shuffle=True)\n"
        "dataset = files.interleave(tf.data.TFRecordDataset, cycle_length=8,\n"
        "                           num_parallel_calls=tf.data.AUTOTUNE, deterministic=False)",
        jax="files = tf.data.Dataset.list_files(pattern, shuffle=True)\n"
        "dataset = files.interleave(tf.data.TFRecordDataset, num_parallel_calls=tf.data.AUTOTUNE)",
    ),
    outcome=INPUT_FELL,
)


def preprocess_offline(f: Facts) -> Iterator[Fired]:
    parallel = not f.sequential_map and (f.map_parallelism or 0) > 1
    if _input_bound(f) and f.dominant_stage == "map" and parallel:
        yield Fired(_input_severity(f), (
            f"{_input_pct(f)}; the map stage dominates although it already runs with "
            f"parallelism {f.map_parallelism}{' (autotune)' if f.autotune else ''}."
        ))


PREPROCESS_OFFLINE = Rule(
    id="input.preprocess_offline",
    title="Move preprocessing out of the training step",
    message="The map already runs in parallel and the step still waits for it: the CPU cannot "
    "preprocess fast enough. Preprocess once offline (store ready-to-train records), use cheaper "
    "operations, or move the augmentation into the model so it runs on the accelerator.",
    check=preprocess_offline,
    gain=gains.already_parallel,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(
        tf="# once, offline: dataset.map(expensive_decode).save('/data/preprocessed')\n"
        "dataset = tf.data.Dataset.load('/data/preprocessed').prefetch(tf.data.AUTOTUNE)\n"
        "# or run augmentation on the GPU inside the model:\n"
        "model = keras.Sequential([keras.layers.RandomFlip(), keras.layers.RandomContrast(0.2),\n"
        "                          base_model])",
        jax="# preprocess once offline and load ready arrays,\n"
        "# or augment on the device inside the jitted step",
    ),
    outcome=INPUT_FELL,
)


def background_prefetch(f: Facts) -> Iterator[Fired]:
    """The step waits in the user's own input annotation (JAX, custom loops: no tf.data, no DataLoader):
    the training thread makes each batch while the device waits, so prepare batches ahead of it."""
    if f.framework == PYTORCH or f.input_kind != "annotations" or not _input_bound(f):
        return  # PyTorch runs get the DataLoader rules
    if f.input_annotation_pct < th.INPUT_MODERATE_PCT:
        return  # the input wait is elsewhere (DevicePut, a get-next op)
    inside = f", mostly {f.input_annotation_inside}" if f.input_annotation_inside else ""
    yield Fired(_input_severity(f), (
        f"{_input_pct(f)}; {format_pct(f.input_annotation_pct)} of the step is spent inside the input "
        f"annotation '{f.input_annotation}' on the training thread{inside}: nothing prepares the next "
        "batch while the step runs."
    ))


BACKGROUND_PREFETCH = Rule(
    id="input.background_prefetch",
    title="Prepare the next batches while the step runs",
    message="The training thread makes each batch itself, inside its input annotation, while the "
    "device waits. Prepare batches ahead of the step: in a background thread that also puts them on "
    "the device (flax.jax_utils.prefetch_to_device), or in a pipeline with its own workers and "
    "prefetch (grain, tf.data); and move augmentation into the jitted step so it runs on the "
    "accelerator.",
    check=background_prefetch,
    gain=gains.parallel_producer,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(
        tf="# tf.data makes batches on its own threads, ahead of the step\n"
        "ds = tf.data.Dataset.from_generator(make_batches, output_signature=spec)  # or read files\n"
        "ds = ds.map(augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)\n"
        "for batch in ds.as_numpy_iterator():  # JAX; in a TF loop: for batch in ds\n"
        "    state = train_step(state, batch)",
        jax="import queue, threading\n"
        "def prefetched(batches, size=2):  # make and copy the next batches in a background thread\n"
        "    q = queue.Queue(maxsize=size)\n"
        "    def fill():\n"
        "        for b in batches:\n"
        "            q.put(jax.device_put(b))\n"
        "        q.put(None)\n"
        "    threading.Thread(target=fill, daemon=True).start()\n"
        "    while (b := q.get()) is not None:\n"
        "        yield b\n"
        "# or flax.jax_utils.prefetch_to_device(batches, 2)  (batches with a leading device axis)\n"
        "# or grain.DataLoader(..., worker_count=8) with prefetch: worker processes, free of the GIL\n"
        "# and augment inside the jitted step (jax.random, jax.image.resize) instead of in numpy",
    ),
    outcome=INPUT_FELL,
)


def preprocessing(f: Facts) -> Iterator[Fired]:
    share = f.preprocessing_pct
    competes = not f.device_kind or f.input_bound in ("high", "moderate")
    if share < th.PREPROCESSING_STEP_PCT or not competes:
        return
    severity = "high" if share >= th.PREPROCESSING_HIGH_PCT and not f.device_kind else "medium"
    where = []
    if f.preprocessing_input_threads_ms:
        where.append(f"{fixed(f.preprocessing_input_threads_ms, 1)} ms on tf.data threads")
    if f.preprocessing_step_threads_ms:
        where.append(f"{fixed(f.preprocessing_step_threads_ms, 1)} ms inside the step")
    ops = ", ".join(f.preprocessing_ops[:5])
    host = "on a CPU-only host they compete with training for the same cores" if not f.device_kind else (
        "and the step waits for input")
    yield Fired(severity, (
        f"Input preprocessing takes {format_pct(share)} of the step's time in CPU time per step "
        f"({'; '.join(where)}); {host}. Largest: {ops}."
    ))


PREPROCESSING = Rule(
    id="input.preprocessing",
    title="Take image decoding and augmentation off the training cores",
    message="Decoding, resizing and augmenting inputs uses a large share of the CPU time each step, "
    "wherever it runs (tf.data map threads or inside the step function). Cache the decoded data, "
    "preprocess once offline, use cheaper augmentation, move augmentation to the accelerator, or give "
    "the pipeline more cores.",
    check=preprocessing,
    gain=gains.preprocessing_moved,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(
        tf="# decode once and cache before random augmentation:\n"
        "ds = ds.map(decode, num_parallel_calls=tf.data.AUTOTUNE).cache()\n"
        "ds = ds.map(cheap_augment, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)\n"
        "# or preprocess offline: ds.map(decode_resize).save('/data/ready'); tf.data.Dataset.load(...)\n"
        "# or augment on the accelerator: keras.layers.RandomContrast(0.2) inside the model\n"
        "# more cores for the pipeline: tf.data.experimental.service, or a bigger host",
        jax="# decode/resize once offline and load arrays; augment on the device inside the jitted\n"
        "# step (jax.random + jax.image.resize), or cache the decoded dataset",
        pytorch="# decode/augment in DataLoader workers, or on the GPU after the copy\n"
        "loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True,\n"
        "                    persistent_workers=True, prefetch_factor=4)\n"
        "# or preprocess once offline and load ready tensors (torch.save / memory-mapped numpy)",
    ),
    outcome=INPUT_FELL,
)


def dataloader_workers(f: Facts) -> Iterator[Fired]:
    """The loop waits for its input: load batches in worker processes, pinned. The evidence says what
    the loop waits in (the DataLoader panel's kind), so a loader that already has workers, or a loop
    with its own loading code, is not told it waits for a single-process DataLoader."""
    if f.framework != PYTORCH or not _input_bound(f):
        return
    severity = _input_severity(f)
    share = _input_pct(f)
    if f.input_kind == "annotations":
        inside = f", mostly {f.input_annotation_inside}" if f.input_annotation_inside else ""
        yield Fired(severity, (
            f"{share}: the training loop loads its batches itself, inside its annotation "
            f"'{f.input_annotation}'{inside}, not in a DataLoader."
        ))
        return
    wait = f"; longest wait: {f.input_wait_event}" if f.input_wait_event else ""
    if f.torch_dataloader == "multi":
        yield Fired(severity, (
            f"{share}: the training loop waits for the DataLoader's next batch although it already loads "
            f"in worker processes: more workers, a cheaper __getitem__ or preprocessing offline{wait}."
        ))
        return
    yield Fired(severity, f"{share}: the training loop waits for the DataLoader's next batch{wait}.")


DATALOADER_WORKERS = Rule(
    id="input.dataloader_workers",
    title="Load batches in DataLoader worker processes",
    message="The training loop waits for its DataLoader: batches are loaded and augmented in the main "
    "process while the device idles. Worker processes prepare the next batches during the step; pinned "
    "memory lets the host-to-device copy overlap it.",
    check=dataloader_workers,
    gain=gains.parallel_producer,
    evidence=INPUT_EVIDENCE,
    snippets=Snippets(pytorch=(
        "loader = torch.utils.data.DataLoader(\n"
        "    dataset, batch_size=batch_size, shuffle=True,\n"
        "    num_workers=8,            # about the free CPU cores; load and augment in parallel\n"
        "    pin_memory=True,          # page-locked batches copy to the GPU asynchronously\n"
        "    persistent_workers=True,  # keep the workers between epochs\n"
        "    prefetch_factor=4)        # batches each worker prepares ahead\n"
        "x = x.to('cuda', non_blocking=True)  # from pinned memory, overlaps the step"
    )),
    outcome=INPUT_FELL,
)


def pin_memory(f: Facts) -> Iterator[Fired]:
    """Host-to-device copies from pageable memory take a visible share of the step."""
    if f.framework != PYTORCH or f.torch_pageable_h2d_pct < th.TORCH_PAGEABLE_COPY_PCT:
        return
    yield Fired("medium", (
        f"copies from pageable host memory ('Memcpy HtoD (Pageable -> Device)') take "
        f"{fixed(f.torch_pageable_h2d_ms, 2)} ms per step "
        f"({format_pct(f.torch_pageable_h2d_pct)} of the step); "
        "they are staged through a bounce buffer and cannot overlap compute."
    ))


PIN_MEMORY = Rule(
    id="input.pin_memory",
    title="Copy batches from pinned memory, asynchronously",
    message="Host-to-device copies from pageable memory are staged through a bounce buffer and block "
    "the stream. pin_memory=True in the DataLoader and .to(device, non_blocking=True) let the copy "
    "overlap compute.",
    check=pin_memory,
    gain=gains.pinned_copies,
    evidence=("pageable_copy", "worst_step"),  # the copies it is about, then the step they slow
    snippets=Snippets(pytorch=(
        "loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True)\n"
        "for x, y in loader:\n"
        "    x = x.to(device, non_blocking=True)\n"
        "    y = y.to(device, non_blocking=True)"
    )),
    outcome=category_fell("memcpy"),
)

# Registration order is the tie order among advice of equal severity and gain (advice/registry.py).
RULES: Tuple[Rule[Facts], ...] = (
    PARALLEL_MAP, PREFETCH, CACHE, INTERLEAVE, PREPROCESS_OFFLINE, BACKGROUND_PREFETCH, PREPROCESSING,
    DATALOADER_WORKERS, PIN_MEMORY,
)
