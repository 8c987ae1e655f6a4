"""The built site in a real browser: headless Chromium (Debian's package) driven by Playwright.

The site is served from its build folder on 127.0.0.1, and every page of it is opened at a
phone's width (375 px): it must load without a script error and without scrolling sideways
(a wide table or code block scrolls inside its own box, never the page), and every internal
link must lead to a page of the site and every anchor to an element of that page. External
links are listed in the test's output, never fetched: the browser may reach nothing but the
site. Then, at a desktop's width, each entry of the navigation is clicked through, and a word
typed in the search box must give results.

The browser is `/usr/bin/chromium` (`tools/ensure-chromium` installs it, as `.ci/run` does);
without it the test skips on a developer's machine and fails in CI (`CI` set).
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urlsplit

import pytest

CHROMIUM = Path("/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # Only the site's host resolves: the browser reaches nothing else (and waits on nothing).
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]


def _missing(what: str) -> None:
    message = f"{what}; run `sh tools/ensure-chromium` (as root it installs Chromium)"
    if os.environ.get("CI"):
        pytest.fail(f"the browser test cannot run in CI: {message}")
    pytest.skip(message)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(served: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A fresh Chromium profile that may reach the served site and nothing else."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("Playwright for Python is not installed (it is in the `test` extras)")
    if not CHROMIUM.exists():
        _missing(f"{CHROMIUM} does not exist")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")),
            executable_path=str(CHROMIUM),
            headless=True,
            args=FLAGS,
        )
        try:
            yield context
        finally:
            context.close()


def _page_of(url: str, served: str) -> str:
    """The site's page a URL of the site leads to, as its path under the site (`ci/`)."""
    path = urlsplit(url).path.lstrip("/")
    return path.removesuffix("index.html")


def _page(browser: Any, width: int, height: int) -> Any:
    page = browser.new_page()
    page.set_viewport_size({"width": width, "height": height})
    return page


#: What the test needs of a page, in one call: its links, its ids, how far it scrolls sideways.
_LOOK = """() => [
    Array.from(document.querySelectorAll('a[href]'), a => a.href),
    Array.from(document.querySelectorAll('[id]'), e => e.id),
    document.documentElement.scrollWidth - document.documentElement.clientWidth,
]"""


def test_every_page_loads_links_resolve_and_fits_a_phone(
    site: Path, served: str, browser: Any
) -> None:
    pages = sorted(
        p.relative_to(site).as_posix().removesuffix("index.html") for p in site.rglob("index.html")
    )
    assert len(pages) >= 40, pages
    page = _page(browser, 375, 800)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    ids: dict[str, set[str]] = {}
    links: dict[str, list[str]] = {}
    too_wide: list[tuple[str, int]] = []
    for name in pages:
        answer = page.goto(served + name, wait_until="load")
        assert answer is not None and answer.status == 200, name
        links[name], found, overflow = page.evaluate(_LOOK)
        ids[name] = set(found)
        if overflow > 0:
            too_wide.append((name, overflow))
    page.close()
    assert not errors, errors
    assert not too_wide, f"pages that scroll sideways at 375 px (by px): {too_wide}"

    broken: list[str] = []
    external: set[str] = set()
    for name, hrefs in links.items():
        for href in hrefs:
            if not href.startswith(served):
                external.add(href)
                continue
            target, anchor = urldefrag(href)
            where = _page_of(target, served)
            if where not in ids:
                if not (site / where).is_file():
                    broken.append(f"{name or '/'}: {href} (no such page)")
            elif anchor and anchor not in ids[where]:
                broken.append(f"{name or '/'}: {href} (no #{anchor} on that page)")
    print("External links (not fetched):", *sorted(external), sep="\n  ")
    assert not [href for href in external if "OWNER" in href], "a link to a placeholder"
    assert not broken, "\n".join(broken)


def test_the_navigation_leads_to_each_of_its_pages(served: str, browser: Any) -> None:
    page = _page(browser, 1280, 900)
    page.goto(served, wait_until="load")
    nav = page.locator("nav.md-nav--primary")
    entries = nav.locator("a.md-nav__link[href]").evaluate_all(
        "links => links.map(a => [a.href, a.textContent.trim()])"
    )
    entries = [(href, title) for href, title in entries if "#" not in href]
    assert len(entries) >= 15, entries
    for href, title in entries:  # each clicked from the page the one before it led to
        nav.get_by_role("link", name=title, exact=True).first.click()
        page.wait_for_url(href)
        heading = page.locator("article h1")
        assert heading.count() == 1 and heading.inner_text().strip(), (title, page.url)
    # On a phone the navigation is a drawer: it opens, and its entries lead to their pages.
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(served, wait_until="load")
    page.locator("label.md-header__button[for='__drawer']").click()
    reference = nav.get_by_role("link", name="Command reference", exact=True).first
    reference.wait_for(state="visible")
    reference.click()
    page.wait_for_url(served + "reference/")
    page.close()


def test_search_finds_a_word(served: str, browser: Any) -> None:
    page = _page(browser, 1280, 900)
    page.goto(served + "concepts/", wait_until="load")
    box = page.locator("input.md-search__input")
    box.click()
    box.type("sandbox", delay=20)
    results = page.locator(".md-search-result__item")
    results.first.wait_for(state="visible", timeout=15_000)
    assert results.count() >= 3
    titles = results.locator("h1, h2").all_inner_texts()
    assert any("sandbox" in title.lower() for title in titles), titles
    results.first.locator("a").first.click()
    page.wait_for_load_state("load")
    assert page.url.startswith(served) and page.url != served + "concepts/", page.url
    page.close()
