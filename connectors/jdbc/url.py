"""``connection.url`` as Confluent's JDBC connectors take it, parsed once.

Accepted forms::

    jdbc:postgresql://host:port/db?opt=v     postgresql://user@host:port/db   postgres://...
    jdbc:sqlite:/path/to/file.db             sqlite:///path/to/file.db        sqlite::memory:

PostgreSQL URLs become a libpq conninfo for psycopg (``connection.user`` and
``connection.password`` override what the URL holds; the JDBC driver's query
options ``user``/``password`` are honoured too); SQLite URLs become a path for
the standard library's :mod:`sqlite3` (the embedded default: no server needed).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import parse_qsl, unquote, urlsplit

from connectors.api import ConfigError

CONNECT_TIMEOUT_S = 10


class DialectName(StrEnum):
    POSTGRESQL = "postgresql"
    SQLITE = "sqlite"


@dataclass(frozen=True, slots=True)
class JdbcUrl:
    """Where to connect: a dialect and its target (a conninfo or a SQLite path)."""

    dialect: DialectName
    target: str  # PostgreSQL: a postgresql:// URI; SQLite: a file path or :memory:
    user: str | None = None
    password: str | None = None

    def describe(self) -> str:
        """The URL without secrets, for messages."""
        if self.dialect is DialectName.SQLITE:
            return f"sqlite:{self.target}"
        parts = urlsplit(self.target)
        host = parts.hostname or "localhost"
        port = f":{parts.port}" if parts.port else ""
        return f"postgresql://{host}{port}{parts.path}"


def parse_url(url: str, user: str | None = None, password: str | None = None) -> JdbcUrl:
    """Parse ``connection.url``; ConfigError names the key when the form is unknown."""
    text = url.strip()
    if text.startswith("jdbc:"):
        text = text[len("jdbc:"):]
    if text.startswith(("postgresql://", "postgres://")):
        return _postgres(text, user, password)
    if text.startswith("sqlite:"):
        rest = text[len("sqlite:"):]
        if rest.startswith("//"):  # sqlite:///abs/path or sqlite://relative
            rest = rest[2:]
            if rest.startswith("/") and rest[1:2] == "/":
                rest = rest[1:]
        path = unquote(rest) if rest else ":memory:"
        return JdbcUrl(DialectName.SQLITE, path.split("?", 1)[0], user, password)
    raise ConfigError(
        f"connection.url: unsupported URL {url!r}; use jdbc:postgresql://host:port/db, "
        "postgresql://host:port/db, jdbc:sqlite:PATH or sqlite:///PATH"
    )


def _postgres(text: str, user: str | None, password: str | None) -> JdbcUrl:
    parts = urlsplit(text)
    options = dict(parse_qsl(parts.query))
    user = user or options.pop("user", None) or (unquote(parts.username or "") or None)
    password = password or options.pop("password", None) or (
        unquote(parts.password or "") or None
    )
    host = parts.hostname or "localhost"
    try:
        port = parts.port or 5432
    except ValueError:
        raise ConfigError(f"connection.url: bad port in {text!r}") from None
    database = parts.path.lstrip("/") or "postgres"
    # Keep only options libpq knows under the same name; JDBC-only ones are dropped.
    kept = {k: v for k, v in options.items() if k in _LIBPQ_OPTIONS}
    kept.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
    query = "&".join(f"{k}={v}" for k, v in kept.items())
    target = f"postgresql://{host}:{port}/{database}?{query}"
    return JdbcUrl(DialectName.POSTGRESQL, target, user, password)


_LIBPQ_OPTIONS = frozenset(
    {
        "sslmode", "sslcert", "sslkey", "sslrootcert", "connect_timeout",
        "application_name", "options", "target_session_attrs", "gssencmode",
    }
)
