"""What profiler event names mean, as data: which host events are input waits, kernel launches, copies,
collectives, host compute; which launches mark a step; which tf.data iterators are which stage.

Every entry was read off real profiles (TF 2.21 CPU fixtures, the GPU/TPU/AMD files in the shared
corpus) or the producers' own naming; tests/analysis/step_time/test_breakdown_patterns.py holds a real name
for each entry and fails when an entry matches none. Matching is per distinct name (names are interned per
plane), never per event.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import List, Optional, Sequence, Tuple

import numpy as np

from tb_plugin_advisor.analysis.classify.prefilter import (
    TextBatch,
    first_matching,
    holds,
    table_filter,
    text_batch,
)


@dataclass(frozen=True)
class NamePattern:
    """One regular expression with a stable id (used by tests) and the reason it is in the table."""

    id: str
    regex: str
    why: str

    @property
    def compiled(self) -> re.Pattern:
        return _compile(self.regex)


@cache
def _compile(regex: str) -> re.Pattern:
    return re.compile(regex)


def first_match(patterns: Sequence[NamePattern], name: str) -> Optional[NamePattern]:
    """The first pattern that matches; those whose required literals are missing are not searched."""
    if not name.isascii():
        return next((pattern for pattern in patterns if pattern.compiled.search(name)), None)
    lowered = name.lower()
    filters = table_filter(patterns)
    if filters.table is not None and not holds(lowered, filters.table):
        return None
    for pattern, needs in zip(patterns, filters.entries):
        if needs is not None:
            for literal in needs:  # inline: this loop runs for every table and every distinct name
                if literal in lowered:
                    break
            else:
                continue
        if pattern.compiled.search(name):
            return pattern
    return None


def matching(patterns: Sequence[NamePattern], texts: Sequence[str]) -> np.ndarray:
    """Which of a plane's names (or any list of names) some pattern matches, as a mask."""
    return first_matches(patterns, text_batch(texts)) >= 0


def starting_with(texts: List[str], prefix: str) -> np.ndarray:
    """Which of a plane's names start with `prefix`, as a mask: only the names that hold it (one scan
    of them all) are tested."""
    found = np.zeros(len(texts), dtype=bool)
    rows = np.flatnonzero(text_batch(texts).holding((prefix.lower(),))).tolist()
    found[rows] = [texts[i].startswith(prefix) for i in rows]
    return found


def first_matches(patterns: Sequence[NamePattern], batch: TextBatch,
                  rows: Optional[np.ndarray] = None) -> np.ndarray:
    """`first_match` over a plane's names at once: per name, the index of the first
    pattern that matches (-1: none); only `rows` (a mask) are looked at."""
    needs = table_filter(patterns).entries
    return first_matching([(batch, p.compiled, n) for p, n in zip(patterns, needs)], rows)


# ---------------------------------------------------------------------------------------------------
# Host events → breakdown category (checked in this order; the first table that matches wins)

HOST_INPUT = (
    NamePattern(
        "get_next_op",
        r"^IteratorGetNext\w*Op::DoCompute$",
        "the kernel of IteratorGetNext(AsOptional): the consumer blocks here until a batch is ready",
    ),
    NamePattern(
        "get_next_tf_op",
        r":(IteratorGetNext|IteratorGetNextAsOptional|IteratorGetNextSync)$",
        "the get-next op as a TF op event `name:Type` (graph mode, GPU host threads)",
    ),
    NamePattern(
        "get_next_eager",
        r"^EagerLocalExecute: IteratorGetNext",
        "next(iterator) in a custom loop: the eager get-next op on the python thread",
    ),
    NamePattern(
        "multi_device_get_next",
        r"^MultiDeviceIteratorGetNextFromShard",
        "tf.distribute's per-replica iterator",
    ),
    NamePattern(
        "iterator_consumer",
        r"^Iterator::",
        "tf.data iterator work on a consumer thread (nested in get-next; never on producer threads)",
    ),
    NamePattern(
        "torch_dataloader_next",
        r"^enumerate\(DataLoader\)#_\w*DataLoaderIter\.__next__$",
        "PyTorch: the training loop waiting in next() of a DataLoader iterator (`user_annotation` in "
        "current torch, `Operator`/`cpu_op` in 2021 traces)",
    ),
    NamePattern(
        "jax_device_put",
        r"^(DevicePut\w*|batched_device_put)$",
        "JAX copying a step's arrays to the device (jax.device_put / argument transfer)",
    ),
)

