"""A connector's single-message transforms, built from its properties.

Kafka Connect's config shape::

    transforms=route,drop
    transforms.route.type=RegexRouter
    transforms.route.regex=(.*)
    transforms.route.replacement=copy-$1
    transforms.drop.type=Filter
    transforms.drop.predicate=isTombstone
    transforms.drop.negate=false
    predicates=isTombstone
    predicates.isTombstone.type=RecordIsTombstone

Each transform gets its options with the ``transforms.<alias>.`` prefix
stripped and without ``type``, ``predicate`` and ``negate``, which the chain
evaluates itself: a guarded transform runs only on records for which the
predicate holds (or does not hold, with ``negate=true``). Predicates are
configured once and shared by the transforms naming them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from connect_worker.connector_config import predicate_specs, transform_specs
from connectors.api import ConfigError, ConnectRecord
from transforms.api import Predicate, Transformation

R = TypeVar("R", bound=ConnectRecord)


class TransformLookup(Protocol):
    """The part of the plugin registry the chain needs."""

    def transform_class(self, name: str) -> type[Transformation]: ...

    def predicate_class(self, name: str) -> type[Predicate]: ...


@dataclass(frozen=True, slots=True)
class _Step:
    alias: str
    transform: Transformation
    predicate: Predicate | None
    negate: bool


class TransformChain:
    """The ordered transforms of one task; ``apply`` runs them on one record.

    Lifecycle: :meth:`from_props` (instantiates and configures every transform
    and predicate; ConfigError names the faulty key) -> ``apply`` per record
    in the task's thread -> :meth:`close`. An empty chain is falsy, so a
    runner can skip it entirely.
    """

    def __init__(self, steps: list[_Step], predicates: list[Predicate]) -> None:
        self._steps = tuple(steps)
        self._predicates = predicates

    @classmethod
    def from_props(cls, props: Mapping[str, str], registry: TransformLookup) -> TransformChain:
        """Build the chain declared by ``transforms``/``predicates`` in ``props``."""
        predicates: dict[str, Predicate] = {}
        steps: list[_Step] = []
        try:
            for pspec in predicate_specs(props):
                predicates[pspec.alias] = _configured(
                    f"predicates.{pspec.alias}", pspec.type, pspec.props, registry.predicate_class
                )
            for tspec in transform_specs(props):
                transform = _configured(
                    f"transforms.{tspec.alias}", tspec.type, tspec.props, registry.transform_class
                )
                predicate = predicates.get(tspec.predicate) if tspec.predicate else None
                steps.append(_Step(tspec.alias, transform, predicate, tspec.negate))
        except BaseException:
            for step in steps:
                step.transform.close()
            for predicate in predicates.values():
                predicate.close()
            raise
        return cls(steps, list(predicates.values()))

    def __bool__(self) -> bool:
        return bool(self._steps)

    def __len__(self) -> int:
        return len(self._steps)

    @property
    def aliases(self) -> tuple[str, ...]:
        return tuple(step.alias for step in self._steps)

    def apply(self, record: R) -> R | None:
        """The transformed record, or None when a transform dropped it."""
        current: ConnectRecord = record
        for step in self._steps:
            if step.predicate is not None and step.predicate.test(current) == step.negate:
                continue
            transformed = step.transform.apply(current)
            if transformed is None:
                return None
            current = transformed
        return current  # type: ignore[return-value]  # transforms keep the record's class

    def close(self) -> None:
        """Close every transform and predicate (errors are the plugins' to log)."""
        for step in self._steps:
            step.transform.close()
        for predicate in self._predicates:
            predicate.close()


def _configured(where: str, type_name: str, options: dict[str, str], lookup: Any) -> Any:
    """Instantiate ``type_name`` through ``lookup`` and configure it with ``options``."""
    try:
        plugin = lookup(type_name)()
    except ValueError as exc:  # UnknownPluginError
        raise ConfigError(f"{where}.type: {exc}") from None
    try:
        plugin.configure(options)
    except ConfigError as exc:
        plugin.close()
        raise ConfigError(prefixed(where, str(exc))) from exc
    except BaseException:
        plugin.close()
        raise
    return plugin


_KEYED_PROBLEM = re.compile(r"^([\w.$-]+): ")
_PROBLEM_SPLIT = re.compile(r"; (?=[\w.$-]+: )")


def prefixed(where: str, message: str) -> str:
    """A plugin's ``key: problem; ...`` message with each key under ``where``.

    ``spec: unknown type`` from transform ``t`` reads ``transforms.t.spec: unknown
    type``; a problem of the whole config (``config: ...`` or no key) goes under
    ``where`` itself.
    """
    lines = []
    for problem in _PROBLEM_SPLIT.split(message):
        match = _KEYED_PROBLEM.match(problem)
        if match is None:
            lines.append(f"{where}: {problem}")
        elif match.group(1) == "config":
            lines.append(f"{where}: {problem[match.end():]}")
        else:
            lines.append(f"{where}.{problem}")
    return "; ".join(lines)
