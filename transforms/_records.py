"""Cheap copies of records with one or two attributes changed.

``ConnectRecord.replace`` goes through :func:`dataclasses.replace`, which costs
about 2 us for a ten-field frozen record: the whole per-transform budget. The
copiers here fill a new instance directly through its slot descriptors (a
frozen dataclass only forbids ``setattr`` on the instance; its slots are plain
storage), in a function generated once per record class and set of changed
attributes, the way :mod:`dataclasses` generates ``__init__``: about 0.6 us.
A class that is not a slotted dataclass without ``__post_init__`` falls back
to ``replace``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

from connectors.api.records import ConnectRecord

R = TypeVar("R", bound=ConnectRecord)
Copier = Callable[..., Any]  # (record, *new values) -> record


def _compile(cls: type, changed: tuple[str, ...]) -> Copier:
    """A function ``(record, *values)`` returning a copy with ``changed`` set to ``values``."""
    if (
        not dataclasses.is_dataclass(cls)
        or hasattr(cls, "__post_init__")
        or cls.__dictoffset__ != 0  # type: ignore[attr-defined]  # instances have a __dict__
    ):
        return _fallback(changed)
    slots: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        for name in klass.__dict__.get("__slots__", ()):
            slots[name] = klass.__dict__[name]
    names = [f.name for f in dataclasses.fields(cls)]
    if not all(name in slots for name in names) or not set(changed) <= set(names):
        return _fallback(changed)
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    lines = [f"def copy(record, {', '.join('new_' + n for n in changed)}):", "    new = _new(_cls)"]
    for name in names:  # dataclass field names are identifiers: safe to splice
        namespace["set_" + name] = slots[name].__set__
        source = "new_" + name if name in changed else "record." + name
        lines.append(f"    set_{name}(new, {source})")
    lines.append("    return new")
    exec("\n".join(lines), namespace)  # the source holds field names only
    copier: Copier = namespace["copy"]
    return copier


def _fallback(changed: tuple[str, ...]) -> Copier:
    def copy(record: ConnectRecord, *values: Any) -> ConnectRecord:
        return record.replace(**dict(zip(changed, values, strict=True)))

    return copy


class _Copiers(dict[type, Copier]):
    """Copiers for one set of changed attributes, by record class."""

    def __init__(self, *changed: str) -> None:
        super().__init__()
        self.changed = changed

    def __missing__(self, cls: type) -> Copier:
        copier = self[cls] = _compile(cls, self.changed)
        return copier


_VALUE = _Copiers("value", "value_schema")
_KEY = _Copiers("key", "key_schema")
_TOPIC = _Copiers("topic")
_by_changes: dict[tuple[str, ...], _Copiers] = {}


def with_value(record: R, value: Any, schema: Any) -> R:
    """``record`` with a new value and value schema."""
    return _VALUE[type(record)](record, value, schema)  # type: ignore[no-any-return]


def with_key(record: R, key: Any, schema: Any) -> R:
    """``record`` with a new key and key schema."""
    return _KEY[type(record)](record, key, schema)  # type: ignore[no-any-return]


def with_topic(record: R, topic: str) -> R:
    """``record`` sent to another topic."""
    return _TOPIC[type(record)](record, topic)  # type: ignore[no-any-return]


def with_changes(record: R, changed: tuple[str, ...], values: tuple[Any, ...]) -> R:
    """``record`` with the attributes named in ``changed`` set to ``values``."""
    copiers = _by_changes.get(changed)
    if copiers is None:
        copiers = _by_changes[changed] = _Copiers(*changed)
    return copiers[type(record)](record, *values)  # type: ignore[no-any-return]
