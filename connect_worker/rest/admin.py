"""``/admin/loggers``: read and change log levels while the worker runs.

Levels use Kafka Connect's (log4j) names: TRACE, DEBUG, INFO, WARN, ERROR,
FATAL, OFF; Python's WARNING and CRITICAL are accepted too. Setting a level on
a logger sets it on its descendants that have a level of their own (the others
inherit it), and answers the names of every existing logger affected. As in
Kafka Connect, an unknown level is answered 404, a missing one 400.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from fastapi import APIRouter, Query, Response

from connect_worker.rest.errors import RestError
from connect_worker.rest.models import LoggerLevelRequest

router = APIRouter(prefix="/admin/loggers", tags=["admin"])

ROOT = "root"
_TRACE = 5
_BY_NAME = {
    "TRACE": _TRACE,
    "DEBUG": logging.DEBUG,
    "INFO": logging.INFO,
    "WARN": logging.WARNING,
    "WARNING": logging.WARNING,
    "ERROR": logging.ERROR,
    "FATAL": logging.CRITICAL,
    "CRITICAL": logging.CRITICAL,
    "OFF": logging.CRITICAL + 10,
}
_NAMES = {
    _TRACE: "TRACE",
    logging.DEBUG: "DEBUG",
    logging.INFO: "INFO",
    logging.WARNING: "WARN",
    logging.ERROR: "ERROR",
    logging.CRITICAL: "FATAL",
    logging.CRITICAL + 10: "OFF",
}


class LogLevels:
    """Python's logger levels seen through Kafka Connect's API, with change times."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._modified_ms: dict[str, int] = {}

    def explicit(self) -> dict[str, dict[str, Any]]:
        """The root logger and every logger with a level of its own."""
        out = {ROOT: self._describe(ROOT, logging.getLogger())}
        for name in sorted(_existing()):
            logger = logging.getLogger(name)
            if logger.level != logging.NOTSET:
                out[name] = self._describe(name, logger)
        return out

    def get(self, name: str) -> dict[str, Any] | None:
        if name == ROOT:
            return self._describe(ROOT, logging.getLogger())
        if name not in _existing():
            return None
        return self._describe(name, logging.getLogger(name))

    def set(self, name: str, level_name: str) -> list[str]:
        """Set ``name``'s level; returns the affected loggers' names."""
        level = _BY_NAME.get(level_name.strip().upper())
        if level is None:
            raise RestError(404, f"invalid log level '{level_name}'.")
        now_ms = int(time.time() * 1000)
        with self._lock:
            target = logging.getLogger() if name == ROOT else logging.getLogger(name)
            target.setLevel(level)
            affected = [name]
            prefix = "" if name == ROOT else name + "."
            for other in sorted(_existing()):
                if other.startswith(prefix) and other != name:
                    logger = logging.getLogger(other)
                    if logger.level != logging.NOTSET:
                        logger.setLevel(level)
                    affected.append(other)
            for affected_name in affected:
                self._modified_ms[affected_name] = now_ms
        return affected

    def _describe(self, name: str, logger: logging.Logger) -> dict[str, Any]:
        level = logger.getEffectiveLevel()
        return {
            "level": _NAMES.get(level, logging.getLevelName(level)),
            "last_modified": self._modified_ms.get(name),
        }


def _existing() -> list[str]:
    """Names of real loggers (not the placeholders Python keeps for parents)."""
    manager = logging.Logger.manager
    items = list(manager.loggerDict.items())
    return [name for name, item in items if isinstance(item, logging.Logger)]


_levels = LogLevels()


@router.get("", summary="Loggers with a level of their own, and root")
@router.get("/", include_in_schema=False)
def list_loggers() -> dict[str, dict[str, Any]]:
    return _levels.explicit()


@router.get("/{name}", summary="One logger's effective level")
def get_logger(name: str) -> dict[str, Any]:
    found = _levels.get(name)
    if found is None:
        raise RestError(404, f"Logger {name} not found.")
    return found


@router.put("/{name}", summary="Set a logger's level (and its namespace's)")
def set_logger(
    name: str,
    request: LoggerLevelRequest,
    scope: str = Query("worker", description="worker or cluster (one worker in standalone)"),
) -> Any:
    if not request.level:
        raise RestError(400, "Desired 'level' parameter was not specified in request.")
    affected = _levels.set(name, request.level)
    if scope.lower() == "cluster":
        return Response(status_code=204)
    return affected
