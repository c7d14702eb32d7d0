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

    @property
    def version(self) -> int:
        return self.header.api_version
