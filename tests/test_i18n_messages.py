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
RESULT_BUILDERS = {"ok", "fail", "missing", "CheckResult", "PredictionNoted"}


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _calls(names: set[str]) -> list[tuple[str, ast.Call]]:
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and _name(node.func) in names:
                found.append((f"{path.relative_to(PACKAGE.parent)}:{node.lineno}", node))
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


BILINGUAL_CALLS = [
    (where, call)
    for where, call in _calls(BILINGUAL)
    # the definitions' own calls (Text(self.en + ..., ...)) pass expressions on purpose
    if not where.startswith("mhsa_helpers/i18n.py")
    and not (
        where.startswith("mhsa_helpers/exercises/_common.py") and _literal(call.args[0]) is None
    )
]


def test_the_package_has_bilingual_messages():
    assert len(BILINGUAL_CALLS) > 300


@pytest.mark.parametrize(("where", "call"), BILINGUAL_CALLS, ids=[w for w, _ in BILINGUAL_CALLS])
def test_each_message_exists_in_both_languages(where, call):
    assert len(call.args) >= 2, f"{where}: needs the English and the Chinese text"
    en, zh = (_literal(a) for a in call.args[:2])
    assert en is not None and zh is not None, f"{where}: both texts must be string literals"
    if re.search(r"[A-Za-z]{2,}", re.sub(r"\{[^}]*\}", "", en)):
        assert CJK.search(zh), f"{where}: the Chinese text {zh!r} has no Chinese characters"
    assert not CJK.search(en), f"{where}: Chinese characters in the English text {en!r}"
    assert _placeholders(call.args[0]) == _placeholders(call.args[1]), (
        f"{where}: the two languages show different values"
    )


RESULT_CALLS = [(where, call) for where, call in _calls(RESULT_BUILDERS) if "exercises" in where]


@pytest.mark.parametrize(("where", "call"), RESULT_CALLS, ids=[w for w, _ in RESULT_CALLS])
def test_no_checker_result_is_built_from_a_plain_string(where, call):
    for arg in [*call.args, *(k.value for k in call.keywords)]:
        assert _literal(arg) is None, f"{where}: wrap the text in tr(en, zh)"


CHECKERS = sorted(name for name in exercises.__all__ if name.startswith("check_"))


@pytest.mark.parametrize("name", CHECKERS)
def test_every_checker_answers_in_both_languages(name):
    result = getattr(exercises, name)(None)
    english, chinese = result.render("en"), result.render("zh")
    assert not result
    assert not CJK.search(english), english
    assert CJK.search(chinese), chinese
    assert chinese.startswith("[还没对]") or chinese.startswith("[已记下]"), chinese


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
