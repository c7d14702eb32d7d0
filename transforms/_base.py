"""The base of transforms that have ``$Key`` and ``$Value`` variants.

Kafka writes such a transform once and picks the record part in two nested
subclasses; here the part is a class attribute (``on_key``) and the variants
are two small subclasses named ``<Transform>Key`` and ``<Transform>Value``.
A subclass implements :meth:`KeyOrValueTransform.schemaless` (plain data,
no schema) and :meth:`KeyOrValueTransform.with_schema` (data and its schema,
returning both reshaped). A null key or value passes through untouched unless
``passes_null`` is turned off.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, ClassVar

from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema
from transforms._records import with_key, with_value
from transforms.api import Transformation


class KeyOrValueTransform(Transformation):
    """A transform of the record key (``on_key``) or value; see the module docstring."""

    on_key: ClassVar[bool] = False
    passes_null: ClassVar[bool] = True

    @property
    def label(self) -> str:
        """The short Kafka name (``InsertField$Value``) used in error messages."""
        return self.aliases[-1] if self.aliases else type(self).__name__

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        on_key = self.on_key
        if on_key:
            data, schema = record.key, record.key_schema
        else:
            data, schema = record.value, record.value_schema
        if data is None and self.passes_null:
            return record
        if schema is None:
            new_data, new_schema = self.schemaless(data, record), None
        else:
            new_data, new_schema = self.with_schema(data, schema, record)
        if on_key:
            return with_key(record, new_data, new_schema)
        return with_value(record, new_data, new_schema)

    @abstractmethod
    def schemaless(self, data: Any, record: ConnectRecord) -> Any:
        """The new key or value of a record without a schema."""

    @abstractmethod
    def with_schema(
        self, data: Any, schema: Schema, record: ConnectRecord
    ) -> tuple[Any, Schema | None]:
        """The new key or value and its schema, for a record with a schema."""
