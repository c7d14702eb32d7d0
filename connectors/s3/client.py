"""Building the boto3 S3 client from a connector's config, and turning S3 failures into words.

Credentials follow boto3's usual chain (environment, shared profile, instance
metadata) unless ``aws.access.key.id``/``aws.secret.access.key`` are set, as
Confluent's connectors allow. ``store.url`` points the client at any
S3-compatible endpoint (MinIO, moto) with path-style addressing. Checksum
trailers are sent only when S3 requires them, as botocore did before 1.36
(S3-compatible stores often refuse them).

:func:`probe` makes one real call (``ListObjectsV2`` with ``MaxKeys=1``) and
reports an unreachable endpoint, refused credentials or a missing bucket as a
sentence naming the key to fix; ``check()`` and task ``start()`` both use it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
)

if TYPE_CHECKING:
    from connectors.s3.config import S3ConnectionConfig

CONNECT_TIMEOUT_S = 5.0
READ_TIMEOUT_S = 60.0
MAX_ATTEMPTS = 3

#: Error codes that mean "these credentials are not accepted".
CREDENTIAL_CODES = frozenset(
    {
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
        "InvalidToken",
        "ExpiredToken",
        "403",
        "Forbidden",
    }
)
MISSING_BUCKET_CODES = frozenset({"NoSuchBucket", "404", "NotFound"})


def build_client(config: S3ConnectionConfig) -> Any:
    """A boto3 S3 client for ``config`` (its own session: safe to use from one task thread)."""
    session = boto3.session.Session(
        aws_access_key_id=_secret(config.aws_access_key_id),
        aws_secret_access_key=_secret(config.aws_secret_access_key),
        region_name=config.s3_region,
    )
    settings = Config(
        connect_timeout=CONNECT_TIMEOUT_S,
        read_timeout=READ_TIMEOUT_S,
        retries={"max_attempts": MAX_ATTEMPTS, "mode": "standard"},
        s3={"addressing_style": "path"} if config.store_url else None,
        # CRC32 trailers only where S3 requires them (botocore's behaviour before 1.36):
        # many S3-compatible stores refuse them, and SigV4 already covers the payload
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    return session.client("s3", endpoint_url=config.store_url or None, config=settings)


def _secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


def error_code(exc: ClientError) -> str:
    """The S3 error code of ``exc`` (the HTTP status when the response had no body)."""
    error = exc.response.get("Error", {})
    code = str(error.get("Code") or "")
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return code or str(status or "")


def describe_failure(exc: Exception, config: S3ConnectionConfig) -> str:
    """One sentence saying what went wrong talking to S3 and which key to look at."""
    bucket = config.s3_bucket_name
    where = config.store_url or f"AWS S3 in {config.s3_region}"
    if isinstance(exc, EndpointConnectionError):
        return f"store.url: cannot reach the S3 endpoint {where}: {exc}"
    if isinstance(exc, NoCredentialsError):
        return (
            "aws.access.key.id: no AWS credentials found (set aws.access.key.id and "
            "aws.secret.access.key, or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, or a profile)"
        )
    if isinstance(exc, ClientError):
        code = error_code(exc)
        message = exc.response.get("Error", {}).get("Message") or code
        if code in MISSING_BUCKET_CODES:
            return f"s3.bucket.name: bucket {bucket!r} does not exist at {where}"
        if code in CREDENTIAL_CODES:
            return (
                f"aws.access.key.id: {where} refused the credentials for bucket {bucket!r} "
                f"({code}: {message})"
            )
        return f"s3.bucket.name: S3 error on bucket {bucket!r} at {where}: {code}: {message}"
    if isinstance(exc, BotoCoreError):
        return f"store.url: talking to {where} failed: {exc}"
    return f"S3 at {where}: {type(exc).__name__}: {exc}"


def probe(client: Any, config: S3ConnectionConfig) -> list[str]:
    """One real call to the bucket; the problems found (empty when it answered)."""
    try:
        client.list_objects_v2(Bucket=config.s3_bucket_name, MaxKeys=1)
    except (BotoCoreError, ClientError) as exc:
        return [describe_failure(exc, config)]
    return []


def is_transient(exc: Exception) -> bool:
    """Worth retrying later: network trouble, throttling, server errors."""
    if isinstance(exc, ClientError):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
        return status >= 500 or error_code(exc) in {"SlowDown", "RequestTimeout", "Throttling"}
    return isinstance(exc, BotoCoreError) and not isinstance(exc, NoCredentialsError)
