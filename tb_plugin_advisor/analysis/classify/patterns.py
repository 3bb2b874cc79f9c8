"""Kernel and op names → precision, Tensor Core / matrix-core use, kernel family, op eligibility.

The one table-driven place for these patterns (ARCHITECTURE.md §6 lists what the built-in tab misses: bf16
counted as 32-bit, TF32 `sm80_xmma_*`, cutlass tensorop, Hopper `nvjet`/`sm90_*`, flash attention,
Triton and AMD MFMA kernels, and JAX ops never "eligible"). Every rule carries a stable id; the tests
hold a real kernel or op name for each id and fail when an id is decided by none of them.

Names are classified once per distinct name (`classify_kernel` is cached); analyses map the result
over the KernelTable columns with numpy, so a million kernels cost one pass over the name table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from tb_plugin_advisor.analysis.classify.architectures import Architecture
from tb_plugin_advisor.analysis.classify.onednn_ops import familiar_op_type
from tb_plugin_advisor.analysis.classify.prefilter import holds, table_filter

# ---------------------------------------------------------------------------------------------------
# Vocabulary

# The numeric types work is sorted into, in the order reports list them.
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8", "int8", "unknown")
# The 16-bit floating types: what a report's or a trend's "16-bit share" adds up, and what the diff
# checks when 16-bit work got slower (emulated on a CPU or a GPU without Tensor Cores).
SIXTEEN_BIT = ("fp16", "bf16")
# The floating types below 32 bits: where a mixed-precision fix moves matrix work (int8 is
# quantisation, another fix), so the diff counts a rise in their share as that fix made.
LOW_PRECISION_FLOATS = SIXTEEN_BIT + ("fp8",)
# Every type below 32 bits: what "mixed precision active" means for the precision verdict.
LOW_PRECISION = LOW_PRECISION_FLOATS + ("int8",)

# Tensor Core verdicts a rule can give:
#   yes / no            the name says so
#   if_low_precision    matrix instructions iff the kernel's inputs are tf32/16-bit/8-bit (xmma, nvjet,
#                       flash attention: fp32 variants of these run on the FMA units)
#   if_capable          compiler-generated matrix kernels (Triton, XLA gemm fusions) use MMA/MFMA
#                       instructions whenever the device has them
TC_VERDICTS = ("yes", "no", "if_low_precision", "if_capable")

# Kernel families. comm/copy are not compute (left out of the precision and Tensor Core shares);
# gemm/conv/attention are the Tensor Core targets; gemv is matrix work without a Tensor Core path;
# helper kernels belong to a matrix op but are not themselves the product (offsets, split-K reduce,
# im2col, Winograd transforms).
FAMILIES = ("comm", "copy", "transpose", "helper", "attention", "conv", "gemv", "gemm", "other")
MATRIX_FAMILIES = ("gemm", "conv", "attention")


@dataclass(frozen=True)
class Pattern:
    """One pattern: a stable id, a regular expression, what a match means, and why it is here."""

    id: str
    regex: str
    value: str
    why: str
    # What the regex is matched against: "name" the whole kernel name, "head" the name without its
    # parameter list (arguments name unrelated types), "base" the bare function name.
    on: str = "name"
    flags: int = re.IGNORECASE

    @property
    def compiled(self) -> re.Pattern:
        return _compile(self.regex, self.flags)


@cache
def _compile(regex: str, flags: int) -> re.Pattern:
    return re.compile(regex, flags)


# ---------------------------------------------------------------------------------------------------
# Precision from library kernel names (first matching rule wins; order matters)

PRECISION_RULES: Tuple[Pattern, ...] = (
    Pattern("hlo_text", r"^%?[\w.-]+ = \(?(?P<code>[a-z]+[0-9][a-z0-9]*)\[", "hlo",
         "TPU op events are HLO text; the result type follows the '=' (bf16[...], f32[...])", flags=0),
    Pattern("tensile_type", r"(?:^|_)Cijk_A[A-Za-z]+_B[A-Za-z]+_(?P<code>4xi8|I8|F8|B8|[SDCZHBX])",
         "tensile", "rocBLAS/hipBLASLt (Tensile) names carry the A/B data type right after the index "
         "spelling: S fp32, D fp64, H fp16, B bf16, X xf32, I8 int8, F8/B8 fp8", flags=0),
    Pattern("nvjet_type", r"nvjet_(?:sm\d+_)?(?P<code>[a-z])[a-z]{2}_(?P<tf32>tf32_)?", "nvjet",
         "cuBLAS nvjet (Hopper+) names start with type letters A/B-compute-C/D: h fp16, t bf16, s fp32 "
         "(with `_tf32_` when TF32 math is on)", flags=0),
    Pattern("tf32", r"tf32|tfloat32", "tf32", "TF32 kernels say so (sm80_xmma_*tf32*, cutlass *_tf32_)"),
    Pattern("cutlass_f32_tensorop", r"tensorop_s1688(?:gemm|fprop|dgrad|wgrad)(?!_b?f16)", "tf32",
         "CUTLASS names omit the element type when it equals the accumulator (f32); an fp32 tensorop "
         "kernel with the 16x8x8 instruction runs TF32"),
    Pattern("fp8", r"e4m3|e5m2", "fp8", "fp8 GEMMs name their e4m3/e5m2 types"),
    Pattern("bf16", r"(?<![a-z])bf16", "bf16",
            "bf16 library kernels say bf16 (cuBLAS, cuDNN, CUTLASS, MIOpen)"),
    Pattern("int8", r"i8816|i16832", "int8", "int8 Tensor Core GEMMs name their IMMA 8816/16832 shapes"),
    Pattern("fp16", r"(?<![a-z])f(?:p)?16|(?<![a-z])h(?:884|1688|16816)|(?<![a-z])hmma", "fp16",
         "fp16 library kernels say fp16/f16, or use the HMMA h884/h1688/h16816 instruction shapes"),
    Pattern("fp32", r"(?<![a-z])(?:s|gc|c)gemm|scudnn|(?<![a-z])f(?:p)?32(?![a-z0-9])", "fp32",
         "fp32 cuBLAS/cuDNN kernels: sgemm/cgemm (complex fp32), scudnn, or an f32/fp32 type token"),
)

# Tensile type codes (ROCm Tensile DataType chars) and nvjet type letters → precision.
TENSILE_TYPE_CODES: Dict[str, str] = {
    "S": "fp32", "D": "fp64", "C": "fp32", "Z": "fp64", "H": "fp16", "B": "bf16", "X": "tf32",
    "I8": "int8", "4xi8": "int8", "F8": "fp8", "B8": "fp8",
}
NVJET_TYPE_CODES: Dict[str, str] = {"h": "fp16", "t": "bf16", "s": "fp32"}
HLO_TYPES: Dict[str, str] = {
    "f64": "fp64", "f32": "fp32", "bf16": "bf16", "f16": "fp16", "s8": "int8", "u8": "int8",
    "f8e4m3fn": "fp8", "f8e5m2": "fp8", "f8e4m3fnuz": "fp8", "f8e5m2fnuz": "fp8", "f8e4m3b11fnuz": "fp8",
}

# ---------------------------------------------------------------------------------------------------
# Precision from type spellings when no library token decides: C++ template arguments, and TF's
# `shape` stat (the op's inputs, e.g. "(half[4,384,4096];half[])"). The leftmost token wins: the first
# template argument is the element type in TF/Eigen, PyTorch, cuDNN and CK kernels.

DTYPE_TOKEN_RULES: Tuple[Pattern, ...] = (
    Pattern("dtype_bf16", r"bfloat16", "bf16",
         "c10::BFloat16, Eigen::bfloat16, std::bfloat16_t, cutlass::bfloat16_t"),
    Pattern("dtype_fp16", r"(?<![a-z])half(?![a-z])|_float16", "fp16",
         "Eigen::half, __half, c10::Half, cutlass::half_t, _Float16, a `_half` suffix, TF shape `half[...]`"),
    Pattern("dtype_fp8", r"float8|(?<![a-z])fp8", "fp8", "c10::Float8_e4m3fn, FBGEMM's FP8 kernels"),
    Pattern("dtype_fp64", r"(?<![a-z])(?:double|float64)(?![a-z])", "fp64", "double"),
    Pattern("dtype_fp32", r"(?<![a-z])float(?:2|4|32)?(?![a-z0-9])", "fp32",
         "float (and float2/float4 vectors), TF shape `float[...]`"),
    Pattern("dtype_int8", r"int8_t|signed char|(?<![a-z])int8(?![a-z0-9])", "int8",
         "int8_t, TF shape `int8[...]`"),
)


# ---------------------------------------------------------------------------------------------------
# Tensor Core / matrix-core use (first matching rule wins; no match → not on Tensor Cores)

# Fused attention kernels, and the elementwise passes around a flash-attention backward (used by the
# Tensor Core rules and the family rules alike).
ATTENTION = r"flash_fwd|flash_bwd|flash::|flash_attn|fmha|_sdpa_|(?<![a-z])attn_(?:fwd|bwd)"
ATTENTION_PASSES = r"FmhaBwdOGradDotO|FmhaBwdConvert|flash_bwd_dot_do_o|flash_bwd_convert"

TENSOR_CORE_RULES: Tuple[Pattern, ...] = (
    Pattern("attention_helper", ATTENTION_PASSES,
         "no", "flash-attention backward helpers (rowsum(dO*O), dQ conversion) are elementwise"),
    Pattern("simt", r"simt", "no", "CUTLASS SIMT kernels run on the FMA units"),
    Pattern("tensile_mfma", r"Cijk_\w*?_MI[1-9]\d*x\d+x\d+", "yes",
         "Tensile kernels built on MFMA name the matrix instruction (MI16x16x16, MI32x32x1 …)", flags=0),
    Pattern("tensile_valu", r"Cijk_", "no", "Tensile kernels without an MI token use the vector ALUs",
            flags=0),
    Pattern("miopen_xdlops", r"igemm_\w+?_gtcx\d*_", "yes",
         "MIOpen implicit-GEMM assembly convolutions with xdlops (gtcx, gtcx2, gtcx3)"),
    Pattern("ck_xdl", r"xdl", "yes", "composable_kernel xdl / xdlops kernels use MFMA"),
    Pattern("tensorop", r"(?<![a-z])tensorop|OpClassTensorOp|TensorOpMultiplicand", "yes",
         "CUTLASS tensorop kernels (incl. cutlass3x, and cuDNN's cutlass whose mangled names carry the "
         "TensorOp operand layouts)"),
    Pattern("attention", ATTENTION,
         "if_low_precision",
         "flash/memory-efficient attention (FA2, xFormers cutlassF, cuDNN SDPA, CK FMHA, Triton attn)"),
    Pattern("mma_instruction", r"(?<![a-z])(?:hmma|imma|dmma|wmma|wgmma|mfma)(?![a-z])", "yes",
         "the kernel names its matrix instruction (HMMA, IMMA, WMMA, WGMMA, MFMA)"),
    Pattern("mma_shape", r"(?<![a-z0-9])[hsicz](?:884|1688|16816|8816|16832|161616)(?=gemm|cudnn|fprop|dgrad"
         r"|wgrad|tf32)", "yes",
         "cuBLAS/cuDNN names with a Tensor Core instruction shape: h884/s884 (Volta), h1688/s1688 "
         "(Turing), s16816/i16832 (Ampere), i8816 (int8)"),
    Pattern("xmma", r"xmma", "if_low_precision",
         "NVIDIA xmma kernels (sm70…sm90) use Tensor Cores for tf32/16-bit/8-bit types"),
    Pattern("nvjet", r"nvjet", "if_low_precision", "cuBLAS nvjet kernels (Hopper, Blackwell)"),
    Pattern("compiler_matmul",
         r"^triton_tem_fused_\w*?mm|(?:^|_)(?:triton_gemm|gemm_fusion)|triton_\w*?_(?:dot|mma)",
         "if_capable", "Triton matmul templates (PyTorch Inductor) and XLA's Triton GEMM fusions emit "
         "MMA/MFMA instructions on devices that have them"),
)

# ---------------------------------------------------------------------------------------------------
# Kernel families (first matching rule wins; no match → "other")

FAMILY_RULES: Tuple[Pattern, ...] = (
    Pattern("comm", r"nccl|rccl|all[_-]?reduce|all[_-]?gather|reduce[_-]?scatter|all[_-]?to[_-]?all"
         r"|collective-permute", "comm", "collectives (NCCL/RCCL kernels, XLA all-reduce … ops): "
         "communication, not compute", on="head"),
    Pattern("copy", r"^__amd_rocclr_(?:copy|fill)|^(?:Memcpy|Memset|Copy(?:Device|Host)To(?:Device|Host))"
         r"|^%?copy-(?:start|done)", "copy", "runtime copy/fill kernels (ROCm blit kernels, copies "
         "recorded as kernels) and XLA's asynchronous copies", on="head"),
    Pattern("transpose", r"transpose|nchwtonhwc|nhwctonchw|SwapDimension\d|ShuffleInTensor3", "transpose",
         "layout transposes (TF SwapDimension…, cuDNN nchwToNhwc, MIOpen/XLA transpose kernels)", on="base"),
    Pattern("helper", r"Offsets?Kernel|computeWgrad|splitKreduce|ReduceSplitK|Im\dd2Col|im2col|winograd\w*"
         r"(?:Data|Filter|Delta|Output|Tiles)|flip_filter|scalePackedTensor|epilogue::", "helper",
         "pieces of a GEMM/convolution that are not the matrix product itself", on="head"),
    Pattern("attention_passes", ATTENTION_PASSES,
         "helper", "flash-attention backward pre/post-processing (rowsum(dO*O), dQ conversion)", on="head"),
    Pattern("attention_kernel", ATTENTION,
         "attention", "fused attention kernels", on="head"),
    Pattern("conv", r"conv(?!ert|ersion)|scudnn|\dcudnn|fprop|dgrad|wgrad|igemm_|fft2d|fft1d", "conv",
         "convolutions: cuDNN (scudnn, xmma fprop/dgrad/wgrad, implicit/explicit_convolve, FFT), "
         "MIOpen igemm, composable_kernel grouped conv", on="head"),
    Pattern("gemv", r"gemv|gemmk1_kernel|gemmSN_", "gemv",
         "matrix-vector and k=1 / small-N cuBLAS kernels: no Tensor Core path", on="head"),
    Pattern("gemm", r"(?<!fb)gemm|Cijk_|nvjet|matmul|triton_tem_fused_\w*?mm", "gemm",
         "GEMMs: cuBLAS/cuBLASLt, CUTLASS, Tensile, XLA/Triton gemm fusions, Inductor mm templates "
         "(not FBGEMM's embedding kernels)", on="head"),
)

# ---------------------------------------------------------------------------------------------------
# Ops that Tensor Cores can serve (TF op types, XLA HLO instruction names)

# TF op types (the part after ':' in `tf_op`, e.g. "model/dense/MatMul:MatMul").
TF_MATRIX_OP_TYPES = frozenset({
    "MatMul", "BatchMatMul", "BatchMatMulV2", "BatchMatMulV3", "_FusedMatMul", "Einsum",
    "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "Conv3D", "Conv3DBackpropInputV2",
    "Conv3DBackpropFilterV2", "_FusedConv2D", "FusedConv2DBiasActivation", "Conv",
    "CudnnRNN", "CudnnRNNV2", "CudnnRNNV3", "CudnnRNNBackprop", "CudnnRNNBackpropV2", "CudnnRNNBackpropV3",
})

OP_RULES: Tuple[Pattern, ...] = (
    Pattern("hlo_matrix_op", r"(?:^|[_.-])(?:dot|convolution|conv|gemm|matmul)(?:$|[_.-])|(?:^|_)attn(?:$|_)",
         "matrix", "XLA HLO instructions that are matrix products: dot, convolution, cuBLAS/cuDNN "
         "custom calls named cublas-gemm / cudnn-conv, gemm fusions, fused attention calls"),
)

# ---------------------------------------------------------------------------------------------------
# TensorFlow DataType enum (tensorflow/core/framework/types.proto) → precision, for MemoryAllocation
# events' `data_type` stat. Integer / string / resource types are not floating-point compute.
TF_DATA_TYPES: Dict[int, str] = {
    1: "fp32", 2: "fp64", 6: "int8", 8: "fp32", 11: "int8", 14: "bf16", 18: "fp64", 19: "fp16",
    24: "fp8", 25: "fp8", 26: "fp8", 27: "fp8", 28: "fp8",
}

# ---------------------------------------------------------------------------------------------------
# Applying the tables to one name


@dataclass(frozen=True)
class KernelClass:
    """What a kernel's name says. `rules` lists the deciding rule ids (for tests and evidence)."""

    precision: str  # one of PRECISIONS ("unknown" when the name carries no type)
    tensor_cores: str  # one of TC_VERDICTS
    family: str  # one of FAMILIES
    rules: Tuple[str, ...]

    @property
    def is_compute(self) -> bool:
        return self.family not in ("comm", "copy")

    def uses_tensor_cores(self, arch: Architecture, precision: Optional[str] = None) -> bool:
        """Resolve the verdict for a device (and a precision learned elsewhere, e.g. from `shape`)."""
        verdict = self.tensor_cores
        if verdict == "yes":
            return True
        if verdict == "if_low_precision":
            p = precision or self.precision
            return p not in ("fp32", "fp64")
        if verdict == "if_capable":
            return bool(arch.tensor_cores)
        return False


