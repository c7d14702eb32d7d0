"""The web console at ``/ui`` works in Firefox too (issue 20: "current Chromium and Firefox").

Debian's ``firefox-esr`` (Makefile SYSTEM_PACKAGES), driven headless over
Marionette with Mozilla's own client (``marionette-driver``; Playwright's
Firefox needs a patched build it would download). The same checks as the
Chromium test's main path: states listed right, the failed task's trace shown,
its restart button restarts it, the other pages render. Screenshots go to
``test-artifacts/console/firefox-*.png``.
"""

from __future__ import annotations

import base64
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from marionette_driver import By, Wait
from marionette_driver.marionette import Marionette

from harness.broker_process import free_port
from harness.standalone_process import StandaloneProcess, file_sink, file_source, wait_for_rest

FIREFOX = "firefox-esr"  # Debian's package (Makefile SYSTEM_PACKAGES)
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
WAIT_S = 30


@pytest.fixture(scope="module")
def firefox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Marionette]:
    executable = shutil.which(FIREFOX)
    assert executable, f"{FIREFOX} is not installed: run `make system-deps`"
    log = tmp_path_factory.mktemp("firefox") / "gecko.log"
    client = Marionette(
        host="127.0.0.1", port=free_port(), bin=executable, headless=True, gecko_log=str(log)
    )
    client.start_session()
    client.set_window_rect(width=1280, height=800)
    yield client
    client.delete_session()
    client.cleanup()


@pytest.fixture(scope="module")
def ff_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StandaloneProcess]:
    process = StandaloneProcess(
        tmp_path_factory.mktemp("ff-worker"), **{"task.restart.enabled": "false"}
    ).start()
    yield process
    code = process.stop()
    process.close()
    assert code == 0, process.log_text()


def wait_until(client: Marionette, check: Callable[[Marionette], Any], what: str) -> Any:
    return Wait(client, timeout=WAIT_S, interval=0.2).until(check, message=what)


def text(client: Marionette, selector: str) -> str:
    found = client.execute_script(
        "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;",
        script_args=[selector],
    )
    return found or ""


def shoot(client: Marionette, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    png = client.screenshot(format="base64", full=True)
    (ARTIFACTS / f"firefox-{name}.png").write_bytes(base64.b64decode(png))


def test_the_console_works_in_firefox(
    ff_worker: StandaloneProcess, firefox: Marionette, tmp_path: Path
) -> None:
    worker, client = ff_worker, firefox
    source = tmp_path / "in.txt"
    source.write_text("".join(f"line {i}\n" for i in range(20)))
    blocked = tmp_path / "blocked-out.txt"
    blocked.mkdir()  # the sink cannot open a directory as its file: its task fails
    worker.write_pipeline("ff-src", file_source("ff-src", source, "ff-lines"))
    worker.write_pipeline("ff-paused", file_source("ff-paused", source, "ff-other"))
    worker.write_pipeline("ff-fail", file_sink("ff-fail", blocked, "ff-lines"))
    worker.wait_running("ff-src")
    worker.wait_running("ff-paused")
    worker.http.put("/connectors/ff-paused/pause").raise_for_status()
    wait_for_rest(
        lambda: (worker.status("ff-fail") or {"tasks": []})["tasks"][0]["state"] == "FAILED",
        "ff-fail's task FAILED",
    )

    client.navigate(f"{worker.url}/ui/")
    expected = {"ff-src": "RUNNING", "ff-paused": "PAUSED", "ff-fail": "RUNNING"}
    for name, state in expected.items():
        selector = f'#connectors tr[data-connector="{name}"] td.state .badge'
        wait_until(client, lambda c, s=selector, st=state: text(c, s) == st, f"{name} {state}")
    failed_task = '#connectors tr[data-connector="ff-fail"] td.tasks .badge'
    assert text(client, failed_task) == "FAILED"
    shoot(client, "1-connectors")

    client.navigate(f"{worker.url}/ui/#/connectors/ff-fail")
    wait_until(client, lambda c: "IsADirectoryError" in text(c, "#tasks pre.trace"), "the trace")
    shoot(client, "2-connector-failed")
    blocked.rmdir()
    client.find_element(By.CSS_SELECTOR, '#tasks button[data-action="restart-task"]').click()
    task_state = '#tasks tr[data-task="0"] td.state .badge'
    wait_until(client, lambda c: text(c, task_state) == "RUNNING", "the task RUNNING again")
    assert worker.status("ff-fail")["tasks"][0]["state"] == "RUNNING"  # type: ignore[index]

    client.navigate(f"{worker.url}/ui/#/pipelines")
    wait_until(client, lambda c: "ff-fail.properties" in text(c, "#pipelines"), "the files")
    shoot(client, "3-pipelines")
    client.navigate(f"{worker.url}/ui/#/topics/ff-lines")
    wait_until(client, lambda c: "line 19" in text(c, "#peek"), "the latest records")
    shoot(client, "4-topics")
