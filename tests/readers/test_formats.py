"""readers/formats/: every format's descriptor, entry by entry — the names it claims and the hosts they
give, the file each reader reads and the Profile.format it sets, its content check, its span
coordinates — and the registry's answers, on files written here."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth import XSpaceBuilder
from synth_kineto import training_trace

from tb_plugin_advisor.errors import ProfileReadError
from tb_plugin_advisor.readers.formats.descriptor import (
    NAMED,
    PERFETTO,
    RUN_DIRECTORY,
    SESSION_DIRECTORY,
    SNIFFED,
    TRACE_VIEWER,
)
from tb_plugin_advisor.readers.formats.legacy import LEGACY_SUFFIXES, legacy_host
from tb_plugin_advisor.readers.formats.registry import (
    FORMATS,
    claiming,
    file_format,
    file_patterns,
    format_named,
    is_analysed,
    span_coordinates,
    what_the_advisor_reads,
    where_profiles_live,
)

XSPACE, KINETO, LEGACY = (format_named(i) for i in ("xplane", "kineto", "legacy"))


def _xspace(path: Path) -> Path:
    builder = XSpaceBuilder(hostnames=["tfhost"])
    builder.plane("/host:CPU").line("python", id=1).event("train", 1_700_000_000_000_000_000, 1000)
    return builder.write(path)


def _pieces(path: Path):
    data = path.read_bytes()
    return iter([data[i : i + 4096] for i in range(0, len(data), 4096)])


def test_every_format_is_registered_once_with_a_known_layout():
    ids = [f.id for f in FORMATS]
    assert len(set(ids)) == len(ids) and None not in (XSPACE, KINETO, LEGACY)
    assert all(f.layout in (SESSION_DIRECTORY, RUN_DIRECTORY) for f in FORMATS)
    for f in FORMATS:  # each layout has what it needs to make sessions
        assert (f.host_of is not None) == (f.layout == SESSION_DIRECTORY), f.id
        assert (f.group is not None) == (f.layout == RUN_DIRECTORY), f.id
    assert format_named("unknown") is None and format_named("") is None


@pytest.mark.parametrize("name, fmt, host", [
    ("10.0.0.1.xplane.pb", "xplane", "10.0.0.1"),
    (".xplane.pb", "xplane", ""),
    ("w0.1700000001000.pt.trace.json.gz", "kineto", None),
    ("w0.pt.trace.json", "kineto", None),
    ("h.trace.json.gz", "legacy", "h"),
    ("10.0.0.1.overview_page.pb", "legacy", "10.0.0.1"),
    ("events.out.tfevents.1.h.v2", None, None),
    ("trace.json", None, None),
])
def test_a_name_belongs_to_the_first_format_that_claims_it(name, fmt, host):
    found = claiming(name)
    assert (found.id if found else None) == fmt
    if found is not None and found.host_of is not None:
        assert found.host_of(name) == host


def test_every_legacy_suffix_names_a_host_and_no_other_file():
    for suffix in LEGACY_SUFFIXES:
        assert legacy_host("10.1.2.3" + suffix) == "10.1.2.3"
        assert claiming("10.1.2.3" + suffix) is LEGACY
    assert legacy_host("host.xplane.pb") is None and legacy_host(".trace") is None


@pytest.mark.parametrize("name, fmt, host", [
    ("h1.xplane.pb", "xplane", "h1"),
    ("w0.1700000001000.pt.trace.json", "kineto", "w0"),
    ("exported.json.gz", "kineto", "exported"),  # export_chrome_trace: any name
    ("notes.txt", None, None),
    ("h.overview_page.pb", None, None),  # listed, never read
])
def test_a_file_named_on_the_command_line(name, fmt, host):
    found = file_format(name)
    if fmt is None:
        assert found is None
    else:
        assert (found[0].id, found[1]) == (fmt, host)


def test_only_formats_with_a_reader_are_analysed():
    assert is_analysed("xplane") and is_analysed("kineto")
    assert not is_analysed("legacy") and not is_analysed("unknown")
    assert LEGACY.not_read_because and "{files}" in LEGACY.not_read_because
    for f in FORMATS:
        if f.analysed:
            assert f.reads_what in what_the_advisor_reads() and f.where_written in where_profiles_live()
            assert f.file_pattern in file_patterns()
            assert f.check_content is not None and f.spans is not None
        else:
            assert f.file_pattern not in file_patterns()


def test_each_reader_reads_its_format_and_says_so(tmp_path):
    xspace = XSPACE.read(str(_xspace(tmp_path / "tfhost.xplane.pb")), None, None)
    trace = training_trace(steps=2).write(tmp_path / "w0.1700000001000.pt.trace.json")
    kineto = KINETO.read(str(trace), "w0", None)
    assert (xspace.format, xspace.host) == ("xplane", "tfhost")
    assert (kineto.format, kineto.host, kineto.framework) == ("kineto", "w0", "pytorch")
    seen = []
    XSPACE.read(str(tmp_path / "tfhost.xplane.pb"), "h", lambda done, total: seen.append(done))
    assert seen and seen[-1] == (tmp_path / "tfhost.xplane.pb").stat().st_size


def test_each_content_check_passes_its_own_files_and_refuses_the_others(tmp_path):
    xspace = _xspace(tmp_path / "h.xplane.pb")
    trace = training_trace(steps=2).write(tmp_path / "w.1700000001000.pt.trace.json")
    XSPACE.check_content(_pieces(xspace), str(xspace))
    KINETO.check_content(_pieces(trace), str(trace))
    with pytest.raises(ProfileReadError, match="not a PyTorch profiler trace"):
        KINETO.check_content(_pieces(xspace), str(xspace))
    with pytest.raises(ProfileReadError):
        XSPACE.check_content(_pieces(trace), str(trace))


def test_span_coordinates_are_told_apart_by_their_label():
    assert span_coordinates("xspace") is XSPACE.spans and span_coordinates("kineto") is KINETO.spans
    assert span_coordinates("nsys") is None
    assert (XSPACE.spans.as_written, XSPACE.spans.id_names, XSPACE.spans.viewer) == (
        False, ("plane", "line"), TRACE_VIEWER)
    assert (KINETO.spans.as_written, KINETO.spans.id_names, KINETO.spans.viewer) == (
        True, ("pid", "tid"), PERFETTO)
    labels = [f.spans.label for f in FORMATS if f.spans]
    assert len(set(labels)) == len(labels)


def test_files_outside_the_layout_are_found_as_the_format_says(tmp_path):
    assert XSPACE.outside_layout.found_by == NAMED and XSPACE.outside_layout.host_of is None
    outside = KINETO.outside_layout
    assert outside.found_by == SNIFFED
    trace = training_trace(steps=2).write(tmp_path / "exported.json")
    (tmp_path / "other.json").write_text('{"a": 1}')
    assert outside.host_of("exported.json") == "exported" and outside.host_of("x.pb") is None
    assert outside.sniff(str(trace)) and not outside.sniff(str(tmp_path / "other.json"))
    assert LEGACY.outside_layout is None


def test_every_doctor_check_a_format_names_exists_and_every_check_is_named():
    from tb_plugin_advisor.sources.doctor.checks import FORMAT_CHECKS
    from tb_plugin_advisor.sources.doctor.findings import FINDINGS

    named = set()
    for f in FORMATS:
        checks = list(f.doctor_checks) + ([f.outside_layout.finding] if f.outside_layout else [])
        assert len(set(checks)) == len(checks), f.id
        named.update(checks)
    assert named == set(FORMAT_CHECKS)  # no check without a format, no format naming a missing check
    assert named <= set(FINDINGS)  # each check adds the finding of its name (words in findings.py)


def test_fix_logdir_names_the_files_outside_their_layout_in_each_formats_words(tmp_path, capsys):
    from tb_plugin_advisor.views.cli.main import main

    _xspace(tmp_path / "stray" / "h.xplane.pb")
    training_trace(steps=2).write(tmp_path / "exports" / "run.json")
    assert main(["fix-logdir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert ("note: 1 directory holds .xplane.pb files outside plugins/profile/<session>/; "
            "`tb-advisor doctor` shows how to move them.") in out
    assert ("note: 1 directory holds PyTorch traces not named <worker>.<timestamp>.pt.trace.json; "
            "`tb-advisor doctor` shows how to rename them.") in out


def test_a_run_of_a_format_that_is_not_read_is_refused_with_the_formats_reason(tmp_path):
    from tb_plugin_advisor.sources.discovery import scan_logdir

    session = tmp_path / "plugins" / "profile" / "2020_01_01_00_00_00"
    session.mkdir(parents=True)
    (session / "h.overview_page.pb").write_bytes(b"x")
    (scan,) = scan_logdir(str(tmp_path)).sessions
    assert scan.format == "legacy" and scan.host_names == ["h"] and scan.framework == "tensorflow"
    reason = LEGACY.not_read_because.format(files=", ".join(scan.files))
    assert reason.startswith("only older-format profiler files (h.overview_page.pb)")
