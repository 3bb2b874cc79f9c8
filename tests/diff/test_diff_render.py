"""The diff views on hand-built diffs: escaping, name shortening, what is shown and what is left out."""

from __future__ import annotations

import html
import json
import re

import pytest
from html_pages import outside_scripts
from test_diff_reports import DEVICE, INPUT_HIGH, make_report, steps

from tb_plugin_advisor.analysis.classify.short_names import short_name
from tb_plugin_advisor.diff import rules
from tb_plugin_advisor.diff.compare import diff_reports
from tb_plugin_advisor.views.export import diff as view

KERNEL = "Eigen::internal::EigenMetaKernel<Eigen::TensorEvaluator<Eigen::half>, long>"
EIGEN = f"void {KERNEL}(Eigen::TensorEvaluator<Eigen::TensorAssignOp<Eigen::half>, Eigen::GpuDevice>, long)"


def _op(name, ms):
    return {"name": name, "category": "device_compute", "time_ms": ms, "count": 1.0}


def _diff(base_ops=(), cand_ops=(), cpu=False):
    precision = None if cpu else {"fp32": 100.0}
    base = make_report("a|b", steps(8, wobble=1.0, input=40.0, device_compute=60.0), INPUT_HIGH,
                       precision_pct=precision, ops=list(base_ops))  # fmt: skip
    cand = make_report("<c>", steps(8, wobble=1.0, input=2.0, device_compute=60.0), DEVICE,
                       precision_pct=precision, ops=list(cand_ops))  # fmt: skip
    if cpu:
        for r in (base, cand):
            r["precision_pct"] = {"unknown": 100.0}
            r["tensor_cores"]["device_time_pct"] = 0.0
    return diff_reports(base, cand)


def test_markdown_table_survives_a_pipe_in_an_op_name():
    md = view.render(
        _diff([_op("scope/a|b/MatMul:MatMul", 5.0)], [_op("scope/a|b/MatMul:MatMul", 7.0)]), "md"
    )
    row = next(line for line in md.splitlines() if "MatMul" in line and line.startswith("|"))
    assert row.count(" | ") == 4  # five cells: the name's pipe is escaped
    assert "scope/a\\|b/MatMul:MatMul" in row
    assert "# Profile diff: a\\|b \\(host host0\\) \u2192 &lt;c&gt; \\(host host0\\)" in md


def test_html_is_self_contained_and_escapes_everything():
    full = view.render(_diff([_op("<script>alert(1)</script>", 5.0)], []), "html")
    page = outside_scripts(full)
    assert "<script" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in full and "default-src 'none'" in full
    assert "<link" not in page and "src=" not in page


def test_a_short_name_drops_the_argument_list_and_elides_the_middle():
    short = short_name(EIGEN)
    assert short == "Eigen::internal::EigenMetaKernel"
    long_name = "x" * 300
    elided = short_name(long_name, limit=50)
    assert len(elided) == 50 and "\u2026" in elided
    assert short_name("jit(train)/dot_general") == "jit(train)/dot_general"  # not C++: kept


def test_long_op_names_are_cut_between_parts_never_mid_word():
    name = ("StatefulPartitionedCall/gradient_tape/sequential_1/conv2d_1_2/convolution/"
            "Conv2DBackpropFilter:Conv2DBackpropFilter")
    short = short_name(name, limit=80)
    assert short == "StatefulPartitionedCall/\u2026/convolution/Conv2DBackpropFilter:Conv2DBackpropFilter"
    assert len(short) <= 80
    assert short_name(name, limit=50) == "StatefulPartitionedCall/\u2026:Conv2DBackpropFilter"
    for limit in range(20, len(name)):
        cut = short_name(name, limit)
        assert len(cut) <= limit
        words = set(re.split(r"[/:\u2026]", cut)) - {""}
        assert words <= set(re.split(r"[/:]", name)) or "\u2026" in cut and len(words) <= 2, (limit, cut)


