"""Per-host parallelism: the same JSON sequential and pooled, memory-aware sizing, stragglers, errors."""

from __future__ import annotations

import json

import pytest
from pod_synth import SESSION, even_pod, write_pod

from tb_plugin_advisor.errors import AdvisorError
from tb_plugin_advisor.report import hostpool
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.runs import find_run, load_run
from tb_plugin_advisor.views.cli.main import main as cli_main

MB = 2**20


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("pod")
    write_pod(logdir, "job", even_pod(4, slow=["worker2"], input_heavy=["worker3"]))
    return logdir


def session_of(logdir, run="job"):
    run = f"{run}/{SESSION}"
    return find_run(scan_logdir(str(logdir)), run)


def test_pooled_and_sequential_reports_are_the_same_json(pod):
    session = session_of(pod)
    sequential = build_report(load_run(session)).to_json()
    one = hostpool.build_session_report(session, workers=1).to_json()
    pooled = hostpool.build_session_report(session, workers=2).to_json()
    assert json.dumps(pooled, sort_keys=True) == json.dumps(sequential, sort_keys=True)
    assert json.dumps(one, sort_keys=True) == json.dumps(sequential, sort_keys=True)


def test_progress_counts_bytes_over_all_hosts_in_process_and_from_a_pool(pod):
    """What the tab's progress bar shows: bytes grow to the run's size, one host after another or as
    pooled hosts finish."""
    session = session_of(pod)
    size = sum(f.size_bytes for f in session.hosts)
    for workers in (1, 2):
        seen: list = []
        record = seen.append
        hostpool.build_session_report(session, workers=workers, on_progress=lambda d, t, r=record: r((d, t)))
        assert {t for _, t in seen} == {size}, workers
        dones = [d for d, _ in seen]
        assert dones == sorted(dones) and dones[-1] == size and len(set(dones)) >= len(session.hosts), workers


def test_the_run_report_has_a_per_host_table_and_names_the_stragglers(pod):
    report = hostpool.build_session_report(session_of(pod), workers=2).to_json()
    table = {h["host"]: h for h in report["per_host"]}
    assert abs(table["worker0"]["step_time_ms"] - 100.0) <= 0.5
    assert abs(table["worker2"]["step_time_ms"] - 130.0) <= 0.5
    assert abs(table["worker0"]["input_pct"] - 10.0) <= 1.0  # 10 of 100 ms, ±1 point
    assert abs(table["worker3"]["input_pct"] - 40.0) <= 1.0
    assert 80.0 <= table["worker0"]["device_util_pct"] <= 91.0  # 90 ms of kernels in 100 ms
    assert {h for h, row in table.items() if row["straggler"]} == {"worker2", "worker3"}
    found = {(s["host"], s["metric"]): s for s in report["stragglers"]}
    assert set(found) == {("worker2", "step_time"), ("worker3", "input")}
    assert abs(found["worker2", "step_time"]["excess"] - 30.0) <= 0.5  # 130 vs median 100 ms
    assert abs(found["worker3", "input"]["excess"] - 30.0) <= 1.0  # 40 % vs median 10 %


def test_a_one_host_run_never_starts_a_pool(tmp_path, monkeypatch):
    write_pod(tmp_path, "solo", {"only": (100, 10)})

    def no_pool(*args, **kwargs):
        raise AssertionError("a one-host run started a process pool")

    monkeypatch.setattr(hostpool, "ProcessPoolExecutor", no_pool)
    report = hostpool.build_session_report(session_of(tmp_path, "solo"), workers=8).to_json()
    assert report["hosts"] == ["only"]


def test_pool_size_follows_cores_hosts_and_memory():
    sizes = [100 * MB] * 8
    per_host = hostpool.estimated_peak_bytes(100 * MB)
    assert hostpool.pool_size(sizes, cores=4, memory_bytes=None) == 4
    assert hostpool.pool_size(sizes[:2], cores=16, memory_bytes=None) == 2
    plenty = int(per_host * 8 / hostpool.RAM_SHARE) + 1
    assert hostpool.pool_size(sizes, cores=16, memory_bytes=plenty) == 8
    three = int(per_host * 3 / hostpool.RAM_SHARE) + 1
    assert hostpool.pool_size(sizes, cores=16, memory_bytes=three) == 3
    assert hostpool.pool_size(sizes, cores=16, memory_bytes=1) == 1  # never zero: one host always runs
    assert hostpool.pool_size([], cores=4, memory_bytes=None) == 0


