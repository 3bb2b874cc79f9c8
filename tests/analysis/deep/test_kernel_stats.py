"""Kernel statistics and occupancy on synthetic profiles whose every number is known by construction."""

from __future__ import annotations

import numpy as np
import pytest
from deep_profiles import deep_findings, deep_section
from synth import XSpaceBuilder

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.classify.kernel_view import used_kernel_names
from tb_plugin_advisor.analysis.classify.patterns import PRECISIONS
from tb_plugin_advisor.analysis.deep.kernel_stats import _least_share, _pair_sums, kernel_stats
from tb_plugin_advisor.analysis.deep.occupancy import sm_limits, theoretical_occupancy
from tb_plugin_advisor.analysis.step_time.steps import find_steps
from tb_plugin_advisor.readers.xplane.reader import read_xplane_bytes

T0 = 1_700_000_000_000_000_000
MS = 1_000_000
US = 1_000

BF16_GEMM = "ampere_bf16_s16816gemm_bf16_128x256_ldg8_f2f_stages_64x3_tn"
ELEMENTWISE = "void tensorflow::functor::BlockReduceKernel<float*, float*, 256>(float*, float*, int)"
TINY = "void Eigen::internal::EigenMetaKernel<Eigen::TensorAssignOp<float>>(int)"


def details(regs, grid, block, static=0, dynamic=0, occ=None):
    text = (f"regs:{regs} static_shared:{static} dynamic_shared:{dynamic} "
            f"grid:{','.join(map(str, grid))} block:{','.join(map(str, block))}")
    return text + (f" occ_pct:{occ}" if occ is not None else "")


# ---------------------------------------------------------------------------------------------------
# Occupancy arithmetic (each expected value worked by hand from the per-SM limits)

A100 = sm_limits("Nvidia", (8, 0))
V100 = sm_limits("Nvidia", (7, 0))
T4 = sm_limits("Nvidia", (7, 5))
MI300 = sm_limits("AMD", (9, 4))


@pytest.mark.parametrize(
    "limits, threads, regs, shared, pct, limiter",
    [
        # 256 threads = 8 warps; 64 regs → 2048 per warp → 32 warps per SM → 4 blocks → 32/64 warps
        (A100, 256, 64, 0, 50.0, "registers"),
        # 32 regs → 1024 per warp → 64 warps → 8 blocks; warps allow 64/8 = 8 too: 100 %
        (A100, 256, 32, 0, 100.0, "warps"),
        # 128 threads, 48 KB + 1 KB reserved = 50176 B per block → 167936 // 50176 = 3 blocks → 12/64
        (A100, 128, 32, 48 * 1024, 18.75, "shared_memory"),
        # 32 threads: 1 warp per block, at most 32 blocks → 32/64 warps
        (A100, 32, 16, 0, 50.0, "blocks"),
        # V100, 1024 threads = 32 warps, 40 regs → 1280 per warp → 51 warps → 1 block → 32/64
        (V100, 1024, 40, 0, 50.0, "registers"),
        # T4: 32 warps per SM; 512 threads (16 warps), 32 regs → 64 warps by registers → 2 blocks → 100 %
        (T4, 512, 32, 0, 100.0, "warps"),
        # 255 regs/thread at 1024 threads cannot launch at all
        (A100, 1024, 255, 0, 0.0, "registers"),
        # MI300: wave64; 256 threads = 4 waves; 128 VGPRs → 512//128 = 4 waves/SIMD → 16/CU → 4 blocks → 16/32
        (MI300, 256, 128, 0, 50.0, "registers"),
    ],
)
def test_theoretical_occupancy_matches_hand_computation(limits, threads, regs, shared, pct, limiter):
    occ = theoretical_occupancy(limits, threads, regs, shared)
    assert occ is not None
    assert occ.pct == pytest.approx(pct, abs=1e-9)
    assert occ.limiter == limiter


