"""The line under an empty exercise says what to write and where, never how to compute it.

Every checker the package exports (found from ``mhsa_helpers.exercises.__all__``, not listed
here) is called with no answer -- ``None``, and for a build-it the stub the notebooks ship (a
function or a class whose body raises ``NotImplementedError``) -- in English and in Chinese. The
result is marked ``[TO DO]`` / ``[未完成]`` (an empty answer is not a wrong one). The
message must not contain an operator (``* / + ^ =``), a formula, a function call or a number: those
would give the method away. The one ``=`` allowed is the assignment the learner is told to write,
``answer = <name>``; digits inside names (``SelfAttentionV2``, ``float32``) are names, not numbers.
One test reports every offending checker at once.
"""

from __future__ import annotations

import inspect
import re

import torch
from test_checkers_never_pass_wrong import CASES

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers import lm
from mhsa_helpers.i18n import using_language


def _stub_function(*args, **kwargs):
    raise NotImplementedError


class _StubModule(torch.nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, *args, **kwargs):
        raise NotImplementedError("write forward")


_TEXT = "\n明月照，\n花开。\n"
_WEIGHTS = torch.rand(2, len(_TEXT), len(_TEXT), generator=torch.Generator().manual_seed(1)).tril()

#: Extra arguments of the checkers that take more than the answer: lessons 01-10 from the table of
#: the never-pass-wrong test, the later lessons here.
EXTRA_ARGS = {name: case[0] for name, case in CASES.items()} | {
    "check_top_k_probs": (torch.randn(2, 10, generator=torch.Generator().manual_seed(0)), 3, 0.7),
    "check_punctuation_share": (_WEIGHTS / _WEIGHTS.sum(-1, keepdim=True), _TEXT),
    "check_own_text": (lm.text_data(lm.load_song_ci()[:2000]),),
    "check_v1_to_v2": (mh.SelfAttentionV1(3, 2), mh.book_inputs()),
    "check_key_block": (mh.FusedQKVMultiHeadAttention(4, 6, 5, 0.0, num_heads=2),),
    "check_far_keys": (
        mh.ModernAttention(8, 4, num_heads=2, num_kv_groups=2, qk_norm=True),
        torch.randn(1, 4, 8),
        torch.arange(40, 44),
    ),
}

_ASSIGNMENT = re.compile(r"`(?:answer|prediction|my_guess) = [A-Za-z_][A-Za-z0-9_]*`")
_CODE_FENCE = re.compile(r"`# (?:YOUR CODE HERE|在这里写代码)`")
#: Names whose slash is no division: "K/V" (lesson 10's key/value groups, K/V 组数).
_NAMES = re.compile(r"K/V")
_PROBLEMS = {
    "an operator": re.compile(r"[*/+^=]"),
    "a number": re.compile(r"(?<![A-Za-z_0-9])[0-9]"),
    "a function call": re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\("),
    "a formula word": re.compile(r"\b(?:sum of|log|exp|sqrt|divided by|squared)\b", re.I),
}


def _checkers():
    return sorted(name for name in ex.__all__ if name.startswith("check_"))


def _needs_more_than_the_answer(name):
    checker = inspect.unwrap(getattr(ex, name))
    parameters = list(inspect.signature(checker).parameters.values())[1:]
    return any(p.default is inspect.Parameter.empty for p in parameters)


def _stubs(name):
    checker = inspect.unwrap(getattr(ex, name))
    spec = getattr(checker, "build_spec", None)
    if spec is None:
        return {"None": None}
    stub = _stub_function if spec.answer == "function" else _StubModule
    return {"None": None, "the notebook's stub": stub}


def _problems(text: str) -> list[str]:
    text = _NAMES.sub("", _CODE_FENCE.sub("", _ASSIGNMENT.sub("", text)))
    return [what for what, pattern in _PROBLEMS.items() if pattern.search(text)]


def test_every_checker_is_found():
    """The discovery finds the checkers of every lesson, also the ones added later."""
    modules = {getattr(ex, name).__module__.rsplit(".", 1)[-1] for name in _checkers()}
    assert {f"lesson{n:02d}" for n in range(1, 13)} <= modules, sorted(modules)


def test_an_empty_answer_gets_what_to_write_never_the_method():
    offending = []
    for name in _checkers():
        if _needs_more_than_the_answer(name) and name not in EXTRA_ARGS:
            offending.append(f"{name}: takes extra arguments; add them to EXTRA_ARGS")
            continue
        args = EXTRA_ARGS.get(name, ())
        for stub_name, stub in _stubs(name).items():
            for lang in ("en", "zh"):
                with using_language(lang):
                    result = getattr(ex, name)(stub, *args)
                    text, shown = str(result.text), repr(result)
                label = {"en": "[TO DO]", "zh": "[未完成]"}[lang]
                if result or not shown.startswith(label):
                    offending.append(f"{name} ({stub_name}, {lang}): not a {label}: {result!r}")
                    continue
                problems = _problems(text)
                if problems:
                    offending.append(f"{name} ({stub_name}, {lang}): {problems}: {text}")
    assert offending == [], "\n".join(["empty answers that give the method away:", *offending])
