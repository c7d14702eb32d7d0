"""A real PostgreSQL 15 server for the tests, with logical decoding enabled.

Started from Debian's packages (``make test`` installs them) as a local
process: ``initdb`` into a temporary folder, ``pg_ctl start`` on a free
loopback port with ``wal_level=logical``. ``initdb`` refuses to run as root, so
as root the server runs as the ``postgres`` user. Trust authentication on
loopback, except for the role :data:`PASSWORD_USER`, which needs
:data:`PASSWORD` (the wrong-password tests need a role that checks one).

One server is shared by a whole pytest session (see ``tests/conftest.py``);
each test gets a database of its own through :meth:`PostgresServer.create_database`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from harness.broker_process import free_port

BIN = Path("/usr/lib/postgresql/15/bin")
SUPERUSER = "postgres"
PASSWORD_USER = "sluice_pw"
PASSWORD = "s3cret"


class PostgresServer:
    """One PostgreSQL cluster in ``root`` on a free port of 127.0.0.1."""

    def __init__(self, root: Path, *, wal_level: str = "logical") -> None:
        if not (BIN / "initdb").exists():
            raise RuntimeError(
                f"PostgreSQL 15 is not installed ({BIN}); `make test` installs it"
            )
        self.root = root
        self.data = root / "data"
        self.port = free_port()
        self.wal_level = wal_level
        self.host = "127.0.0.1"

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> PostgresServer:
        self.root.mkdir(parents=True, exist_ok=True)
        self._chown(self.root)
        if not self.data.exists():
            self._run(
                BIN / "initdb", "-D", self.data, "-U", SUPERUSER, "--auth=trust",
                "-E", "UTF8", "--no-sync", "--locale=C.UTF-8",
            )
            with open(self.data / "pg_hba.conf", "w") as hba:
                hba.write(
                    f"host all {PASSWORD_USER} 127.0.0.1/32 scram-sha-256\n"
                    f"host replication {PASSWORD_USER} 127.0.0.1/32 scram-sha-256\n"
                    "local all all trust\n"
                    "host all all 127.0.0.1/32 trust\n"
                    "local replication all trust\n"
                    "host replication all 127.0.0.1/32 trust\n"
                )
        options = (
            f"-c listen_addresses={self.host} -p {self.port} -k {self.root} "
            f"-c wal_level={self.wal_level} -c max_replication_slots=20 "
            "-c max_wal_senders=20 -c max_connections=200 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(
            BIN / "pg_ctl", "-D", self.data, "-l", self.root / "server.log", "-w",
            "-o", options, "start",
        )
        with self.connect() as conn:
            conn.execute(
                f"CREATE ROLE {PASSWORD_USER} LOGIN SUPERUSER REPLICATION "
                f"PASSWORD '{PASSWORD}'"
            )
        return self

    def stop(self) -> None:
        if self.data.exists():
            self._run(BIN / "pg_ctl", "-D", self.data, "-m", "immediate", "stop", check=False)

    def log_text(self) -> str:
        path = self.root / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # ------------------------------------------------------------------ access

    def dsn(self, dbname: str = "postgres", user: str = SUPERUSER, **extra: str) -> str:
        """A libpq conninfo string (``replication="database"`` for a replication link)."""
        parts = {"host": self.host, "port": str(self.port), "dbname": dbname, "user": user}
        parts.update(extra)
        return " ".join(f"{key}={value}" for key, value in parts.items())

    def url(self, dbname: str = "postgres", *, jdbc: bool = False) -> str:
        """``postgresql://postgres@127.0.0.1:PORT/db`` (``jdbc:postgresql://...`` with ``jdbc``)."""
        if jdbc:
            return f"jdbc:postgresql://{self.host}:{self.port}/{dbname}"
        return f"postgresql://{SUPERUSER}@{self.host}:{self.port}/{dbname}"

    def connect(self, dbname: str = "postgres", **extra: str) -> psycopg.Connection:
        """An autocommit connection as the superuser."""
        return psycopg.connect(self.dsn(dbname, **extra), autocommit=True)

    def create_database(self, prefix: str = "db") -> str:
        """A new empty database with a unique name; returns its name."""
        name = f"{prefix}_{uuid.uuid4().hex[:10]}".lower()
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name

    @contextmanager
    def database(self, prefix: str = "db") -> Iterator[str]:
        """A fresh database, dropped afterwards (with its replication slots)."""
        name = self.create_database(prefix)
        try:
            yield name
        finally:
            self.drop_database(name)

    def drop_database(self, name: str) -> None:
        """Drop ``name`` and its replication slots, ending the walsenders that hold them."""
        with self.connect() as conn:
            for (slot,) in conn.execute(
                "SELECT slot_name FROM pg_replication_slots WHERE database = %s", (name,)
            ).fetchall():
                self._release_slot(conn, slot)
                conn.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    @staticmethod
    def _release_slot(conn: psycopg.Connection, slot: str, timeout_s: float = 10.0) -> None:
        """Terminate the slot's walsender and wait until the slot is inactive."""
        deadline = time.monotonic() + timeout_s
        while True:
            row = conn.execute(
                "SELECT active_pid FROM pg_replication_slots WHERE slot_name = %s", (slot,)
            ).fetchone()
            if row is None or row[0] is None:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"replication slot {slot} is still held by pid {row[0]}")
            conn.execute("SELECT pg_terminate_backend(%s)", (row[0],))
            time.sleep(0.05)

    # ------------------------------------------------------------------ helpers

    def _chown(self, path: Path) -> None:
        if os.geteuid() == 0:
            entry = pwd.getpwnam("postgres")
            shutil.chown(path, entry.pw_uid, entry.pw_gid)

    def _run(self, *command: object, check: bool = True) -> None:
        argv = [str(part) for part in command]
        if os.geteuid() == 0:
            argv = ["runuser", "-u", "postgres", "--", *argv]
        result = subprocess.run(argv, capture_output=True, text=True, check=False)
        if check and result.returncode != 0:
            raise RuntimeError(
                f"{' '.join(argv)} failed ({result.returncode}):\n{result.stdout}\n"
                f"{result.stderr}\n{self.log_text()}"
            )
