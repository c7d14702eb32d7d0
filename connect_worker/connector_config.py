"""The keys every connector accepts, declared once (Kafka Connect's names).

:class:`CommonConnectorConfig` holds what every connector config has (``name``,
``connector.class``, ``tasks.max``, converter overrides, ``transforms``,
``predicates``, ``errors.*``); :class:`SinkConnectorConfig` adds ``topics`` /
``topics.regex`` (exactly one). Each field's ``json_schema_extra`` carries what
Kafka's validate response shows besides type and doc (group, importance, width,
Kafka type), so :mod:`connect_worker.validation` and the docs come from here.

Also here: the transform/predicate sub-configs (``transforms.<alias>.*``) and
:func:`mask_secrets`, which hides every secret before a config leaves the worker.
"""

from __future__ import annotations

import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal, Self

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    ValidationError,
    model_validator,
)
from pydantic_core import PydanticCustomError

from connect_worker.security.redaction import SECRETS
from connectors.api import ConfigError, PluginConfig, key_info
from connectors.api.config import (
    HIDDEN,
    URL_PASSWORD,
    error_problem,
    hide_url_passwords,
    is_secret_annotation,
    is_secret_key,
)

if TYPE_CHECKING:
    from connect_worker.plugins import PluginRegistry

_WHOLE_REFERENCE = re.compile(r"\$\{[^}]*\}")
#: Longest connector name: tasks put the name into client ids, which Kafka limits to 255.
MAX_NAME_CHARS = 249


def connector_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a connector, or None if it can.

    The one check every path that creates a connector uses (REST, pipeline
    files, ``sluice connectors create``). A name is 1 to 249 characters
    (tasks put it into client ids, which Kafka limits to 255), not only
    whitespace and without surrounding whitespace (Kafka Connect trims names),
    with no ``/`` or ``\\`` (a REST path could not reach it), no ISO control
    character (Kafka Connect refuses them) and is not ``.`` or ``..``.
    """
    rule = (
        "connector names are 1 to 249 characters, not only whitespace, without "
        "surrounding whitespace, '/', '\\' or control characters, and not '.' or '..'"
    )
    shown = repr(name[:60]) + ("..." if len(name) > 60 else "")
    if not name.strip():
        reason = "it is empty or only whitespace"
    elif len(name) > MAX_NAME_CHARS:
        reason = f"it is {len(name)} characters long"
    elif name != name.strip():
        reason = "it has surrounding whitespace"
    elif "/" in name or "\\" in name:
        reason = "it contains '/' or '\\'"
    elif any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in name):
        reason = "it contains a control character"
    elif name in (".", ".."):
        reason = "it is '.' or '..'"
    else:
        return None
    return f"Invalid connector name {shown}: {reason}; {rule}"


def comma_list(text: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``."""
    return [item.strip() for item in (text or "").split(",") if item.strip()]


def split_commas(value: object) -> object:
    """Before-validator of comma-list fields: strings are split, lists pass through."""
    return comma_list(value) if isinstance(value, str) else value


CommaList = Annotated[list[str], BeforeValidator(split_commas)]


def cross_field_error(message: str, *keys: str) -> PydanticCustomError:
    """A model-validator error attached to ``keys`` (validation reports it under each)."""
    return PydanticCustomError("config_keys", message, {"keys": list(keys)})


def field_errors(exc: ValidationError, model: type[BaseModel]) -> dict[str, list[str]]:
    """Validation errors per user-facing key (aliases), readable.

    A model validator's :func:`cross_field_error` goes under each key it names;
    any other model-level error under the model keys its message mentions,
    else under ``""``.
    """
    aliases = {name: info.alias or name for name, info in model.model_fields.items()}
    secrets = secret_keys(model)
    errors: dict[str, list[str]] = {}
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        key = aliases.get(loc[0], loc[0]) if loc else ""
        message = error_problem(error, secret=key in secrets or is_secret_key(key))
        if loc:
            keys = [".".join([aliases.get(loc[0], loc[0]), *loc[1:]])]
        elif error["type"] == "config_keys":
            keys = list((error.get("ctx") or {}).get("keys") or [""])
        else:
            keys = [k for k in aliases.values() if re.search(rf"\b{re.escape(k)}\b", message)]
            keys = keys or [""]
        for key in keys:
            errors.setdefault(key, []).append(message)
    return errors


