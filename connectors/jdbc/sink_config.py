"""The JDBC sink's keys (Confluent's names), declared once."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, SecretStr, field_validator, model_validator

from connectors.api import PluginConfig


class JdbcConnectionConfig(PluginConfig):
    """Where the database is: shared by the JDBC source and sink."""

    connection_url: str = Field(
        alias="connection.url",
        min_length=1,
        description="jdbc:postgresql://host:port/db, postgresql://..., jdbc:sqlite:PATH or "
        "sqlite:///PATH.",
        json_schema_extra={"importance": "HIGH", "width": "LONG"},
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
