"""Hostile values inside a PyTorch trace: numbers beyond int64 or float range, nesting deep enough to
exhaust the parser's stack, invalid UTF-8 and newlines in names. Each case is either a clear refusal
that names the file and the field (CLI exit 2, server 422) or a report that treats the value as
unknown and says so in its warnings, and every JSON answer stays strict JSON (no inf, no NaN)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Optional

import msgspec
import pytest
from synth_kineto import training_trace

from tb_plugin_advisor.readers.kineto.load import EVENT_DECODER, decoded, first_invalid_utf8
from tb_plugin_advisor.views.cli.main import main as cli_main

HUGE = 10**30


def _trace(tmp_path: Path, field: str, value: Any, category: Optional[str] = None, name: str = "w") -> Path:
    """The synthetic training trace with `field` of the first event of `category` (or of that name)
    set to `value` (ts/dur on the event itself, anything else in its args)."""
    document = training_trace(steps=3).document()
    for event in document["traceEvents"]:
        if event.get("ph") in ("X", "i") and category in (None, event.get("cat"), event.get("name")):
            if field in ("ts", "dur"):
                event[field] = value
            else:
                event.setdefault("args", {})[field] = value
            break
    else:
        raise AssertionError(f"no event of category {category!r}")
    path = tmp_path / f"{name}.1.pt.trace.json"
    path.write_text(json.dumps(document))
    return path


def _report(path: Path, capsys, fmt: str = "json") -> Dict[str, Any]:
    code = cli_main(["report", str(path), "--format", fmt])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out) if fmt == "json" else {"text": captured.out}


def _refusal(path: Path, capsys) -> str:
    code = cli_main(["report", str(path), "--format", "json"])
    captured = capsys.readouterr()
    assert code == 2, captured.out[:500]
    assert "Traceback" not in captured.err and str(path) in captured.err
    return captured.err


@pytest.mark.parametrize("field,category", [
    ("correlation", "kernel"), ("External id", "cpu_op"), ("device", "kernel"), ("stream", "kernel"),
    ("flops", "cpu_op"), ("bytes", "gpu_memcpy"), ("Bytes", "[memory]"),
    ("Total Allocated", "[memory]"), ("In msg nelems", "kernel"),
    ("est. achieved occupancy %", "kernel"), ("registers per thread", "kernel"),
])
@pytest.mark.parametrize("value", [HUGE, -HUGE, 1e308, -1e308])
def test_an_args_number_out_of_range_is_unknown_and_counted(tmp_path, capsys, field, category, value):
    path = _trace(tmp_path, field, value, category)
    report = _report(path, capsys)  # strict JSON: json.loads of the CLI's allow_nan=False output
    assert report["steps"]["count"] == 3
    notes = " ".join(report.get("warnings") or [])
    if field in ("registers per thread",) or (field == "est. achieved occupancy %" and value < 0):
        return  # not kept as stats of their own: only the kernel's details text, which skips them
    assert "1 argument value(s) out of range" in notes, notes


@pytest.mark.parametrize("field", ["ts", "dur"])
@pytest.mark.parametrize("value", [HUGE, 1e300])
def test_a_time_out_of_range_is_refused_naming_the_event_and_field(tmp_path, capsys, field, value):
    err = _refusal(_trace(tmp_path, field, value, "cpu_op"), capsys)
    assert f"].{field} (" in err and "out of range" in err


def test_a_time_written_as_an_overflowing_float_literal_is_refused(tmp_path, capsys):
    path = _trace(tmp_path, "dur", 7777777, "cpu_op")
    path.write_text(path.read_text().replace('"dur": 7777777', '"dur": 1e400', 1))
    err = _refusal(path, capsys)
    assert "'dur' is not a finite number (1e400)" in err


def test_a_base_time_out_of_range_is_refused(tmp_path, capsys):
    document = training_trace(steps=2).document()
    document["baseTimeNanoseconds"] = HUGE
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps(document))
    assert "baseTimeNanoseconds is out of range" in _refusal(path, capsys)


def test_a_device_number_out_of_range_is_refused(tmp_path, capsys):
    document = training_trace(steps=2).document()
    kernel = next(e for e in document["traceEvents"] if e.get("cat") == "kernel")
    kernel["pid"] = HUGE
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps(document))
    assert "is device 1000000000000000000000000000000, out of range" in _refusal(path, capsys)


@pytest.mark.parametrize("where", ["args", "events"])
def test_json_nested_a_hundred_thousand_levels_is_refused_not_a_recursion_error(tmp_path, capsys, where):
    deep = "[" * 100_000 + "]" * 100_000
    document = training_trace(steps=1).to_bytes().decode()
    if where == "args":
        text = document.replace('"args": {', '"args": {"deep": ' + deep + ", ", 1)
    else:
        text = document.replace('"traceEvents": [', '"traceEvents": [' + deep + ", ", 1)
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(text)
    assert "nested too deeply" in _refusal(path, capsys)


def test_invalid_utf8_in_an_event_name_reads_with_replacement_characters(tmp_path, capsys):
    data = training_trace(steps=3).to_bytes()
    kernel = b'"name": "void at::native::vectorized_elementwise_kernel<4>(int)"'
    assert kernel in data
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(data.replace(kernel, b'"name": "elementwise\xff\xfekernel"'))
    report = _report(path, capsys)
    assert any("held invalid UTF-8" in w for w in report["warnings"])
    assert "elementwise\ufffd\ufffdkernel" in [kernel["name"] for kernel in report["kernels"]]


def test_invalid_utf8_in_a_top_level_field_is_refused_naming_the_byte(tmp_path, capsys):
    data = training_trace(steps=1).to_bytes()
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(data.replace(b'"schemaVersion": 1', b'"schemaVersion": 1, "traceName": "\xff"', 1))
    assert "invalid UTF-8 at byte" in _refusal(path, capsys)


def test_a_newline_in_an_op_name_cannot_forge_a_line_of_text_output(tmp_path, capsys):
    data = training_trace(steps=3).to_bytes()
    op = b'"name": "aten::conv2d"'  # the op its kernels are listed under
    forged = b'"name": "aten::conv2d\\n[HIGH] Forged advice  (forged.rule)"'
    path = tmp_path / "w.1.pt.trace.json"
    path.write_bytes(data.replace(op, forged))
    text = _report(path, capsys, "text")["text"]
    assert "aten::conv2d\\n[HIGH] Forged advice" in text
    assert not any(line.lstrip().startswith("[HIGH] Forged") for line in text.splitlines())
    # the JSON keeps the exact name
    names = [op["name"] for op in _report(path, capsys)["ops"]]
    assert "aten::conv2d\n[HIGH] Forged advice  (forged.rule)" in names


@pytest.mark.parametrize("field,value", [("warpSize", 0.5), ("warpSize", 0),
                                         ("maxThreadsPerMultiprocessor", 0.9)])
def test_device_properties_that_make_occupancy_impossible_leave_it_unknown(tmp_path, capsys, field, value):
    """Found by the Kineto fuzzer: a warp size below one divided by zero in the occupancy model."""
    document = training_trace(steps=3).document()
    document["deviceProperties"][0][field] = value
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(json.dumps(document))
    report = _report(path, capsys)
    assert report["steps"]["count"] == 3


@pytest.mark.parametrize("block", [4, 5, 6, 7, 1 << 20])
def test_the_first_invalid_utf8_byte_is_found_across_blocks(block):
    """Where msgspec (0.23 on) only says "Invalid UTF-8 encoded string", the reader finds the byte
    itself, a block at a time: a valid character cut by a block's end is not an error."""
    text = "ok é € 𝄞 ".encode() + b"\xff" + b"after"
    found = first_invalid_utf8(text, block)
    assert found is not None and (found.start, found.end) == (text.index(b"\xff"), text.index(b"\xff") + 1)
    assert first_invalid_utf8("é € 𝄞 valid".encode(), block) is None
    assert first_invalid_utf8(b"", block) is None
    cut = first_invalid_utf8(b"ab" + "€".encode()[:2], block)  # a character cut by the end of data
    assert cut is not None and cut.start == 2 and cut.reason == "unexpected end of data"


def test_invalid_utf8_is_a_unicode_error_whatever_msgspec_says():
    with pytest.raises(UnicodeDecodeError):
        decoded(EVENT_DECODER, b'{"ph": "X", "name": "k\xfe"}')
    with pytest.raises(msgspec.DecodeError):  # other malformed JSON stays what it is
        decoded(EVENT_DECODER, b'{"ph": "X", "name": ')
    assert decoded(EVENT_DECODER, '{"ph": "X", "name": "k€"}'.encode()).name == "k€"
