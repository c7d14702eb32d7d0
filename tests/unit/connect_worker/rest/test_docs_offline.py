"""``/docs`` and ``/redoc`` work offline: every asset comes from the worker (issue 14, item 4)."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

_REFERENCE = re.compile(r"""(?:src|href|spec-url)\s*=\s*["']([^"']+)["']|url:\s*'([^']+)'""")


def _references(page: str) -> list[str]:
    return [a or b for a, b in _REFERENCE.findall(page)]


@pytest.mark.parametrize("page_path", ["/docs", "/redoc"])
def test_docs_pages_reference_only_the_worker(client: TestClient, page_path: str) -> None:
    page = client.get(page_path)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "http://" not in page.text and "https://" not in page.text, page.text
    references = _references(page.text)
    assert "/openapi.json" in references
    scripts = [ref for ref in references if ref.endswith(".js")]
    assert scripts, page.text
    for ref in references:
        assert ref.startswith("/") and not ref.startswith("//"), ref
        asset = client.get(ref)
        assert asset.status_code == 200, ref
        assert asset.content, ref
    for ref in scripts:
        assert "javascript" in client.get(ref).headers["content-type"], ref


def test_swagger_ui_assets_are_the_real_bundle(client: TestClient) -> None:
    page = client.get("/docs").text
    by_kind = {ref.rsplit(".", 1)[-1]: ref for ref in _references(page)}
    script = client.get(by_kind["js"]).text
    assert "SwaggerUIBundle" in script and len(script) > 100_000
    assert "swagger-ui" in client.get(by_kind["css"]).text
    # no badge fetched from swagger.io's online validator
    assert '"validatorUrl": null' in page
