"""s3:// logdirs against a real S3-compatible server on 127.0.0.1 (moto_server), through TensorBoard's
file layer: discovery, reports (sequential and pooled), diff, doctor, fix-logdir markers, and plain
errors for missing credentials, permission denied and a missing bucket."""

from __future__ import annotations

import json

import pytest
from pod_synth import SESSION, even_pod, write_pod

pytestmark = pytest.mark.pod_extras
pytest.importorskip("boto3")
pytest.importorskip("moto")

from s3_server import ROOT_KEYS, client, moto_server, upload_tree, use_endpoint  # noqa: E402

from tb_plugin_advisor.sources.discovery import scan_logdir  # noqa: E402
from tb_plugin_advisor.views.cli.main import main as cli_main  # noqa: E402

BUCKET = "advisor-pod"
LOGDIR = f"s3://{BUCKET}/logs"
RUN = f"job/{SESSION}"


@pytest.fixture(scope="module")
def local_pod(tmp_path_factory):
    logdir = tmp_path_factory.mktemp("s3-pod")
    write_pod(logdir, "job", even_pod(3, slow=["worker1"]))
    return logdir


@pytest.fixture(scope="module")
def server(local_pod):
    with moto_server() as endpoint:
        client(endpoint).create_bucket(Bucket=BUCKET)
        upload_tree(endpoint, local_pod, BUCKET, "logs")
        yield endpoint


@pytest.fixture
def s3(server, monkeypatch):
    use_endpoint(monkeypatch, server, ROOT_KEYS)
    return server


def without_paths(report):
    """Everything but where the files were read from."""
    return {k: v for k, v in report.items() if k != "profile"}


def test_discovery_finds_the_s3_session_with_its_hosts_and_sizes(s3, local_pod):
    scan = scan_logdir(LOGDIR)
    session = scan.run(RUN)
    assert session is not None and session.format == "xplane"
    assert session.host_names == ["worker0", "worker1", "worker2"]
    local = {h.host: h.size_bytes for h in scan_logdir(str(local_pod)).run(RUN).hosts}
    assert {h.host: h.size_bytes for h in session.hosts} == local


def test_the_s3_report_is_the_local_report_sequential_and_pooled(s3, local_pod, tmp_path):
    reports = {}
    for name, logdir, workers in (
        ("local", str(local_pod), "1"),
        ("s3", LOGDIR, "1"),
        ("s3-pool", LOGDIR, "2"),
    ):
        out = tmp_path / f"{name}.json"
        assert cli_main(["report", logdir, "--format", "json", "--workers", workers, "-o", str(out)]) == 0
        reports[name] = json.loads(out.read_text())
    assert without_paths(reports["s3"]) == without_paths(reports["local"])
    assert reports["s3-pool"] == reports["s3"]
    assert [p["path"] for p in reports["s3"]["profile"]][0].startswith(f"{LOGDIR}/job/plugins/profile/")
    assert [s["host"] for s in reports["s3"]["stragglers"]] == ["worker1"]


def test_diff_of_two_s3_runs(s3, capsys):
    assert cli_main(["diff", LOGDIR, RUN, RUN, "--format", "json", "--workers", "2"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert diff["step_time"]["delta_pct"] == 0.0


def test_doctor_and_fix_logdir_write_the_marker_into_the_bucket(s3, capsys):
    assert cli_main(["doctor", LOGDIR, "--json"]) == 1  # the run has profiles but no events file
    before = json.loads(capsys.readouterr().out)
    assert before["ok"] is False
    assert cli_main(["fix-logdir", LOGDIR]) == 0
    assert "wrote s3://advisor-pod/logs/job/" in capsys.readouterr().out
    keys = [o["Key"] for o in client(s3).list_objects_v2(Bucket=BUCKET, Prefix="logs/job/")["Contents"]]
    markers = [k for k in keys if k.rsplit("/", 1)[-1].startswith("events.out.tfevents.")]
    assert len(markers) == 1 and markers[0].endswith(".profile-empty")
    assert cli_main(["doctor", LOGDIR, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    client(s3).delete_object(Bucket=BUCKET, Key=markers[0])  # leave the bucket as the other tests found it


def test_missing_credentials_are_a_clear_error(server, monkeypatch, capsys):
    use_endpoint(monkeypatch, server, keys=None)
    assert cli_main(["report", LOGDIR]) == 2
    err = capsys.readouterr().err
    assert f"no credentials to read {LOGDIR}" in err
    assert "AWS_ACCESS_KEY_ID" in err and "Traceback" not in err


def test_a_missing_bucket_is_a_clear_error(s3, capsys):
    assert cli_main(["doctor", "s3://no-such-bucket/logs"]) == 2
    err = capsys.readouterr().err
    assert "s3://no-such-bucket/logs" in err and "NoSuchBucket" in err and "Traceback" not in err


def test_permission_denied_is_a_clear_error(local_pod, monkeypatch, capsys):
    """IAM enforced after the setup calls: a user without any policy may not list the bucket."""
    setup_calls = 2 + len(list(local_pod.rglob("*.xplane.pb"))) + 2
    with moto_server(unauthenticated_actions=setup_calls) as endpoint:
        client(endpoint).create_bucket(Bucket=BUCKET)
        upload_tree(endpoint, local_pod, BUCKET, "logs")
        iam = client(endpoint, "iam")
        iam.create_user(UserName="nobody")
        key = iam.create_access_key(UserName="nobody")["AccessKey"]
        use_endpoint(
            monkeypatch,
            endpoint,
            {"AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]},
        )
        for command in (["report", LOGDIR], ["fix-logdir", LOGDIR]):
            assert cli_main(command) == 2
            err = capsys.readouterr().err
            assert f"permission denied on {LOGDIR} (AccessDenied)" in err, err
            assert "Traceback" not in err
