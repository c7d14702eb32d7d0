"""Validate a connector config and describe configs, shaped as Kafka Connect's REST does.

:func:`validate_connector_config` checks a whole connector config: the common
keys (:mod:`connect_worker.connector_config`), the connector's own
``config_model``, the converters it overrides, and each transform's and
predicate's model under ``transforms.<alias>.`` / ``predicates.<alias>.``. It
never raises: every problem is reported under the key at fault (a problem of a
plugin's model as a whole goes under the key naming that plugin's class).

The result's :meth:`ValidationResult.to_json` is the body of
``PUT /connector-plugins/{plugin}/config/validate``::

    {"name": ..., "error_count": N, "groups": [...],
     "configs": [{"definition": {name, type, required, default_value, importance,
                                 documentation, group, width, display_name,
                                 dependents, order},
                  "value": {name, value, recommended_values, errors, visible}}]}

:func:`plugin_config_definition` gives the ``definition`` list of one plugin
(``GET /connector-plugins/{plugin}/config``). Secrets' values never appear in clear.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, SecretStr, ValidationError
from pydantic.fields import FieldInfo

from connect_worker.config_providers import resolve_references
from connect_worker.connector_config import (
    HIDDEN,
    CommonConnectorConfig,
    SinkConnectorConfig,
    comma_list,
    field_errors,
    is_secret_key,
    remember_secrets,
    subconfig,
)
from connect_worker.security.redaction import SECRETS
from connectors.api import ConfigError, Connector, PluginConfig, SinkConnector, SourceConnector
from connectors.api.config import hide_url_passwords

if TYPE_CHECKING:
    from connect_worker.plugins import PluginRegistry
    from connectors.api.config_provider import ConfigProvider

_CLASS_KEYS = ("type", "predicate", "negate")


@dataclass
class ValidationResult:
    """Per-key problems of one connector config, plus what Kafka's validate shows."""

    errors: dict[str, list[str]] = field(default_factory=dict)
    connector_class: type[Connector] | None = None
    connector_type: str | None = None  # "source" | "sink" | None (unknown class)
    configs: list[dict[str, Any]] = field(default_factory=list)  # {"definition", "value"}
    #: The keys every connector has, parsed (a sink's with its topics): None if they are bad.
    common: CommonConnectorConfig | None = None

    @property
    def error_count(self) -> int:
        return sum(len(problems) for problems in self.errors.values())

    @property
    def ok(self) -> bool:
        return self.error_count == 0

    def problems(self) -> list[str]:
        """Every problem as one ``key: problem`` line."""
        return [f"{key}: {p}" for key, problems in self.errors.items() for p in problems]

    def add(self, key: str, problem: str) -> None:
        problem = SECRETS.redact(problem)  # a check() may quote a connection string
        problems = self.errors.setdefault(key, [])
        if problem not in problems:
            problems.append(problem)

    def to_json(self, plugin_name: str) -> dict[str, Any]:
        """Kafka Connect's ``config/validate`` response body."""
        groups: list[str] = []
        configs = []
        for entry in self.configs:
            definition = entry["definition"]
            if definition["group"] and definition["group"] not in groups:
                groups.append(definition["group"])
            value = dict(entry["value"], errors=list(self.errors.get(definition["name"], [])))
            configs.append({"definition": definition, "value": value})
        return {
            "name": plugin_name,
            "error_count": self.error_count,
            "groups": groups,
            "configs": configs,
        }


def validate_connector_config(
    registry: PluginRegistry,
    props: Mapping[str, str],
    providers: Mapping[str, ConfigProvider] | None = None,
    *,
    check: bool = False,
) -> ValidationResult:
    """Check ``props`` completely; never raises (see the module docstring).

    With ``providers``, ``${...}`` references are resolved first (problems go
    under their keys); values are always shown as given, references unresolved.
    With ``check``, a config without problems is also tested against the real
    system by the connector's ``check()`` (see :func:`connectivity_problems`).
    """
    result = ValidationResult()
    shown = dict(props)
    remember_secrets(props, registry)  # no log line nor trace will show them
    try:
        values = _resolved(props, providers, result)
        remember_secrets(values, registry)
        _validate(registry, values, shown, result)
        if check and result.ok and result.connector_class is not None:
            for key, problem in connectivity_problems(result.connector_class, values):
                result.add(key, problem)
    except Exception as exc:  # a plugin model blew up: report it, never raise
        result.add("connector.class", f"validation failed: {type(exc).__name__}: {exc}")
    return result