HOST_KERNEL_LAUNCH = (
    NamePattern(
        "cuda_runtime_launch",
        r"^cuda(LaunchKernel|LaunchKernelExC|LaunchCooperativeKernel\w*|GraphLaunch|LaunchHostFunc)"
        r"(_v\d+)?(_ptsz)?$",
        "CUDA runtime launch APIs recorded by CUPTI",
    ),
    NamePattern(
        "cuda_driver_launch",
        r"^cu(LaunchKernel|LaunchKernelEx|LaunchCooperativeKernel\w*|GraphLaunch)(_ptsz)?$",
        "CUDA driver launch APIs (XLA and TF's StreamExecutor call these)",
    ),
    NamePattern(
        "hip_launch",
        r"^hip(LaunchKernel|ModuleLaunchKernel|ExtModuleLaunchKernel|ExtLaunchKernel|"
        r"HccModuleLaunchKernel|GraphLaunch|LaunchCooperativeKernel\w*)$",
        "ROCm launch APIs recorded by roctracer",
    ),
    NamePattern(
        "xla_dispatch",
        r"^(PjitFunction\(.*\)|PJRT_LoadedExecutable_Execute|"
        r"(Scheduled )?(PjRt|Tfrt)\w*LoadedExecutable::Execute\w*|GpuExecutable::ExecuteThunks)$",
        "JAX/PJRT dispatching a compiled XLA program to the device (host-side launch path)",
    ),
)

# Host-side copy APIs. H2D copies carry the step's input to the device, so they count as input.
HOST_MEMCPY_H2D = (
    NamePattern(
        "api_memcpy_h2d",
        r"^(cuda|cu|hip)Memcpy\w*(HtoD|H2D|HostToDevice)\w*$",
        "explicit host-to-device copy APIs",
    ),
    NamePattern(
        "tf_memcpy_h2d",
        r"^(MemcpyH2D|MEMCPYHToD)$",
        "older TF GPU profiles name the host side of a copy after the copy",
    ),
)
HOST_MEMCPY_OTHER = (
    NamePattern("api_memcpy", r"^(cuda|cu|hip)(Memcpy|Memset)\w*$", "every other copy / memset API"),
    NamePattern(
        "tf_memcpy_other",
        r"^(MemcpyD2H|MemcpyD2D|MemcpyP2P|MEMCPYDToH|MEMCPYDToD)$",
        "older TF host-side copy events",
    ),
)

HOST_COMMUNICATION = (
    NamePattern("nccl_api", r"^(nccl|rccl)[A-Z]\w*$", "NCCL/RCCL API calls on host threads"),
    NamePattern(
        "tf_collective_op",
        r":(CollectiveReduceV\d|CollectiveGatherV\d|CollectiveBcast\w*|CollectiveAllToAllV\d|"
        r"CollectiveReduce|CollectiveGather|NcclAllReduce|NcclReduce|NcclBroadcast)$",
        "TF collective ops as op events",
    ),
    NamePattern("tf_collective_executor", r"^BaseCollectiveExecutor::", "TF's collective executor"),
)

# A PyTorch operator (`aten::addmm` …); also what the CPU precision and the FLOP counter read as an op.
TORCH_ATEN_OP = NamePattern(
    "torch_aten_op",
    r"^aten::",
    "a PyTorch operator (`aten::addmm` …): computes on the CPU, or launches kernels on a GPU run",
)

HOST_COMPUTE = (
    NamePattern(
        "tf_op",
        r"^[^\s:]+:[A-Z_][A-Za-z0-9_]*$",
        "a TF op execution, `scope/name:OpType` (tf_Compute threads, eager on the python thread)",
    ),
    NamePattern(
        "tf_executor",
        r"^(ExecutorState::Process|ParallelFor)$",
        "TF's executor running ops (and Eigen's ParallelFor inside a CPU op)",
    ),
    NamePattern(
        "tf_eager_execute",
        r"^(EagerLocalExecute: |EagerKernelExecute$|KernelAndDeviceFunc::Run$)",
        "an eager op or a tf.function call being executed",
    ),
    TORCH_ATEN_OP,
    NamePattern(
        "xla_cpu_execute",
        r"^(TfrtCpuExecutable::Execute\w*|PjRtCpu\w*::Execute\w*|"
        r"ThunkExecutor::Execute\w*)$",
        "XLA executables running on the CPU backend (JAX on CPU)",
    ),
)

