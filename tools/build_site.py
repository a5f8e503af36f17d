"""Build the course website from the SAVED notebooks into build/site/ (``make site`` runs this).

    python tools/build_site.py            # both editions, diagrams drawn, zip written
    python tools/build_site.py --no-zip   # skip the download

Steps: each edition's lessons and solutions are copied into build/site-src/{en,zh}/ with a
generated index page; Sphinx (myst-nb, sphinx-book-theme; ``site/conf.py``) builds the two
editions side by side, without executing anything; the root page offers both; every Mermaid
diagram is drawn once, at build time, into inline SVG by Mermaid (from site/node_modules) in
headless Chromium, so the pages load no JavaScript module and open from ``file://`` too; then
build/site/download/ gets a zip of the whole site.

Needs ``site/node_modules`` (``npm ci --prefix site``) and Debian's ``chromium``.
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toolkit import write_text  # tools/_toolkit.py: a temporary file beside it, renamed

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
SITE_SRC = ROOT / "site"
NODE = SITE_SRC / "node_modules"
STAGE = ROOT / "build" / "site-src"
OUT = ROOT / "build" / "site"
ZIP_NAME = "mhsa-course-site.zip"
EDITIONS = {"en": NOTEBOOKS, "zh": NOTEBOOKS / "zh"}

INDEX = {
    "en": {
        "title": "Multi-Head Self-Attention, step by step",
        "intro": (
            "Ordered lessons that take you from a plain dot product to the multi-head attention "
            "block that GPT models run. Every page shows a notebook as it was saved and "
            "checked: the numbers, figures and diagrams are the ones you get when you run it. "
            "To run the lessons yourself, clone the repository and run `make lab` (see its "
            "README)."
        ),
        "lessons": "Lessons",
        "solutions": "Solutions to the exercises",
    },
    "zh": {
        "title": "多头自注意力，一步一步",
        "intro": (
            "这套课程按顺序讲解，从最简单的点积开始，一直讲到 GPT 模型中的多头注意力模块。"
            "每一页都是保存好、并经过检查的笔记本：页面上的数字、图和示意图，"
            "就是你自己运行时得到的结果。想亲手运行，请克隆仓库后运行 `make lab`（见 README）。"
        ),
        "lessons": "课程",
        "solutions": "练习参考答案",
    },
}

ROOT_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Multi-Head Self-Attention, step by step · 多头自注意力，一步一步</title>
<link rel="icon" href="favicon.svg" type="image/svg+xml">
<style>
body {{ font-family: system-ui, "Noto Sans CJK SC", sans-serif; max-width: 44rem; margin: 4rem auto;
       padding: 0 1.5rem; line-height: 1.6; color: #222; }}
h1 {{ font-size: 1.9rem; margin-bottom: .2rem; }}
.editions {{ display: flex; gap: 1.5rem; margin: 2rem 0; flex-wrap: wrap; }}
.editions a {{ flex: 1 1 16rem; border: 1px solid #ccd; border-radius: .5rem; padding: 1.2rem;
              text-decoration: none; color: inherit; }}
.editions a:hover {{ border-color: #36c; }}
.editions strong {{ display: block; font-size: 1.25rem; color: #36c; }}
.download {{ border-top: 1px solid #ddd; padding-top: 1rem; font-size: .95rem; }}
.lessons {{ display: flex; gap: 1.5rem; flex-wrap: wrap; }}
.lessons section {{ flex: 1 1 18rem; min-width: 0; }}
.lessons h2 {{ font-size: 1.1rem; margin: .5rem 0; }}
.lessons ol {{ padding-left: 0; list-style: none; margin: 0; }}
.lessons li {{ margin: .25rem 0; overflow-wrap: anywhere; }}
.lessons .num {{ display: inline-block; width: 1.8rem; color: #666; }}
</style>
</head>
<body>
<h1>Multi-Head Self-Attention, step by step</h1>
<p lang="zh-CN">多头自注意力，一步一步</p>
<p>From a plain dot product to the attention block of a GPT model, in {count} lessons with
worked solutions. Choose an edition: the two have the same pages, and every page links to its
twin in the other language.</p>
<div class="editions">
<a href="en/index.html" hreflang="en" id="edition-en"><strong>English</strong>
Read the course in English.</a>
<a href="zh/index.html" hreflang="zh-CN" lang="zh-CN" id="edition-zh"><strong>中文版</strong>
用中文阅读这套课程。</a>
</div>
<div class="lessons">
{lesson_lists}
</div>
{download}</body>
</html>
"""