def connectivity_problems(cls: type[Connector], values: dict[str, str]) -> list[tuple[str, str]]:
    """``(key, problem)`` for each problem the connector's ``check()`` found.

    A problem written ``"<key>: ..."`` about one of the connector's keys goes
    under that key (where Kafka's validate shows a failed connection under
    ``connection.url``); any other under ``connector.class``. A ``check()``
    that raises is itself a problem.
    """
    try:
        problems = cls().check(values)
    except Exception as exc:  # a crashing check is a problem to show, not a failure
        return [("connector.class", f"check() failed: {type(exc).__name__}: {exc}")]
    keys = {info.alias or name for name, info in cls.config_model.model_fields.items()}
    placed = []
    for problem in problems:
        key, separator, rest = problem.partition(": ")
        if separator and key in keys | set(values):
            placed.append((key, rest))
        else:
            placed.append(("connector.class", problem))
    return placed


def _resolved(
    props: Mapping[str, str],
    providers: Mapping[str, ConfigProvider] | None,
    result: ValidationResult,
) -> dict[str, str]:
    if providers is None:
        return dict(props)
    values = {}
    for key, value in props.items():
        try:
            values[key] = resolve_references({key: value}, providers)[key]
        except ConfigError as exc:
            result.add(key, str(exc).removeprefix(f"{key}: "))
            values[key] = value
    return values


def _validate(
    registry: PluginRegistry,
    values: dict[str, str],
    shown: dict[str, str],
    result: ValidationResult,
) -> None:
    class_name = values.get("connector.class", "").strip()
    if class_name:
        try:
            result.connector_class = registry.connector_class(class_name)
        except ValueError as exc:
            result.add("connector.class", str(exc))
    cls = result.connector_class
    if cls is not None:
        result.connector_type = "sink" if issubclass(cls, SinkConnector) else (
            "source" if issubclass(cls, SourceConnector) else None
        )
    base = SinkConnectorConfig if result.connector_type == "sink" else CommonConnectorConfig
    section = _Section(result, values, shown)
    common = section.model(base, "", "Common", whole_key="connector.class")
    result.common = common if isinstance(common, CommonConnectorConfig) else None
    if cls is not None:
        section.model(cls.config_model, "", cls.__name__, whole_key="connector.class")
    for kind in ("key", "value"):
        section.plugin(f"{kind}.converter", registry.converter_class, f"{kind} converter")
    section.plugin("header.converter", registry.header_converter_class, "header converter")
    _validate_chain(registry, values, section)


def _validate_chain(registry: PluginRegistry, values: dict[str, str], section: _Section) -> None:
    predicates = comma_list(values.get("predicates"))
    for alias in comma_list(values.get("transforms")):
        prefix = f"transforms.{alias}."
        group = f"Transforms: {alias}"
        section.plugin(prefix + "type", registry.transform_class, "transformation", group,
                       required=True)
        predicate = values.get(prefix + "predicate", "").strip()
        section.extra(prefix + "predicate", "STRING", "The alias of the predicate that decides "
                      "whether this transform applies.", group)
        if predicate and predicate not in predicates:
            section.result.add(prefix + "predicate", f"{predicate!r} is not listed in predicates")
        section.extra(prefix + "negate", "BOOLEAN", "Apply the transform when the predicate "
                      "does not match.", group, default="false")
        if values.get(prefix + "negate", "false").strip().lower() not in ("true", "false"):
            section.result.add(prefix + "negate", "must be true or false")
    for alias in predicates:
        section.plugin(f"predicates.{alias}.type", registry.predicate_class, "predicate",
                       f"Predicates: {alias}", required=True)


