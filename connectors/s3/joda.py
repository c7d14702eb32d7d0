"""Formatting times with the Joda-Time patterns Confluent's ``path.format`` uses.

Supported letters: ``y``/``Y`` (year; two letters: two digits), ``M`` (month;
``MMM``/``MMMM``: English names), ``d`` (day of month), ``D`` (day of year),
``H`` (hour 0-23), ``m``, ``s``, ``S`` (milliseconds), ``E`` (weekday name,
English). Text in single quotes is literal (``''`` is a quote); any other
character is copied. ``'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH`` gives
``year=2024/month=03/day=07/hour=09``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

Token = Callable[[dt.datetime], str]
_MONTHS = [
    "January", "February", "March", "April", "May", "June", "July",
    "August", "September", "October", "November", "December",
]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _number(get: Callable[[dt.datetime], int], width: int) -> Token:
    return lambda t: f"{get(t):0{width}d}"


def _field(letter: str, width: int) -> Token:
    if letter in "yY":
        if width == 2:
            return lambda t: f"{t.year % 100:02d}"
        return _number(lambda t: t.year, width)
    if letter == "M":
        if width >= 4:
            return lambda t: _MONTHS[t.month - 1]
        if width == 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        return _number(lambda t: t.month, width)
    if letter == "E":
        return (lambda t: _DAYS[t.weekday()]) if width >= 4 else lambda t: _DAYS[t.weekday()][:3]
    getters: dict[str, Callable[[dt.datetime], int]] = {
        "d": lambda t: t.day,
        "D": lambda t: t.timetuple().tm_yday,
        "H": lambda t: t.hour,
        "m": lambda t: t.minute,
        "s": lambda t: t.second,
        "S": lambda t: t.microsecond // 1000,
    }
    if letter not in getters:
        raise ValueError(f"pattern letter {letter!r} is not supported (use y M d D H m s S E)")
    return _number(getters[letter], width)


def _quoted(pattern: str, i: int) -> tuple[str, int]:
    """The literal text of the quote starting at ``i`` and the index after it."""
    if pattern.startswith("''", i):
        return "'", i + 2
    text: list[str] = []
    j = i + 1
    while j < len(pattern):
        if pattern.startswith("''", j):
            text.append("'")
            j += 2
        elif pattern[j] == "'":
            return "".join(text), j + 1
        else:
            text.append(pattern[j])
            j += 1
    raise ValueError(f"unclosed quote in {pattern!r}")


def compile_pattern(pattern: str) -> Callable[[dt.datetime], str]:
    """A function formatting a datetime with the Joda ``pattern``; ValueError if unsupported."""
    tokens: list[Token | str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            text, i = _quoted(pattern, i)
            tokens.append(text)
        elif char.isascii() and char.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == char:
                j += 1
            tokens.append(_field(char, j - i))
            i = j
        else:
            tokens.append(char)
            i += 1

    def format_time(moment: dt.datetime) -> str:
        return "".join(t if isinstance(t, str) else t(moment) for t in tokens)

    return format_time
