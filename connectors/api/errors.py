"""Exceptions a plugin raises; each type has one behaviour in the runtime.

::

    ConnectError                 anything else: the task FAILS, its trace goes to its status
    ├── RetriableError           transient (network, lock, leader moved): the runtime backs
    │                            off and retries the same call/batch
    └── DataError                this record is bad (cannot convert, transform or write):
                                 errors.tolerance decides (fail, or log + dead-letter queue)
    ConfigError (ValueError)     a config that cannot work; raised by validation/start()
"""

from __future__ import annotations


class ConnectError(Exception):
    """A failure the runtime cannot handle locally: the task goes FAILED."""


class RetriableError(ConnectError):
    """A transient failure: the runtime retries with exponential backoff."""


class DataError(ConnectError):
    """A record that cannot be processed; subject to ``errors.tolerance``."""


class ConfigError(ValueError):
    """A configuration that cannot work; the message names the key(s) at fault."""
