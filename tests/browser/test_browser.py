"""End to end: a real TensorBoard, Debian's headless Chromium and the built Advisor tab.

TensorBoard is started the ways users start it: `python -m tensorboard.main` on 127.0.0.1 with and
without `--path_prefix`, and `tensorboard.notebook.start` (what `%tensorboard` runs) embedded in a
notebook-like page on another origin. The logdir holds real TensorFlow profiles (the `tf_profiles`
session fixture) plus a run whose directory name is markup. frontend/e2e/drive.mjs drives Chromium
through playwright-core from TensorBoard's own page into the Advisor's iframe and fails with a
message naming the step. Screenshots go to test-artifacts/screenshots/ (the README uses
advisor-report.png).

Needs: `npm ci` in frontend/ (playwright-core), Debian's `chromium` at /usr/bin/chromium (or
$TB_ADVISOR_CHROMIUM), and this package installed (`pip install -e .`) so TensorBoard loads the
`advisor` entry point.
"""

from __future__ import annotations

import contextlib
import http.server
import importlib.metadata
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, List

import pytest
from fixtures_server import TensorBoardServer, start_tensorboard
from paths import ROOT

REPO = ROOT
FRONTEND = REPO / "frontend"
DRIVER = FRONTEND / "e2e" / "drive.mjs"
SCREENSHOTS = REPO / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("TB_ADVISOR_CHROMIUM", "/usr/bin/chromium")
XSS_NAME = "<img src=x onerror=alert(1)>"
PREFIX = "/some/prefix"
RUN_SHOWN = '[data-testid="report-run"] .adv-name'  # where the report names its run
DIFF_TITLE = '[data-testid="diff-card"] h2'  # "baseline → candidate"
ANALYSIS_TIMEOUT_S = 300.0

pytestmark = pytest.mark.browser  # pytest.ini: -m "not browser" leaves these out


# ---------------------------------------------------------------------------------------------------
# What the browser tests need, checked once with instructions instead of obscure failures


@pytest.fixture(scope="session")
def browser_tools() -> str:
    node = shutil.which("node")
    problems = []
    if node is None:
        problems.append("`node` is not on PATH (install Node.js >= 20)")
    if not (FRONTEND / "node_modules" / "playwright-core" / "package.json").is_file():
        problems.append("playwright-core is missing: run `npm ci` in frontend/")
    if not os.access(CHROMIUM, os.X_OK):
        problems.append(f"no Chromium at {CHROMIUM}: `apt-get install chromium` (or set TB_ADVISOR_CHROMIUM)")
    plugins = {e.name for e in importlib.metadata.entry_points(group="tensorboard_plugins")}
    if "advisor" not in plugins:
        problems.append("TensorBoard cannot see the advisor plugin: run `pip install -e .` in the repository")
    if problems:
        pytest.fail("browser tests cannot run:\n- " + "\n- ".join(problems))
    return node


