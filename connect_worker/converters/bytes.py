"""ByteArrayConverter: values are already bytes; pass them through untouched.

As Kafka's: writing anything but bytes (or a schema other than bytes) is a
DataError; reading yields an optional bytes schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from connectors.api import Converter, DataError, Schema, SchemaType

OPTIONAL_BYTES = Schema(SchemaType.BYTES, optional=True)


class ByteArrayConverter(Converter):
    """Kafka's ByteArrayConverter: no conversion at all."""

    aliases = ("ByteArrayConverter", "org.apache.kafka.connect.converters.ByteArrayConverter")

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if type(value) is bytes:
            if schema is not None and schema.type is not SchemaType.BYTES:
                raise DataError(f"topic {topic}: ByteArrayConverter needs a bytes schema, "
                                f"not {schema.type.value}")
            return value
        if value is None:
            return None
        if isinstance(value, bytearray | memoryview):
            return bytes(value)
        raise DataError(
            f"topic {topic}: ByteArrayConverter takes bytes, not {type(value).__name__}; "
            "use StringConverter or JsonConverter for other values"
        )

    def from_connect_many(
        self, topic: str, schemas: Sequence[Schema | None], values: Sequence[Any]
    ) -> list[bytes | None]:
        """:meth:`from_connect` for many values."""
        convert = self.from_connect
        pairs = zip(schemas, values, strict=True)
        return [convert(topic, schema, value) for schema, value in pairs]

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        return OPTIONAL_BYTES, data

    def to_connect_many(
        self, topic: str, data: Sequence[bytes | None]
    ) -> tuple[list[Schema | None], list[Any]]:
        """:meth:`to_connect` for many values: their schemas and values."""
        return [OPTIONAL_BYTES] * len(data), list(data)
