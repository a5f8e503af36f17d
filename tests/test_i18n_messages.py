"""Every message the package shows a learner exists in English and in Chinese.

Read from the source (so that a message on a rarely taken path is covered too): every ``tr``,
``say``, ``Text`` and ``figure_text`` call has an English and a Chinese string, the Chinese one in
Chinese characters, both with the same ``{placeholders}``; no checker result is built from a plain
English string. Then at run time: every exported checker, given no answer, says so in both
languages; the lesson language follows ``setup_lesson(lang=...)``.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import mhsa_helpers as mh
from mhsa_helpers import exercises
from mhsa_helpers.i18n import Text, language, say, set_language, tr, using_language

PACKAGE = Path(mh.__file__).resolve().parent
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "course_data" not in p.parts)
CJK = re.compile(r"[\u3400-\u9fff]")
BILINGUAL = {"tr", "say", "Text", "figure_text"}
RESULT_BUILDERS = {"ok", "fail", "missing", "CheckResult", "PredictionNoted", "ContractError"}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _calls(names: set[str]) -> list[tuple[str, ast.Call]]:
    """Every call of one of ``names``, with where it is: ``file.py::function`` (no line numbers,
    so that a report stays the same when lines move)."""
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(PACKAGE.parent))

        def visit(node: ast.AST, scope: str, where: str = where) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scope = f"{scope}.{node.name}" if scope else node.name
            if isinstance(node, ast.Call) and _name(node.func) in names:
                found.append((f"{where}::{scope or '<module>'}", node))
            for child in ast.iter_child_nodes(node):
                visit(child, scope, where)

        visit(tree, "")
    return found


def _literal(node: ast.expr) -> str | None:
    """The text of a string literal or f-string (placeholders as {expr}), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            part.value if isinstance(part, ast.Constant) else "{" + ast.unparse(part.value) + "}"
            for part in node.values
        )
    return None


def _placeholders(node: ast.expr) -> list[str]:
    if not isinstance(node, ast.JoinedStr):
        return []
    return sorted(ast.unparse(p) for p in node.values if isinstance(p, ast.FormattedValue))


# One walk over the package's sources for both lists below (parsing them is the slow part).
_CALLS = _calls(BILINGUAL | RESULT_BUILDERS)
BILINGUAL_CALLS = [
    (where, call)
    for where, call in _CALLS
    if _name(call.func) in BILINGUAL
    # the definitions' own calls (Text(self.en + ..., ...)) pass expressions on purpose
    if not where.startswith("mhsa_helpers/i18n.py")
    and not (
        where.startswith("mhsa_helpers/exercises/_result.py") and _literal(call.args[0]) is None
    )
]


def test_the_package_has_bilingual_messages():
    assert len(BILINGUAL_CALLS) > 300


def _message_problems(where: str, call: ast.Call) -> list[str]:
    if len(call.args) < 2:
        return [f"{where}: needs the English and the Chinese text"]
    en, zh = (_literal(a) for a in call.args[:2])
    if en is None or zh is None:
        return [f"{where}: both texts must be string literals"]
    problems = []
    if re.search(r"[A-Za-z]{2,}", re.sub(r"\{[^}]*\}", "", en)) and not CJK.search(zh):
        problems.append(f"{where}: the Chinese text {zh!r} has no Chinese characters")
    if CJK.search(en):
        problems.append(f"{where}: Chinese characters in the English text {en!r}")
    if _placeholders(call.args[0]) != _placeholders(call.args[1]):
        problems.append(f"{where}: the two languages show different values ({en!r})")
    return problems


def test_each_message_exists_in_both_languages():
    """One test over every call site; the report names each offending site and what is wrong."""
    problems = [p for where, call in BILINGUAL_CALLS for p in _message_problems(where, call)]
    assert problems == [], "\n".join(problems)


def test_the_message_lint_finds_what_it_looks_for():
    bad = ast.parse('tr("two words", "no chinese")\ntr(f"{a}", f"{b}中")\ntr(x, "中")').body
    found = [_message_problems("here", node.value) for node in bad]  # type: ignore[attr-defined]
    assert ["Chinese" in p[0] for p in found] == [True, False, False]
    assert "different values" in found[1][0] and "string literals" in found[2][0]


RESULT_CALLS = [
    (where, call)
    for where, call in _CALLS
    if _name(call.func) in RESULT_BUILDERS and "exercises" in where
]


def test_no_checker_result_is_built_from_a_plain_string():
    plain = sorted(
        {
            where
            for where, call in RESULT_CALLS
            for arg in [*call.args, *(k.value for k in call.keywords)]
            if _literal(arg) is not None
        }
    )
    assert len(RESULT_CALLS) > 100
    assert plain == [], f"wrap the text in tr(en, zh) at: {plain}"


CHECKERS = sorted(name for name in exercises.__all__ if name.startswith("check_"))


@pytest.mark.parametrize("name", CHECKERS)
def test_every_checker_answers_in_both_languages(name):
    result = getattr(exercises, name)(None)
    english, chinese = result.render("en"), result.render("zh")
    assert not result
    assert not CJK.search(english), english
    assert CJK.search(chinese), chinese
    # [TO DO] for every empty answer is tested in test_empty_answers (with the extra arguments)
    assert chinese.startswith(("[未完成]", "[还没对]", "[已记下]")), chinese


def test_the_lesson_language_follows_setup_lesson():
    try:
        mh.setup_lesson(lang="zh")
        assert language() == "zh"
        assert str(tr("heads", "头数")) == "头数" and say("heads", "头数") == "头数"
        mh.setup_lesson(lang="en")
        assert language() == "en"
    finally:
        set_language("en")


def test_the_language_is_sticky_unless_named():
    """A later ``setup_lesson(seed=789)`` in a Chinese lesson re-seeds, still in Chinese."""
    try:
        mh.setup_lesson(lang="zh")
        mh.setup_lesson(seed=789)
        assert language() == "zh" and say("heads", "头数") == "头数"
        mh.setup_lesson(789, 1)
        assert language() == "zh"
        with using_language("en"):
            mh.setup_lesson(threads=1)
            assert language() == "en"
        assert language() == "zh"
        mh.setup_lesson(seed=123, lang="en")
        assert language() == "en"
        mh.setup_lesson()
        assert language() == "en"
    finally:
        set_language("en")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("bad", ["fr", "ZH", "", 1, b"zh", True])
def test_a_wrong_language_is_named_and_changes_nothing(lang, bad):
    try:
        set_language(lang)
        with pytest.raises((ValueError, TypeError), match="lang"):
            mh.setup_lesson(seed=5, lang=bad)
        assert language() == lang
    finally:
        set_language("en")


def test_texts_join_in_both_languages():
    text = tr("a ", "甲") + tr("b", "乙") + "!"
    assert (text.en, text.zh) == ("a b!", "甲乙!")
    assert ("> " + text).zh == "> 甲乙!"
    with using_language("zh"):
        assert str(text) == "甲乙!"
    assert str(text) == "a b!"
    with pytest.raises(TypeError, match="zh"):
        Text("a", None)  # type: ignore[arg-type]
