"""Java ``SimpleDateFormat`` patterns, compiled to a formatter and a strict parser.

Kafka's TimestampConverter and TimestampRouter take their ``format`` options as
SimpleDateFormat patterns and work in UTC; users bring those patterns, so we
read the same syntax: runs of a letter are fields (``yyyy``, ``MM``, ``dd``,
``HH``, ``mm``, ``ss``, ``SSS``, ``EEE``, ``a``, ``XXX``, ...), text in single
quotes is literal (``''`` is a quote), anything else is literal. Names are
English. Formatting always writes UTC. Parsing is strict where Java is
lenient: the whole text must match and the date must exist (Java would read
``2024-02-30`` as March 1st); a parsed zone is honoured, else UTC.

Supported letters: G y M L d D E u a H k K h m s S z Z X. Week-based fields
(Y w W F) are refused rather than guessed, since Java's depend on the locale.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

MONTHS = (
    *("January", "February", "March", "April", "May", "June"),
    *("July", "August", "September", "October", "November", "December"),
)
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_NUMERIC = frozenset("yMLdDuHkKhmsS")
_SUPPORTED = _NUMERIC | frozenset("GEazZX")
_UNSUPPORTED_HINTS = {"Y": " (week year; did you mean 'y'?)", "w": "", "W": "", "F": ""}

_Formatter = Callable[[dt.datetime], str]


def _literal(text: str) -> _Formatter:
    """A formatter writing ``text`` whatever the date (a quoted or plain literal)."""
    return lambda _: text


class DateFormatError(ValueError):
    """A pattern that cannot be compiled, or text that does not match a pattern."""


def _tokens(pattern: str) -> list[tuple[str, Any]]:
    """``("field", (letter, count))`` and ``("text", literal)`` items of a pattern."""
    items: list[tuple[str, Any]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            end = i + 1
            literal = []
            while True:
                if end >= len(pattern):
                    raise DateFormatError(f"unterminated quote in {pattern!r}")
                if pattern[end] == "'":
                    if end + 1 < len(pattern) and pattern[end + 1] == "'":
                        literal.append("'")
                        end += 2
                        continue
                    break
                literal.append(pattern[end])
                end += 1
            items.append(("text", "".join(literal) if end > i + 1 else "'"))
            i = end + 1
        elif char.isascii() and char.isalpha():
            end = i
            while end < len(pattern) and pattern[end] == char:
                end += 1
            if char not in _SUPPORTED:
                hint = _UNSUPPORTED_HINTS.get(char, "")
                raise DateFormatError(f"pattern letter {char!r} is not supported{hint}")
            items.append(("field", (char, end - i)))
            i = end
        else:
            items.append(("text", char))
            i += 1
    return items


def _pad(value: int, count: int) -> str:
    return str(value).zfill(count)


def _field_formatter(letter: str, count: int) -> _Formatter:
    if letter == "y":
        if count == 2:
            return lambda d: _pad(d.year % 100, 2)
        return lambda d: _pad(d.year, count)
    if letter in "ML":
        if count >= 4:
            return lambda d: MONTHS[d.month - 1]
        if count == 3:
            return lambda d: MONTHS[d.month - 1][:3]
        return lambda d: _pad(d.month, count)
    if letter == "E":
        return (lambda d: DAYS[d.weekday()]) if count >= 4 else (lambda d: DAYS[d.weekday()][:3])
    simple: dict[str, Callable[[dt.datetime], int | str]] = {
        "G": lambda d: "AD",
        "d": lambda d: d.day,
        "D": lambda d: d.timetuple().tm_yday,
        "u": lambda d: d.isoweekday(),
        "a": lambda d: "AM" if d.hour < 12 else "PM",
        "H": lambda d: d.hour,
        "k": lambda d: d.hour or 24,
        "K": lambda d: d.hour % 12,
        "h": lambda d: d.hour % 12 or 12,
        "m": lambda d: d.minute,
        "s": lambda d: d.second,
        "S": lambda d: d.microsecond // 1000,
        "z": lambda d: "UTC",
        "Z": lambda d: "+0000",
        "X": lambda d: "Z",
    }
    get = simple[letter]
    if letter in _NUMERIC:
        return lambda d: _pad(int(get(d)), count)
    return lambda d: str(get(d))


def _is_numeric(letter: str, count: int) -> bool:
    return letter in _NUMERIC and not (letter in "ML" and count >= 3)


def _field_regex(letter: str, count: int, fixed_width: bool) -> str:
    if _is_numeric(letter, count):
        if letter == "y" and count == 2:
            return r"(?P<yy>\d{2})"
        width = f"{{{count}}}" if fixed_width else "+"
        return f"(?P<{letter}>\\d{width})"
    if letter in "ML":  # count >= 3 (names)
        return r"(?P<Mname>[A-Za-z]+)"
    return {
        "G": r"(?:AD|ad)",
        "E": r"[A-Za-z]+",
        "a": r"(?P<a>[AaPp][Mm])",
        "z": r"(?P<zone>[A-Za-z]+(?:[+-]\d{1,2}(?::?\d{2})?)?|[+-]\d{2}:?\d{2})",
        "Z": r"(?P<zone>[+-]\d{4}|Z)",
        "X": r"(?P<zone>Z|[+-]\d{2}(?::?\d{2})?)",
    }[letter]


class JavaDateFormat:
    """A SimpleDateFormat pattern: :meth:`format` in UTC and strict :meth:`parse`."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        items = _tokens(pattern)
        self._formatters: list[_Formatter] = []
        regex: list[str] = []
        seen: set[str] = set()
        for index, (kind, item) in enumerate(items):
            if kind == "text":
                assert isinstance(item, str)
                self._formatters.append(_literal(item))
                regex.append(re.escape(item))
                continue
            letter, count = item
            if letter in "ML" and count >= 3:
                letter_key = "Mname"
            else:
                letter_key = "yy" if (letter == "y" and count == 2) else letter
            if letter_key in seen and letter not in "GEz":
                raise DateFormatError(f"pattern {pattern!r} has field {letter!r} twice")
            seen.add(letter_key)
            self._formatters.append(_field_formatter(letter, count))
            after = items[index + 1] if index + 1 < len(items) else ("text", "")
            fixed = after[0] == "field" and _is_numeric(*after[1])  # yyyyMMdd: widths matter
            regex.append(_field_regex(letter, count, fixed))
        self._regex = re.compile("".join(regex))

    def format(self, value: dt.datetime) -> str:
        """``value`` (aware, or naive UTC) formatted in UTC."""
        if value.tzinfo is not None and value.utcoffset():
            value = value.astimezone(dt.UTC)
        return "".join(f(value) for f in self._formatters)

    def parse(self, text: str) -> dt.datetime:
        """An aware datetime (UTC unless the text names a zone); DateFormatError if no match."""
        match = self._regex.fullmatch(text.strip())
        if match is None:
            raise DateFormatError(f"{text!r} does not match the pattern {self.pattern!r}")
        try:
            return _assemble(match.groupdict())
        except ValueError as exc:
            raise DateFormatError(f"{text!r} is not a valid date ({exc})") from None


