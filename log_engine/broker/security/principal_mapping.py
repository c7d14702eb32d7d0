"""``ssl.principal.mapping.rules``: from a client certificate's subject to a principal name.

Kafka's syntax, a list of rules separated by commas (or new lines), tried in
order; the first that applies gives the name:

- ``RULE:<pattern>/<replacement>/[L|U]`` applies when the Java-style regular
  expression ``pattern`` matches the whole subject (RFC 2253, most specific
  part first: ``CN=alice,OU=eng,O=Example,C=DE``); the subject is then
  rewritten with ``replacement`` (``$1`` names a group, ``\\x`` a literal ``x``),
  and ``L``/``U`` turn the result to lower or upper case. ``/`` and ``\\`` inside
  the pattern or replacement are escaped with ``\\``.
- ``DEFAULT`` gives the subject unchanged.

Unset means ``DEFAULT``. A subject no rule applies to is refused (Kafka fails
the authentication). A malformed rule list is a :class:`PrincipalRulesError`
at start-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RULE = re.compile(
    r"\s*(?:(?P<default>DEFAULT)"
    r"|RULE:(?P<pattern>(?:\\.|[^\\/])*)/(?P<replacement>(?:\\.|[^\\/])*)/(?P<case>[LU]?))"
    r"\s*(?:[,\n]|$)"
)
_EMPTY = re.compile(r"\s*[,\n]")
_BACKREF = re.compile(r"\$(\d+)|\\(.)", re.DOTALL)


class PrincipalRulesError(ValueError):
    """``ssl.principal.mapping.rules`` cannot be parsed."""


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str] | None  # None: DEFAULT
    replacement: str = ""
    case: str = ""

    def apply(self, subject: str) -> str | None:
        if self.pattern is None:
            return subject
        if self.pattern.fullmatch(subject) is None:
            return None
        result = self.pattern.sub(self._expand, subject)
        if self.case == "L":
            return result.lower()
        if self.case == "U":
            return result.upper()
        return result

    def _expand(self, match: re.Match[str]) -> str:
        """Java's replacement syntax: ``$n`` a group (digits beyond the group count
        are literal, as Kafka reads them), ``\\x`` a literal ``x``."""
        groups = self.pattern.groups if self.pattern is not None else 0

        def one(ref: re.Match[str]) -> str:
            if ref.group(2) is not None:
                return ref.group(2)
            digits = ref.group(1)
            for end in range(len(digits), 0, -1):
                index = int(digits[:end])
                if index <= groups:
                    return (match.group(index) or "") + digits[end:]
            return ref.group(0)

        return _BACKREF.sub(one, self.replacement)


class PrincipalMapper:
    """The parsed rules; :meth:`name` maps a subject or returns ``None`` (no rule applies)."""

    def __init__(self, rules: str | None) -> None:
        self.text = (rules or "").strip() or "DEFAULT"
        self._rules = _parse(self.text)

    @property
    def is_default(self) -> bool:
        return self.text == "DEFAULT"

    def name(self, subject: str) -> str | None:
        for rule in self._rules:
            result = rule.apply(subject)
            if result is not None:
                return result
        return None


def _parse(text: str) -> list[_Rule]:
    rules: list[_Rule] = []
    position = 0
    while position < len(text):
        empty = _EMPTY.match(text, position)  # an empty entry (``a,,b``) is skipped, as Kafka does
        if empty is not None:
            position = empty.end()
            continue
        match = _RULE.match(text, position)
        if match is None or match.end() == position:
            rest = text[position:].strip()
            raise PrincipalRulesError(
                f"ssl.principal.mapping.rules: cannot parse {rest!r} (expected "
                "RULE:<pattern>/<replacement>/[L|U] or DEFAULT, separated by commas)"
            )
        position = match.end()
        if match.group("default"):
            rules.append(_Rule(None))
            continue
        try:
            pattern = re.compile(match.group("pattern"))
        except re.error as exc:
            raise PrincipalRulesError(
                f"ssl.principal.mapping.rules: bad pattern {match.group('pattern')!r}: {exc}"
            ) from None
        rules.append(_Rule(pattern, match.group("replacement"), match.group("case")))
    return rules
