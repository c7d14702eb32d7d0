"""Java .properties syntax and the errors for files that are not properties."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_worker.properties import PropertiesError, load_properties, parse_properties


def test_separators_comments_and_blank_lines() -> None:
    text = "a=1\nb : 2\nc 3\n  # comment\n! also a comment\n\nd=\ne\n"
    assert parse_properties(text) == {"a": "1", "b": "2", "c": "3", "d": "", "e": ""}


def test_continuations_drop_leading_whitespace_of_next_line() -> None:
    text = "list=one,\\\n    two,\\\n    three\nnext=x\n"
    assert parse_properties(text) == {"list": "one,two,three", "next": "x"}


def test_escaped_backslash_at_end_is_not_a_continuation() -> None:
    assert parse_properties("path=C:\\\\\nnext=1\n") == {"path": "C:\\", "next": "1"}


def test_escapes_unicode_and_separators_in_keys() -> None:
    text = "key\\ with\\=sep = v\nt=\\t\\n\\u00e9\\q\n"
    assert parse_properties(text) == {"key with=sep": "v", "t": "\t\né" + "q"}


def test_value_keeps_later_separators_and_trailing_spaces() -> None:
    assert parse_properties("url=jdbc:postgresql://h:5432/db?a=b  ") == {
        "url": "jdbc:postgresql://h:5432/db?a=b  "
    }


def test_later_duplicates_win_and_crlf_lines() -> None:
    assert parse_properties(b"a=1\r\na=2\r\n") == {"a": "2"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"a=\\u12G4\n", "malformed .uXXXX"),
        (b"a=1\nb=open \\", "ends inside a line continuation"),
        (b"\x00\x01\x02binary", "binary data"),
        (b"a=\xff\xfe\n", "not UTF-8"),
    ],
)
def test_broken_files_get_line_numbered_errors(data: bytes, message: str) -> None:
    with pytest.raises(PropertiesError, match=message):
        parse_properties(data, source="x.properties")


def test_load_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(PropertiesError, match=r"missing\.properties: cannot read"):
        load_properties(tmp_path / "missing.properties")
    path = tmp_path / "ok.properties"
    path.write_text("name=demo\n")
    assert load_properties(path) == {"name": "demo"}
