"""The per-host part of a diff: matched hosts, their deltas, and stragglers that appear or go away."""

from __future__ import annotations

import json

import pytest
from pod_synth import SESSION, even_pod, write_pod

from tb_plugin_advisor.views.cli.main import main as cli_main


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("diff-hosts")
    write_pod(root, "before", even_pod(3, slow=["worker0"]))
    write_pod(root, "after", even_pod(3, slow=["worker2"]))
    return root


def test_diff_matches_hosts_and_names_new_and_resolved_stragglers(logdir, capsys):
    args = [
        "diff",
        str(logdir),
        f"before/{SESSION}",
        f"after/{SESSION}",
        "--format",
        "json",
        "--workers",
        "2",
    ]
    assert cli_main(args) == 0
    part = json.loads(capsys.readouterr().out)["per_host"]
    rows = {r["host"]: r for r in part["hosts"]}
    assert set(rows) == {"worker0", "worker1", "worker2"}
    assert abs(rows["worker2"]["delta_pct"] - 30.0) <= 0.5  # 100 → 130 ms
    assert abs(rows["worker0"]["delta_pct"] - (100 / 130 - 1) * 100) <= 0.5  # 130 → 100 ms
    assert abs(rows["worker1"]["delta_pct"]) <= 0.5
    assert rows["worker2"]["candidate_straggler"] and not rows["worker2"]["baseline_straggler"]
    assert part["stragglers"]["new"] == ["worker2"] and part["stragglers"]["resolved"] == ["worker0"]


def test_diff_text_and_markdown_show_the_per_host_table(logdir, capsys):
    base = ["diff", str(logdir), f"before/{SESSION}", f"after/{SESSION}"]
    assert cli_main(base + ["--format", "text"]) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if x.strip().startswith("worker2"))
    assert "+30.0 %" in line and "new straggler" in line
    assert "new stragglers: worker2" in text and "no longer straggling: worker0" in text
    assert cli_main(base + ["--format", "md"]) == 0
    assert "## Per host" in capsys.readouterr().out


def test_single_host_diffs_have_no_per_host_part(tmp_path, capsys):
    write_pod(tmp_path, "a", {"only": (100, 10)})
    write_pod(tmp_path, "b", {"only": (110, 10)})
    assert cli_main(["diff", str(tmp_path), f"a/{SESSION}", f"b/{SESSION}", "--format", "json"]) == 0
    assert "per_host" not in json.loads(capsys.readouterr().out)
