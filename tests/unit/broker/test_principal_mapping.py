"""ssl.principal.mapping.rules: Kafka's RULE/DEFAULT syntax, parsed and applied."""

from __future__ import annotations

import pytest

from log_engine.broker.security.principal_mapping import PrincipalMapper, PrincipalRulesError

SERVICE_USERS = "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/, DEFAULT"


@pytest.mark.parametrize(
    ("rules", "subject", "name"),
    [
        (None, "CN=alice,O=Example,C=DE", "CN=alice,O=Example,C=DE"),
        ("DEFAULT", "CN=alice,O=Example", "CN=alice,O=Example"),
        (SERVICE_USERS, "CN=kafka-svc,OU=ServiceUsers,O=X", "kafka-svc"),
        (SERVICE_USERS, "CN=adam,OU=Admins,O=X", "CN=adam,OU=Admins,O=X"),
        ("RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$2/L", "CN=Duke,OU=JavaSoft,O=Sun", "duke@javasoft"),
        ("RULE:^CN=(.*?),OU=(.*?)$/$1/U", "CN=duke,OU=eng", "DUKE"),
        # a comma inside a rule's pattern, several rules on lines
        ("RULE:^CN=([^,]*),O=A$/a-$1/,\nRULE:^CN=([^,]*),O=B$/b-$1/", "CN=x,O=B", "b-x"),
        # an escaped slash in the pattern, a literal \$ in the replacement
        ("RULE:^CN=(.*)\\/admin$/\\$$1/", "CN=ops/admin", "$ops"),
        # empty entries and a trailing comma are ignored
        ("RULE:^CN=b$/bee/,, ,DEFAULT,", "CN=a", "CN=a"),
        # $12 with one group: group 1 then a literal 2 (Kafka's reading)
        ("RULE:^CN=(.*)$/$12/", "CN=x", "x2"),
    ],
)  # fmt: skip
def test_rules_map_subjects(rules: str | None, subject: str, name: str) -> None:
    assert PrincipalMapper(rules).name(subject) == name


def test_no_rule_applies() -> None:
    mapper = PrincipalMapper("RULE:^CN=(.*?),O=Example$/$1/")
    assert mapper.name("CN=eve,O=Elsewhere") is None
    assert mapper.name("xCN=eve,O=Example") is None  # the pattern must match the whole subject


@pytest.mark.parametrize(
    "rules",
    [
        "RULE:^CN=(.*?)$/$1/X",  # unknown case flag
        "RULE:^CN=(.*?)$/$1",  # no closing slash
        "RULE:^CN=(.*$/$1/",  # a pattern that does not compile
        "DEFAULT, SOMETHING",
        "RULE:a/b/L trailing",
    ],
)
def test_malformed_rules_are_refused(rules: str) -> None:
    with pytest.raises(PrincipalRulesError, match=r"ssl\.principal\.mapping\.rules"):
        PrincipalMapper(rules)
