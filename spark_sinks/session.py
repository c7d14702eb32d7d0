"""One Spark session per worker process, shared by every Spark task in it.

A session (a JVM) takes seconds to start and hundreds of MB, so tasks share
it: :meth:`SharedSession.acquire` starts it on first use (with the first
caller's master and settings, the ``sluice`` format registered, the
PostgreSQL JDBC driver on its class path) and counts
users; :meth:`SharedSession.release` stops it when the last user is done.
Later callers asking for another master or other static settings get the
running session and a warning (a worker runs one Spark application).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

#: The PostgreSQL JDBC driver (Debian's libpostgresql-jdbc-java), added to spark.jars.
POSTGRES_JDBC_JAR = "/usr/share/java/postgresql.jar"


class SharedSession:
    """The process's Spark session and its user count (class-level, thread-safe)."""

    _lock: ClassVar[threading.Lock] = threading.Lock()
    _session: ClassVar[SparkSession | None] = None
    _users: ClassVar[int] = 0
    _master: ClassVar[str] = ""
    #: Seconds the last session start took (shown in details, reported by the benchmark).
    start_s: ClassVar[float] = 0.0

    @classmethod
    def acquire(cls, master: str, conf: Mapping[str, str]) -> SparkSession:
        with cls._lock:
            if cls._session is None:
                cls._session = cls._start(master, conf)
                cls._master = master
            elif master != cls._master:
                log.warning(
                    "spark.master %s ignored: this worker's Spark session runs on %s",
                    master,
                    cls._master,
                )
            cls._users += 1
            return cls._session

    @classmethod
    def release(cls) -> None:
        with cls._lock:
            cls._users -= 1
            if cls._users > 0 or cls._session is None:
                return
            session, cls._session = cls._session, None
            cls._users = 0
        log.info("last Spark task stopped: stopping the Spark session")
        session.stop()

    @classmethod
    def _start(cls, master: str, conf: Mapping[str, str]) -> SparkSession:
        from pyspark.sql import SparkSession

        from spark_sinks.source import ensure_worker_env, register

        ensure_worker_env()
        started = time.monotonic()
        builder = SparkSession.builder.master(master).appName("sluice")
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        settings = dict(conf)
        if "spark.jars" not in settings and Path(POSTGRES_JDBC_JAR).exists():
            settings["spark.jars"] = POSTGRES_JDBC_JAR  # output.format=jdbc to PostgreSQL
        for key, value in settings.items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("WARN")
        register(session)
        cls.start_s = time.monotonic() - started
        log.info("Spark session started on %s in %.1fs", master, cls.start_s)
        return session
