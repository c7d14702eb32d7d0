"""The broker's Prometheus metrics: counters kept while serving, rendered at scrape time.

:mod:`.recorder` counts on the data path (cheap: per request and per
partition, never per record); :mod:`.collector` turns those counts and the
broker's state into Kafka's metric names when ``GET /metrics`` is asked;
:mod:`.endpoint` serves them on ``metrics.listeners``. ``docs/metrics.md``
lists every metric.
"""

from log_engine.broker.metrics.recorder import BrokerMetrics

__all__ = ["BrokerMetrics"]
