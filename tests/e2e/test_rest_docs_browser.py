"""``/docs`` renders in a real browser with every other host unreachable (issue 14, item 4).

Chromium (Debian's package, driven by Playwright) opens the Swagger UI page of a
running ``sluice standalone``; every request to another host is aborted and
recorded. The page must list the API's operations and must not have tried any
other host.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Route, sync_playwright

from harness.standalone_process import StandaloneProcess

# Debian's package (Makefile SYSTEM_PACKAGES): Playwright's own download cannot run here
CHROMIUM = "chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    executable = shutil.which(CHROMIUM)
    assert executable, f"{CHROMIUM} is not installed: run `make system-deps`"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable)
        yield launched
        launched.close()


def test_swagger_ui_renders_the_operations_offline(
    worker: StandaloneProcess, browser: Browser
) -> None:
    origin = urlsplit(worker.url).netloc
    elsewhere: list[str] = []

    def only_the_worker(route: Route) -> None:
        if urlsplit(route.request.url).netloc == origin:
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort("internetdisconnected")

    context = browser.new_context()
    try:
        context.route("**/*", only_the_worker)
        page = context.new_page()
        page.goto(f"{worker.url}/docs")
        page.wait_for_selector(".opblock-summary-path", timeout=30_000)
        shown = {
            (
                block.locator(".opblock-summary-method").inner_text().strip().lower(),
                block.locator(".opblock-summary-path").inner_text().strip().replace("\u200b", ""),
            )
            for block in page.locator(".opblock").all()
        }
    finally:
        context.close()
    schema = worker.http.get("/openapi.json").json()
    expected = {(method, path) for path, ops in schema["paths"].items() for method in ops}
    assert ("get", "/connectors") in shown and ("get", "/connector-plugins") in shown
    assert shown == expected
    assert elsewhere == []
