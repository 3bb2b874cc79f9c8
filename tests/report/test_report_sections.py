"""report/sections.py's table and report/combine.py's poolings: the table names every key of the report
in the order the JSON writes it, each key is in the report's shape (report/schema.py), and each
pooling does what its name says, checked on a synthetic pod against the hosts' own reports."""

from __future__ import annotations

import gzip
import json
from typing import Any, Callable, Dict, List

import msgspec
import pytest
from paths import TESTS
from pod_synth import SESSION, even_pod, write_pod

from tb_plugin_advisor.report import combine
from tb_plugin_advisor.report import schema as shape
from tb_plugin_advisor.report.combine import Pool
from tb_plugin_advisor.report.host import HostReport
from tb_plugin_advisor.report.run import Report, build_report
from tb_plugin_advisor.report.sections import SECTIONS, VIEWS
from tb_plugin_advisor.sources.discovery import scan_logdir
from tb_plugin_advisor.sources.runs import find_run, load_run

GOLDEN = TESTS / "golden"
ENVELOPE = ("schema", "run", "hosts")


def _golden(name: str) -> Dict[str, Any]:
    text = gzip.decompress((GOLDEN / name).read_bytes()).decode().split("\n--- exit")[0]
    return json.loads(text)


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    """A run of four hosts: worker2 slow, worker1 waiting for input; its HostReports, pooled JSON and
    each host's own report JSON."""
    logdir = tmp_path_factory.mktemp("pod")
    write_pod(logdir, "job", even_pod(4, slow=["worker2"], input_heavy=["worker1"]))
    report = build_report(load_run(find_run(scan_logdir(str(logdir)), f"job/{SESSION}")))
    own = {r.host: Report(report.run, [r.host], [r]).to_json() for r in report.host_reports}
    return report.host_reports, report.to_json(), own


def test_the_table_writes_the_keys_of_a_one_host_report_in_order():
    report = _golden("sample__report.run1_naive.json.gz")
    keys = [s.key for s in SECTIONS if not s.several_hosts]
    assert list(report) == [*ENVELOPE, *keys, "host"]


def test_the_table_writes_the_keys_of_a_pooled_report_in_order():
    report = _golden("synthetic__report.pod.json.gz")
    assert list(report) == [*ENVELOPE, *(s.key for s in SECTIONS), "host"]


def test_every_key_is_in_the_report_shape():
    fields = {f.name for f in msgspec.structs.fields(shape.Report)}
    assert {s.key for s in SECTIONS} <= fields


def test_every_pooling_is_named_and_every_section_has_one_source():
    for section in SECTIONS:
        assert section.pooling.said.strip(), section.key
        if not section.several_hosts:
            assert (section.analyse is None) != (section.read is None), section.key
    with pytest.raises(ValueError):
        type(SECTIONS[0])("x", combine.FRAMEWORK, str)  # neither where a host's value comes from


def test_the_views_are_the_deeper_sections_and_the_validity_matrix():
    assert VIEWS == {"kernels": "kernel_stats", "memory": "memory", "collectives": "collectives",
                     "roofline": "roofline", "validity": "validity"}
    assert all(s.findings is not None for s in SECTIONS if s.view and s.key != "validity")


# -- each pooling, on the pod --------------------------------------------------------------------------

Check = Callable[[List[HostReport], Dict[str, Any], Dict[str, Dict[str, Any]]], None]


def _by(reports: List[HostReport], key: Callable[[HostReport], float]) -> str:
    return max(reports, key=key).host


def _steps(reports, pooled, own):
    steps = pooled["steps"]
    assert steps["count"] == sum(o["steps"]["count"] for o in own.values())
    assert steps["hosts_count"] == {h: o["steps"]["count"] for h, o in own.items()}
    assert [row["host"] for row in steps["per_step"]] == [h for h in own for _ in own[h]["steps"]["per_step"]]