LESSON_LIST = """<section id="lessons-{edition}" lang="{lang}">
<h2>{heading}</h2>
<ol>
{items}
</ol>
</section>"""
LIST_HEADING = {"en": "The lessons", "zh": "课程目录"}

PRE_MERMAID = re.compile(r'<pre\b[^>]*class="mermaid"[^>]*>(.*?)</pre>', re.S)
MERMAID_SCRIPT = re.compile(r'<script type="module">\s*import mermaid\b.*?</script>\s*', re.S)


def fail(message: str) -> None:
    print(f"build_site: {message}", file=sys.stderr)
    raise SystemExit(2)  # an expected failure: one message, exit 2, as every tool in tools/


def lesson_files(folder: Path) -> tuple[list[Path], list[Path]]:
    lessons = sorted(folder.glob("[0-9][0-9]_*.ipynb"))
    solutions = sorted((folder / "solutions").glob("[0-9][0-9]_*_solutions.ipynb"))
    return lessons, solutions


# A lesson's link to its twin in the other edition (lesson 00 has one): the notebooks link
# "zh/NN_name.ipynb" or "../NN_name.ipynb", which on the site is the other edition's page.
TWIN_LINK = re.compile(r"\[([^\]]+)\]\((?:zh/|\.\./)([0-9]{2}_\w+)\.ipynb\)")


NBVAL_MARKER = "# NBVAL_IGNORE_OUTPUT"

# A heading line of a markdown cell ("### Check (for CI; collapsed)").
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


def is_check_cell(cell: dict) -> bool:
    """A cell that serves the course's tests: a code cell JupyterLab opens fully collapsed
    (source and outputs hidden, ``jupyter={"source_hidden": true, "outputs_hidden": true}`` in
    its script; both editions' lessons 01-10 have one)."""
    folded = cell.get("metadata", {}).get("jupyter", {})
    return (
        cell["cell_type"] == "code"
        and bool(folded.get("source_hidden"))
        and bool(folded.get("outputs_hidden"))
    )


def check_headings_off_the_toc(cells: list[dict]) -> None:
    """The heading of the markdown cell just before a check cell ("Check (for CI; collapsed)",
    "检查（供 CI 使用，已折叠）") introduces that cell, not a part of the lesson: on the page it
    stays as a rubric (an informal heading) and leaves the table of contents."""
    for cell, following in itertools.pairwise(cells):
        if cell["cell_type"] == "markdown" and is_check_cell(following):
            text = "".join(cell["source"])
            cell["source"] = HEADING.sub(lambda m: f"```{{rubric}} {m.group(2)}\n```", text)


