"""Config vocabulary shared by the transforms: Kafka-style lists, errors, names.

Kafka's ``LIST`` options are comma-separated strings whose items are trimmed
(``"a, b"`` is ``["a", "b"]``; an empty string is an empty list). Validators
raise :func:`invalid` so that messages read as written (pydantic would prefix
a plain ValueError with "Value error, ").
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator
from pydantic_core import PydanticCustomError

KAFKA_TRANSFORMS = "org.apache.kafka.connect.transforms."
KAFKA_PREDICATES = "org.apache.kafka.connect.transforms.predicates."


def kafka_names(short: str, package: str = KAFKA_TRANSFORMS) -> tuple[str, str]:
    """A Kafka plugin's class name and its short form, as a class's ``aliases``."""
    return (package + short, short)


def invalid(message: str) -> PydanticCustomError:
    """A validation error whose message is shown as is."""
    return PydanticCustomError("invalid_option", message)


def split_list(raw: Any) -> Any:
    """Kafka's list syntax: ``"a, b,c"`` -> ``("a", "b", "c")``; empty items dropped."""
    if raw is None:
        return ()
    if isinstance(raw, str):
        return tuple(item.strip() for item in raw.split(",") if item.strip())
    return raw


#: A comma-separated list option.
CommaList = Annotated[tuple[str, ...], BeforeValidator(split_list)]


_JAVA_NAMED_GROUP = re.compile(r"(?<!\\)\(\?<(?=[A-Za-z])")


def compile_regex(pattern: str) -> re.Pattern[str]:
    """Compile a Java regex (``(?<name>...)`` groups become Python's ``(?P<name>...)``).

    Raises :func:`invalid` if it does not compile.
    """
    try:
        return re.compile(_JAVA_NAMED_GROUP.sub("(?P<", pattern))
    except re.error as exc:
        raise invalid(f"not a valid regular expression ({exc})") from None


def parse_pairs(items: tuple[str, ...], what: str) -> tuple[tuple[str, str], ...]:
    """``("a:b", "c:d")`` -> ``(("a", "b"), ("c", "d"))``, as Kafka's ``renames``/``spec``."""
    pairs = []
    for item in items:
        left, sep, right = item.partition(":")
        if not sep or not left.strip() or not right.strip():
            raise invalid(f"{item!r} is not a {what} (expected 'name:value')")
        pairs.append((left.strip(), right.strip()))
    return tuple(pairs)