def raise_config_error(exc: ValidationError, model: type[BaseModel]) -> typing.NoReturn:
    """Re-raise a pydantic ValidationError as one ConfigError, ``key: problem; ...``."""
    lines = [
        f"{key}: {problem}" if key else problem
        for key, problems in field_errors(exc, model).items()
        for problem in problems
    ]
    raise ConfigError("; ".join(lines)) from None


class CommonConnectorConfig(PluginConfig):
    """Keys every connector config has, with Kafka Connect's names and defaults."""

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> Self:
        """Validate string properties; ConfigError names each bad key."""
        try:
            return cls.model_validate(dict(props))
        except ValidationError as exc:
            raise_config_error(exc, cls)

    name: str = Field(
        alias="name",
        min_length=1,
        description="Globally unique name of the connector.",
        json_schema_extra=key_info("HIGH", "MEDIUM", group="Common", display_name="Connector name"),
    )
    connector_class: str = Field(
        alias="connector.class",
        min_length=1,
        description="The connector's class: a short alias (FileStreamSource), a dotted Python "
        "path, or Kafka's class name (org.apache.kafka.connect.file.FileStreamSourceConnector).",
        json_schema_extra=key_info(
            "HIGH", "LONG", group="Common", type="CLASS", display_name="Class"
        ),
    )
    tasks_max: int = Field(
        1,
        alias="tasks.max",
        ge=1,
        description="Maximum number of tasks to use for this connector.",
        json_schema_extra=key_info("HIGH", "SHORT", group="Common", display_name="Tasks max"),
    )
    key_converter: str | None = Field(
        None,
        alias="key.converter",
        description="Converter for record keys, overriding the worker's key.converter.",
        json_schema_extra=key_info("LOW", "SHORT", group="Common", type="CLASS"),
    )
    value_converter: str | None = Field(
        None,
        alias="value.converter",
        description="Converter for record values, overriding the worker's value.converter.",
        json_schema_extra=key_info("LOW", "SHORT", group="Common", type="CLASS"),
    )
    header_converter: str | None = Field(
        None,
        alias="header.converter",
        description="Converter for record headers, overriding the worker's header.converter.",
        json_schema_extra=key_info("LOW", "SHORT", group="Common", type="CLASS"),
    )
    transforms: CommaList = Field(
        default_factory=list,
        alias="transforms",
        description="Aliases of the transformations to apply to records, in order.",
        json_schema_extra=key_info("LOW", "LONG", group="Transforms"),
    )
    predicates: CommaList = Field(
        default_factory=list,
        alias="predicates",
        description="Aliases of the predicates the transformations use.",
        json_schema_extra=key_info("LOW", "LONG", group="Predicates"),
    )
    errors_retry_timeout: int = Field(
        0,
        alias="errors.retry.timeout",
        ge=-1,
        description="Total time in ms to retry a failed operation (0: no retries, -1: forever).",
        json_schema_extra=key_info(group="Error Handling", type="LONG"),
    )
    errors_retry_delay_max_ms: int = Field(
        60000,
        alias="errors.retry.delay.max.ms",
        ge=1,
        description="Maximum delay in ms between consecutive retries of a failed operation.",
        json_schema_extra=key_info(group="Error Handling", type="LONG"),
    )
    errors_tolerance: Literal["none", "all"] = Field(
        "none",
        alias="errors.tolerance",
        description="none: a bad record fails the task; all: skip bad records (and log or "
        "dead-letter them).",
        json_schema_extra=key_info("MEDIUM", "SHORT", group="Error Handling"),
    )
    errors_log_enable: bool = Field(
        False,
        alias="errors.log.enable",
        description="Log each failed operation and problem record.",
        json_schema_extra=key_info("MEDIUM", "SHORT", group="Error Handling"),
    )
    errors_log_include_messages: bool = Field(
        False,
        alias="errors.log.include.messages",
        description="Include the record (topic, partition, offset, key, value) in error logs.",
        json_schema_extra=key_info("MEDIUM", "SHORT", group="Error Handling"),
    )
    errors_deadletterqueue_topic_name: str = Field(
        "",
        alias="errors.deadletterqueue.topic.name",
        description="Topic that receives records that failed (with errors.tolerance=all); "
        "empty: no dead-letter queue.",
        json_schema_extra=key_info("MEDIUM", "MEDIUM", group="Error Handling"),
    )
    errors_deadletterqueue_topic_replication_factor: int = Field(
        -1,
        alias="errors.deadletterqueue.topic.replication.factor",
        ge=-1,
        description="Replication factor of the dead-letter topic if it is created; -1 uses "
        "the broker's default.replication.factor (Kafka defaults to 3, which a single "
        "broker cannot satisfy).",
        json_schema_extra=key_info("MEDIUM", "SHORT", group="Error Handling", type="SHORT"),
    )
    errors_deadletterqueue_context_headers_enable: bool = Field(
        False,
        alias="errors.deadletterqueue.context.headers.enable",
        description="Add __connect.errors.* headers describing the failure to dead-lettered "
        "records.",
        json_schema_extra=key_info("MEDIUM", "SHORT", group="Error Handling"),
    )


