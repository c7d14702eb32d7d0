"""Catalog queries: which tables exist, their columns, keys and size estimates."""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from connectors.postgres_cdc.tables import Column

_USER_TABLES = """
SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%%'
ORDER BY 1, 2
"""
# generated columns are left out, as pgoutput leaves them out of its messages
_COLUMNS = """
SELECT a.attname, a.atttypid, a.atttypmod, NOT a.attnotnull
FROM pg_attribute a WHERE a.attrelid = %s AND a.attnum > 0 AND NOT a.attisdropped
  AND a.attgenerated = ''
ORDER BY a.attnum
"""
_PRIMARY_KEY = """
SELECT a.attname FROM pg_index i
JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, pos) ON true
JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
WHERE i.indrelid = %s AND i.indisprimary ORDER BY k.pos
"""
_RELATION = """
SELECT c.oid, c.relreplident, c.reltuples FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relname = %s
"""


@dataclass(frozen=True, slots=True)
class TableInfo:
    """What the catalog says about one table now."""

    relid: int
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    replica_identity: str
    estimated_rows: int | None  # pg_class.reltuples; None before the first ANALYZE/VACUUM


def user_tables(conn: psycopg.Connection) -> list[str]:
    """``schema.table`` of every table holding rows (partitions, not their parents: pgoutput
    publishes changes under the partition's name) outside the system schemas."""
    return [f"{s}.{t}" for s, t in conn.execute(_USER_TABLES).fetchall()]


def published_tables(conn: psycopg.Connection, publication: str) -> list[str] | None:
    """``schema.table`` of the publication's tables; None when it does not exist."""
    found = conn.execute("SELECT 1 FROM pg_publication WHERE pubname = %s", (publication,))
    if found.fetchone() is None:
        return None
    rows = conn.execute(
        "SELECT schemaname, tablename FROM pg_publication_tables WHERE pubname = %s "
        "ORDER BY 1, 2",
        (publication,),
    ).fetchall()
    return [f"{s}.{t}" for s, t in rows]


def describe_table(conn: psycopg.Connection, schema: str, table: str) -> TableInfo | None:
    """The table's columns, primary key and replica identity; None when it does not exist."""
    row = conn.execute(_RELATION, (schema, table)).fetchone()
    if row is None:
        return None
    relid, replident, reltuples = row
    columns = tuple(
        Column(name, oid, typmod, optional)
        for name, oid, typmod, optional in conn.execute(_COLUMNS, (relid,)).fetchall()
    )
    key = tuple(name for (name,) in conn.execute(_PRIMARY_KEY, (relid,)).fetchall())
    return TableInfo(relid, columns, key, replident, int(reltuples) if reltuples >= 0 else None)


def split_name(qualified: str) -> tuple[str, str]:
    schema, _, table = qualified.partition(".")
    return schema, table


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def describe_relid(conn: psycopg.Connection, relid: int) -> TableInfo | None:
    """:func:`describe_table` by the table's OID (what pgoutput Relation messages carry)."""
    row = conn.execute(
        "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n "
        "ON n.oid = c.relnamespace WHERE c.oid = %s",
        (relid,),
    ).fetchone()
    return None if row is None else describe_table(conn, row[0], row[1])
