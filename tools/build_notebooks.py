"""Regenerate notebooks from their paired jupytext scripts and execute them top to bottom.

    python tools/build_notebooks.py                       # every notebook
    python tools/build_notebooks.py notebooks/scripts/03_causal_attention.py   # some

For each script ``notebooks/[zh/][solutions/]scripts/NAME.py`` this formats it with ruff,
builds ``notebooks/[zh/][solutions/]NAME.ipynb`` with the python3 kernelspec, runs it in a fresh
kernel with nbclient (working directory = the notebook's folder, as nbval uses) and saves it with
its outputs.
A notebook that raises is not saved. This is the only way notebooks in this repo are written.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

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
    subprocess.run([sys.executable, "-m", "ruff", "format", "-q", str(script)], check=True)
    nb = jupytext.read(script)
    nb.metadata["kernelspec"] = KERNELSPEC
    nb.metadata.setdefault("language_info", {"name": "python"})
    target = notebook_for(script)
    start = time.perf_counter()
    NotebookClient(
        nb,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(target.parent)}},
    ).execute()
    elapsed = time.perf_counter() - start
    nbformat.validate(nb)
    # Write through jupytext so the pairing metadata is the one in notebooks/jupytext.toml.
    jupytext.write(nb, target, fmt="ipynb")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="*", type=Path, help="percent scripts (default: all)")
    args = parser.parse_args()
    todo = [p.resolve() for p in args.scripts] or scripts()
    for script in todo:
        elapsed = build(script)
        print(f"{notebook_for(script).relative_to(ROOT)}: executed in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