# Lines (threads) of tf.data's producers: their work runs beside the step (prefetch, parallel map),
# so it is input work but not time the step waits; it never counts in the step breakdown.
INPUT_PRODUCER_LINES = (
    NamePattern(
        "tf_data_producer",
        r"^tf_data_(?!\w*get_next)",
        "tf_data_private_threadpool, tf_data_iterator_resource …: background producers",
    ),
)

# ---------------------------------------------------------------------------------------------------
# Device kernels / ops → category (names of TPU ops are HLO text: matched on the op's short name)

# Kernel families (collectives, runtime copies, transposes …) come from patterns.py, the precision
# analysis' table, so precision shares and the breakdown agree on what is compute. These two add the
# XLA HLO op names of TPU-style device planes (`%all-reduce = …`, matched on the short name).
DEVICE_COMMUNICATION = (
    NamePattern(
        "xla_collective",
        r"(?i)^(all-reduce|all-gather|reduce-scatter|all-to-all|collective-permute|collective-broadcast)"
        r"(-start|-done)?(\.\d+)?$",
        "XLA collectives as HLO ops (`all-reduce`, `all-gather-start.1` …)",
    ),
)

# Which collective a kernel or HLO op is, from its name (first match wins, any case): NCCL/RCCL kernels
# (`ncclDevKernel_AllReduce_Sum_f32_RING_LL`), XLA HLO ops (`all-gather-start.1`).
COLLECTIVE_TYPES: Tuple[Tuple[str, str], ...] = (
    ("all_reduce", r"all[_-]?reduce"),
    ("reduce_scatter", r"reduce[_-]?scatter"),
    ("all_gather", r"all[_-]?gather"),
    ("all_to_all", r"all[_-]?to[_-]?all"),
    ("broadcast", r"broadcast|bcast"),
    ("send_recv", r"send[_-]?recv|(?<![a-z])(?:send|recv)(?![a-z])|collective[_-]?permute|p2p"),
    ("reduce", r"(?<![a-z])reduce(?![a-z_-]*scatter)"),
)
_COLLECTIVE_TYPE_RES = tuple((kind, re.compile(rx, re.IGNORECASE)) for kind, rx in COLLECTIVE_TYPES)


def collective_type(name: str) -> str:
    """The COLLECTIVE_TYPES kind of a collective's name; "other" when none matches."""
    for kind, rx in _COLLECTIVE_TYPE_RES:
        if rx.search(name):
            return kind
    return "other"


DEVICE_MEMCPY = (
    NamePattern("xla_async_copy", r"^copy-(start|done)(\.\d+)?$", "XLA async copies (TPU host offload)"),
)
# An XLA async copy whose HLO text puts an operand or result in memory space 5 (`{…:T(8,128)S(5)}`)
# moves data between HBM and host memory (host offload: memory_kind="pinned_host", remat offload).
HOST_OFFLOAD_COPY = NamePattern(
    "xla_host_offload_copy", r"^%copy-(start|done)(\.\d+)? = .*S\(5\)", "copies to/from host memory (S(5))"
)

# ---------------------------------------------------------------------------------------------------
# Steps without markers: host launches of a compiled step function (group "fn" names the function)

STEP_LAUNCHES = (
    NamePattern(
        "tf_function_eager",
        r"^EagerLocalExecute: (?P<fn>__inference_\w+)$",
        "a tf.function called from Python (custom loops, Keras' train function)",
    ),
    NamePattern("tf_function_graph", r"^(?P<fn>__inference_\w+)$", "older TF: the function's own event"),
    NamePattern("jax_pjit", r"^PjitFunction\((?P<fn>[^)]+)\)$", "a jitted JAX function called from Python"),
    NamePattern("xla_gpu_module", r"^(?P<fn>[^:]+):XLA GPU module$", "an XLA module launched on a GPU"),
    NamePattern(
        "torch_dataloader_next",
        r"^enumerate\(DataLoader\)#_\w*DataLoaderIter\.__next__$",
        "PyTorch without prof.step(): each training iteration starts by taking a batch from its DataLoader",
    ),
)
# Device lines whose events are whole XLA module executions (TPU, some GPU writers).
XLA_MODULE_LINES = ("XLA Modules",)
XLA_MODULE_NAME = NamePattern(
    "xla_module", r"^(?P<fn>[^(]+)(\(\d+\))?$", "`jit_f(123…)`: module name (program fingerprint)"
)
# xprof's preprocessing may have written its own step grouping into device planes.
DERIVED_STEPS_LINE = "Steps"
# A launch name that says "training step" wins over a busier utility function.
TRAIN_HINT = NamePattern(
    "train_hint", r"(?i)train|step", "train_step, train_function, Keras' multi_step_on_iterator …"
)

