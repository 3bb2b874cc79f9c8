"""Evidence that matches the advice: every span a recommendation shows is an event of the kind its
rule's record names, and every kind is the event it says (a transpose span is a kernel the Tensor
Core analysis counted as a transpose, a pageable-copy span a copy from pageable memory, a step span
the step marker's own event). Read off the committed H200 captures, whose advice covers the input,
pin_memory, layout, precision, launch and sync rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from paths import H200

from tb_plugin_advisor.advice.evidence import FALLBACK
from tb_plugin_advisor.advice.registry import EVERY_RULE, rule_of
from tb_plugin_advisor.analysis.classify import event_names as names
from tb_plugin_advisor.analysis.classify.torch_names import copy_source
from tb_plugin_advisor.analysis.evidence.span import KINDS
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report

CAPTURES = ("resnet50_fp32_workers0", "resnet50_fp32_workers8", "transformer_fp32", "mlp_host_sync",
            "mlp_launch_bound", "jax_mlp_slow_input")


def _report(capture: str) -> Dict[str, Any]:
    folder = H200 / capture
    files = sorted(folder.glob("*.pt.trace.json.gz")) or sorted(folder.glob("plugins/profile/*/*.xplane.pb"))
    path: Path = files[0]
    profile = read_xplane(str(path)) if path.name.endswith(".xplane.pb") else read_kineto(str(path))
    return build_report(RunProfiles(run=capture, profiles=[profile])).to_json()


def _matches(table, name: str) -> bool:
    return bool(names.matching(table, [name])[0])


def _kernel_names(report: Dict[str, Any]) -> set:
    """Every kernel name the report lists anywhere (its kernel tables)."""
    rows = (report.get("kernels", []) + (report.get("kernel_stats") or {}).get("kernels", [])
            + report["tensor_cores"]["kernels"])
    return {k["name"] for k in rows}


# What each kind's span must be, judged from the span and the report it came in.
IS_ABOUT: Dict[str, Callable[[Dict[str, Any], Dict[str, Any]], bool]] = {
    "input_annotation": lambda s, r: s["name"] in {
        n["name"] for n in ((r.get("input_pipeline") or {}).get("annotations") or {}).get("names", [])},
    "input_wait": lambda s, r: _matches(names.HOST_INPUT, s["name"]),
    "host_sync": lambda s, r: _matches(names.HOST_SYNC, s["name"]),
    # a step's own marker event: it starts its (host) step
    "worst_step": lambda s, r: s["step"] is not None and s["step_offset_ms"] == 0,
    "early_step": lambda s, r: s["step"] is not None and s["step_offset_ms"] == 0,
    "slowest_kernel": lambda s, r: s["name"] in _kernel_names(r),
    "transpose_kernel": lambda s, r: s["name"] in {t["name"] for t in r["tensor_cores"]["top_transposes"]},
    "fp32_matmul": lambda s, r: s["name"] in {n["kernel"] for n in r["tensor_cores"]["eligible_not_using"]},
    "longest_copy": lambda s, r: "memcpy" in s["name"].lower() or "copy" in s["name"].lower(),
    "pageable_copy": lambda s, r: copy_source(s["name"]) == "pageable",
    "collective": lambda s, r: _matches(names.DEVICE_COMMUNICATION, s["name"]),
}


def test_every_kind_says_what_its_spans_are():
    assert set(IS_ABOUT) == set(KINDS)


def test_every_rule_names_only_known_kinds_and_the_ones_about_its_events():
    for rule in EVERY_RULE:
        assert rule.evidence and set(rule.evidence) <= set(KINDS), rule.id
    assert rule_of("input.pin_memory").evidence[0] == "pageable_copy"
    assert rule_of("layout.transpose").evidence == ("transpose_kernel",)  # no other kernel beside them
    for rule_id in ("precision.mixed", "precision.tf32"):
        rule = rule_of(rule_id)
        if rule is not None:
            assert "slowest_kernel" not in rule.evidence, rule_id
    assert set(FALLBACK) <= set(KINDS)


@pytest.fixture(scope="module")
def reports() -> List[Dict[str, Any]]:
    return [_report(c) for c in CAPTURES]


def test_every_span_of_every_recommendation_is_an_event_of_its_rules_kinds(reports):
    seen = set()
    for report in reports:
        for rec in report["recommendations"]:
            kinds = rule_of(rec["id"]).evidence
            for span in rec["evidence_spans"]:
                assert span["kind"] in kinds, (report["run"], rec["id"], span["kind"])
                assert IS_ABOUT[span["kind"]](span, report), (report["run"], rec["id"], span["name"])
                seen.add((rec["id"], span["kind"]))
    # the two the issue found wrong are shown by their own events on the real captures
    assert ("input.pin_memory", "pageable_copy") in seen
    assert ("layout.transpose", "transpose_kernel") in seen
    assert not any(rule_id == "layout.transpose" and kind != "transpose_kernel" for rule_id, kind in seen)


def test_a_batch_norm_kernel_is_never_a_transpose(reports):
    for report in reports:
        for rec in report["recommendations"]:
            if rec["id"] == "layout.transpose":
                assert not any("bn_" in s["name"] or "batch_norm" in s["name"] for s in rec["evidence_spans"])
