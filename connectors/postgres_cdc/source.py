"""PostgresConnector: Debezium's PostgreSQL CDC source (pgoutput), one task."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connectors.api import ConfigError, SourceConnector
from connectors.postgres_cdc import preflight
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.task import PostgresCdcTask


class PostgresCdcConnector(SourceConnector):
    """Streams row changes of one PostgreSQL database as Debezium change events.

    Accepts Debezium's class name, so existing pipeline files keep working;
    like Debezium it always runs exactly one task (a slot has one reader).
    """

    config_model = PostgresCdcConfig
    aliases = (
        "PostgresCdcSource",
        "PostgresConnector",
        "io.debezium.connector.postgresql.PostgresConnector",
    )

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}
        self._config: PostgresCdcConfig | None = None

    def start(self, props: Mapping[str, str]) -> None:
        self._config = PostgresCdcConfig.from_props(props)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return PostgresCdcTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        if self._config is None:
            raise ConfigError("task_configs() before start()")
        return [dict(self._props)]

    def check(self, props: Mapping[str, str]) -> list[str]:
        return preflight.problems(PostgresCdcConfig.from_props(props))

    def details(self) -> dict[str, Any]:
        config = self._config
        if config is None:
            return {}
        return {"database": config.dbname, "slot": config.slot_name,
                "snapshot.mode": config.snapshot_mode}
