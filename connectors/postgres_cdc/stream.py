"""The replication connection: slot commands and the pgoutput stream (COPY BOTH).

psycopg's ``cursor.copy()`` refuses ``START_REPLICATION``, so this module
drives libpq through ``conn.pgconn``: replication commands go through
``exec_`` (simple query protocol, which walsenders require), the stream is
read with non-blocking ``get_copy_data`` and a ``select`` on the socket
bounded by a timeout (so ``stop()`` is honoured), and standby status updates
(``r`` messages) report the positions::

    r  Int64 written  Int64 flushed  Int64 applied  Int64 now_us(2000)  Byte1 reply

``flushed`` is what moves the slot's ``confirmed_flush_lsn``: it is only ever
set to what :meth:`ReplicationStream.confirm` was given (the task confirms in
``commit()``, after the offsets are durable), never to what was merely read.
"""

from __future__ import annotations

import select
import struct
import time
from dataclasses import dataclass

import psycopg
from psycopg import pq

from connectors.api import ConnectError, RetriableError
from connectors.postgres_cdc.pgoutput import PG_EPOCH_OFFSET_US

_STATUS = struct.Struct(">QQQqB")
_COPY_WOULD_BLOCK = 0


@dataclass(frozen=True, slots=True)
class CreatedSlot:
    consistent_lsn: int
    snapshot_name: str | None


def format_lsn(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def parse_lsn(text: str) -> int:
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


class ReplicationStream:
    """One replication connection: create/drop the slot, stream it, confirm positions."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self._conn = conn
        self._pg = conn.pgconn
        self.streaming = False
        self.received_lsn = 0  # highest WAL end seen (written)
        self.confirmed_lsn = 0  # highest position confirmed as flushed
        self._last_status = 0.0

    # -- slot commands (before streaming) -------------------------------------------------

    def _command(self, sql: str) -> pq.abc.PGresult:
        result = self._pg.exec_(sql.encode())
        if result.status not in (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK):
            message = (result.error_message or b"").decode(errors="replace").strip()
            raise ConnectError(f"{sql.split(' (')[0]} failed: {message}")
        return result

    def create_slot(self, slot: str, *, export_snapshot: bool) -> CreatedSlot:
        """Create the logical slot; with ``export_snapshot`` its snapshot stays importable
        (``SET TRANSACTION SNAPSHOT``) until the next command on this connection."""
        mode = "export" if export_snapshot else "nothing"
        result = self._command(
            f"CREATE_REPLICATION_SLOT {slot} LOGICAL pgoutput (SNAPSHOT '{mode}')"
        )
        point = result.get_value(0, 1)
        if point is None:
            raise ConnectError(f"CREATE_REPLICATION_SLOT {slot} returned no consistent point")
        lsn = parse_lsn(point.decode())
        name = result.get_value(0, 2)
        return CreatedSlot(lsn, name.decode() if name else None)

    def drop_slot(self, slot: str) -> None:
        self._command(f"DROP_REPLICATION_SLOT {slot}")

    # -- streaming -----------------------------------------------------------------------

    def start(self, slot: str, publication: str, start_lsn: int = 0) -> None:
        """Enter COPY BOTH; the server resumes after the slot's confirmed position."""
        pub = publication.replace("'", "''")
        self._pg.send_query(
            f"START_REPLICATION SLOT {slot} LOGICAL {format_lsn(start_lsn)} "
            f"(proto_version '1', publication_names '{pub}')".encode()
        )
        result = self._pg.get_result()
        if result is None or result.status != pq.ExecStatus.COPY_BOTH:
            message = b"" if result is None else (result.error_message or b"")
            raise ConnectError(
                f"START_REPLICATION on slot {slot!r} failed: "
                f"{message.decode(errors='replace').strip()}"
            )
        self._pg.nonblocking = 1
        self.streaming = True
        self._last_status = time.monotonic()

    def read(self, timeout_s: float) -> bytes | None:
        """The next CopyData message, or None after ``timeout_s`` without one."""
        pg = self._pg
        deadline = None
        while True:
            try:
                size, data = pg.get_copy_data(1)
            except psycopg.OperationalError as exc:
                raise RetriableError(f"the replication stream broke: {exc}") from None
            if size > 0:
                return bytes(data)
            if size == -1:  # COPY finished: the server ended the stream
                result = pg.get_result()
                message = b"" if result is None else (result.error_message or b"")
                raise RetriableError(
                    f"the server ended replication: {message.decode(errors='replace')}"
                )
            if size == -2:
                raise RetriableError(f"replication stream error: {pg.error_message.decode()}")
            now = time.monotonic()
            if deadline is None:
                deadline = now + timeout_s
            remaining = deadline - now
            if remaining <= 0:
                return None
            ready, _, _ = select.select([pg.socket], [], [], remaining)
            if ready:
                try:
                    pg.consume_input()
                except psycopg.OperationalError as exc:
                    raise RetriableError(f"the replication stream broke: {exc}") from None

    def confirm(self, lsn: int) -> None:
        """Tell the server everything up to ``lsn`` is durable downstream."""
        if lsn > self.confirmed_lsn:
            self.confirmed_lsn = lsn
            self.send_status()

    def send_status(self, *, reply: bool = False) -> None:
        """A standby status update: written = received, flushed = applied = confirmed."""
        if not self.streaming:
            return
        now_us = time.time_ns() // 1000 - PG_EPOCH_OFFSET_US
        flushed = self.confirmed_lsn
        message = b"r" + _STATUS.pack(
            max(self.received_lsn, flushed), flushed, flushed, now_us, 1 if reply else 0
        )
        try:
            self._pg.put_copy_data(message)
            self._pg.flush()
        except psycopg.OperationalError as exc:
            raise RetriableError(f"sending the replication status failed: {exc}") from None
        self._last_status = time.monotonic()

    def status_due(self, interval_s: float) -> bool:
        return time.monotonic() - self._last_status >= interval_s

    def close(self) -> None:
        self.streaming = False
        self._conn.close()