# Events TF marks as roots (`_r=1`) that are not steps: tf.data's function runs carry `_r=1` too.
NOT_STEP_ROOTS = (
    NamePattern(
        "tf_function_run_root", r"^FunctionRun$", "tf.data/TF function runs, marked _r=1 for event grouping"
    ),
)

# A TF op event on a host thread, `scope/name:Type`, whatever the case of the type (custom ops'
# lower-case types too): what the CPU precision reads as an op. HOST_COMPUTE's `tf_op` wants TF's own
# capitalised types, as the breakdown counts them.
TF_OP_EVENT = NamePattern("tf_op_event", r"^[^:\s]+:[A-Za-z_]\w*$", "a TF op event, `scope/name:Type`")

# Substrings only TensorFlow, or only JAX, writes in event names: what tells the framework of a
# profile that records none (XSpace planes carry no framework field).
TF_NAME_HINTS = (
    "EagerLocalExecute",
    "ExecutorState::Process",
    "__inference_",
    "IteratorGetNext",
    "Profiled batch",
    "TraceContext",
)
JAX_NAME_HINTS = (
    "PjitFunction(",
    "PJRT_LoadedExecutable_Execute",
    "PjRtStreamExecutorLoadedExecutable",
    "TfrtTpuLoadedExecutable",
    "XLA GPU module",
)

# Eager op executions (not a compiled function): many per step means no tf.function.
EAGER_OP = NamePattern("eager_op", r"^EagerLocalExecute: (?!__inference_)", "one eager TF op")


def short_names(texts: List[str]) -> TextBatch:
    """The batch of each name's `short_op_name`: the names' own shared batch (prefilter.text_batch)
    when no name is HLO text, as in most profiles, else one made for the shortened names."""
    whole = text_batch(texts)
    if not whole.any_starting("%"):
        return whole
    return TextBatch([short_op_name(text) for text in texts])


def short_op_name(name: str) -> str:
    """HLO text `%copy-done.2 = f32[…] copy-done(…)` → `copy-done.2`; other names unchanged."""
    if name.startswith("%"):
        head, sep, _ = name.partition(" = ")
        if sep:
            return head[1:]
    return name


# ---------------------------------------------------------------------------------------------------
# CUPTI / device tracer problems recorded in XSpace.errors / warnings

CUPTI_PROBLEMS = (
    NamePattern(
        "cupti_privileges",
        r"CUPTI_ERROR_INSUFFICIENT_PRIVILEGES",
        "GPU performance counters restricted to admin users (NVreg_RestrictProfilingToAdminUsers)",
    ),
    NamePattern(
        "cupti_missing",
        r"(?i)(libcupti|cupti could not be loaded|failed to load cupti|"
        r"CUPTI_ERROR_NOT_INITIALIZED|cupti.*not found)",
        "libcupti is not on the library path",
    ),
    NamePattern("cupti_other", r"CUPTI_ERROR_\w+", "any other CUPTI error"),
)


# ---------------------------------------------------------------------------------------------------
# Data loading marked by the user: JAX and custom loops have no tf.data, so people wrap batch
# preparation in `jax.profiler.TraceAnnotation("input")`, `tf.profiler.experimental.Trace("load_batch")`,
# `torch.profiler.record_function("dataloader")`. Time inside such an annotation on a step thread is
# input. Whole words only (split at `_`, `-`, spaces, dots and camelCase): "loader" and "DataLoader"
# match, "download" and "payload" do not.

