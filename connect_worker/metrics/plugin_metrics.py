"""The runtime's side of ``connectors.api.metrics``: one task's plugin metrics.

:class:`PluginMetrics` is the handle a task context hands out; it keeps each
registered family (namespace, name, kind, description, label names) and its
series (label values -> value). :mod:`.collector` renders them as
``<namespace>_<name>`` (``sluice_plugin_<name>`` by default) with the task's
``connector`` and ``task`` labels.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from connectors.api.metrics import DEFAULT_NAMESPACE

NAME = re.compile(r"[a-z_][a-z0-9_]*")
#: Labels the runtime sets itself; a plugin cannot use them.
RESERVED_LABELS = frozenset({"connector", "task"})
#: Prefixes of the worker's own metric names: a plugin's namespace may not start with them.
RESERVED_NAMESPACES = ("kafka_", "sluice_", "process_", "python_")

Kind = Literal["counter", "gauge"]


class _Value:
    """One series: a float a plugin adds to or sets."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount

    def dec(self, amount: float = 1.0) -> None:
        self.value -= amount

    def set(self, value: float) -> None:
        self.value = float(value)


class _CounterValue(_Value):
    __slots__ = ()

    def inc(self, amount: float = 1.0) -> None:
        if amount < 0:
            raise ValueError(f"a counter only goes up; inc({amount}) refused")
        self.value += amount


@dataclass
class PluginFamily:
    """One registered metric name and its series."""

    name: str
    kind: Kind
    description: str
    label_names: tuple[str, ...]
    series: dict[tuple[str, ...], _Value] = field(default_factory=dict)
    namespace: str = DEFAULT_NAMESPACE

    @property
    def full_name(self) -> str:
        """The name served: ``<namespace>_<name>`` (a counter's ``_total`` comes later)."""
        return f"{self.namespace}_{self.name}"


class PluginMetrics:
    """A task's :class:`connectors.api.metrics.TaskMetrics` (see the module doc)."""

    def __init__(self, connector: str, task: int) -> None:
        self.connector = connector
        self.task = task
        self._lock = threading.Lock()
        self._families: dict[str, PluginFamily] = {}

    def counter(
        self,
        name: str,
        description: str,
        labels: Mapping[str, str] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
    ) -> _CounterValue:
        value = self._series(namespace, name, "counter", description, labels)
        assert isinstance(value, _CounterValue)
        return value

    def gauge(
        self,
        name: str,
        description: str,
        labels: Mapping[str, str] | None = None,
        *,
        namespace: str = DEFAULT_NAMESPACE,
    ) -> _Value:
        return self._series(namespace, name, "gauge", description, labels)

    def families(self) -> list[PluginFamily]:
        with self._lock:
            return list(self._families.values())

    def _series(
        self,
        namespace: str,
        name: str,
        kind: Kind,
        description: str,
        labels: Mapping[str, str] | None,
    ) -> _Value:
        if not NAME.fullmatch(name):
            raise ValueError(f"metric name {name!r}: use lower case letters, digits and _")
        if not NAME.fullmatch(namespace) or (
            namespace != DEFAULT_NAMESPACE and namespace.startswith(RESERVED_NAMESPACES)
        ):
            raise ValueError(
                f"metric {name!r}: namespace {namespace!r} is not allowed (lower case letters, "
                f"digits and _, not starting with {', '.join(RESERVED_NAMESPACES)})"
            )
        labels = dict(labels or {})
        for label in labels:
            if not NAME.fullmatch(label) or label in RESERVED_LABELS:
                raise ValueError(
                    f"metric {name!r}: label {label!r} is not allowed "
                    f"(names as metric names; not {', '.join(sorted(RESERVED_LABELS))})"
                )
        label_names = tuple(sorted(labels))
        full_name = f"{namespace}_{name}"
        with self._lock:
            family = self._families.get(full_name)
            if family is None:
                family = self._families[full_name] = PluginFamily(
                    name, kind, description, label_names, namespace=namespace
                )
            elif family.kind != kind or family.label_names != label_names:
                raise ValueError(
                    f"metric {full_name!r} is already a {family.kind} with labels "
                    f"{list(family.label_names)}; cannot register it as a {kind} with "
                    f"labels {list(label_names)}"
                )
            key = tuple(str(labels[n]) for n in label_names)
            value = family.series.get(key)
            if value is None:
                value = family.series[key] = _CounterValue() if kind == "counter" else _Value()
            return value
