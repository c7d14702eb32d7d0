"""The JDBC connectors' own metrics on a real worker's ``GET /metrics`` (issue 20):
rows read per table by the source, rows written and deleted by the sink."""

from __future__ import annotations

from collections.abc import Callable

from harness.postgres import PostgresServer
from harness.standalone_process import StandaloneProcess, properties, wait_for_rest
from tests.support.scrape import sample, scrape

JSON = "org.apache.kafka.connect.json.JsonConverter"


def test_rows_read_and_written_match_the_tables(
    fresh_worker: Callable[..., StandaloneProcess], postgres: PostgresServer, pg_database: str
) -> None:
    with postgres.connect(pg_database) as conn:
        conn.execute("CREATE TABLE items (id bigint PRIMARY KEY, name text NOT NULL)")
        conn.execute("INSERT INTO items SELECT g, 'n' || g FROM generate_series(1, 120) g")
    worker = fresh_worker().start()
    worker.write_pipeline("jm-src", properties(
        name="jm-src", connector_class="JdbcSource", connection_url=postgres.url(pg_database),
        mode="incrementing", incrementing_column_name="id", topic_prefix="jm-",
        poll_interval_ms=100, batch_max_rows=50, key_converter=JSON, value_converter=JSON,
    ))
    worker.write_pipeline("jm-snk", properties(
        name="jm-snk", connector_class="JdbcSink", topics="jm-items",
        connection_url=postgres.url(pg_database), insert_mode="upsert", pk_mode="record_value",
        pk_fields="id", auto_create="true", table_name_format="items_copy",
        key_converter=JSON, value_converter=JSON,
    ))
    src, snk = {"connector": "jm-src", "task": "0"}, {"connector": "jm-snk", "task": "0"}
    wait_for_rest(
        lambda: sample(scrape(worker.url), "sluice_plugin_jdbc_rows_written_total", **snk)
        == 120,
        "the sink's rows written to reach the table's 120 rows",
    )
    samples = scrape(worker.url)
    assert sample(samples, "sluice_plugin_jdbc_rows_read_total", **src, table="items") == 120
    assert sample(samples, "sluice_plugin_jdbc_rows_deleted_total", **snk) == 0
    assert (sample(samples, "sluice_plugin_jdbc_round_time_ms", **src, table="items")
            or -1) >= 0
    with postgres.connect(pg_database) as conn:
        copied = conn.execute("SELECT count(*) FROM items_copy").fetchone()
    assert copied == (120,)
