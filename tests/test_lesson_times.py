"""Every stated lesson time follows the one rule of tools/lesson_times.py.

The first test is the real check over the repository (it fails when a lesson, lesson 00's map or
the README states a time the rule does not give). The others run the tool on a copy of the
course's scripts and README in a temporary folder: a wrong time is reported and rewritten, a
second write changes nothing, an up-to-date translation is re-stamped and a stale one is not,
and a lesson without a time statement is a message, not a traceback.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name: str):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


lesson_times = _load("lesson_times")
zh_edition = lesson_times.zh  # the module the tool uses, whichever test loaded it first


def test_every_stated_time_follows_the_rule(capsys):
    assert lesson_times.main(["--check"]) == 0, capsys.readouterr().out


def test_the_rule_counts_what_it_says():
    counts = lesson_times.Counts(
        words=1200, code_cells=20, predictions=1, exercises=2, build_its=1
    )  # 10 + 30 + 3 + 16 + 20 = 79 minutes
    assert counts.minutes == 80
    assert lesson_times.Counts(0, 0, 0, 0, 0).minutes == 5  # never less than 5
    more = lesson_times.Counts(1200, 20, 1, 2, 2)
    assert more.minutes == 100  # one more build-it: +20


@pytest.fixture
def course(tmp_path, monkeypatch):
    """A copy of the course's lesson scripts (both editions) and README under tmp_path."""
    notebooks = tmp_path / "notebooks"
    for part in ("scripts", "zh/scripts"):
        (notebooks / part).mkdir(parents=True)
        for script in (ROOT / "notebooks" / part).glob("[0-9][0-9]_*.py"):
            shutil.copy(script, notebooks / part / script.name)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    monkeypatch.setattr(zh_edition, "ROOT", tmp_path)
    monkeypatch.setattr(zh_edition, "NOTEBOOKS", notebooks)
    monkeypatch.setattr(zh_edition, "ZH", notebooks / "zh")
    monkeypatch.setattr(lesson_times, "SCRIPTS", notebooks / "scripts")
    monkeypatch.setattr(lesson_times, "README", tmp_path / "README.md")
    monkeypatch.setattr(lesson_times, "START", notebooks / "scripts" / "00_start_here.py")
    return tmp_path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_wrong_time_is_reported_then_rewritten_once(course, capsys):
    english = course / "notebooks" / "scripts" / "03_causal_attention.py"
    chinese = course / "notebooks" / "zh" / "scripts" / "03_causal_attention.py"
    readme = course / "README.md"
    right = re.search(r"\*\*Time:\*\* about (\d+) minutes", english.read_text()).group(1)
    english.write_text(english.read_text().replace(f"about {right} minutes", "about 999 minutes"))
    readme.write_text(
        re.sub(r"(\| 03 \|.*\| )\d+ min \|", r"\g<1>1 min |", readme.read_text(), count=1)
    )
    assert lesson_times.main(["--check"]) == 1
    report = capsys.readouterr().out
    assert "03_causal_attention.py" in report and "README.md" in report

    assert lesson_times.main(["--write"]) == 0
    assert f"about {right} minutes" in english.read_text()
    assert f"| {right} min |" in readme.read_text()
    assert lesson_times.main(["--check"]) == 0
    before = _snapshot(course)
    assert lesson_times.main(["--write"]) == 0
    assert "nothing to change" in capsys.readouterr().out
    assert _snapshot(course) == before  # idempotent: byte for byte
    # the Chinese twin was up to date before, so it is stamped with the new English hash
    _, en_cells = zh_edition.read_cells(english)
    _, zh_cells = zh_edition.read_cells(chinese)
    index = lesson_times.time_cell(english, en_cells, lesson_times.EN_TIME)
    assert zh_cells[index].recorded_hash == zh_edition.en_hash(en_cells[index])
    assert f"约 {right} 分钟" in "\n".join(zh_cells[index].lines)


def test_a_stale_translation_is_not_stamped(course):
    english = course / "notebooks" / "scripts" / "05_multihead_wrapper.py"
    chinese = course / "notebooks" / "zh" / "scripts" / "05_multihead_wrapper.py"
    _, en_cells = zh_edition.read_cells(english)
    index = lesson_times.time_cell(english, en_cells, lesson_times.EN_TIME)
    text = english.read_text()
    # an English edit in the time cell that the translation has not followed
    english.write_text(text.replace("**Learning goals**", "**Learning goals (new)**", 1))
    _, zh_before = zh_edition.read_cells(chinese)
    assert lesson_times.main(["--write"]) == 0
    _, en_after = zh_edition.read_cells(english)
    _, zh_after = zh_edition.read_cells(chinese)
    assert zh_after[index].recorded_hash == zh_before[index].recorded_hash
    assert zh_after[index].recorded_hash != zh_edition.en_hash(en_after[index])


def test_a_missing_time_statement_is_a_message(course, capsys):
    english = course / "notebooks" / "scripts" / "07_inspecting_heads.py"
    english.write_text(english.read_text().replace("**Time:**", "**Duration:**"))
    before = _snapshot(course)
    assert lesson_times.main(["--write"]) == 2
    err = capsys.readouterr().err
    assert "07_inspecting_heads.py" in err and "Traceback" not in err
    assert _snapshot(course) == before  # nothing written
