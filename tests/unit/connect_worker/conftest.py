"""Fixtures shared by the worker's unit tests."""

from __future__ import annotations

import pytest

from connect_worker.plugins import PluginRegistry


@pytest.fixture(scope="module")
def registry() -> PluginRegistry:
    """The bundled plugins (no entry points of the environment)."""
    return PluginRegistry.load(entry_points=False)
