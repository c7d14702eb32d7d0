"""Read a worker's ``GET /metrics`` as Prometheus reads it (prometheus_client's parser)."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(base_url: str) -> Samples:
    """Every sample the worker at ``base_url`` serves, keyed by name and labels."""
    response = httpx.get(f"{base_url}/metrics", timeout=30)
    assert response.status_code == 200, response.text
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def sample(samples: Samples, metric: str, /, **labels: str) -> float | None:
    """The value of the series ``metric`` with exactly ``labels`` (None: not served)."""
    return samples.get((metric, frozenset(labels.items())))