ANONYMOUS_NAMESPACE = "(anonymous namespace)::"  # demanglers write it; its '(' opens no parameter list


def base_name(name: str) -> str:
    """The function name of a demangled kernel: no `void`, template arguments or parameter list."""
    text = name[5:] if name.startswith("void ") else name
    text = text.replace(ANONYMOUS_NAMESPACE, "")
    cut = len(text)
    for sep in ("<", "("):
        i = text.find(sep)
        if 0 <= i < cut:
            cut = i
    return text[:cut]


_BRACKETS = re.compile(r"[<>(]")
_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")
_ONE_TEMPLATE_ARGUMENT = re.compile(r"<[A-Za-z_][A-Za-z0-9_:]*>$")


def head_name(name: str) -> str:
    """The kernel name without its parameter list: up to the first '(' outside template brackets."""
    depth = 0
    name = name.replace(ANONYMOUS_NAMESPACE, "")
    paren = name.find("(")
    if paren < 0:
        return name
    if name.find("<", 0, paren) < 0:  # no template bracket before the first "(": it is the cut
        return name[:paren]
    for bracket in _BRACKETS.finditer(name):  # only the brackets, not every character
        ch = bracket.group()
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            return name[: bracket.start()]
    return name


_Compiled = Tuple[str, re.Pattern, Optional[Tuple[str, ...]]]
_COMPILED: Dict[int, Tuple[_Compiled, ...]] = {}  # by id() of a module-level rule table


