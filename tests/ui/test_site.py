"""The course website (``make site`` -> build/site/) as a reader's Chromium sees it, offline.

build/site/ is served on 127.0.0.1 by a throw-away HTTP server; lessons 01, 03, 06 and 12 of both
editions are opened in headless Chromium with every request recorded (requests to any other host
are refused and fail the test). On each page: MathJax typeset every formula without an error,
every Mermaid diagram is an SVG, every image loaded and has alt text that describes it in the
page's language, each widget carries the sentence that it moves in JupyterLab, and the link to
the other edition opens the same lesson there. Then the offline zip is unpacked and one page is
opened from ``file://``, with its diagram and formulas. Further (issue 31): every Chinese
glossary term searched as typed, the search page's results with clean snippets, every lesson's
notebook download and the favicon, the root page's lesson lists, lesson 06's formula at 1280 px,
no sideways scroll at 390 px, lesson 07's static explorer swapping pictures, and saved widgets
without dead sliders. After review: snippets with no code, SVG or TeX for a set of queries, on the
server and from the unpacked zip; no console error or warning (the theme mode); no CI check
heading in a lesson's contents; the footer in each language; jieba quiet during the build.
``make site-test`` builds the site first.
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


# --- issue 31: search, snippets, downloads, favicon, formula width, phone width ---------------


def _glossary_words() -> list[str]:
    """The Chinese glossary words as a reader types them (site/conf.py's own reading)."""
    import importlib.util
    import json

    spec = importlib.util.spec_from_file_location("site_conf", ROOT / "site" / "conf.py")
    assert spec and spec.loader
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)  # the English edition's settings: jieba is not touched
    terms = json.loads((ROOT / "data" / "glossary.json").read_text(encoding="utf-8"))["terms"]
    return conf.glossary_words(terms)


def _zh_lesson_texts() -> dict[str, str]:
    import json

    texts = {}
    for path in sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        texts[path.stem] = "".join(
            "".join(c["source"]) for c in cells if c["cell_type"] == "markdown"
        )
    return texts


SEARCH_ALL = """(words) => words.map((word) => {
    const [query, terms, excluded, highlighted, objects] = Search._parseQuery(word);
    const found = Search._performSearch(query, terms, excluded, highlighted, objects);
    return [word, found.map((result) => result[0])];
})"""


@pytest.mark.slow
def test_chinese_search_finds_every_glossary_term_as_typed(browser, server):
    """Every Chinese glossary word, typed whole (多头注意力, 缩放点积注意力, 熵), finds pages,
    and a word of two or more characters finds every Chinese lesson whose text uses it."""
    words = _glossary_words()
    assert {"多头注意力", "自注意力", "缩放点积注意力"} <= set(words)
    context, page, recorder, _response, errors = _open(
        browser, f"{server}/zh/search.html", {"127.0.0.1"}
    )
    try:
        page.wait_for_function("() => typeof Search !== 'undefined' && Search.hasIndex()")
        found = dict(page.evaluate(SEARCH_ALL, words))
        assert errors == [] and recorder.outside == []
    finally:
        context.close()
    nothing = [word for word in words if not found[word]]
    assert nothing == [], f"glossary words that find no page: {nothing}"
    lessons = _zh_lesson_texts()
    missed = {}
    for word in words:
        if len(word) < 2:
            continue  # 句 is also inside 句子 (sentence): the lessons that use it differ
        lost = sorted(name for name, text in lessons.items() if word in text)
        lost = [name for name in lost if name not in found[word]]
        if lost:
            missed[word] = lost
    assert missed == {}, f"lessons that use a word but are not found by it: {missed}"
    assert {"05_multihead_wrapper", "06_multihead_split"} <= set(found["多头注意力"])
    assert "02_trainable_qkv" in found["缩放点积注意力"]


def _results(page) -> list[tuple[str, str]]:
    """The finished search's results, each with its snippet (fetched one page at a time)."""
    page.wait_for_function(
        "() => /finished|完成/i.test((document.querySelector('.search-summary') || {}).innerText)"
        " && Array.from(document.querySelectorAll('#search-results ul.search li'))"
        ".every((li) => li.querySelector('p.context'))",
        timeout=60_000,
    )
    return page.eval_on_selector_all(
        "#search-results ul.search li",
        "(items) => items.map((li) => [li.querySelector('a').href,"
        " (li.querySelector('p.context') || {}).textContent || ''])",
    )


