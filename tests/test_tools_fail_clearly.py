"""Every tool in tools/ fails the same way: one line on stderr, exit status 2, no traceback, and
the file it would write left as it was.

Each tool runs from a copy of tools/ inside a scratch repository (the tools find the repository
as the folder above their own), so a missing or broken input is made there, never in the real
checkout. Each tool gets a bad path and a broken input file; a new tool must be added here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"
LIBRARIES = {"_toolkit", "lockfile"}  # imported by the tools, never run


@dataclass(frozen=True)
class Case:
    argv: Callable[[Path], list[str]]  # the arguments, given the scratch root
    setup: Callable[[Path], None] = lambda root: None  # what the scratch root holds first
    target: str | None = None  # the file (relative to the root) that must stay unchanged
    says: str = ""  # a word the message must hold
    status: int = 2


def write(root: Path, relative: str, content: str | bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def files(named: dict[str, str | bytes]) -> Callable[[Path], None]:
    """A setup that writes each file (a path relative to the root: its content)."""

    def setup(root: Path) -> None:
        for name, content in named.items():
            write(root, name, content)

    return setup


OLD = "the file as it was\n"
CONSTRAINTS = (ROOT / "constraints.txt").read_text(encoding="utf-8")
README = "# course\n<!-- glossary:start -->\nold table\n<!-- glossary:end -->\n"
LATIN1 = "# %%\nprint('caf\xe9')\n".encode("latin-1")

CASES: dict[str, dict[str, Case]] = {
    "ablation_char_lm": {
        "bad path": Case(lambda r: ["--output", str(r / "missing" / "x.json")], says="--output"),
        "broken input": Case(
            lambda r: [
                "--rows-from",
                str(r / "data" / "rows.jsonl"),
                "--output",
                str(r / "data" / "ablation.json"),
            ],
            files({"data/rows.jsonl": '{"name": ', "data/ablation.json": OLD}),
            "data/ablation.json",
            "cannot read the rows",
        ),
    },
    "exercise_logic_size": {
        "bad path": Case(lambda r: ["--folder", str(r / "missing")], says="no such folder"),
        "broken input": Case(
            lambda r: ["--folder", str(r / "exercises")],
            files({"exercises/lesson01.py": "def (:\n"}),
            says="cannot parse",
        ),
    },
    "build_notebooks": {
        "bad path": Case(
            lambda r: [str(r / "notebooks/scripts/99_none.py")], says="no such script"
        ),
        "broken input": Case(
            lambda r: [str(r / "notebooks/scripts/01_x.py")],
            files({"notebooks/scripts/01_x.py": "x = (\n", "notebooks/01_x.ipynb": OLD}),
            "notebooks/01_x.ipynb",
            "ruff format",
        ),
    },
    "build_poetry_corpus": {
        "bad path": Case(
            lambda r: [str(r / "missing.tgz"), "--output", str(r / "data/v.xz")],
            says="no such file",
        ),
        "broken input": Case(
            lambda r: [str(r / "package.tgz"), "--output", str(r / "data/v.xz")],
            files({"package.tgz": b"not a tar file" * 100, "data/v.xz": OLD}),
            "data/v.xz",
            "cannot read",
        ),
    },
    "build_site": {
        "bad path": Case(lambda r: ["--no-zip"], says="npm ci"),
        "broken input": Case(
            lambda r: ["--no-zip"], files({"site/node_modules/mathjax": OLD}), says="npm ci"
        ),
    },
    "check_install": {  # the package cannot be imported: one line; a failed check: exit 1
        "bad path": Case(
            lambda r: [],
            files({"fake/mhsa_helpers/placeholder": "x"}),
            says="no installed package",
            status=1,
        ),
        "broken input": Case(
            lambda r: [],
            files({"fake/mhsa_helpers/__init__.py": "raise ImportError('a broken install')"}),
            says="a broken install",
        ),
    },
    "check_python": {
        "bad path": Case(lambda r: [], says="pyproject.toml"),
        "broken input": Case(
            lambda r: [], files({"pyproject.toml": "[project]\nname = 'x'\n"}), says="requires"
        ),
    },
    "install_venv": {  # checked before anything is written or fetched
        "bad path": Case(
            lambda r: ["lab"], files({"pyproject.toml": "[project]\n"}), says="constraints.txt"
        ),
        "broken input": Case(
            lambda r: ["lab", "--torch", "cpu"],
            files({"pyproject.toml": "[project\n", "constraints.txt": OLD}),
            "constraints.txt",
            "not valid TOML",
        ),
    },
    "check_route": {
        "bad path": Case(lambda r: [], says="README.md"),
        "broken input": Case(lambda r: [], files({"README.md": OLD}), "README.md", "route:posix"),
    },
    "install_matrix": {
        "bad path": Case(lambda r: [], says="pyproject.toml"),
        "broken input": Case(
            lambda r: [], files({"pyproject.toml": "[project\n"}), says="not valid TOML"
        ),
    },
    "lesson_times": {
        "bad path": Case(lambda r: ["--check"], files({"README.md": OLD}), says="no such file"),
        "broken input": Case(
            lambda r: ["--write"],
            files({"notebooks/scripts/00_start_here.py": LATIN1, "README.md": OLD}),
            "notebooks/scripts/00_start_here.py",
            "UTF-8",
        ),
    },
    "render_environment": {
        "bad path": Case(lambda r: [], files({"environment.yml": OLD}), "environment.yml"),
        "broken input": Case(
            lambda r: [],
            files(
                {
                    "pyproject.toml": "[project\nname =",
                    "environment.yml": OLD,
                    "constraints.txt": CONSTRAINTS,
                }
            ),
            "environment.yml",
            "not valid TOML",
        ),
    },
    "render_glossary": {
        "bad path": Case(lambda r: [], files({"README.md": README}), "README.md", "glossary.json"),
        "broken input": Case(
            lambda r: [],
            files({"data/glossary.json": '{"terms": [{"en": "head", "zh"', "README.md": README}),
            "README.md",
            "not valid JSON",
        ),
    },
    "train_char_lm": {
        "bad path": Case(
            lambda r: ["--output", str(r / "data")], files({"data/x": OLD}), says="folder"
        ),
        "broken input": Case(
            lambda r: ["--output", str(r / "data/notes.pt")],
            files({"data/notes.pt": OLD}),
            "data/notes.pt",
            "--force",
        ),
    },
    "zh_edition": {
        "bad path": Case(
            lambda r: ["stamp", str(r / "notebooks/zh/scripts/99_none.py"), "--all"],
            says="no such file",
        ),
        "broken input": Case(
            lambda r: ["join", str(r / "notebooks/zh/scripts/01_x.py")],
            files({"notebooks/zh/scripts/01_x.py": LATIN1}),
            "notebooks/zh/scripts/01_x.py",
            "UTF-8",
        ),
    },
}


def runnable_tools() -> set[str]:
    return {p.stem for p in TOOLS.glob("*.py") if p.stem not in LIBRARIES}


def test_every_tool_has_its_cases():
    assert set(CASES) == runnable_tools()
    assert all('__name__ == "__main__"' in (TOOLS / f"{n}.py").read_text() for n in CASES)


@pytest.mark.parametrize("kind", ["bad path", "broken input"])
@pytest.mark.parametrize("tool", sorted(CASES))
def test_a_tool_fails_in_one_line_and_leaves_its_target(tool, kind, tmp_path):
    case = CASES[tool][kind]
    root = tmp_path / "repo"
    shutil.copytree(TOOLS, root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    case.setup(root)
    target = None if case.target is None else root / case.target
    before = None if target is None else target.read_bytes()
    fake = root / "fake"
    env = {**os.environ, "PYTHONPATH": str(fake if fake.is_dir() else ROOT), "MKL_CBWR": "AUTO"}
    done = subprocess.run(
        [sys.executable, str(root / "tools" / f"{tool}.py"), *case.argv(root)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == case.status, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert len(lines) == 1 and case.says in lines[0], done.stderr
    if target is not None:
        assert target.read_bytes() == before
    assert not [p for p in root.rglob("*.tmp")]  # no temporary file left behind


def run_glossary(
    tmp_path: Path, glossary: str, readme: str
) -> tuple[subprocess.CompletedProcess, str]:
    root = tmp_path / "repo"
    shutil.copytree(TOOLS, root / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    files({"data/glossary.json": glossary, "README.md": readme})(root)
    done = subprocess.run(
        [sys.executable, str(root / "tools" / "render_glossary.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    return done, (root / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("glossary", "readme", "says"),
    [
        ('{"terms": [{"en": "head", "zh": "头"}]}', README, "term 1 ('head')"),
        ('{"terms": {"en": "head"}}', README, '"terms" must be a list'),
        ('{"terms": [{"en": "a", "zh": "b", "note": "c"}]}', "# no markers\n", "glossary:start"),
        (
            '{"terms": [{"en": "a", "zh": "b", "note": "c"}]}',
            "<!-- glossary:end -->\n<!-- glossary:start -->\n",
            "glossary:start",
        ),
    ],
    ids=["no-note", "terms-not-a-list", "no-markers", "markers-reversed"],
)
def test_the_glossary_tool_names_what_is_wrong(tmp_path, glossary, readme, says):
    done, after = run_glossary(tmp_path, glossary, readme)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr
    assert after == readme


def test_a_bar_in_a_glossary_note_is_escaped_not_a_new_column(tmp_path):
    term = '{"en": "mask", "zh": "掩码", "note": "scores | -inf where hidden"}'
    done, after = run_glossary(tmp_path, f'{{"terms": [{term}]}}', README)
    assert done.returncode == 0, done.stderr
    row = next(line for line in after.splitlines() if line.startswith("| mask"))
    assert row == "| mask | 掩码 | scores \\| -inf where hidden |"
    assert row.replace("\\|", "").count("|") == 4  # four borders: three columns


def test_every_tool_prints_its_help():
    """``--help`` (and each subcommand's) is the first thing a maintainer runs: it prints usage and
    exits 0 (a stray % in a help text makes argparse fail with "incomplete format")."""
    for tool in sorted(TOOLS.glob("*.py")):
        if tool.stem in LIBRARIES or "argparse" not in tool.read_text(encoding="utf-8"):
            continue
        done = subprocess.run(
            [sys.executable, str(tool), "--help"], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0 and "usage" in done.stdout, (tool.name, done.stderr[-300:])
    for command in ("check", "new", "stamp", "comments", "join"):
        done = subprocess.run(
            [sys.executable, str(TOOLS / "zh_edition.py"), command, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0 and "usage" in done.stdout, (command, done.stderr[-300:])