def _compiled(rules: Sequence[Pattern]) -> Tuple[_Compiled, ...]:
    """(target, pattern, required literals) per rule, built once per table (prefilter.py)."""
    found = _COMPILED.get(id(rules))
    if found is None or len(found) != len(rules):
        needs = table_filter(rules).entries
        found = _COMPILED[id(rules)] = tuple((r.on, r.compiled, n) for r, n in zip(rules, needs))
    return found


def _first(
    rules: Sequence[Pattern], name: str, base: str, head: str = ""
) -> Tuple[Optional[Pattern], Optional[re.Match]]:
    """The first rule (in table order) that matches its text, and its match (rules whose required
    literals are all missing from an ASCII text are skipped unsearched: prefilter.py)."""
    head = head or name
    lowered: Optional[Dict[str, str]] = {} if name.isascii() else None
    for k, (on, pattern, needs) in enumerate(_compiled(rules)):
        text = base if on == "base" else head if on == "head" else name
        if lowered is not None and needs is not None:
            low = lowered.get(on) or lowered.setdefault(on, text.lower())
            for literal in needs:  # inline: this loop runs ~40 times per kernel name
                if literal in low:
                    break
            else:
                continue
        match = pattern.search(text)
        if match:
            return rules[k], match
    return None, None


def dtype_in_text(text: Optional[str]) -> Tuple[str, Optional[str]]:
    """The leftmost element-type token in `text` (template arguments, a `shape` stat) and its rule id."""
    if not text:
        return "unknown", None
    best: Optional[Tuple[int, Pattern]] = None
    lowered = text.lower() if text.isascii() else None
    for rule, (_, pattern, needs) in zip(DTYPE_TOKEN_RULES, _compiled(DTYPE_TOKEN_RULES)):
        if lowered is not None and needs is not None and not holds(lowered, needs):
            continue
        match = pattern.search(text)
        if match and (best is None or match.start() < best[0]):
            best = (match.start(), rule)
    if best is None:
        return "unknown", None
    return best[1].value, best[1].id