class SinkConnectorConfig(CommonConnectorConfig):
    """A sink's keys: the common ones plus ``topics`` or ``topics.regex``."""

    topics: CommaList = Field(
        default_factory=list,
        alias="topics",
        description="Topics to consume (comma-separated); set this or topics.regex.",
        json_schema_extra=key_info("HIGH", "LONG", group="Common", type="LIST"),
    )
    topics_regex: str = Field(
        "",
        alias="topics.regex",
        description="Regular expression of the topics to consume; set this or topics.",
        json_schema_extra=key_info("HIGH", "LONG", group="Common"),
    )

    @model_validator(mode="after")
    def _one_topic_source(self) -> Self:
        if self.topics and self.topics_regex:
            raise cross_field_error(
                "set topics or topics.regex, not both", "topics", "topics.regex"
            )
        if not self.topics and not self.topics_regex:
            raise cross_field_error(
                "a sink needs topics or topics.regex", "topics", "topics.regex"
            )
        if self.topics_regex:
            try:
                re.compile(self.topics_regex)
            except re.error as exc:
                raise cross_field_error(f"not a valid regex: {exc}", "topics.regex") from None
        if self.errors_deadletterqueue_topic_name in self.topics:
            raise cross_field_error(
                "the dead-letter topic must not be one of the topics the sink consumes",
                "errors.deadletterqueue.topic.name",
            )
        return self


# ------------------------------------------------------- transforms, predicates


@dataclass(frozen=True, slots=True)
class TransformSpec:
    """One ``transforms.<alias>.*`` group: its type, predicate and own options."""

    alias: str
    type: str
    predicate: str | None
    negate: bool
    props: dict[str, str]  # prefix stripped; without type/predicate/negate


@dataclass(frozen=True, slots=True)
class PredicateSpec:
    """One ``predicates.<alias>.*`` group."""

    alias: str
    type: str
    props: dict[str, str]


def subconfig(props: Mapping[str, str], prefix: str) -> dict[str, str]:
    """The keys under ``prefix`` (e.g. ``transforms.route.``), prefix stripped."""
    return {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}


