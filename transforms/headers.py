"""DropHeaders and InsertHeader: remove headers by name, add one with a literal value."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pydantic import Field

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from transforms._config import CommaList, kafka_names
from transforms._records import with_changes
from transforms.api import Transformation

_HEADERS = ("headers",)
_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")


def literal_value(text: str) -> Any:
    """A header literal read as Kafka's ``Values.parseString`` would for scalars.

    ``true``/``false`` are booleans, integers are ints, decimal numbers floats,
    anything else stays a string.
    """
    stripped = text.strip()
    if stripped.lower() in ("true", "false"):
        return stripped.lower() == "true"
    if _INTEGER.fullmatch(stripped):
        return int(stripped)
    if _DECIMAL.fullmatch(stripped):
        return float(stripped)
    return text


class DropHeadersConfig(PluginConfig):
    """Options of DropHeaders."""

    headers: CommaList = Field(
        alias="headers", min_length=1, description="Names of the headers to remove."
    )


class DropHeaders(Transformation):
    """Remove every header with one of the given names (e.g. tracing headers at a sink)."""

    config_model = DropHeadersConfig
    aliases = kafka_names("DropHeaders")

    def configure(self, props: Mapping[str, str]) -> None:
        self._names = frozenset(DropHeadersConfig.from_props(props).headers)

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        headers = record.headers
        kept = tuple(header for header in headers if header[0] not in self._names)
        if len(kept) == len(headers):
            return record
        return with_changes(record, _HEADERS, (kept,))


class InsertHeaderConfig(PluginConfig):
    """Options of InsertHeader."""

    header: str = Field(alias="header", min_length=1, description="Name of the header to add.")
    value_literal: str = Field(
        alias="value.literal",
        description="The header's value; true/false, integers and decimals become "
        "booleans and numbers, as Kafka reads them.",
    )


class InsertHeader(Transformation):
    """Add a header with a fixed value to every record (a pipeline or environment tag)."""

    config_model = InsertHeaderConfig
    aliases = kafka_names("InsertHeader")

    def configure(self, props: Mapping[str, str]) -> None:
        config = InsertHeaderConfig.from_props(props)
        self._header = (config.header, literal_value(config.value_literal))

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return with_changes(record, _HEADERS, ((*record.headers, self._header),))
