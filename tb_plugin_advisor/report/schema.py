"""The shape of a report (`tb-advisor/report/1`, docs/ARCHITECTURE.md §2) as types: what every key
holds, for the parts the exports, the diff and the trend read. A report read back from the disk
cache (report/disk_cache.py) is checked against it before anything uses it: a cache directory can be
shared, so an entry with the right key and a valid checksum can still say `"recommendations": "y"`,
and an export that trusts it dies. msgspec does the checking (`msgspec.convert`); keys not listed
here are allowed and left alone, since the JSON only ever gains keys.

Numbers are `float` (an int is accepted); a value the producers can leave out or null is Optional.
tests/report/test_report_schema.py holds every report the project can produce to this shape, so a new key's
type is added here in the same change.
"""

from __future__ import annotations

from typing import Annotated, Any, Dict, List, Optional, Union

import msgspec

Id = Union[int, str]  # a trace's pid/tid: an int, or a string as a Kineto trace may write it


class Shape(msgspec.Struct, kw_only=True):
    """Base: fields by name, unknown keys ignored."""


class Categories(Shape):
    """The step-time categories (analysis/step_time/categories.py): ms per step, or % of the step."""

    input: float
    device_compute: float
    host_compute: float
    kernel_launch: float
    memcpy: float
    communication: float
    idle: float
    other: float


Interval = Annotated[List[float], msgspec.Meta(min_length=2, max_length=2)]  # [low, high]


class Gain(Shape):
    ms_per_step: Optional[Interval]
    pct: Optional[Interval]
    basis: str


class Span(Shape):
    kind: str
    host: str
    pid: Id
    tid: Id
    ts_us: float
    dur_us: float
    start_ns: float
    duration_ns: float
    name: str
    step: Optional[float]
    thread: str
    format: str
    step_offset_ms: Optional[float] = None  # ms from its step's start (analysis/evidence/span.py)
    trace_offset_ms: Optional[float] = None  # ms from the trace's first event
    short_name: str = ""  # the name a person reads (analysis/classify/short_names.py)


class Advice(Shape):
    """A recommendation, or a finding of a deeper view."""

    id: str
    severity: str
    title: str
    message: str
    evidence: str
    expected_gain: Gain
    evidence_spans: List[Span]
    snippet: Optional[str] = None
    snippet_jax: Optional[str] = None
    snippet_label: Optional[str] = None
    host: Optional[str] = None


class StepRow(Shape):
    step: Optional[float]
    start_ms: float
    total_ms: float
    breakdown_ms: Categories
    warmup: bool
    host: Optional[str] = None
    host_ms: Optional[float] = None  # (absent in reports from before steps had clocks)
    host_ahead_ms: Optional[float] = None
    cut_off: bool = False


class Steps(Shape):
    count: float
    source: str
    method: str
    mean_ms: float
    median_ms: float
    p90_ms: float
    min_ms: float
    max_ms: float
    steady_count: float
    times_ms: List[float]
    numbers: List[Optional[float]]
    per_step: List[StepRow]
    notes: List[str]
    hosts_count: Optional[Dict[str, float]] = None
    clock: Optional[str] = None  # device | host | mixed
    host_ahead_ms: Optional[float] = None


class Verdict(Shape):
    bottleneck: str
    input_bound: str
    input_pct: float
    summary: str
    evidence: List[str]


class Wait(Shape):
    step: Optional[float]
    ms: float
    name: Optional[str] = None


class NamedTime(Shape):
    name: str
    ms_per_step: float
    pct: Optional[float] = None
    calls_per_step: Optional[float] = None


class H2dCopies(Shape):
    per_step: float
    pinned: float
    pageable: float
    bytes_per_step: float
    device_ms_per_step: float
    host_blocked_ms_per_step: float
    asked_non_blocking: float
    asked_blocking: float
    waited: float
    staged: float
    overlapped: float


class MainProcess(Shape):
    collate: float
    dataset: float
    python: float


class HostAlloc(Shape):
    calls: float
    ms: float


class DataLoader(Shape):
    iterator: str
    workers: str
    num_workers: Optional[float]
    wait_ms_per_step: float
    wait_pct: float
    calls_per_step: float
    longest_waits: List[Wait]
    main_process_ms_per_step: MainProcess
    main_process_ops: List[NamedTime]
    pinned_memory: Optional[bool]
    non_blocking: Optional[bool]
    non_blocking_source: str
    h2d_copies: H2dCopies
    pin_memory_ops_per_step: float
    host_alloc: HostAlloc
    exposed_wait_ms_per_step: Optional[float] = None  # (absent in reports from before it was measured)
    exposed_wait_pct: Optional[float] = None