def transform_specs(props: Mapping[str, str]) -> list[TransformSpec]:
    """The ``transforms`` chain in order; ConfigError names every bad key."""
    predicates = set(comma_list(props.get("predicates")))
    specs, problems = [], []
    for alias in comma_list(props.get("transforms")):
        sub = subconfig(props, f"transforms.{alias}.")
        kind = sub.pop("type", "").strip()
        predicate = sub.pop("predicate", "").strip() or None
        negate_text = sub.pop("negate", "false").strip().lower()
        if not kind:
            problems.append(f"transforms.{alias}.type: is required for transform {alias!r}")
        if predicate is not None and predicate not in predicates:
            problems.append(
                f"transforms.{alias}.predicate: {predicate!r} is not listed in predicates"
            )
        if negate_text not in ("true", "false"):
            problems.append(f"transforms.{alias}.negate: must be true or false")
        specs.append(TransformSpec(alias, kind, predicate, negate_text == "true", sub))
    if problems:
        raise ConfigError("; ".join(problems))
    return specs


def predicate_specs(props: Mapping[str, str]) -> list[PredicateSpec]:
    """The declared ``predicates``; ConfigError names every bad key."""
    specs, problems = [], []
    for alias in comma_list(props.get("predicates")):
        sub = subconfig(props, f"predicates.{alias}.")
        kind = sub.pop("type", "").strip()
        if not kind:
            problems.append(f"predicates.{alias}.type: is required for predicate {alias!r}")
        specs.append(PredicateSpec(alias, kind, sub))
    if problems:
        raise ConfigError("; ".join(problems))
    return specs


# -------------------------------------------------------------------- secrets


def secret_keys(model: type[BaseModel]) -> set[str]:
    """The user-facing keys of ``model``'s fields typed ``SecretStr`` (or optional)."""
    return {
        info.alias or name
        for name, info in model.model_fields.items()
        if is_secret_annotation(info.annotation)
    }


def mask_secrets(props: Mapping[str, str], registry: PluginRegistry | None) -> dict[str, str]:
    """A copy of ``props`` with secrets replaced by ``[hidden]``.

    Secret: a ``SecretStr`` field of the connector's, a transform's or a
    predicate's model (when the registry resolves them), or a key whose name
    says so. A value that is only a config-provider reference (``${file:...}``)
    is not a secret and stays visible. In any other value, the password of a
    ``scheme://user:password@`` URL is hidden (``connection.url``).
    """
    secret = _declared_secrets(props, registry) if registry is not None else set()
    masked = {}
    for key, value in props.items():
        if (key in secret or is_secret_key(key)) and value and not _WHOLE_REFERENCE.fullmatch(
            value
        ):
            masked[key] = HIDDEN
        else:
            masked[key] = hide_url_passwords(value)
    return masked


_JAAS_PASSWORD = re.compile(r'password\s*=\s*"((?:[^"\\]|\\.)*)"|password\s*=\s*([^\s;"]+)')


def remember_secrets(props: Mapping[str, str], registry: PluginRegistry | None) -> None:
    """Tell :data:`~connect_worker.security.redaction.SECRETS` the secret values of
    ``props`` (the keys :func:`mask_secrets` hides, the passwords inside their JAAS
    lines and any URL's password), so that no log line or trace shows them."""
    secret = _declared_secrets(props, registry) if registry is not None else set()
    values = []
    for key, value in props.items():
        if not value:
            continue
        if (key in secret or is_secret_key(key)) and not _WHOLE_REFERENCE.fullmatch(value):
            values.append(value)
            values += [a or b for a, b in _JAAS_PASSWORD.findall(value)]
        values += [m.group(2) for m in URL_PASSWORD.finditer(value)]
    SECRETS.add(values)


def _declared_secrets(props: Mapping[str, str], registry: PluginRegistry) -> set[str]:
    secret: set[str] = set()
    try:
        cls = registry.connector_class(props.get("connector.class", ""))
        secret |= secret_keys(cls.config_model)
    except ValueError:
        pass
    for section, lookup in (
        ("transforms", registry.transform_class),
        ("predicates", registry.predicate_class),
    ):
        for alias in comma_list(props.get(section)):
            try:
                model = lookup(props.get(f"{section}.{alias}.type", "")).config_model
            except ValueError:
                continue
            secret |= {f"{section}.{alias}.{k}" for k in secret_keys(model)}
    return secret