def _assemble(groups: dict[str, str | None]) -> dt.datetime:
    def number(key: str, default: int) -> int:
        raw = groups.get(key)
        return default if raw is None else int(raw)

    year = number("y", 1970)
    if groups.get("yy") is not None:
        year = _two_digit_year(int(groups["yy"] or 0))
    month = number("M", number("L", 1))
    if groups.get("Mname"):
        month = _month_number(groups["Mname"] or "")
    hour = _hour(groups, number)
    if groups.get("D") is not None and groups.get("d") is None:
        day = dt.date(year, 1, 1) + dt.timedelta(days=number("D", 1) - 1)
        year, month, day_of_month = day.year, day.month, day.day
    else:
        day_of_month = number("d", 1)
    millis = number("S", 0)
    moment = dt.datetime(
        year, month, day_of_month, hour, number("m", 0), number("s", 0), tzinfo=_zone(groups)
    )
    return (moment + dt.timedelta(milliseconds=millis)).astimezone(dt.UTC)


def _hour(groups: dict[str, str | None], number: Callable[[str, int], int]) -> int:
    """The hour of day from H (0-23), k (1-24), or h (1-12) / K (0-11) with a (AM/PM)."""
    if groups.get("H") is not None:
        return number("H", 0)
    if groups.get("k") is not None:
        return number("k", 0) % 24
    hour = number("h", 0) % 12 if groups.get("h") is not None else number("K", 0)
    return hour + 12 if (groups.get("a") or "").upper() == "PM" else hour


def _two_digit_year(yy: int) -> int:
    """Java's rule: within 80 years before and 20 years after now."""
    start = dt.datetime.now(dt.UTC).year - 80
    year = start - start % 100 + yy
    return year + 100 if year < start else year


def _month_number(name: str) -> int:
    lowered = name.lower()
    for i, month in enumerate(MONTHS, start=1):
        if lowered in (month.lower(), month[:3].lower()):
            return i
    raise ValueError(f"unknown month {name!r}")


def _zone(groups: dict[str, str | None]) -> dt.tzinfo:
    raw = groups.get("zone")
    if not raw or raw.upper() in ("Z", "UTC", "GMT", "UT"):
        return dt.UTC
    sign_at = max(raw.find("+"), raw.find("-"))
    if sign_at < 0:
        raise ValueError(f"unknown time zone {raw!r} (use an offset such as +02:00)")
    digits = raw[sign_at + 1 :].replace(":", "")
    hours, minutes = (int(digits[:-2]), int(digits[-2:])) if len(digits) > 2 else (int(digits), 0)
    offset = dt.timedelta(hours=hours, minutes=minutes)
    return dt.timezone(-offset if raw[sign_at] == "-" else offset)
