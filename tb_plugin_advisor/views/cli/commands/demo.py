"""`tb-advisor demo`: TensorBoard with the Advisor on the bundled sample logdir, no TensorFlow needed.

    tb-advisor demo [--port 6006] [--host 127.0.0.1] [--bind_all]
    tb-advisor demo --logdir-only

The sample (tb_plugin_advisor/sample_logdir) tells two stories. TensorFlow, written by
`demo/profiling_story.py --size small`: run1_naive (input-bound tf.data pipeline), run2_parallel
(parallel map + prefetch), run3_mixed (mixed_bfloat16) and run4_custom_loop (profiler API with step
markers). PyTorch, real H200 captures of ResNet-50 (tests/captures/h200) under torch_resnet50/:
1_fp32_workers0 (input-bound DataLoader), 2_fp32_workers8 (the DataLoader fix), 3_bf16_workers8
(bf16 autocast) and 4_fp32_workers8_repeats (three separate processes of the same configuration),
one series for the Trend view. It is copied to a fresh
temporary directory first: TensorBoard, the Profile plugin (caches next to the profiles) and the
Advisor (.profile-empty markers) may write into a logdir, and site-packages must stay untouched.
The copy is removed when the server stops, except with --logdir-only.
"""

from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import urllib.parse
from pathlib import Path

from tb_plugin_advisor.errors import AdvisorError

SAMPLE = Path(__file__).resolve().parents[3] / "sample_logdir"
# TensorBoard's own start-up line: "TensorBoard 2.21.0 at http://localhost:6006/ (Press CTRL+C to quit)"
SERVING = re.compile(r"TensorBoard \S+ at (https?://\S+)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=6006, help="TensorBoard port (default 6006; 0 picks a free one)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1)")
    parser.add_argument(
        "--bind_all",
        action="store_true",
        help="serve on all network interfaces (TensorBoard's --bind_all; overrides --host)",
    )
    parser.add_argument(
        "--logdir-only",
        action="store_true",
        help="only copy the sample logdir to a temporary directory, print its path and exit",
    )


def copy_sample() -> Path:
    """A private, writable copy of the bundled sample; returns the logdir path inside it."""
    if not any(SAMPLE.glob("**/*.xplane.pb")):
        raise AdvisorError(
            f"the bundled sample logdir is missing or empty ({SAMPLE}); reinstall tb-plugin-advisor "
            "with its package data"
        )
    logdir = Path(tempfile.mkdtemp(prefix="tb-advisor-demo-")) / "logs"
    shutil.copytree(SAMPLE, logdir)
    return logdir


def _tensorboard_command(args: argparse.Namespace, logdir: Path) -> list:
    command = [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--port", str(args.port)]
    command += ["--bind_all"] if args.bind_all else ["--host", args.host]
    return command


def run(args: argparse.Namespace) -> int:
    logdir = copy_sample()
    if args.logdir_only:
        print(logdir)
        return 0
    try:
        return _serve(args, logdir)
    finally:
        shutil.rmtree(logdir.parent, ignore_errors=True)


def _serve(args: argparse.Namespace, logdir: Path) -> int:
    """Run TensorBoard as a child process (it may import TensorFlow; this process never does)."""
    server = subprocess.Popen(
        _tensorboard_command(args, logdir), stderr=subprocess.PIPE, text=True, bufsize=1
    )
    # A terminate (from a test or a process manager) cleans up like Ctrl+C does.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))
    try:
        announced = False
        for line in server.stderr:
            match = SERVING.search(line)
            if match and not announced:
                announced = True
                port = urllib.parse.urlsplit(match.group(1)).port
                print(f"TensorBoard with the Advisor on a copy of the sample logdir: {logdir}", flush=True)
                print(f"Open http://localhost:{port}/#advisor   (Ctrl+C to stop)", flush=True)
            else:
                sys.stderr.write(line)
        code = server.wait()
        if not announced:
            raise AdvisorError(f"TensorBoard did not start (exit status {code}); its messages are above")
        return 0 if code in (0, -signal.SIGINT) else code
    except KeyboardInterrupt:
        return 0
    finally:
        if server.poll() is None:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