class Annotations(Shape):
    wait_ms_per_step: float
    wait_pct: float
    names: List[NamedTime]
    longest_waits: List[Wait]
    inside: List[NamedTime]


class Stages(Shape):
    source: float
    map: float
    batch: float
    prefetch: float
    other: float


class PipelineNode(Shape):
    name: str
    kind: str
    stage: str
    role: str
    dataset: str
    self_ms: float
    total_ms: float
    count: float
    parallelism: Optional[float]
    autotune: Optional[bool]


class InputPipeline(Shape):
    kind: str
    dataloader: Optional[DataLoader]
    annotations: Optional[Annotations]
    dominant_stage: str
    stages_ms: Stages
    parallelism: Optional[float]
    prefetch: Optional[bool]
    autotune: Optional[bool]
    cache: Optional[bool]
    interleave: Optional[bool]
    file_source: Optional[bool]
    sequential_map: Optional[bool]
    evidence: List[str]
    nodes: List[PipelineNode]


class OpTime(Shape):
    name: str
    time_ms: float
    short_name: str = ""  # the name a person reads (analysis/classify/short_names.py)


class Precision(Shape):
    verdict: str
    summary: str
    top_fp32_ops: List[OpTime]
    evidence: List[str]
    basis: str
    matrix_low_precision_pct: Optional[float]
    tf32_possible: bool
    time_basis: str


class TensorCoreKernel(Shape):
    name: str
    uses_tensor_cores: bool
    precision: str
    time_ms: float
    family: str
    eligible: bool
    short_name: str = ""  # the name a person reads (analysis/classify/short_names.py)


class NotUsing(Shape):
    op: str
    kernel: str
    kernel_short: str
    time_ms: float
    reason: str
    reason_id: str
    precision: str


class TensorCores(Shape):
    device_time_pct: float
    eligible_time_pct: float
    kernels: List[TensorCoreKernel]
    eligible_not_using: List[NotUsing]
    eligible_on_tensor_cores_pct: Optional[float] = None
    architecture: Optional[str] = None
    has_tensor_cores: Optional[bool] = None
    transpose_time_pct: Optional[float] = None
    top_transposes: Optional[List[OpTime]] = None
    tf32_possible: Optional[bool] = None
    time_basis: Optional[str] = None
    evidence: Optional[List[str]] = None


class OpRow(Shape):
    name: str
    category: str
    time_ms: float
    count: float
    total_ms: Optional[float] = None
    within: Optional[str] = None
    onednn_op: Optional[str] = None  # the oneDNN op TensorFlow ran it as
    short_name: str = ""  # the name a person reads (analysis/classify/short_names.py)


class Device(Shape):
    name: str
    kind: str
    vendor: str
    model: str
    compute_capability: Optional[str]
    gfx_target: Optional[str]
    product: Optional[str]
    core_count: Optional[float]
    kernel_count: float
    memcpy_count: float
    busy_pct: float
    host: str


class PreprocessingOp(Shape):
    op: str
    kind: str
    time_ms: float


class Preprocessing(Shape):
    share_of_step_pct: float
    time_ms: float
    input_threads_ms: float
    step_threads_ms: float
    ops: List[PreprocessingOp]


class SyncCall(Shape):
    name: str
    count: float
    time_ms: float


class HostSync(Shape):
    count_per_step: float
    time_ms: float
    time_pct: float
    device_idle_ms: Optional[float]
    device_idle_pct: Optional[float]
    calls: List[SyncCall]


class LocalCpu(Shape):
    host: str
    about: str
    same_host_name: bool
    generic_host_name: bool
    flags_read: bool
    native_flags: List[str]


class Cpu16bit(Shape):
    dtype: str
    share_pct: float
    checked: str
    native: Optional[bool]
    native_source: Optional[str]
    profile_kernels: List[Any]
    native_flags: List[str]
    needed_flags: List[str]
    local_cpu: LocalCpu
    how_to_check: str
    evidence: str


class ProfileFile(Shape):
    host: str
    path: str
    size_bytes: float


# -- the deeper views (docs/deep-views.md) ------------------------------------------------------------


class KernelRow(Shape):
    name: str
    family: str
    launches: float
    total_ms: float
    time_pct: float
    mean_us: float
    min_us: float
    max_us: float
    per_step_ms: Optional[float]
    launches_per_step: Optional[float]
    grid: Optional[List[float]]
    block: Optional[List[float]]
    threads_per_block: Optional[float]
    registers_per_thread: Optional[float]
    shared_memory_bytes: Optional[float]
    configs: float
    occupancy_pct: Optional[float]
    occupancy_source: Optional[str]
    theoretical_occupancy_pct: Optional[float]
    occupancy_limiter: Optional[str]
    tensor_cores: bool
    tensor_core_pct: float
    precision: str
    devices: float
    hosts: Optional[List[str]] = None
    short_name: str = ""  # the name a person reads (analysis/classify/short_names.py)


