"""16-bit on a CPU, claimed only with evidence: the profile's own native kernels lower the warning, the
machine running the Advisor never does — whatever its host name or flags. The bundled sample's run3
(bf16, 8x slower than fp32 where it was captured, on a host named 'vm') stays high on any machine."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest
from paths import SAMPLE_LOGDIR

from tb_plugin_advisor.analysis.classify.onednn_ops import NATIVE_16BIT_KERNELS
from tb_plugin_advisor.analysis.precision.cpu_16bit import LOCAL_CPU_ABOUT
from tb_plugin_advisor.model import RunProfiles
from tb_plugin_advisor.readers.kineto.reader import read_kineto
from tb_plugin_advisor.report import analyze
from tb_plugin_advisor.report.run import build_report
from tb_plugin_advisor.sources.local_cpu import GENERIC_HOST_NAMES, LocalCpu, is_generic_host_name
from tb_plugin_advisor.views.cli.main import main

SAMPLE = SAMPLE_LOGDIR
XEON_WITH_AMX = frozenset(["avx2", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile"])


def cli_report(capsys, run: str) -> Dict[str, Any]:
    assert main(["report", str(SAMPLE), "--run", run, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def finding(report: Dict[str, Any]) -> Dict[str, Any]:
    return next(r for r in report["recommendations"] if r["id"] == "precision.cpu_16bit")


@pytest.mark.parametrize("flags", [XEON_WITH_AMX, frozenset(["avx2"]), None])
def test_run3_stays_medium_through_the_cli_on_any_machine_named_vm(capsys, monkeypatch, flags):
    """The report's own path to the local CPU, replaced by a machine that shares the capturing host's
    name (the sample was captured on 'vm'), with native bf16, without it, or unreadable."""
    monkeypatch.setattr(analyze, "read_local_cpu", lambda: LocalCpu("vm", flags))
    report = cli_report(capsys, "run3_mixed")
    fired = finding(report)
    assert fired["severity"] == "medium", fired  # never lowered by the local machine, never priced
    assert fired["expected_gain"]["ms_per_step"] is None
    assert LOCAL_CPU_ABOUT in fired["evidence"] and "'vm' (a name many machines share)" in fired["evidence"]
    cpu = report["cpu_16bit"]
    assert cpu["native"] is None and cpu["native_source"] is None and cpu["profile_kernels"] == []
    assert cpu["local_cpu"]["host"] == "vm" and cpu["local_cpu"]["same_host_name"] is True
    assert cpu["local_cpu"]["flags_read"] is (flags is not None)


def test_run3_text_export_says_which_cpu_the_flags_belong_to(capsys, monkeypatch):
    monkeypatch.setattr(analyze, "read_local_cpu", lambda: LocalCpu("vm", XEON_WITH_AMX))
    assert main(["report", str(SAMPLE), "--run", "run3_mixed", "--format", "text"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "[MEDIUM] bf16/fp16 on a CPU" in text
    assert "not necessarily the one that captured this profile" in text
    assert "fine" not in text.split("[MEDIUM] bf16/fp16 on a CPU")[1].split("[")[0]


# ---------------------------------------------------------------------------------------------------
# What does lower it: native 16-bit kernels named in the profile itself. The real bf16 trace
# torch.profiler wrote in this session, with one oneDNN kernel range added where the truth is set.


def bf16_report(torch_traces, tmp_path: Path, extra_name: str = "") -> Dict[str, Any]:
    source = torch_traces.trace("bf16")
    document = json.loads(source.read_text())
    if extra_name:
        first = next(e for e in document["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op")
        document["traceEvents"].append({**first, "name": extra_name, "cat": "user_annotation", "args": {}})
    path = tmp_path / "bf16" / source.name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    profile = read_kineto(str(path))
    local = LocalCpu(profile.host, frozenset(["avx2"]))  # same name, no native bf16: still not evidence
    return build_report(RunProfiles(run="bf16", profiles=[profile]), local_cpu=local).to_json()


def test_the_real_bf16_trace_without_native_kernels_is_medium_without_a_gain(torch_traces, tmp_path):
    report = bf16_report(torch_traces, tmp_path)
    assert report["cpu_16bit"]["dtype"] == "bf16" and report["cpu_16bit"]["native"] is None
    fired = finding(report)
    assert fired["severity"] == "medium" and fired["expected_gain"]["ms_per_step"] is None


@pytest.mark.parametrize("kernel", ["brg_matmul:avx512_core_amx", "jit:avx512_core_bf16"])
def test_a_native_bf16_kernel_in_the_profile_makes_it_low(torch_traces, tmp_path, kernel):
    report = bf16_report(torch_traces, tmp_path, kernel)
    cpu = report["cpu_16bit"]
    assert cpu["native"] is True and cpu["native_source"] == "profile" and cpu["profile_kernels"] == [kernel]
    fired = finding(report)
    assert fired["severity"] == "low" and "the profile itself shows native bf16 kernels" in fired["evidence"]
    assert fired["expected_gain"]["ms_per_step"] is None  # native: float32 would not be faster


def test_an_fp16_kernel_is_no_evidence_for_bf16(torch_traces, tmp_path):
    report = bf16_report(torch_traces, tmp_path, "jit:avx512_core_fp16")
    assert report["cpu_16bit"]["native"] is None and finding(report)["severity"] == "medium"


@pytest.mark.parametrize("dtype, name, matches", [
    ("bf16", "brg:avx512_core_amx", True),
    ("bf16", "jit:avx512_core_bf16", True),
    ("bf16", "jit:avx512_core", False),
    ("bf16", "jit:avx2", False),
    ("fp16", "brgconv:avx512_core_amx_fp16", True),
    ("fp16", "jit:avx512_core_fp16", True),
    ("fp16", "brg:avx512_core_amx", False),
])
def test_native_kernel_table(dtype, name, matches):
    assert bool(NATIVE_16BIT_KERNELS[dtype].search(name)) == matches


GENERIC_CASES = [
    ("loopback", "localhost"),
    ("image_default", "vm"),
    ("image_default", "ubuntu"),
    ("container_id", "3f2a9c1b7d4e"),
    ("generated", "runner"),
]


@pytest.mark.parametrize("key, name", GENERIC_CASES)
def test_every_generic_host_name_entry(key, name):
    assert GENERIC_HOST_NAMES[key].match(name) and is_generic_host_name(name)


def test_every_generic_host_name_entry_has_a_case():
    assert {key for key, _ in GENERIC_CASES} == set(GENERIC_HOST_NAMES)


@pytest.mark.parametrize("name", ["gpu-node-17.cluster.example", "3F2A9C1B7D4E0", "vmware-host", "", None])
def test_specific_host_names_are_not_generic(name):
    assert not is_generic_host_name(name)