def _precision_from_name(name: str) -> Tuple[str, Optional[str]]:
    rule, match = _first(PRECISION_RULES, name, name)
    if rule is not None and match is not None:
        return precision_of_match(rule, match), rule.id
    # No library token: the leftmost C++/TF type spelling (template arguments, a `_half` suffix …).
    return dtype_in_text(name)


def _nvjet_precision(match: re.Match) -> str:
    precision = NVJET_TYPE_CODES.get(match.group("code"), "unknown")
    return "tf32" if precision == "fp32" and match.group("tf32") else precision


# PRECISION_RULES values whose precision is read off the match's type code (the others are the value)
_MATCH_READERS: Dict[str, Callable[[re.Match], str]] = {
    "hlo": lambda match: HLO_TYPES.get(match.group("code"), "unknown"),
    "tensile": lambda match: TENSILE_TYPE_CODES.get(match.group("code"), "unknown"),
    "nvjet": _nvjet_precision,
}


def reads_match(rule: Pattern) -> bool:
    """Does this PRECISION_RULES rule's precision depend on what it matched (else it is `rule.value`)?"""
    return rule.value in _MATCH_READERS


def precision_of_match(rule: Pattern, match: re.Match) -> str:
    """The precision a PRECISION_RULES match names (some rules read a type code off the match)."""
    reader = _MATCH_READERS.get(rule.value)
    return reader(match) if reader is not None else rule.value


