"""The states both the control plane (``herder``) and the runtime speak: a leaf
module, so that the runtime never imports the herder.

:class:`State` is what a connector or task is in (Kafka Connect's names),
:class:`TargetState` what the user asked for, :class:`ConnectorType` which side
a connector is on.
"""

from __future__ import annotations

from enum import StrEnum


class State(StrEnum):
    """Connector and task states, named as Kafka Connect names them."""

    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"  # connectors only: no tasks at all
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"


class TargetState(StrEnum):
    """What the user asked for (``initial_state`` / pause / resume / stop)."""

    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


class ConnectorType(StrEnum):
    """Which side a connector is on, as ``GET /connectors/{c}`` names it."""

    SOURCE = "source"
    SINK = "sink"
    UNKNOWN = "unknown"
