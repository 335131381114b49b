"""Pages in headless Chromium for the HTML tests (test_html_browser.py, test_demo_page.py): the
`browser` and `load` fixtures (a pytest plugin: conftest.py registers it) and what a loaded page
collected. Without Playwright or Debian's chromium, a test that loads a page is skipped."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
REPO = Path(__file__).resolve().parents[2]
PAGE_URL = "http://vkscope.invalid/report.html"  # served from memory by the route handler
SCREENSHOTS = REPO / "build"


@dataclass
class Loaded:
    page: Any  # playwright Page
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)

    def js(self, expression: str, arg: Any = None) -> Any:
        return self.page.evaluate(expression, arg)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        yield b
        b.close()


@pytest.fixture
def load(browser: Any) -> Iterator[Any]:
    """Opens a page written by write_html in a fresh context where every request fails."""
    contexts: list[Any] = []

    def open_page(html_path: Path) -> Loaded:
        # The page's content-security policy forbids eval, which Playwright's polling
        # wait_for_function needs; requests stay blocked by the route handler below.
        context = browser.new_context(viewport={"width": 1400, "height": 1000}, bypass_csp=True)
        contexts.append(context)
        page = context.new_page()
        loaded = Loaded(page)
        body = html_path.read_bytes()

        def route(r: Any) -> None:
            if r.request.url == PAGE_URL:
                r.fulfill(status=200, content_type="text/html; charset=utf-8", body=body)
            else:
                loaded.requests.append(r.request.url)
                r.abort()

        context.route("**/*", route)

        def console(message: Any) -> None:
            if message.type == "error":
                loaded.errors.append(message.text)

        page.on("console", console)
        page.on("pageerror", lambda e: loaded.errors.append(str(e)))
        page.goto(PAGE_URL)
        page.wait_for_function("document.documentElement.dataset.ready === '1'", timeout=10_000)
        return loaded

    yield open_page
    for context in contexts:
        context.close()
