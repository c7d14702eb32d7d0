"""``BrokerSessions``: when the active controller must fence each broker.

Kafka's rule (KIP-631): a broker's session lasts ``broker.session.timeout.ms``
from its last heartbeat; a broker not heard from since this controller became
active counts from the activation (a new controller gives everyone a full
session). Once a session is over the broker is fenced.

Sluice's addition, **evidence that a broker is gone**, reported by the service:

- *closed*: the connection that carried the broker's last heartbeat closed (a
  ``kill -9`` closes it at once). A live broker heartbeats every
  ``broker.heartbeat.interval.ms``; one whose connection broke reconnects and
  sends its next heartbeat when it is due. So after a close at ``lost_ms`` the
  session ends at ``max(lost_ms, last_contact_ms + interval) + interval``: one
  interval after the next heartbeat was due, or after the close if later.
- *refused*: the broker's node refuses connections at its controller listener
  (in combined mode the same process as the broker): nothing listens there, the
  process is gone. The session ends one interval after ``refused_ms``.

A heartbeat clears the evidence; a broker fenced by mistake (a heartbeat later
still) is unfenced by its next heartbeat, as after any fencing. Without evidence
(a pause, a silent network) only the session timeout applies. Evidence never
lets another process register the same id sooner
(:meth:`BrokerSessions.within_session_timeout`).
"""

from __future__ import annotations


class BrokerSessions:
    """Last contact and lost-connection evidence per broker; times in milliseconds."""

    def __init__(self, session_timeout_ms: int, heartbeat_interval_ms: int) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self._contact_ms: dict[int, int] = {}
        self._lost_ms: dict[int, int] = {}
        self._refused_ms: dict[int, int] = {}

    def contact_ms(self, broker_id: int, now_ms: int) -> int:
        """The broker's last contact; a broker not heard from yet gets ``now_ms``."""
        return self._contact_ms.setdefault(broker_id, now_ms)

    def heard(self, broker_id: int, now_ms: int) -> None:
        """A registration or heartbeat arrived: a new session, no evidence."""
        self._contact_ms[broker_id] = now_ms
        self._lost_ms.pop(broker_id, None)
        self._refused_ms.pop(broker_id, None)

    def connection_lost(self, broker_id: int, now_ms: int) -> None:
        """Evidence that the broker may be gone (the first since its last heartbeat counts)."""
        self.contact_ms(broker_id, now_ms)
        self._lost_ms.setdefault(broker_id, now_ms)

    def node_refused(self, broker_id: int, now_ms: int) -> None:
        """The broker's node refused a connection (the first refusal since its last
        heartbeat counts)."""
        self.contact_ms(broker_id, now_ms)
        self._refused_ms.setdefault(broker_id, now_ms)

    def lost_since_ms(self, broker_id: int) -> int | None:
        return self._lost_ms.get(broker_id)

    def end_ms(self, broker_id: int, now_ms: int) -> int:
        """The first millisecond at which the session is over."""
        contact = self.contact_ms(broker_id, now_ms)
        end = contact + self.session_timeout_ms + 1
        lost = self._lost_ms.get(broker_id)
        if lost is not None:
            interval = self.heartbeat_interval_ms
            end = min(end, max(lost, contact + interval) + interval)
        refused = self._refused_ms.get(broker_id)
        if refused is not None:
            end = min(end, refused + self.heartbeat_interval_ms)
        return end

    def live(self, broker_id: int, now_ms: int) -> bool:
        """Whether the broker stays unfenced (evidence counted)."""
        return now_ms < self.end_ms(broker_id, now_ms)

    def within_session_timeout(self, broker_id: int, now_ms: int) -> bool:
        """Kafka's rule alone: what keeps another incarnation from taking the id. Evidence
        only fences (undone by the next heartbeat); a new incarnation's registration makes
        the old one's epoch stale for good, so it still waits for the whole session."""
        return now_ms - self.contact_ms(broker_id, now_ms) <= self.session_timeout_ms

    def forget(self, broker_id: int) -> None:
        self._contact_ms.pop(broker_id, None)
        self._lost_ms.pop(broker_id, None)
        self._refused_ms.pop(broker_id, None)

    def clear(self) -> None:
        self._contact_ms.clear()
        self._lost_ms.clear()
        self._refused_ms.clear()
