"""Sphinx configuration of the course website, one build per edition (``tools/build_site.py``).

The edition comes from ``MHSA_SITE_EDITION`` ("en" or "zh"). The pages are the SAVED notebooks
(myst-nb, ``nb_execution_mode = "off"``): strict nbval has checked those outputs, so the site shows
exactly what a learner sees. Every script the pages load is a file of this site: MathJax, Mermaid,
require.js and the ipywidgets HTML manager come from ``site/node_modules`` (``npm ci`` from the
committed lockfile) and are copied, file by file, into ``_static/vendor/`` (see ``VENDOR``).
"""

from __future__ import annotations

import html
import json
import os
import posixpath
import re
import shutil
from pathlib import Path

SITE = Path(__file__).resolve().parent
NODE = SITE / "node_modules"
EDITION = os.environ.get("MHSA_SITE_EDITION", "en")
if EDITION not in ("en", "zh"):
    raise SystemExit(f"MHSA_SITE_EDITION must be 'en' or 'zh', got {EDITION!r}")
OTHER = "zh" if EDITION == "en" else "en"
ZH = EDITION == "zh"

project = "多头自注意力，一步一步" if ZH else "Multi-Head Self-Attention, step by step"
# Who made it, as CITATION.cff names them ("The contributors of Multi-Head Self-Attention, step
# by step"). The lesson text and figures are CC BY 4.0 (LICENSE-TEXT), the code MIT (LICENSE).
author = (
    "《多头自注意力，一步一步》的贡献者"
    if ZH
    else "the contributors of Multi-Head Self-Attention, step by step"
)
copyright = f"2026 {author}"
# The footer of every page (site/_templates/course-footer.html), one sentence per edition.
FOOTER = {
    "en": (
        "© 2026 the contributors of Multi-Head Self-Attention, step by step. "
        "Text and figures: CC BY 4.0; code: MIT licence."
    ),
    "zh": (
        "© 2026《多头自注意力，一步一步》的贡献者。"
        "正文与插图采用 CC BY 4.0 许可，代码采用 MIT 许可。"
    ),
}
language = "zh_CN" if ZH else "en"
# Chinese search needs word segmentation (jieba, in the docs extra); Sphinx uses it when installed.
html_search_language = "zh" if ZH else "en"


def glossary_words(glossary: list[dict]) -> list[str]:
    """The Chinese words of the glossary as a reader types them: each alternative of "A / B",
    without its bracketed part ("缓冲区 (register_buffer)" -> "缓冲区")."""
    words = []
    for entry in glossary:
        for part in entry["zh"].split("/"):
            word = re.sub(r"[(（][^)）]*[)）]", "", part).strip()
            if re.search(r"[\u4e00-\u9fff]", word):
                words.append(word)
    return words


def single_characters(words: list[str]) -> set[str]:
    """The glossary's one-character words (熵, 联, 句; 键 and 值 of "查询、键、值"): Sphinx's
    Chinese index drops every one-character word unless told to keep these."""
    return {
        piece
        for word in words
        for piece in re.split(r"[、，,\s]+", word)
        if len(piece) == 1 and re.match(r"[\u4e00-\u9fff]", piece)
    }


if ZH:
    # jieba splits compounds it does not know (多头注意力 -> 多头 / 注意力): teach it the course's
    # terms, so that the index holds each term whole as well as its parts.
    import logging

    import jieba
    from sphinx.search.zh import SearchChinese

    # jieba logs its progress ("Building prefix dict from the default dictionary ...", "Loading
    # model cost 1.7 seconds") at DEBUG on its own stderr handler: make site would print it.
    # Its warnings and errors still show.
    jieba.setLogLevel(logging.WARNING)

    _glossary = json.loads((SITE.parent / "data" / "glossary.json").read_text("utf-8"))
    _words = glossary_words(_glossary["terms"])
    for _word in _words:
        jieba.add_word(_word)
    _KEEP = single_characters(_words)
    _word_filter = SearchChinese.word_filter

    def _keep_glossary_characters(self, stemmed_word: str) -> bool:
        return stemmed_word in _KEEP or _word_filter(self, stemmed_word)

    SearchChinese.word_filter = _keep_glossary_characters

    # jieba's search mode gives the 2- and 3-character words inside a longer word, not longer
    # ones: 大语言模型 holds 语言模型, which it would not index there. Add every glossary word
    # that a segmented word contains.
    import sphinx.search.zh as _sphinx_zh

    _LONG = sorted((w for w in _words if len(w) >= 4), key=len)

    def _cut_for_search(sentence: str, HMM: bool = True):
        for token in jieba.cut_for_search(sentence, HMM=HMM):
            yield token
            if len(token) > 4:
                yield from (word for word in _LONG if word != token and word in token)

    _sphinx_zh.cut_for_search = _cut_for_search

