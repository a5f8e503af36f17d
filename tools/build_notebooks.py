"""Regenerate notebooks from their paired jupytext scripts and execute them top to bottom.

    python tools/build_notebooks.py                       # every notebook
    python tools/build_notebooks.py notebooks/scripts/03_causal_attention.py   # some

For each script ``notebooks/[zh/][solutions/]scripts/NAME.py`` this formats it with ruff,
builds ``notebooks/[zh/][solutions/]NAME.ipynb`` with the python3 kernelspec, runs it in a fresh
kernel with nbclient (working directory = the notebook's folder, as nbval uses) and saves it with
its outputs.
A notebook that raises is not saved; one that runs is written through a temporary file and a
rename. A missing script, one ruff cannot format or a missing dependency is one line on stderr
and exit status 2. This is the only way notebooks in this repo are written.
"""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _toolkit import ToolError, require, run, write_text  # tools/_toolkit.py

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def scripts() -> list[Path]:
    """Every percent script: the English lessons and solutions, then the Chinese edition's."""
    found = []
    for edition in (NOTEBOOKS, NOTEBOOKS / "zh"):
        found += sorted(edition.glob("scripts/*.py")) + sorted(
            edition.glob("solutions/scripts/*.py")
        )
    return found


def notebook_for(script: Path) -> Path:
    return script.parent.parent / (script.stem + ".ipynb")


def build(script: Path) -> float:
    jupytext = require("jupytext", "jupytext", "it pairs the scripts with the notebooks")
    nbformat = require("nbformat", "nbformat", "it validates the notebooks")
    nbclient = require("nbclient", "nbclient", "it executes the notebooks")
    formats = require("jupytext.formats", "jupytext", "it pairs the scripts with the notebooks")
    subprocess.run(
        [sys.executable, "-m", "ruff", "format", "-q", str(script)],
        check=True,
        capture_output=True,
        text=True,
    )
    nb = jupytext.read(script)
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata.setdefault("language_info", {"name": "python"})
    target = notebook_for(script)
    start = time.perf_counter()
    nbclient.NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(target.parent)}},
    ).execute()
    elapsed = time.perf_counter() - start
    nbformat.validate(nb)
    # Write through jupytext so the pairing metadata is the one in notebooks/jupytext.toml,
    # into a temporary file renamed into place (an interrupted build never leaves half a file).
    text = io.StringIO()
    jupytext.write(nb, text, fmt=formats.long_form_one_format("ipynb", {"extension": ".ipynb"}))
    content = text.getvalue()
    write_text(target, content if content.endswith("\n") else content + "\n")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", type=Path, help="percent scripts (default: all)")
    args = parser.parse_args()
    todo = [p.resolve() for p in args.scripts] or scripts()
    missing = [str(p) for p in todo if not p.is_file()]
    if missing:
        raise ToolError(f"no such script: {', '.join(missing)}")
    for script in todo:
        elapsed = build(script)
        print(f"{notebook_for(script).relative_to(ROOT)}: executed in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    run(main, "build_notebooks")
