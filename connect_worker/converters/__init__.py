"""The bundled converters, registered through the ``sluice_converters`` hook
like any third party's (entry point ``converters = "connect_worker.converters"``).

=========================  ==========================================================
class                       aliases (besides the short class name)
=========================  ==========================================================
JsonConverter               ``org.apache.kafka.connect.json.JsonConverter``
StringConverter             ``org.apache.kafka.connect.storage.StringConverter``
ByteArrayConverter          ``org.apache.kafka.connect.converters.ByteArrayConverter``
SimpleHeaderConverter       ``org.apache.kafka.connect.storage.SimpleHeaderConverter``
=========================  ==========================================================

StringConverter and ByteArrayConverter also work as ``header.converter``
(through header-converter twins answering to the same names), as in Kafka.
"""

from __future__ import annotations

from connect_worker.converters.bytes import ByteArrayConverter
from connect_worker.converters.headers import (
    ByteArrayHeaderConverter,
    SimpleHeaderConverter,
    StringHeaderConverter,
)
from connect_worker.converters.json import JsonConverter, JsonConverterConfig
from connect_worker.converters.string import StringConverter, StringConverterConfig
from connectors.api import hookimpl

__all__ = [
    "ByteArrayConverter",
    "ByteArrayHeaderConverter",
    "JsonConverter",
    "JsonConverterConfig",
    "SimpleHeaderConverter",
    "StringConverter",
    "StringConverterConfig",
    "StringHeaderConverter",
    "sluice_converters",
]


@hookimpl
def sluice_converters() -> list[type]:
    """The bundled converters and header converters."""
    return [
        JsonConverter,
        StringConverter,
        ByteArrayConverter,
        SimpleHeaderConverter,
        StringHeaderConverter,
        ByteArrayHeaderConverter,
    ]
