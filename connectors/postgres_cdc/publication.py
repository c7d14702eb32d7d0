"""Creating or updating the publication per ``publication.autocreate.mode`` (as Debezium)."""

from __future__ import annotations

import logging

import psycopg

from connectors.api import ConnectError
from connectors.postgres_cdc import catalog
from connectors.postgres_cdc.catalog import quote_ident, split_name
from connectors.postgres_cdc.config import PostgresCdcConfig

log = logging.getLogger(__name__)


def ensure_publication(conn: psycopg.Connection, config: PostgresCdcConfig) -> list[str]:
    """Make the publication exist as configured; return the captured ``schema.table`` names.

    all_tables: ``FOR ALL TABLES`` when missing; filtered: ``FOR TABLE`` the
    captured tables, those passing the schema and table lists (updated with
    ``SET TABLE`` if it exists); no_tables: created empty; disabled: must
    exist (ConnectError otherwise).
    """
    name = config.publication_name
    mode = config.publication_autocreate_mode
    published = catalog.published_tables(conn, name)
    tables = catalog.user_tables(conn)
    wanted = [t for t in tables if config.captures(t)]
    pub = quote_ident(name)
    try:
        if mode == "filtered":
            listed = ", ".join(_quoted(t) for t in wanted)
            if not wanted:
                raise ConnectError("publication.autocreate.mode=filtered: no table to publish")
            if published is None:
                conn.execute(f"CREATE PUBLICATION {pub} FOR TABLE {listed}")
            elif sorted(published) != sorted(wanted):
                conn.execute(f"ALTER PUBLICATION {pub} SET TABLE {listed}")
        elif published is None:
            if mode == "disabled":
                raise ConnectError(
                    f"publication.name: publication {name!r} does not exist and "
                    "publication.autocreate.mode=disabled"
                )
            suffix = " FOR ALL TABLES" if mode == "all_tables" else ""
            conn.execute(f"CREATE PUBLICATION {pub}{suffix}")
            log.info("created publication %s%s", name, suffix)
    except psycopg.Error as exc:
        raise ConnectError(f"publication.name: cannot create or update {name!r}: {exc}") from None
    published = catalog.published_tables(conn, name) or []
    return [t for t in published if t in wanted]  # partitions, never their parents


def _quoted(qualified: str) -> str:
    schema, table = split_name(qualified)
    return f"{quote_ident(schema)}.{quote_ident(table)}"