# Distinct names remembered across analyses: an LRU smaller than a profile's name count would make
# every pass over the names miss (100,000 distinct names then take seconds, not a fraction of one).
# A plain dict, so that kernel_batch.py can fill it for a whole table of names at once.
NAME_CACHE_SIZE = 1 << 18
# A batch of more new names than this is not remembered: kernel_batch.py classifies it anew in a
# fraction of a second, and remembering it kept its names alive past their profile (200,000 names:
# 8 MB of dict and 15 MB of names).
BATCH_REMEMBERED = 1 << 15
KERNEL_CLASSES: Dict[str, KernelClass] = {}
_Answer = TypeVar("_Answer")


def remember(cache: Dict[str, _Answer], name: str, answer: _Answer) -> _Answer:
    """`cache[name] = answer` in a per-name cache bounded by NAME_CACHE_SIZE (emptied when full)."""
    if len(cache) >= NAME_CACHE_SIZE:
        cache.clear()
    cache[name] = answer
    return answer


def remember_all(cache: Dict[str, _Answer], answers: Dict[str, _Answer]) -> None:
    """`remember` of many answers at once (one dict update): emptied first if they would not fit; none
    kept of a batch larger than BATCH_REMEMBERED."""
    if len(answers) > min(BATCH_REMEMBERED, NAME_CACHE_SIZE):
        return
    if len(cache) + len(answers) > NAME_CACHE_SIZE:
        cache.clear()
    cache.update(answers)


