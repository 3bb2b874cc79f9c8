"""The one reader of report JSON (`tb-advisor/report/1`, docs/ARCHITECTURE.md §2): the diff, the trend
and the exports read a report through `read_report(raw)`, as attributes with typed values.

A report read back may be old (written before a key existed), partial (a test's hand-built report,
a `--section` answer), from another host or version, or hostile (a shared cache directory, a file
someone edited): every key is read defensively here and nowhere else. A missing key, a null, or a
value of another type reads as the field's default; a number is a finite float or None (a bool is
no number); a list keeps only the entries of its kind. Nothing here raises, whatever the dict holds.

Views are lazy: a value is read when an attribute is asked for, so a trend over a hundred reports
that needs twenty numbers of each never converts their memory timelines. Each view is named after
the type in report/schema.py that describes the same object and reads only keys that type lists
(tests/report/test_report_document.py holds them to it): the schema says what a key holds, this module how
a reader gets it. Outputs that copy part of a report as it is (the diff's verdicts, an export's
embedded JSON, a `--section` answer) take `raw` from the view.

What it does not own: writing reports (report/sections.py), checking a cached report's shape
(report/schema.py), and any reading of the diff's or the trend's own JSON.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Generic, Iterator, List, Optional, Tuple, Type, TypeVar, Union

from tb_plugin_advisor.analysis.classify.short_names import short_name as shorten

T = TypeVar("T")
N = TypeVar("N", bound="Node")

Scalar = Union[str, int, float, bool]  # a JSON value that is not an object or a list


def number(value: Any) -> Optional[float]:
    """`value` as a finite float, else None (a bool, a null, text that is no number, inf, NaN)."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return out if math.isfinite(out) else None


class Node:
    """A JSON object of a report, read through the typed fields its subclass declares."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any):
        self.raw: Dict[str, Any] = raw if isinstance(raw, dict) else {}

    def __bool__(self) -> bool:
        """Whether the report has this object at all (an absent or null one reads as empty)."""
        return bool(self.raw)

    def has(self, key: str) -> bool:
        """Whether `key` is there and not null (old reports lack keys that newer ones write)."""
        return self.raw.get(key) is not None

    def written(self, key: str) -> Any:
        """`key`'s value exactly as the report holds it (None when absent): for outputs that copy part
        of a report unchanged, such as a diff naming each run's device."""
        return self.raw.get(key)


class _Field(Generic[T]):
    """A key of a Node, read into T when the attribute is asked for."""

    def __init__(self, key: str = ""):
        self.key = key

    def __set_name__(self, owner: type, name: str) -> None:
        self.key = self.key or name

    def __get__(self, node: Optional[Node], owner: type) -> T:
        if node is None:
            return self  # type: ignore[return-value]  # the field itself, on the class
        return self.read(node.raw.get(self.key))

    def read(self, value: Any) -> T:
        raise NotImplementedError


class Number(_Field[Optional[float]]):
    """A finite float, else None."""

    def read(self, value: Any) -> Optional[float]:
        return number(value)


class Count(_Field[Optional[Union[int, float]]]):
    """A number as the JSON writes it (an int stays an int, as people read counts), else None."""

    def read(self, value: Any) -> Optional[Union[int, float]]:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        return number(value)


class Value(_Field[Optional[Scalar]]):
    """A string, finite number or bool as the JSON writes it (an id, a step number, a trace's pid),
    else None."""

    def read(self, value: Any) -> Optional[Scalar]:
        if isinstance(value, float):
            return value if math.isfinite(value) else None
        return value if isinstance(value, (str, int, bool)) else None


class Text(_Field[str]):
    """A string; a number as its text; anything else (null, a list, an object) the default."""

    def __init__(self, default: str = "", key: str = ""):
        super().__init__(key)
        self.default = default

    def read(self, value: Any) -> str:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return self.default


class Flag(_Field[bool]):
    """True for a true value (as `if value:` reads it)."""

    def read(self, value: Any) -> bool:
        return bool(value)


class Texts(_Field[List[str]]):
    """A list of strings (entries of other kinds dropped)."""

    def read(self, value: Any) -> List[str]:
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


