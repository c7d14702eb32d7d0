"""Progress a plugin reports for its status (``details()`` of connectors and tasks).

The REST status polls it from a request thread while the plugin runs in its
own, so a plugin's bug here must never break ``GET /connectors/{c}/status``:
an exception becomes ``{"error": ...}`` and values JSON cannot hold are shown
as their ``str``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger(__name__)


def plugin_details(plugin: object | None, what: str) -> dict[str, Any]:
    """``plugin.details()`` made safe to serve: a JSON-ready dict, ``{}`` if none."""
    if plugin is None:
        return {}
    try:
        details = plugin.details()  # type: ignore[attr-defined]
        if not details:
            return {}
        return json.loads(json.dumps(dict(details), default=str))
    except Exception as exc:
        log.debug("%s: details() raised", what, exc_info=True)
        return {"error": f"details() raised {type(exc).__name__}: {exc}"}
