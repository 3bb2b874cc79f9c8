"""Steps on the device's clock (analysis/step_time/device_clock.py): synthetic traces whose device
work is known to the nanosecond, the H200 captures against their unprofiled step times, the corpus
`with_stack` trace, and a `with_stack=True` capture made by real PyTorch in this session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from paths import CORPUS, H200, NO_CORPUS
from synth_kineto import BASE_NS, KinetoTrace

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto, read_kineto_bytes
from tb_plugin_advisor.report.run import build_report

CAPTURES = H200
MS = 1_000_000


def _gpu_bound(steps: int = 4, kernel_ms: float = 10.0, host_ms: float = 2.0, kernels: int = 3,
               last_kernels: int = None, launch_tid=None) -> KinetoTrace:
    """A loop whose host queues each step in `host_ms` while its kernels take `kernels × kernel_ms`:
    the host runs ahead and the device runs the kernels back to back."""
    trace = KinetoTrace()
    t0 = BASE_NS + 1_000 * MS
    device_free = t0 + MS // 2
    for n in range(steps):
        start = t0 + n * int(host_ms * MS)
        trace.step(n + 1, start, int(host_ms * MS) - 1_000)
        count = kernels if (n < steps - 1 or last_kernels is None) else last_kernels
        for k in range(count):
            launch = start + 10_000 + k * 100_000
            run = max(device_free, launch + 20_000)
            trace.launch("volta_sgemm_128x64_nn", launch, 5_000, run, int(kernel_ms * MS))
            device_free = run + int(kernel_ms * MS)
    return trace


def test_gpu_bound_steps_end_when_the_device_has_run_them():
    trace = _gpu_bound()
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "device"
    # every step is three 10 ms kernels back to back, from the previous step's last kernel on
    durations = steps.duration_ns / MS
    assert durations[1:] == pytest.approx([30.0, 30.0, 30.0], abs=1e-6)
    # the first starts at its host start (the device was idle) and ends after its third kernel
    assert steps.start_ns[0] == steps.host_start_ns[0]
    assert durations[0] == pytest.approx(0.5 + 30.0, abs=0.05)
    assert steps.host_duration_ns / MS == pytest.approx([2.0 - 0.001] * 4, abs=1e-6)
    # the host ran ahead: each step's device work ends well after its host range
    ahead = steps.host_ahead_ns / MS
    assert ahead == pytest.approx((steps.end_ns - steps.host_end_ns) / MS)
    assert ahead.tolist() == sorted(ahead.tolist()) and ahead[0] > 25.0  # and further each step
    assert any("device's clock" in n for n in steps.notes)


def test_host_steps_stay_when_the_device_keeps_up():
    # kernels shorter than the host's step: the host range already holds the device work
    trace = _gpu_bound(kernel_ms=0.2, host_ms=5.0)
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "device"
    assert steps.start_ns.tolist() == steps.host_start_ns.tolist()
    assert steps.end_ns.tolist() == steps.host_end_ns.tolist()
    assert not any("device's clock" in n for n in steps.notes)  # nothing moved: nothing to say


def test_cpu_only_runs_keep_host_steps():
    trace = KinetoTrace(devices=[])
    t0 = BASE_NS + 1_000 * MS
    for n in range(3):
        trace.step(n + 1, t0 + n * 5 * MS, 5 * MS - 1_000)
        trace.op("aten::mm", t0 + n * 5 * MS + 100_000, 3 * MS)
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "host" and steps.host_ahead_ns is None
    assert steps.duration_ns.tolist() == [5 * MS - 1_000] * 3


def test_launches_from_another_thread_count_for_the_step():
    """The backward pass launches from autograd's thread: its kernels still belong to the step."""
    trace = KinetoTrace()
    t0 = BASE_NS + 1_000 * MS
    for n in range(3):
        start = t0 + n * 4 * MS
        trace.step(n + 1, start, 4 * MS - 1_000)
        trace.launch("forward_kernel", start + 10_000, 5_000, start + 50_000, MS)
        # the backward thread's launch near the step's end, its kernel running 3 ms past it
        trace.complete(trace.cat["runtime"], "cudaLaunchKernel", start + 3 * MS, 5_000, tid=777,
                       args={"correlation": 9000 + n})
        trace.complete(trace.cat["kernel"], "backward_kernel", start + 3 * MS + 100_000, 3 * MS, pid=0,
                       tid=7, args={"device": 0, "stream": 7, "correlation": 9000 + n})
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "device"
    # each step's backward kernel ends 3.1 ms + 3 ms after its start: 2.1 ms past its host range
    assert (steps.end_ns[-1] - steps.host_end_ns[-1]) / MS == pytest.approx(6.1 - 4.0 + 0.001, abs=1e-6)


