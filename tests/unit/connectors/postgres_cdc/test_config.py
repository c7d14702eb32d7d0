"""The connector's keys: Debezium's names and defaults, clear errors, one task."""

from __future__ import annotations

import pytest

from connectors.api import ConfigError
from connectors.postgres_cdc.config import PostgresCdcConfig
from connectors.postgres_cdc.source import PostgresCdcConnector

BASE = {"database.hostname": "h", "database.user": "u", "database.dbname": "d",
        "topic.prefix": "srv", "database.password": "pw"}


def test_defaults_are_debeziums() -> None:
    config = PostgresCdcConfig.from_props(BASE)
    assert (config.port, config.plugin_name, config.slot_name) == (5432, "pgoutput", "debezium")
    assert config.publication_name == "dbz_publication"
    assert config.publication_autocreate_mode == "all_tables"
    assert config.snapshot_mode == "initial" and config.tombstones_on_delete
    assert config.decimal_handling_mode == "precise" and config.skipped == {"t"}
    assert "pw" not in repr(config)


def test_bad_values_name_their_key() -> None:
    with pytest.raises(ConfigError, match=r"plugin.name: .*only pgoutput"):
        PostgresCdcConfig.from_props({**BASE, "plugin.name": "decoderbufs"})
    with pytest.raises(ConfigError, match=r"topic\.prefix: is required"):
        PostgresCdcConfig.from_props({k: v for k, v in BASE.items() if k != "topic.prefix"})
    with pytest.raises(ConfigError, match=r"snapshot\.mode"):
        PostgresCdcConfig.from_props({**BASE, "snapshot.mode": "sometimes"})
    with pytest.raises(ConfigError, match="cannot both be set"):
        PostgresCdcConfig.from_props(
            {**BASE, "table.include.list": "a.b", "table.exclude.list": "c.d"})
    with pytest.raises(ConfigError, match=r"table\.include\.list: .*bad regex"):
        PostgresCdcConfig.from_props({**BASE, "table.include.list": "public.(x"})
    with pytest.raises(ConfigError, match=r"skipped\.operations"):
        PostgresCdcConfig.from_props({**BASE, "skipped.operations": "x"})


def test_table_lists_are_anchored() -> None:
    include = PostgresCdcConfig.from_props({**BASE, "table.include.list": "public.a.*, s.b"})
    assert include.captures("public.abc") and include.captures("s.b")
    assert not include.captures("s.bb") and not include.captures("xpublic.a")
    exclude = PostgresCdcConfig.from_props({**BASE, "table.exclude.list": "public.tmp_.*"})
    assert exclude.captures("public.t") and not exclude.captures("public.tmp_1")


def test_schema_include_list_is_anchored() -> None:
    config = PostgresCdcConfig.from_props({**BASE, "schema.include.list": "other, sales_.*"})
    assert config.captures("other.t") and config.captures("sales_eu.orders")
    assert not config.captures("public.t") and not config.captures("others.t")
    assert not config.captures("xother.t") and not config.captures("sales.t")
    assert config.captures_schema("other") and not config.captures_schema("public")


def test_schema_exclude_list() -> None:
    config = PostgresCdcConfig.from_props({**BASE, "schema.exclude.list": r"audit|tmp_\d+"})
    assert config.captures("public.t") and config.captures("audit2.t")
    assert not config.captures("audit.t") and not config.captures("tmp_7.t")
    assert PostgresCdcConfig.from_props(BASE).captures("any.t")


def test_both_schema_lists_is_an_error_naming_both_keys() -> None:
    with pytest.raises(ConfigError, match=r"schema\.include\.list and schema\.exclude\.list "
                       "cannot both be set"):
        PostgresCdcConfig.from_props(
            {**BASE, "schema.include.list": "a", "schema.exclude.list": "b"})
    with pytest.raises(ConfigError, match=r"schema\.exclude\.list: .*bad regex"):
        PostgresCdcConfig.from_props({**BASE, "schema.exclude.list": "(x"})


def test_schema_and_table_lists_both_apply() -> None:
    with_include = PostgresCdcConfig.from_props(
        {**BASE, "schema.include.list": "other", "table.include.list": r".*\.keep.*"})
    assert with_include.captures("other.keep_1")
    assert not with_include.captures("other.drop")  # schema passes, table does not
    assert not with_include.captures("public.keep_1")  # table passes, schema does not
    with_exclude = PostgresCdcConfig.from_props(
        {**BASE, "schema.exclude.list": "public", "table.exclude.list": r"other\.log"})
    assert with_exclude.captures("other.orders")
    assert not with_exclude.captures("other.log") and not with_exclude.captures("public.orders")
    mixed = PostgresCdcConfig.from_props(
        {**BASE, "schema.include.list": "other", "table.exclude.list": r"other\.log"})
    assert mixed.captures("other.orders") and not mixed.captures("other.log")
    assert not mixed.captures("public.orders")


def test_column_lists() -> None:
    include = PostgresCdcConfig.from_props({**BASE, "column.include.list": r"s\.t\.(a|b)"})
    assert include.dropped_columns("s.t", ["a", "b", "c"]) == {"c"}
    assert include.dropped_columns("s.u", ["a"]) == {"a"}
    exclude = PostgresCdcConfig.from_props({**BASE, "column.exclude.list": r".*\.pw"})
    assert exclude.dropped_columns("s.t", ["a", "pw"]) == {"pw"}
    assert PostgresCdcConfig.from_props(BASE).dropped_columns("s.t", ["a"]) == frozenset()
    with pytest.raises(ConfigError, match="cannot both be set"):
        PostgresCdcConfig.from_props(
            {**BASE, "column.include.list": "a", "column.exclude.list": "b"})


def test_one_task_whatever_tasks_max_says() -> None:
    connector = PostgresCdcConnector()
    connector.start({**BASE, "tasks.max": "4"})
    configs = connector.task_configs(4)
    assert len(configs) == 1 and configs[0]["topic.prefix"] == "srv"
    assert "io.debezium.connector.postgresql.PostgresConnector" in connector.aliases
    assert {"PostgresCdcSource", "PostgresConnector"} <= set(connector.aliases)
    for name, field in PostgresCdcConfig.model_fields.items():
        assert field.description, name
