"""Fuzzing the PyTorch profiler (Kineto) reader and the analyses with mutated windows of real traces.

Shared by tests/readers/test_fuzz_kineto.py (hypothesis, a bounded number of inputs in CI) and
bench/fuzz_kineto.py (many inputs from a seeded generator). Random JSON rarely gets past the first
type check, so the inputs start from real traces (the committed H200 captures, plus the public corpus
in ../shared/corpus when it is there) and are mutated where the reader makes decisions: numbers,
types, missing fields, event order, nesting, text encodings, truncation, gzip framing. One case is a
window of a seed trace (its top-level keys, its "M" metadata events and a contiguous slice of
events), so it stays a few tens of KB and runs in milliseconds. `run_case` reads the bytes and builds
the full report as the server would; a ProfileReadError (any AdvisorError: a clear "cannot read"
answer) is a pass, any other exception is a bug.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gzip
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import msgspec

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers import guarded_io
from tb_plugin_advisor.readers.guarded_io import ReadLimits
from tb_plugin_advisor.readers.kineto.reader import read_kineto_bytes
from tb_plugin_advisor.report.run import build_report

ROOT = Path(__file__).resolve().parents[1]
CAPTURES = ROOT / "tests" / "captures" / "h200"
CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"
CORPUS_SETS = ("kineto", "hta", "tracelens")

# A small cap, so an input that inflates past it is refused at once (the cap itself is tested).
FUZZ_LIMITS = ReadLimits(max_profile_bytes=16 << 20)

# Events kept per seed: a 90 MB trace would otherwise stay in memory for the whole run. Kept as a few
# contiguous blocks spread over the trace, so windows still come from its start, middle and end.
KEEP_EVENTS = 8000
KEEP_BLOCKS = 4
KEEP_METADATA = 64
MIN_WINDOW = 50


class RawJSON:
    """JSON text written as it is into a case: what json.dumps cannot write (invalid UTF-8, a lone
    surrogate escape, `1e400`, 200,000 nested brackets without recursing)."""

    __slots__ = ("text",)

    def __init__(self, text: bytes):
        self.text = text

    def __repr__(self) -> str:
        return f"RawJSON({self.text[:40]!r})"


# ------------------------------------------------------------------------------------------------
# Seeds


@dataclass(frozen=True)
class Seed:
    """One real trace, reduced: top-level keys (decoded, in file order), its metadata events and a
    few blocks of contiguous events (each event its raw JSON bytes, decoded per window)."""

    path: str
    top: Tuple[Tuple[str, Any], ...]
    metadata: Tuple[bytes, ...]
    blocks: Tuple[Tuple[bytes, ...], ...]


class _Phase(msgspec.Struct):
    ph: Any = None


_PHASE = msgspec.json.Decoder(_Phase)


def seed_paths() -> List[Path]:
    """The committed PyTorch captures, then the corpus traces when the corpus is there."""
    paths = sorted(CAPTURES.glob("*/*.pt.trace.json.gz"))
    for name in CORPUS_SETS:
        folder = CORPUS / name
        if folder.is_dir():
            paths += sorted(p for p in folder.rglob("*") if p.name.endswith((".json", ".json.gz")))
    return paths


def _load_seed(path: Path) -> Optional[Seed]:
    """A trace file → Seed; None for a JSON file that is not a trace (an execution trace, say)."""
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    try:
        fields = msgspec.json.decode(data, type=Dict[str, msgspec.Raw])
        raws = msgspec.json.decode(fields.get("traceEvents", b"null"), type=Optional[List[msgspec.Raw]])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not raws:
        return None
    top = tuple((key, None if key == "traceEvents" else msgspec.json.decode(value))
                for key, value in fields.items())
    metadata: List[bytes] = []
    events: List[msgspec.Raw] = []
    for raw in raws:
        try:
            phase = _PHASE.decode(raw).ph
        except (msgspec.DecodeError, msgspec.ValidationError):
            phase = None
        if phase == "M":
            if len(metadata) < KEEP_METADATA:
                metadata.append(bytes(raw))
        else:
            events.append(raw)
    if len(events) <= KEEP_EVENTS:
        blocks = (tuple(bytes(raw) for raw in events),)
    else:
        size = KEEP_EVENTS // KEEP_BLOCKS
        starts = [round(i * (len(events) - size) / (KEEP_BLOCKS - 1)) for i in range(KEEP_BLOCKS)]
        blocks = tuple(tuple(bytes(raw) for raw in events[s : s + size]) for s in starts)
    return Seed(str(path), top, tuple(metadata), blocks)


@functools.cache
def _seed_at(path: str) -> Optional[Seed]:
    return _load_seed(Path(path))


@functools.lru_cache(maxsize=1)
def seeds() -> Tuple[str, ...]:
    """Paths of the seed traces (each loaded the first time a case picks it)."""
    paths = tuple(str(p) for p in seed_paths())
    if not paths:
        raise RuntimeError(f"no seed traces: {CAPTURES} holds no *.pt.trace.json.gz")
    return paths


def _pick_seed(rng: random.Random) -> Seed:
    paths = list(seeds())
    while True:  # files that are not traces are dropped as they are met
        path = rng.choice(paths)
        seed = _seed_at(path)
        if seed is not None:
            return seed
        paths.remove(path)
        if not paths:
            raise RuntimeError("none of the seed files is a trace")


def window(rng: random.Random, max_events: int = 400) -> Dict[str, Any]:
    """A case before mutation: one seed's top-level keys and metadata events, and a contiguous slice
    of 50..max_events of its other events (fewer when the seed has fewer)."""
    seed = _pick_seed(rng)
    block = rng.choice(seed.blocks)
    count = min(len(block), rng.randint(min(MIN_WINDOW, max_events), max_events))
    start = rng.randint(0, len(block) - count)
    events = [msgspec.json.decode(raw) for raw in block[start : start + count]]
    metadata = [msgspec.json.decode(raw) for raw in seed.metadata]
    doc: Dict[str, Any] = {}
    for key, value in seed.top:
        if key == "traceEvents":
            value = metadata + events if rng.random() < 0.5 else events + metadata
        doc[key] = value
    return doc


# ------------------------------------------------------------------------------------------------
# Hostile values

HUGE_NUMBERS: List[Any] = [
    10**30, 2**63, 2**64, 2**63 - 1, -(2**63), -(2**63) - 1, -(10**30), 1e308, -1e308, 1e-320, -1e-320,
    -1, -1.5, 0, 0.0, -0.0, 3.5, 1e15, 1.7e18, 2**53 + 1, 123456789012.345678,
    RawJSON(b"1e400"), RawJSON(b"-1e400"), RawJSON(b"1" + b"0" * 400), RawJSON(b"-" + b"9" * 30),
    RawJSON(b"NaN"), RawJSON(b"Infinity"), RawJSON(b"-Infinity"), RawJSON(b"-0"), RawJSON(b"1E+2"),
    RawJSON(b"1e-400"), RawJSON(b"0.000000000000000000001"),
]
OTHER_TYPES: List[Any] = [
    "", "x", "12", "-5", "1e400", "NaN", "0x10", "ProfilerStep#1", "ProfilerStep#99999999999999999999999",
    "[memory]", [], [1, 2], [[3, 4], [5]], ["a", None], {}, {"a": 1}, {"x": [1, {"y": None}]}, None, True,
    False, "a" * 5000, "\x00", [10**30], {"correlation": 2**64},
]
EVENT_FIELDS = ("ts", "dur", "pid", "tid", "name", "cat", "ph", "args", "id", "s", "bp")
NUMBER_FIELDS = ("ts", "dur", "pid", "tid", "id")
ARG_KEYS = (
    "correlation", "External id", "external id", "device", "stream", "flops", "Input Dims", "Input dims",
    "Input type", "Concrete Inputs", "Bytes", "bytes", "Total Allocated", "Total Reserved",
    "est. achieved occupancy %", "grid", "block", "registers per thread", "shared memory", "blocks per SM",
    "warps per SM", "In msg nelems", "Out msg nelems", "Group size", "dtype", "Collective name",
    "Sequence number", "Fwd thread id", "memory bandwidth (GB/s)", "kind", "Device Type", "Device Id",
    "Addr", "Python id", "Python parent id", "name", "labels",
)
TOP_KEYS = ("baseTimeNanoseconds", "schemaVersion", "deviceProperties", "distributedInfo", "traceName",
            "displayTimeUnit", "host_name", "roctracer_version", "hip_runtime_version", "record_shapes",
            "traceEvents")
DEVICE_KEYS = ("id", "name", "totalGlobalMem", "computeMajor", "computeMinor", "maxThreadsPerBlock",
               "maxThreadsPerMultiprocessor", "regsPerBlock", "regsPerMultiprocessor", "warpSize",
               "sharedMemPerBlock", "sharedMemPerMultiprocessor", "numSms", "sharedMemPerBlockOptin")
DISTRIBUTED_KEYS = ("rank", "world_size", "backend", "nccl_version", "pg_count")
CATEGORIES = ("kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset", "cuda_runtime",
              "cuda_driver", "cpu_op", "Operator", "Runtime", "user_annotation", "gpu_user_annotation",
              "python_function", "Trace", "cuda_sync", "mtia_ccp_events", "ac2g", "async", "fwdbwd",
              "cpu_instant_event", "overhead", "", "KERNEL", "unknown_thing")
NAMES = ("ProfilerStep#3", "ProfilerStep#0", "[memory]", "process_name", "thread_name", "process_labels",
         "cudaLaunchKernel", "cudaMemcpyAsync", "cudaDeviceSynchronize", "cudaStreamSynchronize",
         "Memcpy HtoD (Pageable -> Device)", "Memset (Device)", "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
         "aten::mm", "aten::conv2d", "aten::addmm", "PyTorch Profiler (0)", "Optimizer.step#SGD.step",
         "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "sm90_xmma_gemm_bf16bf16_bf16f32",
         "void at::native::vectorized_elementwise_kernel<4>", "nccl:all_reduce", "")
PHASES = ("X", "M", "i", "I", "s", "f", "t", "B", "E", "b", "e", "C", "n", "", "XX", "x")
ODD_TEXT = ("\x00", "a\x00b", "line\nbreak", "cr\r\nlf", "\u202eevil\u202c", "\u2066iso\u2069", "\u200b",
            "\ufeffbom", "\x1b[31mred\x1b[0m", "emoji \U0001f525", "tab\there", "\\", '"quoted"', "\ud7ff",
            "\uffff", "</script><script>alert(1)</script>", "a" * 3000)
BAD_UTF8 = (b"\xff", b"\xfe\xff", b"\xc3", b"\xc3(", b"\x80", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80",
            b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\xe2\x82")
LONE_SURROGATES = (b"\\ud800", b"\\udc00", b"\\ud800\\ud800", b"\\udfff", b"\\ud83d", b"\\uDBFF")


def _events(doc: Dict[str, Any]) -> List[Any]:
    events = doc.get("traceEvents")
    return events if isinstance(events, list) else []


def _dict_events(doc: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [event for event in _events(doc) if isinstance(event, dict)]


def _some_event(doc: Dict[str, Any], rng: random.Random) -> Optional[Dict[str, Any]]:
    events = _dict_events(doc)
    return rng.choice(events) if events else None


def _some_args(doc: Dict[str, Any], rng: random.Random) -> Optional[Dict[str, Any]]:
    """The args of a random event, made a dict when it had none (a kernel then gets "grid", say)."""
    event = _some_event(doc, rng)
    if event is None:
        return None
    if not isinstance(event.get("args"), dict):
        event["args"] = {}
    return event["args"]


def _some_device(doc: Dict[str, Any], rng: random.Random) -> Optional[Dict[str, Any]]:
    devices = doc.get("deviceProperties")
    entries = [d for d in devices if isinstance(d, dict)] if isinstance(devices, list) else []
    return rng.choice(entries) if entries else None


def _set_somewhere(doc: Dict[str, Any], rng: random.Random, values: Sequence[Any],
                   fields: Sequence[str]) -> None:
    """Put one of `values` in one place a reader looks: an event field, an args value, a top-level
    key, a deviceProperties or distributedInfo entry."""
    value = rng.choice(values)
    where = rng.random()
    if where < 0.45:
        event = _some_event(doc, rng)
        if event is not None:
            event[rng.choice(fields)] = value
    elif where < 0.85:
        args = _some_args(doc, rng)
        if args is not None:
            args[rng.choice(list(args) + list(ARG_KEYS) if args and rng.random() < 0.3 else ARG_KEYS)] = value
    elif where < 0.92:
        doc[rng.choice([k for k in TOP_KEYS if k != "traceEvents"])] = value
    elif where < 0.97:
        device = _some_device(doc, rng)
        if device is not None:
            device[rng.choice(DEVICE_KEYS)] = value
    else:
        info = doc.get("distributedInfo")
        if not isinstance(info, dict):
            info = doc["distributedInfo"] = {}
        info[rng.choice(DISTRIBUTED_KEYS)] = value


# ------------------------------------------------------------------------------------------------
# Structure mutations: on the decoded document, in place


def hostile_numbers(doc: Dict[str, Any], rng: random.Random) -> None:
    """Huge, negative, tiny, non-finite and float numbers where the reader expects counts and times."""
    for _ in range(rng.randint(1, 4)):
        _set_somewhere(doc, rng, HUGE_NUMBERS, NUMBER_FIELDS)


def wrong_types(doc: Dict[str, Any], rng: random.Random) -> None:
    """A string, list, dict, null or bool where a number or a string is expected."""
    for _ in range(rng.randint(1, 4)):
        _set_somewhere(doc, rng, OTHER_TYPES + HUGE_NUMBERS[:6], EVENT_FIELDS)


def retarget(doc: Dict[str, Any], rng: random.Random) -> None:
    """An event given another category, name or phase, so its args meet code written for others."""
    for _ in range(rng.randint(1, 6)):
        event = _some_event(doc, rng)
        if event is None:
            return
        key = rng.choice(("cat", "name", "ph"))
        event[key] = rng.choice({"cat": CATEGORIES, "name": NAMES, "ph": PHASES}[key])


def delete_fields(doc: Dict[str, Any], rng: random.Random) -> None:
    """Fields that are usually there, gone: event fields, args entries, top-level keys."""
    for _ in range(rng.randint(1, 6)):
        where = rng.random()
        if where < 0.6:
            event = _some_event(doc, rng)
            if event:
                del event[rng.choice(list(event))]
        elif where < 0.9:
            args = _some_args(doc, rng)
            if args:
                del args[rng.choice(list(args))]
        else:
            present = [k for k in doc if k != "traceEvents" or rng.random() < 0.2]
            if present:
                del doc[rng.choice(present)]


def reorder_events(doc: Dict[str, Any], rng: random.Random) -> None:
    """Events duplicated, shuffled, reversed or moved: the reader must not assume Kineto's order."""
    events = _events(doc)
    if not events:
        return
    kind = rng.choice(("duplicate", "shuffle", "reverse", "rotate", "swap", "repeat_all"))
    a, b = sorted(rng.randrange(len(events) + 1) for _ in range(2))
    if kind == "duplicate":
        event = rng.choice(events)
        at = rng.randrange(len(events) + 1)
        events[at:at] = [copy.deepcopy(event) for _ in range(rng.randint(1, 50))]
    elif kind == "shuffle":
        part = events[a:b]
        rng.shuffle(part)
        events[a:b] = part
    elif kind == "reverse":
        events[a:b] = events[a:b][::-1]
    elif kind == "rotate":
        events[:] = events[a:] + events[:a]
    elif kind == "swap":
        i, j = rng.randrange(len(events)), rng.randrange(len(events))
        events[i], events[j] = events[j], events[i]
    else:
        events.extend(list(events))


