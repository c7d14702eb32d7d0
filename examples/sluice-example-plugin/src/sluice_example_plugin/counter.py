"""CounterSource: emits 0, 1, 2, ... to a topic, one number every ``interval.ms``.

Small, but it shows everything a source connector needs:

- a config model (one pydantic field per key, with its alias, default,
  constraints and description: validation and the REST API come from it);
- ``aliases`` so users can write ``connector.class=CounterSource``;
- a task that resumes from the offset the runtime stored
  (``context.offset_reader``), returns from ``poll`` within a second, and
  makes a waiting ``poll`` return when ``stop`` is called.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping

from pydantic import Field

from connectors.api import PluginConfig, SourceConnector, SourceRecord, SourceTask
from connectors.api.schema import INT64

MAX_WAIT_S = 1.0


class CounterConfig(PluginConfig):
    """CounterSource's keys."""

    topic: str = Field(alias="topic", min_length=1, description="Topic to write the numbers to.")
    interval_ms: int = Field(
        1000, alias="interval.ms", ge=0, description="Milliseconds between two numbers."
    )
    start: int = Field(0, alias="start", description="The first number, when no offset is stored.")


class CounterSourceConnector(SourceConnector):
    """Counts upwards into one topic (one task)."""

    config_model = CounterConfig
    aliases = ("CounterSource", "CounterSourceConnector")
    version = "0.1.0"

    def start(self, props: Mapping[str, str]) -> None:
        self._props = dict(props)
        CounterConfig.from_props(props)  # fail early on a bad config

    @classmethod
    def task_class(cls) -> type:
        return CounterSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]  # a single counter: one task whatever tasks.max says


class CounterSourceTask(SourceTask):
    """Emits the next number when it is due."""

    def __init__(self) -> None:
        super().__init__()
        self._stopping = threading.Event()

    def start(self, props: Mapping[str, str]) -> None:
        config = CounterConfig.from_props(props)
        self._topic = config.topic
        self._interval_s = config.interval_ms / 1000
        self._partition = {"counter": config.topic}
        stored = self.context.offset_reader.offset(self._partition) if self.context else None
        self._next = int(stored["next"]) if stored else config.start
        self._due = time.monotonic()

    def poll(self) -> list[SourceRecord]:
        wait = self._due - time.monotonic()
        if wait > 0:
            self._stopping.wait(min(wait, MAX_WAIT_S))
            if self._stopping.is_set() or time.monotonic() < self._due:
                return []
        value = self._next
        self._next += 1
        self._due = max(self._due + self._interval_s, time.monotonic() - self._interval_s)
        return [
            SourceRecord(
                topic=self._topic,
                value=value,
                value_schema=INT64,
                source_partition=self._partition,
                source_offset={"next": self._next},
            )
        ]

    def stop(self) -> None:
        self._stopping.set()
