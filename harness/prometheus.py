"""Read a ``/metrics`` page as Prometheus would: ``scrape(url)`` -> samples by name and labels."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


class Scrape:
    """One scrape's samples and each family's type (``counter``, ``gauge``, ``summary``)."""

    def __init__(self, text: str) -> None:
        self.samples: Samples = {}
        self.types: dict[str, str] = {}
        for family in text_string_to_metric_families(text):
            self.types[family.name] = family.type
            for sample in family.samples:
                self.samples[(sample.name, frozenset(sample.labels.items()))] = sample.value

    def value(self, name: str, **labels: str) -> float | None:
        """The sample with exactly these labels (None when absent)."""
        return self.samples.get((name, frozenset(labels.items())))

    def total(self, name: str, **labels: str) -> float:
        """Sum of the samples of ``name`` whose labels include these (e.g. over versions)."""
        wanted = set(labels.items())
        return sum(v for (n, have), v in self.samples.items() if n == name and wanted <= have)


def scrape(url: str, timeout_s: float = 10.0) -> Scrape:
    """GET ``url`` and parse it with prometheus_client's parser (a non-200 raises)."""
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        return Scrape(response.read().decode())
