"""Capture real GPU profiles whose truth is known by construction, for checking the Advisor's diagnosis.

Each capture changes one thing against a baseline, so the diagnosis that should follow is known
before the profile is read: a DataLoader starved in the main process against one with workers, fp32
against bf16 autocast, a launch-bound loop, a loop that syncs the host every step, and a JAX jit loop
with and without a slow host-side input step. Run on a machine with a CUDA GPU:

    python bench/capture_gpu_profiles.py OUTDIR [--only NAME ...]

OUTDIR becomes a logdir: ``OUTDIR/<run>/`` holds PyTorch's ``*.pt.trace.json.gz`` or JAX's
``plugins/profile/<session>/<host>.xplane.pb``. ``OUTDIR/captures.json`` records what each run was
and its measured wall-clock step time outside the profiler, so a reader can compare.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Callable

PROFILED_STEPS = 4
WARMUP_STEPS = 3


def _torch_profile(run_dir: Path, step: Callable[[], None], steps_timed: int = 6) -> dict:
    """Profile ``step`` with PyTorch's TensorBoard handler after timing it unprofiled."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    for _ in range(WARMUP_STEPS):
        step()
    torch.cuda.synchronize()
    started = time.perf_counter()
    for _ in range(steps_timed):
        step()
    torch.cuda.synchronize()
    wall_ms = (time.perf_counter() - started) * 1000 / steps_timed
    run_dir.mkdir(parents=True, exist_ok=True)
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        schedule=schedule(wait=1, warmup=1, active=PROFILED_STEPS, repeat=1),
        on_trace_ready=tensorboard_trace_handler(str(run_dir), worker_name="gpu0", use_gzip=True),
        record_shapes=True,
        profile_memory=True,
        with_flops=True,
    ) as prof:
        for _ in range(PROFILED_STEPS + 2):
            step()
            prof.step()
    return {"unprofiled_step_ms": round(wall_ms, 2)}


class _SlowImages:
    """A map-style dataset whose per-sample CPU work stands in for JPEG decoding and augmentation."""

    def __init__(self, size: int, work: int) -> None:
        self.size = size
        self.work = work

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int):
        import numpy as np
        import torch

        rng = np.random.default_rng(index)
        image = rng.random((3, 224, 224), dtype=np.float32)
        for _ in range(self.work):
            image = np.sqrt(image * image + 1e-3)
        return torch.from_numpy(image), int(index % 1000)


