"""Every entry of the object-store error tables in sources/remote.py, as the file layers raise them."""

from __future__ import annotations

import pytest

from tb_plugin_advisor.sources import remote


class ClientError(Exception):
    """Shaped like botocore's: the code sits in response['Error']['Code']."""

    def __init__(self, code):
        super().__init__(f"An error occurred ({code})")
        self.response = {"Error": {"Code": code, "Message": "x"}}


class HttpError(Exception):
    """Shaped like gcsfs': an HTTP status in .code."""

    def __init__(self, code):
        super().__init__(f"{code}")
        self.code = code


@pytest.mark.parametrize("code, meaning", sorted(remote.DENIED_CODES.items()))
def test_each_denied_code_says_what_and_where(code, meaning):
    text = remote.explain("s3://b/logs", ClientError(code))
    assert text.startswith(f"{meaning} on s3://b/logs ({code})")
    assert "AWS_ACCESS_KEY_ID" in text


@pytest.mark.parametrize("code, meaning", sorted(remote.MISSING_CODES.items()))
def test_each_missing_code_says_what_and_where(code, meaning):
    assert remote.explain("gs://b/logs", HttpError(int(code)) if code.isdigit() else ClientError(code)) == (
        f"gs://b/logs: {meaning} ({code})"
    )


@pytest.mark.parametrize("name", sorted(remote._NO_CREDENTIALS))
def test_missing_credentials_name_the_variables_for_the_scheme(name):
    exc = type(name, (Exception,), {})("no creds")
    assert "GOOGLE_APPLICATION_CREDENTIALS" in remote.explain("gs://b/x", exc)
    assert "AWS_ACCESS_KEY_ID" in remote.explain("s3://b/x", exc)


@pytest.mark.parametrize("name", sorted(remote._UNREACHABLE))
def test_an_unreachable_endpoint_says_so(name):
    exc = type(name, (Exception,), {})("refused")
    assert remote.explain("s3://b/x", exc).startswith("cannot reach the object store for s3://b/x")


def test_the_cause_of_a_wrapped_error_is_explained_and_others_are_left_alone():
    try:
        try:
            raise ClientError("AccessDenied")
        except ClientError as inner:
            raise RuntimeError("read failed") from inner
    except RuntimeError as outer:
        assert remote.explain("s3://b/x", outer).startswith("permission denied on s3://b/x")
    assert remote.explain("s3://b/x", ValueError("other")) is None
    assert remote.explain("gs://b/x", PermissionError("no")).startswith("permission denied on gs://b/x")