def _nested(rng: random.Random, depth: int) -> RawJSON:
    kind = rng.choice(("array", "object", "mixed"))
    if kind == "array":
        return RawJSON(b"[" * depth + b"]" * depth)
    if kind == "object":
        return RawJSON(b'{"a":' * depth + b"1" + b"}" * depth)
    return RawJSON(b'[{"x":' * (depth // 2) + b"[]" + b"}]" * (depth // 2))


def deep_nesting(doc: Dict[str, Any], rng: random.Random) -> None:
    """Arrays or objects nested 10..200,000 levels: inside args, as an event, as traceEvents itself."""
    depth = rng.choice((10, 50, 100, 500, 1000, 5000, 50_000, 200_000))
    value = _nested(rng, depth)
    where = rng.random()
    if where < 0.5:
        args = _some_args(doc, rng)
        if args is not None:
            args[rng.choice(ARG_KEYS)] = value
    elif where < 0.65:
        event = _some_event(doc, rng)
        if event is not None:
            event["args"] = value
    elif where < 0.8:
        events = _events(doc)
        events.insert(rng.randrange(len(events) + 1), value)
    elif where < 0.9:
        doc["traceEvents"] = value
    else:
        doc[rng.choice(("deviceProperties", "distributedInfo", "schemaVersion"))] = value


def _string_value(rng: random.Random, base: str) -> Any:
    """Text a reader must survive: invalid UTF-8, lone surrogate escapes, NUL, newlines, bidi."""
    kind = rng.random()
    prefix = json.dumps(base[:60]).encode()[1:-1]
    if kind < 0.35:
        return RawJSON(b'"' + prefix + rng.choice(BAD_UTF8) + rng.choice((b"", prefix)) + b'"')
    if kind < 0.6:
        return RawJSON(b'"' + prefix + rng.choice(LONE_SURROGATES) + rng.choice((b"", b"x")) + b'"')
    return base + rng.choice(ODD_TEXT) if rng.random() < 0.7 else rng.choice(ODD_TEXT)


def bad_text(doc: Dict[str, Any], rng: random.Random) -> None:
    """Names, categories, args strings and thread names holding hostile text."""
    for _ in range(rng.randint(1, 4)):
        event = _some_event(doc, rng)
        if event is None:
            return
        where = rng.random()
        if where < 0.6:
            key = rng.choice(("name", "name", "cat", "ph", "tid", "pid"))
            base = event.get(key)
            event[key] = _string_value(rng, base if isinstance(base, str) else "")
        else:
            args = event.get("args")
            if not isinstance(args, dict):
                args = event["args"] = {}
            key = rng.choice(list(args) + ["name", "Input type", "Collective name", "dtype", "kind"]) \
                if args else rng.choice(("name", "Input type", "dtype"))
            base = args.get(key)
            args[key] = _string_value(rng, base if isinstance(base, str) else "")
            if rng.random() < 0.2:  # an odd key, too
                args[rng.choice(ODD_TEXT)] = 1


STRUCTURE_MUTATIONS: Dict[str, Callable[[Dict[str, Any], random.Random], None]] = {
    "numbers": hostile_numbers,
    "types": wrong_types,
    "retarget": retarget,
    "delete_fields": delete_fields,
    "reorder_events": reorder_events,
    "deep_nesting": deep_nesting,
    "bad_text": bad_text,
}


def serialise(doc: Any) -> bytes:
    """The document as JSON bytes, RawJSON pieces written as they are."""
    pieces: List[bytes] = []

    def placeholder(value: Any) -> Any:
        if isinstance(value, RawJSON):
            pieces.append(value.text)
            return f"\ue000raw{len(pieces) - 1}\ue000"
        raise TypeError(f"not JSON: {value!r}")

    # UTF-8 text (not \\u escapes), as Kineto writes it, so byte mutations meet multi-byte characters
    text = json.dumps(doc, default=placeholder, ensure_ascii=False, separators=(",", ":"))
    data = text.encode("utf-8", "surrogatepass")
    for i, piece in enumerate(pieces):
        data = data.replace(json.dumps(f"\ue000raw{i}\ue000", ensure_ascii=False).encode(), piece, 1)
    return data


# ------------------------------------------------------------------------------------------------
# Byte mutations: on the serialised document


def text_encoding(data: bytes, rng: random.Random) -> bytes:
    """A UTF-8 BOM in front, or the whole document as UTF-16 / UTF-32."""
    kind = rng.choice(("bom", "bom", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "bom_twice"))
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "bom_twice":
        return b"\xef\xbb\xbf\xef\xbb\xbf" + data
    return data.decode("utf-8", "surrogateescape").encode(kind, "surrogatepass")


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: rng.randrange(len(data) + 1)]


def byte_flips(data: bytes, rng: random.Random) -> bytes:
    """Random bit flips, or JSON punctuation and digits written over random bytes."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 16)):
        if not out:
            break
        at = rng.randrange(len(out))
        if rng.random() < 0.5:
            out[at] ^= 1 << rng.randrange(8)
        else:
            out[at] = rng.choice(b'{}[]",:\\0123456789-.eE \x00\xff')
    return bytes(out)


def gzip_framing(data: bytes, rng: random.Random) -> bytes:
    """Gzipped, then damaged the ways files are: truncated, flipped, two members, trailing garbage,
    zero padding, or a member that inflates past the size cap."""
    packed = gzip.compress(data, compresslevel=rng.choice((1, 6, 9)), mtime=0)
    kind = rng.choice(("plain", "truncated", "flipped", "two_members", "split_members", "garbage", "zeros",
                       "header_only", "empty_member", "bomb"))
    if kind == "truncated":
        return packed[: rng.randrange(len(packed))]
    if kind == "flipped":
        return byte_flips(packed, rng)
    if kind == "two_members":
        return packed + packed
    if kind == "split_members":  # `gzip -c a b`: one document in two members
        cut = rng.randrange(len(data) + 1)
        return gzip.compress(data[:cut], mtime=0) + gzip.compress(data[cut:], mtime=0)
    if kind == "garbage":
        return packed + rng.randbytes(rng.randint(1, 64))
    if kind == "zeros":
        return packed + b"\x00" * rng.randint(1, 4096)
    if kind == "header_only":
        return packed[: rng.randint(2, 12)]
    if kind == "empty_member":
        return gzip.compress(b"", mtime=0) + packed
    if kind == "bomb":  # past FUZZ_LIMITS once inflated
        return gzip.compress(data + b" " * (FUZZ_LIMITS.max_profile_bytes + 1), compresslevel=1, mtime=0)
    return packed


# In the order they are applied: encoding before damage, gzip last (it frames whatever came before).
BYTE_MUTATIONS: Dict[str, Callable[[bytes, random.Random], bytes]] = {
    "text_encoding": text_encoding,
    "truncation": truncate,
    "byte_flips": byte_flips,
    "gzip_framing": gzip_framing,
}

MUTATIONS: Tuple[str, ...] = tuple(STRUCTURE_MUTATIONS) + tuple(BYTE_MUTATIONS)


def mutated(rng: random.Random, names: Sequence[str], max_events: int = 400) -> bytes:
    """A window of a seed trace with the named mutations applied (structure ones first, then the
    byte ones in BYTE_MUTATIONS order)."""
    doc = window(rng, max_events)
    for name in names:
        if name in STRUCTURE_MUTATIONS:
            STRUCTURE_MUTATIONS[name](doc, rng)
    data = serialise(doc)
    for name in BYTE_MUTATIONS:
        if name in names:
            data = BYTE_MUTATIONS[name](data, rng)
    return data


def make_named_case(rng: random.Random, max_events: int = 400) -> Tuple[List[str], bytes]:
    """One fuzz input and the names of the mutations it got: a window of a real trace with 1-3 random
    mutations (structure mutations are drawn more often: byte damage mostly ends at the JSON parser)."""
    weights = [3] * len(STRUCTURE_MUTATIONS) + [1] * len(BYTE_MUTATIONS)
    names: List[str] = []
    for _ in range(rng.choice((1, 1, 2, 2, 3))):
        name = rng.choices(MUTATIONS, weights)[0]
        if name not in names or name in STRUCTURE_MUTATIONS:
            names.append(name)
    return names, mutated(rng, names, max_events)


def make_case(rng: random.Random, max_events: int = 400) -> bytes:
    """One fuzz input (make_named_case without the names)."""
    return make_named_case(rng, max_events)[1]


def unmutated(rng: random.Random, max_events: int = 400) -> bytes:
    """A window of a seed trace as it is: a real trace, which must give a report."""
    return serialise(window(rng, max_events))


@contextlib.contextmanager
def _size_cap(limits: ReadLimits) -> Iterator[None]:
    """read_kineto_bytes reads the process-wide cap (guarded_io.current()); set it for one read and
    put the previous one back, so the rest of a test session keeps its own."""
    previous = guarded_io.current()
    guarded_io.configure(limits.max_profile_bytes / guarded_io.MB)
    try:
        yield
    finally:
        guarded_io.configure(previous.max_profile_bytes / guarded_io.MB)


def run_case(data: bytes) -> str:
    """Read and fully analyse `data`, writing nothing to disk; "report" or "refused" (an
    AdvisorError from the reader: a clear answer); any other exception propagates: it is a bug."""
    with _size_cap(FUZZ_LIMITS):
        try:
            profile = read_kineto_bytes(data, source="<fuzz>")
        except AdvisorError:
            return "refused"
    report = build_report(RunProfiles("fuzz", [profile])).to_json()
    json.dumps(report, allow_nan=False)  # the JSON contract: no NaN/inf reaches a client
    return "report"


__all__: List[str] = ["BYTE_MUTATIONS", "MUTATIONS", "STRUCTURE_MUTATIONS", "make_case", "make_named_case",
                      "mutated", "run_case", "seeds", "unmutated", "window"]