DATA_LOADING_WORDS = frozenset({
    "input", "inputs", "data", "dataset", "dataloader", "loader", "load", "loading", "batch", "batches",
    "prefetch", "prefetching", "preprocess", "preprocessing", "augment", "augmentation", "collate",
    "decode", "decoding", "dataiter", "datapipe",
})
# Only events on a step's own thread count (breakdown.py); these names there contain such a word but
# are framework internals, not a user's annotation (read off the sample, TF fixtures and the corpus).
NOT_DATA_LOADING = (
    NamePattern("keras_step_marker", r"^Profiled batch", "Keras' step marker (`Profiled batch#step_num=…#`)"),
    NamePattern("torch_ddp", r"^DistributedDataParallel\.",
                "PyTorch DDP's own range around the model: `DistributedDataParallel.forward` (HTA traces)"),
    NamePattern("structured_name", r"::|:[A-Z_]|\(", "TF op events `x:Type`, `Iterator::…`, `Fn(args)`"),
    NamePattern("tf_data_internal", r"^\w+(Consume|Produce)$", "tf.data buffers: `PrefetchConsume` …"),
    NamePattern("xla_fusion", r"fusion", "XLA fusion kernels `input_reduce_fusion` (already device work)"),
    NamePattern("xla_pass", r"^[a-z0-9]+(-[a-z0-9]+)+$|_unification$|buffer_alias",
                "XLA compiler passes: `space-to-batch-converter`, `optimize_input_output_buffer_alias`"),
    NamePattern("runtime_internal", r"^(Actual)?Load(Program|$)|^LoadProgram|^Handle inputs?\b|"
                r"^AllocateOutputBuffer|^Validate\w*Input",
                "TPU/PJRT runtime steps: `LoadProgram`, `Handle inputs`, `ValidateInputTypeAndPlacement`"),
)
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@cache
def is_data_loading_annotation(event_name: str) -> bool:
    """A user's annotation whose name says data loading (`input`, `load_batch`, `DataLoader` …)."""
    name = event_name.split("#", 1)[0]  # TraceMe arguments
    if first_match(NOT_DATA_LOADING, name):
        return False
    return any(word.lower() in DATA_LOADING_WORDS for word in _WORDS.findall(name))


def data_loading_annotations(batch: TextBatch, rows: np.ndarray) -> np.ndarray:
    """`is_data_loading_annotation` over a plane's names (a mask): only names holding one of the
    words as text are split into words (each word is part of the lowercased name)."""
    candidates = rows & batch.holding(_LOADING_WORDS)
    found = np.zeros(len(batch), dtype=bool)
    texts = batch.texts
    found[candidates] = [is_data_loading_annotation(texts[i]) for i in np.flatnonzero(candidates).tolist()]
    return found


_LOADING_WORDS = tuple(sorted(DATA_LOADING_WORDS))


# ---------------------------------------------------------------------------------------------------
# Host synchronisations: the host thread blocks until the device (or a transfer) is done. Every
# framework, one table (analysis/step_time/host_sync.py counts them per step and measures the device idle time
# while they wait).

HOST_SYNC = (
    NamePattern(
        "cuda_sync",
        r"^cu(da)?(StreamSynchronize|DeviceSynchronize|CtxSynchronize|EventSynchronize|StreamWaitEvent)"
        r"(_v\d+)?(_ptsz)?$",
        "CUDA runtime/driver calls that block the host (or a stream) until work is done",
    ),
    NamePattern(
        "hip_sync",
        r"^hip(StreamSynchronize|DeviceSynchronize|EventSynchronize|StreamWaitEvent)$",
        "ROCm equivalents recorded by roctracer",
    ),
    NamePattern(
        "sync_memcpy",
        r"^(cuda|cu|hip)Memcpy(?!\w*Async)(HtoD|DtoH|DtoD|H2D|D2H|D2D|HostToDevice|DeviceToHost|"
        r"DeviceToDevice|Peer)?(_v\d+)?(_ptsz)?$",
        "synchronous copies (`cudaMemcpy`, `hipMemcpy`, `cuMemcpyDtoH`): the host waits for the copy",
    ),
    NamePattern(
        "tf_recv",
        r"(^|:)(_Recv|_HostRecv)$",
        "TF `_Recv`/`_HostRecv` ops waiting on the host for a tensor from the device",
    ),
    NamePattern(
        "jax_block",
        r"^(block_until_ready|BlockHostUntilReady|PjRtStreamExecutorBuffer::BlockHostUntilReady|"
        r"device_get|\w*::BlockHostUntilReady|PjRtCApiBuffer::ToLiteral\w*|\w+Buffer::ToLiteral\w*)$",
        "JAX `block_until_ready`, `jax.device_get`, PJRT buffers copied to host literals",
    ),
    NamePattern(
        "torch_item",
        r"^aten::(item|_local_scalar_dense)$",
        "PyTorch `.item()` (and the scalar read behind it): copies one value to the host, a full sync",
    ),
)
