"""PyTorch's side of the recommendation table: the snippet each rule shows on a PyTorch run, and the
rules only PyTorch has (DataLoader workers, torch.compile / CUDA graphs).

recommend.py merges these into its one table; a rule without a PyTorch snippet shows none on a
PyTorch run rather than a TF/JAX snippet that does not apply.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, Optional, Tuple

from tb_plugin_advisor.advice.rules.core import small_kernels
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.formatting import fixed, format_pct

if TYPE_CHECKING:  # recommend.py imports this module; Facts is only a type here
    from tb_plugin_advisor.advice.facts import Facts

PYTORCH = "pytorch"

# rule id → the PyTorch snippet shown on PyTorch runs
PYTORCH_SNIPPETS: Dict[str, str] = {
    "precision.mixed": (
        "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):  # torch.float16 before Ampere\n"
        "    loss = loss_fn(model(x), y)\n"
        "loss.backward()  # with float16 also: scaler = torch.amp.GradScaler(); scaler.scale(loss).backward()"
    ),
    "precision.tf32": (
        "torch.set_float32_matmul_precision('high')  # TF32 for matmuls\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        "torch.backends.cudnn.allow_tf32 = True  # convolutions"
    ),
    "layout.transpose": (
        "model = model.to(memory_format=torch.channels_last)\n"
        "x = x.to(memory_format=torch.channels_last)  # each input batch too"
    ),
    "device.no_kernels": (
        "with torch.profiler.profile(\n"
        "        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],\n"
        "        schedule=torch.profiler.schedule(wait=1, warmup=2, active=5),\n"
        "        on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir)) as prof:\n"
        "    ...  # and libcupti must load: pip install nvidia-cuda-cupti-cu12"
    ),
    "profile.warmup_step": (
        "schedule = torch.profiler.schedule(skip_first=10, wait=1, warmup=2, active=5)"
    ),
    "profile.few_steps": "schedule = torch.profiler.schedule(wait=1, warmup=2, active=10)",
    "profile.step_markers": (
        "with torch.profiler.profile(schedule=..., on_trace_ready=...) as prof:\n"
        "    for x, y in loader:\n"
        "        train_step(x, y)\n"
        "        prof.step()  # marks ProfilerStep#N"
    ),
    "input.dataloader_workers": (
        "loader = torch.utils.data.DataLoader(\n"
        "    dataset, batch_size=batch_size, shuffle=True,\n"
        "    num_workers=8,            # about the free CPU cores; load and augment in parallel\n"
        "    pin_memory=True,          # page-locked batches copy to the GPU asynchronously\n"
        "    persistent_workers=True,  # keep the workers between epochs\n"
        "    prefetch_factor=4)        # batches each worker prepares ahead\n"
        "x = x.to('cuda', non_blocking=True)  # from pinned memory, overlaps the step"
    ),
    "input.pin_memory": (
        "loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True)\n"
        "for x, y in loader:\n"
        "    x = x.to(device, non_blocking=True)\n"
        "    y = y.to(device, non_blocking=True)"
    ),
    "optimizer.zero_grad_set_to_none": "optimizer.zero_grad(set_to_none=True)  # the default since torch 2.0",
    "host.sync": (
        "# keep values on the device inside the step; read them every N steps\n"
        "running_loss += loss.detach()          # not loss.item()\n"
        "if step % 100 == 0:\n"
        "    print(running_loss.item() / 100); running_loss.zero_()"
    ),
    "precision.cpu_16bit": (
        "# lscpu | grep -o -w -E 'amx_bf16|avx512_bf16|amx_fp16|avx512_fp16'   (empty: emulated)\n"
        "# without native 16-bit math keep CPU compute in float32: no torch.autocast('cpu', ...)"
    ),
    "device.copy_bound": (
        "# keep tensors on the device across steps; copy each batch once, pinned and asynchronously\n"
        "loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True)\n"
        "x = x.to(device, non_blocking=True)   # and avoid .cpu()/.numpy() inside the step"
    ),
    "input.preprocessing": (
        "# decode/augment in DataLoader workers, or on the GPU after the copy\n"
        "loader = DataLoader(dataset, batch_size=bs, num_workers=8, pin_memory=True,\n"
        "                    persistent_workers=True, prefetch_factor=4)\n"
        "# or preprocess once offline and load ready tensors (torch.save / memory-mapped numpy)"
    ),
    "compile.torch": (
        "model = torch.compile(model)  # fuses small kernels\n"
        "# launch-bound and static shapes: also capture CUDA graphs\n"
        "model = torch.compile(model, mode='reduce-overhead')"
    ),
}


def _input_bound(f: Facts) -> bool:
    return f.framework == PYTORCH and f.input_bound in ("high", "moderate")


def dataloader_workers(f: Facts) -> Optional[Tuple[str, str]]:
    """The loop waits for its input: load batches in worker processes, pinned. The evidence says what
    the loop waits in (the DataLoader panel's kind), so a loader that already has workers, or a loop
    with its own loading code, is not told it waits for a single-process DataLoader."""
    if not _input_bound(f):
        return None
    severity = "high" if f.input_bound == "high" else "medium"
    share = f"input wait {format_pct(f.breakdown_pct.get('input', 0.0))} of the step ({f.input_bound})"
    if f.input_kind == "annotations":
        inside = f", mostly {f.input_annotation_inside}" if f.input_annotation_inside else ""
        return severity, (
            f"{share}: the training loop loads its batches itself, inside its annotation "
            f"'{f.input_annotation}'{inside}, not in a DataLoader."
        )
    wait = f"; longest wait: {f.input_wait_event}" if f.input_wait_event else ""
    if f.torch_dataloader == "multi":
        return severity, (
            f"{share}: the training loop waits for the DataLoader's next batch although it already loads "
            f"in worker processes: more workers, a cheaper __getitem__ or preprocessing offline{wait}."
        )
    return severity, f"{share}: the training loop waits for the DataLoader's next batch{wait}."


def torch_compile(f: Facts) -> Optional[Tuple[str, str]]:
    """Many small kernels or a launch-bound step on a GPU, in eager PyTorch."""
    if f.framework != PYTORCH or f.device_kind != "GPU" or not f.step_count:
        return None
    fired = small_kernels(f)
    return (fired[0], f"{fired[1]}.") if fired else None


def pin_memory(f: Facts) -> Optional[Tuple[str, str]]:
    """Host-to-device copies from pageable memory take a visible share of the step."""
    if f.framework != PYTORCH or f.torch_pageable_h2d_pct < th.TORCH_PAGEABLE_COPY_PCT:
        return None
    return "medium", (
        f"copies from pageable host memory ('Memcpy HtoD (Pageable -> Device)') take "
        f"{fixed(f.torch_pageable_h2d_ms, 2)} ms per step "
        f"({format_pct(f.torch_pageable_h2d_pct)} of the step); "
        "they are staged through a bounce buffer and cannot overlap compute."
    )


def zero_grad_set_to_none(f: Facts) -> Optional[Tuple[str, str]]:
    """zero_grad fills every gradient with zeros (set_to_none=False)."""
    if f.framework != PYTORCH or f.torch_zero_grad_fills < 1:
        return None
    return "low", (
        f"Optimizer.zero_grad runs {fixed(f.torch_zero_grad_fills, 0)} zero-filling ops "
        "(aten::zero_/fill_) per "
        "step: gradients are overwritten with zeros instead of being dropped."
    )


# (id, title, message, check) of the PyTorch-only rules; their snippets are in PYTORCH_SNIPPETS
PYTORCH_RULES = (
    (
        "input.dataloader_workers",
        "Load batches in DataLoader worker processes",
        "The training loop waits for its DataLoader: batches are loaded and augmented in the main process "
        "while the device idles. Worker processes prepare the next batches during the step; pinned memory "
        "lets the host-to-device copy overlap it.",
        dataloader_workers,
    ),
    (
        "compile.torch",
        "Compile the model with torch.compile (and CUDA graphs)",
        "The step launches many small kernels one by one from Python and the GPU waits between them. "
        "torch.compile fuses them; mode='reduce-overhead' also replays the step as a CUDA graph.",
        torch_compile,
    ),
    (
        "input.pin_memory",
        "Copy batches from pinned memory, asynchronously",
        "Host-to-device copies from pageable memory are staged through a bounce buffer and block the "
        "stream. pin_memory=True in the DataLoader and .to(device, non_blocking=True) let the copy overlap "
        "compute.",
        pin_memory,
    ),
    (
        "optimizer.zero_grad_set_to_none",
        "Drop gradients instead of zero-filling them",
        "zero_grad(set_to_none=False) launches a fill for every parameter's gradient each step; "
        "set_to_none=True skips that work and its memory traffic.",
        zero_grad_set_to_none,
    ),
)
