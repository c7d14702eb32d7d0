"""``ThrottledLog``: the first event of a key at once, then one line per interval with
the count of events not logged."""

from __future__ import annotations

import logging

import pytest

from log_engine.throttled_log import ThrottledLog


def test_repeats_within_the_interval_are_counted_in_the_next_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    now = [0.0]
    throttled = ThrottledLog(logging.getLogger("t"), 60.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, "t"):
        for second in range(0, 130):  # once a second for 130 s
            now[0] = float(second)
            throttled.warning(("User:x", 63), "refused %s", "heartbeat")
        throttled.warning(("User:y", 63), "refused %s", "other user")  # another key: at once
    assert [r.getMessage() for r in caplog.records] == [
        "refused heartbeat",
        "refused heartbeat (59 more like it not logged in the last 60 s)",
        "refused heartbeat (59 more like it not logged in the last 60 s)",
        "refused other user",
    ]
