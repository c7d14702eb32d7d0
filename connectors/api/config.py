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

import re
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError
from pydantic_core import ErrorDetails

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

    model_config = ConfigDict(
        populate_by_name=True, extra="ignore", frozen=True, hide_input_in_errors=True
    )  # a rejected config may hold passwords: errors never echo its values

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
    fields = {info.alias or name: info for name, info in model.model_fields.items()}
    fields |= {name: info for name, info in model.model_fields.items()}
    lines = []
    for error in exc.errors():
        loc = [str(p) for p in error["loc"]]
        secret = False
        if loc and loc[0] in fields:
            secret = is_secret_annotation(fields[loc[0]].annotation)
            loc[0] = fields[loc[0]].alias or loc[0]
        where = ".".join(loc) or "config"
        lines.append(f"{where}: {error_problem(error, secret=secret or is_secret_key(where))}")
    return lines


#: How a secret's value is shown in messages and configs leaving the worker.
HIDDEN = "[hidden]"
#: Keys whose values are secrets whatever the plugin declares: the names say so, or
#: Kafka types them PASSWORD (``ssl.keystore.key`` and the PEM stores' text, with
#: librdkafka's names ``ssl.key.pem``/``ssl.certificate.pem``, ``basic.auth.user.info``
#: of the schema registry clients), under any prefix.
SECRET_KEY = re.compile(
    r"password|passwd|secret|credential|jaas\.config|api[._-]?key|private[._-]?key"
    r"|(^|[._-])token($|[._-])|keystore\.key$|keystore\.certificate\.chain$"
    r"|truststore\.certificates$|user\.info$|ssl\.key\.pem$|ssl\.certificate\.pem$",
    re.IGNORECASE,
)
#: The password of a URL's ``user:password@`` part (group 2), in any text.
URL_PASSWORD = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@\[\]]*:)([^/\s@]+)(@)")
#: A bad value quoted in an error message is cut to this many characters.
SHOWN_VALUE_MAX_CHARS = 80


def error_problem(error: ErrorDetails, *, secret: bool = False) -> str:
    """One pydantic error as the problem of its key: pydantic's words and the value given.

    ``tasks.max=abc`` gives ``Input should be a valid integer, unable to parse
    string as an integer (got 'abc')``. A ``secret`` key's value shows as
    ``[hidden]``. Model-level (cross-field) errors have no single value: their
    message names the keys.
    """
    if error["type"] == "missing":
        return "is required and has no default"
    message = str(error["msg"]).removeprefix("Value error, ")
    if not error["loc"] or "input" not in error:
        return message
    return f"{message} (got {_shown_value(error['input'], secret)})"


def hide_url_passwords(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@`` replaced by
    ``[hidden]`` (a JDBC or broker URL in a config, a message or a trace)."""
    return URL_PASSWORD.sub(lambda m: m.group(1) + HIDDEN + m.group(3), text)


def _shown_value(value: Any, secret: bool) -> str:
    if secret:
        return HIDDEN
    shown = hide_url_passwords(repr(value))
    if len(shown) > SHOWN_VALUE_MAX_CHARS:
        shown = shown[: SHOWN_VALUE_MAX_CHARS - 3] + "..."
    return shown


def is_secret_key(key: str) -> bool:
    """Whether ``key``'s name says it holds a secret (password, secret, token...)."""
    return SECRET_KEY.search(key) is not None


def is_secret_annotation(annotation: Any) -> bool:
    """Whether a field's type is ``SecretStr`` (or optional ``SecretStr``)."""
    if annotation is SecretStr:
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType, typing.Annotated):
        return any(is_secret_annotation(arg) for arg in typing.get_args(annotation))
    return False
