"""MaskField$Key / $Value."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from connectors.api import ConfigError, DataError
from connectors.api.schema import INT32, STRING, struct
from tests.unit.transforms.smt_harness import check, rec, run
from transforms.mask_field import MaskFieldKey, MaskFieldValue

MASK_ALL = "fields=i,f,b,s,by,d,ts,day,t,l,m"
ROW = {
    "i": 5,
    "f": 1.5,
    "b": True,
    "s": "secret",
    "by": b"\x01",
    "d": Decimal("9.99"),
    "ts": dt.datetime(2024, 1, 2, tzinfo=dt.UTC),
    "day": dt.date(2024, 1, 2),
    "t": dt.time(12, 30),
    "l": [1, 2],
    "m": {"k": "v"},
    "keep": "visible",
}


def test_each_type_gets_its_empty_value() -> None:
    check(
        "transforms=m\ntransforms.m.type=MaskField$Value\ntransforms.m." + MASK_ALL,
        [rec(ROW)],
        [
            rec(
                {
                    "i": 0,
                    "f": 0.0,
                    "b": False,
                    "s": "",
                    "by": b"",
                    "d": Decimal(0),
                    "ts": dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
                    "day": dt.date(1970, 1, 1),
                    "t": dt.time(0),
                    "l": [],
                    "m": {},
                    "keep": "visible",
                }
            )
        ],
    )


def test_replacement_for_strings_and_numbers() -> None:
    check(
        "fields=card,pin,ratio,missing,gone\nreplacement=0000",
        [rec({"card": "4111", "pin": 1234, "ratio": 0.5, "gone": None})],
        [rec({"card": "0000", "pin": 0, "ratio": 0.0, "gone": None})],
        cls=MaskFieldValue,
    )


def test_key_and_schema_kept() -> None:
    schema = struct(("id", INT32), ("email", STRING))
    check(
        "fields=email\nreplacement=***",
        [rec("v", key={"id": 1, "email": "a@b"}, key_schema=schema)],
        [rec("v", key={"id": 1, "email": "***"}, key_schema=schema)],
        cls=MaskFieldKey,
    )


def test_unknown_schema_field_is_a_data_error() -> None:
    schema = struct(("id", INT32))
    with pytest.raises(DataError, match="no field 'email'"):
        run("fields=email", [rec({"id": 1}, value_schema=schema)], cls=MaskFieldValue)


def test_replacement_that_is_not_a_number_for_a_numeric_field() -> None:
    with pytest.raises(DataError, match="replacement 'xx' is not a valid int for field 'pin'"):
        run("fields=pin\nreplacement=xx", [rec({"pin": 1})], cls=MaskFieldValue)


def test_replacement_for_a_boolean_is_a_data_error() -> None:
    with pytest.raises(DataError, match="only string and numeric fields"):
        run("fields=ok\nreplacement=1", [rec({"ok": True})], cls=MaskFieldValue)


def test_unmaskable_type_is_a_data_error() -> None:
    with pytest.raises(DataError, match="cannot mask field 'o' of type object"):
        run("fields=o", [rec({"o": object()})], cls=MaskFieldValue)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ("", "fields: is required"),
        ("fields=", "fields: .*at least 1"),
        ("fields=a\nreplacement=", "replacement"),
    ],
)
def test_bad_options(options: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        run(options, [], cls=MaskFieldValue)