extensions = ["myst_nb", "sphinxcontrib.mermaid"]
html_static_path = [str(SITE / "_static")]
html_css_files = ["course.css"]
html_js_files = ["course.js"]
exclude_patterns = ["_build", "**.ipynb_checkpoints", "scripts"]
root_doc = "index"
suppress_warnings = ["mystnb.unknown_mime_type"]

# The saved notebooks, as they are: never executed here.
nb_execution_mode = "off"
nb_merge_streams = True
# Markdown that a cell *outputs* (lesson 06's table of the forward pass) is read as MyST too, so its
# tables and $...$ formulas render as they do in JupyterLab (the default, commonmark, has neither).
nb_render_markdown_format = "myst"
# A collapsed "check" cell stays collapsed on the page (its output too).
nb_code_prompt_show = "Show {type}"
nb_code_prompt_hide = "Hide {type}"
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_fence_as_directive = ["mermaid"]
myst_heading_anchors = 3

# MathJax 3 with SVG output: one file, no web fonts to fetch, works from file:// too.
mathjax_path = "vendor/mathjax/tex-svg-full.js"
mathjax3_config = {
    "tex": {"inlineMath": [["\\(", "\\)"]], "displayMath": [["\\[", "\\]"]]},
    "options": {"enableMenu": False},
    "loader": {"load": []},
}

# sphinxcontrib-mermaid in raw mode with the site's own copy of Mermaid (its "local" mode).
# tools/build_site.py then draws every diagram to inline SVG and drops this script, so the pages
# need no JavaScript module at all (browsers refuse ES modules from file://).
mermaid_output_format = "raw"
mermaid_use_local = "vendor/mermaid/mermaid.esm.min.mjs"
mermaid_include_elk = False
mermaid_include_zenuml = False
mermaid_init_js = 'mermaid.initialize({startOnLoad: true, theme: "neutral"});'

# The ipywidgets HTML manager renders the widgets from the state saved in each notebook.
nb_ipywidgets_js = {
    "vendor/require.min.js": {},
    "vendor/html-manager/embed-amd.js": {"data-jupyter-widgets-cdn": "vendor/none/"},
}

html_theme = "sphinx_book_theme"
html_title = project
html_favicon = str(SITE / "_static" / "favicon.svg")
html_last_updated_fmt = None
html_copy_source = False
html_show_sourcelink = False
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "use_fullscreen_button": False,
    "home_page_in_toc": True,
    "navigation_with_keys": False,
    # The theme's footer says "By {author}" and "© Copyright {copyright}." (in Chinese
    # "作者： …" with an English "Copyright"); the course's own line reads naturally in both.
    "footer_content_items": ["course-footer.html"],
}
templates_path = [str(SITE / "_templates")]
# pydata-sphinx-theme (under sphinx-book-theme) reads the start mode from the context, not from
# html_theme_options: unset, every page logs "Got invalid theme mode" and falls back to "auto".
# "light": the figures and the diagrams drawn at build time are made for a light page; the
# switcher still offers dark.
html_context = {
    "edition": EDITION,
    "other_edition": OTHER,
    "default_mode": "light",
    "course_footer": FOOTER[EDITION],
}

# The course's public repository. Empty until the course has one: then no page names another
# host. Set it (e.g. "https://github.com/OWNER/REPO") and every lesson page gets a link to its
# source and launch buttons for Binder and Colab (sphinx-book-theme's), pointing at this edition's
# notebooks in that repository.
REPOSITORY_URL = ""
REPOSITORY_BRANCH = "main"


def repository_options(url: str, edition: str, branch: str = REPOSITORY_BRANCH) -> dict:
    """sphinx-book-theme's options for a source link and launch buttons; none without a URL."""
    if not url:
        return {}
    return {
        "repository_url": url,
        "repository_branch": branch,
        "path_to_docs": "notebooks/zh" if edition == "zh" else "notebooks",
        "use_repository_button": True,
        "use_source_button": True,
        "launch_buttons": {
            "binderhub_url": "https://mybinder.org",
            "colab_url": "https://colab.research.google.com",
            "notebook_interface": "jupyterlab",
        },
    }


