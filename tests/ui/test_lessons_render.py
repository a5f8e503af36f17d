"""Every lesson runs in a real JupyterLab and shows its figures and diagrams.

For each lesson of both editions (not the solutions): open a copy, Run All, check that no cell
failed or wrote to stderr, then count what the browser really rendered: every figure the saved
notebook holds (``image/png`` outputs) is an ``<img>`` that loaded (``naturalWidth > 0``), and
every Mermaid diagram in the lesson's markdown became a picture (JupyterLab renders it as an SVG
``<img>``). A screenshot of each lesson goes to ``$MHSA_ARTIFACTS`` or a temporary folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lab import JS_PANEL, open_and_run_all

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")) + sorted(
    f"zh/{p.name}" for p in (NOTEBOOKS / "zh").glob("[0-9][0-9]_*.ipynb")
)

JS_RENDERED = (
    "(path) => {"
    + JS_PANEL
    + """
    const node = panel.content.node;
    const images = Array.from(node.querySelectorAll('.jp-OutputArea-output img'));
    return {
        images: images.length,
        loaded: images.filter((img) => img.complete && img.naturalWidth > 0).length,
        mermaid: Array.from(node.querySelectorAll('.jp-RenderedMermaid img'))
            .filter((img) => img.complete && img.naturalWidth > 0).length,
    };
}"""
)


def expected_figures(notebook: str) -> tuple[int, int]:
    """(image outputs, Mermaid blocks) in the saved notebook."""
    nb = json.loads((NOTEBOOKS / notebook).read_text())
    images = sum(
        "image/png" in output.get("data", {})
        for cell in nb["cells"]
        if cell["cell_type"] == "code"
        for output in cell["outputs"]
    )
    mermaid = sum(
        "".join(cell["source"]).count("```mermaid")
        for cell in nb["cells"]
        if cell["cell_type"] == "markdown"
    )
    return images, mermaid


def test_every_lesson_is_covered():
    english = [n for n in LESSONS if "/" not in n]
    assert len(english) >= 12, LESSONS
    assert [f"zh/{n}" for n in english] == [n for n in LESSONS if "/" in n]


@pytest.mark.slow
@pytest.mark.parametrize("notebook", LESSONS)
def test_lesson_renders_its_figures(lab_server, page, artifacts, notebook):
    images, mermaid = expected_figures(notebook)
    if Path(notebook).name != "00_start_here.ipynb":
        assert images >= 2, f"{notebook} saves only {images} figure(s)"
    open_and_run_all(page, lab_server, notebook)
    page.wait_for_function(
        "([path, images, mermaid]) => {"
        + JS_PANEL
        + """
        const node = panel.content.node;
        const loaded = Array.from(node.querySelectorAll('.jp-OutputArea-output img'))
            .filter((img) => img.complete && img.naturalWidth > 0).length;
        return loaded >= images
            && Array.from(node.querySelectorAll('.jp-RenderedMermaid img'))
                .filter((img) => img.complete && img.naturalWidth > 0).length >= mermaid;
    }""",
        arg=[notebook, images, mermaid],
        timeout=60_000,
    )
    rendered = page.evaluate(JS_RENDERED, notebook)
    page.screenshot(
        path=str(artifacts / f"{notebook.replace('/', '_')[:-6]}_run_all.png"), full_page=False
    )
    print(f"{notebook}: {rendered}")
    assert rendered["loaded"] >= images, rendered
    assert rendered["mermaid"] == mermaid, rendered
