"""Secret values hidden in text that leaves the worker: log lines, traces, error messages.

Configs are masked key by key (:func:`connect_worker.connector_config.mask_secrets`);
free text cannot be, because a plugin's exception or a library's message may
quote a password anywhere (a connection string in a driver's error, a JAAS
line echoed by a parser). So the worker remembers the secret values of every
config it validates (:func:`connect_worker.connector_config.remember_secrets`
feeds :data:`SECRETS`), and :meth:`SecretValues.redact` replaces each of them,
and the password of any ``scheme://user:password@`` URL, by ``[hidden]`` in:

- every log line (:class:`RedactingFilter` on the process's log handlers, the
  formatted message and the traceback);
- the traces of FAILED connectors and tasks and the messages of REST errors
  (:mod:`connect_worker.rest.models`, :mod:`connect_worker.rest.errors`).

Values shorter than :data:`MIN_SECRET_CHARS` are not searched for (a password
``x`` would hide every ``x``); at most :data:`MAX_SECRETS` values are kept, the
oldest forgotten first. The values live only in this process's memory.
"""

from __future__ import annotations

import logging
import re
import threading
import traceback
from collections.abc import Iterable

from connectors.api.config import HIDDEN, hide_url_passwords

MIN_SECRET_CHARS = 4
MAX_SECRETS = 10_000


class SecretValues:
    """The secret strings this process has seen; thread-safe."""

    def __init__(self) -> None:
        self._values: dict[str, None] = {}  # insertion-ordered set
        self._pattern: re.Pattern[str] | None = None
        self._lock = threading.Lock()

    def add(self, values: Iterable[str]) -> None:
        fresh = [v for v in values if len(v) >= MIN_SECRET_CHARS and v not in self._values]
        if not fresh:
            return
        with self._lock:
            for value in fresh:
                self._values[value] = None
            while len(self._values) > MAX_SECRETS:
                del self._values[next(iter(self._values))]
            ordered = sorted(self._values, key=len, reverse=True)  # longest first
            self._pattern = re.compile("|".join(re.escape(v) for v in ordered))

    def redact(self, text: str) -> str:
        """``text`` with every known secret and URL password replaced by ``[hidden]``."""
        pattern = self._pattern
        if pattern is not None:
            text = pattern.sub(HIDDEN, text)
        return hide_url_passwords(text)

    def __contains__(self, value: str) -> bool:
        return value in self._values


#: The process's secret values (see the module doc).
SECRETS = SecretValues()


class RedactingFilter(logging.Filter):
    """Hides :data:`SECRETS` in each record's message and traceback; never drops one."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        redacted = SECRETS.redact(message)
        if redacted != message or record.args:
            record.msg, record.args = redacted, None
        if record.exc_info and not record.exc_text:
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        if record.exc_text:
            record.exc_text = SECRETS.redact(record.exc_text)
            record.exc_info = None  # formatters print exc_text instead
        if record.stack_info:
            record.stack_info = SECRETS.redact(record.stack_info)
        return True


def install_redaction() -> None:
    """Put :class:`RedactingFilter` on every handler of the root logger."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
