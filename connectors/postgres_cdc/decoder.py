"""pgoutput messages -> Debezium change records, transaction by transaction.

Keeps the relation cache (a Relation message after ALTER TABLE replaces a
table's entry, so later events carry the new schema), the current
transaction, and each record's position for :mod:`.positions`. Records at or
before ``resume`` (the stored offset's position) were delivered by an earlier
run and are skipped, so a restart inside a partially delivered transaction
neither loses nor doubles its events.

Update and delete ``before`` images follow REPLICA IDENTITY: DEFAULT sends the
old key only when the key changed (``before`` null otherwise; a delete's
``before`` has the key columns, others null); FULL sends the whole old row. An
update that changes the primary key becomes a delete (+ tombstone) of the old
key and a create of the new one, as Debezium emits it.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg

from connectors.api import SourceRecord
from connectors.postgres_cdc import catalog
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.events import EventFactory
from connectors.postgres_cdc.pgoutput import (
    Begin,
    Commit,
    Delete,
    Insert,
    Message,
    Origin,
    Relation,
    Truncate,
    Update,
)
from connectors.postgres_cdc.positions import Confirmations, Position
from connectors.postgres_cdc.tables import Column, Table

log = logging.getLogger(__name__)


class ChangeDecoder:
    """Turns one replication stream's messages into records (see the module doc)."""

    def __init__(
        self,
        config: PostgresCdcConfig,
        factory: EventFactory,
        meta: psycopg.Connection,
        confirmations: Confirmations,
        resume: Position,
    ) -> None:
        self._config = config
        self._factory = factory
        self._meta = meta
        self._confirmations = confirmations
        self._resume = resume
        self._skipped = config.skipped
        self._tables: dict[int, Table | None] = {}
        self._begin: Begin | None = None
        self._origin: Origin | None = None
        self._seq = -1
        self._skip_tx = False
        self._last_commit_lsn: int | None = None
        self.events = 0
        self.last_commit_end = 0
        self.last_event_ts_us = 0  # commit time of the last change event emitted (Unix epoch)

    @property
    def in_transaction(self) -> bool:
        return self._begin is not None

    def handle(self, message: Message | None, lsn: int, out: list[SourceRecord]) -> None:
        """Append the records of ``message`` (read at ``lsn``) to ``out``."""
        if isinstance(message, Insert | Update | Delete):
            table = self._tables.get(message.relid)
            if table is not None and not self._skip_tx:
                self._row_change(message, table, lsn, out)
        elif isinstance(message, Begin):
            self._begin = message
            self._origin = None
            self._seq = -1
            self._skip_tx = message.final_lsn < self._resume[0]
        elif isinstance(message, Commit):
            self._begin = None
            self._last_commit_lsn = message.commit_lsn
            self.last_commit_end = message.end_lsn
            self._confirmations.completed(message.end_lsn)
        elif isinstance(message, Relation):
            self._tables[message.relid] = self._table(message)
        elif isinstance(message, Origin):
            self._origin = message
        elif isinstance(message, Truncate) and "t" not in self._skipped and not self._skip_tx:
            for relid in message.relids:
                table = self._tables.get(relid)
                if table is not None:
                    self._emit(table, "t", None, None, None, lsn, out)

    # -- row changes -------------------------------------------------------------------------

    def _row_change(
        self, message: Insert | Update | Delete, table: Table, lsn: int, out: list[SourceRecord]
    ) -> None:
        if type(message) is Insert:
            after = table.row(message.new)
            self._emit(table, "c", table.key(after), None, after, lsn, out)
        elif type(message) is Update:
            after = table.row(message.new)
            before = None if message.old is None else self._old(table, message.old,
                                                                  message.old_is_key)
            key = table.key(after)
            old_key = None if before is None else table.key(before)
            if old_key is not None and old_key != key:
                self._delete(table, old_key, before, lsn, out)
                self._emit(table, "c", key, None, after, lsn, out)
            else:
                self._emit(table, "u", key, before, after, lsn, out)
        else:
            assert isinstance(message, Delete)
            before = self._old(table, message.old, message.old_is_key)
            self._delete(table, table.key(before), before, lsn, out)

    @staticmethod
    def _old(table: Table, values: list[Any], key_only: bool) -> dict[str, Any]:
        return table.key_only_row(values) if key_only else table.row(values)

    def _delete(
        self,
        table: Table,
        key: dict[str, Any] | None,
        before: dict[str, Any] | None,
        lsn: int,
        out: list[SourceRecord],
    ) -> None:
        self._emit(table, "d", key, before, None, lsn, out)
        if self._factory.tombstones and key is not None and "d" not in self._skipped:
            position = self._next_position()
            if position > self._resume:
                out.append(self._factory.tombstone(table, key, self._offset(lsn, position)))

    def _emit(
        self,
        table: Table,
        op: str,
        key: dict[str, Any] | None,
        before: dict[str, Any] | None,
        after: dict[str, Any] | None,
        lsn: int,
        out: list[SourceRecord],
    ) -> None:
        if op in self._skipped:
            return
        position = self._next_position()
        if position <= self._resume:
            return
        begin = self._begin
        assert begin is not None, "a change outside a transaction"
        last = self._last_commit_lsn
        origin = self._origin
        source = self._factory.source(
            table,
            ts_us=begin.commit_ts_us,
            snapshot="false",
            tx_id=begin.xid,
            lsn=lsn,
            sequence=f'["{last}","{lsn}"]' if last is not None else f'[null,"{lsn}"]',
            origin=origin,
        )
        offset = self._offset(lsn, position)
        out.append(self._factory.change(table, op, key, before, after, source, offset))
        self.events += 1
        self.last_event_ts_us = begin.commit_ts_us

    def _next_position(self) -> Position:
        assert self._begin is not None, "a change outside a transaction"
        self._seq += 1
        position = (self._begin.final_lsn, self._seq)
        self._confirmations.emit(position)
        return position

    def _offset(self, lsn: int, position: Position) -> dict[str, Any]:
        begin = self._begin
        assert begin is not None
        return {
            "lsn": lsn,
            "txId": begin.xid,
            "ts_usec": begin.commit_ts_us,
            "lsn_commit": position[0],
            "lsn_proc": lsn,
            "seq": position[1],
        }

    # -- relations -------------------------------------------------------------------------

    def _table(self, relation: Relation) -> Table | None:
        qualified = f"{relation.namespace}.{relation.name}"
        if not self._config.captures(qualified):
            return None
        info = catalog.describe_relid(self._meta, relation.relid)
        optional = {c.name: c.optional for c in info.columns} if info else {}
        if info is not None and info.primary_key:
            key = info.primary_key
        else:
            key = tuple(c.name for c in relation.columns if c.is_key)
            if relation.replica_identity == "f":
                key = ()  # FULL marks every column; without a primary key there is no key
        columns = [
            Column(c.name, c.type_oid, c.typmod, optional.get(c.name, True))
            for c in relation.columns
        ]
        table = Table(
            self._config.topic_prefix,
            relation.namespace,
            relation.name,
            columns,
            key,
            relation.replica_identity,
            self._config.decimal_handling_mode,
            self._config.dropped_columns(qualified, [c.name for c in columns]),
            self._config.time_precision_mode,
            self._config.binary_handling_mode,
        )
        previous = self._tables.get(relation.relid)
        if previous is not None and not previous.same_shape(table):
            log.info("table %s changed shape: new schema from now on", qualified)
        return table