def test_the_warm_up_backlog_is_not_the_first_steps():
    """Kernels launched before the capture (no launch in the trace) keep the device busy: the first
    step starts where that earlier work ends, not at its host start."""
    trace = _gpu_bound()
    t0 = BASE_NS + 1_000 * MS
    # 50 ms of earlier work on the stream, launched during the profiler's warm-up (not recorded)
    trace.complete(trace.cat["kernel"], "warmup_kernel", t0 - 10 * MS, 50 * MS, pid=0, tid=7,
                   args={"device": 0, "stream": 7, "correlation": 99999})
    # the first step's kernels now wait for it
    trace = _shift_kernels_after(trace, t0 + 40 * MS)
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "device"
    assert (steps.start_ns[0] - t0) / MS == pytest.approx(40.0, abs=1e-6)
    assert steps.duration_ns / MS == pytest.approx([30.0] * 4, abs=1e-6)


def _shift_kernels_after(trace: KinetoTrace, t_ns: int) -> KinetoTrace:
    """The step kernels moved later by what it takes for the first to start at `t_ns`."""
    kernels = [e for e in trace.events
               if e.get("cat") == trace.cat["kernel"] and e["name"] != "warmup_kernel"]
    first = min(e["ts"] for e in kernels)
    shift = (t_ns - BASE_NS) / 1000 - first
    for e in kernels:
        e["ts"] = round(e["ts"] + shift, 3)
    return trace


def test_a_cut_off_last_step_is_left_out_and_named():
    trace = _gpu_bound(steps=5, last_kernels=1)  # the capture ended after the last step's first kernel
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.cut_off.tolist() == [False, False, False, False, True]
    assert steps.steady.tolist()[-1] is False
    assert any("cut off the device work of step 5" in n for n in steps.notes)
    assert steps.stats_ms()["median_ms"] == pytest.approx(30.0, abs=1e-6)


def _advice(trace: KinetoTrace) -> dict:
    profile = read_kineto_bytes(trace.to_bytes(), source="t.pt.trace.json")
    report = build_report(RunProfiles(run="r", profiles=[profile])).to_json()
    return {r["id"]: r for r in report["recommendations"]}


def test_a_cut_off_last_step_is_advised_on_and_a_whole_one_is_not():
    """profile.cut_off_step fires exactly where the capture's end cut the last step's kernels."""
    cut = _advice(_gpu_bound(steps=5, last_kernels=1))["profile.cut_off_step"]
    assert cut["severity"] == "low" and "finished step 5" in cut["evidence"]
    assert cut["expected_gain"]["ms_per_step"] is None and "measurement" in cut["expected_gain"]["basis"]
    assert "prof.step()" in cut["snippet"] and cut["snippet_label"] == "PyTorch"
    assert cut["evidence_spans"] and {s["kind"] for s in cut["evidence_spans"]} == {"worst_step"}
    assert "profile.cut_off_step" not in _advice(_gpu_bound(steps=5))
    assert "profile.cut_off_step" not in _advice(_gpu_bound(steps=5, last_kernels=3))


def test_trailing_steps_without_device_work_are_cut_off():
    trace = _gpu_bound(steps=4, kernel_ms=1.0, host_ms=5.0)
    t0 = BASE_NS + 1_000 * MS
    trace.step(5, t0 + 20 * MS, 5 * MS - 1_000)  # launched nothing the trace holds
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.cut_off.tolist() == [False, False, False, False, True]


def test_cut_off_share_is_the_boundary():
    """At CUT_OFF_SHARE of the others' events the last step counts; just below, it is cut off."""
    kernels = 10
    kept = int(np.ceil(th.CUT_OFF_SHARE * kernels))
    at = find_steps(read_kineto_bytes(_gpu_bound(steps=4, kernels=kernels, kernel_ms=0.5,
                                                 last_kernels=kept).to_bytes(), source="t.json"))
    below = find_steps(read_kineto_bytes(_gpu_bound(steps=4, kernels=kernels, kernel_ms=0.5,
                                                    last_kernels=kept - 1).to_bytes(), source="t.json"))
    assert not at.cut_off[-1] and below.cut_off[-1]


