"""CPU-host findings on the bundled sample (read-only) with the CPU flags injected, never this
machine's: bf16 on a CPU without native 16-bit math (run3), preprocessing competing with training
(run2, run4)."""

from __future__ import annotations

import pytest
from paths import SAMPLE_LOGDIR

from tb_plugin_advisor.analysis import thresholds as th
from tb_plugin_advisor.analysis.precision.cpu_16bit import NATIVE_16BIT_FLAGS, assess_cpu_16bit
from tb_plugin_advisor.analysis.precision.result import PrecisionResult
from tb_plugin_advisor.analysis.step_time.preprocessing import PREPROCESSING_OPS, preprocessing_op
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.xplane.reader import read_xplane
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.local_cpu import LocalCpu, parse_cpuinfo

SAMPLE = SAMPLE_LOGDIR
EPYC_WITHOUT_BF16 = frozenset(["fpu", "sse2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni"])
XEON_WITH_AMX = frozenset(
    ["avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile", "amx_int8"]
)


def sample_report(run: str, local_cpu: LocalCpu) -> dict:
    (path,) = sorted((SAMPLE / run).rglob("*.xplane.pb"))
    profile = read_xplane(str(path))
    return build_report(RunProfiles(run=run, profiles=[profile]), local_cpu=local_cpu).to_json()


def rec(report: dict, rule_id: str):
    return next((r for r in report["recommendations"] if r["id"] == rule_id), None)


def test_run3_bf16_on_a_cpu_without_native_bf16_is_medium_and_unpriced():
    """The profile cannot tell emulated 16-bit math (float32 would be faster) from native math
    (float32 would be slower): the finding asks the user to check and claims no gain."""
    report = sample_report("run3_mixed", LocalCpu("vm", EPYC_WITHOUT_BF16))
    finding = rec(report, "precision.cpu_16bit")
    assert finding is not None and finding["severity"] == "medium", report["recommendations"]
    assert "avx512_bf16" in finding["evidence"] and "emulated" in finding["evidence"]
    assert "tb-advisor diff" in finding["evidence"] and "lscpu" in finding["snippet"]
    gain = finding["expected_gain"]
    assert gain["ms_per_step"] is None and gain["pct"] is None
    assert "cannot show whether this CPU ran" in gain["basis"]
    cpu = report["cpu_16bit"]
    assert cpu["dtype"] == "bf16" and cpu["native"] is None and cpu["checked"] == "same_host_name"
    assert cpu["share_pct"] >= th.CPU_16BIT_DOMINANT_PCT


def test_run3_on_a_machine_with_amx_that_shares_the_capturing_hosts_name_stays_medium():
    """A host-name match alone never lowers the warning: run3 was captured on a 'vm' without
    AVX512-BF16 (8x slower than fp32), and any machine may be named 'vm'."""
    report = sample_report("run3_mixed", LocalCpu("vm", XEON_WITH_AMX))
    finding = rec(report, "precision.cpu_16bit")
    assert finding["severity"] == "medium" and "fine" not in finding["evidence"]
    assert "a host name does not make it the capturing machine" in finding["evidence"]
    assert "(a name many machines share)" in finding["evidence"]
    cpu = report["cpu_16bit"]
    assert cpu["native"] is None and cpu["native_flags"] == ["amx_bf16", "avx512_bf16"]
    assert cpu["local_cpu"]["about"].startswith("the machine running the Advisor, not necessarily")
    assert cpu["local_cpu"]["same_host_name"] and cpu["local_cpu"]["generic_host_name"]


def test_run3_read_on_another_host_says_its_flags_say_nothing():
    report = sample_report("run3_mixed", LocalCpu("laptop", XEON_WITH_AMX))
    finding = rec(report, "precision.cpu_16bit")
    assert finding["severity"] == "medium" and "say nothing about it" in finding["evidence"]
    assert "not necessarily the one that captured this profile" in finding["evidence"]
    assert report["cpu_16bit"]["native"] is None and report["cpu_16bit"]["checked"] == "other_host"
    unreadable = sample_report("run3_mixed", LocalCpu("vm", None))
    assert unreadable["cpu_16bit"]["checked"] == "unreadable"


@pytest.mark.parametrize("run", ["run1_naive", "run2_parallel", "run4_custom_loop"])
def test_fp32_runs_have_no_16bit_finding(run):
    report = sample_report(run, LocalCpu("vm", EPYC_WITHOUT_BF16))
    assert report["cpu_16bit"] is None and rec(report, "precision.cpu_16bit") is None


@pytest.mark.parametrize("run", ["run2_parallel", "run4_custom_loop"])
def test_preprocessing_competing_with_training_is_reported(run):
    report = sample_report(run, LocalCpu("vm", EPYC_WITHOUT_BF16))
    pre = report["preprocessing"]
    assert pre["share_of_step_pct"] >= th.PREPROCESSING_HIGH_PCT, pre
    ops = [o["op"] for o in pre["ops"]]
    assert {"DecodePng", "AdjustSaturation"} <= set(ops[:3]), ops
    finding = rec(report, "input.preprocessing")
    assert finding is not None and finding["severity"] == "high", report["recommendations"]
    assert "DecodePng" in finding["evidence"] and "AdjustSaturation" in finding["evidence"]
    assert "Cache" in finding["message"] and "offline" in finding["message"]


def test_preprocessing_below_threshold_is_not_recommended():
    report = sample_report("run3_mixed", LocalCpu("vm", XEON_WITH_AMX))
    assert report["preprocessing"]["share_of_step_pct"] < th.PREPROCESSING_STEP_PCT
    assert rec(report, "input.preprocessing") is None


@pytest.mark.parametrize("op", sorted(PREPROCESSING_OPS))
def test_every_preprocessing_op_counts_where_its_entry_says(op):
    assert preprocessing_op(op, on_input_thread=True)
    assert preprocessing_op(op, on_input_thread=False) == (PREPROCESSING_OPS[op][1] == "anywhere")
    assert not preprocessing_op("Conv2D", True) and not preprocessing_op("MatMul", False)


@pytest.mark.parametrize("dtype, flags", sorted(NATIVE_16BIT_FLAGS.items()))
def test_a_local_flag_is_quoted_but_never_makes_a_type_native(dtype, flags):
    for flag in flags:
        result = PrecisionResult(basis="host")
        result.time_ns[dtype] = 90
        result.time_ns["fp32"] = 10
        found = assess_cpu_16bit(result, "", "h", "h", frozenset({flag}))
        assert found.dtype == dtype and found.native is None and found.native_flags == [flag]
        other = "fp16" if dtype == "bf16" else "bf16"
        assert assess_cpu_16bit(result, "", "h", "h", frozenset(NATIVE_16BIT_FLAGS[other])).native_flags == []
        assert assess_cpu_16bit(result, "GPU", "h", "h", frozenset({flag})) is None


def test_cpuinfo_flags_are_parsed():
    text = "processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t\t: fpu avx512_bf16 avx2\n\nprocessor\t: 1\n"
    assert parse_cpuinfo(text) == (frozenset({"fpu", "avx512_bf16", "avx2"}), "AMD EPYC 9B14")
    assert parse_cpuinfo("") == (None, "")
