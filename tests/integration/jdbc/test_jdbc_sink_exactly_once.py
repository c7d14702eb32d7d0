"""exactly.once=true: a worker killed with SIGKILL mid-stream writes no row twice after restart.

The target table has no primary key and the sink inserts (COPY), so any record
delivered twice would show as a duplicate row. The sink never commits the
consumer group's offsets (pre_commit returns {}), so after the kill the group
would start again from the earliest record: only the offsets table, written in
the same transaction as the rows, keeps the rows that had landed from coming again.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

import pytest

from connectors.api import struct
from connectors.api.schema import INT64, OPTIONAL_STRING, STRING
from harness.postgres import PostgresServer
from harness.standalone_process import StandaloneProcess, properties
from harness.wait import wait_for
from tests.integration.jdbc.helpers import produce_connect, rows, topic_size

TOTAL = 20_000
VALUE = struct(("n", INT64), ("text", OPTIONAL_STRING))
POISON = struct(("n", STRING), ("text", OPTIONAL_STRING))  # "n" is a bigint column


@pytest.mark.slow
def test_sigkill_mid_stream_then_restart_writes_each_row_once(
    fresh_worker: Callable[..., StandaloneProcess], postgres: PostgresServer, pg_database: str,
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE events (n bigint, text text)")  # no key: duplicates show
    worker = fresh_worker(**{"offset.flush.interval.ms": "60000"}).start()
    produce_connect(worker, "events", [
        (None, None, VALUE, {"n": i, "text": f"row {i}"}) for i in range(TOTAL)
    ])
    worker.write_pipeline("eo", properties(
        name="eo", connector_class="JdbcSink", topics="events",
        connection_url=postgres.url(pg_database), **{
            "exactly.once": "true", "value.converter": "JsonConverter",
            "key.converter": "JsonConverter", "batch.size": "500",
        },
    ))
    count = "SELECT count(*) FROM events"
    wait_for(lambda: rows(postgres, pg_database, count)[0][0] > 0, "the first rows")
    worker.stop(signal.SIGKILL)
    landed = rows(postgres, pg_database, count)[0][0]
    worker.start()
    wait_for(lambda: rows(postgres, pg_database, count)[0][0] >= TOTAL, "all rows", 90)
    stats = rows(postgres, pg_database, "SELECT count(*), count(DISTINCT n), min(n), max(n) "
                                        "FROM events")
    assert landed > 0
    assert stats == [(TOTAL, TOTAL, 0, TOTAL - 1)], f"{landed} rows had landed before the kill"
    stored = rows(postgres, pg_database,
                  "SELECT topic, kafka_partition, next_offset FROM __sluice_jdbc_offsets")
    assert stored == [("events", 0, TOTAL)]


@pytest.mark.slow
def test_a_dead_lettered_last_record_is_not_dead_lettered_again_after_restart(
    fresh_worker: Callable[..., StandaloneProcess], postgres: PostgresServer, pg_database: str,
) -> None:
    """The poison record is the topic's last: put() never stores its offset, pre_commit does."""
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE events (n bigint, text text)")
    worker = fresh_worker(**{"offset.flush.interval.ms": "200"}).start()
    produce_connect(worker, "events", [
        *((None, None, VALUE, {"n": i, "text": f"row {i}"}) for i in range(10)),
        (None, None, POISON, {"n": "not a number", "text": "poison"}),
    ])
    worker.write_pipeline("eo", properties(
        name="eo", connector_class="JdbcSink", topics="events",
        connection_url=postgres.url(pg_database), **{
            "exactly.once": "true", "value.converter": "JsonConverter",
            "key.converter": "JsonConverter", "errors.tolerance": "all",
            "errors.deadletterqueue.topic.name": "events-dlq",
            "errors.deadletterqueue.topic.replication.factor": "1",
        },
    ))
    stored = "SELECT next_offset FROM __sluice_jdbc_offsets"
    wait_for(lambda: topic_size(worker, "events-dlq") == 1, "the poison record in the DLQ")
    wait_for(lambda: rows(postgres, pg_database, stored) == [(11,)],
             "the offset past the poison record in the offsets table")
    worker.stop(signal.SIGKILL)
    worker.start()
    produce_connect(worker, "events", [(None, None, VALUE, {"n": 10, "text": "after"})])
    count = "SELECT count(*), count(DISTINCT n) FROM events"
    wait_for(lambda: rows(postgres, pg_database, count) == [(11, 11)], "the record after restart")
    assert topic_size(worker, "events-dlq") == 1, "the poison record was dead-lettered twice"
    assert rows(postgres, pg_database, stored) == [(12,)]
