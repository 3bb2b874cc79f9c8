"""Every PyTorch (Kineto) trace of the shared real-world corpus loads plausibly or is clearly refused.

The corpus (../shared/corpus: kineto/, hta/, tracelens/) holds other people's traces from 2021 to
2025, NVIDIA and AMD; it is not part of the repository, so these tests skip when it is absent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from paths import CORPUS, needs_corpus

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.report.run import build_report

FOLDERS = ("kineto", "hta", "tracelens")
TRACES = sorted(
    p for folder in FOLDERS if (CORPUS / folder).is_dir()
    for p in (CORPUS / folder).rglob("*") if p.name.endswith((".json", ".json.gz"))
)
# Files in those folders that are not Kineto traces, and the refusal each must get.
NOT_TRACES = {"benchmark_simple_add_et.json.gz": "no 'traceEvents' list"}  # an Execution Trace

pytestmark = needs_corpus


def _id(path: Path) -> str:
    return str(path.relative_to(CORPUS))


@pytest.mark.sweep
@pytest.mark.parametrize("path", TRACES, ids=_id)
def test_every_corpus_trace_loads_plausibly_or_is_refused(path):
    if path.name in NOT_TRACES:
        with pytest.raises(ProfileReadError, match=NOT_TRACES[path.name]):
            read_kineto(str(path))
        return
    profile = read_kineto(str(path))
    assert profile.framework == "pytorch"
    host = profile.host_plane
    assert host is not None and host.event_count > 0
    start, end = profile.time_range_ns()
    assert profile.first_start_ns() == start
    assert 1_500_000_000 * 10**9 < start < end < 1_900_000_000 * 10**9  # epoch ns, 2017–2030
    for plane in profile.planes:
        for line in plane.lines:
            _assert_sorted_and_nested(line)
    for device in profile.devices:
        assert device.name.startswith(("/device:GPU:", "/device:MTIA:"))
        if len(device.kernels):
            assert device.kernels.total_ns > 0
    report = build_report(RunProfiles(run=path.parent.name, profiles=[profile])).to_json()
    assert sum(report["breakdown_pct"].values()) == pytest.approx(100.0, abs=0.05)


def _assert_sorted_and_nested(line) -> None:
    starts = line.start_ns
    ends = line.end_ns
    assert np.all(np.diff(starts) >= 0), line.name
    stack = []
    for s, e in zip(starts.tolist(), ends.tolist()):
        while stack and stack[-1] <= s:
            stack.pop()
        assert not stack or e <= stack[-1], f"{line.name}: event at {s} outlives its parent"
        stack.append(e)


KNOWN = {
    # file name: (vendor, model, steps) — read from the trace by hand
    "worker0.1623143089861.pt.trace.json.gz": ("Nvidia", "Tesla V100-DGXS-32GB", 6),
    "resnet_act_checkpoint.json.gz": ("AMD", "AMD Instinct MI300X", 3),
    "gpu_only_trace.json.gz": ("AMD", "AMD Instinct MI210", 0),
    "step_based_trace_2543932.json.gz": ("Nvidia", "Quadro GP100", 0),
}


@pytest.mark.parametrize("name", sorted(KNOWN))
def test_known_devices_and_steps(name):
    path = next(p for p in TRACES if p.name == name)
    vendor, model, steps = KNOWN[name]
    profile = read_kineto(str(path))
    gpu = next(d for d in profile.devices if d.has_activity)
    assert (gpu.vendor, gpu.model) == (vendor, model)
    assert len(profile.step_markers) == steps


def test_2021_sample_with_its_published_h2d_copies():
    """torch-tb-profiler's ResNet-50 sample (num_workers=0): 12 H2D copies (input + labels, 6 steps)."""
    path = next(p for p in TRACES if p.name == "worker0.1623143566756.pt.trace.json.gz")
    gpu = read_kineto(str(path)).devices[0]
    assert len(gpu.memcpys) == 12
    assert gpu.memcpys.total_ns("H2D") == gpu.memcpys.total_ns()
    assert len(gpu.kernels) > 9000
