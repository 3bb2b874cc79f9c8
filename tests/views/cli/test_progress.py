"""The CLI's progress bar: drawn on a terminal only, from real reads of the demo's profiles."""

from __future__ import annotations

import io
import json
from pathlib import Path

from paths import SAMPLE_LOGDIR

from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.runs import find_run, load_run
from tb_plugin_advisor.views.cli.main import main
from tb_plugin_advisor.views.cli.progress import BAR_CELLS, ProgressBar

DEMO = SAMPLE_LOGDIR


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_load_run_reports_bytes_up_to_the_runs_size():
    session = find_run(scan_logdir(str(DEMO)), "run1_naive")
    seen = []
    load_run(session, on_progress=lambda done, total: seen.append((done, total)))
    assert seen, "no progress reported"
    totals = {t for _, t in seen}
    assert totals == {session.size_bytes}
    dones = [d for d, _ in seen]
    assert dones == sorted(dones) and dones[-1] == session.size_bytes and len(dones) > 1


def test_bar_draws_stage_bytes_and_time_on_a_terminal_and_erases_itself():
    clock = iter([0.0, 0.5, 1.0, 2.5]).__next__
    term = Terminal()
    bar = ProgressBar(term, clock=clock)
    bar.callback("reading run1")(1_000_000, 4_000_000)
    text = term.getvalue()
    assert text.startswith("\rreading run1 [") and "25 % 1.0/4.0 MB 0.5 s" in text
    assert text.count("#") == BAR_CELLS // 4
    bar.callback("reading run1")(4_000_000, 4_000_000)
    assert "100 % 4.0/4.0 MB 1.0 s" in term.getvalue()
    bar.close()
    assert term.getvalue().endswith("\r")


def test_nothing_is_drawn_when_stderr_is_not_a_terminal():
    pipe = io.StringIO()
    bar = ProgressBar(pipe)
    bar.callback("reading")(1, 2)
    bar.close()
    assert pipe.getvalue() == ""


def test_json_output_stays_clean(capsys):
    assert main(["report", str(DEMO), "--run", "run2", "--format", "json"]) == 0
    out = capsys.readouterr()
    json.loads(out.out)  # stdout is exactly the JSON
    assert "[#" not in out.err and "MB" not in out.err


def test_progress_board_reads_what_a_worker_wrote(tmp_path):
    """Worker and server share only a file: stage, bytes and elapsed time come back through it."""
    import pickle

    from tb_plugin_advisor.views.server.progress_board import ProgressBoard, ProgressWriter

    clock = iter([0.0, 2.5, 3.0, 5.0]).__next__
    board = ProgressBoard()
    assert board.to_json("k")["stage"] == "queued"
    entry = board.start("k")
    entry.clock, entry.started = clock, clock()
    assert board.to_json("k") == {"stage": "starting", "done_bytes": 0, "total_bytes": 0, "elapsed_s": 2.5}
    writer = pickle.loads(pickle.dumps(ProgressWriter(entry.path)))  # what travels to the worker
    writer(400, 1000)
    reading = {"stage": "reading", "done_bytes": 400, "total_bytes": 1000, "elapsed_s": 3.0}
    assert board.to_json("k") == reading
    writer(1000, 1000)  # the last call is always written, however soon after the previous one
    assert board.to_json("k")["stage"] == "analysing"
    path = Path(entry.path)
    board.finish("k")
    assert not path.exists() and board.to_json("k")["stage"] == "queued"
