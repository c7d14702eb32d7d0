"""Invariant checks that survive ``python -O`` (``assert`` statements do not).

A failed invariant is a programmer error: it raises :class:`InvariantViolation`
and the caller is expected to crash rather than handle it.
"""

from __future__ import annotations


class InvariantViolation(AssertionError):
    """An internal invariant does not hold: a bug, never bad input."""


def check(condition: bool, message: str) -> None:
    """Raise :class:`InvariantViolation` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise InvariantViolation(message)