# Lesson 07's explorer on the site, without a kernel: its pictures for a grid of slider values,
# drawn at build time by the explorer's own code (mhsa_helpers.ui.explorers.attention), swapped
# by two sliders (site/_static/course.js). 5 and 7 heads do not divide d_out = 24 (the explorer
# says so instead of drawing), so the heads slider offers the other six values.
EXPLORER_CALL = "mh.attention_explorer("
EXPLORER_HEADS = (1, 2, 3, 4, 6, 8)
EXPLORER_DROPOUT = (0.0, 0.1, 0.2, 0.3, 0.5)
EXPLORER_START = (2, 0.0)
EXPLORER_DIR = "_static/explorer07"
EXPLORER_TEXT = {
    "en": {
        "heads": "heads",
        "dropout": "dropout",
        "note": (
            "Computed when this site was built, without a kernel: {count} pictures ({heads} head "
            "counts × {rates} dropout rates; train mode, scale 3, seed 123), {size} in all, each "
            "loaded when you pick it. 5 and 7 heads do not divide d_out = 24. In JupyterLab "
            "(<code>make lab</code>) the explorer also moves the scale, the seed, the sentence and "
            "the mode."
        ),
    },
    "zh": {
        "heads": "头数",
        "dropout": "丢弃率",
        "note": (
            "这些图是在生成本网站时算好的，不需要内核：共 {count} 幅"
            "（{heads} 种头数 × {rates} 种丢弃率；训练模式，缩放 3，随机种子 123），"
            "合计 {size}，选到哪一幅才加载哪一幅。5 和 7 不能整除 d_out = 24，所以不在其中。"
            "在 JupyterLab 中（<code>make lab</code>），探索器还能调节缩放、随机种子、句子和模式。"
        ),
    },
}
FRAMES: dict[str, list] = {}


def explorer_frames(edition: str) -> list:
    """The explorer's pictures for EXPLORER_HEADS x EXPLORER_DROPOUT in the edition's language."""
    if edition not in FRAMES:
        os.environ.setdefault("MPLBACKEND", "Agg")
        from mhsa_helpers.i18n import using_language
        from mhsa_helpers.ui.explorers.attention import explorer_frames as draw

        with using_language(edition):
            FRAMES[edition] = draw(EXPLORER_HEADS, EXPLORER_DROPOUT)
    return FRAMES[edition]


def frame_file(frame) -> str:
    return f"heads{frame.heads}-dropout{round(frame.dropout * 10)}.png"


def static_explorer(edition: str) -> str:
    """The HTML that stands in for lesson 07's widget: the start picture and two sliders."""
    frames = explorer_frames(edition)
    text = EXPLORER_TEXT[edition]
    start = next(f for f in frames if (f.heads, f.dropout) == EXPLORER_START)
    size = sum(len(f.png) for f in frames)
    data = [
        {
            "heads": f.heads,
            "dropout": f.dropout,
            "src": f"{EXPLORER_DIR}/{frame_file(f)}",
            "alt": f.alt,
            "message": f.message,
        }
        for f in frames
    ]
    note = text["note"].format(
        count=len(frames),
        heads=len(EXPLORER_HEADS),
        rates=len(EXPLORER_DROPOUT),
        size=f"{size / 2**20:.1f} MB",
    )
    heads_index = EXPLORER_HEADS.index(EXPLORER_START[0])
    dropout_index = EXPLORER_DROPOUT.index(EXPLORER_START[1])
    frames_json = html.escape(json.dumps(data, ensure_ascii=False))
    return (
        f'<div class="static-explorer" data-frames="{frames_json}">'
        f'<div class="se-controls">'
        f'<label>{text["heads"]} <input type="range" class="se-heads" min="0" '
        f'max="{len(EXPLORER_HEADS) - 1}" step="1" value="{heads_index}" '
        f'data-values="{html.escape(json.dumps(EXPLORER_HEADS))}"> '
        f'<output class="se-heads-value">{EXPLORER_START[0]}</output></label>'
        f'<label>{text["dropout"]} <input type="range" class="se-dropout" min="0" '
        f'max="{len(EXPLORER_DROPOUT) - 1}" step="1" value="{dropout_index}" '
        f'data-values="{html.escape(json.dumps(EXPLORER_DROPOUT))}"> '
        f'<output class="se-dropout-value">{EXPLORER_START[1]:.1f}</output></label></div>'
        f'<p class="se-message">{html.escape(start.message)}</p>'
        f'<img class="se-picture" src="{EXPLORER_DIR}/{frame_file(start)}" '
        f'alt="{html.escape(start.alt)}">'
        f'<p class="widget-note static-explorer-note">{note}</p></div>'
    )


