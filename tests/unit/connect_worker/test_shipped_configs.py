"""Every connector config shipped in configs/ parses and validates cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from connect_worker.plugins import PluginRegistry
from connect_worker.properties import PropertiesError, load_properties
from connect_worker.validation import validate_connector_config

CONFIGS = Path(__file__).resolve().parents[3] / "configs"


def _connector_configs() -> list[Path]:
    """Files with a connector.class (and any that cannot even be parsed: they fail below)."""
    found = []
    for path in sorted(CONFIGS.rglob("*.properties")):
        try:
            if "connector.class" in load_properties(path):
                found.append(path)
        except PropertiesError:
            found.append(path)
    return found


@pytest.mark.parametrize("path", _connector_configs(), ids=lambda p: str(p.relative_to(CONFIGS)))
def test_connector_config_validates(path: Path) -> None:
    props = load_properties(path)
    props.setdefault("name", path.stem)  # as the pipelines folder watcher names it
    result = validate_connector_config(PluginRegistry.load(), props)
    assert result.ok, f"{path}: " + "; ".join(result.problems())
