"""The roofline in the report JSON (one host and merged over hosts), the exports and `--section roofline`,
on the synthetic PyTorch trace of test_roofline.py whose FLOPs and times are known."""

from __future__ import annotations

import json
import re

import pytest
from html_pages import outside_scripts
from test_roofline import A100_BF16, ADD_FLOPS, LINEAR, MM_FLOPS, MS, STEP_MS, US, torch_trace

from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto import read_kineto_bytes
from tb_plugin_advisor.report import build_report
from tb_plugin_advisor.views.cli import main as cli_main
from tb_plugin_advisor.views.render import render_html, render_markdown, render_text

STEP_FLOPS = MM_FLOPS + LINEAR[1] + ADD_FLOPS
MFU = 100 * STEP_FLOPS / ((STEP_MS * MS - US) / 1e9) / A100_BF16


def report_of(*hosts: str):
    profiles = [read_kineto_bytes(torch_trace(), source=f"{h}.pt.trace.json", host=h) for h in hosts]
    return build_report(RunProfiles(run="torch", profiles=profiles)).to_json()


def test_one_host_report_carries_the_roofline():
    r = report_of("h0")["roofline"]
    assert r["mfu_pct"] == pytest.approx(MFU, abs=0.01) and r["mfu_precision"] == "bf16"
    assert {o["name"] for o in r["ops"]} == {"aten::mm", "aten::linear", "aten::add"}
    assert [f["id"] for f in r["findings"]] == ["roofline.far_below_roof", "roofline.low_mfu"]


def test_hosts_merge_ops_and_keep_the_mfu():
    one = report_of("h0")["roofline"]
    two = report_of("h0", "h1")["roofline"]
    assert two["devices"] == 2 and two["mfu_pct"] == pytest.approx(one["mfu_pct"], abs=0.01)
    by_name = {o["name"]: o for o in two["ops"]}
    for o in one["ops"]:
        merged = by_name[o["name"]]
        assert merged["calls"] == 2 * o["calls"] and merged["flops"] == pytest.approx(2 * o["flops"])
        assert merged["roof_pct"] == pytest.approx(o["roof_pct"], abs=0.01)
        assert merged["time_pct"] == pytest.approx(o["time_pct"], abs=0.01)
    assert [h["host"] for h in two["per_host"]] == ["h0", "h1"]
    assert "roofline.low_mfu" in [f["id"] for f in two["findings"]]
    json.dumps(two, allow_nan=False)


def test_exports_show_the_roofline_section():
    report = report_of("h0")
    text = render_text(report)
    assert "Roofline and MFU:" in text and f"MFU {MFU:.1f} %" in text and "aten::add" in text
    md = render_markdown(report)
    assert "## Roofline and MFU" in md and "| aten::mm |" in md
    page = outside_scripts(render_html(report))
    assert '<h2 id="roofline">' in page and 'aria-label="roofline"' in page
    assert len(re.findall(r"<circle ", page[page.index('aria-label="roofline"'):])) >= 3


