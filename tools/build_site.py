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
{download}</body>
</html>
"""

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


def copy_notebook(source: Path, target: Path, other: str) -> None:
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
        copy_notebook(nb, target / nb.name, other)
    for nb in solutions:
        copy_notebook(nb, target / "solutions" / nb.name, other)
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


def root_page(zip_path: Path | None) -> None:
    """The page that offers both editions (and, on the web, the zip; not inside the zip)."""
    lessons, _ = lesson_files(NOTEBOOKS)
    download = ""
    if zip_path is not None:
        size = f"{zip_path.stat().st_size / 2**20:.0f} MB"
        download = DOWNLOAD.format(zip=ZIP_NAME, size=size)
    write_text(OUT / "index.html", ROOT_PAGE.format(count=len(lessons), download=download))


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