def drive(node: str, tmp_path: Path, name: str, url: str, steps: List[Dict[str, Any]], **extra: Any) -> Dict:
    """Run the Node driver on `steps`; fail the test with its message when a step fails."""
    spec = {"name": name, "url": url, "screenshots": str(SCREENSHOTS), "chromium": CHROMIUM, "steps": steps}
    spec.update(extra)
    spec_path = tmp_path / f"{name}.json"
    spec_path.write_text(json.dumps(spec, indent=1))
    proc = subprocess.run(
        [node, str(DRIVER), str(spec_path)], cwd=FRONTEND, capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0:
        out = f"{proc.stderr[-4000:]}\n--- driver stdout ---\n{proc.stdout[-2000:]}"
        pytest.fail(f"browser run '{name}' failed:\n{out}")
    return json.loads(proc.stdout)


def diff_summary_steps(summary: str) -> List[Dict[str, Any]]:
    """The diff's summary is shown one sentence per line, all of its words, nothing else."""
    sentences = re.split(r"(?<=[.!?])\s+(?=[A-Z])", summary.strip())
    line = '[data-testid="diff-summary"] [data-testid="diff-summary-line"]'
    return [
        {"do": "expectCount", "selector": line, "min": len(sentences), "max": len(sentences)},
        {"do": "expectExactText", "selector": line, "text": sentences[0]},
        {"do": "expectExactText", "testid": "diff-summary", "text": "".join(sentences)},
    ]


def step_result(summary: Dict, action: str, index: int = 0) -> Dict:
    return [s for s in summary["steps"] if s["do"] == action][index]


# ---------------------------------------------------------------------------------------------------
# Logdir and servers


def make_logdir(tf_profiles, dst: Path) -> SimpleNamespace:
    """A writable copy of the TF runs plus runs made from them: one whose directory name is an HTML
    tag, one with two hosts, and one whose profile is corrupt."""
    profiles = tf_profiles.copy_to(dst)
    session = profiles.session("loop_fixed")
    xss_session = profiles.logdir / XSS_NAME / "plugins" / "profile" / session
    xss_session.mkdir(parents=True)
    shutil.copy2(profiles.xplane("loop_fixed"), xss_session / profiles.xplane("loop_fixed").name)
    # Two workers in one session (multi-host layout): copies of the input-bound profile.
    bound_session = profiles.session("loop_input_bound")
    two_session = profiles.logdir / "two_workers" / "plugins" / "profile" / bound_session
    two_session.mkdir(parents=True)
    for worker in ("worker0", "worker1"):
        shutil.copy2(profiles.xplane("loop_input_bound"), two_session / f"{worker}.xplane.pb")
    # A profile that cannot be read: the tab must say so instead of showing a stale or blank report.
    corrupt_session = profiles.logdir / "corrupt" / "plugins" / "profile" / session
    corrupt_session.mkdir(parents=True)
    (corrupt_session / f"{profiles.host}.xplane.pb").write_bytes(b"\xff\xfe not an XSpace " * 8)
    return SimpleNamespace(
        logdir=profiles.logdir,
        corrupt=f"corrupt/{session}",
        two_workers=f"two_workers/{bound_session}",
        keras_fit=profiles.run_name("keras_fit"),
        input_bound=profiles.run_name("loop_input_bound"),
        fixed=profiles.run_name("loop_fixed"),
        xss=f"{XSS_NAME}/{session}",
        host=profiles.host,
    )


@pytest.fixture(scope="module")
def runs(tf_profiles, tmp_path_factory) -> SimpleNamespace:
    return make_logdir(tf_profiles, tmp_path_factory.mktemp("browser"))


@pytest.fixture(scope="module")
def tb(runs, browser_tools) -> TensorBoardServer:
    with start_tensorboard(runs.logdir) as server:
        yield server


def final_json(tb: TensorBoardServer, route: str, **params: str) -> Dict:
    """GET a report/diff, polling through 202 {"status": "running"} like the tab does."""
    deadline = time.monotonic() + ANALYSIS_TIMEOUT_S
    while True:
        status, body = tb.plugin(route, **params)
        if status != 202:
            assert status == 200, f"{route} {params} answered {status}: {body}"
            return body
        assert time.monotonic() < deadline, f"{route} {params} still running after {ANALYSIS_TIMEOUT_S} s"
        time.sleep(0.5)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------------------------------------------
# Plain HTTP: errors are 4xx JSON, run names are never paths


def test_routes_answer_json_and_refuse_paths(tb, runs):
    status, listing = tb.plugin("runs")
    assert status == 200
    names = {r["run"] for r in listing["runs"]}
    assert {runs.keras_fit, runs.input_bound, runs.fixed, runs.xss} <= names

    bad = {
        "traversal run": ("report", {"run": "../../etc/passwd"}, 404),
        "absolute path run": ("report", {"run": "/etc/passwd"}, 404),
        "unknown run": ("report", {"run": "no-such-run"}, 404),
        "unknown host": ("report", {"run": runs.fixed, "host": "../../etc/passwd"}, 404),
        "missing run": ("report", {}, 400),
        "missing candidate": ("diff", {"baseline": runs.fixed}, 400),
        "traversal baseline": ("diff", {"baseline": "../../etc/passwd", "candidate": runs.fixed}, 404),
        "corrupt profile": ("report", {"run": runs.corrupt}, 422),
    }
    for what, (route, params, expected) in bad.items():
        reply = tb.get(f"/data/plugin/advisor/{route}?{urllib.parse.urlencode(params)}")
        deadline = time.monotonic() + ANALYSIS_TIMEOUT_S
        while reply.status == 202 and time.monotonic() < deadline:  # the corrupt file is read first
            time.sleep(0.5)
            reply = tb.get(f"/data/plugin/advisor/{route}?{urllib.parse.urlencode(params)}")
        assert reply.status == expected, f"{what}: HTTP {reply.status} {reply.body[:300]!r}"
        assert reply.headers.get("Content-Type", "").startswith("application/json"), what
        body = reply.json()
        assert isinstance(body.get("error"), str) and body["error"], f"{what}: {body}"
        assert "Traceback" not in body["error"] and "root:" not in body["error"], what

    # The tab's module is served as JavaScript, byte for byte the committed bundle.
    js = tb.get("/data/plugin/advisor/index.js")
    assert js.status == 200
    assert js.headers["Content-Type"].startswith(("text/javascript", "application/javascript"))
    assert js.body == (REPO / "tb_plugin_advisor" / "static" / "index.js").read_bytes()
    assert tb.get("/data/plugin/advisor/no-such-file.js").status == 404


# ---------------------------------------------------------------------------------------------------
# The tab in TensorBoard: report, recommendations, diff, doctor, themes, Profile tab links


def test_advisor_tab_report_diff_doctor(tb, runs, browser_tools, tmp_path):
    report = final_json(tb, "report", run=runs.input_bound)
    verdict = report["verdict"]
    assert verdict["bottleneck"] == "input", f"loop_input_bound waits >= 30 % in get-next; report: {verdict}"
    recs = report["recommendations"]
    assert recs, "an input-bound run must get at least one recommendation"
    with_snippet = [r for r in recs if r.get("snippet")]
    diff = final_json(tb, "diff", baseline=runs.input_bound, candidate=runs.fixed)
    assert diff.get("ops"), "the diff of two real runs has per-op rows"
    has_precision = any(v > 0 for v in report.get("precision_pct", {}).values())
    # With TensorFlow's oneDNN rewrite on (CI forces it), ops carry the oneDNN name they ran as; the op
    # table shows it beside the familiar name, for each of the 10 rows shown by default.
    top_ops = sorted(report["ops"], key=lambda o: -o["time_ms"])[:10]
    onednn_rows = sum(1 for o in top_ops if o.get("onednn_op"))
    if os.environ.get("TF_ENABLE_ONEDNN_OPTS") == "1":
        assert onednn_rows > 0, [o["name"] for o in top_ops]

    steps: List[Dict[str, Any]] = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": runs.corrupt, "expectError": "cannot read the profile"},
        {"do": "screenshot", "name": "advisor-error"},
        {"do": "selectRun", "run": runs.input_bound},
        {"do": "expectText", "testid": "verdict-headline", "match": "^Input-bound: "},
        {"do": "expectExactText", "testid": "verdict-headline", "text": verdict["summary"].strip()},
        {"do": "expectExactText", "selector": RUN_SHOWN, "text": runs.input_bound},
        {"do": "expectChart", "testid": "chart-steps", "minPixels": 2000, "minColours": 2},
        {"do": "expectCount", "selector": '[data-testid="breakdown-table"] tbody tr', "min": 2},
        {"do": "expectCount", "selector": '[data-testid="rec-card"]', "min": len(recs), "max": len(recs)},
        {"do": "expectRecommendation", "id": recs[0]["id"], "title": recs[0].get("title") or recs[0]["id"]},
        *([{"do": "copySnippet", "id": with_snippet[0]["id"]}] if with_snippet else []),
        *([{"do": "expectChart", "testid": "chart-precision", "minPixels": 200, "minColours": 1}]
          if has_precision else []),
        {"do": "expectCount", "selector": '[data-testid="ops-table"] [data-testid="onednn-name"]',
         "min": onednn_rows, "max": onednn_rows},
        {"do": "expectProfileLink", "tool": "input_pipeline_analyzer", "run": runs.input_bound},
        {"do": "selectRun", "run": runs.two_workers},
        {"do": "expectText", "testid": "report-run", "match": "· 2 hosts$"},
        {"do": "expectCount", "selector": '[data-testid="per-host-table"] tbody tr', "min": 2, "max": 2},
        {"do": "selectRun", "run": runs.two_workers, "host": "worker1"},
        {"do": "expectText", "testid": "report-run", "match": "· host worker1$"},
        {"do": "expectProfileLink", "tool": "trace_viewer@", "run": runs.two_workers, "host": "worker1"},
        {"do": "selectRun", "run": runs.input_bound},
        {"do": "screenshot", "name": "advisor-report"},
        {"do": "screenshot", "name": "advisor-report-full", "fullAdvisor": True},
        {"do": "diff", "baseline": runs.input_bound, "candidate": runs.fixed},
        *diff_summary_steps(diff["summary"]),
        {"do": "expectText", "testid": "diff-verdicts",
         "match": r"Input-bound: \d+(\.\d)? % of each step waits for the input pipeline"},
        {"do": "expectChart", "testid": "chart-delta", "minPixels": 200, "minColours": 1},
        {"do": "expectSortedDeltas", "min": min(len(diff["ops"]), 100)},
        {"do": "screenshot", "name": "advisor-diff"},
        {"do": "doctor"},
        {"do": "expectCount", "selector": '[data-testid="doctor-session"]', "min": 5},
        {"do": "screenshot", "name": "advisor-doctor"},
        {"do": "tensorboardTheme", "mode": "dark"},
        {"do": "selectRun", "run": runs.fixed},
        {"do": "expectChart", "testid": "chart-steps", "minPixels": 2000},
        {"do": "screenshot", "name": "advisor-report-dark"},
        {"do": "tensorboardTheme", "mode": "light"},
        {"do": "expectProfileLink", "tool": "trace_viewer@", "run": runs.fixed, "click": True},
    ]  # fmt: skip
    summary = drive(browser_tools, tmp_path, "report", tb.url + "/", steps)

    # The diff's short verdict quotes the baseline's input share (rounded to a whole percent).
    badges = [s["text"] for s in summary["steps"] if s.get("text", "").startswith("Baseline")][0]
    shown = float(re.search(r"Input-bound: ([\d.]+) %", badges).group(1))
    assert abs(shown - verdict["input_pct"]) <= 0.51, (badges, verdict["input_pct"])
    dark = step_result(summary, "tensorboardTheme", 0)
    assert dark["tensorboardDarkMode"] is True and dark["background"] == "rgb(32, 33, 36)", dark
    assert step_result(summary, "expectSortedDeltas")["rows"] >= 1
    for name in ("advisor-report", "advisor-report-full", "advisor-diff", "advisor-doctor",
                 "advisor-report-dark"):  # fmt: skip
        assert (SCREENSHOTS / f"{name}.png").stat().st_size > 10_000, name