def test_limits_follow_the_device_properties_when_the_profile_has_them():
    # Kineto deviceProperties as the reader names them: a 48-warp SM with 100 KB shared memory
    limits = sm_limits("Nvidia", (8, 0), {"max_threads_per_sm": 1536, "shared_memory_per_sm": 102400})
    assert limits.max_warps == 48 and limits.shared_bytes == 102400
    assert sm_limits("Nvidia", None) is None
    assert sm_limits("Nvidia", (5, 2)) is None  # older than the table: unknown, not guessed


# ---------------------------------------------------------------------------------------------------
# Per-kernel statistics


def profile_with(kernels, steps=4, step_ms=10, model="NVIDIA A100-SXM4-40GB", cc=(8, 0)):
    """`kernels` = [(name, duration_us, details_text)] launched, in order, inside each step."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    stream = b.gpu_plane(0, model=model, compute_capability=cc).line("Stream #7(Kernel)", id=7)
    for s in range(steps):
        t = T0 + s * step_ms * MS
        python.event("train", t, step_ms * MS - 1, stats={"step_num": s + 1, "_r": 1})
        k = t + 10 * US
        for name, dur_us, text in kernels:
            stream.kernel(name, k, int(dur_us * US), details=text)
            k += int(dur_us * US) + 2 * US
    return read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")


def test_launches_times_shape_and_reported_occupancy():
    gemm = details(168, (40, 8, 1), (256, 1, 1), dynamic=73728, occ=12.5)
    reduce = details(64, (108, 1, 1), (256, 1, 1))
    profile = profile_with([(BF16_GEMM, 500, gemm), (ELEMENTWISE, 100, reduce), (ELEMENTWISE, 300, reduce)])
    steps = find_steps(profile)
    out = deep_section(profile, "kernel_stats", steps)
    assert out["launches"] == 12 and out["distinct"] == 2 and out["steps"] == 4
    assert out["total_ms"] == pytest.approx(4 * 0.9, abs=1e-9)
    assert out["launches_per_step"] == pytest.approx(3.0)
    gemm_row, reduce_row = out["kernels"]
    assert gemm_row["name"] == BF16_GEMM
    assert gemm_row["launches"] == 4 and gemm_row["total_ms"] == pytest.approx(2.0)
    assert gemm_row["mean_us"] == pytest.approx(500.0) and gemm_row["min_us"] == gemm_row["max_us"] == 500.0
    assert gemm_row["time_pct"] == pytest.approx(100 * 500 / 900, abs=1e-3)
    assert gemm_row["per_step_ms"] == pytest.approx(0.5)
    assert gemm_row["launches_per_step"] == pytest.approx(1.0)
    assert gemm_row["grid"] == [40, 8, 1] and gemm_row["block"] == [256, 1, 1]
    assert gemm_row["threads_per_block"] == 256 and gemm_row["registers_per_thread"] == 168
    assert gemm_row["shared_memory_bytes"] == 73728
    # the profile's own value wins and is labelled; ours is given beside it:
    # 168 regs → 5376 per warp → 12 warps → 1 block of 8 warps → 8/64 = 12.5 %
    assert gemm_row["occupancy_pct"] == pytest.approx(12.5)
    assert gemm_row["occupancy_source"] == "profile_theoretical"
    assert gemm_row["theoretical_occupancy_pct"] == pytest.approx(12.5)
    assert gemm_row["tensor_cores"] is True and gemm_row["tensor_core_pct"] == pytest.approx(100.0)
    assert gemm_row["precision"] == "bf16" and gemm_row["family"] == "gemm"
    assert reduce_row["launches"] == 8 and reduce_row["mean_us"] == pytest.approx(200.0)
    assert reduce_row["min_us"] == pytest.approx(100.0) and reduce_row["max_us"] == pytest.approx(300.0)
    # no occ_pct in its details: computed (64 regs at 256 threads on an A100 → 50 %) and labelled so
    assert reduce_row["occupancy_pct"] == pytest.approx(50.0)
    assert reduce_row["occupancy_source"] == "computed_theoretical"
    assert reduce_row["occupancy_limiter"] == "registers"
    assert reduce_row["tensor_cores"] is False and reduce_row["tensor_core_pct"] == 0.0
    # time-weighted occupancy over both names: (12.5·2.0 + 50·1.6) / 3.6
    assert out["occupancy_pct"] == pytest.approx((12.5 * 2.0 + 50 * 1.6) / 3.6, abs=0.01)
    assert out["tensor_core_time_pct"] == pytest.approx(100 * 2.0 / 3.6, abs=0.01)
    assert out["findings"] == []  # the hot low-occupancy kernel is a GEMM: large tiles by design


def test_dominant_configuration_and_count_of_configurations():
    small = details(32, (10, 1, 1), (128, 1, 1))
    large = details(32, (1000, 1, 1), (128, 1, 1))
    profile = profile_with([(ELEMENTWISE, 50, small), (ELEMENTWISE, 400, large)], steps=2)
    (row,) = kernel_stats(profile, find_steps(profile)).to_json()["kernels"]
    assert row["configs"] == 2 and row["grid"] == [1000, 1, 1]  # the configuration with the most time


def test_low_occupancy_finding_fires_on_a_hot_non_gemm_kernel_only_below_the_threshold():
    # 256 threads, 128 regs → 4096 per warp → 16 warps → 2 blocks → 16/64 = 25 %: exactly at the threshold
    at = details(128, (108, 1, 1), (256, 1, 1))
    # 136 regs → 4352 per warp → 15 warps → 1 block → 8/64 = 12.5 %: below
    below = details(136, (108, 1, 1), (256, 1, 1))
    ids = lambda p: [f["id"] for f in deep_section(p, "kernel_stats")["findings"]]  # noqa: E731
    assert "kernels.low_occupancy" not in ids(profile_with([(ELEMENTWISE, 400, at)]))
    fired = deep_section(profile_with([(ELEMENTWISE, 400, below)]), "kernel_stats")["findings"]
    (finding,) = [f for f in fired if f["id"] == "kernels.low_occupancy"]
    assert "occupancy 13 %" in finding["evidence"]  # 12.5 %, rounded as the tab rounds it
    assert "registers" in finding["evidence"]
    # the same kernel with < 5 % of kernel time is not hot: no finding
    big = details(32, (108, 1, 1), (256, 1, 1))
    cold = profile_with([(ELEMENTWISE, 20, below), (BF16_GEMM, 1000, big)])
    assert "kernels.low_occupancy" not in [f["id"] for f in deep_findings(cold, "kernel_stats")]


def test_tiny_kernels_finding_needs_a_majority_of_launches_and_enough_of_them_per_step():
    shape = details(32, (1, 1, 1), (128, 1, 1))
    big = details(32, (108, 1, 1), (256, 1, 1))

    def fired(n_tiny, n_big):
        kernels = [(TINY, 3, shape)] * n_tiny + [(BF16_GEMM, 50, big)] * n_big
        p = profile_with(kernels, steps=2, step_ms=20)
        return [f.id for f in deep_findings(p, "kernel_stats")]

    assert "kernels.tiny_launches" in fired(th.TINY_MIN_LAUNCHES_PER_STEP, 10)
    assert "kernels.tiny_launches" not in fired(th.TINY_MIN_LAUNCHES_PER_STEP - 1, 10)  # too few per step
    many_big = th.TINY_MIN_LAUNCHES_PER_STEP + 1  # tiny kernels no longer the majority
    assert "kernels.tiny_launches" not in fired(th.TINY_MIN_LAUNCHES_PER_STEP, many_big)


def test_no_gpu_no_kernel_stats():
    b = XSpaceBuilder(hostnames=["h"])
    b.plane("/host:CPU").line("python", id=1).event("train", T0, MS, stats={"_r": 1})
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    out = deep_section(profile, "kernel_stats")
    assert out["launches"] == 0 and out["kernels"] == [] and out["occupancy_pct"] is None


def test_kernels_of_zero_duration_still_get_statistics():
    """Found by the fuzz test: a kernel name whose every launch lasts 0 ns had no launch shape."""
    b = XSpaceBuilder(hostnames=["h"])
    stream = b.gpu_plane(0).line("Stream #7(Kernel)", id=7)
    stream.kernel("zero_kernel", 1_700_000_000_000_000_000, 0)
    stream.kernel("real_kernel", 1_700_000_000_000_001_000, 5_000)
    profile = read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")
    rows = {k["name"]: k for k in kernel_stats(profile, None).to_json()["kernels"]}
    assert rows["zero_kernel"]["launches"] == 1 and rows["zero_kernel"]["total_ms"] == 0
    assert rows["zero_kernel"]["block"] == [256, 1, 1]


def test_only_the_top_names_are_listed_and_the_sums_cover_every_name(monkeypatch):
    """Past KERNEL_STATS_TOP names, rows are made for the top ones only (100,000 names are 100,000
    objects otherwise); ties in time are listed by name, and the totals, tiny-kernel and occupancy
    figures still count every name. Each figure here is worked out from the launches themselves."""
    monkeypatch.setattr(th, "KERNEL_STATS_TOP", 5)
    shape = details(32, (108, 1, 1), (256, 1, 1), occ=40)
    unreported = details(32, (108, 1, 1), (256, 1, 1))  # occupancy computed: 100 % on an A100
    # 12 names: 3 long ones (all hot: over 5 % of the time), 4 tied at 50 µs (listed by name), 5 tiny ones
    launches = [("hot_gemm", 2000, shape), ("b_long", 300, shape), ("a_long", 200, unreported)]
    launches += [(f"tie_{c}", 50, shape) for c in "dcab"]
    launches += [(f"tiny_{i}", 4, unreported) for i in range(5)]
    profile = profile_with(launches, steps=3)
    stats = kernel_stats(profile, find_steps(profile))
    out = stats.to_json(top=5)
    assert [k["name"] for k in out["kernels"]] == ["hot_gemm", "b_long", "a_long", "tie_a", "tie_b"]
    assert out["distinct"] == 12 and out["launches"] == 12 * 3
    total_us = 2000 + 300 + 200 + 4 * 50 + 5 * 4
    assert out["total_ms"] == pytest.approx(3 * total_us / 1e3, abs=1e-4)
    assert out["tiny_launch_pct"] == pytest.approx(100 * 5 / 12, abs=0.01)
    assert out["tiny_time_pct"] == pytest.approx(100 * 20 / total_us, abs=0.01)
    # occ_pct 40 reported for hot_gemm, b_long and the ties; a_long and the tiny ones at the computed 100 %
    expected_occ = (40 * (2000 + 300 + 4 * 50) + 100 * (200 + 5 * 4)) / total_us
    assert out["occupancy_pct"] == pytest.approx(expected_occ, abs=0.01)
    assert out["launches_per_step"] == pytest.approx(12.0, abs=0.01)
    # a hot name beyond the top is still listed (its finding needs its row)
    monkeypatch.setattr(th, "KERNEL_STATS_TOP", 0)
    rows = kernel_stats(profile, find_steps(profile)).kernels
    assert [k.name for k in rows] == ["hot_gemm", "b_long", "a_long"]  # 2000, 300, 200 of 2720 µs: hot


def two_gpu_profile(steps, launch):
    """A host with `steps` 10 ms steps (root markers) and two GPUs; `launch(t, streams)` adds each
    step's kernels, starting at `t`, on the GPUs' kernel streams."""
    b = XSpaceBuilder(hostnames=["h"])
    python = b.plane("/host:CPU").line("python", id=1)
    streams = [b.gpu_plane(g).line("Stream #7(Kernel)", id=7) for g in (0, 1)]
    for s in range(steps):
        t = T0 + s * 10 * MS
        python.event("train", t, 10 * MS - 1, stats={"step_num": s + 1, "_r": 1})
        launch(t, streams)
    return read_xplane_bytes(b.to_bytes(), source="synthetic", host="h")


def test_a_kernel_on_two_devices_sums_launches_and_keeps_its_dominant_shape():
    """The same names on two GPUs: launches, time and min/max span both devices, `devices` counts
    them, `configs` counts distinct launch shapes over both, and the shape with the most time wins.
    A name only seen for 0 ns on one device keeps a launch shape."""
    small, big = details(32, (10, 1, 1), (128, 1, 1)), details(32, (1000, 1, 1), (256, 1, 1))

    def step(t, streams):
        streams[0].kernel(BF16_GEMM, t + 10 * US, 100 * US, details=small)
        streams[1].kernel(BF16_GEMM, t + 10 * US, 300 * US, details=big)
        streams[1].kernel(BF16_GEMM, t + 500 * US, 50 * US, details=small)
        streams[0].kernel(TINY, t + 800 * US, 0, details=small)

    profile = two_gpu_profile(2, step)
    rows = {k["name"]: k for k in kernel_stats(profile, find_steps(profile)).to_json()["kernels"]}
    gemm, tiny = rows[BF16_GEMM], rows[TINY]
    assert gemm["launches"] == 6 and gemm["devices"] == 2 and gemm["configs"] == 2
    assert gemm["total_ms"] == pytest.approx(2 * 0.45, abs=1e-6)
    assert (gemm["min_us"], gemm["max_us"]) == (50.0, 300.0)
    assert gemm["grid"] == [1000, 1, 1]  # 600 µs on the big shape against 300 µs on the small one
    assert gemm["precision"] == "bf16"
    assert tiny["launches"] == 2 and tiny["total_ms"] == 0 and tiny["block"] == [128, 1, 1]


FUSION = "loop_convert_fusion"  # no type in its name: each launch's precision comes from its `shape`


def test_a_names_precision_is_the_one_with_the_most_time_over_every_device():
    """Per name, the precision with the most time summed over both GPUs; a tie goes to the one seen
    first (the lower device, then the lower precision code), and launches of 0 ns weigh nothing.
    Each expected precision is worked out from the launches below."""
    half, single = {"shape": "(half[64,64])"}, {"shape": "(float[64,64])"}

    def step(t, streams):
        # "tied": 40 µs fp16 on GPU 1 against 40 µs fp32 on GPU 0 → fp32 (seen first, on GPU 0)
        streams[1].kernel(f"{FUSION}_tied", t + 10 * US, 40 * US, stats=half)
        streams[0].kernel(f"{FUSION}_tied", t + 10 * US, 40 * US, stats=single)
        # "summed": fp16 30 + 30 µs over both GPUs against 50 µs fp32 on GPU 0 → fp16
        streams[0].kernel(f"{FUSION}_summed", t + 100 * US, 50 * US, stats=single)
        streams[0].kernel(f"{FUSION}_summed", t + 200 * US, 30 * US, stats=half)
        streams[1].kernel(f"{FUSION}_summed", t + 100 * US, 30 * US, stats=half)
        # "one_device_tie": 20 µs of each on GPU 1 → the lower code of the two, as PRECISIONS orders them
        streams[1].kernel(f"{FUSION}_one_device_tie", t + 300 * US, 20 * US, stats=half)
        streams[1].kernel(f"{FUSION}_one_device_tie", t + 400 * US, 20 * US, stats=single)
        # "idle": fp16 launches of 0 ns, fp32 of 5 µs → fp32; "never": only 0 ns → unknown
        streams[0].kernel(f"{FUSION}_idle", t + 500 * US, 0, stats=half)
        streams[1].kernel(f"{FUSION}_idle", t + 500 * US, 5 * US, stats=single)
        streams[0].kernel(f"{FUSION}_never", t + 600 * US, 0, stats=half)

    profile = two_gpu_profile(2, step)
    kernels = kernel_stats(profile, find_steps(profile)).to_json()["kernels"]
    rows = {k["name"]: k["precision"] for k in kernels}
    first_code = min(("fp16", "fp32"), key=PRECISIONS.index)
    assert rows == {f"{FUSION}_tied": "fp32", f"{FUSION}_summed": "fp16",
                    f"{FUSION}_one_device_tie": first_code, f"{FUSION}_idle": "fp32",
                    f"{FUSION}_never": "unknown"}


def test_the_devices_lists_of_names_are_left_as_they_are():
    """The statistics start from the first device's own list of the names its kernels use (a million
    names: no 8 MB copy); a second device's names, all new here, must not be added to that list."""
    def step(t, streams):
        streams[0].kernel(BF16_GEMM, t + 10 * US, 100 * US)
        streams[1].kernel(TINY, t + 10 * US, 5 * US)

    profile = two_gpu_profile(2, step)
    lists = [(list(d.kernels.names), list(used_kernel_names(d)[1])) for d in profile.devices]
    out = kernel_stats(profile, find_steps(profile)).to_json()
    assert {k["name"] for k in out["kernels"]} == {BF16_GEMM, TINY}
    assert [(list(d.kernels.names), list(used_kernel_names(d)[1])) for d in profile.devices] == lists


