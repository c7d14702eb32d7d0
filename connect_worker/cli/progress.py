"""Progress of long CLI commands on standard error, through ``rich``.

Shown only where someone watches: when ``--progress`` asks for it, or when
standard error is a terminal and standard output is not (records go to a
file or a pipe, so the terminal shows only the bar). Standard output is never
written to: the records a command prints stay byte for byte what they were.
Without a terminal (``--progress`` into a file or a test's pipe) rich draws
no animation, only the final line.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
)

Advance = Callable[[int], None]
BAR_WIDTH = 16
#: How often counts are handed to rich (it redraws 10 times a second at most anyway).
HAND_OVER_S = 0.1
#: The counts, bar and time take about 40 columns: the rest of 80 for the description.
DESCRIPTION_MAX = 36


def wanted(asked: bool, *, stdout: TextIO | None = None, stderr: TextIO | None = None) -> bool:
    """``--progress`` given, or stderr a terminal while stdout is not (module doc)."""
    out, err = stdout or sys.stdout, stderr or sys.stderr
    return asked or (_is_tty(err) and not _is_tty(out))


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


@contextmanager
def counting(
    description: str, total: int | None, *, enabled: bool, stderr: TextIO | None = None
) -> Iterator[Advance]:
    """Yield ``advance(n)``; with ``enabled``, a bar (``total`` known) or a count on stderr."""
    if not enabled:
        yield _nothing
        return
    console = Console(file=stderr or sys.stderr)
    # counts first: a narrow terminal (or none: 80 columns) cuts the description, not them
    columns: list[ProgressColumn] = [MofNCompleteColumn()]
    if total is not None:
        columns += [TaskProgressColumn(), BarColumn(bar_width=BAR_WIDTH)]
    columns += [TimeElapsedColumn(), TextColumn("{task.description}")]
    if len(description) > DESCRIPTION_MAX:
        description = description[: DESCRIPTION_MAX - 1] + "…"
    with Progress(*columns, console=console, redirect_stdout=False,
                  redirect_stderr=False, transient=False) as progress:
        task = progress.add_task(description, total=total)
        pending = 0
        last = time.monotonic()

        def advance(n: int) -> None:  # per record: rich hears of it a few times a second
            nonlocal pending, last
            pending += n
            now = time.monotonic()
            if now - last >= HAND_OVER_S:
                progress.advance(task, pending)
                pending, last = 0, now

        try:
            yield advance
        finally:
            progress.advance(task, pending)


def _nothing(n: int) -> None:
    pass