@dataclass
class _Section:
    """Adds definitions and per-key problems to a result."""

    result: ValidationResult
    values: dict[str, str]
    shown: dict[str, str]
    seen: set[str] = field(default_factory=set)
    order: dict[str, int] = field(default_factory=dict)

    def model(
        self, model: type[BaseModel], prefix: str, group: str, *, whole_key: str
    ) -> BaseModel | None:
        """Validate the ``prefix``-ed keys against ``model``, adding its definitions.

        Returns the parsed model, or None when a key is bad.
        """
        for name, info in model.model_fields.items():
            self._entry(describe_field(prefix, name, info, group, 0))
        props = subconfig(self.values, prefix) if prefix else self.values
        reported: set[str] = set()
        for attempt in range(2):
            try:
                parsed = model.model_validate(props)
            except ValidationError as exc:
                errors = field_errors(exc, model)
            else:
                return parsed if attempt == 0 else None
            for key, problems in errors.items():
                if key in reported:  # the retry's placeholder for a key already reported
                    continue
                for problem in problems:
                    self.result.add(prefix + key if key else whole_key, problem)
            if attempt or not errors:
                return None
            reported = {k for k in errors if k}
            # Model validators (cross-field rules) run only once every field is valid:
            # try again with bad keys at their defaults and missing ones as placeholders.
            missing = {k: "placeholder" for k in errors if k and k not in props}
            props = {k: v for k, v in props.items() if k not in errors} | missing
        return None

    def plugin(
        self,
        key: str,
        resolve: Callable[[str], type],
        what: str,
        group: str = "Common",
        *,
        required: bool = False,
    ) -> None:
        """A key naming a plugin class (converter, transform...), then that plugin's model."""
        if not required and key not in self.values:
            return  # an optional override not used: the common model describes the key
        self.extra(key, "CLASS", f"The {what} class.", group, required=required)
        name = self.values.get(key, "").strip()
        if not name:
            if required:
                self.result.add(key, "is required and has no default")
            return
        try:
            cls = resolve(name)
        except ValueError as exc:
            self.result.add(key, str(exc))
            return
        model = getattr(cls, "config_model", None)
        if isinstance(model, type) and issubclass(model, BaseModel) and model is not PluginConfig:
            prefix = key.removesuffix("type") if key.endswith(".type") else key + "."
            self.model(model, prefix, group, whole_key=key)

    def extra(
        self,
        key: str,
        kind: str,
        doc: str,
        group: str,
        *,
        required: bool = False,
        default: str | None = None,
    ) -> None:
        """A key no model declares (``transforms.<a>.type`` and the like)."""
        definition = _definition(
            key, kind, required, default, "HIGH" if required else "LOW", doc, group,
            "LONG" if kind == "CLASS" else "SHORT", key, [],
        )
        self._entry((definition, []))

    def _entry(self, described: tuple[dict[str, Any], list[str]]) -> None:
        definition, recommended = described
        key = definition["name"]
        if key in self.seen:
            return
        self.seen.add(key)
        group = definition["group"]
        self.order[group] = definition["order"] = self.order.get(group, 0) + 1
        raw = self.shown.get(key)
        if raw is None:
            raw = definition["default_value"]
        elif definition["type"] == "PASSWORD" or is_secret_key(key):
            raw = HIDDEN
        elif isinstance(raw, str):
            raw = hide_url_passwords(raw)
        self.result.configs.append({
            "definition": definition,
            "value": {"name": key, "value": raw, "recommended_values": recommended,
                      "errors": [], "visible": True},
        })


# ----------------------------------------------------------------- definitions


def plugin_config_definition(cls: type) -> list[dict[str, Any]]:
    """``GET /connector-plugins/{p}/config``: the definitions of a plugin's own keys."""
    model = getattr(cls, "config_model", PluginConfig)
    definitions = []
    for order, (name, info) in enumerate(model.model_fields.items(), start=1):
        definition, _ = describe_field("", name, info, cls.__name__, order)
        definitions.append(definition)
    return definitions


def describe_field(
    prefix: str, name: str, info: FieldInfo, group: str, order: int
) -> tuple[dict[str, Any], list[str]]:
    """A pydantic field as Kafka's config definition, and its recommended values."""
    extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
    key = prefix + (info.alias or name)
    kind, recommended = _kafka_type(info.annotation, key)
    required = info.is_required()
    default = None if required else _default_text(info.get_default(call_default_factory=True))
    return (
        _definition(
            key,
            str(extra.get("type", kind)),
            required,
            default,
            str(extra.get("importance", "HIGH" if required else "MEDIUM")),
            info.description or "",
            str(extra.get("group", group)),
            str(extra.get("width", "NONE")),
            str(extra.get("display_name", info.title or key)),
            [],
            order,
        ),
        recommended,
    )


def _definition(
    key: str,
    kind: str,
    required: bool,
    default: str | None,
    importance: str,
    doc: str,
    group: str,
    width: str,
    display_name: str,
    dependents: list[str],
    order: int = 0,
) -> dict[str, Any]:
    return {
        "name": key,
        "type": kind,
        "required": required,
        "default_value": default,
        "importance": importance,
        "documentation": doc,
        "group": group,
        "width": width,
        "display_name": display_name,
        "dependents": dependents,
        "order": order,
    }


def _kafka_type(annotation: Any, key: str) -> tuple[str, list[str]]:
    """Kafka's ConfigDef type name of an annotation, and Literal choices."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _kafka_type(inner[0], key) if inner else ("STRING", [])
    if origin is typing.Annotated:
        return _kafka_type(typing.get_args(annotation)[0], key)
    if origin is Literal:
        return "STRING", [str(a) for a in typing.get_args(annotation)]
    if origin in (list, tuple, set):
        return "LIST", []
    simple = {bool: "BOOLEAN", float: "DOUBLE", SecretStr: "PASSWORD", str: "STRING",
              Path: "STRING"}
    if annotation is int:
        return ("LONG" if key.endswith(".ms") else "INT"), []
    return simple.get(annotation, "STRING"), []


def _default_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple | set):
        return ",".join(str(v) for v in value)
    if isinstance(value, SecretStr):
        return HIDDEN
    return str(value)
