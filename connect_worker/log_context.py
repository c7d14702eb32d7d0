"""Which connector and task a log line comes from, and the JSON line format.

A task's thread sets :data:`TASK_CONTEXT` when it starts
(:func:`set_task_context`); :class:`TaskContextFilter`, installed on the
process's log handlers, copies it onto every record that thread logs
(``record.connector``, ``record.task`` and ``record.connector_context``, the
``[name|task-0] `` prefix Kafka Connect puts in its lines). The connector's
own methods run inside :func:`connector_context` (``[name|worker]``, task
None). Threads a task starts itself, and client loop threads, have no context.

``log.format=json`` (:func:`use_json_lines`) writes one JSON object per line::

    {"timestamp": "2026-11-24T20:41:07.123Z", "level": "INFO", "logger": "connectors.file.source",
     "thread": "task-in-0", "message": "reading ...", "connector": "in", "task": 0}

with ``exception`` (the formatted traceback) when the line has one.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: (connector, task) of the task whose thread is running, (connector, None) while a
#: connector's own methods run; None elsewhere.
TASK_CONTEXT: ContextVar[tuple[str, int | None] | None] = ContextVar("sluice_task", default=None)

#: The text format of ``sluice`` commands (the connector context before the message).
TEXT_FORMAT = "%(asctime)s %(levelname)-5s %(name)s: %(connector_context)s%(message)s"


def set_task_context(connector: str, task: int) -> None:
    """Mark the calling thread's log lines as task ``task`` of ``connector``'s."""
    TASK_CONTEXT.set((connector, task))


@contextmanager
def connector_context(connector: str) -> Iterator[None]:
    """Mark the lines logged inside the block as connector ``connector``'s (``[name|worker]``)."""
    token = TASK_CONTEXT.set((connector, None))
    try:
        yield
    finally:
        TASK_CONTEXT.reset(token)


class TaskContextFilter(logging.Filter):
    """Adds the task context to each record (see the module doc); never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = TASK_CONTEXT.get()
        if context is None:
            record.connector = None
            record.task = None
            record.connector_context = ""
        else:
            record.connector, record.task = context
            where = "worker" if context[1] is None else f"task-{context[1]}"
            record.connector_context = f"[{context[0]}|{where}] "
        return True


class JsonLineFormatter(logging.Formatter):
    """One JSON object per record (see the module doc)."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "timestamp": _utc(record.created),
            "level": record.levelname,
            "logger": record.name,
            "thread": record.threadName,
            "message": record.getMessage(),
        }
        connector = getattr(record, "connector", None)
        if connector is not None:
            line["connector"] = connector
            line["task"] = getattr(record, "task", None)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = record.stack_info
        return json.dumps(line, ensure_ascii=False, default=str)


def _utc(created: float) -> str:
    seconds = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created))
    return f"{seconds}.{int(created % 1 * 1000):03d}Z"


def install_filter() -> None:
    """Put :class:`TaskContextFilter` on every handler of the root logger."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, TaskContextFilter) for f in handler.filters):
            handler.addFilter(TaskContextFilter())


def use_json_lines() -> None:
    """``log.format=json``: the root logger's handlers write JSON lines (warnings too)."""
    logging.captureWarnings(True)
    install_filter()
    for handler in logging.getLogger().handlers:
        handler.setFormatter(JsonLineFormatter())