def test_run_named_like_markup_is_plain_text(tb, runs, browser_tools, tmp_path):
    steps = [
        {"do": "openAdvisor"},
        {"do": "selectRun", "run": runs.xss},
        {"do": "expectLiteralRun", "run": runs.xss},
        {"do": "screenshot", "name": "advisor-markup-run"},
        {"do": "diff", "baseline": runs.xss, "candidate": runs.fixed},
        {"do": "expectExactText", "selector": DIFF_TITLE, "text": f"{runs.xss} → {runs.fixed}"},
        {"do": "doctor"},
        {"do": "expectCount", "selector": "img", "max": 0, "min": 0},
    ]
    summary = drive(browser_tools, tmp_path, "xss", tb.url + "/", steps)
    assert summary["dialogs"] == []
    literal = step_result(summary, "expectLiteralRun")
    assert literal["imgs"] == 0 and literal["handlers"] == 0 and literal["shown"] == runs.xss


# ---------------------------------------------------------------------------------------------------
# Where users are: behind --path_prefix (reverse proxies), and in a notebook


def test_path_prefix(tf_profiles, browser_tools, tmp_path):
    prefixed = make_logdir(tf_profiles, tmp_path / "logdir")
    # --advisor_wait=0: every new analysis first answers 202, so the tab must show it and poll.
    with start_tensorboard(prefixed.logdir, "--advisor_wait=0", path_prefix=PREFIX) as server:
        assert server.url.endswith(PREFIX)
        status, listing = server.plugin("runs")
        assert status == 200 and prefixed.keras_fit in {r["run"] for r in listing["runs"]}
        status, body = server.plugin("report", run="../../etc/passwd")
        assert status == 404 and "error" in body
        # Without the prefix nothing of the plugin is reachable.
        with pytest.raises(urllib.error.HTTPError) as outside:
            urllib.request.urlopen(server.base + "/data/plugin/advisor/runs", timeout=30)
        assert outside.value.code == 404

        # The browser prefers dark: TensorBoard starts dark and the tab follows it.
        steps = [
            {"do": "openAdvisor"},
            {"do": "expectTheme", "mode": "dark"},
            {"do": "selectRun", "run": prefixed.keras_fit, "expectPending": True},
            {"do": "expectText", "testid": "verdict-headline", "match": r"\S"},
            {"do": "expectChart", "testid": "chart-steps", "minPixels": 1000},
            {"do": "expectProfileLink", "tool": "overview_page", "run": prefixed.keras_fit},
            {"do": "diff", "baseline": prefixed.input_bound, "candidate": prefixed.fixed},
            {"do": "expectChart", "testid": "chart-delta", "minPixels": 200, "minColours": 1},
            {"do": "selectRun", "run": prefixed.keras_fit},
            {"do": "screenshot", "name": "advisor-path-prefix"},
        ]
        summary = drive(browser_tools, tmp_path, "path-prefix", server.url + "/", steps, colorScheme="dark")
        assert step_result(summary, "expectTheme")["tensorboardDarkMode"] is True
        opened = step_result(summary, "openAdvisor")
        assert opened["advisor"].startswith(server.url + "/data/plugin_entry.html?name=advisor"), opened


