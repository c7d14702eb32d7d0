"""Progress of ``sluice consume`` on stderr: only with ``--progress`` or a terminal on
stderr (a real pseudo-terminal here); the records on stdout stay exactly the same."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from harness.broker_process import BrokerProcess
from tests.e2e.test_cli_log_commands import sluice

RECORDS = [f"value {i}" for i in range(30)]


def produce(broker: BrokerProcess, topic: str) -> None:
    produced = sluice(broker, "produce", topic, stdin="".join(f"{r}\n" for r in RECORDS))
    assert produced.returncode == 0, produced.stderr


def consume_args(broker: BrokerProcess, topic: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "connect_worker.cli", "--log-level", "warning", "consume",
            topic, "--from-beginning", "--max-messages", "30", "-b", broker.bootstrap, *extra]


def test_progress_only_when_asked_and_records_unchanged(
    broker: BrokerProcess, topic_name: str
) -> None:
    produce(broker, topic_name)
    plain = subprocess.run(consume_args(broker, topic_name), capture_output=True, text=True,
                           timeout=120)
    shown = subprocess.run(consume_args(broker, topic_name, "--progress"), capture_output=True,
                           text=True, timeout=120)
    for run in (plain, shown):
        assert run.returncode == 0, run.stderr
        assert run.stdout.splitlines() == RECORDS
    assert "30/30" not in plain.stderr  # stderr is a pipe here: no progress unless asked
    assert "30/30" in shown.stderr and "100%" in shown.stderr


def test_a_terminal_on_stderr_gets_progress_by_itself(
    broker: BrokerProcess, topic_name: str
) -> None:
    produce(broker, topic_name)
    master, slave = pty.openpty()
    try:
        run = subprocess.run(consume_args(broker, topic_name), stdout=subprocess.PIPE,
                             stderr=slave, text=True, timeout=120)
        os.close(slave)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
    assert run.returncode == 0
    assert run.stdout.splitlines() == RECORDS
    assert b"30/30" in seen, seen
