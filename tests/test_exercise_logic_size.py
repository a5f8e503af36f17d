"""tools/exercise_logic_size.py counts the exercise machinery's logic, and the total stays under
the ceiling CONTRIBUTING.md records."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def _load():
    if str(TOOLS) not in sys.path:  # the tool imports tools/_toolkit.py, as a script does
        sys.path.insert(0, str(TOOLS))
    spec = importlib.util.spec_from_file_location(
        "exercise_logic_size", TOOLS / "exercise_logic_size.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


size = _load()

SAMPLE = '''"""A module docstring: not counted."""

import torch  # an import: not counted
from x import (
    a,
    b,
)


def check(answer):
    """A docstring: not counted."""
    # a comment: not counted

    hint = tr("message text", "消息")  # counted: an assignment
    fail(
        name=tr("text", "文字"),  # message text: not counted
        hint="plain text",  # not counted
    )
    if answer > 1:  # counted
        return f"{answer} is big"  # counted: the return
    return ok(name, tr(f"{answer}", "好"))  # counted
'''


def test_the_rule_counts_logic_only():
    assert size.logic_lines(SAMPLE) == 6  # def, hint =, fail(, if, return f"", return ok


def test_the_machinery_stays_under_its_ceiling(capsys):
    total = sum(count for _, count in size.sizes())
    assert total <= size.LIMIT, f"{total} logic lines, over the recorded ceiling {size.LIMIT}"
    assert size.main(["--check"]) == 0
    assert str(total) in capsys.readouterr().out
