"""A real TensorBoard analyses a profile that is rewritten and truncated 200 times under it.

The mmap reader died of SIGBUS on about half of such reads; now every answer is a JSON 2xx/4xx,
TensorBoard keeps serving every route, and the finished file is reported correctly.
"""

from __future__ import annotations

import os
import threading
import time

from test_reader_safety import profile_bytes

REWRITES = 200
RUN = "s1"


def test_tensorboard_survives_200_rewrites_and_truncations_of_a_profile(tmp_path, tensorboard_factory):
    data = profile_bytes(lines=8, events=3000)
    session = tmp_path / "plugins" / "profile" / RUN
    session.mkdir(parents=True)
    path = session / "worker-0.xplane.pb"
    path.write_bytes(data)
    tb = tensorboard_factory(tmp_path, "--reload_interval=0", "--advisor_reload_interval=1",
                             "--advisor_wait=0.2", "--advisor_write_markers=false")
    done = threading.Event()

    def writer() -> None:
        for k in range(REWRITES):
            with open(path, "r+b") as handle:
                handle.truncate((k * 7919) % len(data))  # truncated at a different place each time
                if k % 2 == 0:
                    handle.seek(0)
                    handle.write(data)  # then rewritten whole, in place
            time.sleep(0.01)
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    statuses = []
    try:
        while not done.is_set():
            for route, params in (("report", {"run": RUN}), ("runs", {}), ("doctor", {})):
                status, body = tb.plugin(route, **params)
                statuses.append((route, status))
                assert status < 500, (route, status, body)
                assert isinstance(body, dict) or route == "runs", (route, body)
    finally:
        thread.join()
    assert tb.process.poll() is None, "TensorBoard died: " + tb.log_text()[-2000:]
    assert len(statuses) >= 3

    path.write_bytes(data)
    os.utime(path)

    def finished_report():
        status, body = tb.plugin("report", run=RUN)
        return body if status == 200 else None

    report = tb.wait_for(finished_report, timeout_s=60)
    assert report["run"] == RUN
    assert tb.plugin("runs")[0] == 200
    assert tb.wait_for(lambda: tb.plugin("doctor")[0] == 200, timeout_s=60)  # 202 while it reads
