"""What the clients of a fault-injection run were told, in the order they were told it."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Sent:
    """A record a producer handed to its client: ``value`` names it uniquely."""

    producer: str
    partition: int
    seq: int  # the producer's send order on this partition
    value: bytes
    at: float = 0.0  # time.monotonic() when sent


@dataclass(frozen=True, slots=True)
class Acked:
    """The client said the record is stored at ``offset`` (acks=all)."""

    value: bytes
    partition: int
    offset: int
    at: float = 0.0  # time.monotonic() when acknowledged


@dataclass(frozen=True, slots=True)
class Consumed:
    """A consumer read ``value`` at ``offset``."""

    partition: int
    offset: int
    value: bytes


@dataclass
class History:
    """Thread-safe record of a run: sends, acknowledgements, failures, reads, events.

    Values are ``producer:partition:seq`` so that any record read back names
    who wrote it. ``events`` interleaves client outcomes with the nemesis' log
    (monotonic seconds since the start), for a failure's message.
    """

    sent: dict[bytes, Sent] = field(default_factory=dict)
    acked: list[Acked] = field(default_factory=list)
    failed: dict[bytes, str] = field(default_factory=dict)
    consumed: list[Consumed] = field(default_factory=list)
    events: list[tuple[float, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _started: float = field(default_factory=time.monotonic, repr=False)
    _next_seq: dict[tuple[str, int], int] = field(default_factory=dict, repr=False)

    def send(self, producer: str, partition: int) -> bytes:
        """The next value of ``producer`` on ``partition``, recorded as sent."""
        with self._lock:
            seq = self._next_seq.get((producer, partition), 0)
            self._next_seq[(producer, partition)] = seq + 1
            value = f"{producer}:{partition}:{seq}".encode()
            self.sent[value] = Sent(producer, partition, seq, value, time.monotonic())
            return value

    def ack(self, value: bytes, partition: int, offset: int) -> None:
        with self._lock:
            self.acked.append(Acked(value, partition, offset, time.monotonic()))

    def fail(self, value: bytes, error: str) -> None:
        """The client gave up on the record: it may or may not be stored."""
        with self._lock:
            self.failed[value] = error

    def consume(self, partition: int, offset: int, value: bytes) -> None:
        with self._lock:
            self.consumed.append(Consumed(partition, offset, value))

    def event(self, what: str) -> None:
        with self._lock:
            self.events.append((time.monotonic() - self._started, what))

    def acked_between(self, sent_after: float, acked_before: float) -> list[Acked]:
        """Acknowledgements, before ``acked_before``, of records sent after ``sent_after``."""
        with self._lock:
            return [
                a
                for a in self.acked
                if a.at < acked_before and self.sent[a.value].at > sent_after
            ]

    def acked_count(self) -> int:
        with self._lock:
            return len(self.acked)

    def summary(self) -> str:
        with self._lock:
            return (
                f"{len(self.sent)} sent, {len(self.acked)} acknowledged, "
                f"{len(self.failed)} failed, {len(self.consumed)} consumed"
            )

    def failure_summary(self, top: int = 10) -> str:
        """The most frequent (producer, error) pairs among failed sends."""
        with self._lock:
            counts: dict[tuple[str, str], int] = {}
            for value, error in self.failed.items():
                key = (self.sent[value].producer, error[:120])
                counts[key] = counts.get(key, 0) + 1
        ranked = sorted(counts.items(), key=lambda item: -item[1])[:top]
        return "\n".join(f"{n:6d} {producer}: {error}" for (producer, error), n in ranked)

    def event_log(self) -> str:
        with self._lock:
            return "\n".join(f"{at:8.2f}s {what}" for at, what in self.events)
