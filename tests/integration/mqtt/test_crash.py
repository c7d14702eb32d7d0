"""The worker stopped mid-stream (QoS 1 and 2, persistent session), then restarted.

- SIGKILL: no message is lost (those in flight come again: duplicates allowed).
  At QoS 2 this holds because the PUBREC goes out only once the log has the
  record: a message killed before that is sent again by Mosquitto (DUP), one
  killed after it only gets its PUBREL again, which the new task answers.
- SIGTERM, a clean stop: no message is lost and none comes twice. The runtime
  flushes and runs the final commit before the task's ``stop()``, so the
  PUBACKs / PUBRECs for every record in the log reach Mosquitto before the
  disconnect (closed gracefully: a reset would drop them); only what never
  reached the log is delivered again.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable

import pytest

from harness.mosquitto import MosquittoServer
from harness.mqtt_pipeline import LogReader, start_source
from harness.standalone_process import StandaloneProcess
from harness.wait import wait_for
from tests.integration.mqtt.helpers import publish_all

COUNT = 10_000


@pytest.mark.slow
@pytest.mark.parametrize("qos", [1, 2], ids=["qos1", "qos2"])
@pytest.mark.parametrize(
    ("sig", "exit_code"), [(signal.SIGKILL, -signal.SIGKILL), (signal.SIGTERM, 0)],
    ids=["sigkill", "sigterm"],
)
def test_a_stop_mid_stream_loses_no_message(
    fresh_worker: Callable[..., StandaloneProcess],
    mosquitto: MosquittoServer,
    mqtt_prefix: str,
    sig: signal.Signals,
    exit_code: int,
    qos: int,
) -> None:
    worker = fresh_worker().start()
    topic = f"mqtt-stop-{sig.name.lower()}-qos{qos}"
    start_source(worker, mosquitto, mqtt_prefix, topic, qos=qos)
    sent = [str(i).encode() for i in range(COUNT)]
    publisher = threading.Thread(
        target=publish_all,
        args=(mosquitto, [(f"{mqtt_prefix}/n", v) for v in sent]),
        kwargs={"qos": qos},
    )
    publisher.start()
    reader = LogReader(worker.bootstrap, topic)
    try:
        wait_for(lambda: reader.read() >= COUNT // 5, "a fifth of the messages in the log")
        assert worker.stop(sig) == exit_code
        in_log_at_stop = len(reader.values)
        publisher.join(120)
        assert not publisher.is_alive()

        worker.start()  # same folder: same pipeline, same client id, same log
        wait_for(lambda: reader.read() >= COUNT, f"all {COUNT} messages in the log", 120)
        assert reader.values == set(sent)  # none missing
        assert in_log_at_stop < COUNT  # the stop really was mid-stream
        if sig is signal.SIGTERM:
            wait_for(lambda: reader.read() >= COUNT and reader.records >= COUNT, "the log read")
            assert reader.records == COUNT  # none twice after a clean stop
    finally:
        reader.close()
        publisher.join(60)
