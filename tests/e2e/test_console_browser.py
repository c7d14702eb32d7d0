"""The web console at ``/ui`` in a real browser against a real worker (issue 20).

Chromium (Debian's package, driven by Playwright) opens the console of a
running ``sluice standalone`` with running, paused and failed pipelines, a
dead-letter queue and a broken pipeline file. Every request to another host is
aborted and recorded: there must be none. A sink task fails in a controlled way
(its output path is a directory) with automatic restarts off, so it stays
FAILED until the page's restart button restarts it once the path is free.

Screenshots of each page go to ``test-artifacts/console/`` (git-ignored).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, expect, sync_playwright

from harness.standalone_process import (
    StandaloneProcess,
    file_sink,
    file_source,
    properties,
    wait_for_rest,
)

CHROMIUM = "chromium"  # Debian's package (Makefile SYSTEM_PACKAGES)
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
WAIT_MS = 30_000
SECRET = "hunter2-do-not-show"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = shutil.which(CHROMIUM)
    assert executable, f"{CHROMIUM} is not installed: run `make system-deps`"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def console_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneProcess]:
    """A worker whose failed tasks stay FAILED until someone restarts them."""
    process = StandaloneProcess(
        tmp_path_factory.mktemp("console-worker"), **{"task.restart.enabled": "false"}
    ).start()
    yield process
    code = process.stop()
    process.close()
    assert code == 0, process.log_text()


class Offline:
    """A browser context that lets requests reach the worker only, recording the others."""

    def __init__(self, browser: Browser, worker: StandaloneProcess) -> None:
        self.origin = urlsplit(worker.url).netloc
        self.elsewhere: list[str] = []
        self.context: BrowserContext = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.route("**/*", self._route)

    def _route(self, route: Route) -> None:
        if urlsplit(route.request.url).netloc == self.origin:
            route.continue_()
        else:
            self.elsewhere.append(route.request.url)
            route.abort("internetdisconnected")


def shoot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def row(page: Page, connector: str) -> str:
    return f'#connectors tr[data-connector="{connector}"]'


def test_the_console_shows_states_traces_and_restarts_a_failed_task(
    console_worker: StandaloneProcess, browser: Browser, tmp_path: Path
) -> None:
    worker = console_worker
    source, output = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"line {i}\n" for i in range(50)) + "not json\n")
    blocked = tmp_path / "blocked-out.txt"
    blocked.mkdir()  # the sink cannot open a directory as its file: its task fails
    worker.write_pipeline("run-src", file_source("run-src", source, "ui-lines"))
    worker.write_pipeline("run-snk", file_sink("run-snk", output, "ui-lines"))
    worker.write_pipeline("paused-src", file_source("paused-src", source, "ui-paused"))
    worker.write_pipeline("fail-snk", file_sink("fail-snk", blocked, "ui-lines"))
    worker.write_pipeline("dlq-snk", properties(
        name="dlq-snk", connector_class="FileStreamSink", file=str(tmp_path / "json.txt"),
        topics="ui-lines", value_converter="org.apache.kafka.connect.json.JsonConverter",
        value_converter_schemas_enable="false", errors_tolerance="all",
        errors_deadletterqueue_topic_name="ui-dlq",
        errors_deadletterqueue_context_headers_enable="true",
        errors_deadletterqueue_topic_replication_factor=1,
    ))
    worker.write_pipeline("secret-snk", properties(  # no database there: it fails, masked
        name="secret-snk", connector_class="JdbcSink", topics="ui-lines",
        connection_url="jdbc:postgresql://127.0.0.1:1/nowhere", connection_user="u",
        connection_password=SECRET,
    ))
    worker.write_pipeline("broken", "name=broken\ntopics=nowhere\n")  # no connector.class
    for name in ("run-src", "run-snk", "paused-src", "dlq-snk"):
        worker.wait_running(name)
    worker.http.put("/connectors/paused-src/pause").raise_for_status()
    wait_for_rest(lambda: worker.state("paused-src") == "PAUSED", "paused-src PAUSED")
    wait_for_rest(
        lambda: (worker.status("fail-snk") or {"tasks": []})["tasks"][0]["state"] == "FAILED",
        "fail-snk's task FAILED",
    )

    offline = Offline(browser, worker)
    writing = threading.Event()
    feeder = threading.Thread(target=_feed, args=(source, writing), daemon=True)
    try:
        page = offline.context.new_page()
        feeder.start()
        page.goto(f"{worker.url}/ui/")
        # the list: every connector with its state and its tasks' states
        for name, state in (("run-src", "RUNNING"), ("paused-src", "PAUSED"),
                            ("fail-snk", "RUNNING"), ("broken", "FAILED")):
            expect(page.locator(f"{row(page, name)} td.state .badge")).to_have_text(
                state, timeout=WAIT_MS
            )
        expect(page.locator(f"{row(page, 'fail-snk')} td.tasks .badge")).to_have_text(["FAILED"])
        expect(page.locator(f"{row(page, 'run-snk')} td.tasks .badge")).to_have_text(["RUNNING"])
        # the throughput sparkline moves while records flow
        page.wait_for_function(
            """() => { const r = document.querySelector('[data-rate="run-src"]');
                       return r && r.textContent !== '…' && r.textContent !== '0/s'; }""",
            timeout=WAIT_MS,
        )
        page.wait_for_function(  # a few samples, so the screenshot shows a sparkline
            """() => Number(document.querySelector('#connectors tr[data-connector="run-src"] svg')
                             ?.dataset.points) >= 5""",
            timeout=WAIT_MS,
        )
        writing.set()
        shoot(page, "1-connectors")

        # one connector: the failed task's full trace, then the restart button restarts it
        page.click(f'{row(page, "fail-snk")} a')
        trace = page.locator("#tasks pre.trace")
        expect(trace).to_contain_text("IsADirectoryError", timeout=WAIT_MS)
        expect(trace).to_contain_text("Traceback")
        expect(page.locator("#config")).to_contain_text(str(blocked))
        shoot(page, "2-connector-failed")
        blocked.rmdir()
        page.click('#tasks button[data-action="restart-task"]')
        expect(page.locator('#tasks tr[data-task="0"] td.state .badge')).to_have_text(
            "RUNNING", timeout=WAIT_MS
        )
        expect(page.locator("#tasks pre.trace")).to_have_count(0)
        assert worker.status("fail-snk")["tasks"][0]["state"] == "RUNNING"  # type: ignore[index]

        # a file-managed connector cannot be deleted over REST: the 409 is shown
        page.click('button[data-action="delete"]')
        page.click('button[data-action="delete"]')
        expect(page.locator("#notice")).to_contain_text("409", timeout=WAIT_MS)
        expect(page.locator("#notice")).to_contain_text("pipeline file")
        assert worker.state("fail-snk") is not None

        # pause and resume from the page
        page.click('button[data-action="pause"]')
        expect(page.locator("h1 .badge").first).to_have_text("PAUSED", timeout=WAIT_MS)
        page.click('button[data-action="resume"]')
        expect(page.locator("h1 .badge").first).to_have_text("RUNNING", timeout=WAIT_MS)
        shoot(page, "3-connector-restarted")

        # the dead-letter queue's latest records with their error headers
        page.goto(f"{worker.url}/ui/#/connectors/dlq-snk")
        dlq = page.locator("#dlq")
        expect(dlq).to_contain_text("line", timeout=WAIT_MS)
        expect(dlq.locator("td.error").first).to_contain_text("DataError")
        dlq.locator("details summary").first.click()
        expect(dlq).to_contain_text("__connect.errors.exception.class.name")
        shoot(page, "4-connector-dlq")

        # secrets masked as the REST API masks them
        page.goto(f"{worker.url}/ui/#/connectors/secret-snk")
        expect(page.locator("#config")).to_contain_text("connection.password", timeout=WAIT_MS)
        masked = worker.http.get("/connectors/secret-snk/config").json()["connection.password"]
        assert SECRET not in page.content() and SECRET not in masked
        expect(page.locator("#config")).to_contain_text(masked)
        shoot(page, "5-connector-secret")

        # the pipeline files with their problems
        page.click('a[data-nav="pipelines"]')
        broken = page.locator('#pipelines tr[data-file="broken.properties"] .problems-cell')
        expect(broken).to_contain_text("connector.class is missing", timeout=WAIT_MS)
        expect(page.locator('#pipelines tr[data-file="run-src.properties"] .problems-cell'))\
            .to_have_text("OK")
        expect(page.locator("#plugins")).to_contain_text("FileStreamSourceConnector")
        shoot(page, "6-pipelines")

        # the topics with partitions, sizes and a peek at the latest records
        page.click('a[data-nav="topics"]')
        page.click('#topics tr[data-topic="ui-lines"] a')
        expect(page.locator("#partitions tbody tr")).to_have_count(1, timeout=WAIT_MS)
        expect(page.locator("#peek")).to_contain_text("line ", timeout=WAIT_MS)
        expect(page.locator('#topics tr[data-topic="ui-dlq"]')).to_have_count(1)
        shoot(page, "7-topics")
    finally:
        writing.set()
        feeder.join(10)
        offline.context.close()
    assert offline.elsewhere == []


def _feed(source: Path, done: threading.Event) -> None:
    """Append lines to the source file until ``done`` (so the sparklines have a rate)."""
    batch = 0
    while not done.wait(0.5):
        with source.open("a") as out:
            out.writelines(f"batch {batch} line {i}\n" for i in range(100))
        batch += 1


def test_the_console_endpoints_answer_with_kafka_connects_error_body(
    console_worker: StandaloneProcess,
) -> None:
    http = console_worker.http
    page = http.get("/ui/")
    assert page.status_code == 200 and "console.js" in page.text
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert http.get("/ui").status_code in (307, 200)
    missing = http.get("/ui/api/topics/no-such-topic/records")
    assert missing.status_code == 404
    assert missing.json() == {"error_code": 404, "message": "Topic no-such-topic does not exist"}
    assert http.get("/ui/api/topics/x/records", params={"limit": 1000}).status_code in (400, 422)
    folder = http.get("/ui/api/pipelines").json()
    assert folder["directory"] == str(console_worker.pipelines) and folder["exists"] is True
    assert "/ui/api/topics" not in http.get("/openapi.json").json()["paths"]
