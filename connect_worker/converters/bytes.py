"""ByteArrayConverter: values are already bytes; pass them through untouched.

As Kafka's: writing anything but bytes (or a schema other than bytes) is a
DataError; reading yields an optional bytes schema.
"""

from __future__ import annotations

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

    def to_connect(self, topic: str, data: bytes | None) -> tuple[Schema | None, Any]:
        return OPTIONAL_BYTES, data