html_theme_options.update(repository_options(REPOSITORY_URL, EDITION))

# (file under node_modules, path under _static/vendor): only what the pages load.
VENDOR = [
    ("mathjax/es5/tex-svg-full.js", "mathjax/tex-svg-full.js"),
    ("requirejs/require.js", "require.min.js"),
    ("@jupyter-widgets/html-manager/dist/embed-amd.js", "html-manager/embed-amd.js"),
]
# The HTML manager's CSS points at its font files next to it.
VENDOR += [
    (f"@jupyter-widgets/html-manager/dist/{p.name}", f"html-manager/{p.name}")
    for p in sorted((NODE / "@jupyter-widgets/html-manager/dist").glob("*"))
    if p.suffix in (".woff", ".woff2", ".ttf", ".eot", ".svg")
]
VENDOR += [
    ("mermaid/dist/mermaid.esm.min.mjs", "mermaid/mermaid.esm.min.mjs"),
    *[
        (
            f"mermaid/dist/chunks/mermaid.esm.min/{p.name}",
            f"mermaid/chunks/mermaid.esm.min/{p.name}",
        )
        for p in sorted((NODE / "mermaid/dist/chunks/mermaid.esm.min").glob("*.mjs"))
    ],
]

WIDGET_VIEW = re.compile(
    r'<script type="application/vnd\.jupyter\.widget-view\+json">.*?</script>', re.S
)
OTHER_LABEL = {"en": "中文版：本页", "zh": "English edition: this page"}
LESSON_PAGE = re.compile(r"^(?:solutions/)?\d\d_\w+$")
DOWNLOAD_LABEL = {
    "en": "Download this notebook (.ipynb)",
    "zh": "下载本课的笔记本（.ipynb）",
}
DOWNLOAD_TITLE = {
    "en": "Runs in JupyterLab with the course package installed (README, Quick start)",
    "zh": "在装好课程包的 JupyterLab 中运行（见 README 的 Quick start）",
}
WIDGET_NOTE = {
    "en": (
        "This is the widget as the notebook saved it; its sliders are left out here, since "
        "nothing on this page could redraw it. They work in JupyterLab (<code>make lab</code>)."
    ),
    "zh": (
        "这里是笔记本保存下来的控件。网页上没有什么能重画它，所以这里不显示滑块。"
        "在 JupyterLab 中运行笔记本（<code>make lab</code>），滑块就能拖动了。"
    ),
}


