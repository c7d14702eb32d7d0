"""The CDC task's own metrics, under Debezium's names where Debezium has one.

Debezium's PostgreSQL connector publishes MBeans
``debezium.postgres:type=connector-metrics,context=<snapshot|streaming>,server=<topic.prefix>``;
the Prometheus JMX exporter, with the rules Debezium's monitoring example
ships and ``lowercaseOutputName``, renders attribute ``<Attr>`` as
``debezium_metrics_<attr>{plugin="postgres",name=<topic.prefix>,context=...}``
(``RowsScanned``, a map, with one ``table`` label per entry). This module
registers those names through the plugin API (``namespace="debezium_metrics"``),
so dashboards built for Debezium find them; the worker adds ``connector`` and
``task``. Debezium's counters are plain attributes there (the exporter types
them gauge), so they are gauges here too.

Snapshot (``context="snapshot"``): ``snapshotrunning``, ``snapshotcompleted``
(0/1), ``snapshotdurationinseconds``, ``totaltablecount``,
``remainingtablecount``, ``rowsscanned{table}``, ``totalnumberofeventsseen``.
Streaming (``context="streaming"``): ``connected`` (0/1),
``millisecondsbehindsource`` (now minus the commit time of the last change
event, taken when the event is read, as Debezium does),
``totalnumberofeventsseen``.

Sluice's own, for what Debezium has no attribute for:
``sluice_plugin_postgres_cdc_wal_lag_bytes`` (the server's current WAL
position minus the slot's ``confirmed_flush_lsn``: the WAL the slot still
pins) and ``sluice_plugin_postgres_cdc_snapshot_rows_estimated{table}``
(PostgreSQL's ``reltuples`` estimate, the "total" beside ``rowsscanned``).
Everything is updated once per ``poll()``, never per record.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from connectors.api.metrics import Gauge, TaskMetrics

DEBEZIUM = "debezium_metrics"


class CdcMetrics:
    """One task's CDC metrics (see the module doc)."""

    def __init__(self, metrics: TaskMetrics, server_name: str) -> None:
        self._metrics = metrics
        self._snapshot_labels = {"plugin": "postgres", "name": server_name, "context": "snapshot"}
        streaming = {"plugin": "postgres", "name": server_name, "context": "streaming"}
        snap = self._snapshot_labels

        def debezium(name: str, doc: str, labels: dict[str, str]) -> Gauge:
            return metrics.gauge(name, doc, labels, namespace=DEBEZIUM)

        self._running = debezium("snapshotrunning", "1 while the snapshot runs.", snap)
        self._completed = debezium("snapshotcompleted", "1 once the snapshot completed.", snap)
        self._duration_s = debezium(
            "snapshotdurationinseconds", "Seconds the snapshot has taken so far.", snap
        )
        self._table_count = debezium(
            "totaltablecount", "Tables the snapshot reads.", snap
        )
        self._remaining = debezium(
            "remainingtablecount", "Tables the snapshot has not finished yet.", snap
        )
        self._snapshot_events = debezium(
            "totalnumberofeventsseen", "Change events emitted (this context).", snap
        )
        self._connected = debezium(
            "connected", "1 while the replication stream is open.", streaming
        )
        self._behind_ms = debezium(
            "millisecondsbehindsource",
            "Now minus the commit time of the last change event read (ms).", streaming,
        )
        self._stream_events = debezium(
            "totalnumberofeventsseen", "Change events emitted (this context).", streaming
        )
        self._wal_lag_bytes = metrics.gauge(
            "postgres_cdc_wal_lag_bytes",
            "The server's WAL position minus the slot's confirmed_flush_lsn (bytes).",
        )
        self._rows_scanned: dict[str, Gauge] = {}
        self._started = 0.0

    # -- snapshot ----------------------------------------------------------------------

    def snapshot_began(self, tables: Sequence[tuple[str, int | None]]) -> None:
        """The snapshot of ``tables`` (name, estimated rows) starts."""
        self._started = time.monotonic()
        self._running.set(1)
        self._completed.set(0)
        self._table_count.set(len(tables))
        self._remaining.set(len(tables))
        for name, estimated in tables:
            labels = {**self._snapshot_labels, "table": name}
            self._rows_scanned[name] = self._metrics.gauge(
                "rowsscanned", "Rows the snapshot read from the table.", labels,
                namespace=DEBEZIUM,
            )
            self._metrics.gauge(
                "postgres_cdc_snapshot_rows_estimated",
                "Rows PostgreSQL estimates the table has (pg_class.reltuples).",
                {"table": name},
            ).set(max(estimated or 0, 0))

    def snapshot_progress(self, progress: dict[str, Any], events: int) -> None:
        """After a poll: ``progress`` as :meth:`Snapshot.progress`, ``events`` emitted."""
        tables = progress["tables"]
        for name, table in tables.items():
            gauge = self._rows_scanned.get(name)
            if gauge is not None:
                gauge.set(table["rows"])
        self._remaining.set(sum(1 for t in tables.values() if not t["done"]))
        self._duration_s.set(time.monotonic() - self._started)
        self._snapshot_events.inc(events)

    def snapshot_finished(self) -> None:
        self._running.set(0)
        self._completed.set(1)
        self._remaining.set(0)

    # -- streaming ---------------------------------------------------------------------

    def connected(self, up: bool) -> None:
        self._connected.set(1 if up else 0)

    def streamed(self, events: int, last_commit_ts_us: int) -> None:
        """After a poll: ``events`` change events, the last committed at ``last_commit_ts_us``."""
        if events:
            self._stream_events.inc(events)
            self._behind_ms.set(max(0, time.time_ns() // 1000 - last_commit_ts_us) // 1000)

    def wal_lag(self, lag_bytes: int) -> None:
        self._wal_lag_bytes.set(lag_bytes)

    def stopped(self) -> None:
        self._running.set(0)
        self._connected.set(0)
