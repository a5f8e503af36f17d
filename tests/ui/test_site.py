"""The course website (``make site`` -> build/site/) as a reader's Chromium sees it, offline.

build/site/ is served on 127.0.0.1 by a throw-away HTTP server; lessons 01, 03, 06 and 12 of both
editions are opened in headless Chromium with every request recorded (requests to any other host
are refused and fail the test). On each page: MathJax typeset every formula without an error,
every Mermaid diagram is an SVG, every image loaded and has alt text that describes it in the
page's language, each widget carries the sentence that it moves in JupyterLab, and the link to
the other edition opens the same lesson there. Then the offline zip is unpacked and one page is
opened from ``file://``, with its diagram and formulas. ``make site-test`` builds the site first.
"""

from __future__ import annotations

import functools
import http.server
import re
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
PAGES = [
    "01_simplified_self_attention",
    "03_causal_attention",
    "06_multihead_split",
    "12_tiny_char_lm",
]
CJK = re.compile(r"[\u3400-\u9fff]")
WIDGET_SENTENCE = {"en": "JupyterLab", "zh": "JupyterLab"}

JS_STATE = """async () => {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
        await MathJax.startup.promise;
    }
    const images = Array.from(document.querySelectorAll('article img'));
    return {
        lang: document.documentElement.lang,
        mathjax: !!(window.MathJax && MathJax.startup),
        formulas: document.querySelectorAll('mjx-container').length,
        formula_errors: document.querySelectorAll('mjx-merror, [data-mjx-error]').length,
        raw_tex: document.querySelectorAll('span.math, div.math').length
            - document.querySelectorAll('span.math mjx-container, div.math mjx-container').length,
        diagrams: document.querySelectorAll('div.mermaid').length,
        diagram_svgs: document.querySelectorAll('div.mermaid > svg').length,
        undrawn: document.querySelectorAll('pre.mermaid').length,
        images: images.map((img) => ({
            src: img.getAttribute('src') || '',
            alt: img.getAttribute('alt') || '',
            loaded: img.complete && img.naturalWidth > 0,
            width: img.naturalWidth,
        })),
        widgets: document.querySelectorAll(
            'script[type="application/vnd.jupyter.widget-view+json"]').length,
        widget_views: document.querySelectorAll('.widget-subarea > .jupyter-widgets').length,
        widget_errors: document.querySelectorAll('.jupyter-widgets-error-widget').length,
        widget_notes: document.querySelectorAll('p.widget-note').length,
        other: (document.querySelector('a.other-edition-link') || {}).href || null,
    };
}"""


def _edition_pages() -> list[tuple[str, str]]:
    return [(edition, page) for edition in ("en", "zh") for page in PAGES]


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail("build/site/ is missing: run `make site` (make site-test does) first")
    return SITE


@pytest.fixture(scope="module")
def server(site) -> Iterator[str]:
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


class Recorder:
    """Every request of a page; any that leaves 127.0.0.1 (or file://) is refused and kept."""

    def __init__(self, allowed: set[str]):
        self.allowed = allowed
        self.outside: list[str] = []
        self.failed: list[str] = []

    def route(self, route) -> None:
        url = route.request.url
        parsed = urlparse(url)
        local = parsed.scheme in ("file", "data", "blob") or parsed.hostname in self.allowed
        if local:
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def on_failed(self, request) -> None:
        if not request.url.startswith("data:"):
            self.failed.append(request.url)


def _open(browser, url: str, allowed: set[str], artifacts: Path | None = None, shot: str = ""):
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    recorder = Recorder(allowed)
    context.route("**/*", recorder.route)
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.on("requestfailed", recorder.on_failed)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    response = page.goto(url, wait_until="load")
    return context, page, recorder, response, errors


def _check_page(state: dict, edition: str, name: str) -> None:
    assert state["lang"].lower().startswith("zh" if edition == "zh" else "en"), state["lang"]
    # Formulas: MathJax ran and typeset every one, with no error.
    assert state["mathjax"], f"{edition}/{name}: MathJax did not load"
    assert state["formulas"] > 0, f"{edition}/{name}: no formula was typeset"
    assert state["formula_errors"] == 0, f"{edition}/{name}: MathJax reported formula errors"
    assert state["raw_tex"] == 0, f"{edition}/{name}: {state['raw_tex']} formulas left as TeX"
    # Diagrams: each one an SVG, none left as Mermaid source.
    assert state["undrawn"] == 0, f"{edition}/{name}: a Mermaid diagram was not drawn"
    assert state["diagram_svgs"] == state["diagrams"], state
    # Figures: every image loaded, wide enough to read, with alt text saying what it shows.
    assert state["images"], f"{edition}/{name}: no figure on the page"
    for image in state["images"]:
        where = f"{edition}/{name}: image {image['src'][:60]}"
        assert image["loaded"], f"{where} did not load"
        alt = image["alt"].strip()
        assert len(alt) >= 25, f"{where} has no descriptive alt text: {alt!r}"
        assert not re.search(r"\.(png|jpe?g|svg)\b", alt), f"{where}: alt is a file name: {alt!r}"
        if edition == "zh":
            assert CJK.search(alt), f"{where}: alt text is not in Chinese: {alt!r}"
    # Widgets: drawn from the saved state, each with the sentence about JupyterLab.
    assert state["widget_notes"] == state["widgets"], state
    assert state["widget_views"] == state["widgets"], f"{edition}/{name}: a widget was not drawn"
    assert state["widget_errors"] == 0, f"{edition}/{name}: a widget failed to render"