class _NotebookPage(http.server.BaseHTTPRequestHandler):
    """Serves one page that embeds TensorBoard the way `%tensorboard` does in Jupyter."""

    html = b""

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        body = self.html if self.path in ("/", "/notebook.html") else b"not found"
        self.send_response(200 if body is self.html else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def notebook_html(tb_port: int) -> bytes:
    # The same embedding tensorboard.notebook writes for Jupyter: a 800 px iframe whose src is this
    # page's URL with the path "/" and TensorBoard's port, i.e. another origin than the notebook.
    return f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>notebook</title></head>
<body style="margin:0;font-family:sans-serif"><p style="margin:8px">In [2]: %tensorboard --logdir logs</p>
<iframe id="tensorboard-frame" width="100%" height="800" frameborder="0"></iframe>
<script>
  (function() {{
    const frame = document.getElementById("tensorboard-frame");
    const url = new URL("/", window.location);
    url.port = {tb_port};
    frame.src = url;
  }})();
</script></body></html>""".encode()


def test_notebook_tensorboard(tf_profiles, browser_tools, tmp_path, monkeypatch, capsys):
    from tensorboard import manager, notebook

    logdir = make_logdir(tf_profiles, tmp_path / "logdir")
    # manager.start runs $TENSORBOARD_BINARY; point it at this interpreter's TensorBoard so the
    # server sees the same installed plugins as the test.
    launcher = tmp_path / "tensorboard"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tensorboard.main "$@"\n')
    launcher.chmod(0o755)
    monkeypatch.setenv("TENSORBOARD_BINARY", str(launcher))
    port = free_port()
    notebook.start(f"--logdir '{logdir.logdir}' --host 127.0.0.1 --port {port}")
    infos = [i for i in manager.get_all() if i.port == port]
    assert infos, f"tensorboard.notebook.start did not launch a server: {capsys.readouterr().out}"
    page_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _NotebookPage)
    _NotebookPage.html = notebook_html(port)
    thread = threading.Thread(target=page_server.serve_forever, daemon=True)
    thread.start()
    try:
        assert f"localhost:{port}" in capsys.readouterr().out
        notebook_url = f"http://127.0.0.1:{page_server.server_address[1]}/notebook.html"
        steps = [
            {"do": "openAdvisor"},
            {"do": "selectRun", "run": logdir.input_bound},
            {"do": "expectText", "testid": "verdict-headline", "match": r"^Input-bound: "},
            {"do": "expectChart", "testid": "chart-steps", "minPixels": 1000},
            {"do": "screenshot", "name": "advisor-notebook"},
        ]
        summary = drive(
            browser_tools, tmp_path, "notebook", notebook_url, steps,
            allowedOrigins=[f"http://127.0.0.1:{page_server.server_address[1]}", f"http://127.0.0.1:{port}"],
        )  # fmt: skip
        opened = step_result(summary, "openAdvisor")
        assert opened["tensorboard"].startswith(f"http://127.0.0.1:{port}/"), opened
    finally:
        page_server.shutdown()
        page_server.server_close()
        for info in infos:
            with contextlib.suppress(ProcessLookupError):
                os.kill(info.pid, signal.SIGTERM)


def test_empty_logdir_explains_itself(browser_tools, tmp_path):
    empty = tmp_path / "empty-logdir"
    empty.mkdir()
    with start_tensorboard(empty) as server:
        status, listing = server.plugin("runs")
        assert status == 200 and listing["runs"] == []
        # With nothing to show TensorBoard lists the tab as inactive; users reach it by its URL.
        steps = [
            {"do": "openAdvisor", "viaUrl": True},
            {"do": "expectEmpty", "match": "No profile runs found"},
            {"do": "doctor"},
            {"do": "expectText", "testid": "doctor-status", "match": "^No profile sessions found"},
            {"do": "screenshot", "name": "advisor-empty"},
        ]
        drive(browser_tools, tmp_path, "empty", server.url + "/#advisor", steps)