class Numbers(_Field[List[Optional[float]]]):
    """A list of numbers, an entry that is none None."""

    def read(self, value: Any) -> List[Optional[float]]:
        return [number(v) for v in value] if isinstance(value, list) else []


class Child(_Field[N]):
    """A nested object, as its view (an empty view when absent)."""

    def __init__(self, kind: Type[N], key: str = ""):
        super().__init__(key)
        self.kind = kind

    def read(self, value: Any) -> N:
        return self.kind(value)


class Children(_Field[List[N]]):
    """A list of objects, as views (entries that are not objects dropped)."""

    def __init__(self, kind: Type[N], key: str = ""):
        super().__init__(key)
        self.kind = kind

    def read(self, value: Any) -> List[N]:
        return [self.kind(v) for v in value if isinstance(v, dict)] if isinstance(value, list) else []


class NumberTable:
    """A JSON object of numbers by name (categories, precisions, dtypes): `at(name)` is a finite float or
    None, `items()` every entry in the JSON's order (a value that is no number as None)."""

    __slots__ = ("raw",)

    def __init__(self, raw: Any):
        self.raw: Dict[str, Any] = raw if isinstance(raw, dict) else {}

    def __bool__(self) -> bool:
        return bool(self.raw)

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def at(self, name: str) -> Optional[float]:
        return number(self.raw.get(name))

    def items(self) -> List[Tuple[str, Optional[float]]]:
        return [(k, number(v)) for k, v in self.raw.items()]


class Table(_Field[NumberTable]):
    def read(self, value: Any) -> NumberTable:
        return NumberTable(value)


class Interval(_Field[Optional[Tuple[float, float]]]):
    """[low, high], both finite numbers, else None."""

    def read(self, value: Any) -> Optional[Tuple[float, float]]:
        if not isinstance(value, list) or len(value) != 2:
            return None
        low, high = number(value[0]), number(value[1])
        return None if low is None or high is None else (low, high)


# -- steps and the breakdown --------------------------------------------------------------------------


class StepRow(Node):
    """One step of `steps.per_step`."""

    step = Value()
    total_ms = Number()
    warmup = Flag()
    breakdown_ms = Table()
    host = Text()


class Steps(Node):
    count = Count()
    source = Value()
    mean_ms = Number()
    median_ms = Number()
    p90_ms = Number()
    clock = Text()  # device | host | mixed; "" in reports from before steps had clocks
    times_ms = Numbers()
    per_step = Children(StepRow)
    notes = Texts()

    @property
    def steady(self) -> List[StepRow]:
        """The steps the report's means are made of: warm-up steps left out (as the engine does),
        every step when all are warm-up."""
        rows = self.per_step
        return [s for s in rows if not s.warmup] or rows

    @property
    def times(self) -> List[float]:
        """The steady steps' times (ms); older reports without per-step rows: `times_ms`."""
        steps = self.steady
        times = [s.total_ms for s in steps] if steps else self.times_ms
        return [t for t in times if t is not None]


class Verdict(Node):
    bottleneck = Text()
    input_bound = Text()
    input_pct = Number()
    summary = Text()
    evidence = Texts()


# -- the input pipeline -------------------------------------------------------------------------------


class DataLoader(Node):
    iterator = Text()
    wait_ms_per_step = Number()


class InputPipeline(Node):
    kind = Text()
    evidence = Texts()
    dataloader = Child(DataLoader)


# -- op tables ---------------------------------------------------------------------------------------


class ShortNamed:
    """A row a person reads by its name (its view declares `name` and `short_name`): `short` is the
    name a table shows, the full `name` its detail. A report written before rows carried `short_name`
    gets the same short name made here."""

    name: str
    short_name: str

    @property
    def short(self) -> str:
        return self.short_name or shorten(self.name)


class OpRow(ShortNamed, Node):
    """A row of `ops` or `kernels` (or, in older reports, of `tensor_cores.kernels`)."""

    name = Text()
    short_name = Text()
    category = Text()
    time_ms = Number()
    count = Number()
    total_ms = Number()
    within = Text()
    onednn_op = Text()



# -- precision and Tensor Cores ------------------------------------------------------------------------


class Precision(Node):
    verdict = Value()
    summary = Text()
    basis = Value()


class TensorCoreKernel(ShortNamed, Node):
    name = Text()
    short_name = Text()


