"""Debezium change events as SourceRecords: envelope, source block, key, offsets.

Offsets (partition ``{"server": <topic.prefix>}``) follow Debezium's names::

    streaming  {"lsn", "txId", "ts_usec", "lsn_commit", "lsn_proc", "seq"}
    snapshot   {"lsn", "txId", "ts_usec", "snapshot": true, "last_snapshot_record"}

``lsn_commit`` is the commit LSN of the event's transaction (pgoutput's Begin
``final_lsn``) and ``seq`` the index of the record within that transaction's
records; ``(lsn_commit, seq)`` orders every streamed record, which is how a
restarted task skips what was already delivered (see :mod:`.task`).

Values follow Debezium 3.x (:data:`~.tables.DEBEZIUM_VERSION`): the envelope
and the source block carry their time in ``ts_ms``, ``ts_us`` and ``ts_ns``.
The envelope's is when the connector made the event; the source's is the
commit time while streaming (PostgreSQL's microseconds, so ``ts_ns`` ends in
000) and the snapshot's start while snapshotting.
"""

from __future__ import annotations

import time
from typing import Any

from connectors.api import Schema, SchemaType, SourceRecord, struct
from connectors.postgres_cdc.pgoutput import Origin
from connectors.postgres_cdc.tables import DEBEZIUM_VERSION, Table

# as Debezium 3.x: version 1 on both, the value has ts_ms only
HEARTBEAT_KEY_SCHEMA = Schema(
    SchemaType.STRUCT, name="io.debezium.connector.common.ServerNameKey", version=1,
    fields=struct(("serverName", Schema(SchemaType.STRING))).fields,
)
HEARTBEAT_VALUE_SCHEMA = Schema(
    SchemaType.STRUCT, name="io.debezium.connector.common.Heartbeat", version=1,
    fields=struct(("ts_ms", Schema(SchemaType.INT64))).fields,
)


class EventFactory:
    """Makes the records of one connector (its prefix and database are fixed)."""

    def __init__(self, prefix: str, dbname: str, *, tombstones: bool) -> None:
        self.prefix = prefix
        self.dbname = dbname
        self.tombstones = tombstones
        self.partition = {"server": prefix}
        self.heartbeat_topic = f"__debezium-heartbeat.{prefix}"
        self._heartbeat_key = {"serverName": prefix}
        self._sources: dict[str, dict[str, Any]] = {}  # by schema.table

    def source(
        self,
        table: Table,
        *,
        ts_us: int,
        snapshot: str,
        tx_id: int | None,
        lsn: int | None,
        sequence: str | None,
        origin: Origin | None = None,
    ) -> dict[str, Any]:
        """The source block; ``ts_us``: the event's time in µs since the epoch, ``origin``:
        where a replayed transaction was first committed (its name and commit LSN there)."""
        template = self._sources.get(table.qualified_name)
        if template is None:
            template = self._sources[table.qualified_name] = self._source_template(table)
        block = template.copy()  # a copy and 7 stores beat a 16-key dict literal
        block["ts_ms"] = ts_us // 1000
        block["snapshot"] = snapshot
        block["sequence"] = sequence
        block["ts_us"] = ts_us
        block["ts_ns"] = ts_us * 1000
        block["txId"] = tx_id
        block["lsn"] = lsn
        if origin is not None:
            block["origin"] = origin.name
            block["origin_lsn"] = origin.commit_lsn
        return block

    def _source_template(self, table: Table) -> dict[str, Any]:
        """A table's source block with the per-event fields null, in the schema's order."""
        return {
            "version": DEBEZIUM_VERSION,
            "connector": "postgresql",
            "name": self.prefix,
            "ts_ms": None,
            "snapshot": None,
            "db": self.dbname,
            "sequence": None,
            "ts_us": None,
            "ts_ns": None,
            "schema": table.schema_name,
            "table": table.table_name,
            "txId": None,
            "lsn": None,
            "xmin": None,
            "origin": None,
            "origin_lsn": None,
        }

    def change(
        self,
        table: Table,
        op: str,
        key: dict[str, Any] | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        source: dict[str, Any],
        offset: dict[str, Any],
    ) -> SourceRecord:
        """One change event (op c, u, d, r or t)."""
        now_ns = time.time_ns()
        value = {
            "before": before,
            "after": after,
            "source": source,
            "transaction": None,
            "op": op,
            "ts_ms": now_ns // 1_000_000,
            "ts_us": now_ns // 1000,
            "ts_ns": now_ns,
        }
        return SourceRecord(
            topic=table.topic,
            key=key,
            key_schema=table.key_schema if key is not None else None,
            value=value,
            value_schema=table.envelope_schema,
            source_partition=self.partition,
            source_offset=offset,
        )

    def tombstone(self, table: Table, key: dict[str, Any], offset: dict[str, Any]) -> SourceRecord:
        """The null-valued record after a delete, so compaction can drop the key."""
        return SourceRecord(
            topic=table.topic,
            key=key,
            key_schema=table.key_schema,
            value=None,
            value_schema=None,
            source_partition=self.partition,
            source_offset=offset,
        )

    def heartbeat(self, offset: dict[str, Any]) -> SourceRecord:
        """A record on ``__debezium-heartbeat.<prefix>`` carrying the latest safe offset."""
        return SourceRecord(
            topic=self.heartbeat_topic,
            key=self._heartbeat_key,
            key_schema=HEARTBEAT_KEY_SCHEMA,
            value={"ts_ms": time.time_ns() // 1_000_000},
            value_schema=HEARTBEAT_VALUE_SCHEMA,
            source_partition=self.partition,
            source_offset=offset,
        )
