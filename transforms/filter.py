"""Filter: drop records. On its own it drops everything; with a predicate
(``transforms.f.predicate=p``, maybe ``negate=true``) only the records the
predicate selects, which the transform chain decides before calling it.
"""

from __future__ import annotations

from connectors.api.config import PluginConfig
from connectors.api.records import ConnectRecord
from transforms._config import kafka_names
from transforms.api import Transformation


class Filter(Transformation):
    """Drop every record it is applied to; pair it with a predicate to choose which."""

    config_model = PluginConfig
    aliases = kafka_names("Filter")

    def apply(self, record: ConnectRecord) -> ConnectRecord | None:
        return None
