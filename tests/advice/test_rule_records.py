"""A rule is one record (advice/rule.py), registered once (advice/registry.py): its id is written in
one place in the whole package, and every part of the record is one the rest of the Advisor can use —
span kinds that exist, a breakdown category and an outcome signal the diff knows how to read."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest
from paths import ROOT

from tb_plugin_advisor.advice.facts import SEVERITIES, Facts
from tb_plugin_advisor.advice.registry import EVERY_RULE, FINDINGS, RECOMMENDATIONS, rule_of
from tb_plugin_advisor.advice.rule import CATEGORY_FELL, SHARE_ROSE, SIGNALS, Fired, Rule, Snippets
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.evidence.span import KINDS
from tb_plugin_advisor.analysis.step_time.categories import CATEGORIES
from tb_plugin_advisor.diff.outcomes import SIGNAL_TESTS, outcome_of

PACKAGE = ROOT / "tb_plugin_advisor"
IDS = [rule.id for rule in EVERY_RULE]


def _string_constants(root: Path) -> Counter:
    """How often each string literal is written in the Python source under `root`."""
    seen: Counter = Counter()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                seen[node.value] += 1
    return seen


def test_ids_are_unique_and_each_is_written_once_in_the_package():
    """No second table keyed by rule id (a gain, evidence, snippet or outcome table beside the
    records): the id's only literal is its record's."""
    assert len(IDS) == len(set(IDS))
    written = _string_constants(PACKAGE)
    assert {i: written[i] for i in IDS if written[i] != 1} == {}


def test_the_count_sees_a_second_table(tmp_path: Path):
    """The check above can fail: a table keyed by an id, in another module, adds a literal."""
    (tmp_path / "record.py").write_text('RULE = Rule(id="input.prefetch")\n')
    (tmp_path / "gains.py").write_text('GAINS = {"input.prefetch": estimate}\n')
    assert _string_constants(tmp_path)["input.prefetch"] == 2


def test_every_family_is_registered_and_every_finding_view_is_a_report_key():
    modules = {path.stem for path in (PACKAGE / "advice" / "rules").glob("*.py")}
    families = modules - {"__init__", "mixed_precision"}  # the one helper: precision.mixed's snippets
    registered = {rule.check.__module__.rsplit(".", 1)[-1] for rule in EVERY_RULE}
    assert registered == families
    assert set(FINDINGS) == {"kernel_stats", "memory", "collectives", "roofline"}


@pytest.mark.parametrize("rule", EVERY_RULE, ids=IDS)
def test_every_record_is_complete(rule: Rule):
    assert rule.id.count(".") == 1 and rule.title and rule.message, rule.id
    assert rule.evidence and set(rule.evidence) <= set(KINDS), rule.id
    assert all(text for text in rule.messages.values()), rule.id
    assert rule.outcome.signal in SIGNALS, rule.id
    assert rule.outcome.category is None or rule.outcome.category in CATEGORIES, rule.id
    if rule.outcome.signal in (CATEGORY_FELL, SHARE_ROSE):
        assert rule.outcome.category is not None, rule.id
    assert set(rule.outcome.precisions) <= set(PRECISIONS), rule.id
    assert bool(rule.outcome.precisions) == (rule.outcome.signal == SHARE_ROSE), rule.id


def test_the_diff_reads_every_signal_and_takes_it_from_the_record():
    assert set(SIGNAL_TESTS) == set(SIGNALS)
    for rule in RECOMMENDATIONS:
        assert outcome_of(rule.id) is rule.outcome
    assert outcome_of("no.such_rule").category is None and rule_of("no.such_rule") is None


def test_fired_fills_the_title_and_picks_the_message():
    rule = Rule("x.y", "About {subject}", "default words", check=lambda s: iter(()), gain=lambda s: None,
                evidence=("worst_step",), messages={"other": "other words"})
    assert rule.title_for(Fired("low", "e", subject="k")) == "About k"
    assert rule.message_for(Fired("low", "e")) == "default words"
    assert rule.message_for(Fired("low", "e", case="other")) == "other words"
    assert SEVERITIES[-1] == "low"


def test_snippets_shown_per_framework():
    both = Snippets(tf="tf code", jax="jax code", pytorch="torch code")
    assert both.shown("pytorch") == ("torch code", "", "PyTorch")
    assert both.shown("jax") == both.shown("unknown") == ("tf code", "jax code", "TF/Keras")
    assert Snippets(tf="tf code").shown("pytorch") == ("", "", "PyTorch")  # nothing rather than TF code
    assert Snippets(every="all").shown("pytorch")[:2] == ("all", "")


def test_a_device_dependent_snippet_is_chosen_from_the_facts():
    mixed = rule_of("precision.mixed")
    assert "float16" in mixed.snippets_for(Facts(compute_capability=(7, 0))).pytorch
    assert "bfloat16" in mixed.snippets_for(Facts(compute_capability=(9, 0))).pytorch
    assert mixed.snippets_for(Facts()).tf  # generation unknown: the generic snippets
