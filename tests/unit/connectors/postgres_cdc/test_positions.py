"""Confirmations: an LSN is confirmable only once everything before it was acknowledged."""

from __future__ import annotations

from connectors.postgres_cdc.positions import Confirmations


def test_a_transaction_is_confirmed_after_its_last_record() -> None:
    c = Confirmations()
    c.emit((100, 0))
    c.emit((100, 1))
    c.completed(150)  # transaction 100 ends at 150
    c.emit((200, 0))
    c.completed(250)
    c.acknowledged((100, 0))
    assert c.confirmable() is None
    c.acknowledged((100, 1))
    assert c.confirmable() == 150
    assert c.confirmable() is None  # nothing new
    c.acknowledged((200, 0))
    assert c.confirmable() == 250


def test_transactions_without_records_move_the_end_on() -> None:
    c = Confirmations()
    c.emit((100, 0))
    c.completed(150)
    c.completed(300)  # filtered-out transactions: same last record
    c.completed(400)
    assert len(c) == 1
    c.acknowledged((100, 0))
    assert c.confirmable() == 400


def test_idle_only_when_everything_was_committed() -> None:
    c = Confirmations((50, 3))  # resumed from a stored position
    assert c.drain_if_idle()
    c.emit((100, 0))
    c.completed(150)
    assert not c.drain_if_idle()
    c.acknowledged((100, 0))
    assert not c.drain_if_idle()  # acknowledged, but its offset is not yet durable
    assert c.confirmable() == 150
    assert c.drain_if_idle()