def write_explorer_frames() -> int:
    """The pictures static_explorer refers to, into each edition's site."""
    written = 0
    for edition, frames in FRAMES.items():
        folder = OUT / edition / EXPLORER_DIR
        folder.mkdir(parents=True, exist_ok=True)
        for frame in frames:
            (folder / frame_file(frame)).write_bytes(frame.png)
            written += 1
    return written


def copy_notebook(source: Path, target: Path, other: str, edition: str = "en") -> None:
    """The saved notebook, outputs untouched, shown as a reader should see it.

    Links to the other edition point at its page; the nbval marker line is left out of the shown
    code; a cell JupyterLab opens collapsed (the "check" cells) is folded on the page too.
    """
    nb = json.loads(source.read_text(encoding="utf-8"))
    unlabelled = sum(
        1
        for cell in nb["cells"]
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
        and not output.get("metadata", {}).get("image/png", {}).get("alt")
    )
    if unlabelled:
        print(
            f"build_site: {source.relative_to(ROOT)} has {unlabelled} figure(s) saved without alt "
            f"text; rebuild it: python tools/build_notebooks.py <its script>"
        )
    check_headings_off_the_toc(nb["cells"])
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            lines = "".join(cell["source"]).splitlines(keepends=True)
            cell["source"] = "".join(line for line in lines if line.strip() != NBVAL_MARKER)
            folded = cell.get("metadata", {}).get("jupyter", {})
            tags = cell.setdefault("metadata", {}).setdefault("tags", [])
            if folded.get("source_hidden"):
                tags.append("hide-input")
            if folded.get("outputs_hidden"):
                tags.append("hide-output")
            if EXPLORER_CALL in cell["source"]:
                # The widget's saved state is one moment of a live explorer; the site shows
                # the static explorer instead (no dead slider).
                cell["outputs"] = [
                    {
                        "output_type": "display_data",
                        "metadata": {},
                        "data": {"text/html": static_explorer(edition)},
                    }
                ]
        if cell["cell_type"] == "markdown":
            text = "".join(cell["source"])
            cell["source"] = TWIN_LINK.sub(
                lambda m: f'<a href="../{other}/{m.group(2)}.html">{m.group(1)}</a>', text
            )
    target.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")


def stage(edition: str) -> Path:
    """build/site-src/EDITION: the saved notebooks as they are, and an index page."""
    lessons, solutions = lesson_files(EDITIONS[edition])
    if not lessons:
        fail(f"no lessons found in {EDITIONS[edition]}")
    target = STAGE / edition
    shutil.rmtree(target, ignore_errors=True)
    (target / "solutions").mkdir(parents=True)
    other = "zh" if edition == "en" else "en"
    for nb in lessons:
        copy_notebook(nb, target / nb.name, other, edition)
    for nb in solutions:
        copy_notebook(nb, target / "solutions" / nb.name, other, edition)
    text = INDEX[edition]
    toc_lessons = "\n".join(nb.stem for nb in lessons)
    toc_solutions = "\n".join(f"solutions/{nb.stem}" for nb in solutions)
    (target / "index.md").write_text(
        f"# {text['title']}\n\n{text['intro']}\n\n"
        f"```{{toctree}}\n:caption: {text['lessons']}\n:maxdepth: 1\n\n{toc_lessons}\n```\n\n"
        f"```{{toctree}}\n:caption: {text['solutions']}\n:maxdepth: 1\n\n{toc_solutions}\n```\n",
        encoding="utf-8",
    )
    return target


