"""The CDC task: snapshot (when the mode asks for one), then stream the slot.

Start-up (``start``)::

    preflight (wal_level, tables, publication, slot not in use) -> publication
    -> decide: snapshot?  (snapshot.mode + stored offset + does the slot exist)
       yes: (re)create the slot exporting a snapshot, import it on a second
            connection, read the tables in poll() (op r), then START_REPLICATION
       no:  create the slot if missing, START_REPLICATION

A stored offset from a snapshot that never finished (``snapshot`` true,
``last_snapshot_record`` false) means the snapshot is redone, as Debezium
does in ``initial`` mode. Streaming resumes after the slot's confirmed
position; events at or before the stored offset's position are skipped.

Acknowledgement: ``commit_record`` notes each acknowledged record's position;
``commit`` (called once their offsets are durable) confirms to PostgreSQL the
end LSN of the last fully acknowledged transaction (:mod:`.positions`). With
``heartbeat.interval.ms``, a heartbeat record carrying the latest keepalive
LSN is emitted between transactions; its acknowledgement confirms that LSN, so
a quiet database's slot does not pin WAL. A keepalive read while nothing is
waiting for acknowledgement is confirmed directly.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping
from typing import Any

import psycopg

from connectors.api import ConnectError, RetriableError, SourceRecord, SourceTask
from connectors.api.metrics import NO_METRICS
from connectors.postgres_cdc import catalog, preflight
from connectors.postgres_cdc.catalog import TableInfo, split_name
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.connections import connect
from connectors.postgres_cdc.decoder import ChangeDecoder
from connectors.postgres_cdc.events import EventFactory
from connectors.postgres_cdc.metrics import CdcMetrics
from connectors.postgres_cdc.pgoutput import (
    parse_keepalive,
    parse_message,
    parse_xlog_header,
)
from connectors.postgres_cdc.positions import START, Confirmations, Position
from connectors.postgres_cdc.publication import ensure_publication
from connectors.postgres_cdc.snapshot import Snapshot
from connectors.postgres_cdc.stream import ReplicationStream, format_lsn
from connectors.postgres_cdc.tables import Table

log = logging.getLogger(__name__)

SLOT_RELEASE_WAIT_S = 3.0
#: How often poll() asks the server how far the slot is behind its WAL (one small query).
WAL_LAG_PROBE_INTERVAL_S = 1.0
_WAL_LAG_QUERY = (
    "SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() "
    "ELSE pg_current_wal_lsn() END - confirmed_flush_lsn)::bigint "
    "FROM pg_replication_slots WHERE slot_name = %s"
)
Row = tuple[Table, tuple[str | None, ...]]


class PostgresCdcTask(SourceTask):
    """Captures one database (Debezium runs one task per connector, so does this)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()  # poll/commit vs stop (closing connections)
        self._stopping = threading.Event()
        self._config: PostgresCdcConfig | None = None
        self._meta: psycopg.Connection | None = None
        self._stream: ReplicationStream | None = None
        self._decoder: ChangeDecoder | None = None
        self._factory: EventFactory | None = None
        self._confirmations = Confirmations()
        self._phase = "starting"
        self._snapshot: Snapshot | None = None
        self._rows: Iterator[Row] | None = None
        self._held: Row | None = None
        self._snapshot_first = True
        self._snapshot_lsn = 0
        self._keepalive_lsn = 0
        self._next_heartbeat = 0.0
        self._tables: list[str] = []
        self._final_progress: dict[str, Any] | None = None
        self._cdc_metrics = CdcMetrics(NO_METRICS, "")  # the task's own, from start() on
        self._next_lag_probe = 0.0

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, props: Mapping[str, str]) -> None:
        config = self._config = PostgresCdcConfig.from_props(props)
        self._factory = EventFactory(
            config.topic_prefix, config.dbname, tombstones=config.tombstones_on_delete
        )
        self._cdc_metrics = CdcMetrics(self.metrics, config.topic_prefix)
        try:
            self._start(config)
        except BaseException:
            self._release()  # a failed start leaves no connection (or walsender) behind
            raise

    def _start(self, config: PostgresCdcConfig) -> None:
        assert self._factory is not None
        meta = self._meta = connect(config)
        found = preflight.server_problems(meta, config)
        if found and all("in use by another consumer" in p for p in found):
            found = self._wait_for_slot(meta, config)
        if found:
            raise ConnectError("; ".join(found))
        self._tables = ensure_publication(meta, config)
        assert self.context is not None
        stored = self.context.offset_reader.offset(self._factory.partition)
        slot = preflight.slot_state(meta, config.slot_name)
        snapshot = self._wants_snapshot(config, stored, slot.exists)
        resume = self._resume_position(stored)
        self._confirmations = Confirmations(resume)
        self._stream = ReplicationStream(connect(config, replication=True))
        if snapshot:
            self._begin_snapshot(config, slot, stored)
        elif config.snapshot_mode == "initial_only":
            self._phase = "snapshot-only-done"  # the snapshot was taken by an earlier run
        else:
            if not slot.exists:
                if stored:
                    log.warning(
                        "slot %s is gone: changes made since offset %s were not captured",
                        config.slot_name, stored,
                    )
                self._stream.create_slot(config.slot_name, export_snapshot=False)
            self._start_streaming()
        if config.heartbeat_interval_ms:
            self._next_heartbeat = time.monotonic() + config.heartbeat_interval_ms / 1000

    def _wait_for_slot(self, meta: psycopg.Connection, config: PostgresCdcConfig) -> list[str]:
        """A previous run's walsender may take a moment to notice its client died."""
        deadline = time.monotonic() + SLOT_RELEASE_WAIT_S
        while time.monotonic() < deadline and not self._stopping.is_set():
            if preflight.slot_state(meta, config.slot_name).active_pid is None:
                return []
            time.sleep(0.2)
        return preflight.server_problems(meta, config)

    @staticmethod
    def _wants_snapshot(
        config: PostgresCdcConfig, stored: dict[str, Any] | None, slot_exists: bool
    ) -> bool:
        mode = config.snapshot_mode
        unfinished = bool(stored and stored.get("snapshot") and not stored.get(
            "last_snapshot_record"))
        if mode == "no_data":
            return False
        if mode == "always":
            return True
        if mode == "when_needed":
            return not stored or unfinished or not slot_exists
        return not stored or unfinished  # initial, initial_only

    @staticmethod
    def _resume_position(stored: dict[str, Any] | None) -> Position:
        if not stored or "lsn_commit" not in stored:
            return START
        return int(stored["lsn_commit"]), int(stored.get("seq", -1))

    def _begin_snapshot(
        self, config: PostgresCdcConfig, slot: preflight.SlotState, stored: dict[str, Any] | None
    ) -> None:
        assert self._stream is not None and self._meta is not None
        keep_slot = slot.exists and config.snapshot_mode == "always" and bool(stored)
        if slot.exists and not keep_slot:
            log.info("dropping slot %s to take a consistent snapshot", config.slot_name)
            self._stream.drop_slot(config.slot_name)
        if keep_slot:  # stream from where the slot is; events may repeat snapshot rows
            name, self._snapshot_lsn = None, slot.confirmed_lsn
        else:
            created = self._stream.create_slot(config.slot_name, export_snapshot=True)
            name, self._snapshot_lsn = created.snapshot_name, created.consistent_lsn
        infos: list[tuple[str, TableInfo]] = []
        for qualified in self._tables:
            info = catalog.describe_table(self._meta, *split_name(qualified))
            if info is not None:
                infos.append((qualified, info))
        snapshot = Snapshot(
            connect(config), infos, self._make_table,
            snapshot_name=name, fetch_size=config.snapshot_fetch_size,
        )
        snapshot.begin()  # imports the exported snapshot before the stream is used again
        self._snapshot = snapshot
        self._cdc_metrics.snapshot_began([(n, i.estimated_rows) for n, i in infos])
        self._rows = snapshot.rows()
        self._phase = "snapshot"
        log.info("snapshot of %d table(s) at %s", len(infos), format_lsn(self._snapshot_lsn))

    def _make_table(self, qualified: str, info: TableInfo) -> Table:
        assert self._config is not None
        schema, name = split_name(qualified)
        config = self._config
        dropped = config.dropped_columns(qualified, [c.name for c in info.columns])
        return Table(
            config.topic_prefix, schema, name, info.columns, info.primary_key,
            info.replica_identity, config.decimal_handling_mode, dropped,
            config.time_precision_mode, config.binary_handling_mode,
        )

    def _start_streaming(self) -> None:
        config, stream, meta = self._config, self._stream, self._meta
        assert config is not None and stream is not None and meta is not None
        assert self._factory is not None
        self._decoder = ChangeDecoder(
            config, self._factory, meta, self._confirmations, self._confirmations.acked
        )
        stream.start(config.slot_name, config.publication_name)
        self._phase = "streaming"
        self._cdc_metrics.connected(True)

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            self._release()

    def _release(self) -> None:
        """Close everything (dropping the slot with ``slot.drop.on.stop``)."""
        config = self._config
        if self._snapshot is not None:
            self._close_quietly(self._snapshot.finish)
            self._snapshot = None
        if self._stream is not None:
            self._close_quietly(self._stream.close)
            self._stream = None
        if config is not None and config.slot_drop_on_stop and self._meta is not None:
            self._close_quietly(lambda: self._drop_slot(config.slot_name))
        if self._meta is not None:
            self._close_quietly(self._meta.close)
            self._meta = None
        self._phase = "stopped"
        self._cdc_metrics.stopped()

    def _drop_slot(self, slot: str) -> None:
        assert self._meta is not None
        for _ in range(50):
            state = preflight.slot_state(self._meta, slot)
            if not state.exists:
                return
            if state.active_pid is None:
                self._meta.execute("SELECT pg_drop_replication_slot(%s)", (slot,))
                return
            time.sleep(0.1)

    @staticmethod
    def _close_quietly(close: Any) -> None:
        try:
            close()
        except Exception as exc:  # closing at stop: nothing left to save
            log.debug("closing at stop: %s", exc)

    # -- poll --------------------------------------------------------------------------------

    def poll(self) -> list[SourceRecord]:
        with self._lock:
            if self._stopping.is_set():
                return []
            self._probe_wal_lag()
            if self._phase == "snapshot":
                return self._poll_snapshot()
            if self._phase == "streaming":
                try:
                    return self._poll_stream()
                except RetriableError:
                    self._lose_stream()
                    raise
                except psycopg.OperationalError as exc:  # the catalog/heartbeat connection
                    self._lose_stream()
                    raise RetriableError(f"lost a connection to PostgreSQL: {exc}") from None
            if self._phase == "reconnecting":
                self._reconnect()
                return []
        assert self._config is not None
        self._stopping.wait(self._config.poll_interval_ms / 1000)  # initial_only: done
        return []

    def _lose_stream(self) -> None:
        """The stream broke: reconnect on the next poll (the runtime backs off first)."""
        if self._stream is not None:
            self._close_quietly(self._stream.close)
        self._stream = None
        self._phase = "reconnecting"
        self._cdc_metrics.connected(False)

    def _probe_wal_lag(self) -> None:
        """At most once per WAL_LAG_PROBE_INTERVAL_S: the slot's lag behind the server's WAL.

        A failed probe is only logged: the stream's own reads notice a broken server.
        """
        now = time.monotonic()
        meta, config = self._meta, self._config
        if now < self._next_lag_probe or meta is None or config is None:
            return
        self._next_lag_probe = now + WAL_LAG_PROBE_INTERVAL_S
        if meta.closed or meta.broken:
            return
        try:
            row = meta.execute(_WAL_LAG_QUERY, (config.slot_name,)).fetchone()
        except psycopg.Error as exc:
            log.debug("WAL lag probe failed: %s", exc)
            return
        if row is not None and row[0] is not None:
            self._cdc_metrics.wal_lag(int(row[0]))

    def _reconnect(self) -> None:
        """Open a new stream; resume after the last record handed to the runtime."""
        config = self._config
        assert config is not None and self._factory is not None
        if self._meta is None or self._meta.closed or self._meta.broken:
            self._meta = connect(config)
        self._stream = ReplicationStream(connect(config, replication=True))
        self._decoder = ChangeDecoder(
            config, self._factory, self._meta, self._confirmations, self._confirmations.emitted
        )
        self._stream.start(config.slot_name, config.publication_name)
        self._phase = "streaming"
        self._cdc_metrics.connected(True)
        log.info("replication stream of slot %s reopened", config.slot_name)

    def _poll_snapshot(self) -> list[SourceRecord]:
        assert self._config is not None and self._rows is not None
        out: list[SourceRecord] = []
        limit = self._config.max_batch_size
        while len(out) < limit:
            following = next(self._rows, None)
            if self._held is not None:
                out.append(self._snapshot_record(self._held, last=following is None))
            self._held = following
            if following is None:
                self._finish_snapshot()
                break
        snapshot = self._snapshot
        progress = snapshot.progress() if snapshot is not None else self._final_progress
        self._cdc_metrics.snapshot_progress(progress or {"tables": {}}, len(out))
        return out

    def _snapshot_record(self, row: Row, *, last: bool) -> SourceRecord:
        assert self._factory is not None and self._snapshot is not None
        table, values = row
        marker = "last" if last else "first" if self._snapshot_first else "true"
        self._snapshot_first = False
        data = table.row(values)
        source = self._factory.source(
            table, ts_us=self._snapshot.started_us, snapshot=marker,
            tx_id=self._snapshot.tx_id, lsn=self._snapshot_lsn,
            sequence=f'[null,"{self._snapshot_lsn}"]',  # Debezium's: no commit seen yet
        )
        offset = {
            "lsn": self._snapshot_lsn,
            "txId": self._snapshot.tx_id,
            "ts_usec": self._snapshot.started_us,
            "snapshot": True,
            "last_snapshot_record": last,
        }
        return self._factory.change(table, "r", table.key(data), None, data, source, offset)

    def _finish_snapshot(self) -> None:
        assert self._snapshot is not None and self._config is not None
        self._final_progress = self._snapshot.progress()
        self._snapshot.finish()
        self._snapshot = None
        self._rows = None
        log.info("snapshot done: %s rows", self._final_progress["rows_done"])
        self._cdc_metrics.snapshot_finished()
        if self._config.snapshot_mode == "initial_only":
            self._phase = "snapshot-only-done"
        else:
            self._start_streaming()

    def _poll_stream(self) -> list[SourceRecord]:
        config, stream, decoder = self._config, self._stream, self._decoder
        assert config is not None and stream is not None and decoder is not None
        out: list[SourceRecord] = []
        limit = config.max_batch_size
        wait_s = config.poll_interval_ms / 1000
        handle = decoder.handle
        events_before = decoder.events
        while len(out) < limit:
            data = stream.read(0 if out else wait_s)
            if data is None:
                break
            kind = data[0]
            if kind == 0x77:  # w: XLogData
                start, end, _ = parse_xlog_header(data)
                if end > stream.received_lsn:
                    stream.received_lsn = end
                handle(parse_message(data, 25), start, out)
            elif kind == 0x6B:  # k: keepalive
                wal_end, reply = parse_keepalive(data)
                self._keepalive(wal_end, reply)
        self._maybe_heartbeat(out)
        if stream.status_due(config.status_update_interval_ms / 1000):
            stream.send_status()
        self._cdc_metrics.streamed(decoder.events - events_before, decoder.last_event_ts_us)
        return out

    def _keepalive(self, wal_end: int, reply: bool) -> None:
        stream, decoder = self._stream, self._decoder
        assert stream is not None and decoder is not None
        self._keepalive_lsn = max(self._keepalive_lsn, wal_end)
        if wal_end > stream.received_lsn:
            stream.received_lsn = wal_end
        if not decoder.in_transaction and self._confirmations.drain_if_idle():
            stream.confirm(wal_end)  # nothing in flight: no change can be skipped by this
        if reply:
            stream.send_status()

    def _maybe_heartbeat(self, out: list[SourceRecord]) -> None:
        config, decoder = self._config, self._decoder
        assert config is not None and decoder is not None and self._factory is not None
        if not config.heartbeat_interval_ms or decoder.in_transaction:
            return
        now = time.monotonic()
        if now < self._next_heartbeat:
            return
        self._next_heartbeat = now + config.heartbeat_interval_ms / 1000
        if config.heartbeat_action_query and self._meta is not None:
            try:
                self._meta.execute(config.heartbeat_action_query)
            except psycopg.Error as exc:
                log.warning("heartbeat.action.query failed: %s", exc)
        lsn = max(self._keepalive_lsn, decoder.last_commit_end)
        if lsn == 0:
            return
        self._confirmations.emit((lsn, -1))
        self._confirmations.completed(lsn)
        out.append(self._factory.heartbeat({
            "lsn": lsn, "lsn_commit": lsn, "lsn_proc": lsn, "seq": -1,
            "ts_usec": time.time_ns() // 1000,
        }))

    # -- acknowledgement ---------------------------------------------------------------------

    def commit_record(self, record: SourceRecord) -> None:
        offset = record.source_offset
        if offset is not None and "lsn_commit" in offset:
            self._confirmations.acknowledged((offset["lsn_commit"], offset["seq"]))

    def commit(self) -> None:
        with self._lock:
            lsn = self._confirmations.confirmable()
            if lsn is not None and self._stream is not None and self._stream.streaming:
                self._stream.confirm(lsn)

    # -- status ------------------------------------------------------------------------------

    def details(self) -> dict[str, Any]:
        config = self._config
        stream, snapshot, decoder = self._stream, self._snapshot, self._decoder
        info: dict[str, Any] = {"phase": self._phase}
        if config is not None:
            info["slot"] = config.slot_name
            info["publication"] = config.publication_name
        if snapshot is not None:
            info["snapshot"] = snapshot.progress()
        elif self._final_progress is not None:
            info["snapshot"] = self._final_progress
        if stream is not None:
            info["received_lsn"] = format_lsn(stream.received_lsn)
            info["confirmed_lsn"] = format_lsn(stream.confirmed_lsn)
        if decoder is not None:
            info["events"] = decoder.events
        return info
