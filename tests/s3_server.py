"""A real S3-compatible server on 127.0.0.1 (moto's `moto_server`, a separate process) for s3:// logdirs."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, Optional

ROOT_KEYS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing"}
REGION = "us-east-1"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _moto_server() -> Optional[str]:
    beside = Path(sys.executable).with_name("moto_server")
    return str(beside) if beside.exists() else shutil.which("moto_server")


@contextmanager
def moto_server(unauthenticated_actions: Optional[int] = None) -> Iterator[str]:
    """Yield the endpoint URL; with `unauthenticated_actions`, IAM is enforced after that many calls."""
    binary = _moto_server()
    if binary is None:
        raise RuntimeError("moto_server not installed (pip install 'moto[server]')")
    port = _free_port()
    env = dict(os.environ)
    if unauthenticated_actions is not None:
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(unauthenticated_actions)
    process = subprocess.Popen(
        [binary, "-H", "127.0.0.1", "-p", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=2).close()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"moto_server did not start on {endpoint}") from None
                time.sleep(0.2)
        yield endpoint
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def client(endpoint: str, service: str = "s3", keys: Optional[Dict[str, str]] = None):
    import boto3

    keys = keys or ROOT_KEYS
    return boto3.client(
        service,
        endpoint_url=endpoint,
        aws_access_key_id=keys["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=keys["AWS_SECRET_ACCESS_KEY"],
        region_name=REGION,
    )


def upload_tree(endpoint: str, local: Path, bucket: str, prefix: str) -> None:
    s3 = client(endpoint)
    for path in sorted(local.rglob("*")):
        if path.is_file():
            s3.put_object(
                Bucket=bucket, Key=f"{prefix}/{path.relative_to(local).as_posix()}", Body=path.read_bytes()
            )


def use_endpoint(monkeypatch, endpoint: str, keys: Optional[Dict[str, str]] = None) -> None:
    """Point TensorBoard's S3 filesystem (boto3) at `endpoint` with `keys`, and at nothing else.

    TensorBoard reads S3_ENDPOINT once, when its file layer is imported (a user sets it before
    starting TensorBoard or tb-advisor; spawned workers read it afresh), and boto3's default session
    keeps the first credentials it finds: this process has both already, so both are reset here.
    """
    import boto3
    from tensorboard.compat.tensorflow_stub.io import gfile

    monkeypatch.setattr(gfile.get_filesystem("s3://bucket"), "_s3_endpoint", endpoint)
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)
    monkeypatch.setenv("S3_ENDPOINT", endpoint)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (keys or {}).items():
        monkeypatch.setenv(name, value)
