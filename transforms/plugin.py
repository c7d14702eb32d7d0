"""The bundled transforms and predicates, registered through the same hooks as
third-party ones (entry point ``transforms = "transforms.plugin"``).

Empty until the bundled SMTs land (issue 5).
"""

from __future__ import annotations

from connectors.api import hookimpl


@hookimpl
def sluice_transforms() -> list[type]:
    """The bundled single-message transforms."""
    return []


@hookimpl
def sluice_predicates() -> list[type]:
    """The bundled predicates."""
    return []
