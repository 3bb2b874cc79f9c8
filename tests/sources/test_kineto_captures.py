"""Which PyTorch trace files are one capture: the ranks of one job (their traces overlap in time) and
not the separate runs of a script that wrote into one directory (readers/kineto/captures.py), on
captures made by real processes of this test session and on synthetic traces whose times are exact."""

from __future__ import annotations

import os
from pathlib import Path
from typing import List, Optional

import pytest
from synth_kineto import BASE_NS, training_trace

from tb_plugin_advisor.readers.kineto import captures as kineto_captures
from tb_plugin_advisor.readers.kineto.captures import (
    CAPTURE_SPANS,
    STARTS,
    StartCache,
    capture_label,
    group_captures,
)
from tb_plugin_advisor.readers.kineto.head import HEAD_BYTES, first_event_ns
from tb_plugin_advisor.sources.discovery import scan_logdir

S = 1_000_000_000  # ns
T0 = BASE_NS + 10 * S  # the first capture's first event


def _write(directory: Path, worker: str, start_ns: int, stamp_ns: int, gz: bool = False, **kw) -> Path:
    """A trace whose events start at start_ns, written by the handler at stamp_ns (its name's stamp)."""
    name = f"{worker}.{stamp_ns}.pt.trace.json{'.gz' if gz else ''}"
    return training_trace(steps=3, start_ns=start_ns, **kw).write(directory / name)


def _hosts(directory: Path) -> List[List[str]]:
    """Per capture listed for the directory, oldest first: its hosts."""
    scan = scan_logdir(str(directory))
    return [s.host_names for s in sorted(scan.sessions, key=lambda s: s.run)]


def test_runs_of_a_script_one_after_the_other_are_separate_captures(tmp_path):
    """`python train.py` three times: three pids, three traces that do not overlap in time. By name
    alone they were one capture of three hosts."""
    for i in range(3):
        start = T0 + i * 20 * S
        _write(tmp_path, f"host_{100 + i}", start, start + 2 * S)
    assert _hosts(tmp_path) == [["host_100"], ["host_101"], ["host_102"]]
    runs = sorted(s.run for s in scan_logdir(str(tmp_path)).sessions)
    assert runs == [capture_label(str(T0 + i * 20 * S + 2 * S)) for i in range(3)]  # each its own stamp


def test_ranks_whose_traces_overlap_are_one_capture_named_after_the_earliest_stamp(tmp_path):
    _write(tmp_path, "node1_7", T0 + 3_000_000, T0 + 2 * S + 40_000_000)  # skewed start, later write
    _write(tmp_path, "node0_7", T0, T0 + 2 * S)
    _write(tmp_path, "node0_8", T0 + 30 * S, T0 + 32 * S)  # the next job
    _write(tmp_path, "node1_8", T0 + 30 * S + 1_000_000, T0 + 32 * S + 5_000_000)
    assert _hosts(tmp_path) == [["node0_7", "node1_7"], ["node0_8", "node1_8"]]
    assert sorted(s.name for s in scan_logdir(str(tmp_path)).sessions) == [
        capture_label(str(T0 + 2 * S)), capture_label(str(T0 + 32 * S))]


def test_a_worker_never_has_two_files_in_one_capture(tmp_path):
    """Two captures of one process (schedule repeat=2) by the same worker name, even if a stamp
    came late enough to overlap the next start."""
    _write(tmp_path, "w", T0, T0 + 2 * S)
    _write(tmp_path, "w", T0 + S, T0 + 3 * S)
    assert _hosts(tmp_path) == [["w"], ["w"]]


def test_gzip_and_plain_traces_give_the_same_start(tmp_path):
    plain = _write(tmp_path, "a", T0 + 123_456, T0 + S)
    packed = _write(tmp_path, "b", T0 + 123_456, T0 + S, gz=True)
    assert first_event_ns(str(plain)) == first_event_ns(str(packed)) == T0 + 123_456
    old = training_trace(era="2021", steps=2, start_ns=T0).write(tmp_path / "c.1700000012000.pt.trace.json")
    assert first_event_ns(str(old)) == T0  # 2021: µs since the epoch, no base time


def _two_runs(directory: Path, second_start: int, second_stamp: int, **kw) -> List[List[str]]:
    """A first run [T0, T0 + 2 s], and a second of another pid with the given start and stamp."""
    _write(directory, "host_1", T0, T0 + 2 * S)
    _write(directory, "host_2", second_start, second_stamp, **kw)
    return _hosts(directory)


@pytest.mark.parametrize("before_stamp_h, separate", [(23, True), (25, False)])
def test_max_capture_s_a_start_too_long_before_its_stamp_is_not_believed(tmp_path, before_stamp_h, separate):
    """A start further back than max_capture_s is another clock's; the file then joins by name."""
    assert CAPTURE_SPANS["max_capture_s"] == 24 * 3600
    start = T0 + 10 * S
    hosts = _two_runs(tmp_path, start, start + before_stamp_h * 3600 * S)
    assert hosts == ([["host_1"], ["host_2"]] if separate else [["host_1", "host_2"]])