def test_without_launch_correlation_the_steps_stay_on_the_host_clock():
    trace = _gpu_bound()
    for e in trace.events:
        (e.get("args") or {}).pop("correlation", None)
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "host"
    assert any("No device work could be tied to the steps" in n for n in steps.notes)


def test_report_json_carries_both_clocks():
    profile = read_kineto_bytes(_gpu_bound().to_bytes(), source="t.json")
    steps = build_report(RunProfiles("r", [profile])).to_json()["steps"]
    assert steps["clock"] == "device"
    assert steps["host_ahead_ms"] > 20
    for entry in steps["per_step"]:
        assert entry["host_ms"] == pytest.approx(2.0 - 0.001, abs=1e-3)
        assert entry["total_ms"] >= entry["host_ms"]
        assert entry["cut_off"] is False


# ---------------------------------------------------------------------------------------------------
# Real captures


def test_h200_transformer_steps_match_the_unprofiled_step():
    """98.85 ms per step without the profiler; the host ranges were 38.8, 91.4, 98.9, 98.9 ms."""
    (path,) = sorted((CAPTURES / "transformer_fp32").glob("*.pt.trace.json*"))
    truth = json.loads((CAPTURES / "captures.json").read_text())["transformer_fp32"]["unprofiled_step_ms"]
    steps = find_steps(read_kineto(str(path)))
    assert steps.clock == "device"
    assert steps.host_duration_ns[0] / MS < 0.5 * truth  # the host raced ahead in the first step …
    for ms in (steps.duration_ns / MS).tolist():  # … every step, the first included, is the device's
        assert ms == pytest.approx(truth, rel=0.02)
    assert not steps.warmup.any() and not steps.cut_off.any()


CORPUS_GPU_STEPS = [  # corpus traces with ProfilerStep markers and device work
    "hta/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/tests/data/df_index_resolver/df_index_resolver.json.gz",
    "hta/tests/data/nccl_parser_config/nccl_data.json.gz",
    "hta/tests/data/negative_queue_length_values_check/rank0.json.gz",
    "hta/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "hta/tests/data/timeline_analysis/sampled_rank-0.json.gz",
    "hta/tests/data/trace_compare/base/base.json.gz",
    "kineto/legacy_2021-02/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz",
    "kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.1623143089861.pt.trace.json.gz",
    "kineto/tb_plugin/samples/resnet50_num_workers_4/worker0.1623213129365.pt.trace.json.gz",
    "tracelens/tests/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz",
]


@pytest.mark.sweep
@pytest.mark.parametrize("path", [CAPTURES / c for c in (
    "resnet50_fp32_workers8_repeat1", "resnet50_fp32_workers8_repeat2", "resnet50_fp32_workers8_repeat3",
    "resnet50_fp32_workers0", "transformer_fp32")] + [CORPUS / c for c in CORPUS_GPU_STEPS],
    ids=lambda p: p.name if p.is_dir() else p.name[:40])
def test_device_clock_is_the_rule_applied_by_hand(path):
    """The windows follow the rule written out here directly over the raw JSON (correlation ids,
    runtime calls, ProfilerStep ranges, the cut-off and attribution rules), not through the reader's
    tables: median of the steps not cut off within 3 %, each step within 0.1 %."""
    if not path.exists():
        pytest.skip(NO_CORPUS)
    if path.is_dir():
        (path,) = sorted(path.glob("*.pt.trace.json*"))
    by_hand, cut = _rule_by_hand(path)
    steps = find_steps(read_kineto(str(path)))
    assert steps.cut_off.tolist() == cut
    kept = (steps.duration_ns / MS)[~steps.cut_off]
    expected = [ms for ms, c in zip(by_hand, cut) if not c]
    assert np.median(kept) == pytest.approx(np.median(expected), rel=0.03)
    assert kept.tolist() == pytest.approx(expected, rel=1e-3, abs=1e-3)


RUNTIME_CATEGORIES = ("cuda_runtime", "cuda_driver", "runtime")
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset")


