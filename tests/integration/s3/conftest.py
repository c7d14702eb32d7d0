"""One moto S3 server per session, a fresh bucket per test, and helpers to read objects back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.s3_server import S3Server


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """The session's S3 endpoint (fails, never skips, if moto_server cannot start)."""
    server = S3Server(tmp_path_factory.mktemp("s3") / "moto.log").start()
    yield server
    server.stop()


@pytest.fixture
def bucket(s3: S3Server) -> str:
    return s3.new_bucket()


def object_keys(s3: S3Server, bucket: str, prefix: str = "") -> list[str]:
    pages = s3.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    return sorted(entry["Key"] for page in pages for entry in page.get("Contents", ()))


def object_bytes(s3: S3Server, bucket: str, key: str) -> bytes:
    data: bytes = s3.client().get_object(Bucket=bucket, Key=key)["Body"].read()
    return data


def object_metadata(s3: S3Server, bucket: str, key: str) -> dict[str, Any]:
    meta: dict[str, Any] = s3.client().head_object(Bucket=bucket, Key=key)
    return meta
