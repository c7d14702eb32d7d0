"""What handlers get injected: the herder, the plugin registry and the pipeline-file
lookup the app was built with."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from connect_worker.herder.api import Herder
from connect_worker.plugins import PluginRegistry
from connect_worker.rest.errors import RestError
from connect_worker.rest.file_managed import PipelineFileLookup

STARTING = "the worker is still starting up; try again shortly (GET /health says when ready)"


def _herder(request: Request) -> Herder:
    herder: Herder | None = request.app.state.herder
    if herder is None:
        raise RestError(503, STARTING)
    return herder


def _registry(request: Request) -> PluginRegistry:
    registry: PluginRegistry | None = request.app.state.registry
    if registry is None or request.app.state.herder is None:
        raise RestError(503, STARTING)
    return registry


def _pipeline_files(request: Request) -> PipelineFileLookup:
    lookup: PipelineFileLookup = request.app.state.pipeline_files
    return lookup


HerderDep = Annotated[Herder, Depends(_herder)]
RegistryDep = Annotated[PluginRegistry, Depends(_registry)]
PipelineFilesDep = Annotated[PipelineFileLookup, Depends(_pipeline_files)]
