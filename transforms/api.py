"""The single-message-transform API: Transformation and Predicate.

A transform is configured once per connector with its own options (the
``transforms.<alias>.`` prefix stripped) and then applied to each record in
the task's thread::

    configure(props) -> apply(record) ... apply(record) -> close()

``apply`` returns a new record, the same record, or ``None`` to drop it
(Filter). Raise ``connectors.api.DataError`` for a record the transform cannot
handle (errors.tolerance then decides). Every transform accepts ``predicate``
and ``negate``; the worker evaluates those, the transform never sees them.
Transforms know nothing about connectors; they import only ``connectors.api``
records, schemas and errors.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import ClassVar

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord


class Transformation(ABC):
    """One single-message transform."""

    config_model: ClassVar[type[PluginConfig]] = PluginConfig
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, props: Mapping[str, str]) -> None:  # noqa: B027
        """Apply this transform's options."""

    @abstractmethod
    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        """Transform one record; ``None`` drops it."""

    def close(self) -> None:  # noqa: B027
        """Release resources."""


class Predicate(ABC):
    """A condition on a record, used with a transform's ``predicate`` option."""

    config_model: ClassVar[type[PluginConfig]] = PluginConfig
    aliases: ClassVar[tuple[str, ...]] = ()

    def configure(self, props: Mapping[str, str]) -> None:  # noqa: B027
        """Apply this predicate's options."""

    @abstractmethod
    def test(self, record: ConnectRecord) -> bool:
        """Whether the condition holds for ``record``."""

    def close(self) -> None:  # noqa: B027
        """Release resources."""
