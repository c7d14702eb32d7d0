"""``wait_for``: the one poll-until-true of the tests and benchmarks."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

WAIT_S = 60.0  # a deadline for a failure to be reported, not a performance bound
POLL_S = 0.05


def wait_for(
    check: Callable[[], T],
    what: str,
    timeout_s: float = WAIT_S,
    *,
    retry_on: tuple[type[Exception], ...] = (),
) -> T:
    """Call ``check`` until it returns something truthy, and return that.

    After ``timeout_s`` fail with an AssertionError naming ``what``. An
    exception of a ``retry_on`` type (a server still starting) counts as "not
    yet"; the last one is named in the failure.
    """
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while True:
        try:
            result = check()
        except retry_on as exc:
            last_error = exc
        else:
            if result:
                return result
        if time.monotonic() > deadline:
            detail = f" (last error: {last_error!r})" if last_error else ""
            raise AssertionError(f"timed out after {timeout_s}s waiting for {what}{detail}")
        time.sleep(POLL_S)
