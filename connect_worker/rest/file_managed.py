"""Connectors defined by pipeline files are changed by editing the file, not over REST.

A pipeline file (``pipelines.dir/X.properties``, or a file named on the
``sluice standalone`` command line) is the source of truth for its connector:
the herder does not persist its config, and the file is applied again whenever
it changes (or at the next start). A REST write would last only until then, so
the REST API refuses it with 409 Conflict, Kafka Connect's error body, naming
the file:

- ``POST /connectors`` with a name a file defines;
- ``PUT`` or ``PATCH /connectors/{c}/config`` that would change the config
  (one that leaves it as the file says is answered 200 without a change: a
  deployment script that PUTs the same config again diverges from nothing);
- ``DELETE /connectors/{c}``.

Pause, resume, stop, restart, the offsets API and ``topics/reset`` stay
allowed: they change the connector's state, not its config.
"""

from __future__ import annotations

from collections.abc import Callable

from connect_worker.rest.errors import RestError
from connect_worker.watch import PipelineFile

PipelineFileLookup = Callable[[str], PipelineFile | None]
"""The pipeline file defining a connector, or None when REST owns it."""


def no_pipeline_files(name: str) -> PipelineFile | None:
    """The lookup of a worker without pipeline files: every connector is REST's."""
    return None


def refuse_file_managed(lookup: PipelineFileLookup, name: str, action: str) -> None:
    """409 if connector ``name`` is defined by a pipeline file; ``action`` says what was asked."""
    pipeline = lookup(name)
    if pipeline is not None:
        raise FileManagedError(pipeline, action)


class FileManagedError(RestError):
    """A REST write to a connector that a pipeline file defines (409)."""

    def __init__(self, pipeline: PipelineFile, action: str) -> None:
        super().__init__(
            409,
            f"Cannot {action} connector {pipeline.name}: it is defined by the pipeline file "
            f"{pipeline.path}, which is applied again whenever it changes. Edit or delete "
            "that file instead (pause, resume, stop, restart and the offsets API stay "
            "available over REST).",
        )
        self.pipeline = pipeline
