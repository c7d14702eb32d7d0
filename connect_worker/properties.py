"""Java ``.properties`` files, parsed with Java's rules and clear errors.

Syntax (as ``java.util.Properties.load``): ``key=value``, ``key: value`` or
``key value``; ``#`` and ``!`` start comment lines; a line ending in an odd
number of backslashes continues on the next line (whose leading whitespace is
dropped); escapes ``\\t \\n \\r \\f \\\\``, ``\\uXXXX``, and ``\\c`` for any other
character ``c``. Later duplicates win.

Stricter than Java where Java silently accepts a mistake: the file must be
UTF-8 text, a malformed ``\\uXXXX`` is an error (Java throws too), and a file
that ends inside a continuation is an error. Errors name the file and line.
"""

from __future__ import annotations

from pathlib import Path

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_SEPARATORS = "=:"
_WHITESPACE = " \t\f"


class PropertiesError(ValueError):
    """A properties file that cannot be read; the message names the file and line."""


def load_properties(path: str | Path) -> dict[str, str]:
    """Read and parse a properties file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PropertiesError(f"{path}: cannot read: {exc.strerror or exc}") from None
    return parse_properties(data, source=str(path))


def parse_properties(data: bytes | str, source: str = "<properties>") -> dict[str, str]:
    """Parse properties text (bytes must be UTF-8) into an ordered dict."""
    text = _decode(data, source) if isinstance(data, bytes) else data
    result: dict[str, str] = {}
    for line_number, logical in _logical_lines(text, source):
        key, value = _split(logical)
        result[_unescape(key, source, line_number)] = _unescape(value, source, line_number)
    return result


def _decode(data: bytes, source: str) -> str:
    if b"\x00" in data:
        raise PropertiesError(f"{source}: binary data (NUL bytes), not a properties file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise PropertiesError(f"{source}:{line}: not UTF-8 text ({exc.reason})") from None


def _logical_lines(text: str, source: str) -> list[tuple[int, str]]:
    """Join continued lines; skip blanks and comments. Yields (first line number, text)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    logical: list[tuple[int, str]] = []
    parts: list[str] = []
    start = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.lstrip(_WHITESPACE)
        if not parts:
            if not line or line[0] in "#!":
                continue
            start = number
        if _continues(line):
            parts.append(line[:-1])
            continue
        parts.append(line)
        logical.append((start, "".join(parts)))
        parts = []
    if parts:
        raise PropertiesError(
            f"{source}:{start}: the file ends inside a line continuation "
            "(a trailing backslash with no next line)"
        )
    return logical


def _continues(line: str) -> bool:
    trailing = len(line) - len(line.rstrip("\\"))
    return trailing % 2 == 1


def _split(line: str) -> tuple[str, str]:
    """Split at the first unescaped separator (``=``, ``:`` or whitespace)."""
    i = 0
    while i < len(line):
        char = line[i]
        if char == "\\":
            i += 2
            continue
        if char in _SEPARATORS or char in _WHITESPACE:
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(_WHITESPACE)
    if rest[:1] in ("=", ":") and rest:
        rest = rest[1:].lstrip(_WHITESPACE)
    return key, rest


def _unescape(text: str, source: str, line_number: int) -> str:
    if "\\" not in text:
        return text
    out: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char != "\\" or i + 1 >= len(text):
            out.append(char)
            i += 1
            continue
        code = text[i + 1]
        if code == "u":
            digits = text[i + 2 : i + 6]
            if len(digits) != 4 or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise PropertiesError(f"{source}:{line_number}: malformed \\uXXXX escape")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_ESCAPES.get(code, code))
        i += 2
    return "".join(out)
