"""The PostgreSQL CDC source's keys: Debezium's names, defaults and behaviour."""

from __future__ import annotations

import re
from functools import cached_property
from typing import Literal

from pydantic import Field, SecretStr, field_validator, model_validator

from connectors.api import PluginConfig

SnapshotMode = Literal["initial", "no_data", "initial_only", "always", "when_needed"]
AutocreateMode = Literal["all_tables", "disabled", "filtered", "no_tables"]
OPERATIONS = {"c", "u", "d", "t"}


def _patterns(text: str) -> list[re.Pattern[str]]:
    """The compiled regexes of a comma-separated list (validated when the config was read)."""
    return [re.compile(p) for p in _split(text)]


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


class PostgresCdcConfig(PluginConfig):
    """Debezium PostgreSQL connector keys (``database.*``, ``slot.*``, ``snapshot.mode``, ...)."""

    hostname: str = Field(alias="database.hostname", min_length=1, description="Server host.")
    port: int = Field(5432, alias="database.port", ge=1, le=65535, description="Server port.")
    user: str = Field(alias="database.user", min_length=1, description="Role to connect as "
                      "(needs REPLICATION, and SELECT on the captured tables).")
    password: SecretStr = Field(SecretStr(""), alias="database.password",
                                description="Password of database.user.")
    dbname: str = Field(alias="database.dbname", min_length=1,
                        description="The database to capture.")
    plugin_name: str = Field("pgoutput", alias="plugin.name",
                             description="Logical decoding plugin; only pgoutput is supported.")
    slot_name: str = Field("debezium", alias="slot.name", pattern=r"^[a-z0-9_]{1,63}$",
                           description="Replication slot to create or reuse (lower case, "
                           "digits, underscores).")
    slot_drop_on_stop: bool = Field(False, alias="slot.drop.on.stop",
                                    description="Drop the slot when the task stops (tests only: "
                                    "changes made while stopped are then lost).")
    publication_name: str = Field("dbz_publication", alias="publication.name", min_length=1,
                                  description="Publication the slot streams.")
    publication_autocreate_mode: AutocreateMode = Field(
        "all_tables", alias="publication.autocreate.mode",
        description="all_tables: create it FOR ALL TABLES if missing; filtered: create or "
        "update it FOR TABLE the captured tables (those passing the schema and table "
        "include/exclude lists); no_tables: create it empty; disabled: it must exist.")
    snapshot_mode: SnapshotMode = Field(
        "initial", alias="snapshot.mode",
        description="initial: snapshot when no offset exists, then stream; always: snapshot "
        "on every start; initial_only: snapshot, no streaming; no_data: stream only; "
        "when_needed: snapshot when no offset exists or the slot is gone.")
    schema_include_list: str = Field("", alias="schema.include.list",
                                     description="Comma-separated regexes matched against the "
                                     "whole schema name: only tables in those schemas are "
                                     "captured (snapshot, stream, and the tables a filtered "
                                     "publication holds); combined with table.include.list "
                                     "or table.exclude.list, a table must pass both.")
    schema_exclude_list: str = Field("", alias="schema.exclude.list",
                                     description="Comma-separated regexes of whole schema names "
                                     "whose tables are not captured; cannot be set with "
                                     "schema.include.list.")
    table_include_list: str = Field("", alias="table.include.list",
                                    description="Comma-separated regexes matched against the "
                                    "whole schema.table name: only those tables are captured.")
    table_exclude_list: str = Field("", alias="table.exclude.list",
                                    description="Comma-separated regexes of schema.table names "
                                    "not to capture.")
    topic_prefix: str = Field(alias="topic.prefix", pattern=r"^[A-Za-z0-9._-]+$",
                              description="Prefix of every topic (<prefix>.<schema>.<table>) "
                              "and the logical server name in source.name.")
    column_include_list: str = Field("", alias="column.include.list",
                                     description="Comma-separated regexes matched against "
                                     "schema.table.column: only those columns are captured "
                                     "(primary-key columns always are).")
    column_exclude_list: str = Field("", alias="column.exclude.list",
                                     description="Comma-separated regexes of "
                                     "schema.table.column names to leave out of the rows.")
    heartbeat_interval_ms: int = Field(0, alias="heartbeat.interval.ms", ge=0,
                                       description="Emit a heartbeat record to "
                                       "__debezium-heartbeat.<prefix> this often so the slot's "
                                       "confirmed position moves on a quiet database; 0: never.")
    heartbeat_action_query: str = Field("", alias="heartbeat.action.query",
                                        description="SQL run at each heartbeat (e.g. an "
                                        "update of a heartbeat table) to make WAL in this "
                                        "database.")
    tombstones_on_delete: bool = Field(True, alias="tombstones.on.delete",
                                       description="Follow each delete event with a tombstone "
                                       "(same key, null value) for log compaction.")
    decimal_handling_mode: Literal["precise", "double", "string"] = Field(
        "precise", alias="decimal.handling.mode",
        description="numeric columns as Connect Decimal (precise), double or string.")
    time_precision_mode: Literal["adaptive", "adaptive_time_microseconds", "connect"] = Field(
        "adaptive", alias="time.precision.mode",
        description="date/time/timestamp columns as Debezium's types (adaptive, "
        "adaptive_time_microseconds: Date days, MicroTime and MicroTimestamp µs) or Kafka "
        "Connect's Date, Time and Timestamp (connect: ms precision, for JDBC sinks and other "
        "Connect consumers). timestamptz, timetz and interval are the same in every mode.")
    binary_handling_mode: Literal["bytes", "base64", "base64-url-safe", "hex"] = Field(
        "bytes", alias="binary.handling.mode",
        description="bytea columns as bytes, or as strings in base64 (padded), "
        "base64-url-safe (- and _, padded) or hex (lowercase).")
    skipped_operations: str = Field("t", alias="skipped.operations",
                                    description="Comma-separated ops not to emit: c, u, d, t; "
                                    "'none' emits all (Debezium's default skips t).")
    snapshot_fetch_size: int = Field(10240, alias="snapshot.fetch.size", ge=1, le=1_000_000,
                                     description="Rows fetched per round trip while "
                                     "snapshotting (bounds memory).")
    max_batch_size: int = Field(2048, alias="max.batch.size", ge=1, le=100_000,
                                description="Maximum records returned by one poll.")
    poll_interval_ms: int = Field(500, alias="poll.interval.ms", ge=1, le=60_000,
                                  description="How long a poll waits for changes before "
                                  "returning what it has.")
    status_update_interval_ms: int = Field(10000, alias="status.update.interval.ms", ge=100,
                                           description="How often the confirmed position is "
                                           "reported to the server when nothing else is sent.")

    @field_validator("plugin_name")
    @classmethod
    def _only_pgoutput(cls, value: str) -> str:
        if value != "pgoutput":
            raise ValueError(
                f"{value!r} is not supported: only pgoutput (built into PostgreSQL 10+) is; "
                "decoderbufs and wal2json are not"
            )
        return value

    @field_validator(
        "schema_include_list", "schema_exclude_list", "table_include_list", "table_exclude_list",
        "column_include_list", "column_exclude_list",
    )
    @classmethod
    def _regexes(cls, value: str) -> str:
        for pattern in _split(value):
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"bad regex {pattern!r}: {exc}") from None
        return value

    @field_validator("skipped_operations")
    @classmethod
    def _operations(cls, value: str) -> str:
        ops = set(_split(value)) - {"none"}
        unknown = ops - OPERATIONS
        if unknown:
            raise ValueError(f"unknown operations {sorted(unknown)}; use c, u, d, t or none")
        return value

    @model_validator(mode="after")
    def _one_table_list(self) -> PostgresCdcConfig:
        if self.schema_include_list and self.schema_exclude_list:
            raise ValueError("schema.include.list and schema.exclude.list cannot both be set")
        if self.table_include_list and self.table_exclude_list:
            raise ValueError("table.include.list and table.exclude.list cannot both be set")
        if self.column_include_list and self.column_exclude_list:
            raise ValueError("column.include.list and column.exclude.list cannot both be set")
        return self

    @cached_property
    def schema_include_patterns(self) -> list[re.Pattern[str]]:
        return _patterns(self.schema_include_list)

    @cached_property
    def schema_exclude_patterns(self) -> list[re.Pattern[str]]:
        return _patterns(self.schema_exclude_list)

    @cached_property
    def include_patterns(self) -> list[re.Pattern[str]]:
        return _patterns(self.table_include_list)

    @cached_property
    def exclude_patterns(self) -> list[re.Pattern[str]]:
        return _patterns(self.table_exclude_list)

    @cached_property
    def column_patterns(self) -> tuple[bool, list[re.Pattern[str]]]:
        """(True, include patterns) or (False, exclude patterns)."""
        if self.column_include_list:
            return True, _patterns(self.column_include_list)
        return False, _patterns(self.column_exclude_list)

    def dropped_columns(self, qualified_table: str, columns: list[str]) -> frozenset[str]:
        """The columns of ``schema.table`` that column.include/exclude.list leave out."""
        include, patterns = self.column_patterns
        if not patterns:
            return frozenset()
        dropped = set()
        for column in columns:
            matched = any(p.fullmatch(f"{qualified_table}.{column}") for p in patterns)
            if matched != include:
                dropped.add(column)
        return frozenset(dropped)

    @cached_property
    def skipped(self) -> frozenset[str]:
        return frozenset(_split(self.skipped_operations)) - {"none"}

    def captures_schema(self, schema: str) -> bool:
        """Whether tables of ``schema`` pass schema.include/exclude.list (anchored regexes)."""
        if self.schema_include_patterns:
            return any(p.fullmatch(schema) for p in self.schema_include_patterns)
        return not any(p.fullmatch(schema) for p in self.schema_exclude_patterns)

    def captures(self, qualified_name: str) -> bool:
        """Whether ``schema.table`` is captured: its schema passes the schema lists AND the
        name passes table.include/exclude.list (both anchored regexes), as in Debezium."""
        schema = qualified_name.partition(".")[0]
        if not self.captures_schema(schema):
            return False
        if self.include_patterns:
            return any(p.fullmatch(qualified_name) for p in self.include_patterns)
        return not any(p.fullmatch(qualified_name) for p in self.exclude_patterns)