def _copy_vendor(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    missing = [src for src, _ in VENDOR if not (NODE / src).is_file()]
    if missing:
        raise RuntimeError(
            f"missing {missing[0]} in {NODE}: run `npm ci` in site/ (make site does)"
        )
    for src, dst in VENDOR:
        target = Path(app.outdir) / "_static" / "vendor" / dst
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(NODE / src, target)


def _split_chinese_queries(app, exception) -> None:
    # The query typed in the browser is cut into the index's own words (site/_static/zh_search.js
    # defines splitQuery; language_data.js is loaded before Sphinx's searchtools.js).
    data = Path(app.outdir) / "_static" / "language_data.js"
    if exception is None and ZH and data.is_file():
        text = data.read_text(encoding="utf-8")
        if "var splitQuery" not in text:
            splitter = (SITE / "_static" / "zh_search.js").read_text(encoding="utf-8")
            data.write_text(text + "\n" + splitter, encoding="utf-8")


def _fix_chinese_stemmer(app, exception) -> None:
    # Sphinx 9.0 names the stemmer after the language ("ChineseStemmer") while its Chinese search
    # ships the English one for Latin words, so the search page fails; point it at that one.
    data = Path(app.outdir) / "_static" / "language_data.js"
    if exception is None and ZH and data.is_file():
        text = data.read_text(encoding="utf-8")
        if "var ChineseStemmer" not in text and "var EnglishStemmer" in text:
            text = text.replace(
                "window.Stemmer = ChineseStemmer;", "window.Stemmer = EnglishStemmer;"
            )
            data.write_text(text, encoding="utf-8")


# --- Search snippets ---------------------------------------------------------------------------
# Sphinx's search page fetches each result's page and cuts the snippet from its main block, where
# it meets code, printed tensors, diagram labels and TeX source; and a page opened from file://
# may not fetch at all (no snippet). So each page's readable text is written at build time, from
# the doctree Sphinx indexed, into _static/search_texts.js, a script of the search page only,
# which answers Sphinx's fetch of a page with that text (site/_static/search_snippets.js). Sphinx
# still cuts and highlights the snippet, section anchors included.
SEARCH_TEXTS = "search_texts.js"
TEX_SYMBOLS = {
    "sum": "Σ", "prod": "Π", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥", "ne": "≠",
    "neq": "≠", "approx": "≈", "infty": "∞", "to": "→", "rightarrow": "→", "leftarrow": "←",
    "in": "∈", "times": "×", "cdot": "·", "cdots": "…", "ldots": "…", "dots": "…", "odot": "⊙",
    "top": "ᵀ", "pm": "±", "mid": "|", "lvert": "|", "rvert": "|", "lVert": "‖", "rVert": "‖",
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "theta": "θ", "lambda": "λ", "mu": "μ", "sigma": "σ", "tau": "τ", "pi": "π", "phi": "φ",
    "omega": "ω", "Sigma": "Σ", "Delta": "Δ", "ell": "ℓ", "partial": "∂",
    "lfloor": "⌊", "rfloor": "⌋", "mathbf": "", "mathrm": "", "boldsymbol": "",
}  # fmt: skip
TEX_REWRITES = [
    (re.compile(r"\\\\"), "; "),  # a line break of a multi-line formula
    (
        re.compile(
            r"\\(?:(?:left|right|[bB]igg?[lr]?|displaystyle|quad|qquad)(?![a-zA-Z])|[,;:!> ])"
        ),
        " ",
    ),
    (re.compile(r"\\(?:begin|end)\{[^{}]*\}"), " "),
    (re.compile(r"\\([_%#$])"), r"\1"),  # escaped characters: head\_dim
    (re.compile(r"&"), " "),
    (re.compile(r"\^\s*(?:\{\s*\\top\s*\}|\\top(?![a-zA-Z]))"), "ᵀ"),
    (re.compile(r"\\mathbb\{R\}"), "ℝ"),
]
TEX_SIMPLE = re.compile(r"[\w'.,ᵀ√]+|\([^()]*\)")
TEX_GROUPS = [
    (  # \frac{a}{b} -> a/b, each side in parentheses unless it is one token
        re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}"),
        lambda m: f" {_tex_group(m.group(1))}/{_tex_group(m.group(2))} ",
    ),
    (re.compile(r"\\sqrt\s*\{([^{}]*)\}"), lambda m: "√" + _tex_group(m.group(1))),
    (
        re.compile(
            r"\\(?:mathrm|mathbf|mathit|mathcal|mathsf|mathbb|boldsymbol|text|textbf|textit|"
            r"operatorname|hat|tilde|bar|vec|overline|underbrace|overbrace)\s*\{([^{}]*)\}"
        ),
        lambda m: m.group(1),
    ),
    (re.compile(r"([\^_])\s*\{([^{}]*)\}"), lambda m: m.group(1) + _tex_group(m.group(2))),
    # a group of its own (not a command's argument, not \frac's second): its braces go
    (re.compile(r"(?<![\\\w}^_])\{([^{}]*)\}"), lambda m: m.group(1)),
]


def _tex_group(text: str) -> str:
    text = text.strip()
    return text if TEX_SIMPLE.fullmatch(text) else f"({text})"


def readable_tex(tex: str) -> str:
    """A formula as a snippet can show it: \\frac{e^{x_i}}{\\sum_j e^{x_j}} -> e^x_i/(Σ_j e^x_j)."""
    text = tex
    for pattern, replacement in TEX_REWRITES:
        text = pattern.sub(replacement, text)
    previous = None
    while previous != text:  # innermost groups first
        previous = text
        for pattern, rewrite in TEX_GROUPS:
            text = pattern.sub(rewrite, text)
    # \sum -> Σ, \log -> log; a space after it where a letter or digit follows (\log 64, \log w)
    text = re.sub(
        r"\\([a-zA-Z]+)(?=([A-Za-z0-9\\])?)",
        lambda m: TEX_SYMBOLS.get(m.group(1), m.group(1)) + (" " if m.group(2) else ""),
        text,
    )
    text = re.sub(r"[\\{}]", "", text)
    return re.sub(r"\s+", " ", text).strip()


def _skipped(node) -> bool:
    """What a snippet leaves out: code (a cell's input, its printed output), raw HTML (widgets,
    the static explorer), pictures, diagrams (their Mermaid source), comments."""
    from docutils import nodes

    if isinstance(
        node,
        (nodes.literal_block, nodes.raw, nodes.image, nodes.comment, nodes.system_message),
    ):
        return True
    if type(node).__name__ in ("mermaid", "toctree"):
        return True
    return isinstance(node, nodes.container) and "cell_input" in node.get("classes", [])


