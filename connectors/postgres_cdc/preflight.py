"""What must hold before capture can start, checked against the real server.

Used by ``check()`` (``sluice validate``, the REST validate endpoint) to list
every problem, and by the task's ``start()``, which fails with the first
ones. Each problem names the key or the server setting to change.
"""

from __future__ import annotations

from dataclasses import dataclass

import psycopg

from connectors.api import ConnectError
from connectors.postgres_cdc import catalog
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.connections import connect
from connectors.postgres_cdc.stream import parse_lsn


@dataclass(frozen=True, slots=True)
class SlotState:
    exists: bool
    active_pid: int | None = None
    confirmed_lsn: int = 0
    plugin: str | None = None


def slot_state(conn: psycopg.Connection, slot: str) -> SlotState:
    row = conn.execute(
        "SELECT active_pid, confirmed_flush_lsn::text, plugin, database "
        "FROM pg_replication_slots WHERE slot_name = %s",
        (slot,),
    ).fetchone()
    if row is None:
        return SlotState(False)
    pid, confirmed, plugin, _db = row
    return SlotState(True, pid, parse_lsn(confirmed) if confirmed else 0, plugin)


def problems(config: PostgresCdcConfig) -> list[str]:
    """Every problem found (connectivity, wal_level, tables, publication, slot)."""
    try:
        conn = connect(config)
    except ConnectError as exc:
        return [str(exc)]
    with conn:
        return server_problems(conn, config)


def server_problems(conn: psycopg.Connection, config: PostgresCdcConfig) -> list[str]:
    found = []
    wal_level = conn.execute("SHOW wal_level").fetchone()
    if wal_level is None or wal_level[0] != "logical":
        level = wal_level[0] if wal_level else "unknown"
        found.append(
            f"the server's wal_level is {level!r}: logical decoding needs wal_level=logical "
            "(set it in postgresql.conf and restart PostgreSQL)"
        )
    can_replicate = conn.execute(
        "SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    if not (can_replicate and can_replicate[0]):
        found.append(f"database.user: role {config.user!r} lacks the REPLICATION attribute")
    tables = catalog.user_tables(conn)
    schemas = {catalog.split_name(name)[0] for name in tables}
    for pattern in config.schema_include_patterns:
        if not any(pattern.fullmatch(schema) for schema in schemas):
            found.append(
                f"schema.include.list: no schema with tables matches {pattern.pattern!r} in "
                f"database {config.dbname!r}"
            )
    for pattern in config.include_patterns:
        if not any(pattern.fullmatch(name) for name in tables):
            found.append(
                f"table.include.list: no table matches {pattern.pattern!r} in database "
                f"{config.dbname!r}"
            )
    disabled = config.publication_autocreate_mode == "disabled"
    if disabled and catalog.published_tables(conn, config.publication_name) is None:
        found.append(
            f"publication.name: publication {config.publication_name!r} does not exist "
            "and publication.autocreate.mode=disabled (create it, or use all_tables or "
            "filtered)"
        )
    slot = slot_state(conn, config.slot_name)
    if slot.exists and slot.plugin != "pgoutput":
        found.append(
            f"slot.name: slot {config.slot_name!r} exists with plugin {slot.plugin!r}, "
            "not pgoutput"
        )
    if slot.active_pid is not None:
        found.append(
            f"slot.name: replication slot {config.slot_name!r} is in use by another consumer "
            f"(PID {slot.active_pid}); stop it or choose another slot.name"
        )
    return found