class TensorCores(Node):
    device_time_pct = Number()
    eligible_time_pct = Number()
    kernels = Children(TensorCoreKernel)


# -- advice -------------------------------------------------------------------------------------------


class Gain(Node):
    ms_per_step = Interval()
    pct = Interval()
    basis = Text()


class Span(ShortNamed, Node):
    """A trace event that shows a piece of advice (analysis/evidence/)."""

    name = Text()
    short_name = Text()
    kind = Text()
    host = Text()
    pid = Value()
    tid = Value()
    ts_us = Number()
    dur_us = Number()
    step = Value()
    thread = Text()
    format = Text()
    step_offset_ms = Number()
    trace_offset_ms = Number()


class Advice(Node):
    """A recommendation, or a finding of a deeper view."""

    id = Text()
    severity = Text()
    title = Text()
    message = Text()
    evidence = Text()
    expected_gain = Child(Gain)
    evidence_spans = Children(Span)
    snippet = Text()
    snippet_jax = Text()
    snippet_label = Text()
    host = Text()


# -- devices and host synchronisation -----------------------------------------------------------------


class Device(Node):
    name = Text()
    kind = Text()
    vendor = Text()
    model = Text()
    product = Text()
    compute_capability = Text()
    gfx_target = Text()
    kernel_count = Number()
    memcpy_count = Number()
    busy_pct = Number()
    host = Text()


class SyncCall(Node):
    name = Text()
    count = Number()
    time_ms = Number()


class HostSync(Node):
    count_per_step = Number()
    time_ms = Number()
    time_pct = Number()
    device_idle_ms = Number()
    calls = Children(SyncCall)


# -- the deeper views ---------------------------------------------------------------------------------


class KernelRow(ShortNamed, Node):
    name = Text()
    short_name = Text()
    launches = Count()
    total_ms = Number()
    mean_us = Number()
    min_us = Number()
    max_us = Number()
    grid = Numbers()
    block = Numbers()
    registers_per_thread = Number()
    shared_memory_bytes = Number()
    occupancy_pct = Number()
    occupancy_source = Text()
    tensor_cores = Flag()


class KernelStats(Node):
    launches = Count()
    distinct = Count()
    total_ms = Number()
    launches_per_step = Number()
    tiny_launch_pct = Number()
    occupancy_pct = Number()
    tensor_core_time_pct = Number()
    kernels = Children(KernelRow)
    findings = Children(Advice)


class LiveAllocation(Node):
    bytes = Number()
    op = Text()
    shape = Text()
    dtype = Text()
    region = Text()
    allocated_ms = Number()


class Timeline(Node):
    t_ms = Numbers()
    downsampled = Flag()


class Allocator(Node):
    host = Text()
    allocator = Text()
    kind = Text()
    peak_bytes = Number()
    peak_ms = Number()
    peak_step = Value()
    peak_op = Text()
    relative = Flag()
    capacity_bytes = Number()
    capacity_source = Text()
    headroom_bytes = Number()
    headroom_pct = Number()
    fragmentation_pct = Number()
    fragmentation_source = Text()
    live_at_peak = Children(LiveAllocation)
    live_at_peak_count = Count()
    live_at_peak_bytes = Number()
    live_at_peak_by_dtype = Table()
    live_at_peak_unrecorded_bytes = Number()
    timeline = Child(Timeline)


class Memory(Node):
    allocators = Children(Allocator)
    findings = Children(Advice)

    @property
    def main(self) -> Optional[Allocator]:
        """The allocator the report leads with (the largest device allocator, else a host one)."""
        allocators = self.allocators
        return allocators[0] if allocators else None


class CollectiveType(Node):
    type = Text()
    calls = Count()
    per_step_ms = Number()
    exposed_per_step_ms = Number()
    hidden_pct = Number()
    mean_message_bytes = Number()
    algbw_gbps = Number()
    busbw_gbps = Number()


class Skew(Node):
    ranks = Count()
    slowest = Text()
    compute_skew_pct = Number()


class Collectives(Node):
    calls = Count()
    total_ms = Number()
    per_step_ms = Number()
    exposed_per_step_ms = Number()
    exposed_step_pct = Number()
    hidden_pct = Number()
    skew = Child(Skew)
    types = Children(CollectiveType)
    findings = Children(Advice)


