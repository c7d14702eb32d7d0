"""Helpers for the JDBC integration tests: waiting, producing, reading tables."""

from __future__ import annotations

import json
from typing import Any

from connect_worker.converters.json import JsonConverter
from connect_worker.herder.standalone import StandaloneHerder
from connect_worker.states import State
from connectors.api import Schema
from harness.broker_process import BrokerProcess
from harness.postgres import PostgresServer
from harness.standalone_process import StandaloneProcess
from log_engine.client import SyncConsumer, SyncProducer, TopicPartition


def task_state(herder: StandaloneHerder, name: str, task: int = 0) -> State | None:
    tasks = herder.connector_status(name).tasks
    return tasks[task].state if len(tasks) > task else None


def task_trace(herder: StandaloneHerder, name: str, task: int = 0) -> str:
    return herder.connector_status(name).tasks[task].trace or ""


def produce_json(
    broker: BrokerProcess, topic: str, records: list[tuple[Any, Any]]
) -> None:
    """Send (key, value) pairs as JSON text (already enveloped where wanted); None stays null."""
    with SyncProducer({"bootstrap.servers": broker.bootstrap}) as producer:
        for key, value in records:
            key_bytes = None if key is None else json.dumps(key).encode()
            value_bytes = None if value is None else json.dumps(value).encode()
            producer.send(topic, value_bytes, key_bytes, None, 0).result(30)


def rows(postgres: PostgresServer, db: str, sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql``; [] when the table does not exist yet."""
    with postgres.connect(db) as conn:
        try:
            return conn.execute(sql).fetchall()
        except Exception as exc:
            if "does not exist" in str(exc):
                return []
            raise


def column_types(postgres: PostgresServer, db: str, table: str) -> list[tuple[str, str, str]]:
    """(name, type with modifiers, nullable) of each column, in order."""
    return [
        tuple(r)  # type: ignore[misc]
        for r in rows(
            postgres, db,
            "SELECT a.attname, format_type(a.atttypid, a.atttypmod), "
            "CASE WHEN a.attnotnull THEN 'NO' ELSE 'YES' END FROM pg_attribute a "
            f"WHERE a.attrelid = '{table}'::regclass AND a.attnum > 0 AND NOT a.attisdropped "
            "ORDER BY a.attnum",
        )
    ]


def produce_connect(
    broker: BrokerProcess | StandaloneProcess,
    topic: str,
    records: list[tuple[Schema | None, Any, Schema | None, Any]],
) -> None:
    """Send (key schema, key, value schema, value) as JsonConverter with schemas writes them."""
    converter = JsonConverter()
    converter.configure({"schemas.enable": "true"})
    with SyncProducer({"bootstrap.servers": broker.bootstrap}) as producer:
        futures = [
            producer.send(
                topic,
                converter.from_connect(topic, value_schema, value),
                converter.from_connect(topic, key_schema, key),
                None,
                0,
            )
            for key_schema, key, value_schema, value in records
        ]
        for future in futures:
            future.result(30)


def topic_size(broker: BrokerProcess, topic: str) -> int:
    """The end offset of partition 0 of ``topic``."""
    consumer = SyncConsumer({"bootstrap.servers": broker.bootstrap})
    try:
        tp = TopicPartition(topic, 0)
        return consumer.end_offsets([tp])[tp]
    finally:
        consumer.close()