def _breakdown(key: str) -> Check:
    def check(reports, pooled, own):
        rows = [row for row in pooled["steps"]["per_step"] if not row["warmup"]]
        mean_input = sum(row["breakdown_ms"]["input"] for row in rows) / len(rows)
        assert set(pooled[key]) == set(next(iter(own.values()))[key])
        if key == "breakdown_ms":
            assert abs(pooled[key]["input"] - mean_input) < 0.01
        else:
            assert abs(sum(pooled[key].values()) - 100.0) < 0.1
    return check


def _verdict(reports, pooled, own):
    # decided on the pooled numbers: its input share is the pooled breakdown's
    assert abs(pooled["verdict"]["input_pct"] - pooled["breakdown_pct"]["input"]) < 0.01


def _slowest_input(key: str) -> Check:
    def check(reports, pooled, own):
        host = _by(reports, lambda r: r.breakdown.mean_ms()["input"])
        assert host == "worker1" and pooled[key] == own[host][key]
    return check


def _most_compute(reports, pooled, own):
    weights = combine.compute_weights(reports)
    host = reports[weights.index(max(weights))].host
    assert pooled["precision"] == own[host]["precision"]


def _precision_pct(reports, pooled, own):
    weights = combine.compute_weights(reports)
    for precision, pct in pooled["precision_pct"].items():
        expected = sum(o["precision_pct"].get(precision, 0.0) * w for o, w in zip(own.values(), weights))
        assert abs(pct - expected / sum(weights)) < 0.01, precision


def _tensor_cores(reports, pooled, own):
    weights = combine.compute_weights(reports)
    expected = sum(o["tensor_cores"]["device_time_pct"] * w for o, w in zip(own.values(), weights))
    assert abs(pooled["tensor_cores"]["device_time_pct"] - expected / sum(weights)) < 0.01


def _recommendations(reports, pooled, own):
    fired = {x["id"] for o in own.values() for x in o["recommendations"]}
    assert {x["id"] for x in pooled["recommendations"]} == fired
    for x in pooled["recommendations"]:
        hosts = [h for h, o in own.items() if x["id"] in {y["id"] for y in o["recommendations"]}]
        assert x["evidence"].endswith(f"(hosts: {', '.join(hosts)})")


def _rows(key: str) -> Check:
    def check(reports, pooled, own):
        names = {row["name"] for o in own.values() for row in o[key]}
        assert pooled[key] and {row["name"] for row in pooled[key]} <= names
        times = [row["time_ms"] for row in pooled[key]]
        assert times == sorted(times, reverse=True)
    return check


def _devices(reports, pooled, own):
    assert pooled["devices"] == [d for o in own.values() for d in o["devices"]]


def _device_peak(reports, pooled, own):
    assert combine.DEVICE_PEAK.pool([None, 5, 3, None], Pool(reports)) == 5
    assert combine.DEVICE_PEAK.pool([None] * 4, Pool(reports)) is None


def _allocator_peaks(reports, pooled, own):
    peaks = combine.ALLOCATOR_PEAKS.pool([{"GPU_0_bfc": 1}, {}, {"GPU_0_bfc": 2}, {}], Pool(reports))
    assert peaks == {f"{reports[0].host}:GPU_0_bfc": 1, f"{reports[2].host}:GPU_0_bfc": 2}


def _first_host(reports, pooled, own):
    assert pooled["framework"] == own[reports[0].host]["framework"]


def _largest_share(key: str, share: Callable[[HostReport], float]) -> Check:
    def check(reports, pooled, own):
        assert pooled[key] == own[_by(reports, share)][key]
    return check


def _cpu_16bit(reports, pooled, own):
    assert combine.CPU_16BIT.pool([None, "a", "b", None], Pool(reports)) == "a"
    assert pooled["cpu_16bit"] is None and all(o["cpu_16bit"] is None for o in own.values())  # GPU hosts


def _profile(reports, pooled, own):
    assert pooled["profile"] == [o["profile"] for o in own.values()]


def _per_host(reports, pooled, own):
    assert [row["host"] for row in pooled["per_host"]] == list(own)
    assert {row["host"] for row in pooled["per_host"] if row["straggler"]} == {"worker1", "worker2"}


def _stragglers(reports, pooled, own):
    assert {(s["host"], s["metric"]) for s in pooled["stragglers"]} == {("worker2", "step_time"),
                                                                        ("worker1", "input")}