def snippet_html(node) -> str:
    """A doctree as the search page reads it: its text, formulas readable, in <section id>s as on
    the page (Sphinx cuts a section's snippet by its anchor)."""
    from docutils import nodes

    if isinstance(node, nodes.Text):
        return html.escape(str(node), quote=False)
    if isinstance(node, (nodes.math, nodes.math_block)):
        return " " + html.escape(readable_tex(node.astext()), quote=False) + " "
    if _skipped(node):
        return " "
    inner = "".join(snippet_html(child) for child in node.children)
    if isinstance(node, nodes.section) and node.get("ids"):
        return f'<section id="{html.escape(node["ids"][0])}">{inner}</section>'
    if isinstance(node, nodes.Inline):
        return inner
    return inner + " "  # blocks (paragraphs, table cells, list items) read as separate words


def _write_search_texts(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    texts = {}
    for docname in sorted(app.env.found_docs):
        body = re.sub(r"\s+", " ", snippet_html(app.env.get_doctree(docname))).strip()
        texts[docname] = f'<div role="main">{body}</div>'
    script = (SITE / "_static" / "search_snippets.js").read_text(encoding="utf-8")
    target = Path(app.outdir) / "_static" / SEARCH_TEXTS
    target.write_text(
        "// Each page's readable text for the search snippets (written by site/conf.py).\n"
        f"var MHSA_SEARCH_TEXTS = {json.dumps(texts, ensure_ascii=False)};\n{script}",
        encoding="utf-8",
    )


def _page_context(app, pagename, templatename, context, doctree) -> None:
    if pagename == "search":
        app.add_js_file(SEARCH_TEXTS)
    # The same page of the other edition: both are built from the same file names.
    root = posixpath.relpath("/", posixpath.dirname("/" + pagename))
    href = posixpath.normpath(posixpath.join(root, "..", OTHER, pagename + ".html"))
    context["other_edition_href"] = href
    context["other_edition_label"] = OTHER_LABEL[EDITION]
    context["other_edition_lang"] = "zh-CN" if OTHER == "zh" else "en"
    context["site_root_href"] = posixpath.normpath(posixpath.join(root, "..", "index.html"))
    body = context.get("body")
    if not body:
        return
    download = ""
    if LESSON_PAGE.match(pagename):
        # tools/build_site.py copies each saved notebook to notebooks/ beside the pages.
        notebook = posixpath.relpath(
            "/notebooks/" + pagename + ".ipynb", posixpath.dirname("/" + pagename)
        )
        download = (
            f'<a class="notebook-download" href="{notebook}" download '
            f'title="{DOWNLOAD_TITLE[EDITION]}">{DOWNLOAD_LABEL[EDITION]}</a> '
        )
    link = (
        f'<p class="other-edition">{download}<a class="other-edition-link" href="{href}" '
        f'hreflang="{context["other_edition_lang"]}">{OTHER_LABEL[EDITION]}</a></p>'
    )
    # Each widget shows its saved state; a sentence under it says where it moves.
    note = f'<p class="widget-note">{WIDGET_NOTE[EDITION]}</p>'
    body = WIDGET_VIEW.sub(lambda m: m.group(0) + note, body)
    context["body"] = link + body


def setup(app):
    app.connect("html-page-context", _page_context)
    app.connect("build-finished", _copy_vendor)
    app.connect("build-finished", _fix_chinese_stemmer)
    app.connect("build-finished", _split_chinese_queries)
    app.connect("build-finished", _write_search_texts)
    return {"parallel_read_safe": True}


def _render_image_with_alt():
    """myst-nb reads an image output's width and height from its metadata; read ``alt`` too.

    ``mhsa_helpers.ui.alt_text`` saves every figure's alt text there (one per figure, where cell
    metadata could only give one per cell).
    """
    from docutils import nodes
    from myst_nb.core.render import NbElementRenderer

    original = NbElementRenderer.render_image
    if getattr(original, "reads_alt", False):
        return

    def render_image(self, data):
        rendered = original(self, data)
        alt = data.output_metadata.get(data.mime_type, {}).get("alt")
        for node in rendered:
            if alt and isinstance(node, nodes.image) and "alt" not in node:
                node["alt"] = str(alt)
        return rendered

    render_image.reads_alt = True
    NbElementRenderer.render_image = render_image


_render_image_with_alt()
