"""The pluggy hook specifications through which every plugin is discovered.

Bundled plugins register through these same hooks as third-party ones. A
third-party package declares an entry point in group ``sluice`` pointing at a
module (or object) with ``@hookimpl`` functions::

    # pyproject.toml of the plugin package
    [project.entry-points.sluice]
    my_plugin = "my_package.plugin"

    # my_package/plugin.py
    from connectors.api import hookimpl

    @hookimpl
    def sluice_connectors():
        return [MySourceConnector]

Each registration hook returns classes; the class carries its own descriptor
(``aliases``, ``config_model``, ``version``). Hooks are called once per worker
at start-up, never per record.
"""

from __future__ import annotations

import pluggy

PROJECT = "sluice"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


class SluiceHookSpecs:
    """Registration hooks; each returns a list of classes."""

    @hookspec
    def sluice_connectors(self) -> list[type]:  # type: ignore[empty-body]
        """SourceConnector and SinkConnector subclasses."""

    @hookspec
    def sluice_converters(self) -> list[type]:  # type: ignore[empty-body]
        """Converter and HeaderConverter subclasses."""

    @hookspec
    def sluice_transforms(self) -> list[type]:  # type: ignore[empty-body]
        """Transformation subclasses (transforms.api)."""

    @hookspec
    def sluice_predicates(self) -> list[type]:  # type: ignore[empty-body]
        """Predicate subclasses (transforms.api)."""

    @hookspec
    def sluice_config_providers(self) -> list[type]:  # type: ignore[empty-body]
        """ConfigProvider classes that resolve ``${name:path:key}`` references."""
