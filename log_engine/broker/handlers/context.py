"""What every handler gets besides the body: the broker, the request header, the peer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from log_engine.protocol import RequestHeader

if TYPE_CHECKING:
    from log_engine.broker.broker import Broker


@dataclass(frozen=True, slots=True)
class RequestContext:
    """The request being handled and the broker handling it."""

    broker: Broker
    header: RequestHeader
    peer: str
    principal: str = "User:ANONYMOUS"
    """Who sent it: ``User:<name>`` after SASL, ``User:CN=...`` from a client
    certificate, else ``User:ANONYMOUS`` (what ACLs are checked against)."""
    listener: str = ""
    """The name of the client listener it came in on (Metadata answers with that
    listener's endpoints); empty: the inter-broker listener."""

    @property
    def listener_name(self) -> str:
        """:attr:`listener`, or the inter-broker listener's name when unset."""
        return self.listener or self.broker.config.listener.name

    @property
    def version(self) -> int:
        return self.header.api_version

    @property
    def client_host(self) -> str:
        """The client's IP address (``peer`` without its port), for ACL host matching."""
        return self.peer.rsplit(":", 1)[0]