def _resnet_step(loader_workers: int, dtype: str, work: int = 6) -> Callable[[], None]:
    import torch
    import torchvision

    torch.backends.cudnn.benchmark = True
    model = torchvision.models.resnet50(weights=None).cuda()
    if dtype == "channels_last_bf16":
        model = model.to(memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    loader = torch.utils.data.DataLoader(
        _SlowImages(100_000, work),
        batch_size=64,
        num_workers=loader_workers,
        pin_memory=loader_workers > 0,
        persistent_workers=loader_workers > 0,
        prefetch_factor=4 if loader_workers > 0 else None,
    )
    batches = iter(loader)
    autocast = dtype in ("bf16", "channels_last_bf16")

    def step() -> None:
        images, labels = next(batches)
        images = images.cuda(non_blocking=True)
        if dtype == "channels_last_bf16":
            images = images.contiguous(memory_format=torch.channels_last)
        labels = labels.cuda(non_blocking=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = loss_fn(model(images), labels)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def _transformer_step(dtype: str) -> Callable[[], None]:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    layer = torch.nn.TransformerEncoderLayer(
        d_model=1024, nhead=16, dim_feedforward=4096, batch_first=True, norm_first=True
    )
    model = torch.nn.TransformerEncoder(layer, num_layers=6, enable_nested_tensor=False).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    tokens = torch.randn(16, 512, 1024, device="cuda")
    autocast = dtype == "bf16"

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            loss = model(tokens).float().pow(2).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def _launch_bound_step(compiled: bool = False) -> Callable[[], None]:
    import torch

    layers = [torch.nn.Linear(64, 64).cuda() for _ in range(40)]
    params = [p for layer in layers for p in layer.parameters()]
    optimizer = torch.optim.Adam(params, lr=1e-3, foreach=False)
    x = torch.randn(8, 64, device="cuda")

    def forward(h):
        for layer in layers:
            h = torch.relu(layer(h))
        return h.sum()

    forward_fn = torch.compile(forward, mode="reduce-overhead") if compiled else forward

    def step() -> None:
        loss = forward_fn(x)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def _host_sync_step() -> Callable[[], None]:
    import torch

    model = torch.nn.Sequential(*[torch.nn.Linear(2048, 2048) for _ in range(8)]).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(256, 2048, device="cuda")
    seen: list[float] = []

    def step() -> None:
        for _ in range(8):
            loss = model(x).pow(2).mean()
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            seen.append(loss.item())

    return step


def _jax_capture(run_dir: Path, slow_input: bool) -> dict:
    import jax
    import jax.numpy as jnp
    import numpy as np

    key = jax.random.PRNGKey(0)
    sizes = [1024, 4096, 4096, 1024]
    params = []
    for fan_in, fan_out in zip(sizes, sizes[1:]):
        key, sub = jax.random.split(key)
        params.append((jax.random.normal(sub, (fan_in, fan_out)) * 0.02, jnp.zeros(fan_out)))

    def loss_fn(params, x):
        h = x
        for w, b in params:
            h = jax.nn.gelu(h @ w + b)
        return jnp.mean(h * h)

    @jax.jit
    def train_step(params, x):
        grads = jax.grad(loss_fn)(params, x)
        return [(w - 1e-3 * gw, b - 1e-3 * gb) for (w, b), (gw, gb) in zip(params, grads)]

    rng = np.random.default_rng(0)

    def host_batch() -> np.ndarray:
        batch = rng.random((2048, 1024), dtype=np.float32)
        if slow_input:
            for _ in range(30):
                batch = np.sqrt(batch * batch + 1e-3)
        return batch

    for _ in range(WARMUP_STEPS):
        params = train_step(params, jnp.asarray(host_batch()))
    jax.block_until_ready(params)
    started = time.perf_counter()
    for _ in range(6):
        params = train_step(params, jnp.asarray(host_batch()))
    jax.block_until_ready(params)
    wall_ms = (time.perf_counter() - started) * 1000 / 6
    run_dir.mkdir(parents=True, exist_ok=True)
    jax.profiler.start_trace(str(run_dir))
    for number in range(PROFILED_STEPS + 2):
        with jax.profiler.StepTraceAnnotation("train", step_num=number):
            with jax.profiler.TraceAnnotation("input"):
                batch = jnp.asarray(host_batch())
            params = train_step(params, batch)
            jax.block_until_ready(params)
    jax.profiler.stop_trace()
    return {"unprofiled_step_ms": round(wall_ms, 2)}


CAPTURES: dict[str, tuple[str, Callable[[Path], dict]]] = {
    "resnet50_fp32_workers0": (
        "ResNet-50 bs64 fp32, DataLoader num_workers=0 with CPU-heavy samples: input-bound",
        lambda d: _torch_profile(d, _resnet_step(0, "fp32")),
    ),
    "resnet50_fp32_workers8": (
        "the same with num_workers=8, pin_memory, prefetch 4: the input fix",
        lambda d: _torch_profile(d, _resnet_step(8, "fp32")),
    ),
    "resnet50_bf16_workers8": (
        "the same with bf16 autocast: the mixed-precision fix on top",
        lambda d: _torch_profile(d, _resnet_step(8, "bf16")),
    ),
    "transformer_fp32": (
        "6-layer encoder d1024 seq512 bs16, fp32 with TF32 off: Tensor Cores unused",
        lambda d: _torch_profile(d, _transformer_step("fp32")),
    ),
    "transformer_bf16": (
        "the same under bf16 autocast",
        lambda d: _torch_profile(d, _transformer_step("bf16")),
    ),
    "mlp_launch_bound": (
        "40 tiny Linear layers at batch 8 with per-parameter Adam: launch-bound",
        lambda d: _torch_profile(d, _launch_bound_step()),
    ),
    "mlp_launch_bound_compiled": (
        "the same forward under torch.compile(mode='reduce-overhead'): the launch fix",
        lambda d: _torch_profile(d, _launch_bound_step(compiled=True)),
    ),
    "resnet50_bf16_channels_last_workers8": (
        "ResNet-50 bf16 autocast with the model in channels_last: the layout fix",
        lambda d: _torch_profile(d, _resnet_step(8, "channels_last_bf16")),
    ),
    **{
        f"resnet50_fp32_workers8_repeat{n}": (
            "ResNet-50 fp32 with 8 workers again, unchanged: same-config noise for a trend",
            lambda d: _torch_profile(d, _resnet_step(8, "fp32")),
        )
        for n in (1, 2, 3)
    },
    **{
        f"transformer_fp32_repeat{n}": (
            "the fp32 transformer again, unchanged: same-config captures before a change, for a trend",
            lambda d: _torch_profile(d, _transformer_step("fp32")),
        )
        for n in (1, 2)
    },
    "transformer_bf16_repeat1": (
        "the bf16 transformer again: two captures after the change",
        lambda d: _torch_profile(d, _transformer_step("bf16")),
    ),
    "mlp_host_sync": (
        "8 optimizer steps per profiled step, each ending in loss.item(): host syncs",
        lambda d: _torch_profile(d, _host_sync_step()),
    ),
    "jax_mlp": (
        "JAX jit MLP with StepTraceAnnotation, fast host input",
        lambda d: _jax_capture(d, slow_input=False),
    ),
    "jax_mlp_slow_input": (
        "the same with a slow numpy input step inside an 'input' TraceAnnotation: input-bound",
        lambda d: _jax_capture(d, slow_input=True),
    ),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--only", nargs="*", default=None, help="capture only these runs")
    args = parser.parse_args(argv)
    args.outdir.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    record: dict[str, dict] = {}
    for name, (what, capture) in CAPTURES.items():
        if args.only and name not in args.only:
            continue
        started = time.perf_counter()
        try:
            measured = capture(args.outdir / name)
            record[name] = {"what": what, **measured, "ok": True}
        except Exception as error:  # one failed capture must not lose the others
            traceback.print_exc()
            record[name] = {"what": what, "ok": False, "error": repr(error)}
        record[name]["capture_s"] = round(time.perf_counter() - started, 1)
        print(name, json.dumps(record[name]), flush=True)
    try:
        import torch

        record["_device"] = {
            "name": torch.cuda.get_device_name(0),
            "torch": torch.__version__,
            "capability": list(torch.cuda.get_device_capability(0)),
        }
    except Exception as error:
        record["_device"] = {"error": repr(error)}
    (args.outdir / "captures.json").write_text(json.dumps(record, indent=2))
    return 0 if all(entry.get("ok", True) for entry in record.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
