"""What a device's matrix units can do (Tensor Cores, MFMA, TPU MXU), as tables: NVIDIA by compute
capability, AMD by gfx version or model name, TPUs always. Used to say whether a matrix kernel could
have used Tensor Cores and whether TF32 applies."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Dict, Optional, Tuple


@dataclass(frozen=True)
class Architecture:
    """Matrix-unit capabilities of a GPU generation (None: not known from the profile)."""

    name: str
    tensor_cores: Optional[bool]
    tf32: Optional[bool] = False
    # TPUs: XLA lowers every dot/convolution onto the matrix unit (MXU), so eligible means used.
    matrix_ops_always: bool = False


# NVIDIA by compute capability (the highest entry not above the device's wins).
NVIDIA_ARCHITECTURES: Tuple[Tuple[Tuple[int, int], Architecture], ...] = (
    ((0, 0), Architecture("pre-Volta", False)),
    ((7, 0), Architecture("Volta", True)),
    ((7, 5), Architecture("Turing", True)),
    ((8, 0), Architecture("Ampere", True, tf32=True)),
    ((8, 9), Architecture("Ada", True, tf32=True)),
    ((9, 0), Architecture("Hopper", True, tf32=True)),
    ((10, 0), Architecture("Blackwell", True, tf32=True)),
)
# AMD: MFMA matrix cores from CDNA (MI100, gfx908) on. ROCm reports gfx9xx as capability 9.x, and
# 9.0 covers both gfx906 (MI50, no MFMA) and gfx908/gfx90a, so only the model name or ≥ 9.4 decides.
AMD_MATRIX_MODEL = r"MI\s?(?:1\d\d|2\d\d|3\d\d|4\d\d)"
AMD_ARCHITECTURES: Tuple[Tuple[Tuple[int, int], Architecture], ...] = (
    ((9, 4), Architecture("CDNA3", True, tf32=True)),  # gfx942: MI300 (xf32 MFMA)
    ((9, 5), Architecture("CDNA4", True)),  # gfx950: MI350/MI355
)
UNKNOWN_ARCHITECTURE = Architecture("unknown", None, tf32=None)

# Tensor Core GEMM/convolution paths want every matrix dimension to be a multiple of this many
# elements (NVIDIA's performance guides: 8 for fp16/bf16, 16 for int8/fp8, 4 for TF32).
TENSOR_CORE_DIM_MULTIPLE: Dict[str, int] = {"fp16": 8, "bf16": 8, "tf32": 4, "int8": 16, "fp8": 16}


def architecture(
    vendor: str, model: str, capability: Optional[Tuple[int, int]], kind: str = "gpu"
) -> Architecture:
    """The matrix-unit capabilities of one device, from what its plane records."""
    vendor_l = (vendor or "").lower()
    if kind == "tpu" or vendor_l == "google":
        return Architecture("TPU", True, tf32=False, matrix_ops_always=True)
    if vendor_l.startswith("amd") or "instinct" in (model or "").lower():
        chosen = None
        for min_cc, arch in AMD_ARCHITECTURES:
            if capability is not None and capability >= min_cc:
                chosen = arch
        if chosen is not None:
            return chosen
        if re.search(AMD_MATRIX_MODEL, model or ""):
            return Architecture("CDNA", True)
        return UNKNOWN_ARCHITECTURE
    if capability is None:
        return UNKNOWN_ARCHITECTURE
    chosen = UNKNOWN_ARCHITECTURE
    for min_cc, arch in NVIDIA_ARCHITECTURES:
        if capability >= min_cc:
            chosen = arch
    return chosen