def sphinx(editions: list[str]) -> None:
    """Build the editions side by side (one process each: the course targets 2 cores)."""
    running = []
    for edition in editions:
        source = stage(edition)
        env = {**os.environ, "MHSA_SITE_EDITION": edition}
        log = (STAGE / f"{edition}.log").open("w")
        command = [
            sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E",
            "-c", str(SITE_SRC), "-d", str(STAGE / f"{edition}.doctrees"),
            str(source), str(OUT / edition),
        ]  # fmt: skip
        running.append((edition, subprocess.Popen(command, env=env, stdout=log, stderr=log), log))
    for edition, process, log in running:
        process.wait()
        log.close()
        output = (STAGE / f"{edition}.log").read_text(encoding="utf-8")
        if process.returncode != 0:
            lines = [line for line in output.splitlines() if line.strip()] or ["(no output)"]
            where = (STAGE / f"{edition}.log").relative_to(ROOT)
            fail(
                f"Sphinx failed for the {edition} edition: {lines[-1].strip()} (all of it: {where})"
            )
        if output.strip():
            print(f"[{edition}] Sphinx said:\n{output.strip()}")


def mermaid_pages() -> list[Path]:
    """Pages with a diagram or with sphinxcontrib-mermaid's script (search and index pages too)."""
    return [
        page
        for page in sorted(OUT.rglob("*.html"))
        if PRE_MERMAID.search(text := page.read_text(encoding="utf-8")) or "import mermaid" in text
    ]


def draw_mermaid() -> int:
    """Replace every ``<pre class="mermaid">`` by the SVG Mermaid draws from it, in Chromium."""
    pages = mermaid_pages()
    if not pages:
        return 0
    chromium = shutil.which("chromium")
    if chromium is None:
        fail(
            "the Mermaid diagrams are drawn at build time in Debian's chromium: "
            "apt-get install chromium"
        )
    from playwright.sync_api import sync_playwright

    script = NODE / "mermaid" / "dist" / "mermaid.min.js"
    if not script.is_file():
        fail(f"{script} is missing: run `npm ci --prefix site` (make site does)")
    drawn = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = browser.new_page()
        # The course's pages use Noto Sans CJK for Chinese; measure the labels in the same font.
        page.set_content(
            '<html><body style="font-family: sans-serif"><div id="scratch"></div></body></html>'
        )
        page.add_script_tag(path=str(script))
        page.evaluate(
            "() => mermaid.initialize({startOnLoad: false, theme: 'neutral',"
            " securityLevel: 'strict', fontFamily: 'sans-serif', htmlLabels: false,"
            " flowchart: {htmlLabels: false}})"
        )
        for number, path in enumerate(pages):
            text = path.read_text(encoding="utf-8")
            count = 0

            def svg(match: re.Match, number: int = number) -> str:
                nonlocal count
                count += 1
                code = html.unescape(match.group(1)).strip()
                result = page.evaluate(
                    "async ([id, code]) => (await mermaid.render(id, code)).svg",
                    [f"mermaid-{number}-{count}", code],
                )
                label = html.escape(code.splitlines()[0] if code else "diagram")
                return (
                    f'<div class="mermaid" data-processed="true" role="figure" '
                    f'aria-label="{label}">{result}</div>'
                )

            text = PRE_MERMAID.sub(svg, text)
            text = MERMAID_SCRIPT.sub("", text)
            write_text(path, text)  # a page rewritten in place: through a temporary file
            drawn += count
        browser.close()
    return drawn


def write_zip() -> Path:
    download = OUT / "download"
    download.mkdir(exist_ok=True)
    target = download / ZIP_NAME
    partial = target.with_suffix(".zip.part")
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for path in sorted(OUT.rglob("*")):
            if path.is_file() and download not in path.parents:
                archive.write(path, Path("mhsa-course-site") / path.relative_to(OUT))
    partial.replace(target)
    return target


DOWNLOAD = """<p class="download"><a href="download/{zip}" id="download-zip" download>Download the
whole site as a zip</a> ({size}) to read it offline: unpack it and open <code>index.html</code>.
<span lang="zh-CN">也可以<a href="download/{zip}">下载整个网站的压缩包</a>（{size}）离线阅读，
解压后打开 <code>index.html</code>。</span></p>
"""


