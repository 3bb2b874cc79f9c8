"""The HTTP API against a real TensorBoard subprocess on 127.0.0.1 (one server for the module)."""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path

import pytest
from fixtures_server import start_tensorboard
from paths import ROOT
from synth import XSpaceBuilder

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000
ODD_NAMES = ["with space", "ünïcödé 日本", "<img src=x onerror=alert(1)>"]


def write_profile(path: Path, steps: int = 6) -> None:
    """A small but complete profile: host steps with _r=1 and a GPU with kernels."""
    b = XSpaceBuilder(hostnames=[path.name.split(".")[0]])
    python = b.plane("/host:CPU").line("python", id=1)
    gpu = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    for i in range(steps):
        start = T0 + i * 50 * MS
        python.event("train", start, 45 * MS, stats={"step_num": i, "_r": 1})
        gpu.kernel("ampere_sgemm_128x64_tn", start + 5 * MS, 30 * MS, tf_op="model/dense/MatMul:MatMul")
    b.write(path)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("api") / "logs"
    write_profile(root / "plugins/profile/2024_01_01_00_00_00/host0.xplane.pb")  # root session, no events
    write_profile(root / "train/plugins/profile/2024_02_02_00_00_00/host0.xplane.pb")
    (root / "train/events.out.tfevents.1.h.v2").write_bytes(b"")
    multi = root / "multi/plugins/profile/2024_03_03_00_00_00"
    write_profile(multi / "worker-0.xplane.pb")
    write_profile(multi / "worker-1.xplane.pb")
    for name in ODD_NAMES:
        write_profile(root / name / "plugins/profile/s1/host0.xplane.pb")
    corrupt = root / "corrupt/plugins/profile/s1/host0.xplane.pb"
    corrupt.parent.mkdir(parents=True)
    corrupt.write_bytes(b"\xff\xfe\xfd this is not an XSpace")
    legacy = root / "legacy/plugins/profile/2019_01_01/10.0.0.1.overview_page.pb"
    legacy.parent.mkdir(parents=True)
    legacy.write_bytes(b"o" * 10)
    return root


@pytest.fixture(scope="module")
def tb(logdir: Path):
    with start_tensorboard(logdir, "--reload_interval=1", "--advisor_reload_interval=1") as server:
        yield server


