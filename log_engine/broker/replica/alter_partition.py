"""How a leader asks the controller to change a partition's ISR (contract 3 of issue 17).

The controller owns partition state: a leader never changes its ISR on its
own. It sends the ISR it wants together with the state it holds (whose
``partition_epoch`` and ``leader_epoch`` the controller checks, as Kafka's
AlterPartition does) and uses the answer: the new state, or an error code
(FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, ...) after which it waits for
the controller's next state.
"""

from __future__ import annotations

from typing import Protocol

from log_engine.metadata.types import PartitionState

NOT_CONTROLLER = 41
"""Kafka's error code for a request that reached no active controller."""


class AlterPartitionSender(Protocol):
    """Sends ISR changes to the active controller (AlterPartition v0+ on the wire)."""

    async def alter_isr(
        self, state: PartitionState, new_isr: tuple[int, ...]
    ) -> PartitionState | int:
        """Ask for ``new_isr``; return the committed new state or a Kafka error code."""
        ...


class NoController:
    """The sender of a broker with no controller: every change is refused.

    Used until a controller is wired in; a leader then keeps its ISR (its high
    watermark waits for every member, the safe side).
    """

    async def alter_isr(
        self, state: PartitionState, new_isr: tuple[int, ...]
    ) -> PartitionState | int:
        return NOT_CONTROLLER
