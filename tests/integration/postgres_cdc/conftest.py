"""Fixtures for the PostgreSQL CDC source against the session's real PostgreSQL 15.

:class:`TaskHarness` drives a real :class:`PostgresCdcTask` the way the
source runner does (start with the stored offset, poll, ``commit_record`` per
acknowledged record, ``commit()`` once offsets are stored) without a broker,
for tests about events and positions. Runtime-level tests use ``herder`` (a
StandaloneHerder on the session broker) or ``fresh_worker``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest

from connect_worker.herder.standalone import StandaloneHerder
from connectors.api import RetriableError, SourceRecord
from connectors.postgres_cdc.task import PostgresCdcTask
from harness.postgres import PostgresServer
from harness.wait import wait_for
from tests.support.herders import HerderFactory


def cdc_props(postgres: PostgresServer, dbname: str, **extra: str) -> dict[str, str]:
    """Connector properties for ``dbname`` on ``postgres`` (prefix ``srv``)."""
    props = {
        "name": "cdc",
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "database.hostname": postgres.host,
        "database.port": str(postgres.port),
        "database.user": "postgres",
        "database.dbname": dbname,
        "topic.prefix": "srv",
        "poll.interval.ms": "100",
    }
    props.update(extra)
    return props


class _Offsets:
    def __init__(self, stored: dict[str, Any] | None) -> None:
        self.stored = stored

    def offset(self, partition: Any) -> dict[str, Any] | None:
        return self.stored

    def offsets(self, partitions: Any) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(dict(p), self.stored) for p in partitions]


class _Context:
    def __init__(self, stored: dict[str, Any] | None) -> None:
        self.offset_reader = _Offsets(stored)
        self.task_id = 0


class TaskHarness:
    """One task; ``records`` holds every record polled, ``stored`` the last acked offset."""

    def __init__(self, props: dict[str, str], stored: dict[str, Any] | None = None) -> None:
        self.task = PostgresCdcTask()
        self.task.initialize(_Context(stored))
        self.props = props
        self.records: list[SourceRecord] = []
        self.stored = stored
        self.retriable_errors: list[str] = []

    def start(self) -> TaskHarness:
        self.task.start(self.props)
        return self

    def poll(self, *, ack: bool = True) -> list[SourceRecord]:
        try:
            batch = self.task.poll()
        except RetriableError as exc:  # as the runtime: note it, back off, poll again
            self.retriable_errors.append(str(exc))
            time.sleep(0.05)
            return []
        self.records.extend(batch)
        if ack and batch:
            self.ack(batch)
        return batch

    def ack(self, batch: list[SourceRecord]) -> None:
        for record in batch:
            self.task.commit_record(record)
            if record.source_offset is not None:
                self.stored = record.source_offset
        self.task.commit()

    def poll_until(
        self, done: Callable[[list[SourceRecord]], bool], timeout_s: float = 30.0
    ) -> list[SourceRecord]:
        deadline = time.monotonic() + timeout_s
        while not done(self.records):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"timed out with {len(self.records)} records; details {self.task.details()}"
                )
            self.poll()
        return self.records

    def changes(self) -> list[SourceRecord]:
        """Records with a change envelope (no tombstones, no heartbeats)."""
        return [r for r in self.records if isinstance(r.value, dict) and "op" in r.value]

    def stop(self) -> None:
        self.task.stop()


@pytest.fixture
def db(postgres: PostgresServer, pg_database: str) -> Iterator[psycopg.Connection]:
    """An autocommit connection to the test's own database."""
    with postgres.connect(pg_database) as conn:
        yield conn


@pytest.fixture
def harness(postgres: PostgresServer, pg_database: str) -> Iterator[Callable[..., TaskHarness]]:
    """``harness(stored=None, **props)`` starts a task on the test's database."""
    made: list[TaskHarness] = []

    def make(stored: dict[str, Any] | None = None, **extra: str) -> TaskHarness:
        h = TaskHarness(cdc_props(postgres, pg_database, **extra), stored)
        made.append(h)
        return h.start()

    yield make
    for h in made:
        h.stop()
    release_slots(postgres, pg_database)


def release_slots(postgres: PostgresServer, dbname: str) -> None:
    """Wait for the walsenders of stopped tasks to exit, so the database can be dropped."""
    with postgres.connect() as conn:
        wait_for(lambda: conn.execute(
            "SELECT count(*) = 0 FROM pg_replication_slots "
            "WHERE database = %s AND active_pid IS NOT NULL", (dbname,)
        ).fetchone()[0], f"the replication slots of {dbname} to be released")


@pytest.fixture
def herder(make_herder: HerderFactory) -> StandaloneHerder:
    """One in-process worker (bundled plugins, JSON converters) on the session broker."""
    return make_herder()


