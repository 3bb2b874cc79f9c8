"""Object-store logdirs (s3://, gs://): plain-words errors for credentials, permissions, buckets.

Discovery and reading go through TensorBoard's file layer (its own S3 filesystem on boto3, which
honours S3_ENDPOINT for S3-compatible servers; fsspec/gcsfs for gs://). Their exceptions say
"An error occurred (AccessDenied) when calling the ListObjects operation"; a user needs to hear which
credentials are missing or which permission is lacking, on which path, and what to set. The
exceptions are recognised by class name and error code so that neither boto3 nor google-auth is
imported here.
"""

from __future__ import annotations

import os
from typing import Optional

from tb_plugin_advisor.errors import AdvisorError

# error code (S3 / GCS) -> what it means for the user
DENIED_CODES = {
    "AccessDenied": "permission denied",
    "AllAccessDisabled": "permission denied (all access to this bucket is disabled)",
    "InvalidAccessKeyId": "the access key is not known to the server",
    "SignatureDoesNotMatch": "the secret key does not match the access key",
    "ExpiredToken": "the session token has expired",
    "InvalidToken": "the session token is not valid",
    "403": "permission denied",
    "401": "not authenticated",
}
MISSING_CODES = {"NoSuchBucket": "the bucket does not exist", "404": "not found"}

_NO_CREDENTIALS = {"NoCredentialsError", "PartialCredentialsError", "DefaultCredentialsError", "RefreshError"}
_UNREACHABLE = {"EndpointConnectionError", "ConnectTimeoutError", "ClientConnectorError"}


def is_remote(path: str) -> bool:
    return "://" in path


def _scheme(path: str) -> str:
    return path.split("://", 1)[0].lower()


def credentials_hint(path: str) -> str:
    if _scheme(path) == "s3":
        endpoint = os.environ.get("S3_ENDPOINT")
        where = f" (S3_ENDPOINT={endpoint})" if endpoint else " (set S3_ENDPOINT for a non-AWS server)"
        return f"set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE{where}"
    if _scheme(path) == "gs":
        return "run `gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
    return "check the credentials of this filesystem"


def _error_code(exc: BaseException) -> Optional[str]:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        code = (response.get("Error") or {}).get("Code")
        if code:
            return str(code)
    code = getattr(exc, "code", None)  # gcsfs HttpError
    return str(code) if code is not None else None


def explain(path: str, exc: BaseException) -> Optional[str]:
    """A one-line reason for an object-store failure on `path`, or None when it is not one of those."""
    names = {k.__name__ for k in type(exc).__mro__}
    if names & _NO_CREDENTIALS:
        return f"no credentials to read {path}: {credentials_hint(path)}"
    if names & _UNREACHABLE:
        return f"cannot reach the object store for {path} ({exc}); check S3_ENDPOINT / the network"
    if isinstance(exc, PermissionError):
        return f"permission denied on {path}: the credentials in use may not list or read it"
    code = _error_code(exc)
    if code in DENIED_CODES:
        return (
            f"{DENIED_CODES[code]} on {path} ({code}): the credentials in use need list and read "
            f"access to it; {credentials_hint(path)}"
        )
    if code in MISSING_CODES:
        return f"{path}: {MISSING_CODES[code]} ({code})"
    cause = exc.__cause__ or exc.__context__
    return explain(path, cause) if cause is not None and cause is not exc else None


def check_remote_logdir(logdir: str) -> None:
    """Fail early, in plain words, when a remote LOGDIR cannot be listed; AdvisorError otherwise none."""
    from tensorboard.compat.tensorflow_stub.io import gfile

    try:
        found = gfile.isdir(logdir)
        if found:
            gfile.listdir(logdir)
    except Exception as exc:  # noqa: BLE001 - the file layer raises boto3 / gcsfs / its own types
        raise AdvisorError(explain(logdir, exc) or f"cannot list LOGDIR {logdir}: {exc}") from None
    if not found:
        raise AdvisorError(f"LOGDIR {logdir} does not exist (no object under that prefix)")
