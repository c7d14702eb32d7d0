"""Partition leader elections and ISR changes, as ``PartitionChangeRecord`` s.

The rules are Kafka's ``PartitionChangeBuilder`` without eligible leader replicas:

- a replica may lead if it is in the (target) ISR and *acceptable* (registered,
  unfenced, not in controlled shutdown);
- the current leader stays if it may; else the first replica, in replica order,
  that may lead;
- the ISR never becomes empty: removing its last member leaves the ISR as it
  was, and no one may lead (leader -1) until that member comes back;
- with ``unclean.leader.election.enable``, a leaderless partition takes the first
  acceptable replica even outside the ISR, and the ISR becomes that replica
  alone (records the old ISR had may be lost: logged as a warning).

A change that changes nothing gives no record.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from log_engine.metadata.image import MetadataImage
from log_engine.metadata.records import NO_LEADER_CHANGE, PartitionChangeRecord
from log_engine.metadata.types import NO_LEADER, PartitionState

log = logging.getLogger(__name__)

Acceptable = Callable[[int], bool]


def acceptable_in(image: MetadataImage) -> Acceptable:
    """Whether a broker may lead or join an ISR in ``image``."""

    def acceptable(broker_id: int) -> bool:
        reg = image.registrations.get(broker_id)
        return reg is not None and not reg.fenced and not reg.in_controlled_shutdown

    return acceptable


def elect(
    state: PartitionState,
    target_isr: tuple[int, ...],
    acceptable: Acceptable,
    unclean: bool = False,
) -> PartitionChangeRecord | None:
    """The record moving ``state`` to ``target_isr`` with a leader chosen by the rules above."""
    isr = target_isr if target_isr else state.isr  # the ISR never becomes empty

    def may_lead(replica: int) -> bool:
        return bool(target_isr) and replica in target_isr and acceptable(replica)

    if may_lead(state.leader):
        leader = state.leader
    else:
        leader = next((r for r in state.replicas if may_lead(r)), NO_LEADER)
        if leader == NO_LEADER and unclean:
            leader = next((r for r in state.replicas if acceptable(r)), NO_LEADER)
            if leader != NO_LEADER:
                isr = (leader,)
                log.warning(
                    "unclean leader election: %s-%d is led by %d, which was not in the "
                    "ISR %s; records acknowledged by the old ISR may be lost",
                    state.topic,
                    state.partition,
                    leader,
                    list(state.isr),
                )
    new_leader = NO_LEADER_CHANGE if leader == state.leader else leader
    new_isr = None if isr == state.isr else isr
    if new_leader == NO_LEADER_CHANGE and new_isr is None:
        return None
    return PartitionChangeRecord(
        uuid.UUID(bytes=state.topic_id), state.partition, isr=new_isr, leader=new_leader
    )


def remove_broker(
    image: MetadataImage, broker_id: int, unclean: Callable[[str], bool]
) -> list[PartitionChangeRecord]:
    """Take ``broker_id`` out of every ISR and leadership (``image``: with it already fenced
    or in controlled shutdown)."""
    acceptable = acceptable_in(image)
    records: list[PartitionChangeRecord] = []
    for state in image.partitions():
        if broker_id not in state.isr and state.leader != broker_id:
            continue
        target = tuple(r for r in state.isr if r != broker_id)
        record = elect(state, target, acceptable, unclean(state.topic))
        if record is not None:
            records.append(record)
    return records


def elect_leaderless(
    image: MetadataImage, broker_id: int, unclean: Callable[[str], bool]
) -> list[PartitionChangeRecord]:
    """Elect leaders for leaderless partitions ``broker_id`` (now acceptable) may lead."""
    acceptable = acceptable_in(image)
    records: list[PartitionChangeRecord] = []
    for state in image.partitions():
        if state.leader != NO_LEADER or broker_id not in state.replicas:
            continue
        record = elect(state, state.isr, acceptable, unclean(state.topic))
        if record is not None:
            records.append(record)
    return records


def elect_preferred(image: MetadataImage, imbalance_percentage: int) -> list[PartitionChangeRecord]:
    """Give leadership back to preferred replicas (Kafka's auto leader rebalance).

    For each broker, among the partitions it is the preferred (first) replica of:
    if the share it does not lead is above ``imbalance_percentage``, each of those
    whose ISR holds it moves its leadership to it (it must be acceptable).
    """
    acceptable = acceptable_in(image)
    preferred: dict[int, list[PartitionState]] = {}
    for state in image.partitions():
        if state.replicas:
            preferred.setdefault(state.replicas[0], []).append(state)
    records: list[PartitionChangeRecord] = []
    for broker_id, states in sorted(preferred.items()):
        not_led = [s for s in states if s.leader != broker_id]
        if not not_led or len(not_led) * 100 <= imbalance_percentage * len(states):
            continue
        if not acceptable(broker_id):
            continue
        for state in not_led:
            if broker_id in state.isr:
                records.append(
                    PartitionChangeRecord(
                        uuid.UUID(bytes=state.topic_id), state.partition, leader=broker_id
                    )
                )
    return records