def test_hosts_start_only_while_their_memory_estimate_fits(pod, monkeypatch):
    """With RAM for one host at a time the pool runs them one by one and still merges the same run."""
    session = session_of(pod)
    tasks = [hostpool.HostTask(f.host, f.path, f.size_bytes, session.format) for f in session.hosts]
    peaks = [hostpool.estimated_peak_bytes(t.size_bytes) for t in tasks]
    started, running, most = [], set(), [0]
    real_submit = hostpool.ProcessPoolExecutor.submit

    def counting_submit(self, fn, path, host, fmt):
        running.add(host)
        most[0] = max(most[0], len(running))
        started.append(host)
        future = real_submit(self, fn, path, host, fmt)
        future.add_done_callback(lambda _f: running.discard(host))
        return future

    monkeypatch.setattr(hostpool.ProcessPoolExecutor, "submit", counting_submit)
    memory = int(max(peaks) * 1.5 / hostpool.RAM_SHARE)  # room for one host, not two
    reports = hostpool._on_local_pool(tasks, size=2, memory=memory)
    assert [r.host for r in reports] == [t.host for t in tasks]
    assert sorted(started) == sorted(t.host for t in tasks)
    assert most[0] == 1


def test_an_unreadable_host_in_a_worker_is_a_clear_error_naming_the_file(tmp_path):
    session_dir = write_pod(tmp_path, "broken", even_pod(2))
    (session_dir / "worker1.xplane.pb").write_bytes(b"\x0a\xff\xff\xff")  # truncated
    with pytest.raises(AdvisorError, match=r"worker1\.xplane\.pb"):
        hostpool.build_session_report(session_of(tmp_path, "broken"), workers=2)


def test_unknown_host_is_a_clear_error(pod):
    with pytest.raises(AdvisorError, match="unknown host 'nope'.*worker0"):
        hostpool.build_session_report(session_of(pod), host="nope")


def test_cli_report_and_diff_are_the_same_with_any_worker_count(pod, tmp_path, capsys):
    outputs = {}
    for workers in ("1", "2"):
        out = tmp_path / f"r{workers}.json"
        assert cli_main(["report", str(pod), "--format", "json", "--workers", workers, "-o", str(out)]) == 0
        outputs[workers] = json.loads(out.read_text())
    assert outputs["1"] == outputs["2"]
    assert len(outputs["2"]["stragglers"]) == 2
    diffs = {}
    for workers in ("1", "2"):
        capsys.readouterr()
        args = [
            "diff",
            str(pod),
            f"job/{SESSION}",
            f"job/{SESSION}",
            "--format",
            "json",
            "--workers",
            workers,
        ]
        assert cli_main(args) == 0
        diffs[workers] = json.loads(capsys.readouterr().out)
    assert diffs["1"] == diffs["2"]
    assert cli_main(["report", str(pod), "--workers", "0"]) == 2
    assert "--workers must be at least 1" in capsys.readouterr().err


def test_text_markdown_and_html_show_the_per_host_table_and_stragglers(pod):
    from tb_plugin_advisor.views.export.render import render

    report = hostpool.build_session_report(session_of(pod), workers=1).to_json()
    text = render(report, "text")
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip().startswith("worker")}
    assert "STRAGGLER" in rows["worker2"] and "STRAGGLER" in rows["worker3"]
    assert "STRAGGLER" not in rows["worker0"]
    assert "130.00" in rows["worker2"]
    assert "worker2: step time +30.0% vs the median host" in text
    assert "worker3: input wait +30.0 points vs the median host" in text
    markdown = render(report, "md")
    assert "| worker2 | 130.00 |" in markdown and "**Stragglers**" in markdown
    page = render(report, "html")
    assert "<td>worker3</td>" in page and "<b>STRAGGLER</b>" in page


def _report_in_a_worker(logdir: str) -> str:
    session = session_of(logdir)
    return json.dumps(hostpool.build_session_report(session, workers=2).to_json(), sort_keys=True)


def test_the_pool_runs_inside_a_worker_of_another_process_pool(pod):
    """The server analyses reports in its own process pool; a run's host pool must start inside it."""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as outer:
        nested = outer.submit(_report_in_a_worker, str(pod)).result(timeout=300)
    assert nested == _report_in_a_worker(str(pod))