class CostedOp(Node):
    name = Text()
    source = Text()
    precision = Text()
    calls = Count()
    total_ms = Number()
    time_pct = Number()
    intensity = Number()
    achieved_tflops = Number()
    achieved_gbps = Number()
    bound = Text()
    roof_pct = Number()
    impossible = Flag()


class UncostedOp(Node):
    name = Text()
    time_pct = Number()


class Roof(Node):
    precision = Text()


class Roofline(Node):
    device = Text()
    device_model = Text()
    gfx_target = Text()
    peaks_source = Text()
    cpu_only = Flag()
    peak_precision = Text()
    peak_tflops = Number()
    bandwidth_gbps = Number()
    ridge_flops_per_byte = Number()
    roofs = Children(Roof)
    basis = Text()
    step_ms = Number()
    model_flops_per_step = Number()
    achieved_tflops = Number()
    mfu_pct = Number()
    mfu_impossible = Flag()
    mfu_lower_bound = Flag()
    ops_with_flops = Count()
    sources = Texts()
    costed_time_pct = Number()
    ops = Children(CostedOp)
    uncosted_ops = Children(UncostedOp)
    findings = Children(Advice)


# -- several hosts ------------------------------------------------------------------------------------


class HostRow(Node):
    """A row of `per_host`: older reports without the figures have the host's steps and breakdown."""

    host = Text()
    step_time_ms = Number()
    input_pct = Number()
    device_util_pct = Number()
    straggler = Flag()
    steps = Child(Steps)
    breakdown_pct = Table()
    verdict = Child(Verdict)

    @property
    def step_ms(self) -> Optional[float]:
        return self.step_time_ms if self.has("step_time_ms") else self.steps.mean_ms

    @property
    def input_share_pct(self) -> Optional[float]:
        return self.input_pct if self.has("input_pct") else self.breakdown_pct.at("input")


class Straggler(Node):
    host = Text()
    message = Text()


class ValidityRow(Node):
    analysis = Text()
    status = Text()
    reason = Text()
    fix = Text()
    rules = Texts()


class ValidityProblem(Node):
    rule = Text()
    reason = Text()
    fix = Text()
    host = Text()


class Validity(Node):
    """What the trace supports (analysis/validity/): one row per analysis, and the problems found."""

    rows = Children(ValidityRow)
    problems = Children(ValidityProblem)


# -- the report ---------------------------------------------------------------------------------------


class ReportDocument(Node):
    """A whole report (schema.Report)."""

    schema = Text()
    run = Text()
    hosts = Texts()
    host = Text()
    framework = Text()
    steps = Child(Steps)
    breakdown_ms = Table()
    breakdown_pct = Table()
    verdict = Child(Verdict)
    input_pipeline = Child(InputPipeline)
    precision_pct = Table()
    precision = Child(Precision)
    tensor_cores = Child(TensorCores)
    recommendations = Children(Advice)
    ops = Children(OpRow)
    devices = Children(Device)
    peak_memory_bytes = Count()
    host_sync = Child(HostSync)
    warnings = Texts()
    kernel_stats = Child(KernelStats)
    memory = Child(Memory)
    collectives = Child(Collectives)
    roofline = Child(Roofline)
    per_host = Children(HostRow)
    stragglers = Children(Straggler)
    validity = Child(Validity)

    @property
    def kernel_rows(self) -> List[OpRow]:
        """The report's kernel table (per step), each row naming its category; older reports list
        kernels only under `tensor_cores`."""
        rows = self.raw.get("kernels")
        if rows is None:
            rows = self.tensor_cores.raw.get("kernels")
        if not isinstance(rows, list):
            return []
        named = [row for row in rows if isinstance(row, dict) and row.get("name")]
        return [OpRow(dict(row, category=row.get("category") or "kernel")) for row in named]

    @property
    def notes(self) -> List[str]:
        """The steps' notes, then the report's warnings: what every export lists last."""
        return self.steps.notes + self.warnings


def read_report(raw: Any) -> ReportDocument:
    """The report `raw` (a dict as report JSON decodes, or anything else: an empty report) to read."""
    return raw if isinstance(raw, ReportDocument) else ReportDocument(raw)