@pytest.mark.slow
@pytest.mark.parametrize(("edition", "name"), _edition_pages())
def test_page_offline_complete_and_linked(browser, server, artifacts, edition, name):
    url = f"{server}/{edition}/{name}.html"
    context, page, recorder, response, errors = _open(browser, url, {"127.0.0.1"})
    try:
        assert response is not None and response.status == 200, url
        if "widget-view" in page.content():
            page.wait_for_selector(".widget-subarea > .jupyter-widgets", state="attached")
            page.wait_for_function(
                "() => Array.from(document.querySelectorAll('article img'))"
                ".every((img) => img.getAttribute('alt'))",
                timeout=30_000,
            )
        state = page.evaluate(JS_STATE)
        page.screenshot(path=str(artifacts / f"site-{edition}-{name}.png"), full_page=False)
        assert recorder.outside == [], f"requests left 127.0.0.1: {recorder.outside}"
        assert recorder.failed == [], f"requests failed: {recorder.failed}"
        assert errors == [], f"JavaScript errors: {errors}"
        _check_page(state, edition, name)
        # The other edition's link opens the same lesson there.
        other = "zh" if edition == "en" else "en"
        assert state["other"] == f"{server}/{other}/{name}.html", state["other"]
        with page.expect_navigation():
            page.click("a.other-edition-link")
        assert page.url == state["other"]
        twin = page.evaluate(JS_STATE)
        assert twin["lang"].lower().startswith("zh" if other == "zh" else "en")
        assert twin["other"] == url
        assert recorder.outside == [], f"requests left 127.0.0.1: {recorder.outside}"
    finally:
        context.close()


def test_root_page_offers_both_editions_and_the_zip(browser, server):
    context, page, recorder, response, errors = _open(browser, f"{server}/", {"127.0.0.1"})
    try:
        assert response is not None and response.status == 200
        assert errors == []
        for selector, target in [
            ("#edition-en", "/en/index.html"),
            ("#edition-zh", "/zh/index.html"),
            ("#download-zip", "/download/mhsa-course-site.zip"),
        ]:
            href = page.eval_on_selector(selector, "(a) => a.href")
            assert href == server + target
            status = page.request.get(href).status
            assert status == 200, f"{href}: HTTP {status}"
        assert recorder.outside == []
    finally:
        context.close()


def test_no_page_names_another_host_for_what_it_loads(site):
    """Every page of both editions, read as text: no script, style, font or image from a host."""
    loads = re.compile(
        r'<(?:script|link|img|iframe|source)\b[^>]*?(?:src|href)="((?:https?:)?//[^"]*)"'
    )
    offenders = {}
    for page in sorted(site.rglob("*.html")):
        found = loads.findall(page.read_text(encoding="utf-8"))
        if found:
            offenders[str(page.relative_to(site))] = found
    assert offenders == {}


@pytest.mark.slow
def test_zip_opens_from_file_with_diagram_and_formulas(browser, site, tmp_path):
    archive = site / "download" / "mhsa-course-site.zip"
    assert archive.is_file(), "build/site/download/mhsa-course-site.zip is missing"
    with zipfile.ZipFile(archive) as zipped:
        zipped.extractall(tmp_path)
    root = tmp_path / "mhsa-course-site"
    assert (root / "index.html").is_file()
    page_path = root / "zh" / "06_multihead_split.html"
    context, page, recorder, response, errors = _open(browser, page_path.as_uri(), set())
    try:
        assert response is not None and response.ok
        state = page.evaluate(JS_STATE)
        assert errors == [], f"JavaScript errors: {errors}"
        assert recorder.outside == [], f"requests left the unpacked folder: {recorder.outside}"
        assert recorder.failed == [], f"requests failed: {recorder.failed}"
        assert state["diagrams"] >= 1 and state["diagram_svgs"] == state["diagrams"], state
        assert state["formulas"] > 0 and state["formula_errors"] == 0, state
        assert all(image["loaded"] for image in state["images"]), state["images"]
        # The other edition's page is in the zip too.
        assert state["other"] == (root / "en" / "06_multihead_split.html").as_uri()
    finally:
        context.close()


@pytest.mark.slow
def test_chinese_search_finds_a_chinese_word(browser, server):
    """The Chinese edition is built with language zh_CN (jieba segments words): 掩码 is found."""
    url = f"{server}/zh/search.html?q=%E6%8E%A9%E7%A0%81"
    context, page, recorder, response, errors = _open(browser, url, {"127.0.0.1"})
    try:
        assert response is not None and response.status == 200
        page.wait_for_selector("#search-results ul.search li", timeout=60_000)
        found = page.eval_on_selector_all(
            "#search-results ul.search li a", "(links) => links.map((a) => a.href)"
        )
        assert any("03_causal_attention" in href for href in found), found
        assert errors == [], f"JavaScript errors: {errors}"
        assert recorder.outside == []
    finally:
        context.close()