def classify_kernel(name: str) -> KernelClass:
    """Precision, Tensor Core verdict and family of one kernel name (cached: names repeat a lot)."""
    found = KERNEL_CLASSES.get(name)
    if found is not None:
        return found
    base = base_name(name)
    rules = []
    family_rule, _ = _first(FAMILY_RULES, name, base, head_name(name))
    family = family_rule.value if family_rule else "other"
    if family_rule:
        rules.append(family_rule.id)
    precision, precision_rule = _precision_from_name(name)
    if precision_rule:
        rules.append(precision_rule)
    tc_rule, _ = _first(TENSOR_CORE_RULES, name, base)
    verdict = tc_rule.value if tc_rule else "no"
    if tc_rule:
        rules.append(tc_rule.id)
    return remember(KERNEL_CLASSES, name, KernelClass(precision, verdict, family, tuple(rules)))


@lru_cache(maxsize=NAME_CACHE_SIZE)
def classify_op(op: str) -> Tuple[bool, Optional[str]]:
    """Is this op (a `tf_op` "name:Type", or an HLO instruction name) a Tensor Core candidate?

    Returns (eligible, rule id). For TF ops only the type decides; for HLO names the instruction
    name without its numeric suffix.
    """
    if not op:
        return False, None
    if ":" in op:
        op_type = familiar_op_type(op.rsplit(":", 1)[1].strip())
        if op_type in TF_MATRIX_OP_TYPES:
            return True, "tf_matrix_op"
        if op_type:
            return False, None
        op = op.rsplit(":", 1)[0]
    name = re.sub(r"(?:\.\d+)+$", "", op.rsplit("/", 1)[-1])
    rule, _ = _first(OP_RULES, name, name)
    return (True, rule.id) if rule else (False, None)


