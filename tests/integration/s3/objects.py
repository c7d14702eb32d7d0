"""Reading a bucket back in tests: keys, bytes, metadata."""

from __future__ import annotations

from typing import Any

from harness.s3_server import S3Server


def object_keys(s3: S3Server, bucket: str, prefix: str = "") -> list[str]:
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(entry["Key"] for page in pages for entry in page.get("Contents", ()))


def object_bytes(s3: S3Server, bucket: str, key: str) -> bytes:
    data: bytes = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


def object_metadata(s3: S3Server, bucket: str, key: str) -> dict[str, Any]:
    meta: dict[str, Any] = s3.client().head_object(Bucket=bucket, Key=key)
    return meta
