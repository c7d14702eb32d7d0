"""SparkSink: a sink connector whose task runs a Structured Streaming query.

The query (:mod:`spark_sinks.query`) reads the connector's topics itself
through the ``sluice`` data source, from the worker's cluster (the task
context's ``bootstrap_servers``) unless ``spark.bootstrap.servers`` names
another, and keeps its offsets in
``checkpoint.location``, so the runtime's consumer has nothing to do: the
task pauses every partition it is assigned (the runtime fetches nothing),
``put`` ignores what a fetch started before the pause returns, and
``pre_commit`` returns ``{}`` (no group offset is ever committed; the
checkpoint is the truth, and a restarted task resumes from it).

A failed query fails the task: a watcher thread notices the query's end and
asks the runtime for a commit (``context.request_commit``); the runtime's
``pre_commit`` call, in the task thread, raises ConnectError with Spark's
trace, so the task shows FAILED with it. (A runtime only calls ``pre_commit``
for partitions with a position, so ``open`` seeks them, paused, to 0.)
``stop`` stops the query cleanly, and so does pausing the connector
(``on_pause``); resuming it (``on_resume``) starts the query again from its
checkpoint. One Spark session serves all tasks of a worker process
(:mod:`spark_sinks.session`).

This module must not import pyspark at import time: it is loaded by every
worker that lists plugins.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from connectors.api import (
    ConfigError,
    ConnectError,
    SinkConnector,
    SinkRecord,
    SinkTask,
    TopicPartition,
)
from spark_sinks.sink_config import CONF_PREFIX, SparkSinkConfig

if TYPE_CHECKING:
    from pyspark.sql.streaming import StreamingQuery

log = logging.getLogger(__name__)

#: How often the watcher thread refreshes the query's progress (seconds).
WATCH_INTERVAL_S = 1  # seconds (an int: StreamingQuery.awaitTermination takes whole seconds)


class SparkSinkConnector(SinkConnector):
    """Runs one Spark Structured Streaming query over its topics (Spark parallelises it)."""

    config_model = SparkSinkConfig
    config_prefixes = (CONF_PREFIX,)
    aliases = ("SparkSink", "SparkSinkConnector")

    def __init__(self) -> None:
        super().__init__()
        self._props: dict[str, str] = {}

    def start(self, props: Mapping[str, str]) -> None:
        SparkSinkConfig.from_props(props)
        self._props = dict(props)

    @classmethod
    def task_class(cls) -> type:
        return SparkSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        # One query per connector: more tasks would share a checkpoint.
        return [dict(self._props)]

    def check(self, props: Mapping[str, str]) -> list[str]:
        config = SparkSinkConfig.from_props(props)
        problems = []
        try:
            import pyspark  # noqa: F401
        except ImportError:
            problems.append("pyspark is not installed (pip install 'sluice[spark]')")
        if not config.bootstrap_servers.strip():
            return problems  # the worker's own cluster, which the worker reaches already
        try:
            from log_engine.client import SyncAdmin

            with SyncAdmin({"bootstrap.servers": config.bootstrap_servers}) as admin:
                admin.list_topics()
        except Exception as exc:
            problems.append(
                f"spark.bootstrap.servers: cannot reach {config.bootstrap_servers}: {exc}"
            )
        return problems


class SparkSinkTask(SinkTask):
    """Owns one streaming query: started in ``start``, watched, stopped in ``stop``."""

    def __init__(self) -> None:
        super().__init__()
        self._query: StreamingQuery | None = None
        self._session_held = False
        self._session: Any = None  # what SharedSession.acquire gave (the Spark session)
        self._config: SparkSinkConfig | None = None
        self._name = ""
        self._stopping = threading.Event()
        self._watcher: threading.Thread | None = None
        self._lock = threading.Lock()
        self._progress: dict[str, Any] = {}
        self._failure: str | None = None
        self._state = "STARTING"

    # -- lifecycle -----------------------------------------------------------------------

    def start(self, props: Mapping[str, str]) -> None:
        worker_cluster = self.context.bootstrap_servers if self.context is not None else ""
        config = SparkSinkConfig.from_props(props).reading(worker_cluster)
        from spark_sinks.session import SharedSession

        self._session = SharedSession.acquire(config.master, SparkSinkConfig.spark_conf(props))
        self._session_held = True
        self._config = config
        task_id = self.context.task_id if self.context else 0
        self._name = f"{props.get('name', 'spark-sink')}-{task_id}"
        try:
            self._start_query()
        except BaseException:
            self._release()
            raise

    def _start_query(self) -> None:
        """Start the query (from its checkpoint) and the thread that watches it."""
        from spark_sinks.query import start_query

        assert self._config is not None, "_start_query() before start()"
        try:
            self._query = start_query(self._session, self._config, self._name)
        except ConfigError:
            raise
        except Exception as exc:
            raise ConnectError(f"starting the Spark query failed: {exc}") from exc
        self._stopping = threading.Event()
        with self._lock:
            self._state = "RUNNING"
        self._watcher = threading.Thread(
            target=self._watch, args=(self._query, self._stopping),
            name=f"spark-watch-{self._name}", daemon=True,
        )
        self._watcher.start()

    def _end_query(self, state: str) -> None:
        """Stop the query cleanly (its checkpoint keeps where it got to) and its watcher."""
        self._stopping.set()
        query, self._query = self._query, None
        if query is not None:
            try:
                query.stop()
            except Exception:
                log.exception("stopping the Spark query failed")
        if self._watcher is not None:
            self._watcher.join(timeout=30)
            self._watcher = None
        with self._lock:
            if self._state != "FAILED":
                self._state = state

    def on_pause(self) -> None:
        self._end_query("PAUSED")

    def on_resume(self) -> None:
        if self._query is None and self._failure is None:
            self._start_query()

    def open(self, partitions: Sequence[TopicPartition]) -> None:
        if self.context is None or not partitions:
            return
        self.context.pause(*partitions)
        self.context.offset({tp: 0 for tp in partitions})

    def put(self, records: Sequence[SinkRecord]) -> None:
        self._raise_if_failed()  # records themselves: the query reads them

    def pre_commit(self, offsets: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        self._raise_if_failed()
        return {}

    def stop(self) -> None:
        self._end_query("STOPPED")
        self._release()

    def details(self) -> dict[str, Any]:
        with self._lock:
            out: dict[str, Any] = {"query": self._state, **self._progress}
            if self._failure is not None:
                out["error"] = self._failure
            return out

    # -- internals -----------------------------------------------------------------------

    def _release(self) -> None:
        if self._session_held:
            from spark_sinks.session import SharedSession

            self._session_held = False
            SharedSession.release()

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise ConnectError(f"the Spark query failed:\n{self._failure}")

    def _watch(self, query: StreamingQuery, stopping: threading.Event) -> None:
        """Refresh progress; when the query ends with an error, fail the task."""
        while not stopping.is_set():
            try:
                ended = query.awaitTermination(WATCH_INTERVAL_S)
                error = None
            except Exception as exc:  # StreamingQueryException: the query failed
                ended, error = True, exc
            self._record_progress(query)
            if not ended:
                continue
            if stopping.is_set():
                return
            if error is None:
                error = query.exception()
            with self._lock:
                if error is None:
                    self._state = "FINISHED"  # availableNow: the backlog is written
                    return
                self._state = "FAILED"
                self._failure = _trace(error)
            log.error("Spark query failed: %s", self._failure.splitlines()[0])
            if self.context is not None:
                self.context.request_commit()  # the runtime's pre_commit then fails the task
            return

    def _record_progress(self, query: StreamingQuery) -> None:
        try:
            last = query.lastProgress
        except Exception:  # the query (or session) is gone
            return
        if not last:
            return
        sources = last.get("sources") or [{}]
        progress = {
            "batch_id": last.get("batchId"),
            "input_rows_per_second": last.get("inputRowsPerSecond"),
            "processed_rows_per_second": last.get("processedRowsPerSecond"),
            "num_input_rows": last.get("numInputRows"),
            "end_offsets": sources[0].get("endOffset"),
            "timestamp": last.get("timestamp"),
        }
        with self._lock:
            self._progress = progress


def _trace(error: BaseException) -> str:
    """Spark's message and, when it carries one, the JVM stack trace."""
    text = str(error)
    stack = getattr(error, "_stackTrace", None)
    if stack and "JVM stacktrace" not in text:
        text = f"{text}\n\nJVM stacktrace:\n{stack}"
    return text
