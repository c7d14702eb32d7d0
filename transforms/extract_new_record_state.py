"""Debezium's ExtractNewRecordState: a change event's envelope -> the row after the change.

A change event's value is ``{before, after, source, transaction, op, ts_ms,
ts_us, ts_ns}`` (Debezium 3.x; older events without ts_us/ts_ns work too); this keeps
``after`` (creates ``c``, updates ``u``, snapshot reads ``r``). Deletes
(``d``) and tombstones (null values that follow deletes for compaction) are
handled by ``delete.tombstone.handling.mode``:

=======================  =====================================  ==============
mode                     delete event                           tombstone
=======================  =====================================  ==============
drop                     dropped                                dropped
tombstone (default)      dropped                                kept
rewrite                  ``before`` + ``__deleted: "true"``     dropped
rewrite-with-tombstone   ``before`` + ``__deleted: "true"``     kept
delete-to-tombstone      becomes a tombstone                    dropped
=======================  =====================================  ==============

In the rewrite modes every row gets ``__deleted`` (``"false"`` unless
deleted). Debezium's older options ``delete.handling.mode`` (drop, rewrite,
none) and ``drop.tombstones`` are read when the new one is not set. Truncate
events (``t``) are dropped, as Debezium does; values that are not change
events (heartbeats, schema changes) pass untouched.

``add.fields=op,source.ts_ms`` copies envelope metadata into the row as
``__op`` and ``__source_ts_ms`` (prefix ``add.fields.prefix``); a plain name
is looked up in the envelope first, then in ``source`` (``table``, ``lsn``).
``add.headers`` does the same into headers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import Field, model_validator

from connectors.api.config import PluginConfig
from connectors.api.errors import DataError
from connectors.api.records import ConnectRecord
from connectors.api.schema import Schema, SchemaType
from transforms._config import CommaList, invalid
from transforms._records import with_changes, with_value
from transforms._schemas import SchemaCache, primitive, struct_like, type_name
from transforms.api import Transformation

Mode = Literal["drop", "tombstone", "rewrite", "rewrite-with-tombstone", "delete-to-tombstone"]
#: mode -> (what happens to deletes: drop | rewrite | tombstone, keep tombstones)
_MODES: dict[str, tuple[str, bool]] = {
    "drop": ("drop", False),
    "tombstone": ("drop", True),
    "rewrite": ("rewrite", False),
    "rewrite-with-tombstone": ("rewrite", True),
    "delete-to-tombstone": ("tombstone", False),
}
_LEGACY_DELETES = {"drop": "drop", "rewrite": "rewrite", "none": "tombstone"}
_ROW_OPS = frozenset({"c", "u", "r"})
_DELETED = "__deleted"
_VALUE_AND_HEADERS = ("value", "value_schema", "headers")

#: (output name, where: () for the envelope or ("source",) etc., field name)
_Reference = tuple[str, tuple[str, ...], str]


class ExtractNewRecordStateConfig(PluginConfig):
    """Options of io.debezium.transforms.ExtractNewRecordState."""

    delete_tombstone_handling_mode: Mode | None = Field(
        None,
        alias="delete.tombstone.handling.mode",
        description="What to do with delete events and tombstones: drop, tombstone (the "
        "default), rewrite, rewrite-with-tombstone or delete-to-tombstone.",
    )
    delete_handling_mode: Literal["drop", "rewrite", "none"] | None = Field(
        None,
        alias="delete.handling.mode",
        description="Deprecated by Debezium: drop, rewrite or none (pass deletes as nulls).",
    )
    drop_tombstones: bool | None = Field(
        None,
        alias="drop.tombstones",
        description="Deprecated by Debezium: drop tombstones (default true with the old options).",
    )
    add_fields: CommaList = Field(
        (),
        alias="add.fields",
        description="Envelope fields to add to the row, e.g. `op,source.ts_ms,table`.",
    )
    add_fields_prefix: str = Field(
        "__", alias="add.fields.prefix", description="Prefix of the added fields' names."
    )
    add_headers: CommaList = Field(
        (), alias="add.headers", description="Envelope fields to add as headers."
    )
    add_headers_prefix: str = Field(
        "__", alias="add.headers.prefix", description="Prefix of the added headers' names."
    )

    @model_validator(mode="after")
    def _one_way_to_say_it(self) -> ExtractNewRecordStateConfig:
        legacy = self.delete_handling_mode is not None or self.drop_tombstones is not None
        if legacy and self.delete_tombstone_handling_mode is not None:
            raise invalid(
                "delete.tombstone.handling.mode replaces delete.handling.mode and "
                "drop.tombstones; set only the new option"
            )
        return self

    def deletes_and_tombstones(self) -> tuple[str, bool]:
        """(drop | rewrite | tombstone for deletes, whether tombstones are kept)."""
        if self.delete_tombstone_handling_mode is not None:
            return _MODES[self.delete_tombstone_handling_mode]
        if self.delete_handling_mode is None and self.drop_tombstones is None:
            return _MODES["tombstone"]
        deletes = _LEGACY_DELETES[self.delete_handling_mode or "drop"]
        return deletes, self.drop_tombstones is False  # the old default dropped them


def _references(names: tuple[str, ...], prefix: str) -> tuple[_Reference, ...]:
    references = []
    for name in names:
        parent, dot, field = name.rpartition(".")
        where = tuple(parent.split(".")) if dot else ()
        references.append((prefix + name.replace(".", "_"), where, field))
    return tuple(references)


class ExtractNewRecordState(Transformation):
    """Unwrap Debezium change events into plain rows for sinks that want rows.

    See the module docstring for the modes and metadata options.
    """

    config_model = ExtractNewRecordStateConfig
    aliases = ("io.debezium.transforms.ExtractNewRecordState", "ExtractNewRecordState")

    def configure(self, props: Mapping[str, str]) -> None:
        config = ExtractNewRecordStateConfig.from_props(props)
        self._deletes, self._keep_tombstones = config.deletes_and_tombstones()
        self._rewrite = self._deletes == "rewrite"
        self._fields = _references(config.add_fields, config.add_fields_prefix)
        self._headers = _references(config.add_headers, config.add_headers_prefix)
        self._schemas = SchemaCache()

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        envelope = record.value
        if envelope is None:
            return record if self._keep_tombstones else None
        schema = record.value_schema
        if not _is_envelope(envelope, schema):
            return record
        op = envelope.get("op")
        if op == "d":
            if self._deletes == "drop":
                return None
            if self._deletes == "tombstone":
                return with_value(record, None, None)
            row = envelope.get("before")
        elif op in _ROW_OPS:
            row = envelope.get("after")
        elif op == "t":
            return None
        else:
            return record
        if not isinstance(row, dict):
            part = "before" if op == "d" else "after"
            raise DataError(
                f"ExtractNewRecordState: a change event with op {op!r} has {type_name(row)} "
                f"in {part!r}, not a row"
            )
        new = dict(row)
        if self._rewrite:
            new[_DELETED] = "true" if op == "d" else "false"
        for name, where, field in self._fields:
            new[name] = _lookup(envelope, where, field)
        headers = record.headers + tuple(
            (name, _lookup(envelope, where, field)) for name, where, field in self._headers
        )
        row_schema = None if schema is None else self._schemas.get(schema, self._row_schema)
        return with_changes(record, _VALUE_AND_HEADERS, (new, row_schema, headers))

    def _row_schema(self, envelope: Schema) -> Schema:
        """The row schema (``after``'s) plus the added fields, all added ones optional."""
        after = envelope.field("after") or envelope.field("before")
        if after is None or after.schema.type is not SchemaType.STRUCT:
            raise DataError("ExtractNewRecordState: the envelope schema has no struct 'after'")
        fields = [(f.name, f.schema) for f in after.schema.fields]
        if self._rewrite:
            fields.append((_DELETED, primitive(SchemaType.STRING, optional=True)))
        for name, where, field in self._fields:
            fields.append((name, _lookup_schema(envelope, where, field).as_optional()))
        return struct_like(after.schema, fields)


def _is_envelope(value: Any, schema: Schema | None) -> bool:
    if schema is not None:
        return (
            schema.type is SchemaType.STRUCT
            and schema.field("op") is not None
            and (schema.field("after") is not None or schema.field("before") is not None)
        )
    return isinstance(value, dict) and "op" in value and ("after" in value or "before" in value)


def _container(envelope: Mapping[str, Any], where: tuple[str, ...], field: str) -> Any:
    """The struct holding a reference: the envelope, a named struct, else ``source``."""
    if not where:
        return envelope if field in envelope else envelope.get("source")
    node: Any = envelope
    for step in where:
        node = node.get(step) if isinstance(node, dict) else None
    return node


def _lookup(envelope: Mapping[str, Any], where: tuple[str, ...], field: str) -> Any:
    node = _container(envelope, where, field)
    return node.get(field) if isinstance(node, dict) else None


def _lookup_schema(envelope: Schema, where: tuple[str, ...], field: str) -> Schema:
    node: Schema | None = envelope
    if not where:
        if envelope.field(field) is None:
            source = envelope.field("source")
            node = source.schema if source is not None else None
    else:
        for step in where:
            found = node.field(step) if node is not None else None
            node = found.schema if found is not None else None
    found = node.field(field) if node is not None else None
    if found is None:
        path = ".".join((*where, field))
        raise DataError(f"ExtractNewRecordState: add.fields names {path!r}, not in the envelope")
    return found.schema
