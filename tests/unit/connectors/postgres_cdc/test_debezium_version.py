"""The Debezium version the CDC events follow is stated once and the README says the same."""

from __future__ import annotations

from pathlib import Path

import connectors.postgres_cdc as package
from connectors.postgres_cdc.tables import DEBEZIUM_VERSION

README = next(p / "README.md" for p in Path(__file__).resolve().parents
              if (p / "pyproject.toml").exists())


def test_readme_and_package_name_the_version_in_source_version() -> None:
    assert DEBEZIUM_VERSION == "3.6.1.Final"
    readme = README.read_text()
    assert f"Debezium {DEBEZIUM_VERSION}" in readme
    assert DEBEZIUM_VERSION in (package.__doc__ or "")
