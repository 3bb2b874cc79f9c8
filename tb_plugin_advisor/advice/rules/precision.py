"""Rules about the numeric types the work runs in: fp32 where 16-bit Tensor Cores would do
(`precision.mixed`), plain fp32 matmuls on GPUs with TF32 (`precision.tf32`), and 16-bit math on a
CPU that may emulate it (`precision.cpu_16bit`). Each check reads only `Facts`."""

from __future__ import annotations

from typing import Iterator, Tuple

from tb_plugin_advisor.advice import gains
from tb_plugin_advisor.advice.facts import Facts
from tb_plugin_advisor.advice.rule import Fired, Rule, Snippets, share_rose
from tb_plugin_advisor.advice.rules.mixed_precision import mixed_precision_snippets
from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.patterns import LOW_PRECISION_FLOATS
from tb_plugin_advisor.formatting import format_pct

# The kernels that should move to a faster type, the slowest of them, the step they slow down.
MATRIX_EVIDENCE = ("fp32_matmul", "worst_step")  # the fp32 matmuls, never any other kernel


def mixed_precision(f: Facts) -> Iterator[Fired]:
    capability = f.compute_capability
    if f.device_kind != "GPU" or capability is None or capability < th.MIXED_PRECISION_MIN_CC:
        return
    fp32 = f.precision_pct.get("fp32", 0.0) + f.precision_pct.get("tf32", 0.0)
    device = f.breakdown_pct.get("device_compute", 0.0)
    if fp32 >= th.PRECISION_FP32_SHARE_PCT and device >= th.PRECISION_DEVICE_SHARE_PCT:
        ops = f"; largest fp32 ops: {', '.join(f.top_fp32_ops[:3])}" if f.top_fp32_ops else ""
        severity = "high" if f.bottleneck == "device" else "medium"
        yield Fired(severity, (
            f"{format_pct(fp32)} of device compute runs in fp32/tf32 and device compute is "
            f"{format_pct(device)} of the step{ops}."
        ))


MIXED_SNIPPETS = Snippets(
    tf="keras.mixed_precision.set_global_policy('mixed_bfloat16')  # 'mixed_float16' before Ampere\n"
    "# with mixed_float16 and a custom loop: optimizer = keras.optimizers.LossScaleOptimizer(optimizer)",
    jax="# compute in bf16, keep params in fp32\n"
    "logits = model.apply(params, batch.astype(jnp.bfloat16))  # flax: nn.Dense(..., dtype=jnp.bfloat16)",
    pytorch="with torch.autocast(device_type='cuda', dtype=torch.bfloat16):  # torch.float16 before Ampere\n"
    "    loss = loss_fn(model(x), y)\n"
    "loss.backward()  # with float16 also: scaler = torch.amp.GradScaler(); scaler.scale(loss).backward()",
)


def _mixed_snippets(f: Facts) -> Snippets:
    """bf16, or fp16 with loss scaling, as the GPU supports; both named where its generation is unknown."""
    return mixed_precision_snippets(f.compute_capability) or MIXED_SNIPPETS


MIXED = Rule(
    id="precision.mixed",
    title="Use mixed precision",
    message="Most device time runs in 32-bit. With mixed precision matmuls and convolutions run in "
    "16-bit on Tensor Cores while variables stay in fp32 (bf16 needs compute capability 8.0+, fp16 7.0+).",
    check=mixed_precision,
    gain=gains.mixed_precision_speedup,
    evidence=MATRIX_EVIDENCE,
    snippets=_mixed_snippets,
    outcome=share_rose("device_compute", LOW_PRECISION_FLOATS),
)


def cpu_16bit(f: Facts) -> Iterator[Fired]:
    """bf16/fp16 dominate a CPU-only profile: low (and saying it is fine) where the profile itself
    shows native 16-bit kernels; medium otherwise, never high: emulated 16-bit math is several times
    slower than fp32, but native math is faster than fp32, and a profile without named kernels cannot
    tell the two apart (nor can the flags of the machine running the Advisor, whatever its host name).
    The evidence says how to find out."""
    if f.cpu_16bit_dtype:
        yield Fired("low" if f.cpu_16bit_native is True else "medium", f.cpu_16bit_evidence)


CPU_16BIT = Rule(
    id="precision.cpu_16bit",
    title="bf16/fp16 on a CPU: check it has native 16-bit math",
    message="16-bit math is fast on a CPU only with AMX or AVX512-BF16 (bf16) / AMX-FP16 or AVX512-FP16 "
    "(fp16); elsewhere it is emulated and runs several times slower than float32 (the bundled "
    "sample's bf16 run is 8× slower than its fp32 run). Check the flags with lscpu; without them, "
    "train in float32 on this CPU and keep mixed precision for GPUs/TPUs or CPUs with AMX.",
    check=cpu_16bit,
    gain=gains.cpu_16bit_unknown,
    evidence=("worst_step",),
    snippets=Snippets(
        tf="# lscpu | grep -o -w -E 'amx_bf16|avx512_bf16|amx_fp16|avx512_fp16'   (empty: emulated)\n"
        "keras.mixed_precision.set_global_policy('float32')  # on CPUs without those flags",
        jax="# without amx_bf16/avx512_bf16 keep CPU compute in float32:\n"
        "params = jax.tree_util.tree_map(lambda p: p.astype(jnp.float32), params)",
        pytorch="# lscpu | grep -o -w -E 'amx_bf16|avx512_bf16|amx_fp16|avx512_fp16'   (empty: emulated)\n"
        "# without native 16-bit math keep CPU compute in float32: no torch.autocast('cpu', ...)",
    ),
    outcome=share_rose("host_compute", ("fp32",)),
)


def tf32(f: Facts) -> Iterator[Fired]:
    if f.device_kind != "GPU" or f.compute_capability is None or f.compute_capability < th.TF32_MIN_CC:
        return
    if f.fp32_matmul_pct >= th.TF32_FP32_MATMUL_SHARE_PCT and f.precision_pct.get("tf32", 0.0) < 1.0:
        major, minor = f.compute_capability
        yield Fired("medium", (
            f"{format_pct(f.fp32_matmul_pct)} of device time is matmul/convolution in plain fp32 "
            f"on a GPU with TF32 Tensor Cores (compute capability {major}.{minor})."
        ))


TF32 = Rule(
    id="precision.tf32",
    title="Let fp32 matmuls use TF32 Tensor Cores",
    message="On Ampere and newer GPUs fp32 matmuls and convolutions can run on Tensor Cores in TF32 "
    "(10-bit mantissa inputs, fp32 accumulate). These ran in full fp32 on the FMA units: TF32 was "
    "turned off.",
    check=tf32,
    gain=gains.tf32_speedup,
    evidence=MATRIX_EVIDENCE,
    snippets=Snippets(
        tf="tf.config.experimental.enable_tensor_float_32_execution(True)",
        jax="jax.config.update('jax_default_matmul_precision', 'tensorfloat32')",
        pytorch="torch.set_float32_matmul_precision('high')  # TF32 for matmuls\n"
        "torch.backends.cuda.matmul.allow_tf32 = True\n"
        "torch.backends.cudnn.allow_tf32 = True  # convolutions",
    ),
    outcome=share_rose("device_compute", ("tf32",) + LOW_PRECISION_FLOATS),
)

# Registration order is the tie order among advice of equal severity and gain (advice/registry.py).
RULES: Tuple[Rule[Facts], ...] = (MIXED, CPU_16BIT, TF32)