def _warnings(reports, pooled, own):
    expected = [f"{h}: {w}" for h, o in own.items() for w in o["warnings"]]
    assert pooled["warnings"] == expected


def _validity(reports, pooled, own):
    """Per analysis the most severe status of any host, each reason naming the hosts it holds on."""
    order = ("supported", "degraded", "unsupported")
    rows = {r["analysis"]: r for r in pooled["validity"]["rows"]}
    assert rows.pop("multi_host")["status"] in order  # the run's own row (no host has it)
    assert set(pooled["validity"]["clock_offset_us"]) == set(own)
    for analysis, row in rows.items():
        statuses = [next(x["status"] for x in o["validity"]["rows"] if x["analysis"] == analysis)
                    for o in own.values()]
        assert row["status"] == max(statuses, key=order.index)
        for host, o in own.items():
            own_row = next(x for x in o["validity"]["rows"] if x["analysis"] == analysis)
            if own_row["reason"]:  # each reason once, after the hosts it holds on
                assert own_row["reason"] in row["reason"] and host in row["reason"]
    assert [h["host"] for h in pooled["validity"]["hosts"]] == list(own)


def _kernel_stats(reports, pooled, own):
    ks = pooled["kernel_stats"]
    assert ks["launches"] == sum(o["kernel_stats"]["launches"] for o in own.values())
    assert [row["host"] for row in ks["per_host"]] == list(own)
    assert all(row["hosts"] for row in ks["kernels"])


def _memory(reports, pooled, own):
    allocators = pooled["memory"]["allocators"]
    assert len(allocators) == sum(len(o["memory"]["allocators"]) for o in own.values())
    assert all("host" in a for a in allocators)


def _collectives(reports, pooled, own):
    assert pooled["collectives"]["calls"] == sum(o["collectives"]["calls"] for o in own.values())


def _roofline(reports, pooled, own):
    roof = pooled["roofline"]
    assert [row["host"] for row in roof.get("per_host", [])] in ([], [r.host for r in reports if own[
        r.host]["roofline"]["ops"]], list(own))


CHECKS: Dict[str, Check] = {
    "steps": _steps,
    "breakdown_ms": _breakdown("breakdown_ms"),
    "breakdown_pct": _breakdown("breakdown_pct"),
    "verdict": _verdict,
    "input_pipeline": _slowest_input("input_pipeline"),
    "precision_pct": _precision_pct,
    "precision": _most_compute,
    "tensor_cores": _tensor_cores,
    "recommendations": _recommendations,
    "ops": _rows("ops"),
    "kernels": _rows("kernels"),
    "devices": _devices,
    "peak_memory_bytes": _device_peak,
    "memory_peak_bytes_by_allocator": _allocator_peaks,
    "framework": _first_host,
    "preprocessing": _largest_share("preprocessing", lambda r: r.values["preprocessing"].share_pct),
    "host_sync": _largest_share("host_sync", lambda r: r.values["host_sync"].time_pct),
    "cpu_16bit": _cpu_16bit,
    "profile": _profile,
    "per_host": _per_host,
    "stragglers": _stragglers,
    "warnings": _warnings,
    "validity": _validity,
    "kernel_stats": _kernel_stats,
    "memory": _memory,
    "collectives": _collectives,
    "roofline": _roofline,
}


def test_every_section_s_pooling_is_checked():
    assert list(CHECKS) == [s.key for s in SECTIONS]


@pytest.mark.parametrize("key", list(CHECKS))
def test_the_pooling_does_what_its_name_says(pod, key):
    reports, pooled, own = pod
    CHECKS[key](reports, pooled, own)


def test_one_host_is_its_own_value(pod):
    reports, _pooled, own = pod
    alone = own[reports[0].host]
    assert "per_host" not in alone and "stragglers" not in alone
    assert alone["input_pipeline"] == reports[0].input_pipeline.to_json()
    assert alone["profile"] == {"host": reports[0].host, "path": reports[0].path,
                                "size_bytes": reports[0].size_bytes}
