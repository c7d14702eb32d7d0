"""The JDBC connectors' keys (Confluent's names), declared once: the connection both
sides share, then the sink's (:class:`JdbcSinkConfig`) and the source's
(:class:`JdbcSourceConfig`)."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, SecretStr, field_validator, model_validator

from connectors.api import PluginConfig, key_info


class JdbcConnectionConfig(PluginConfig):
    """Where the database is: shared by the JDBC source and sink."""

    connection_url: str = Field(
        alias="connection.url",
        min_length=1,
        description="jdbc:postgresql://host:port/db, postgresql://..., jdbc:sqlite:PATH or "
        "sqlite:///PATH.",
        json_schema_extra=key_info("HIGH", "LONG"),
    )
    connection_user: str | None = Field(
        None, alias="connection.user", description="Database user (overrides the URL's)."
    )
    connection_password: SecretStr | None = Field(
        None, alias="connection.password", description="Database password."
    )

    quote_sql_identifiers: Literal["always", "never"] = Field(
        "always",
        alias="quote.sql.identifiers",
        description="always: table and column names are double-quoted in the SQL generated "
        "(exact names, any characters). never: written bare, so PostgreSQL folds them to "
        "lower case (a field Amount reads or writes column amount: for tables created "
        "without quotes).",
    )

    @field_validator("quote_sql_identifiers", mode="before")
    @classmethod
    def _lower_quote(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value  # ALWAYS, as Confluent's

    def quoting(self) -> bool:
        """Whether identifiers are quoted (``quote.sql.identifiers=always``)."""
        return self.quote_sql_identifiers == "always"

    def password(self) -> str | None:
        return self.connection_password.get_secret_value() if self.connection_password else None


class JdbcSinkConfig(JdbcConnectionConfig):
    """JdbcSink's keys; exactly-once is Sluice's own (``exactly.once``)."""

    insert_mode: Literal["insert", "upsert", "update"] = Field(
        "insert",
        alias="insert.mode",
        description="insert (COPY on PostgreSQL), upsert (INSERT .. ON CONFLICT DO UPDATE) "
        "or update.",
    )
    pk_mode: Literal["none", "kafka", "record_key", "record_value"] = Field(
        "none",
        alias="pk.mode",
        description="Where the primary key comes from: none, kafka (topic, partition, "
        "offset), record_key or record_value.",
    )
    pk_fields: str = Field(
        "",
        alias="pk.fields",
        description="Comma-separated key column names; empty: kafka -> __connect_topic, "
        "__connect_partition, __connect_offset; record_key -> the key's fields (or "
        "__connect_key for a primitive key); record_value -> all value fields.",
    )
    fields_whitelist: str = Field(
        "",
        alias="fields.whitelist",
        description="Comma-separated record value fields to write (and to create or add "
        "columns for); empty: all. Primary key fields of pk.mode=kafka/record_key are "
        "written anyway; a listed field a record lacks is a data error.",
    )
    fields_include_list: str = Field(
        "", alias="fields.include.list", description="Same as fields.whitelist (newer name)."
    )
    auto_create: bool = Field(
        False, alias="auto.create", description="CREATE TABLE from the record schema if missing."
    )
    auto_evolve: bool = Field(
        False,
        alias="auto.evolve",
        description="ALTER TABLE ADD COLUMN for record fields the table lacks (added as "
        "nullable columns).",
    )
    delete_enabled: bool = Field(
        False,
        alias="delete.enabled",
        description="A tombstone (null value with a key) deletes the row; needs "
        "pk.mode=record_key. Without it tombstones are skipped.",
    )
    table_name_format: str = Field(
        "${topic}",
        alias="table.name.format",
        min_length=1,
        description="Table name for a topic (${topic} is replaced). Dots separate a schema: "
        "the last part is the table, the one before it the schema (others are dropped), so "
        "a CDC topic prefix.public.orders writes public.orders.",
    )
    batch_size: int = Field(
        3000, alias="batch.size", ge=1, le=1_000_000,
        description="Rows per statement (COPY or executemany) within a put.",
    )
    max_retries: int = Field(
        10, alias="max.retries", ge=0,
        description="Consecutive retriable failures (lost connection, lock timeout) before "
        "the task fails.",
    )
    retry_backoff_ms: int = Field(
        3000, alias="retry.backoff.ms", ge=0,
        description="Wait after a retriable failure before the batch is tried again.",
    )
    exactly_once: bool = Field(
        False,
        alias="exactly.once",
        description="Store each partition's next offset in offsets.table.name in the same "
        "transaction as the rows and resume from there: no row written twice.",
    )
    offsets_table_name: str = Field(
        "__sluice_jdbc_offsets",
        alias="offsets.table.name",
        min_length=1,
        description="Table holding the consumed offsets when exactly.once=true.",
    )

    @model_validator(mode="after")
    def _check_modes(self) -> Self:
        if self.delete_enabled and self.pk_mode != "record_key":
            raise ValueError("delete.enabled=true needs pk.mode=record_key")
        if self.insert_mode != "insert" and self.pk_mode == "none":
            raise ValueError(f"insert.mode={self.insert_mode} needs a pk.mode other than none")
        if self.pk_mode == "kafka" and self.pk_fields and len(self.pk_field_list()) != 3:
            raise ValueError("pk.mode=kafka takes exactly three pk.fields (topic, partition, "
                             "offset) or none")
        if self.fields_whitelist.strip() and self.fields_include_list.strip():
            raise ValueError("use fields.whitelist or fields.include.list, not both")
        return self

    def field_list(self) -> list[str]:
        """fields.whitelist / fields.include.list as names; empty: all fields."""
        text = self.fields_whitelist or self.fields_include_list
        return list(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))

    def pk_field_list(self) -> list[str]:
        return [f.strip() for f in self.pk_fields.split(",") if f.strip()]


Mode = Literal["bulk", "incrementing", "timestamp", "timestamp+incrementing"]
NumericMapping = Literal["none", "precision_only", "best_fit", "best_fit_eager_double"]
# Confluent's / the JDBC drivers' names; the last two exist on PostgreSQL only.
TABLE_TYPES = ("TABLE", "VIEW", "MATERIALIZED VIEW", "PARTITIONED TABLE")
TIMESTAMP_INITIAL_NOW = -1


class JdbcSourceConfig(JdbcConnectionConfig):
    """JdbcSource's keys."""

    mode: Mode = Field(
        "bulk",
        alias="mode",
        description="bulk (whole table each poll), incrementing (new rows by a strictly "
        "increasing column), timestamp (new and changed rows by a timestamp column) or "
        "timestamp+incrementing (both: no row missed or repeated).",
    )
    incrementing_column_name: str = Field(
        "", alias="incrementing.column.name",
        description="The strictly increasing column (incrementing modes).",
    )
    timestamp_column_name: str = Field(
        "", alias="timestamp.column.name",
        description="The last-modified timestamp column (timestamp modes).",
    )
    timestamp_delay_interval_ms: int = Field(
        0, alias="timestamp.delay.interval.ms", ge=0,
        description="Rows are read only once their timestamp is this old, so transactions "
        "committing late with older timestamps are not missed.",
    )
    table_whitelist: str = Field(
        "", alias="table.whitelist",
        description="Comma-separated tables to copy (table or schema.table); empty: all.",
    )
    table_include_list: str = Field(
        "", alias="table.include.list", description="Same as table.whitelist."
    )
    table_blacklist: str = Field(
        "", alias="table.blacklist", description="Comma-separated tables not to copy."
    )
    schema_pattern: str = Field(
        "",
        alias="schema.pattern",
        description="PostgreSQL: list only tables of schemas whose name matches this SQL "
        "LIKE pattern (% any characters, _ one character); table.whitelist/blacklist names "
        "without a schema then match tables of those schemas. Empty: all schemas. SQLite has "
        "no schemas and ignores it.",
    )
    table_types: str = Field(
        "TABLE",
        alias="table.types",
        description="Comma-separated kinds of tables to list: TABLE, VIEW, and on PostgreSQL "
        "MATERIALIZED VIEW and PARTITIONED TABLE (the parent; TABLE lists its partitions). "
        "Default TABLE, as Confluent's: views are copied only when listed here.",
    )
    timestamp_initial: int | None = Field(
        None,
        alias="timestamp.initial",
        ge=TIMESTAMP_INITIAL_NOW,
        description="Timestamp modes, no stored offset yet: read rows with a timestamp after "
        "this one (epoch milliseconds); -1: after the time the task starts. Unset: from the "
        "beginning. A stored offset always wins.",
    )
    numeric_mapping: NumericMapping = Field(
        "none",
        alias="numeric.mapping",
        description="How numeric(p, s) columns are read: none (Decimal), precision_only "
        "(scale 0 and p < 19: int8/16/32/64 by p), best_fit (p < 19: ints for scale 0, double "
        "otherwise) or best_fit_eager_double (double for any scale > 0; ints as best_fit).",
    )
    query: str = Field(
        "", alias="query",
        description="Copy the result of this query instead of tables (one task; the topic "
        "is topic.prefix).",
    )
    poll_interval_ms: int = Field(
        5000, alias="poll.interval.ms", ge=1,
        description="How often each table is queried for new data.",
    )
    batch_max_rows: int = Field(
        1000, alias="batch.max.rows", ge=1, le=1_000_000,
        description="Rows per poll (and per fetch from the server-side cursor).",
    )
    topic_prefix: str = Field(
        "", alias="topic.prefix",
        description="Topic = topic.prefix + table name (or topic.prefix alone for query).",
    )
    table_poll_interval_ms: int = Field(
        60000, alias="table.poll.interval.ms", ge=100,
        description="How often the connector looks for new or dropped tables.",
    )

    @field_validator("table_types")
    @classmethod
    def _check_table_types(cls, value: str) -> str:
        kinds = [" ".join(t.split()).upper() for t in value.split(",") if t.strip()]
        if not kinds:
            raise ValueError(f"needs at least one of {', '.join(TABLE_TYPES)}")
        unknown = [k for k in kinds if k not in TABLE_TYPES]
        if unknown:
            raise ValueError(
                f"unknown table type(s) {', '.join(unknown)}; allowed: {', '.join(TABLE_TYPES)}"
            )
        return ",".join(dict.fromkeys(kinds))

    @model_validator(mode="after")
    def _check_mode(self) -> Self:
        if "incrementing" in self.mode and not self.incrementing_column_name:
            raise ValueError(f"mode={self.mode} needs incrementing.column.name")
        if "timestamp" in self.mode and not self.timestamp_column_name:
            raise ValueError(f"mode={self.mode} needs timestamp.column.name")
        if self.query and self.included():
            raise ValueError("query and table.whitelist cannot be used together")
        if self.included() and self.excluded():
            raise ValueError("use table.whitelist or table.blacklist, not both")
        if self.query and not self.topic_prefix:
            raise ValueError("query needs topic.prefix (the topic to write to)")
        return self

    def included(self) -> list[str]:
        text = ",".join(t for t in (self.table_whitelist, self.table_include_list) if t)
        return [t.strip() for t in text.split(",") if t.strip()]

    def excluded(self) -> list[str]:
        return [t.strip() for t in self.table_blacklist.split(",") if t.strip()]

    def table_type_set(self) -> frozenset[str]:
        """The table types to list, normalised (upper case, single spaces)."""
        return frozenset(self.table_types.split(","))