@pytest.mark.parametrize("after_stamp_s, separate", [(0.5, True), (2.0, False)])
def test_clock_slack_s_a_start_after_its_stamp(tmp_path, after_stamp_s, separate):
    assert CAPTURE_SPANS["clock_slack_s"] == 1.0
    start = T0 + 10 * S
    hosts = _two_runs(tmp_path, start, start - int(after_stamp_s * S))
    assert hosts == ([["host_1"], ["host_2"]] if separate else [["host_1", "host_2"]])


def test_a_file_whose_head_holds_no_event_joins_by_name(tmp_path):
    """Top-level fields longer than the head (or a file still being written): no start, the name rule."""
    devices = [{"id": i, "name": "x" * 1000} for i in range(HEAD_BYTES // 1000 + 1)]
    start = T0 + 20 * S
    assert _two_runs(tmp_path, start, start + 2 * S, devices=devices) == [["host_1", "host_2"]]
    late = next(tmp_path.glob("host_2.*"))
    assert first_event_ns(str(late)) is None
    assert first_event_ns(str(late), head_bytes=late.stat().st_size) == start  # the events are there
    cut = tmp_path / "cut"
    cut.mkdir()
    whole = _write(cut, "host_3", start, start + 2 * S)
    whole.write_bytes(whole.read_bytes()[:200])  # being written: a head with no whole event
    assert first_event_ns(str(whole)) is None


def test_without_starts_files_join_by_name_alone():
    """A remote logdir (discovery reads no file there) keeps the rule by name."""
    names = [f"host_{i}.{T0 + i * 20 * S}.pt.trace.json" for i in range(3)]
    assert [len(files) for _, files in group_captures(names)] == [3]
    starts = {name: T0 + i * 20 * S - S for i, name in enumerate(names)}
    assert [len(files) for _, files in group_captures(names, starts)] == [1, 1, 1]


def test_cache_entries_each_file_version_is_read_once(tmp_path):
    reads: List[str] = []

    def read(path: str) -> Optional[int]:
        reads.append(path)
        return 7

    cache = StartCache(2, read)
    assert cache.start("a", 10, 1) == 7 and cache.start("a", 10, 1) == 7 and reads == ["a"]
    cache.start("a", 11, 2)  # rewritten: read again
    cache.start("b", 10, 1)  # a third version: the least recently used one goes
    cache.start("a", 10, 1)
    assert reads == ["a", "a", "b", "a"]
    assert CAPTURE_SPANS["cache_entries"] == 16384


def test_a_rescan_reads_no_head_again(tmp_path):
    for i in range(3):
        _write(tmp_path, f"host_{i}", T0 + i * 20 * S, T0 + i * 20 * S + 2 * S)
    scan_logdir(str(tmp_path))
    before = STARTS.reads
    again = scan_logdir(str(tmp_path))
    assert STARTS.reads == before and len(again.sessions) == 3
    path = next(tmp_path.glob("host_1.*"))
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1))
    scan_logdir(str(tmp_path))
    assert STARTS.reads == before + 1  # only the file that changed


def test_group_captures_keeps_its_contract_for_names():
    """Labels in time order, files per worker, unstamped files last as `trace`."""
    captures = group_captures(["b.1700000001020.pt.trace.json", "a.1700000001000.pt.trace.json",
                               "w0.pt.trace.json", "notes.txt"])
    assert captures == [("2023_11_14_22_13_21.000", [("a", "a.1700000001000.pt.trace.json"),
                                                     ("b", "b.1700000001020.pt.trace.json")]),
                        (kineto_captures.UNSTAMPED_CAPTURE, [("w0", "w0.pt.trace.json")])]


# -- real processes of this session -------------------------------------------------------------------


def test_real_runs_one_process_each_are_one_capture_each(torch_processes):
    """The series: one `python` process per capture into one directory, the handler's own worker
    names (`<host>_<pid>`). Each process is one capture with one host, in the order they ran."""
    scan = scan_logdir(str(torch_processes.logdir))
    series = sorted((s for s in scan.sessions if s.run_dir_rel == "series"), key=lambda s: s.run)
    expected = [c["file"] for c in torch_processes.series_captures()]
    assert [[Path(h.path).name for h in s.hosts] for s in series] == [[f] for f in expected]


def test_real_ranks_of_a_job_are_one_capture(torch_processes):
    """Two data-parallel jobs of two ranks each (torch.distributed, gloo), one after the other into
    one directory: two captures of two hosts, each holding one job's ranks."""
    scan = scan_logdir(str(torch_processes.logdir))
    ranks = sorted((s for s in scan.sessions if s.run_dir_rel == "ranks"), key=lambda s: s.run)
    assert [sorted(Path(h.path).name for h in s.hosts) for s in ranks] == torch_processes.rank_jobs()

