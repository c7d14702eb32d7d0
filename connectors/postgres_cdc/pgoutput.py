"""A parser of PostgreSQL's ``pgoutput`` logical replication messages (protocol version 1).

The replication stream carries CopyData messages; ``w`` (XLogData) wraps one
pgoutput message and ``k`` is a primary keepalive::

    w  Int64 data_start  Int64 wal_end  Int64 send_time  Byte[n] message
    k  Int64 wal_end     Int64 send_time Byte1 reply_requested

The pgoutput messages parsed here (big-endian, strings NUL-terminated)::

    B  Begin     Int64 final_lsn  Int64 commit_ts_us(2000)  Int32 xid
    O  Origin    Int64 commit_lsn (on the origin server)  String name
    C  Commit    Int8 flags  Int64 commit_lsn  Int64 end_lsn  Int64 commit_ts_us
    R  Relation  Int32 relid  String ns  String name  Int8 replident  Int16 ncols
                 ncols x (Int8 flags(1=key)  String name  Int32 type_oid  Int32 typmod)
    Y  Type      Int32 oid  String ns  String name
    I  Insert    Int32 relid  'N' TupleData
    U  Update    Int32 relid  ['K'|'O' TupleData]  'N' TupleData
    D  Delete    Int32 relid  'K'|'O' TupleData
    T  Truncate  Int32 nrels  Int8 options  nrels x Int32 relid
    TupleData    Int16 ncols  ncols x ('n' | 'u' | 't' Int32 len Byte[len])

Logical decoding messages (``M``) are returned as None: the connector does
not use them. An Origin follows the Begin of a transaction that was replayed
from another server (a subscription, or a session with a replication origin).
Column values stay text (``str``), or :data:`NULL` / :data:`UNCHANGED_TOAST`
markers; :mod:`.values` parses them.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

#: Microseconds between the Unix epoch and PostgreSQL's epoch (2000-01-01).
PG_EPOCH_OFFSET_US = 946_684_800_000_000

UNCHANGED_TOAST = object()  # a 'u' column: an unchanged TOASTed value the server did not send

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_Q = struct.Struct(">Q")
_QQQ = struct.Struct(">QQQ")
_BEGIN = struct.Struct(">QqI")
_COMMIT = struct.Struct(">BQQq")
_KEEPALIVE = struct.Struct(">QqB")

Tuple = list  # list of str | None | UNCHANGED_TOAST, one per column


@dataclass(frozen=True, slots=True)
class Begin:
    final_lsn: int
    commit_ts_us: int  # Unix epoch
    xid: int


@dataclass(frozen=True, slots=True)
class Origin:
    commit_lsn: int  # the transaction's commit LSN on the origin server
    name: str


@dataclass(frozen=True, slots=True)
class Commit:
    commit_lsn: int
    end_lsn: int
    commit_ts_us: int  # Unix epoch


@dataclass(frozen=True, slots=True)
class RelationColumn:
    name: str
    type_oid: int
    typmod: int
    is_key: bool


@dataclass(frozen=True, slots=True)
class Relation:
    relid: int
    namespace: str
    name: str
    replica_identity: str  # d(efault) n(othing) f(ull) i(ndex)
    columns: tuple[RelationColumn, ...]


@dataclass(frozen=True, slots=True)
class TypeInfo:
    oid: int
    namespace: str
    name: str


@dataclass(frozen=True, slots=True)
class Insert:
    relid: int
    new: Tuple


@dataclass(frozen=True, slots=True)
class Update:
    relid: int
    old: Tuple | None
    old_is_key: bool  # 'K' (only replica identity columns) vs 'O' (whole old row)
    new: Tuple


@dataclass(frozen=True, slots=True)
class Delete:
    relid: int
    old: Tuple
    old_is_key: bool


@dataclass(frozen=True, slots=True)
class Truncate:
    relids: tuple[int, ...]
    cascade: bool
    restart_identity: bool


Message = Begin | Origin | Commit | Relation | TypeInfo | Insert | Update | Delete | Truncate


class ProtocolError(ValueError):
    """A replication message that does not follow the pgoutput protocol."""


def parse_xlog_header(data: bytes | memoryview) -> tuple[int, int, int]:
    """``(data_start, wal_end, send_time_us)`` of a ``w`` CopyData message."""
    return _QQQ.unpack_from(data, 1)


def parse_keepalive(data: bytes | memoryview) -> tuple[int, bool]:
    """``(wal_end, reply_requested)`` of a ``k`` CopyData message."""
    wal_end, _send_time, reply = _KEEPALIVE.unpack_from(data, 1)
    return wal_end, bool(reply)


def parse_message(buf: bytes, pos: int = 0) -> Message | None:
    """Parse the pgoutput message starting at ``buf[pos]`` (None for a logical decoding
    Message)."""
    kind = buf[pos]
    pos += 1
    try:
        if kind == 0x49:  # I
            relid = _U32.unpack_from(buf, pos)[0]
            return Insert(relid, _tuple(buf, pos + 5)[0])
        if kind == 0x55:  # U
            return _update(buf, pos)
        if kind == 0x44:  # D
            relid = _U32.unpack_from(buf, pos)[0]
            marker = buf[pos + 4]
            return Delete(relid, _tuple(buf, pos + 5)[0], marker == 0x4B)
        if kind == 0x42:  # B
            final_lsn, ts, xid = _BEGIN.unpack_from(buf, pos)
            return Begin(final_lsn, ts + PG_EPOCH_OFFSET_US, xid)
        if kind == 0x43:  # C
            _flags, commit_lsn, end_lsn, ts = _COMMIT.unpack_from(buf, pos)
            return Commit(commit_lsn, end_lsn, ts + PG_EPOCH_OFFSET_US)
        if kind == 0x52:  # R
            return _relation(buf, pos)
        if kind == 0x59:  # Y
            oid = _U32.unpack_from(buf, pos)[0]
            namespace, pos = _cstring(buf, pos + 4)
            name, _ = _cstring(buf, pos)
            return TypeInfo(oid, namespace, name)
        if kind == 0x54:  # T
            nrels = _I32.unpack_from(buf, pos)[0]
            options = buf[pos + 4]
            relids = struct.unpack_from(f">{nrels}I", buf, pos + 5)
            return Truncate(tuple(relids), bool(options & 1), bool(options & 2))
        if kind == 0x4F:  # O
            commit_lsn = _Q.unpack_from(buf, pos)[0]
            return Origin(commit_lsn, _cstring(buf, pos + 8)[0])
        if kind == 0x4D:  # M(essage)
            return None
    except (struct.error, IndexError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"malformed pgoutput message {chr(kind)!r}: {exc}") from None
    raise ProtocolError(f"unknown pgoutput message type {chr(kind)!r}")


def _update(buf: bytes, pos: int) -> Update:
    relid = _U32.unpack_from(buf, pos)[0]
    marker = buf[pos + 4]
    old_is_key = marker == 0x4B
    old = None
    pos += 5
    if marker in (0x4B, 0x4F):  # K, O
        old, pos = _tuple(buf, pos)
        marker = buf[pos]
        pos += 1
    if marker != 0x4E:  # N
        raise ProtocolError(f"update without a new tuple (marker {chr(marker)!r})")
    new, _ = _tuple(buf, pos)
    return Update(relid, old, old_is_key, new)


def _relation(buf: bytes, pos: int) -> Relation:
    relid = _U32.unpack_from(buf, pos)[0]
    namespace, pos = _cstring(buf, pos + 4)
    name, pos = _cstring(buf, pos)
    replident = chr(buf[pos])
    ncols = _I16.unpack_from(buf, pos + 1)[0]
    pos += 3
    columns = []
    for _ in range(ncols):
        flags = buf[pos]
        colname, pos = _cstring(buf, pos + 1)
        oid, typmod = struct.unpack_from(">Ii", buf, pos)
        pos += 8
        columns.append(RelationColumn(colname, oid, typmod, bool(flags & 1)))
    return Relation(relid, namespace or "pg_catalog", name, replident, tuple(columns))


def _cstring(buf: bytes, pos: int) -> tuple[str, int]:
    end = buf.index(0, pos)
    return buf[pos:end].decode("utf-8"), end + 1


def _tuple(buf: bytes, pos: int) -> tuple[Tuple, int]:
    ncols = _I16.unpack_from(buf, pos)[0]
    pos += 2
    values: Tuple = []
    append = values.append
    for _ in range(ncols):
        kind = buf[pos]
        if kind == 0x74:  # t
            length = _I32.unpack_from(buf, pos + 1)[0]
            start = pos + 5
            pos = start + length
            append(buf[start:pos].decode("utf-8"))
        elif kind == 0x6E:  # n
            append(None)
            pos += 1
        elif kind == 0x75:  # u
            append(UNCHANGED_TOAST)
            pos += 1
        else:
            raise ProtocolError(f"unsupported tuple column kind {chr(kind)!r}")
    return values, pos