def test_cli_section_roofline(tmp_path, capsys):
    path = tmp_path / "w0.pt.trace.json"
    path.write_bytes(torch_trace())
    assert cli_main(["report", str(path), "--section", "roofline", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["sections"] == ["roofline"] and out["roofline"]["mfu_pct"] == pytest.approx(MFU, abs=0.01)
    assert cli_main(["report", str(path), "--section", "roofline"]) == 0
    text = capsys.readouterr().out
    assert "Roofline and MFU:" in text and "Kernel statistics" not in text


def test_diff_names_the_mfu_change_and_the_ops_share_of_roof():
    """Same FLOPs in half the step time: MFU doubles; the add kernel runs in 2 ms instead of 4."""
    from tb_plugin_advisor.analysis.diff import diff_reports
    from tb_plugin_advisor.views.diff_render import render_html as diff_html
    from tb_plugin_advisor.views.diff_render import render_markdown as diff_md
    from tb_plugin_advisor.views.diff_render import render_text as diff_text

    def report(run, step_ms, add_us):
        trace = torch_trace(step_ms=step_ms, add_us=add_us)
        profile = read_kineto_bytes(trace, source=f"{run}.pt.trace.json", host="h")
        return build_report(RunProfiles(run=run, profiles=[profile])).to_json()

    base, cand = report("a", STEP_MS, 4000), report("b", STEP_MS // 2, 2000)
    diff = diff_reports(base, cand)
    ro = diff["roofline"]
    assert ro["mfu_pct"]["baseline"] == pytest.approx(MFU, abs=0.01)
    fast = 100 * STEP_FLOPS / ((STEP_MS // 2 * MS - US) / 1e9) / A100_BF16
    assert ro["mfu_pct"]["candidate"] == pytest.approx(fast, abs=0.01)
    (add,) = [o for o in ro["ops"] if o["name"] == "aten::add"]
    assert add["roof_pct"]["candidate"] == pytest.approx(2 * add["roof_pct"]["baseline"], abs=0.02)
    assert ro["ops"][0]["name"] == "aten::add"  # the largest move first
    assert f"MFU rose: {base['roofline']['mfu_pct']:.1f} % \u2192 {fast:.1f} % of the device's peak." in diff[
        "summary"]
    assert "Roofline and MFU" in diff_text(diff) and "Roofline and MFU" in diff_md(diff)
    assert "Roofline and MFU" in diff_html(diff)
    same = diff_reports(base, report("a2", STEP_MS, 4000))
    assert "MFU rose" not in same["summary"] and "MFU fell" not in same["summary"]


def test_no_flops_no_diff_section():
    from tb_plugin_advisor.analysis.diff_roofline import roofline_diff

    assert roofline_diff({"roofline": {"ops_with_flops": 0}}, {}) == {}


def test_the_contract_document_names_every_roofline_key():
    """docs/deep-views.md is the contract: every key the report emits is in its roofline table."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[1] / "docs" / "deep-views.md").read_text()
    table = doc[doc.index("## `roofline`"):]
    r = report_of("h0")["roofline"]
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", table, flags=re.M))
    assert set(r) <= documented and documented - set(r) == {"per_host"}
    for key in r["ops"][0]:
        assert f"`{key}`" in table, key
    merged = report_of("h0", "h1")["roofline"]
    assert set(merged) <= documented


def test_tpu_report_and_exports_carry_the_xla_roofline():
    from test_roofline import xla_profile

    from tb_plugin_advisor.readers.xplane import read_xplane_bytes

    profile = read_xplane_bytes(xla_profile("tpu"), source="synthetic", host="tpu-host")
    report = build_report(RunProfiles(run="jax_tpu", profiles=[profile])).to_json()
    r = report["roofline"]
    assert r["accelerator"]["name"] == "Google TPU v4"
    assert r["ops"][0]["source"] == "profile (XLA cost analysis)"
    assert "fusion.1" in render_text(report) and "Google TPU v4 bf16 peak" in render_markdown(report)


def test_exports_mark_upper_bounds():
    from synth_kineto import BASE_NS, KinetoTrace

    t = KinetoTrace()
    s = BASE_NS + 1_000_000_000
    t.step(1, s, 10 * MS)
    t.op("aten::conv2d", s + MS, 100 * US, ["float", "float"], [[8, 64, 56, 56], [64, 64, 3, 3]])
    t.launch("implicit_convolve_sgemm", s + MS + 10 * US, 10 * US, s + 2 * MS, 2 * MS)
    profile = read_kineto_bytes(t.to_bytes(), source="conv.pt.trace.json", host="h")
    report = build_report(RunProfiles(run="conv", profiles=[profile])).to_json()
    text = render_text(report)
    assert "MFU at most" in text and "≤ " in text
