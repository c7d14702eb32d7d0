"""The REST API's users, found as Kafka Connect's BasicAuthSecurityRestExtension finds them.

Connect reads the JVM's JAAS login configuration (the file named by
``-Djava.security.auth.login.config=...``) and uses its ``KafkaConnect``
section, whose ``PropertyFileLoginModule`` names a properties file of
``user: password`` lines::

    KafkaConnect {
      org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
      file="/etc/sluice/rest-users.properties";
    };

:func:`load_rest_users` reads the same files: the JAAS file comes from the
worker key ``rest.basic.auth.jaas.config`` (a path) or, as for Connect, from
``-Djava.security.auth.login.config=PATH`` in ``$KAFKA_OPTS``. Stricter than
Connect, whose empty or missing password file lets everybody in: a missing
section, module, ``file`` option or an empty users file is a start-up error.
Errors name the file, never a password.
"""

from __future__ import annotations

import hmac
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from connect_worker.properties import PropertiesError, load_properties

SECTION = "KafkaConnect"
PROPERTY_FILE_LOGIN_MODULE = (
    "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
)
JVM_PROPERTY = "java.security.auth.login.config"

_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_SECTION = re.compile(r"([A-Za-z0-9_.\-]+)\s*\{(.*?)\}\s*;", re.DOTALL)
_ENTRY_HEAD = re.compile(r"\s*([A-Za-z0-9_.$]+)\s+(required|requisite|sufficient|optional)\b")
_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;"]+)')


class JaasFileError(ValueError):
    """The JAAS file or the users file cannot be used; the message says which and why."""


@dataclass(frozen=True)
class RestUsers:
    """User name -> password, from a PropertyFileLoginModule's file."""

    passwords: Mapping[str, str]
    source: Path

    def check(self, user: str, password: str) -> bool:
        """Whether ``password`` is ``user``'s (compared in constant time)."""
        expected = self.passwords.get(user)
        if expected is None:
            hmac.compare_digest(password.encode(), password.encode())  # same work as a miss
            return False
        return hmac.compare_digest(expected.encode(), password.encode())


def jaas_file_from_env(kafka_opts: str | None) -> Path | None:
    """The path given as ``-Djava.security.auth.login.config=PATH`` in ``KAFKA_OPTS``."""
    try:
        words = shlex.split(kafka_opts or "")
    except ValueError:  # an unbalanced quote: read it as the JVM's launcher splits, on spaces
        words = (kafka_opts or "").split()
    for word in words:
        if word.startswith(f"-D{JVM_PROPERTY}="):
            return Path(word.split("=", 1)[1].removeprefix("="))  # ==PATH: replace, as the JVM
    return None


def load_rest_users(jaas_path: Path) -> RestUsers:
    """Read the JAAS file's ``KafkaConnect`` section and the users file it names."""
    try:
        text = jaas_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise JaasFileError(f"cannot read the JAAS file {jaas_path}: {exc}") from None
    sections = {m.group(1): m.group(2) for m in _SECTION.finditer(_COMMENT.sub("", text))}
    body = sections.get(SECTION)
    if body is None:
        raise JaasFileError(f"{jaas_path}: no {SECTION} {{ ... }}; section")
    users_file = None
    for module, options in _entries(body, jaas_path):
        if module == PROPERTY_FILE_LOGIN_MODULE:
            users_file = options.get("file")
        else:
            raise JaasFileError(
                f"{jaas_path}: login module {module} is not supported "
                f"(only {PROPERTY_FILE_LOGIN_MODULE})"
            )
    if not users_file:
        raise JaasFileError(
            f"{jaas_path}: the {SECTION} section needs {PROPERTY_FILE_LOGIN_MODULE} "
            'required file="<users .properties>";'
        )
    path = Path(users_file)
    if not path.is_absolute():
        path = jaas_path.parent / path
    try:
        passwords = load_properties(path)
    except PropertiesError as exc:
        raise JaasFileError(f"REST users file: {exc}") from None
    if not passwords:
        raise JaasFileError(
            f"REST users file {path} names no user (user: password lines); "
            "nobody could log in"
        )
    return RestUsers(passwords, path)


def _entries(body: str, source: Path) -> list[tuple[str, dict[str, str]]]:
    entries = []
    position = 0
    while body[position:].strip():
        head = _ENTRY_HEAD.match(body, position)
        if head is None:
            raise JaasFileError(f"{source}: expected '<LoginModule> required key=\"value\";'")
        options: dict[str, str] = {}
        position = head.end()
        while (option := _OPTION.match(body, position)) is not None:
            value = option.group(2)
            if value.startswith('"'):
                value = re.sub(r"\\(.)", r"\1", value[1:-1])
            options[option.group(1)] = value
            position = option.end()
        end = body.find(";", position)
        if end < 0 or body[position:end].strip():
            raise JaasFileError(f"{source}: cannot parse the entry of {head.group(1)}")
        position = end + 1
        entries.append((head.group(1), options))
    return entries