def _rule_by_hand(path: Path):
    """(per step ms, per step cut off) by the rule of analysis/step_time/device_clock.py."""
    import gzip

    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as handle:
        trace = json.load(handle)
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    category = [str(e.get("cat", "")).lower() for e in events]
    steps = sorted((e["ts"], e["ts"] + e["dur"]) for e, c in zip(events, category)
                   if c != "gpu_user_annotation" and str(e.get("name", "")).startswith("ProfilerStep#"))
    calls: dict = {}
    for e, c in zip(events, category):
        corr = (e.get("args") or {}).get("correlation")
        if c in RUNTIME_CATEGORIES and corr is not None:
            calls.setdefault(corr, []).append(e["ts"])
    own = [[] for _ in steps]
    other = []
    for e, c in zip(events, category):
        if c not in DEVICE_CATEGORIES:
            continue
        t = calls.get((e.get("args") or {}).get("correlation"))
        t = t[0] if t is not None and len(t) == 1 else None
        where = [i for i, (a, b) in enumerate(steps) if t is not None and a <= t < b]
        (own[where[0]] if where else other).append((e["ts"], e["ts"] + e["dur"]))
    attributed = sum(len(o) for o in own)
    during = attributed + sum(1 for s, e in other if e > steps[0][0] and s < steps[-1][1])
    if attributed == 0 or attributed / during < th.DEVICE_CLOCK_MIN_SHARE:  # stays on the host clock
        return [(b - a) / 1000 for a, b in steps], [False] * len(steps)
    out, previous = [], None
    for i, (a, b) in enumerate(steps):
        start = a
        if previous is not None:
            start = max(a, previous)
        elif own[0]:
            first = min(s for s, _ in own[0])
            earlier = [end for s, end in other if s < first]
            if earlier:
                start = max(a, min(max(earlier), first))
        end = max([b, start] + [e for _, e in own[i]])
        out.append((end - start) / 1000)
        previous = end
    counts = [len(o) for o in own]
    working = [i for i, n in enumerate(counts) if n]
    cut = [i > working[-1] for i in range(len(steps))]
    if len(working) > 1 and counts[working[-1]] < th.CUT_OFF_SHARE * float(
            np.median([counts[i] for i in working[:-1]])):
        cut[working[-1]] = True
    return out, cut


def test_corpus_with_stack_trace_keeps_its_steps():
    """MI300 `with_stack` trace: ProfilerStep#15–17 of 16.8, 15.95 and 15.89 ms on the main thread,
    straddled by Python stack events; cutting the steps made them 0.003 ms."""
    path = CORPUS / "tracelens/tests/traces/mi300/resnet_act_checkpoint.json.gz"
    if not path.exists():
        pytest.skip(NO_CORPUS)
    steps = find_steps(read_kineto(str(path)))
    assert steps.host_duration_ns / MS == pytest.approx([16.799, 15.951, 15.887], abs=0.002)
    for ms in (steps.duration_ns / MS).tolist():
        assert 15.8 <= ms <= 19.5


WITH_STACK_SCRIPT = r"""
import json, sys, time
import torch
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
out = sys.argv[1]
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
lengths = []
def train_step():
    x = torch.randn(32, 64)
    loss = model(x).sum()
    opt.zero_grad(); loss.backward(); opt.step()
    time.sleep(0.004)  # a step long enough that the stack events around prof.step() are a sliver of it
with profile(activities=[ProfilerActivity.CPU], with_stack=True, record_shapes=True,
             schedule=schedule(wait=1, warmup=1, active=4),
             on_trace_ready=tensorboard_trace_handler(out)) as prof:
    for i in range(6):
        train_step()
        prof.step()
"""


