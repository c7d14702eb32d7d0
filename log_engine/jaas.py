"""Parse a ``sasl.jaas.config`` value as Kafka writes it.

``org.apache.kafka.common.security.plain.PlainLoginModule required
username="admin" password="admin-secret" user_alice="alice-secret";`` gives the
login module name, its control flag and its options (values quoted or bare).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;"]+)')
_HEAD = re.compile(r"\s*([A-Za-z0-9_.$]+)\s+(required|requisite|sufficient|optional)\b")


class JaasConfigError(ValueError):
    """A ``sasl.jaas.config`` value that cannot be parsed (the message never holds it)."""


@dataclass(frozen=True)
class JaasEntry:
    """One login module entry: class name, control flag and options."""

    login_module: str
    flag: str
    options: dict[str, str] = field(default_factory=dict)

    def users(self) -> dict[str, str]:
        """PlainLoginModule's ``user_<name>="<password>"`` options."""
        return {k[5:]: v for k, v in self.options.items() if k.startswith("user_") and k[5:]}


def parse_jaas(text: str, key: str = "sasl.jaas.config") -> JaasEntry:
    """Parse one entry; errors name the key and position, never the value."""
    head = _HEAD.match(text)
    if head is None:
        raise JaasConfigError(
            f"{key}: expected '<LoginModule class> required key=value ...;'"
        )
    options: dict[str, str] = {}
    position = head.end()
    while True:
        match = _OPTION.match(text, position)
        if match is None:
            break
        value = match.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        options[match.group(1)] = value
        position = match.end()
    rest = text[position:].strip()
    if rest not in (";", ""):
        raise JaasConfigError(f"{key}: cannot parse after character {position} (missing quote?)")
    return JaasEntry(head.group(1), head.group(2), options)