def test_two_metadata_entries_of_one_name_on_a_device_sum_into_one_row():
    """XSpace metadata may carry one name twice (entries differing in display name only): the kernels
    of both entries are one name's, on both devices, for every figure."""
    small = details(32, (10, 1, 1), (128, 1, 1))

    def step(t, streams):
        streams[0].kernel(BF16_GEMM, t + 10 * US, 100 * US, details=small)
        streams[0].event(BF16_GEMM, t + 200 * US, 60 * US, display_name="alias",
                         ref_stats={"kernel_details": small})
        streams[1].kernel(BF16_GEMM, t + 10 * US, 30 * US, details=small)

    profile = two_gpu_profile(3, step)
    assert profile.devices[0].kernels.names.count(BF16_GEMM) == 2  # two entries, one name
    stats = kernel_stats(profile, find_steps(profile)).to_json()
    (gemm,) = stats["kernels"]
    assert (gemm["launches"], gemm["devices"], gemm["configs"]) == (9, 2, 1)
    assert gemm["total_ms"] == pytest.approx(3 * 0.19, abs=1e-9)
    assert (gemm["min_us"], gemm["max_us"]) == (30.0, 100.0)
    assert gemm["per_step_ms"] == pytest.approx(0.19, abs=1e-9)  # every step's kernels, steady or not
    assert (stats["launches"], stats["distinct"]) == (9, 1)


