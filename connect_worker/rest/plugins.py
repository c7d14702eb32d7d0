"""``/connector-plugins``: installed plugins, their config definitions, validation.

``connectorsOnly`` defaults to true as in Kafka Connect; with false, converters,
transforms and predicates are listed too. Each item's ``class`` is the name a
Kafka Connect user writes (``org.apache.kafka.connect.file.FileStreamSourceConnector``;
the Python path for a plugin without one); Sluice adds ``python_class`` and
``aliases``. The config and validate paths accept any of those names, and a
Python path from before a module moved. Validation answers Kafka Connect's
body (``{name, error_count, groups, configs}``), built by the herder from the
plugin's pydantic config model.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Body, Query

from connect_worker.plugins import UnknownPluginError
from connect_worker.rest.deps import HerderDep, RegistryDep
from connect_worker.rest.errors import RestError
from connect_worker.rest.models import ConfigMap
from connect_worker.validation import plugin_config_definition

router = APIRouter(prefix="/connector-plugins", tags=["connector plugins"])

# What Kafka Connect lists with connectorsOnly=false (config providers are not listed).
_LISTED_KINDS = ("source", "sink", "converter", "header_converter", "transformation", "predicate")
_OTHER_KINDS = _LISTED_KINDS[2:]


@router.get("", summary="Installed plugins: {class, type, version, python_class, aliases}")
@router.get("/", include_in_schema=False)
def list_plugins(
    registry: RegistryDep,
    connectors_only: bool = Query(True, alias="connectorsOnly"),
) -> list[dict[str, Any]]:
    found = registry.plugins("connector" if connectors_only else None)
    return [plugin.to_json() for plugin in found if plugin.type in _LISTED_KINDS]


@router.get("/{plugin}/config", summary="The plugin's config definition")
def plugin_config(registry: RegistryDep, plugin: str) -> list[dict[str, Any]]:
    try:
        return plugin_config_definition(registry.connector_class(plugin))
    except UnknownPluginError as unknown:
        for kind in _OTHER_KINDS:  # converters, transforms and predicates have configs too
            try:
                return plugin_config_definition(registry.descriptor(plugin, kind).cls)
            except UnknownPluginError:
                continue
        raise unknown from None


@router.put("/{plugin}/config/validate", summary="Validate a config against the plugin")
def validate(
    herder: HerderDep,
    registry: RegistryDep,
    plugin: str,
    config: ConfigMap = Body(),  # noqa: B008
) -> dict[str, Any]:
    config = dict(config)
    given = config.setdefault("connector.class", plugin)
    if given != plugin and not _same_plugin(registry, given, plugin):
        raise RestError(
            400, f"Included connector type {given} does not match request type {plugin}"
        )
    return herder.validate_config(plugin, config)


def _same_plugin(registry: RegistryDep, given: str, plugin: str) -> bool:
    """Whether two names (alias, dotted path, Kafka class name) are the same connector."""
    try:
        return registry.connector_class(given) is registry.connector_class(plugin)
    except UnknownPluginError:
        return False
