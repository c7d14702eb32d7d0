"""One moto S3 server per session, a fresh bucket per test, and helpers to read objects back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.s3_server import S3Server


@pytest.fixture(scope="session")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    """The session's S3 endpoint (fails, never skips, if moto_server cannot start)."""
    server = S3Server(tmp_path_factory.mktemp("s3") / "moto.log").start()
    yield server
    server.stop()


@pytest.fixture
def bucket(s3: S3Server) -> str:
    return s3.new_bucket()
