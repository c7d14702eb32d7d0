"""The background uploader: jobs in order, a failure stops the queue until a retry succeeds."""

from __future__ import annotations

import threading

import pytest

from connectors.s3.uploader import Uploader


def test_jobs_run_in_order_on_the_background_thread() -> None:
    uploader = Uploader(max_queued=2)
    done: list[int] = []
    threads: set[str] = set()

    def job(n: int) -> None:
        threads.add(threading.current_thread().name)
        done.append(n)

    for n in range(10):
        uploader.submit(lambda n=n: job(n))  # type: ignore[misc]
    uploader.drain()
    uploader.close()
    assert done == list(range(10))
    assert threads == {"s3-uploader"}


def test_a_failed_job_stops_the_queue_and_is_retried_by_check() -> None:
    uploader = Uploader(max_queued=4)
    done: list[str] = []
    attempts = {"b": 0}

    def flaky() -> None:
        attempts["b"] += 1
        if attempts["b"] <= 2:
            raise OSError("S3 is away")
        done.append("b")

    all_queued = threading.Event()

    def first() -> None:
        all_queued.wait(10)  # hold the queue until every job is in it
        done.append("a")

    uploader.submit(first)
    uploader.submit(flaky)
    uploader.submit(lambda: done.append("c"))
    all_queued.set()
    uploader.drain()  # returns at the failure
    assert done == ["a"]  # "c" waits behind the failed job: order is kept
    with pytest.raises(OSError, match="S3 is away"):
        uploader.check()  # the retry fails too
    uploader.check()  # third attempt succeeds, the queue goes on
    uploader.drain()
    uploader.close()
    assert done == ["a", "b", "c"]


def test_inline_mode_keeps_a_failed_job_for_the_next_check() -> None:
    uploader = Uploader(background=False)
    failures = [OSError("once")]

    def job() -> None:
        if failures:
            raise failures.pop()

    with pytest.raises(OSError):
        uploader.submit(job)
    uploader.check()  # runs it again, now fine
    uploader.submit(lambda: None)