# What a snippet must not show: the theme switcher's labels, TeX source (\frac, \(, $...$),
# SVG or HTML source (a drawn diagram's), code (print(...), an import line, a def).
SNIPPET_JUNK = re.compile(
    r"System Settings|浅色|深色|亮色|暗色|\\[a-zA-Z]+|\\[()\[\]]|\$|<svg|</?[a-z]+[\s>/]|viewBox"
    r"|print\(|^import |\bimport torch|\bdef \w+\(|NBVAL"
    # TeX whose backslashes were dropped ("frace^x_i - csum_j", "beginsplit")
    r"|\bd?frac(?!t)|sqrt|mathrm|mathbf|operatorname|\b(?:begin|end)(?:split|cases|aligned)"
)
SNIPPET_QUERIES = [
    ("zh", "多头注意力", "06_multihead_split"),
    ("zh", "缩放点积注意力", "02_trainable_qkv"),
    ("zh", "softmax", "01_simplified_self_attention"),
    ("zh", "掩码", "03_causal_attention"),
    ("en", "scaled softmax", "02_trainable_qkv"),
    ("en", "multi-head attention", "06_multihead_split"),
    ("en", "softmax", "01_simplified_self_attention"),
    ("en", "mask", "03_causal_attention"),
    ("en", "flash", "09_efficient_attention"),
    ("en", "denominator", "03_causal_attention"),
    ("en", "fused", "09_efficient_attention"),
]


def _dirty_snippets(results: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(href, text[:160]) for href, text in results if SNIPPET_JUNK.search(text)]


@pytest.mark.slow
@pytest.mark.parametrize(("edition", "query", "expected"), SNIPPET_QUERIES)
def test_search_as_typed_finds_the_lesson_with_a_clean_snippet(
    browser, server, edition, query, expected
):
    """The search page itself, as a reader uses it: the typed query finds the lesson, every
    result has a snippet, and no snippet carries the theme switcher's labels, code, a diagram's
    SVG or TeX source (lessons 06 and 09 showed all of these)."""
    url = f"{server}/{edition}/search.html?q={query}"
    context, page, recorder, _response, errors = _open(browser, url, {"127.0.0.1"})
    try:
        results = _results(page)
        assert errors == [] and recorder.outside == []
    finally:
        context.close()
    assert any(expected in href for href, _ in results), results
    assert _dirty_snippets(results) == []
    assert all(text.strip() for _, text in results), results


@pytest.mark.slow
@pytest.mark.parametrize(("edition", "query"), [("zh", "多头注意力"), ("en", "softmax")])
def test_search_from_the_unpacked_zip_shows_snippets(browser, site, tmp_path, edition, query):
    """Opened from file:// (the offline zip), the search page shows a clean snippet under every
    result, highlighted as on the web: the snippets come from a script, not a fetch."""
    with zipfile.ZipFile(site / "download" / "mhsa-course-site.zip") as zipped:
        zipped.extractall(tmp_path)
    search = tmp_path / "mhsa-course-site" / edition / "search.html"
    context, page, recorder, _response, errors = _open(
        browser, f"{search.as_uri()}?q={query}", set()
    )
    try:
        results = _results(page)
        highlighted = page.eval_on_selector_all(
            "#search-results p.context span.highlighted", "(spans) => spans.length"
        )
        assert errors == [] and recorder.outside == [] and recorder.failed == []
    finally:
        context.close()
    assert len(results) >= 3, results
    assert all(text.strip() for _, text in results), results
    assert _dirty_snippets(results) == []
    assert highlighted > 0


def test_snippet_formulas_read_as_text():
    conf = _site_conf()
    read = conf.readable_tex
    assert read(r"\sqrt{d_k}") == "√d_k"
    assert read(r"\mathrm{softmax}(QK^\top / \sqrt{d})") == "softmax(QKᵀ / √d)"
    assert read(r"\frac{e^{x_i - c}}{\sum_j e^{x_j - c}}") == "(e^(x_i - c))/(Σ_j e^(x_j - c))"
    assert read(r"\text{MultiHead}(X) = \text{Concat}(\text{head}_1, \dots, \text{head}_h)") == (
        "MultiHead(X) = Concat(head_1, …, head_h)"
    )
    for tex in (
        r"\left(\frac{QK^\top}{\sqrt{d_k}}\right) V",
        r"\begin{cases} 1 & j \le i \\ 0 \end{cases}",
    ):
        assert not re.search(r"[\\{}]|frac|sqrt|begin", read(tex)), read(tex)