def test_sums_taken_a_chunk_of_kernels_at_a_time_are_the_same(monkeypatch):
    """kernel_stats sums a million kernels at a time (bounded temporaries): any chunk size gives the
    same statistics as one pass."""
    from tb_plugin_advisor import lookup

    shapes = [details(32, (10, 1, 1), (128, 1, 1)), details(64, (100, 1, 1), (256, 1, 1), occ=25)]
    profile = profile_with([(BF16_GEMM, 50 + 10 * i, shapes[i % 2]) for i in range(7)] +
                           [(TINY, 3, shapes[0]), (ELEMENTWISE, 20, shapes[1])], steps=5)
    steps = find_steps(profile)
    whole = kernel_stats(profile, steps).to_json()
    for chunk in (1, 4, 13):
        monkeypatch.setattr(lookup, "ROW_CHUNK", chunk)
        assert kernel_stats(profile, steps).to_json() == whole
    assert whole["launches"] == 5 * 9 and whole["distinct"] == 3


def test_names_matched_by_hash_give_what_a_dict_of_names_gives(monkeypatch):
    """Each name's row is found by its hash (numpy, no dict of a million names) and checked by name; a
    hash shared by two different names falls back to a dict. On two GPUs sharing some names and not
    others — one name per launch shape, and one launched two ways — every path gives the same rows."""
    from tb_plugin_advisor.analysis.deep import kernel_stats as ks

    small, big = details(32, (10, 1, 1), (128, 1, 1)), details(32, (1000, 1, 1), (256, 1, 1))

    def step(t, streams):
        streams[0].kernel(BF16_GEMM, t + 10 * US, 100 * US, details=small)
        streams[0].kernel(ELEMENTWISE, t + 200 * US, 30 * US, details=small)
        streams[1].kernel(ELEMENTWISE, t + 10 * US, 40 * US, details=big)
        streams[1].kernel(TINY, t + 100 * US, 5 * US, details=small)
        streams[1].kernel(TINY, t + 200 * US, 7 * US, details=big)

    profile = two_gpu_profile(3, step)
    steps = find_steps(profile)
    by_hash = kernel_stats(profile, steps).to_json()
    rows = {k["name"]: k for k in by_hash["kernels"]}
    assert rows[ELEMENTWISE]["devices"] == 2 and rows[ELEMENTWISE]["launches"] == 6
    assert rows[TINY]["configs"] == 2 and rows[BF16_GEMM]["devices"] == 1
    assert by_hash["distinct"] == 3

    def colliding(c, used_names):  # as if two names had met on one hash
        raise ks._HashCollision

    monkeypatch.setattr(ks, "_name_rows", colliding)
    assert kernel_stats(profile, steps).to_json() == by_hash


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("width, names", [(3, 50), (40, 5000), (2, 40_000)])
def test_pair_sums_equal_a_sum_per_pair(seed, width, names):
    """Per (name, launch shape or precision) pair with time: the dense sums, the per-name sums of names
    launched one way, and the grouping of the others all give what one dict per pair gives, ordered
    by name then key; pairs that sum to 0 ns are left out."""
    rng = np.random.default_rng(seed)
    count = 3000
    first = rng.integers(0, names, size=count).astype(np.int32)
    other = rng.integers(0, width, size=count)  # a second launch shape for some kernels
    second = np.where(rng.random(count) < 0.3, other, first % width).astype(np.int32)
    weights = np.where(rng.random(count) < 0.1, 0, rng.integers(1, 10**9, size=count)).astype(np.int64)
    expected = {}
    for f, s, w in zip(first.tolist(), second.tolist(), weights.tolist()):
        expected[(f, s)] = expected.get((f, s), 0) + w
    expected = sorted((f, s, w) for (f, s), w in expected.items() if w)
    got = _pair_sums(first, second, width, weights)
    assert list(zip(*(column.tolist() for column in got))) == expected


@pytest.mark.parametrize("seed", range(30))
def test_hot_names_are_counted_as_the_float_shares_would_count_them(seed):
    """The bound of the hot names against the share computed per name in float, at and around it."""
    r = np.random.default_rng(seed)
    whole = int(r.integers(1, 10 ** int(r.integers(1, 17))))
    pct = float(r.choice([th.HOT_KERNEL_PCT, 0.1, 1.0, 33.3, 100.0, 7.0 / 3.0]))
    exact = int(pct * whole / 100)
    times = np.concatenate([r.integers(0, whole + 1, 200),
                            np.clip(exact + np.arange(-3, 4), 0, whole)]).astype(np.int64)
    bound = _least_share(whole, pct, int(times.max()))
    assert np.array_equal(times >= bound, 100.0 * times / whole >= pct)