def ops_eligible(ops: Sequence[str]) -> List[bool]:
    """`classify_op(op)[0]` for many ops: a TF op "name:Type" is decided by its type alone, so each
    distinct type is looked up once (100,000 ops of a few types); other ops go one by one."""
    by_type: Dict[str, Optional[bool]] = {}
    out: List[bool] = []
    for op in ops:
        answer: Optional[bool] = None
        if op and ":" in op:
            suffix = op[op.rindex(":") + 1:]
            answer = by_type.get(suffix, _UNSEEN)
            if answer is _UNSEEN:
                op_type = familiar_op_type(suffix.strip())
                answer = by_type[suffix] = (op_type in TF_MATRIX_OP_TYPES) if op_type else None
        out.append(answer if answer is not None else classify_op(op)[0])
    return out


_UNSEEN: Any = object()


def precision_of_tf_data_type(code: int) -> Optional[str]:
    """TensorFlow DataType enum value → precision, None for non-floating types (int32, bool …)."""
    return TF_DATA_TYPES.get(int(code))


def short_kernel_name(name: str) -> str:
    """A kernel's name as a person scans a table: no return type, parameter list or template
    arguments (`void cudnn::detail::implicit_convolve_sgemm<float, …>(int, …)` →
    `cudnn::detail::implicit_convolve_sgemm`). The full name stays in the JSON and on hover."""
    short = head_name(name).strip()
    if _ONE_TEMPLATE_ARGUMENT.search(short):  # `cutlass::Kernel2<cutlass_80_simt_sgemm_…>`: the
        return short[5:] if short.startswith("void ") else short  # argument is the kernel's name
    while True:  # innermost template brackets first, until none are left
        stripped = _TEMPLATE_ARGS.sub("", short)
        if stripped == short:
            break
        short = stripped
    if short.startswith("void "):
        short = short[5:]
    return short.strip() or name
