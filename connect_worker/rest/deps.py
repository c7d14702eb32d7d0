"""What handlers get injected: the herder and the plugin registry the app was built with."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from connect_worker.herder.api import Herder
from connect_worker.plugins import PluginRegistry


def _herder(request: Request) -> Herder:
    herder: Herder = request.app.state.herder
    return herder


def _registry(request: Request) -> PluginRegistry:
    registry: PluginRegistry = request.app.state.registry
    return registry


HerderDep = Annotated[Herder, Depends(_herder)]
RegistryDep = Annotated[PluginRegistry, Depends(_registry)]