@pytest.mark.needs_torch
def test_with_stack_capture_steps_are_the_profiler_steps(tmp_path):
    """A real `with_stack=True` capture: its Python stack events straddle every step boundary; each
    step stays as long as its ProfilerStep event."""
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1")
    subprocess.run([sys.executable, "-c", WITH_STACK_SCRIPT, str(tmp_path)], check=True, env=env,
                   capture_output=True, timeout=300)
    (path,) = sorted(tmp_path.glob("*.pt.trace.json*"))
    with open(path) as handle:
        trace = json.load(handle)
    events = trace["traceEvents"]
    marked = sorted((e["ts"], e["dur"]) for e in events
                    if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"))
    assert any(e.get("cat") == "python_function" for e in events)  # with_stack really recorded stacks
    profile = read_kineto(str(path))
    steps = find_steps(profile)
    assert steps.source == "profiler_step" and steps.count == len(marked) >= 3
    assert steps.duration_ns / 1000 == pytest.approx([d for _, d in marked], abs=0.01)
    assert all(d / MS > 3.0 for d in steps.duration_ns)  # each holds its 4 ms sleep


# ---------------------------------------------------------------------------------------------------
# The DataLoader panel: the host's wait, and what of it the device did not hide


def test_a_wait_behind_queued_device_work_is_not_exposed():
    """The host waits 5 ms in next() at the start of each 10 ms step while the device still runs the
    previous step's 9.5 ms kernel: the wait is the host's, and only ~0.4 ms of it left the device idle."""
    trace = KinetoTrace()
    t0 = BASE_NS + 1_000 * MS
    device_free = t0
    for n in range(4):
        start = t0 + n * 10 * MS
        trace.step(n + 1, start, 10 * MS - 1_000)
        trace.dataloader(start + 10_000, 5 * MS, workers=2)
        launch = start + 5 * MS + 100_000
        run = max(device_free, launch + 20_000)
        trace.launch("volta_sgemm_128x64_nn", launch, 5_000, run, 9_500_000)
        device_free = run + 9_500_000
    report = build_report(RunProfiles("r", [read_kineto_bytes(trace.to_bytes(), source="t.json")])).to_json()
    dl = report["input_pipeline"]["dataloader"]
    assert dl["wait_ms_per_step"] == pytest.approx(5.0, abs=1e-3)  # the host's time in next()
    later = report["steps"]["per_step"][1:]  # (the first step's wait had no earlier work to hide it)
    assert all(s["breakdown_ms"]["input"] == pytest.approx(0.39, abs=0.01) for s in later)
    assert dl["exposed_wait_ms_per_step"] < 0.5 * dl["wait_ms_per_step"]


def test_h200_input_bound_run_exposes_its_whole_wait():
    """num_workers=0 on the H200: the device waits for every batch, so the exposed wait is the
    breakdown's input share; the host's wait stays what next() took (147.27 ms per step)."""
    (path,) = sorted((CAPTURES / "resnet50_fp32_workers0").glob("*.pt.trace.json*"))
    report = build_report(RunProfiles("r", [read_kineto(str(path))])).to_json()
    dl = report["input_pipeline"]["dataloader"]
    assert dl["wait_ms_per_step"] == pytest.approx(147.27, abs=0.01)
    assert dl["exposed_wait_pct"] == pytest.approx(report["breakdown_pct"]["input"], abs=1.0)
    assert 0.9 * dl["wait_ms_per_step"] <= dl["exposed_wait_ms_per_step"] <= dl["wait_ms_per_step"]


def test_a_correlation_id_on_several_host_calls_names_no_launch():
    """Every step's launch carries the same id (a hand-made trace): no kernel can be tied to a step,
    so the steps stay on the host's clock instead of all being given to the first call's step."""
    trace = _gpu_bound(kernel_ms=0.5, host_ms=5.0)
    for e in trace.events:
        if "correlation" in (e.get("args") or {}):
            e["args"]["correlation"] = 77
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "host"


def test_mostly_unattributable_device_work_keeps_the_host_clock():
    """Below DEVICE_CLOCK_MIN_SHARE of the device events tied to a launch in a step, the device's
    timeline is mostly work of unknown origin: the host's ranges stay, and the note says why."""
    trace = _gpu_bound(kernel_ms=0.5, host_ms=5.0, kernels=2)
    t0 = BASE_NS + 1_000 * MS
    for k in range(20):  # device work during the steps whose launches the trace does not hold
        trace.complete(trace.cat["kernel"], "foreign_kernel", t0 + k * MS, 100_000, pid=0, tid=9,
                       args={"device": 0, "stream": 9, "correlation": 50_000 + k})
    steps = find_steps(read_kineto_bytes(trace.to_bytes(), source="t.json"))
    assert steps.clock == "host"
    assert any(n.startswith("Only 29 % of the device work during the steps") for n in steps.notes)


def test_inferred_steps_are_never_cut_off():
    """Inferred steps (one launch of a jitted function to the next) need not repeat the same work:
    the corpus JAX elementwise trace alternates 10 and 5 device events per step."""
    path = CORPUS / "tracelens/tests/traces/mi300/jax08_elementwise/tw003.xplane.pb"
    if not path.exists():
        pytest.skip(NO_CORPUS)
    from tb_plugin_advisor.readers.xplane.reader import read_xplane

    steps = find_steps(read_xplane(str(path)))
    assert steps.source == "inferred" and steps.clock == "device" and not steps.cut_off.any()


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*/*.pt.trace.json*")), ids=lambda p: p.parent.name)
def test_steps_found_block_by_block_are_those_found_at_once(path, monkeypatch):
    """Device events are tied to their launches a block at a time to bound the temporaries: any block
    size, one that splits a step's events included, gives the same windows as one block for all."""
    from tb_plugin_advisor.analysis.step_time import device_clock

    profile = read_kineto(path)
    monkeypatch.setattr(device_clock, "BLOCK_EVENTS", 1 << 40)
    whole = find_steps(profile)
    monkeypatch.setattr(device_clock, "BLOCK_EVENTS", 7)
    blocked = find_steps(profile)
    assert whole.clock == blocked.clock
    for column in ("start_ns", "end_ns", "host_start_ns", "host_end_ns"):
        assert np.array_equal(getattr(whole, column), getattr(blocked, column))


@pytest.mark.parametrize("path", sorted(CAPTURES.glob("*/*.pt.trace.json*")), ids=lambda p: p.parent.name)
def test_launches_found_through_an_id_table_are_those_a_binary_search_finds(path, monkeypatch):
    """Launch ids numbered from 0 are looked up in a table indexed by id; where ids are too sparse for
    one, by binary search: both tie every device event to the same step."""
    from tb_plugin_advisor.analysis.step_time import device_clock

    profile = read_kineto(path)
    assert device_clock._id_positions(np.arange(10, dtype=np.int64)) is not None  # the captures' case
    by_table = find_steps(profile)
    monkeypatch.setattr(device_clock, "ID_SLOTS_PER_LAUNCH", 0)  # no table: every id searched
    searched = find_steps(profile)
    assert by_table.clock == searched.clock
    for column in ("start_ns", "end_ns", "host_start_ns", "host_end_ns"):
        assert np.array_equal(getattr(by_table, column), getattr(searched, column))


def test_the_id_table_marks_absent_negative_and_repeated_ids():
    from tb_plugin_advisor.analysis.step_time import device_clock

    ids = np.array([0, 2, 2, 5], dtype=np.int64)
    table = device_clock._id_positions(ids)
    assert table.tolist()[:2] == [0, -1] and table[2] in (1, 2) and table.tolist()[3:] == [-1, -1, 3]
    assert device_clock._id_positions(np.array([-1, 3], dtype=np.int64)) is None  # negative: searched
    assert device_clock._id_positions(np.array([0, 10**6], dtype=np.int64)) is None  # too sparse
    times = np.array([10, 20, 30, 40], dtype=np.int64)
    tally = device_clock._Attribution(np.array([0], np.int64), np.array([100], np.int64), ids, times)
    assert tally.positions is not None
    correlations = np.array([0, 1, 2, 5, 9, -3], dtype=np.int64)
    step = tally._step_of_block(correlations)
    assert step.tolist() == [0, -1, -1, 0, -1, -1]  # 2 is carried twice: no launch; 1, 9, -3 absent
    tally.positions = None  # the binary search instead of the table
    assert tally._step_of_block(correlations).tolist() == step.tolist()


def test_launches_out_of_id_order_are_sorted_before_they_are_looked_up():
    """Tracers number launches in the order they make them, and the lookup skips sorting them then;
    a trace whose ids run backwards (merged or hand-made) must time the same steps."""
    forward = _gpu_bound()
    backward = _gpu_bound()
    events = backward.document()["traceEvents"]
    ids = sorted({e["args"]["correlation"] for e in events if "correlation" in e.get("args", {})})
    renumber = dict(zip(ids, reversed(ids)))
    for event in events:
        if "correlation" in event.get("args", {}):
            event["args"]["correlation"] = renumber[event["args"]["correlation"]]
    trace = json.dumps({**backward.document(), "traceEvents": events}).encode()
    one = find_steps(read_kineto_bytes(forward.to_bytes(), source="f.json"))
    other = find_steps(read_kineto_bytes(trace, source="b.json"))
    assert one.clock == other.clock == "device"
    assert np.array_equal(one.end_ns, other.end_ns) and np.array_equal(one.start_ns, other.start_ns)
