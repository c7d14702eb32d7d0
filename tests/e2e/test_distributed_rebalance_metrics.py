"""Kafka Connect's ``connect-worker-rebalance-metrics`` on two ``sluice distributed``
workers (issue 20): real worker and broker processes, ``GET /metrics`` parsed with
prometheus_client's parser, a worker stopped so the other rebalances alone."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.broker_process import BrokerProcess
from harness.distributed_process import DistributedProcess
from harness.prometheus import Scrape, scrape
from harness.wait import wait_for

PREFIX = "kafka_connect_connect_worker_rebalance_metrics_"


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[BrokerProcess]:
    process = BrokerProcess(tmp_path / "broker").start()
    yield process
    process.stop()


def _worker(tmp_path: Path, broker: BrokerProcess, name: str) -> DistributedProcess:
    return DistributedProcess(tmp_path / name, bootstrap=broker.bootstrap, group_id="metrics")


def _page(worker: DistributedProcess) -> Scrape:
    return scrape(worker.url + "/metrics")


def _leader(page: Scrape) -> str | None:
    names = [dict(labels)["leader_name"] for (name, labels) in page.samples
             if name == PREFIX + "leader_name"]
    return names[0].rstrip("/") if len(names) == 1 else None  # Kafka's URLs end in /


def _settled(worker: DistributedProcess, after_epoch: float) -> Scrape | None:
    """The worker's page once it completed a rebalance past ``after_epoch`` and is not
    rebalancing."""
    page = _page(worker)
    epoch = page.value(PREFIX + "epoch")
    if page.value(PREFIX + "rebalancing") == 0 and epoch is not None and epoch > after_epoch:
        return page
    return None


def test_two_workers_report_their_rebalances_epoch_and_leader(
    tmp_path: Path, broker: BrokerProcess
) -> None:
    a, b = _worker(tmp_path, broker, "a"), _worker(tmp_path, broker, "b")
    try:
        a.start()
        alone = wait_for(lambda: _settled(a, -1), "worker a's first rebalance")
        assert alone is not None
        assert alone.value(PREFIX + "completed_rebalances_total") >= 1  # type: ignore[operator]
        assert alone.types[PREFIX + "completed_rebalances"] == "counter"
        assert _leader(alone) == a.url
        assert alone.value(PREFIX + "connect_protocol", connect_protocol="sessioned") == 1
        first_epoch = alone.value(PREFIX + "epoch") or 0

        b.start()

        def both_settled() -> tuple[Scrape, Scrape] | None:
            pages = (_settled(a, first_epoch), _settled(b, -1))
            if pages[0] is None or pages[1] is None:
                return None
            same = pages[0].value(PREFIX + "epoch") == pages[1].value(PREFIX + "epoch")
            return (pages[0], pages[1]) if same and _leader(pages[0]) == _leader(pages[1]) else None

        pages = wait_for(both_settled, "both workers in one generation with one leader")
        assert pages is not None
        page_a, page_b = pages
        assert _leader(page_a) in (a.url, b.url)
        assert (page_a.value(PREFIX + "completed_rebalances_total") or 0) >= 2
        assert (page_b.value(PREFIX + "completed_rebalances_total") or 0) >= 1
        average = page_a.value(PREFIX + "rebalance_avg_time_ms")
        longest = page_a.value(PREFIX + "rebalance_max_time_ms")
        assert average is not None and longest is not None and 0 < average <= longest
        since = page_a.value(PREFIX + "time_since_last_rebalance_ms")
        assert since is not None and math.isfinite(since) and since >= 0
        completed = page_a.value(PREFIX + "completed_rebalances_total") or 0
        epoch = page_a.value(PREFIX + "epoch") or 0

        b.stop()  # leaves the group: a rebalances alone and leads
        after = wait_for(lambda: _settled(a, epoch), "worker a's rebalance without b")
        assert after is not None
        assert (after.value(PREFIX + "completed_rebalances_total") or 0) > completed
        assert _leader(after) == a.url
    finally:
        a.close()
        b.close()
