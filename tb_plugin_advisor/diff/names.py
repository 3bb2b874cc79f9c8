"""Op and kernel name normalisation for the run-to-run diff: ONE table of rules that remove step- and
instance-specific parts (`conv2d_1`, `fusion.123`, oneDNN op types) so the same op matches across runs."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence, Tuple, Union

from tb_plugin_advisor.analysis.classify.onednn_ops import familiar_op_type

# ---------------------------------------------------------------------------------------------------
# Op and kernel name normalisation: ONE table. Applied in order; each rule has the examples that
# its test checks (and that fail when the rule is removed).

_END = r"(?=$|[/:.()\s,\]>])"  # what may follow a removable numeric part


@dataclass(frozen=True)
class NameRule:
    """One way a name changes between two runs without being another op (a step counter, a
    generated suffix): how it is spotted, what it becomes, and examples that are tested."""

    id: str
    why: str
    pattern: re.Pattern[str]
    replacement: Union[str, Callable[[re.Match], str]]
    examples: Tuple[Tuple[str, str], ...]


NAME_RULES: Tuple[NameRule, ...] = (
    NameRule(
        "onednn_op",
        "oneDNN renames TF ops (`_MklNativeConv2D`): a run with oneDNN on matches one with it off",
        re.compile(r"(?<=:)_Mkl(?:Native)?[A-Z_]\w*$"),
        lambda match: familiar_op_type(match.group(0)),
        (("model/conv2d/Conv2D:_MklNativeFusedConv2D", "model/conv2d/Conv2D:_FusedConv2D"),
         ("dense/MatMul:_MklMatMul", "dense/MatMul:MatMul")),
    ),
    NameRule(
        "traceme_args",
        "TraceMe arguments encoded in the name (step numbers differ every step)",
        re.compile(r"#[^#]*#$"),
        "",
        (("train#step_num=5,_r=1#", "train"), ("Profiled batch#step_num=12#", "Profiled batch")),
    ),
    NameRule(
        "torch_step_number",
        "PyTorch numbers its profiler step ranges (`ProfilerStep#12`); the same range in another run "
        "has another number",
        re.compile(r"^(ProfilerStep)#\d+$"),
        r"\1",
        (("ProfilerStep#12", "ProfilerStep"), ("ProfilerStep#3", "ProfilerStep")),
    ),
    NameRule(
        "hlo_sigil",
        "the % of HLO instruction names as written in HLO text",
        re.compile(r"(?:^|(?<=/))%"),
        "",
        (("%fusion", "fusion"), ("%convolution.7", "convolution")),
    ),
    NameRule(
        "program_id",
        "XLA program / JAX executable ids in parentheses",
        re.compile(r"\(\d+\)" + _END),
        "",
        (("jit_train_step(13)", "jit_train_step"), ("jit__normal(11)/fusion", "jit__normal/fusion")),
    ),
    NameRule(
        "graph_node_id",
        "node-id path components TensorFlow generates inside control flow (`cond/then/_256/…`)",
        re.compile(r"/_\d+(?=$|[/:])"),
        "",
        (("cond_17/then/_256/cond_17/Add", "cond/then/cond/Add"),),
    ),
    NameRule(
        "dot_number",
        "HLO instruction numbering (`fusion.123`, `dot.4`, `add.1.clone`) and module ids",
        re.compile(r"(?:\.\d+)+" + _END),
        "",
        (("fusion.123", "fusion"), ("dot.4", "dot"), ("copy.1.clone", "copy.clone")),
    ),
    NameRule(
        "underscore_number",
        "instance counters: Keras layer/model suffixes (`conv2d_1`), tf.function ids "
        "(`__inference_train_function_1234`), XLA fusion numbering (`loop_fusion_4`), replica ids",
        re.compile(r"(?<=[A-Za-z])(?:_\d+)+" + _END),  # after a letter: `WG32_8_1` are tile sizes
        "",
        (
            ("conv2d_1", "conv2d"),
            ("sequential_3/dense_12/MatMul:MatMul", "sequential/dense/MatMul:MatMul"),
            ("__inference_train_function_1234", "__inference_train_function"),
            ("loop_fusion_4", "loop_fusion"),
            ("input_reduce_fusion_1_2", "input_reduce_fusion"),
        ),
    ),
)

# Names every rule must leave alone (kernel tile sizes, dtypes, op types).
NAME_RULES_KEEP = (
    "Conv2D",
    "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn",
    "volta_h884gemm_64x64_ldg8_nn",
    "sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x32_stage4_warpsize2x2x1_tensor16x8x16_kernel",
    "void Eigen::internal::EigenMetaKernel<Eigen::TensorMap<Eigen::Tensor<float, 1, 1, long>, 16>>(long)",
    "float16",
    "Iterator::Root::Prefetch::ParallelMapV2",
    "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
    "autograd::engine::evaluate_function: ConvolutionBackward0",
    "Optimizer.step#SGD.step",
    "Cijk_Ailk_Bljk_BBS_BH_MT256x128x64_MI16x16x16x1_SN_1LDSB0_WS64_WG32_8_1.kd",  # AMD Tensile
)


def normalise_name(name: str, rules: Sequence[NameRule] = NAME_RULES) -> str:
    """The name with its step- and instance-specific parts removed (see NAME_RULES)."""
    for rule in rules:
        name = rule.pattern.sub(rule.replacement, name)
    return name
