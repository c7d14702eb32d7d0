"""Broker security: TLS listeners, SASL authentication and SCRAM credentials.

:class:`ListenerSecurity` turns a listener's security protocol and the
``ssl.*`` / ``sasl.*`` / ``listener.name.<name>.*`` settings into an
``ssl.SSLContext`` and the SASL mechanisms the listener accepts;
:class:`SaslSession` runs one connection's SaslHandshake/SaslAuthenticate
exchange. See docs/security.md.
"""

from log_engine.broker.security.listener_security import ListenerSecurity, SecurityConfigError
from log_engine.broker.security.sasl_session import SaslSession

__all__ = ["ListenerSecurity", "SaslSession", "SecurityConfigError"]
