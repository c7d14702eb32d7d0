"""MaskField: replace the values of some fields with a mask of the same type.

Without ``replacement`` a field becomes its type's empty value: 0, 0.0,
False, "", b"", [], {}, Decimal 0, the epoch for dates and timestamps,
midnight for times. With ``replacement`` strings take it as is and numbers take
it parsed as their type; other types cannot take a replacement (DataError).
The schema does not change. Null fields stay null.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from contextlib import suppress
from decimal import Decimal, InvalidOperation
from typing import Any

from pydantic import Field

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema
from transforms._base import KeyOrValueTransform
from transforms._config import CommaList, kafka_names
from transforms._schemas import (
    EPOCH,
    SchemaCache,
    require_dict,
    require_field,
    require_struct,
    type_name,
)

_EMPTY: dict[type, Any] = {
    bool: False,
    int: 0,
    float: 0.0,
    str: "",
    bytes: b"",
    bytearray: b"",
    Decimal: Decimal(0),
    dt.datetime: EPOCH,
    dt.date: dt.date(1970, 1, 1),
    dt.time: dt.time(0),
}
_EMPTY_CONTAINERS: dict[type, Callable[[], Any]] = {list: list, dict: dict, tuple: tuple}
_NUMBER_PARSERS: dict[type, Callable[[str], Any]] = {int: int, float: float, Decimal: Decimal}


class MaskFieldConfig(PluginConfig):
    """Options of MaskField$Key / MaskField$Value."""

    fields: CommaList = Field(alias="fields", min_length=1, description="Fields to mask.")
    replacement: str | None = Field(
        None,
        alias="replacement",
        min_length=1,
        description="Mask for string and numeric fields (parsed as the field's type); "
        "unset: each type's empty value.",
    )


class MaskField(KeyOrValueTransform):
    """Hide sensitive fields (card numbers, emails) while keeping the record's shape.

    Tombstones pass through.
    """

    config_model = MaskFieldConfig

    def configure(self, props: Mapping[str, str]) -> None:
        config = MaskFieldConfig.from_props(props)
        self._fields = config.fields
        self._replacement = config.replacement
        self._masks = _EMPTY.copy() if config.replacement is None else self._replacements()
        self._checked = SchemaCache()

    def _replacements(self) -> dict[type, Any]:
        replacement = self._replacement
        masks: dict[type, Any] = {str: replacement}
        for kind, parse in _NUMBER_PARSERS.items():
            # a replacement that does not parse as a type: its fields are DataErrors (_mask)
            with suppress(ValueError, InvalidOperation):
                masks[kind] = parse(replacement)  # type: ignore[arg-type]
        return masks

    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        if type(data) is not dict:
            data = require_dict(data, self.label)
        new = data.copy()
        masks = self._masks
        for name in self._fields:
            value = new.get(name)
            if value is not None:
                mask = masks.get(type(value), masks)
                new[name] = self._mask(name, value) if mask is masks else mask
        return new

    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        require_struct(schema, data, self.label)
        self._checked.get(schema, self._check_fields)
        return self.schemaless(data, record), schema

    def _check_fields(self, schema: Schema) -> bool:
        for name in self._fields:
            require_field(schema, name, self.label)
        return True

    def _mask(self, name: str, value: Any) -> Any:
        """The mask of a value whose type has no precomputed mask."""
        kind = type(value)
        if self._replacement is None:
            for base, empty in _EMPTY.items():
                if isinstance(value, base):
                    return empty
            for base, make in _EMPTY_CONTAINERS.items():
                if isinstance(value, base):
                    return make()
            raise DataError(f"{self.label}: cannot mask field {name!r} of type {type_name(value)}")
        if kind in _NUMBER_PARSERS:
            raise DataError(
                f"{self.label}: replacement {self._replacement!r} is not a valid "
                f"{kind.__name__} for field {name!r}"
            )
        raise DataError(
            f"{self.label}: field {name!r} is a {type_name(value)}; only string and numeric "
            "fields can take a replacement"
        )


class MaskFieldKey(MaskField):
    """MaskField on the record key."""

    on_key = True
    aliases = kafka_names("MaskField$Key")


class MaskFieldValue(MaskField):
    """MaskField on the record value."""

    aliases = kafka_names("MaskField$Value")
