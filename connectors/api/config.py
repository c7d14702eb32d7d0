"""A plugin's configuration, declared once as a pydantic model.

Subclass :class:`PluginConfig` and declare each key as a field whose alias is
the user-facing dotted name, with a description, a default (or none: required)
and constraints; cross-field rules are model validators. The worker builds
``PUT /connector-plugins/{p}/config/validate``, error messages and docs from
the same model. Passwords are ``pydantic.SecretStr`` and never shown in clear.

::

    class FileSourceConfig(PluginConfig):
        file: str = Field(alias="file", description="The file to read.")
        batch_size: int = Field(
            2000, alias="batch.size", ge=1, description="...",
            json_schema_extra=key_info("LOW", "SHORT"),
        )

    config = FileSourceConfig.from_props({"file": "/tmp/x", "batch.size": "100"})

:func:`key_info` gives a key the hints Kafka's validate response shows besides
its type and doc (importance, width, group, display name).

The full connector properties are passed in; keys the model does not declare
(``name``, ``connector.class``, ``transforms``, ...) are ignored here, because
the worker validates those.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from connectors.api.errors import ConfigError

Importance = Literal["HIGH", "MEDIUM", "LOW"]
Width = Literal["NONE", "SHORT", "MEDIUM", "LONG"]


def key_info(
    importance: Importance = "MEDIUM", width: Width = "NONE", **extra: Any
) -> dict[str, Any]:
    """A field's ``json_schema_extra``: Kafka's ``importance`` and ``width`` of the key,
    and any other hint of its validate definition (``group``, ``display_name``, ...)."""
    return {"importance": importance, "width": width, **extra}


class PluginConfig(BaseModel):
    """Base of every plugin's config model (connectors, converters, transforms)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore", frozen=True)

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> Self:
        """Validate string properties; raise ConfigError naming each bad key."""
        try:
            return cls.model_validate(dict(props))
        except ValidationError as exc:
            raise ConfigError("; ".join(describe_errors(exc, cls))) from None

    @classmethod
    def key_for(cls, field_name: str) -> str:
        """The user-facing key of a field (its alias, else its name)."""
        info = cls.model_fields[field_name]
        return info.alias or field_name


def describe_errors(exc: ValidationError, model: type[BaseModel]) -> list[str]:
    """One ``key: problem`` line per validation error, with user-facing key names."""
    lines = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        if loc and loc[0] in model.model_fields:
            loc[0] = model.model_fields[loc[0]].alias or loc[0]
        where = ".".join(loc) or "config"
        message = error["msg"]
        if error["type"] == "missing":
            message = "is required and has no default"
        lines.append(f"{where}: {message}")
    return lines