class KernelSummary(Shape):
    launches: float
    distinct: float
    total_ms: float
    steps: float
    launches_per_step: Optional[float]
    tiny_launch_pct: float
    tiny_time_pct: float
    occupancy_pct: Optional[float]
    tensor_core_time_pct: float
    host: Optional[str] = None


class KernelStats(KernelSummary, kw_only=True):
    kernels: List[KernelRow]
    findings: List[Advice]
    per_host: Optional[List[KernelSummary]] = None


class LiveAllocation(Shape):
    bytes: float
    requested_bytes: Optional[float]
    op: Optional[str]
    shape: Optional[str]
    dtype: Optional[str]
    region: Optional[str]
    allocated_ms: float


class Timeline(Shape):
    t_ms: List[float]
    in_use_bytes: List[float]
    reserved_bytes: Optional[List[float]]
    points: float
    downsampled: bool


class Allocator(Shape):
    allocator: str
    kind: str
    device: Optional[str]
    records: float
    relative: bool
    peak_bytes: float
    peak_ms: float
    peak_step: Optional[float]
    peak_op: Optional[str]
    peak_op_source: Optional[str]
    allocator_peak_bytes: Optional[float]
    reserved_peak_bytes: Optional[float]
    fragmentation_pct: Optional[float]
    fragmentation_source: Optional[str]
    capacity_bytes: Optional[float]
    capacity_source: Optional[str]
    headroom_bytes: Optional[float]
    headroom_pct: Optional[float]
    live_at_peak: List[LiveAllocation]
    live_at_peak_count: float
    live_at_peak_bytes: float
    live_at_peak_by_dtype: Dict[str, float]
    live_at_peak_unrecorded_bytes: Optional[float]
    per_step_peak_bytes: List[Optional[float]]
    timeline: Timeline
    host: Optional[str] = None


class Memory(Shape):
    allocators: List[Allocator]
    main_allocator: Optional[str]
    peak_bytes: Optional[float]
    findings: List[Advice]


class CollectiveType(Shape):
    type: str
    calls: float
    total_ms: float
    exposed_ms: float
    hidden_pct: float
    per_step_ms: float
    exposed_per_step_ms: float
    calls_per_step: float
    sized_calls: float
    mean_message_bytes: Optional[float]
    group_size: Optional[float]
    algbw_gbps: Optional[float]
    busbw_gbps: Optional[float]


class CollectiveDevice(Shape):
    device: str
    total_ms: float
    exposed_ms: float
    per_step_ms: float
    exposed_per_step_ms: float
    compute_per_step_ms: float
    host: Optional[str] = None


class Skew(Shape):
    ranks: float
    slowest: str
    slowest_compute_per_step_ms: float
    median_compute_per_step_ms: float
    compute_skew_pct: float
    collective_spread_per_step_ms: float


class CollectiveSummary(Shape):
    calls: float
    total_ms: float
    exposed_ms: float
    hidden_pct: Optional[float]
    steps: float
    devices_with_collectives: float
    per_step_ms: Optional[float]
    exposed_per_step_ms: Optional[float]
    exposed_step_pct: Optional[float]
    skew: Optional[Skew]
    host: Optional[str] = None


class Collectives(CollectiveSummary, kw_only=True):
    types: List[CollectiveType]
    per_device: List[CollectiveDevice]
    findings: List[Advice]
    per_host: Optional[List[CollectiveSummary]] = None


class Roof(Shape):
    precision: str
    peak_tflops: float
    ridge_flops_per_byte: float


class FlopStep(Shape):
    step: Optional[float]
    model_flops: Optional[float]
    ms: Optional[float]
    achieved_tflops: Optional[float]
    mfu_pct: Optional[float]


class CostedOp(Shape):
    name: str
    source: str
    precision: str
    peak_precision: Optional[str]
    calls: float
    total_ms: float
    time_pct: Optional[float]
    flops: Optional[float]
    bytes: Optional[float]
    intensity: Optional[float]
    achieved_tflops: Optional[float]
    achieved_gbps: Optional[float]
    roof_tflops: Optional[float]
    ridge_flops_per_byte: Optional[float]
    bound: Optional[str]
    roof_pct: Optional[float]
    impossible: bool = False
    host: Optional[str] = None
    short_name: str = ""  # the name a person reads (analysis/classify/short_names.py)


class UncostedOp(Shape):
    name: str
    calls: float
    total_ms: float
    time_pct: Optional[float]
    host: Optional[str] = None
    short_name: str = ""  # the name a person reads (analysis/classify/short_names.py)