def _site_conf(edition: str = "en"):
    import importlib.util
    import os

    os.environ["MHSA_SITE_EDITION"] = edition
    try:
        spec = importlib.util.spec_from_file_location("site_conf", ROOT / "site" / "conf.py")
        assert spec and spec.loader
        conf = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(conf)
    finally:
        del os.environ["MHSA_SITE_EDITION"]
    return conf


def test_the_chinese_build_prints_nothing_of_jieba(tmp_path):
    """site/conf.py for the Chinese edition teaches jieba the glossary; jieba's progress lines
    ("Building prefix dict ...") stay out of make site's output, its warnings do not."""
    import os
    import subprocess
    import sys

    code = (
        "import runpy, logging, jieba; runpy.run_path('site/conf.py');"
        "import jieba as j; assert j.default_logger.getEffectiveLevel() == logging.WARNING"
    )
    env = {**os.environ, "MHSA_SITE_EDITION": "zh", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "prefix dict" not in done.stderr and "Loading model" not in done.stderr, done.stderr


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_pages_log_no_theme_error_and_name_the_contributors(browser, server, edition):
    """No console error or warning (the theme's "invalid theme mode" was one), the page starts
    in the light mode, and the footer names the course's contributors as CITATION.cff does, in
    the page's language (not "作者： 课程作者")."""
    footer = {
        "en": "© 2026 the contributors of Multi-Head Self-Attention, step by step.",
        "zh": "© 2026《多头自注意力，一步一步》的贡献者。",
    }[edition]
    context, page, recorder, _response, errors = _open(
        browser, f"{server}/{edition}/index.html", {"127.0.0.1"}
    )
    console: list[str] = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    try:
        for name in ("index", "06_multihead_split", "search"):
            page.goto(f"{server}/{edition}/{name}.html", wait_until="load")
            page.wait_for_timeout(300)
            mode = page.evaluate("() => document.documentElement.dataset.mode")
            assert mode == "light", (name, mode)
            text = page.inner_text("footer.bd-footer-content")
            assert footer in text, text
            assert "作者：" not in text and "课程作者" not in text and "Copyright" not in text, text
        assert errors == [] and recorder.outside == []
    finally:
        context.close()
    loud = [m for m in console if m.startswith(("error", "warning"))]
    assert loud == [], loud


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_no_lesson_lists_its_ci_check_in_the_table_of_contents(browser, server, edition):
    """The heading of a cell that serves the tests ("Check (for CI; collapsed)", "检查（供 CI
    使用，已折叠）") stays on the page as a small heading but is no entry of a page's contents
    (nor of the search's titles); every lesson with such a cell is checked, not only 07."""
    folder = ROOT / "notebooks" / ("zh" if edition == "zh" else "")
    names = [p.stem for p in sorted(folder.glob("[0-9][0-9]_*.ipynb"))]
    ci = re.compile(r"for CI|供 CI|\bCI\b")
    context, page, recorder, _response, errors = _open(
        browser, f"{server}/{edition}/index.html", {"127.0.0.1"}
    )
    entries, rubrics = {}, {}
    try:
        for name in names:
            page.goto(f"{server}/{edition}/{name}.html", wait_until="domcontentloaded")
            toc = page.eval_on_selector_all(
                ".bd-sidebar-secondary nav a, .bd-toc-nav a, #searchbox ~ nav a",
                "(links) => links.map((a) => a.textContent.trim())",
            )
            entries[name] = [entry for entry in toc if ci.search(entry)]
            rubrics[name] = page.eval_on_selector_all(
                "article p.rubric", "(ps) => ps.map((p) => p.textContent.trim())"
            )
        assert errors == [] and recorder.outside == []
    finally:
        context.close()
    assert {name: found for name, found in entries.items() if found} == {}
    checked = [name for name, found in rubrics.items() if any(ci.search(r) for r in found)]
    assert "07_inspecting_heads" in checked and len(checked) >= 7, rubrics
    titles = (ROOT / "build" / "site" / edition / "searchindex.js").read_text(encoding="utf-8")
    assert not ci.search(titles.split('"alltitles"', 1)[1].split("]}", 1)[0])


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_every_lesson_page_offers_its_notebook_and_a_favicon(browser, server, edition):
    folder = ROOT / "notebooks" / ("zh" if edition == "zh" else "")
    names = [p.stem for p in sorted(folder.glob("[0-9][0-9]_*.ipynb"))]
    names += [f"solutions/{p.stem}" for p in sorted((folder / "solutions").glob("*.ipynb"))]
    context, page, recorder, _response, _errors = _open(
        browser, f"{server}/{edition}/index.html", {"127.0.0.1"}
    )
    try:
        for name in names:
            page.goto(f"{server}/{edition}/{name}.html", wait_until="domcontentloaded")
            href = page.eval_on_selector("a.notebook-download", "(a) => a.href")
            assert page.eval_on_selector("a.notebook-download", "(a) => a.hasAttribute('download')")
            got = page.request.get(href)
            assert got.status == 200, f"{edition}/{name}: {href} HTTP {got.status}"
            assert got.body() == (folder / f"{name}.ipynb").read_bytes(), f"{edition}/{name}"
            icon = page.eval_on_selector('link[rel="icon"]', "(link) => link.href")
            shown = page.request.get(icon)
            assert shown.status == 200 and b"<svg" in shown.body(), icon
        assert recorder.outside == []
    finally:
        context.close()


def test_root_page_lists_both_editions_lessons_and_has_a_favicon(browser, server):
    context, page, recorder, _response, errors = _open(browser, f"{server}/", {"127.0.0.1"})
    try:
        for edition, folder in (("en", ROOT / "notebooks"), ("zh", ROOT / "notebooks" / "zh")):
            expected = [
                f"{server}/{edition}/{p.stem}.html"
                for p in sorted(folder.glob("[0-9][0-9]_*.ipynb"))
            ]
            listed = page.eval_on_selector_all(
                f"#lessons-{edition} li a", "(links) => links.map((a) => a.href)"
            )
            assert listed == expected
            for href in listed:
                assert page.request.get(href).status == 200, href
        icon = page.eval_on_selector('link[rel="icon"]', "(link) => link.href")
        assert page.request.get(icon).status == 200
        assert errors == [] and recorder.outside == []
    finally:
        context.close()


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_lesson_06s_key_formula_fits_the_column_at_1280_px(browser, server, edition):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{server}/{edition}/06_multihead_split.html", wait_until="load")
        page.evaluate("async () => { await MathJax.startup.promise; }")
        widths = page.evaluate(
            "() => Array.from(document.querySelectorAll('article mjx-container[display=\"true\"]'))"
            ".map((m) => [m.scrollWidth, m.clientWidth])"
        )
    finally:
        context.close()
    assert widths, "no display formula on lesson 06"
    assert all(scroll <= client for scroll, client in widths), widths


@pytest.mark.slow
@pytest.mark.parametrize("edition", ["en", "zh"])
def test_no_page_scrolls_sideways_on_a_phone(browser, server, edition):
    """At 390 px (a phone), no lesson page of either edition is wider than the screen."""
    folder = ROOT / "notebooks" / ("zh" if edition == "zh" else "")
    pages = ["index", *(p.stem for p in sorted(folder.glob("[0-9][0-9]_*.ipynb")))]
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    wide = {}
    try:
        page = context.new_page()
        for name in pages:
            page.goto(f"{server}/{edition}/{name}.html", wait_until="load")
            page.evaluate("async () => { if (window.MathJax) await MathJax.startup.promise; }")
            scroll, client = page.evaluate(
                "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if scroll > client:
                wide[name] = scroll
        page.goto(f"{server}/index.html", wait_until="load")
        root = page.evaluate("() => document.documentElement.scrollWidth")
    finally:
        context.close()
    assert wide == {}, f"pages wider than 390 px: {wide}"
    assert root <= 390, root


def test_the_repository_setting_adds_source_and_launch_buttons_only_when_set():
    import importlib.util

    spec = importlib.util.spec_from_file_location("site_conf", ROOT / "site" / "conf.py")
    assert spec and spec.loader
    conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(conf)
    assert conf.REPOSITORY_URL == "", "no public address yet: the buttons stay off"
    assert "repository_url" not in conf.html_theme_options
    assert conf.repository_options("", "en") == {}
    options = conf.repository_options("https://example.org/course", "zh")
    assert options["repository_url"] == "https://example.org/course"
    assert options["path_to_docs"] == "notebooks/zh"
    assert options["use_repository_button"] and options["use_source_button"]
    assert set(options["launch_buttons"]) >= {"binderhub_url", "colab_url"}


@pytest.mark.parametrize("edition", ["en", "zh"])
def test_lesson_07s_static_explorer_swaps_pictures_without_a_kernel(browser, server, edition):
    """Lesson 07's explorer on the site: two sliders (heads, dropout) over pictures drawn at
    build time; a slider moved with the keyboard shows another picture, with its own alt text
    and message. No widget of that cell is left with a dead slider."""
    context, page, recorder, _response, errors = _open(
        browser, f"{server}/{edition}/07_inspecting_heads.html", {"127.0.0.1"}
    )
    try:
        box = page.locator(".static-explorer")
        assert box.count() == 1
        box.scroll_into_view_if_needed()
        state = (
            "() => { const i = document.querySelector('.static-explorer img.se-picture');"
            " return [i.getAttribute('src'), i.alt, i.complete && i.naturalWidth > 0,"
            " document.querySelector('.static-explorer .se-message').textContent]; }"
        )
        seen = [page.evaluate(state)]
        page.focus(".static-explorer input.se-heads")
        page.keyboard.press("ArrowRight")  # 2 -> 3 heads
        page.wait_for_function("() => document.querySelector('img.se-picture').complete")
        seen.append(page.evaluate(state))
        page.focus(".static-explorer input.se-dropout")
        page.keyboard.press("ArrowRight")  # dropout 0.0 -> 0.1
        page.wait_for_function("() => document.querySelector('img.se-picture').complete")
        seen.append(page.evaluate(state))
        note = page.inner_text(".static-explorer-note")
        widget_views = page.evaluate(
            "() => document.querySelectorAll("
            "'script[type=\"application/vnd.jupyter.widget-view+json\"]').length"
        )
        assert errors == [] and recorder.outside == [] and recorder.failed == []
    finally:
        context.close()
    sources = [src for src, _, _, _ in seen]
    assert sources == [
        "_static/explorer07/heads2-dropout0.png",
        "_static/explorer07/heads3-dropout0.png",
        "_static/explorer07/heads3-dropout1.png",
    ]
    assert all(loaded for _, _, loaded, _ in seen), seen
    assert len({alt for _, alt, _, _ in seen}) == 3, "each picture has its own alt text"
    assert "3" in seen[1][3] and "0.1" in seen[2][3], seen
    assert "30" in note and "MB" in note, note  # the grid's size and the page weight, stated
    assert widget_views == 0, "lesson 07 still shows a widget whose sliders cannot move"


@pytest.mark.parametrize("name", ["04_dropout", "05_multihead_wrapper", "08_training_tiny_model"])
def test_a_saved_widget_shows_its_picture_without_dead_sliders(browser, server, name):
    """A widget that cannot redraw on a static page shows its saved picture and the sentence
    that says so, and no control that would look movable."""
    context, page, recorder, _response, errors = _open(
        browser, f"{server}/en/{name}.html", {"127.0.0.1"}
    )
    try:
        page.wait_for_selector(".widget-subarea > .jupyter-widgets", state="attached")
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('.widget-subarea img'))"
            ".some((img) => img.complete && img.naturalWidth > 0)",
            timeout=30_000,
        )
        visible_controls = page.evaluate(
            "() => Array.from(document.querySelectorAll('.widget-subarea :is(.widget-slider,"
            " .widget-dropdown, .widget-toggle-buttons, input, select)'))"
            ".filter((el) => el.offsetParent !== null).length"
        )
        notes = page.eval_on_selector_all("p.widget-note", "(ps) => ps.map((p) => p.innerText)")
        assert errors == [] and recorder.outside == []
    finally:
        context.close()
    assert visible_controls == 0
    assert notes and all("JupyterLab" in note for note in notes), notes
