"""Consumed offsets kept in the target database, for an exactly-once JDBC sink.

One row per (connector, topic, partition) holding the next offset to read. The
sink writes it in the same transaction as the rows it belongs to, so after any
crash the table and the offsets agree; on ``open`` the task seeks there
instead of trusting the consumer group (whose offsets it never commits).

Table (``offsets.table.name``, created when missing)::

    connector text, topic text, kafka_partition integer, next_offset bigint,
    PRIMARY KEY (connector, topic, kafka_partition)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from connectors.api import TopicPartition
from connectors.jdbc.dialect import Dialect, TableId


class OffsetsTable:
    """Reads and writes one connector's rows of the offsets table."""

    def __init__(self, dialect: Dialect, table_name: str, connector: str) -> None:
        self.dialect = dialect
        self.table = TableId.parse(table_name)
        self.connector = connector
        quote = dialect.quote
        self._sql_table = dialect.table_sql(self.table)
        self._upsert = dialect.upsert_sql(
            self.table,
            ["connector", "topic", "kafka_partition", "next_offset"],
            ["connector", "topic", "kafka_partition"],
        )
        mark = dialect.placeholder
        self._select = (
            f"SELECT {quote('topic')}, {quote('kafka_partition')}, {quote('next_offset')} "
            f"FROM {self._sql_table} WHERE {quote('connector')} = {mark}"
        )

    def create(self, conn: Any) -> None:
        """Create the table if missing (in its own committed transaction)."""
        if self.dialect.columns(conn, self.table) is not None:
            return
        self.dialect.begin(conn)
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {self._sql_table} (connector text NOT NULL, "
            "topic text NOT NULL, kafka_partition integer NOT NULL, next_offset bigint NOT NULL, "
            "PRIMARY KEY (connector, topic, kafka_partition))"
        )
        conn.commit()

    def read(self, conn: Any, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """The stored next offsets of ``partitions`` (those with a row)."""
        wanted = set(partitions)
        rows = conn.execute(self._select, (self.connector,)).fetchall()
        conn.commit()
        found = {TopicPartition(t, int(p)): int(o) for t, p, o in rows}
        return {tp: o for tp, o in found.items() if tp in wanted}

    def write(self, conn: Any, next_offsets: Mapping[TopicPartition, int]) -> None:
        """Store next offsets in the open transaction (committed with the rows)."""
        rows = [(self.connector, tp.topic, tp.partition, o) for tp, o in next_offsets.items()]
        self.dialect.execute_many(conn, self._upsert, rows)