class Roofline(Shape):
    device_model: Optional[str] = None
    device: Optional[str] = None
    gfx_target: Optional[str] = None  # an AMD device's
    peaks_source: Optional[str] = None  # the peak table entry's datasheet
    cpu_only: bool = False
    devices: float = 0
    peak_precision: Optional[str] = None
    peak_tflops: Optional[float] = None
    bandwidth_gbps: Optional[float] = None
    ridge_flops_per_byte: Optional[float] = None
    roofs: List[Roof] = []
    basis: str = "none"
    steps: float = 0
    step_ms: Optional[float] = None
    model_flops_per_step: Optional[float] = None
    model_flops: Optional[float] = None
    achieved_tflops: Optional[float] = None
    mfu_pct: Optional[float] = None
    mfu_impossible: bool = False
    per_step: List[FlopStep] = []
    ops_with_flops: float = 0
    sources: List[str] = []
    costed_time_pct: Optional[float] = None
    mfu_lower_bound: bool = True
    ops: List[CostedOp] = []
    uncosted_ops: List[UncostedOp] = []
    findings: List[Advice] = []


# -- several hosts ------------------------------------------------------------------------------------


class HostRow(Shape):
    host: str
    step_time_ms: float
    input_pct: float
    device_util_pct: float
    straggler: bool
    steps: Steps
    breakdown_ms: Categories
    breakdown_pct: Categories
    verdict: Verdict
    input_pipeline: InputPipeline
    recommendations: List[str]  # the ids of the host's own recommendations


class Straggler(Shape):
    host: str
    metric: str
    value: float
    median: float
    excess: float
    message: str


class ValidityRow(Shape):
    analysis: str
    status: str
    reason: str
    fix: str
    rules: List[str] = []


class ValidityProblem(Shape):
    rule: str
    reason: str
    fix: str
    affects: Dict[str, str]
    host: Optional[str] = None


class HostValidity(Shape):
    host: str
    rows: List[ValidityRow]
    facts: Dict[str, Any]
    problems: List[ValidityProblem]


class Validity(Shape):
    """What the trace supports (analysis/validity/): one row per analysis; several hosts pooled have
    `hosts`, one host its `facts`."""

    rows: List[ValidityRow]
    facts: Optional[Dict[str, Any]] = None
    problems: List[ValidityProblem] = []
    hosts: List[HostValidity] = []
    clock_offset_us: Optional[Dict[str, Optional[float]]] = None
    clock_skew_us: Optional[float] = None


class Report(Shape):
    schema: str
    run: str
    hosts: List[str]
    steps: Steps
    breakdown_ms: Categories
    breakdown_pct: Categories
    verdict: Verdict
    input_pipeline: InputPipeline
    precision_pct: Dict[str, float]
    precision: Precision
    tensor_cores: TensorCores
    recommendations: List[Advice]
    ops: List[OpRow]
    kernels: List[OpRow]
    devices: List[Device]
    peak_memory_bytes: Optional[float]
    memory_peak_bytes_by_allocator: Dict[str, float]
    framework: str
    preprocessing: Preprocessing
    host_sync: HostSync
    cpu_16bit: Optional[Cpu16bit]
    profile: Union[ProfileFile, List[ProfileFile]]
    warnings: List[str]
    kernel_stats: KernelStats
    memory: Memory
    collectives: Collectives
    roofline: Roofline
    host: Optional[str]
    per_host: Optional[List[HostRow]] = None
    stragglers: Optional[List[Straggler]] = None
    validity: Optional[Validity] = None  # (absent in reports from before the validity matrix)


def shape_error(report: Any) -> Optional[str]:
    """None when `report` has the report's shape, else what is wrong and where (msgspec's words:
    "Expected `array`, got `str` - at `$.recommendations`")."""
    try:
        msgspec.convert(report, Report)
    except msgspec.ValidationError as exc:
        return str(exc)
    except (OverflowError, SystemError):
        # msgspec before 0.19 lets an integer past float range escape as SystemError instead of
        # a ValidationError; say where it is, as msgspec would have.
        return f"Number out of float range - at `{_huge_int_path(report, '$') or '$'}`"
    return None


def _huge_int_path(value: Any, path: str) -> Optional[str]:
    """The path of the first integer a float cannot hold, None when there is none."""
    if _is_huge_int(value):
        return path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _huge_int_path(item, f"{path}.{key}" if isinstance(value, dict) else f"{path}[{key}]")
        if found is not None:
            return found
    return None


def _is_huge_int(value: Any) -> bool:
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    try:
        float(value)
    except OverflowError:
        return True
    return False