def test_text_tables_use_short_names_and_html_full_ones():
    diff = _diff([_op(EIGEN, 5.0)], [_op(EIGEN, 9.0)])
    assert "Eigen::internal::EigenMetaKernel +4.00 ms" in diff["summary"]  # its short name, not its signature
    assert "(Eigen::TensorEvaluator" not in view.render(diff, "text")
    assert "(Eigen::TensorEvaluator" in view.render(diff, "html")


@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_cpu_only_runs_show_no_precision_or_tensor_core_sections(fmt):
    out = view.render(_diff(cpu=True), fmt)
    out = outside_scripts(out) if fmt == "html" else out
    assert "Precision (% of compute time)" not in out
    assert "Tensor Cores" not in out


def test_uncertain_rows_are_marked_with_the_reason():
    full = [_op(f"model/op{i}/Add:AddV2", 1.0 + i / 1000) for i in range(rules.REPORT_LIST_LIMIT)]
    diff = _diff(full, full[:-1] + [_op("model/extra/Mul:Mul", 30.0)])
    text = view.render(diff, "text", top=1)
    assert "new?" in text and view.UNCERTAIN_NOTE in text
    assert html.escape(view.UNCERTAIN_NOTE) in view.render(diff, "html")


def test_json_view_round_trips():
    diff = _diff([_op("a", 1.0)], [_op("a", 2.0)])
    assert json.loads(view.render(diff, "json")) == json.loads(json.dumps(diff))


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="choose one of text, md, json, html"):
        view.render(_diff(), "pdf")


def test_no_internal_ids_in_what_people_read():
    """Step-source ids and the name-matching jargon stay in JSON; text, md and html use words."""
    from tb_plugin_advisor.analysis.step_time.steps import STEP_SOURCE_WORDS
    from tb_plugin_advisor.report.document import read_report
    from tb_plugin_advisor.views.export.report_lines import steps_line

    for source, words in STEP_SOURCE_WORDS.items():
        steps_json = {"count": 3, "source": source, "mean_ms": 1, "median_ms": 1, "p90_ms": 1}
        line = steps_line(read_report({"steps": steps_json}))
        assert words in line and f"({source})" not in line
    diff = _diff([_op("conv/Conv2D", 5.0)], [_op("conv/Conv2D", 7.0)])
    diff["ops"][0].update(match="normalised", instances={"baseline": 2, "candidate": 3})
    for fmt in ("text", "md", "html"):
        page = view.render(diff, fmt)
        assert "merged]" not in page and "\u00d7 /" not in page, fmt
    assert "(2 in the baseline, 3 in the candidate, compared as one op)" in view.render(diff, "text")


@pytest.mark.parametrize("fmt", ["text", "md", "html"])
def test_verdicts_quote_each_runs_sentence_with_one_rounding(fmt):
    """The compare view said 'input (input-bound high, 34.6 % input) — Input-bound: 35 % …': one
    quantity, two roundings, and a raw id. Each side now shows its report's own sentence."""
    diff = _diff()
    out = view.render(diff, fmt)
    for side in ("baseline", "candidate"):
        summary = diff["verdict"][side]["summary"]
        assert (html.escape(summary) if fmt == "html" else summary) in out
    assert "input-bound high" not in out and "% input)" not in out


def test_the_advice_table_says_a_dash_where_a_rule_was_not_acted_on_and_who_shares_a_saving():
    from tb_plugin_advisor.views.export.diff_rows import outcome_rows

    rows = outcome_rows({"recommendation_outcomes": [
        {"id": "input.prefetch", "acted_on": True, "predicted_ms_per_step": [17.2, 34.3],
         "realized_ms_per_step": 163.0, "target_category": "input", "realized_category_ms_per_step": 150.0,
         "verdict": "within", "together_with": ["input.cache"]},
        {"id": "precision.mixed", "acted_on": False, "predicted_ms_per_step": [10.0, 20.0],
         "realized_ms_per_step": 163.0, "target_category": "device_compute",
         "realized_category_ms_per_step": 0.5, "verdict": None, "together_with": []},
    ]})
    assert rows[0][3] == "+163 (shared with input.cache)"
    assert rows[1][1:] == ["no", "10–20", "–", "–", ""]  # not the step's whole +163
