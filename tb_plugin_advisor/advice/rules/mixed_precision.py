"""The mixed-precision remedy in the run's framework and for its device.

A V100 or T4 has fp16 Tensor Cores and no bf16: there the remedy is float16 with loss scaling
(PyTorch's GradScaler, Keras' LossScaleOptimizer); from Ampere on bf16 needs no scaling and is the
default advice. Where the device's generation is unknown the rule's generic snippets (which name
both) stay. One table: (framework, 16-bit type) → the code shown; the rule's record is in
precision.py.
"""

from __future__ import annotations

from typing import Dict, Optional, Tuple

from tb_plugin_advisor.advice.rule import Snippets

# Lowest compute capability with native Tensor Core support of each 16-bit type, newest first.
SIXTEEN_BIT_FROM_CAPABILITY: Tuple[Tuple[Tuple[int, int], str], ...] = (((8, 0), "bf16"), ((7, 0), "fp16"))

# (framework, 16-bit type) → snippet. Frameworks as Facts.framework spells them; "jax" is also the
# JAX snippet shown beside the TF/Keras one on a run whose framework is not known.
SNIPPETS: Dict[Tuple[str, str], str] = {
    ("pytorch", "bf16"): (
        "with torch.autocast(device_type='cuda', dtype=torch.bfloat16):\n"
        "    loss = loss_fn(model(x), y)\n"
        "loss.backward()  # bf16 keeps fp32's range: no loss scaling needed"
    ),
    ("pytorch", "fp16"): (
        "scaler = torch.amp.GradScaler('cuda')  # float16 needs loss scaling; this GPU has no bf16\n"
        "with torch.autocast(device_type='cuda', dtype=torch.float16):\n"
        "    loss = loss_fn(model(x), y)\n"
        "scaler.scale(loss).backward()\n"
        "scaler.step(optimizer)\n"
        "scaler.update()"
    ),
    ("tf", "bf16"): "keras.mixed_precision.set_global_policy('mixed_bfloat16')",
    ("tf", "fp16"): (
        "keras.mixed_precision.set_global_policy('mixed_float16')  # this GPU has no bf16\n"
        "# custom loop: optimizer = keras.optimizers.LossScaleOptimizer(optimizer)"
    ),
    ("jax", "bf16"): (
        "# compute in bf16, keep params in fp32\n"
        "logits = model.apply(params, batch.astype(jnp.bfloat16))  # flax: nn.Dense(..., dtype=jnp.bfloat16)"
    ),
    ("jax", "fp16"): (
        "# this GPU has no bf16: compute in float16 and scale the loss (e.g. jmp.DynamicLossScale)\n"
        "logits = model.apply(params, batch.astype(jnp.float16))"
    ),
}


def sixteen_bit_type(compute_capability: Optional[Tuple[int, int]]) -> Optional[str]:
    """The 16-bit type an NVIDIA GPU of this compute capability runs on Tensor Cores; None when the
    capability is unknown or predates Tensor Cores."""
    if compute_capability is None:
        return None
    for lowest, kind in SIXTEEN_BIT_FROM_CAPABILITY:
        if tuple(compute_capability) >= lowest:
            return kind
    return None


def mixed_precision_snippets(compute_capability: Optional[Tuple[int, int]]) -> Optional[Snippets]:
    """The snippets for a device of this compute capability, or None to keep the generic ones."""
    kind = sixteen_bit_type(compute_capability)
    if kind is None:
        return None
    return Snippets(tf=SNIPPETS[("tf", kind)], jax=SNIPPETS[("jax", kind)],
                    pytorch=SNIPPETS[("pytorch", kind)])