def poll(tb, route: str, timeout_s: float = 120, **params):
    """GET a plugin route until it stops answering 202; returns (status, body)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status, body = tb.plugin(route, **params)
        if status != 202:
            return status, body
        assert body["status"] == "running"
        assert time.monotonic() < deadline, f"{route} {params} still running after {timeout_s} s"
        time.sleep(0.25)


def run_names(tb):
    status, body = tb.plugin("runs")
    assert status == 200
    return [r["run"] for r in body["runs"]]


EXPECTED_RUNS = [
    "ünïcödé 日本/s1",
    "with space/s1",
    "train/2024_02_02_00_00_00",
    "multi/2024_03_03_00_00_00",
    "legacy/2019_01_01",
    "corrupt/s1",
    "<img src=x onerror=alert(1)>/s1",
    "2024_01_01_00_00_00",
]


def test_plugins_listing_shows_the_advisor_tab(tb):
    status, listing = tb.get_json("/data/plugins_listing")
    assert status == 200
    advisor = listing["advisor"]
    assert advisor["enabled"] is True and advisor["tab_name"] == "Advisor"
    assert advisor["loading_mechanism"] == {"type": "IFRAME", "module_path": "/data/plugin/advisor/index.js"}


def test_runs_lists_every_session_with_hosts_and_format(tb):
    status, body = tb.plugin("runs")
    assert status == 200
    runs = {r["run"]: r for r in body["runs"]}
    assert [r["run"] for r in body["runs"]] == EXPECTED_RUNS
    assert runs["multi/2024_03_03_00_00_00"]["hosts"] == ["worker-0", "worker-1"]
    assert runs["legacy/2019_01_01"]["format"] == "legacy"
    assert runs["corrupt/s1"]["format"] == "xplane"
    size = (Path(tb.logdir) / "train/plugins/profile/2024_02_02_00_00_00/host0.xplane.pb").stat().st_size
    assert runs["train/2024_02_02_00_00_00"]["size_bytes"] == size


def test_json_headers(tb):
    reply = tb.get("/data/plugin/advisor/runs")
    assert reply.headers["Content-Type"] == "application/json"
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    reply = tb.get("/data/plugin/advisor/report?run=nope")
    assert reply.status == 404 and reply.headers["Content-Type"] == "application/json"


@pytest.mark.parametrize("name", ODD_NAMES)
def test_odd_run_names_round_trip(tb, name):
    assert f"{name}/s1" in run_names(tb)
    status, body = poll(tb, "report", run=f"{name}/s1")
    assert status == 200 and body["run"] == f"{name}/s1", body
    status, body = tb.plugin("report", run=f"{name}/s1", host="nohost")
    assert status == 404 and "nohost" in body["error"]


@pytest.mark.parametrize(
    "run",
    ["../../etc/passwd", "/etc/passwd", "train/../../../etc/passwd", "train",
     "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "train/2024_02_02_00_00_00/../2024_02_02_00_00_00", "x" * 5000],
)  # fmt: skip
def test_unknown_or_traversal_runs_are_404_json(tb, run):
    status, body = tb.plugin("report", run=run)
    expected = 400 if len(run) > 4096 else 404
    assert status == expected and set(body) == {"error"}, body
    status, body = tb.plugin("diff", baseline=run, candidate="train/2024_02_02_00_00_00")
    assert status == expected and set(body) == {"error"}


def test_missing_and_repeated_parameters_are_400_json(tb):
    for path in ["report", "report?run=", "diff", "diff?baseline=train%2F2024_02_02_00_00_00",
                 "report?run=a&run=b"]:  # fmt: skip
        status, body = tb.get_json(f"/data/plugin/advisor/{path}")
        assert status == 400 and body["error"], (path, body)
    status, body = tb.get_json("/data/plugin/advisor/report")
    assert body == {"error": "missing query parameter 'run'"}


def test_report_for_a_run_and_for_one_host(tb):
    status, body = poll(tb, "report", run="train/2024_02_02_00_00_00")
    assert status == 200, body
    assert body["schema"] == "tb-advisor/report/1"
    assert body["run"] == "train/2024_02_02_00_00_00" and body["hosts"] == ["host0"]
    assert body["steps"]["count"] >= 1
    status, body = poll(tb, "report", run="multi/2024_03_03_00_00_00")
    assert status == 200 and body["hosts"] == ["worker-0", "worker-1"]
    status, body = poll(tb, "report", run="multi/2024_03_03_00_00_00", host="worker-1")
    assert status == 200 and body["hosts"] == ["worker-1"]
    # Finished analyses come from the cache: the same bytes, at once.
    started = time.monotonic()
    again = tb.get("/data/plugin/advisor/report?run=multi%2F2024_03_03_00_00_00&host=worker-1")
    assert again.status == 200 and again.json() == body
    assert time.monotonic() - started < 1.0


def test_diff_of_two_runs(tb):
    status, body = poll(tb, "diff", baseline="train/2024_02_02_00_00_00", candidate="2024_01_01_00_00_00")
    assert status == 200, body
    assert body["schema"] == "tb-advisor/diff/1"
    assert body["baseline"] == "train/2024_02_02_00_00_00" and body["candidate"] == "2024_01_01_00_00_00"
    status, body = poll(
        tb, "diff", baseline="multi/2024_03_03_00_00_00", candidate="multi/2024_03_03_00_00_00",
        baseline_host="worker-0", candidate_host="worker-1",
    )  # fmt: skip
    assert status == 200 and body["step_time"]["significant"] is False
    status, body = tb.plugin("diff", baseline="train/2024_02_02_00_00_00", candidate="2024_01_01_00_00_00",
                             candidate_host="nope")  # fmt: skip
    assert status == 404 and "nope" in body["error"]


def test_corrupt_profile_is_422_and_tensorboard_keeps_serving(tb):
    status, body = poll(tb, "report", run="corrupt/s1")
    assert status == 422
    assert "corrupt/s1" in body["error"] and "host0.xplane.pb" in body["error"]
    assert "Traceback" not in body["error"]
    status, body = poll(tb, "diff", baseline="corrupt/s1", candidate="train/2024_02_02_00_00_00")
    assert status == 422
    assert tb.get("/data/plugins_listing").status == 200
    assert tb.plugin("runs")[0] == 200


def test_legacy_run_is_422_with_the_reason(tb):
    status, body = tb.plugin("report", run="legacy/2019_01_01")
    assert status == 422 and "older-format" in body["error"] and "xplane.pb" in body["error"]


def test_doctor_route(tb):
    status, body = poll(tb, "doctor")
    assert status == 200 and body["schema"] == "tb-advisor/doctor/1"
    sessions = {s["run"]: s for s in body["sessions"]}
    assert set(sessions) == set(EXPECTED_RUNS)
    assert sessions["corrupt/s1"]["findings"] == ["corrupt"]
    assert sessions["legacy/2019_01_01"]["findings"] == ["legacy_format"]
    assert sessions["train/2024_02_02_00_00_00"]["problems"] == []
    assert body["ok"] is False


def test_static_files_by_exact_name_only(tb):
    static = ROOT / "tb_plugin_advisor" / "static" / "index.js"
    reply = tb.get("/data/plugin/advisor/index.js")
    assert reply.status == 200 and reply.body == static.read_bytes()
    assert reply.headers["Content-Type"].startswith("text/javascript")
    for path in ["/data/plugin/advisor/nope.js", "/data/plugin/advisor/static/index.js",
                 "/data/plugin/advisor/..%2f..%2fplugin.py", "/data/plugin/advisor/%2e%2e/api.py",
                 "/data/plugin/advisor/x/../../../../etc/passwd"]:  # fmt: skip
        reply = tb.get(path)
        assert reply.status == 404, path
        assert b"import" not in reply.body and b"root:" not in reply.body


def test_markers_make_the_root_run_visible_in_tensorboards_run_list(tb, logdir):
    # The logdir had no events file at its root; the plugin wrote a marker so TensorBoard lists it.
    markers = list(logdir.glob("events.out.tfevents.*.profile-empty"))
    assert len(markers) == 1
    assert tb.wait_for(lambda: "." in tb.get_json("/data/runs")[1], timeout_s=30)
    for name in ["multi", "corrupt", "legacy", *ODD_NAMES]:
        assert list((logdir / name).glob("events.out.tfevents.*.profile-empty")), name
    assert not list((logdir / "train").glob("*.profile-empty"))  # had an events file already
    # Nothing else was written by the Advisor: every file is a profile, an events file, or a marker.
    for path in logdir.rglob("*"):
        if path.is_file():
            assert path.name.endswith((".xplane.pb", ".overview_page.pb", ".v2", ".profile-empty")), path


def test_new_session_appears_while_running(tb, logdir):
    write_profile(logdir / "later/plugins/profile/2030_01_01_00_00_00/host0.xplane.pb")
    # Asking for it finds it at once (on-demand rescan) or after one refresh cycle.
    tb.wait_for(lambda: tb.plugin("report", run="later/2030_01_01_00_00_00")[0] != 404, timeout_s=30)
    assert "later/2030_01_01_00_00_00" in run_names(tb)


@pytest.fixture(scope="module")
def quiet(tmp_path_factory):
    """A second server: markers off, and no waiting for analyses (every first request answers 202)."""
    root = tmp_path_factory.mktemp("quiet") / "logs"
    write_profile(root / "plugins/profile/s1/host0.xplane.pb")
    before = sorted(root.rglob("*"))
    flags = ("--reload_interval=1", "--advisor_write_markers=false", "--advisor_wait=0")
    with start_tensorboard(root, *flags) as tb:
        yield tb, root, before


def test_markers_flag_off_writes_nothing(quiet):
    server, root, before = quiet
    assert [r["run"] for r in server.plugin("runs")[1]["runs"]] == ["s1"]
    time.sleep(2.5)  # two reload cycles of TensorBoard
    assert server.get_json("/data/runs") == (200, [])  # without the marker TensorBoard does not list it
    assert sorted(root.rglob("*")) == before


def assert_progress(progress: dict, size: int) -> None:
    """The 202 answer's progress: a known stage, bytes within the run's size, a sane elapsed time."""
    assert progress["stage"] in ("queued", "starting", "reading", "analysing", "done"), progress
    assert progress["total_bytes"] in (0, size), progress
    assert 0 <= progress["done_bytes"] <= size and 0 <= progress["elapsed_s"] < 600, progress


def test_slow_analysis_answers_202_then_result(quiet):
    server, _root, _before = quiet
    size = (_root / "plugins/profile/s1/host0.xplane.pb").stat().st_size
    status, body = server.plugin("report", run="s1")
    assert status == 202 and {k: body[k] for k in ("status", "run")} == {"status": "running", "run": "s1"}
    assert_progress(body["progress"], size)
    status, body = poll(server, "report", run="s1")
    assert status == 200 and body["run"] == "s1"
    status, body = server.plugin("diff", baseline="s1", candidate="s1", candidate_host="host0")
    assert status == 202 and {k: body[k] for k in ("status", "baseline", "candidate")} == {
        "status": "running", "baseline": "s1", "candidate": "s1"}
    # The baseline's report is done (read in full); the candidate's (one host) shows its own progress.
    assert body["progress"]["baseline"]["done_bytes"] == size
    assert body["progress"]["baseline"]["stage"] == "done"
    assert_progress(body["progress"]["candidate"], size)
    assert poll(server, "diff", baseline="s1", candidate="s1", candidate_host="host0")[0] == 200
    status, body = server.plugin("doctor")
    assert status == 202 and body == {"status": "running"}
    status, body = poll(server, "doctor")
    assert status == 200 and [s["run"] for s in body["sessions"]] == ["s1"]


def test_query_encoding_of_run_names(tb):
    """Browsers encode '+' and spaces differently; both forms reach the same run."""
    name = urllib.parse.quote("with space/s1")
    reply = tb.get(f"/data/plugin/advisor/report?run={name}&host=nohost")
    assert reply.status == 404 and b"nohost" in reply.body
    reply = tb.get("/data/plugin/advisor/report?run=with+space%2Fs1&host=nohost")
    assert reply.status == 404 and b"nohost" in reply.body
