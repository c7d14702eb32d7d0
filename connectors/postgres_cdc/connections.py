"""Opening connections to the captured database, with clear errors.

Both kinds of connection (the replication connection that owns the slot's
stream, and regular ones for the catalog, the snapshot and heartbeat queries)
run in UTC with ISO dates and round-trip floats, so the text values pgoutput
sends and the ``col::text`` the snapshot reads have the same format.
"""

from __future__ import annotations

import psycopg
from psycopg.conninfo import make_conninfo

from connectors.api import ConnectError, RetriableError
from connectors.postgres_cdc.config import PostgresCdcConfig

SESSION_OPTIONS = (
    "-c TimeZone=UTC -c DateStyle=ISO -c IntervalStyle=iso_8601 -c extra_float_digits=3"
)
CONNECT_TIMEOUT_S = 10
_PERMANENT = (
    "password authentication failed",
    "no password supplied",
    "does not exist",
    "no pg_hba.conf entry",
    "permission denied",
    "must be superuser or replication role",
    "must have replication",
)


def conninfo(config: PostgresCdcConfig, *, replication: bool = False) -> str:
    """The libpq connection string of ``config`` (a replication one with ``replication``)."""
    extra = {"replication": "database"} if replication else {}
    return make_conninfo(
        host=config.hostname,
        port=str(config.port),
        dbname=config.dbname,
        user=config.user,
        password=config.password.get_secret_value() or None,
        options=SESSION_OPTIONS,
        application_name="sluice-postgres-cdc",
        connect_timeout=str(CONNECT_TIMEOUT_S),
        **extra,
    )


def connect(config: PostgresCdcConfig, *, replication: bool = False) -> psycopg.Connection:
    """An autocommit connection; ConnectError (bad credentials, no database) or RetriableError."""
    try:
        return psycopg.connect(conninfo(config, replication=replication), autocommit=True)
    except psycopg.OperationalError as exc:
        raise describe(exc, config) from None


def describe(exc: psycopg.Error, config: PostgresCdcConfig) -> ConnectError:
    """A ConnectError (permanent) or RetriableError (transient) naming the server."""
    text = str(exc).strip()
    where = f"PostgreSQL at {config.hostname}:{config.port}, database {config.dbname!r}"
    message = f"cannot connect to {where} as {config.user!r}: {text}"
    if any(marker in text for marker in _PERMANENT):
        return ConnectError(message)
    return RetriableError(message)
