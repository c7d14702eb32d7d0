"""A real S3-compatible endpoint for tests: ``moto_server`` on a free loopback port.

One process per test session (see ``tests/integration/s3/conftest.py``); a
second one with ``INITIAL_NO_AUTH_ACTION_COUNT`` set checks credentials, for
the wrong-credentials tests. The server is started from the venv's
``moto_server`` script (else ``python -m moto.server``); if it cannot start,
the fixture fails (never skips).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import boto3
import httpx
from botocore.config import Config

from harness.broker_process import free_port

START_TIMEOUT_S = 30.0
ACCESS_KEY = "testing"
SECRET_KEY = "testing"
REGION = "us-east-1"


class S3Server:
    """One ``moto_server`` subprocess; ``url`` is its endpoint (``store.url``)."""

    def __init__(self, log_path: Path, env: Mapping[str, str] | None = None) -> None:
        self.port = free_port()
        self.log_path = log_path
        self._env = {**os.environ, **(env or {})}
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> S3Server:
        script = Path(sys.executable).with_name("moto_server")
        launcher = [str(script)] if script.exists() else [sys.executable, "-m", "moto.server"]
        command = [*launcher, "-H", "127.0.0.1", "-p", str(self.port)]
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=self._env
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"moto_server exited early:\n{self.log_path.read_text()}")
            try:
                httpx.get(f"{self.url}/moto-api/", timeout=1.0)
                return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError(f"moto_server did not answer within {START_TIMEOUT_S}s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # a throwaway test server: nothing to shut down cleanly
            self.process.wait(timeout=10)
        self.process = None

    def client(self, **credentials: str) -> Any:
        """A boto3 client on this endpoint (test keys unless given)."""
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name=REGION,
            aws_access_key_id=credentials.get("access_key", ACCESS_KEY),
            aws_secret_access_key=credentials.get("secret_key", SECRET_KEY),
            config=Config(s3={"addressing_style": "path"}),
        )

    def new_bucket(self) -> str:
        """Create a bucket with a fresh name and return it."""
        name = f"b-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name

    def props(self, bucket: str) -> dict[str, str]:
        """The connection keys of a connector using ``bucket`` on this server."""
        return {
            "s3.bucket.name": bucket,
            "s3.region": REGION,
            "store.url": self.url,
            "aws.access.key.id": ACCESS_KEY,
            "aws.secret.access.key": SECRET_KEY,
        }
