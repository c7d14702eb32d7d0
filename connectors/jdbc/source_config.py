"""The JDBC source's keys (Confluent's names), declared once."""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, field_validator, model_validator

from connectors.jdbc.sink_config import JdbcConnectionConfig

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
