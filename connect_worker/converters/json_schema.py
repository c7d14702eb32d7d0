"""Kafka Connect schemas as JsonConverter writes them in its envelope.

Shape (every schema has ``type`` and ``optional``; the rest only when set)::

    {"type": "struct", "optional": false, "name": "x", "version": 1, "doc": "...",
     "parameters": {"k": "v"}, "default": <JSON of the default value>,
     "fields": [{"type": "int32", "optional": false, "field": "id"}, ...]}
    {"type": "array", "optional": false, "items": {...}}
    {"type": "map", "optional": false, "keys": {...}, "values": {...}}

A missing ``optional`` means required, as in Kafka.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from connect_worker.converters.json_values import from_json_value, to_json_value
from connectors.api import DataError, Field, Schema, SchemaType

_TYPES = {t.value: t for t in SchemaType}


def schema_to_json(schema: Schema) -> dict[str, Any]:
    """The envelope's ``schema`` object for ``schema``."""
    out: dict[str, Any] = {"type": schema.type.value, "optional": schema.optional}
    if schema.type is SchemaType.STRUCT:
        out["fields"] = [{**schema_to_json(f.schema), "field": f.name} for f in schema.fields]
    elif schema.type is SchemaType.ARRAY:
        out["items"] = schema_to_json(_child(schema.value_schema, schema, "value_schema"))
    elif schema.type is SchemaType.MAP:
        out["keys"] = schema_to_json(_child(schema.key_schema, schema, "key_schema"))
        out["values"] = schema_to_json(_child(schema.value_schema, schema, "value_schema"))
    if schema.name is not None:
        out["name"] = schema.name
    if schema.version is not None:
        out["version"] = schema.version
    if schema.doc is not None:
        out["doc"] = schema.doc
    if schema.parameters:
        out["parameters"] = dict(schema.parameters)
    if schema.default is not None:
        out["default"] = to_json_value(schema, schema.default)
    return out


def schema_from_json(obj: Any) -> Schema:
    """Parse an envelope's ``schema`` object; DataError names what is wrong."""
    if not isinstance(obj, dict):
        raise DataError(f"a schema must be a JSON object, not {_json_kind(obj)}")
    type_name = obj.get("type")
    schema_type = _TYPES.get(type_name) if isinstance(type_name, str) else None
    if schema_type is None:
        raise DataError(f"unknown schema type {type_name!r}")
    fields: tuple[Field, ...] = ()
    key_schema = value_schema = None
    if schema_type is SchemaType.STRUCT:
        fields = _fields(obj.get("fields"))
    elif schema_type is SchemaType.ARRAY:
        value_schema = schema_from_json(_required(obj, "items", "array"))
    elif schema_type is SchemaType.MAP:
        key_schema = schema_from_json(_required(obj, "keys", "map"))
        value_schema = schema_from_json(_required(obj, "values", "map"))
    parameters = obj.get("parameters")
    if parameters is not None and not (
        isinstance(parameters, dict) and all(isinstance(v, str) for v in parameters.values())
    ):
        raise DataError("schema parameters must be an object of strings")
    version = obj.get("version")
    if version is not None and (type(version) is not int):
        raise DataError(f"schema version must be an integer, not {version!r}")
    schema = Schema(
        schema_type,
        optional=obj.get("optional") is True,
        name=_optional_str(obj, "name"),
        version=version,
        doc=_optional_str(obj, "doc"),
        parameters=dict(parameters) if parameters else None,
        fields=fields,
        key_schema=key_schema,
        value_schema=value_schema,
    )
    default = obj.get("default")
    if default is not None:
        schema = replace(schema, default=from_json_value(schema, default))
    return schema


def _fields(raw: Any) -> tuple[Field, ...]:
    if not isinstance(raw, list):
        raise DataError("a struct schema needs a 'fields' array")
    fields = []
    for index, item in enumerate(raw):
        if not isinstance(item, dict) or not isinstance(item.get("field"), str):
            raise DataError(f"struct field #{index} has no 'field' name")
        fields.append(Field(item["field"], schema_from_json(item), index))
    return tuple(fields)


def _required(obj: dict[str, Any], key: str, kind: str) -> Any:
    if key not in obj:
        raise DataError(f"{kind} schema without '{key}'")
    return obj[key]


def _optional_str(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is not None and not isinstance(value, str):
        raise DataError(f"schema {key} must be a string, not {value!r}")
    return value


def _child(child: Schema | None, parent: Schema, attr: str) -> Schema:
    if child is None:
        raise DataError(f"a {parent.type.value} schema has no {attr}")
    return child


def _json_kind(obj: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(obj), "null" if obj is None else "a number"
    )
