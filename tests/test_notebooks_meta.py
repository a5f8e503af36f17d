"""Every notebook is saved after one clean top-to-bottom run, paired with its jupytext script.

Strict nbval (``make test``) re-executes the notebooks and compares their outputs; these checks
catch what nbval cannot: a notebook saved unexecuted (nbval would compare nothing), a stale pairing
with the reviewed script, a missing kernelspec, a hidden NBVAL_SKIP.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIR = ROOT / "notebooks"
ZH_DIR = NOTEBOOK_DIR / "zh"
NOTEBOOKS = [
    *sorted(NOTEBOOK_DIR.glob("*.ipynb")),
    *sorted(NOTEBOOK_DIR.glob("solutions/*.ipynb")),
    *sorted(ZH_DIR.glob("*.ipynb")),
    *sorted(ZH_DIR.glob("solutions/*.ipynb")),
]
LESSONS = sorted(NOTEBOOK_DIR.glob("[0-9][0-9]_*.ipynb"))
ZH_LESSONS = sorted(ZH_DIR.glob("[0-9][0-9]_*.ipynb"))
IDS = [str(p.relative_to(NOTEBOOK_DIR)) for p in NOTEBOOKS]


def load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def code_cells(nb: dict) -> list[dict]:
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell) -> str:
    text = cell["source"] if isinstance(cell, dict) else cell.source
    return ("".join(text) if isinstance(text, list) else text).strip()


def test_there_are_lessons():
    assert [p.name[:2] for p in LESSONS][:1] == ["00"]
    assert len({p.name[:2] for p in LESSONS}) == len(LESSONS), "two lessons share a number"


def test_the_chinese_edition_has_every_lesson_and_solution():
    english = {p.relative_to(NOTEBOOK_DIR) for p in NOTEBOOKS if ZH_DIR not in p.parents}
    chinese = {p.relative_to(ZH_DIR) for p in NOTEBOOKS if ZH_DIR in p.parents}
    assert chinese == english


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_notebook_is_named_saved_clean_and_paired(path):
    """Named ``NN_snake_case``; saved after one clean run (execution counts 1..n, no error
    output, the python3 kernelspec); no NBVAL_SKIP; the same cells as its paired script."""
    pattern = r"\d\d_[a-z0-9]+(_[a-z0-9]+)*(_solutions)?\.ipynb"
    assert re.fullmatch(pattern, path.name), path.name
    assert path.name.endswith("_solutions.ipynb") == (path.parent.name == "solutions")

    text = path.read_text(encoding="utf-8")
    assert "NBVAL_SKIP" not in text and "nbval-skip" not in text
    nb = json.loads(text)
    cells = code_cells(nb)
    assert cells, "no code cells"
    assert [c["execution_count"] for c in cells] == list(range(1, len(cells) + 1))
    errors = [o for c in cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert errors == []
    assert nb["metadata"]["kernelspec"]["name"] == "python3"

    script = path.parent / "scripts" / (path.stem + ".py")
    assert script.is_file(), f"missing paired script {script.relative_to(ROOT)}"
    import jupytext  # here, not at the top: its import (nbformat's jsonschema) costs 2.8 s of
    # CPU, paid by the one worker that runs this file, not by every worker's collection

    from_script = jupytext.read(script)
    assert [(c.cell_type, source(c)) for c in from_script.cells] == [
        (c["cell_type"], source(c)) for c in nb["cells"]
    ], "notebook and script differ: run `python tools/build_notebooks.py` on the script"


def test_every_script_has_its_notebook():
    scripts = [
        script
        for edition in (NOTEBOOK_DIR, ZH_DIR)
        for script in (*edition.glob("scripts/*.py"), *edition.glob("solutions/scripts/*.py"))
    ]
    missing = [s for s in scripts if not (s.parent.parent / (s.stem + ".ipynb")).is_file()]
    assert missing == []


@pytest.mark.parametrize("path", LESSONS[1:], ids=[p.name for p in LESSONS[1:]])
def test_lesson_structure(path):
    nb = load(path)
    markdown = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown").lower()
    for needed in ("goal", "prerequisite", "time", "summary", "exercise"):
        assert needed in markdown, f"{path.name}: no '{needed}' section"
    assert re.search(r"[\u4e00-\u9fff]", markdown), "no Chinese key terms"
    solution = NOTEBOOK_DIR / "solutions" / f"{path.stem}_solutions.ipynb"
    assert solution.is_file(), f"missing {solution.relative_to(ROOT)}"
    code = "\n".join(source(c) for c in code_cells(nb))
    assert "# YOUR CODE HERE" in code
    assert "setup_lesson(" in code


@pytest.mark.parametrize("path", ZH_LESSONS[1:], ids=[p.name for p in ZH_LESSONS[1:]])
def test_chinese_lesson_structure(path):
    """The Chinese lessons name their sections with one vocabulary (the English test's twin)."""
    nb = load(path)
    markdown = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    for needed in ("学习目标", "预备知识", "用时", "形状约定", "## 小结", "## 练习"):
        assert needed in markdown, f"zh/{path.name}: no '{needed}' section"
    code = "\n".join(source(c) for c in code_cells(nb))
    assert "# 在这里写代码" in code and "# YOUR CODE HERE" not in code
    assert 'setup_lesson(lang="zh")' in code or ', lang="zh")' in code


def _readme_links() -> set[str]:
    """Relative link targets of README.md's markdown links, e.g. notebooks/01_x.ipynb."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    return {t for t in targets if "://" not in t and not t.startswith("mailto:")}


def test_every_readme_link_opens_a_file_of_the_repository():
    broken = sorted(t for t in _readme_links() if not (ROOT / t).exists())
    assert broken == []


@pytest.mark.parametrize(
    "path", LESSONS + ZH_LESSONS, ids=lambda p: str(p.relative_to(NOTEBOOK_DIR))
)
def test_readme_lesson_map_links_every_lesson(path):
    assert f"notebooks/{path.relative_to(NOTEBOOK_DIR)}" in _readme_links()


@pytest.mark.parametrize("path", [LESSONS[0], ZH_LESSONS[0]] if ZH_LESSONS else LESSONS[:1])
def test_lesson_00_links_the_other_edition_and_shows_the_glossary(path):
    nb = load(path)
    markdown = "\n".join(source(c) for c in nb["cells"] if c["cell_type"] == "markdown")
    other = "../00_start_here.ipynb" if ZH_DIR in path.parents else "zh/00_start_here.ipynb"
    assert f"]({other})" in markdown
    code = [c for c in code_cells(nb) if "mh.glossary_table()" in source(c)]
    assert code, "lesson 00 shows the glossary with mh.glossary_table()"
    html = "".join("".join(o.get("data", {}).get("text/html", "")) for o in code[0]["outputs"])
    assert "注意力机制" in html and "attention mechanism" in html