def notebook_title(path: Path) -> str:
    """A lesson's title: the first heading of its first markdown cell, without its number."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return re.sub(r"^\d\d\s*·\s*", "", line[2:]).strip()
    return path.stem


def lesson_lists() -> str:
    """Both editions' lessons, each title linked to its page."""
    sections = []
    for edition, folder in EDITIONS.items():
        lessons, _ = lesson_files(folder)
        items = "\n".join(
            f'<li><span class="num">{nb.name[:2]}</span>'
            f'<a href="{edition}/{nb.stem}.html">{html.escape(notebook_title(nb))}</a></li>'
            for nb in lessons
        )
        sections.append(
            LESSON_LIST.format(
                edition=edition,
                lang="zh-CN" if edition == "zh" else "en",
                heading=LIST_HEADING[edition],
                items=items,
            )
        )
    return "\n".join(sections)


def copy_downloads() -> int:
    """Each edition's saved notebooks, as they are, in EDITION/notebooks/ (pages link them)."""
    copied = 0
    for edition, folder in EDITIONS.items():
        lessons, solutions = lesson_files(folder)
        for nb in lessons + solutions:
            target = OUT / edition / "notebooks" / nb.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(nb, target)
            copied += 1
    return copied


def root_page(zip_path: Path | None) -> None:
    """The page that offers both editions and lists their lessons (and, on the web, the zip;
    not inside the zip)."""
    lessons, _ = lesson_files(NOTEBOOKS)
    download = ""
    if zip_path is not None:
        size = f"{zip_path.stat().st_size / 2**20:.0f} MB"
        download = DOWNLOAD.format(zip=ZIP_NAME, size=size)
    shutil.copyfile(SITE_SRC / "_static" / "favicon.svg", OUT / "favicon.svg")
    text = ROOT_PAGE.format(count=len(lessons), download=download, lesson_lists=lesson_lists())
    write_text(OUT / "index.html", text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-zip", action="store_true", help="do not write the offline zip")
    args = parser.parse_args(argv)
    if not (NODE / "mathjax").is_dir():
        fail(f"{NODE} is missing: run `npm ci --prefix site` first (make site does)")
    start = time.perf_counter()
    shutil.rmtree(OUT, ignore_errors=True)
    timings = {}
    sphinx(list(EDITIONS))
    timings["sphinx"] = time.perf_counter() - start
    # myst-nb keeps copies of the notebooks beside the output folder; the pages do not use them.
    shutil.rmtree(OUT / "jupyter_execute", ignore_errors=True)
    downloads = copy_downloads()
    explorer_pictures = write_explorer_frames()
    drawn = draw_mermaid()
    # With every diagram drawn, no page loads Mermaid: leave its copies out of the site and zip.
    for edition in EDITIONS:
        shutil.rmtree(OUT / edition / "_static" / "vendor" / "mermaid", ignore_errors=True)
    timings["mermaid"] = time.perf_counter() - start
    # The root page first (so that it is in the zip), then again with the zip's size.
    root_page(None)
    zip_path = None if args.no_zip else write_zip()
    timings["zip"] = time.perf_counter() - start
    root_page(zip_path)
    pages = sum(1 for _ in OUT.rglob("*.html"))
    summary = {
        "pages": pages,
        "mermaid_diagrams": drawn,
        "notebooks_to_download": downloads,
        "static_explorer_pictures": explorer_pictures,
        "seconds_after": {name: round(t, 1) for name, t in timings.items()},
    }
    print(
        f"build/site: {json.dumps(summary)}"
        + (f", zip: {zip_path.relative_to(ROOT)}" if zip_path else "")
    )
    return 0


if __name__ == "__main__":
    import _toolkit  # tools/_toolkit.py: any other expected failure is one line and exit 2

    _toolkit.run(main, "build_site")
