"""No exercise checker ever passes a wrong answer, and none ever raises.

Every checker of lessons 01-10 gets its correct answer (PASS), at least three plausible wrong
answers (NOT YET with a hint that names the mistake), and a zoo of odd input: None, strings,
lists, huge ints, NaN and meta tensors, wrong shapes, a function that raises, extra arguments,
odd extra arguments. The expected values here are computed independently of the checkers (by
hand or from the book's data), so a checker that drifts from the exercise fails.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass
from hypothesis import given
from hypothesis import strategies as st

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers.exercises import _parse

INPUTS = mh.book_inputs()  # (6, 3)
WORDS = ["Your", "journey", "starts", "with", "one", "step"]


def seeded(seed: int):
    return torch.Generator().manual_seed(seed)


def _raises(x):
    raise RuntimeError("boom")


# -- lesson 02 -----------------------------------------------------------------------------------

_g = seeded(123)
_Wq, _Wk = torch.rand(3, 2, generator=_g), torch.rand(3, 2, generator=_g)
_Wv = torch.rand(3, 2, generator=_g)
_s2 = (INPUTS @ _Wq) @ (INPUTS @ _Wk).T  # (6, 6)
_w2 = torch.softmax(_s2 / math.sqrt(2), dim=-1)  # (6, 6)
_v2 = INPUTS @ _Wv  # (6, 2)
_w3 = torch.softmax(_s2[2, :3] / math.sqrt(2), dim=-1)  # (3,): "starts" over what it has read

# -- lesson 03 -----------------------------------------------------------------------------------

_ones5 = torch.ones(5, 5, dtype=torch.bool)
LOCAL = _ones5.triu(diagonal=1) | _ones5.tril(diagonal=-2)  # (5, 5): the future, 2+ steps back

# -- lesson 04 -----------------------------------------------------------------------------------

_w789, _v789 = ex.lesson04.exercise_context()  # (6, 6) weights, (6, 2) values
_ctx = _w789 @ _v789  # (6, 2) context vectors
_keep = ex.lesson04.exercise_keep_pattern()  # (6, 2) bool: the exercise's survivors
_dropped = ex.lesson04.exercise_dropped_context()  # (6, 2): what the p = 0.3 layer returned
_factor = (_dropped[_keep] / _ctx[_keep])[0].item()  # 1 / (1 - p), read from one survivor

# -- lesson 05 -----------------------------------------------------------------------------------

with torch.random.fork_rng(devices=[]):
    torch.manual_seed(123)
    _wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=4)  # head 4: the extra head
with torch.no_grad():
    _heads = [head(mh.load_journey().batch) for head in _wrapper.heads]  # 4 x (2, 6, 2)

# -- lesson 06 -----------------------------------------------------------------------------------

X_SPLIT = torch.randn(5, 12, generator=seeded(6))  # (T, d_out): one sequence, no batch axis
_d = 1536  # the width whose MultiHeadAttention (qkv_bias=True) has 9,443,328 parameters

# -- lesson 07 -----------------------------------------------------------------------------------

_rows = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
WEIGHTS3 = torch.stack(
    [
        torch.tensor([[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, 0]]),  # head 0: one-hot, entropy 0
        _rows,  # head 1
        torch.tril(torch.ones(3, 3)) / torch.arange(1, 4)[:, None],  # head 2: uniform causal
    ]
)  # (3, 3, 3)
_row_entropy = torch.stack(
    [-(w[w > 0] * w[w > 0].log()).sum() for head in WEIGHTS3 for w in head]
).view(3, 3)  # (h, T), a loop instead of xlogy
_head_entropy = _row_entropy.mean(dim=-1)  # (3,)
_entropies = [float(e) for e in _head_entropy]
SHARPEST = _entropies.index(min(_entropies))  # 0
FLATTEST = _entropies.index(max(_entropies))

# -- lesson 08 -----------------------------------------------------------------------------------

IDS = torch.randint(0, 50, (2, 7), generator=seeded(8))
K = 2
_targets = torch.full((2, 7), -100)
for _t in range(K, 7):
    _targets[:, _t] = IDS[:, _t - K]
_future_targets = torch.full((2, 7), -100)
for _t in range(7 - K):
    _future_targets[:, _t] = IDS[:, _t + K]
ATT = torch.rand(3, 6, 6, generator=seeded(9)).tril().softmax(-1)  # (h, T, T), any numbers


def _offset(weights, k):
    return torch.stack(
        [torch.stack([weights[h, t, t - k] for t in range(k, 6)]).mean() for h in range(3)]
    )


# -- lesson 09 -----------------------------------------------------------------------------------

_longest = math.isqrt(2**30 // (25 * 4))  # the largest T with 25 * T * T * 4 bytes <= 1 GiB

# -- lesson 10 -----------------------------------------------------------------------------------

CHUNK = torch.tensor(
    [[False, False, False, False, True], [True, False, False, False, False]]
)  # window of 4: query 5 sees keys 2..5, query 6 keys 3..6 (keys are positions 2..6)
_fits = 10  # K/V groups (a divisor of 40) whose caches for 12 conversations fit in 24 GiB
_D = 3584
_gqa = 2 * _D * _D + 2 * _D * 512 + _D + 2 * 512  # Q/K/V biases, no output bias


# checker name -> (extra arguments, correct answer, [(wrong answer, fragment of the hint), ...])
CASES = {
    "check_context_vector_3": (
        (),
        _w3 @ _v2[:3],
        [
            (torch.softmax(_s2[2, :3], dim=-1) @ _v2[:3], "not scaled"),
            (torch.softmax(_s2[2, :3] / math.sqrt(3), dim=-1) @ _v2[:3], "sqrt(3)"),
            (_w2[2, :3] @ _v2[:3], "no longer sum to 1"),
            (_w2[2] @ _v2, "all six tokens"),
            (torch.softmax(_s2[1, :3] / math.sqrt(2), dim=-1) @ _v2[:3], "query of another"),
            (_w2[1] @ _v2, "query of another"),  # lesson 02's context_vector_2, "journey"
            (_w3 @ INPUTS[:3, :2], "section 5"),
            (_w3, "three weights"),
            (_w2 @ _v2, "every token"),
        ],
    ),
    "check_dropout_scale": (
        (),
        1.25,
        [(0.8, "DIVIDED"), (5.0, "1 / p"), (2.0, "p = 0.5"), (0.2, "p itself")],
    ),
    "check_zero_fraction": (
        (),
        25.5 / 36,
        [
            (25.5, "COUNT"),
            (0.5, "already 0"),
            (15 / 36, "only the 15 masked"),
            (10.5 / 36, "add the 15 masked"),
        ],
    ),
    "check_dropout_rate": (
        (),
        1 - 1 / _factor,
        [
            ((~_keep).float().mean().item(), "share of zeros"),
            (_factor, "1 / (1 - p)"),
            (1 / _factor, "keeps, 1 - p"),
            (_factor - 1, "how much a survivor grew"),
            (0.5, "attn_weights @ values"),
        ],
    ),
    "check_wrapper_parameters": (
        (),
        12 * 3 * 768 * 64,
        [
            (3 * 768 * 64, "one head"),
            (768 * 768, "three projections"),
            (4 * 768 * 768, "no output projection"),
            (12 * 3 * 768 * 64 + 3 * 768, "no bias"),
            (64, "one head's weight matrices"),
        ],
    ),
    "check_head_output": (
        (),
        _heads[3],
        [
            (_heads[0], "the FIRST head drawn after"),
            (_heads[1], "the wrapper's head 2"),
            (_heads[2], "the 3-head wrapper's head 3"),
            (torch.cat(_heads[:3], dim=-1), "whole output"),
            (_heads[3][0], "shape (6, 2)"),
        ],
    ),
    "check_matmul_count": (
        (),
        1_538_457_600,
        [
            (60, "CALLS"),
            (1_415_577_600, "projections only"),
            (122_880_000, "attention products only"),
            (1_538_457_600 // 12, "one head"),
        ],
    ),
    "check_head_dim": (
        (),
        4096 // 32,
        [
            (4096 * 32, "TOTAL"),
            (4096, "total width"),
            (64, "GPT-2"),
            (32, "d_out // num_heads"),
            (4096 / 32, "divide with //"),  # 128.0: a float where a count is asked
        ],
    ),
    "check_mha_parameter_count": (
        (),
        _d,
        [
            (-(_d + 1), "positive"),
            (1536.37, "have no bias"),  # solves 4d² + d: the Q/K/V biases left out
            (1537, "does not have 9,443,328"),  # whole, but no width gives that count
            (3073, "ONE square matrix"),
            (1773.7, "out_proj"),  # solves 3d² + 3d
            (24, "num_heads"),
            (64, "head_dim"),
            (_d * _d, "(d, d) matrix"),
            (1024, "GPT-2 width"),
            (100.5, "whole number"),
            (1000, "does not have"),
        ],
    ),
    "check_split_into_heads": (
        (X_SPLIT,),
        torch.stack([X_SPLIT[:, 4 * h : 4 * h + 4] for h in range(3)]),  # (h, T, head_dim)
        [
            (X_SPLIT.reshape(3, 5, 4), "mixes tokens and heads"),
            (X_SPLIT.view(5, 3, 4), "swap the token and head axes"),
            (X_SPLIT.view(5, 3, 4).transpose(1, 2), "tokens are axis 0"),
            (X_SPLIT.view(1, 5, 3, 4).transpose(1, 2), "no batch axis"),
            (X_SPLIT.view(5, 3, 4).permute(1, 2, 0), "shape (3, 4, 5)"),
            (torch.zeros(3, 5, 4), "swap the token and head axes"),
        ],
    ),
    "check_keys_from_entropy": (
        (),
        4,
        [(6, "log 6"), (1, "entropy 0"), (1.3863, "solve it for n"), (3, "solve it for n")],
    ),
    "check_head_entropy": (
        (WEIGHTS3,),
        _row_entropy,
        [
            (-_row_entropy, "the sign"),
            (_head_entropy, "every row"),
            (torch.full_like(_row_entropy, float("nan")), "xlogy"),
            (_row_entropy / math.log(2), "base 2"),
            (_row_entropy + 0.1, "row's entropy"),
        ],
    ),
    "check_sharpest_head": (
        (WEIGHTS3,),
        SHARPEST,
        [
            (SHARPEST + 1, "subtract one"),
            (FLATTEST, "most spread-out"),
            (float(SHARPEST), "expected an int"),
            (_head_entropy, "expected an int"),
        ],
    ),
    "check_initial_loss": (
        (),
        math.log(64),
        [(6.0, "bits"), (1 / 64, "MINUS"), (-math.log(64), "MINUS"), (64.0, "-log(p")],
    ),
    "check_probability_gain": (
        (),
        64 * math.exp(-0.63),
        [
            (4.16 / 0.63, "ratio of the losses"),
            (4.16 - 0.63, "still a log"),
            (math.exp(-0.63), "compare it with"),
            (64 * 0.37, "1 - loss"),
            (math.exp(4.25 - 0.63), "measured 4.25"),
            (64.0, "perfect model"),
            (34.3, "then divide"),
        ],
    ),
    "check_shift_targets": (
        (IDS, K),
        _targets,
        [
            (torch.where(_targets == -100, IDS, _targets), "first k positions"),
            (_future_targets, "FUTURE"),
            (_targets.float(), "integer dtype"),
            (IDS, "t - k"),
            (_targets[:, :-1], "shape (2, 6)"),
        ],
    ),
    "check_offset_attention": (
        (ATT, K),
        _offset(ATT, K),
        [
            (_offset(ATT.transpose(-2, -1), K), "offset=-k"),
            (torch.diagonal(ATT, offset=-K, dim1=-2, dim2=-1), "shape (3, 4)"),
            (_offset(ATT, K + 1), "torch.diagonal"),
            (_offset(ATT, K).sum(), "shape ()"),
        ],
    ),
    "check_longest_context": (
        (),
        _longest,
        [
            (_longest + 1, "one token too many"),
            (math.isqrt(2**30 // 25), "counts floats"),
            (math.isqrt(2**30 // 4), "each of the 25 heads"),
            (2**30 // 100, "T * T"),
            (math.isqrt(10**9 // 100), "not 10**9"),
        ],
    ),
    "check_local_mask": (
        (),
        LOCAL,
        [
            (LOCAL.float(), "masked_fill refuses"),
            (LOCAL.int(), "masked_fill refuses"),
            (~LOCAL, "KEEP"),
            (torch.ones(5, 5).triu(1).bool(), "plain causal mask"),
            (LOCAL.T, "transposed"),
            (_ones5.triu(diagonal=1) | _ones5.tril(diagonal=-3), "off by one"),
            (~torch.eye(5, dtype=torch.bool), "only itself"),
        ],
    ),
    "check_chunk_mask": (
        (),
        CHUNK,
        [
            (~CHUNK, "inverted"),
            (torch.ones(2, 5).triu(1).bool(), "top-left"),
            (CHUNK.float(), "dtype torch.bool"),
            (torch.ones(5, 5).triu(1).bool(), "shape (5, 5)"),
            (torch.tensor([[0, 0, 0, 0, 1], [0, 0, 0, 0, 0]]).bool(), "plain causal"),
        ],
    ),
    "check_kv_cache_bytes": (
        (),
        _fits,
        [
            (20, "do not fit"),
            (40, "plain MHA"),
            (8, "lesson's setting"),
            (5, "2 bytes per number"),
            (29, "keys and values"),
            (699, "48 layers"),
            (13, "2**30"),
            (14, "divisor of 40"),
            (41, "at most 40"),
            (6, "divide 40"),
            (4, "largest"),
        ],
    ),
    "check_gqa_parameter_count": (
        (),
        _gqa,
        [
            (_gqa + _D, "output projection"),
            (_gqa - _D - 2 * 512, "biases of W_query"),
            (4 * _D * _D + 3 * _D, "plain MHA"),
            (_gqa - 2 * 512 + 2 * _D, "one number per output"),
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_correct_answer_passes_and_each_plausible_wrong_one_gets_its_hint(name):
    """The report names every wrong answer that passed or got another hint."""
    args, correct, wrong = CASES[name]
    assert len(wrong) >= 3, f"{name}: test at least three plausible wrong answers"
    assert_pass(getattr(ex, name)(correct, *args))
    missed = []
    for index, (answer, fragment) in enumerate(wrong):
        result = getattr(ex, name)(answer, *args)
        text = repr(result)
        if result or not text.startswith("[NOT YET] ") or fragment not in text:
            missed.append(f"wrong answer {index} (hint {fragment!r}): {text}")
        assert str(result) == text, text
    assert missed == []


def test_every_checker_of_lessons_01_to_10_is_covered():
    """Each checker has a row in CASES, or its own tests (correct and wrong answers) elsewhere."""
    modules = [getattr(ex, f"lesson{n:02d}") for n in range(1, 11)]
    names = {name for module in modules for name in module.__all__ if name.startswith("check_")}
    here = Path(__file__)
    elsewhere = "\n".join(
        path.read_text() for path in here.parent.glob("test_*.py") if path != here
    )
    untested = sorted(n for n in names - set(CASES) if not re.search(rf"\bex\.{n}\b", elsewhere))
    assert untested == [], f"checkers without tests: {untested}"


def _meta(*shape):
    return torch.empty(shape, device="meta")


ODD_ANSWERS = {
    "None": None,
    "string": "0.5",
    "list": [1.0, 2.0, 3.0],
    "nested list": [[1.0, 0.0], [0.0, 1.0]],
    "dict": {"answer": 1},
    "huge int": 10**400,
    "huge negative int": -(10**40),
    "bool": True,
    "numpy bool": np.bool_(True),
    "nan": float("nan"),
    "inf": float("inf"),
    "numpy nan": np.float32("nan"),
    "complex": 1 + 2j,
    "nan tensor": torch.full((6, 3), float("nan")),
    "nan scalar tensor": torch.tensor(float("nan")),
    "meta tensor": _meta(6, 3),
    "meta scalar": _meta(),
    "meta 4x4": _meta(4, 4),
    "empty tensor": torch.zeros(0),
    "4-D tensor": torch.ones(2, 3, 4, 5),
    "int tensor": torch.ones(6, 6, dtype=torch.long),
    "complex tensor": torch.ones(6, dtype=torch.complex64),
    "requires grad": torch.rand(6, 3, requires_grad=True),
    "function that raises": _raises,
    "class": torch.nn.Linear,
    "module that raises": torch.nn.Sequential(torch.nn.Linear(7, 7)),
    "object": object(),
}


def _all_checkers():
    return [name for name in ex.__all__ if name.startswith("check_")]


def _args_for(name):
    return CASES[name][0] if name in CASES else ()


def _assert_no_pass(result):
    assert isinstance(result, ex.CheckResult), type(result)
    assert not result, repr(result)
    assert repr(result).startswith("[NOT YET] "), repr(result)


def _passes_or_breaks(result) -> bool:
    """True if ``result`` is not a plain NOT YET (a pass, a wrong type, a raise caught here)."""
    return not (
        isinstance(result, ex.CheckResult)
        and not result
        and repr(result).startswith(("[NOT YET] ", "[TO DO] "))
    )


@pytest.mark.parametrize("name", _all_checkers())
def test_odd_answers_never_raise_and_never_pass(name):
    """Every odd answer, one checker at a time; the report names each answer that got through."""
    checker, args = getattr(ex, name), _args_for(name)
    got_through = [
        label for label, answer in ODD_ANSWERS.items() if _passes_or_breaks(checker(answer, *args))
    ]
    assert got_through == [], f"{name} passed or broke on: {got_through}"


# -- the check kinds, as properties ------------------------------------------------------------

NUMBER_CHECKERS = sorted(n for n in _all_checkers() if hasattr(getattr(ex, n).__wrapped__, "spec"))

_ANY_ANSWER = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=3),
    st.builds(torch.tensor, st.floats(-1e6, 1e6, width=32)),
    st.builds(torch.tensor, st.booleans()),
)


def test_numeric_exercises_are_stated_as_number_specs():
    assert len(NUMBER_CHECKERS) >= 9, NUMBER_CHECKERS


@pytest.mark.parametrize("name", NUMBER_CHECKERS)
@given(answer=_ANY_ANSWER)
def test_a_number_check_passes_exactly_its_expected_value(name, answer):
    """Whatever the answer, a numeric check never raises, and passes only the expected value."""
    checker = getattr(ex, name)
    spec = checker.__wrapped__.spec
    result = checker(answer)
    assert isinstance(result, ex.CheckResult) and result.render("zh")
    value = _parse.whole_number(answer) if spec.whole else _parse.number(answer)
    right = value is not None and (
        value == spec.expected
        if spec.tol is None
        else math.isclose(value, spec.expected, abs_tol=spec.tol)
    )
    assert bool(result) == right, (answer, repr(result))


@pytest.mark.parametrize("name", NUMBER_CHECKERS)
def test_a_number_check_names_every_wrong_value_in_its_catalog(name):
    """Each catalogued wrong value gets the hint of the first entry that matches it."""
    spec = getattr(ex, name).__wrapped__.spec
    for match, _ in spec.wrong:
        values = [] if callable(match) else [match] if isinstance(match, (int, float)) else match
        for value in values:
            hint = next(h for m, h in spec.wrong if spec._matches(value, m))
            result = getattr(ex, name)(value)
            assert not result and hint.en in result.render("en") and hint.zh in result.render("zh")


@given(
    value=st.one_of(
        st.integers(-(10**400), 10**400),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.builds(np.float32, st.floats(width=32)),
        st.builds(np.int64, st.integers(-(2**63), 2**63 - 1)),
    )
)
def test_number_parsing(value):
    """A finite real (numpy and one-element tensors too) is a number; a bool never is."""
    parsed = _parse.number(value)
    if isinstance(value, (bool, np.bool_)):
        assert parsed is None
        return
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    assert (parsed is not None) == finite
    if finite:
        assert parsed == float(value)
        assert _parse.number(torch.tensor(float(value), dtype=torch.float64)) == float(value)
    whole = _parse.whole_number(value)
    if isinstance(value, (int, np.integer)):
        assert whole == int(value)
    else:
        assert (whole is not None) == (finite and float(value).is_integer())


@pytest.mark.parametrize("name", sorted(CASES))
def test_extra_arguments_never_raise_and_never_pass(name):
    args, correct, _ = CASES[name]
    checker = getattr(ex, name)
    _assert_no_pass(checker(correct, *args, "extra"))
    _assert_no_pass(checker(correct, *args, bogus=1))
    _assert_no_pass(checker())


ODD_EXTRAS = [None, "x", [1, 2], float("nan"), _meta(5, 5), torch.full((5, 5), float("nan"))]


@pytest.mark.parametrize("name", sorted(n for n, case in CASES.items() if case[0]))
def test_odd_extra_arguments_never_raise_and_never_pass(name):
    args, correct, _ = CASES[name]
    got_through = []
    for index, odd in enumerate(ODD_EXTRAS):
        for position in range(len(args)):
            changed = list(args)
            changed[position] = odd
            if _passes_or_breaks(getattr(ex, name)(correct, *changed)):
                got_through.append(f"extra {index} at argument {position + 1}")
    assert got_through == [], f"{name} passed or broke on: {got_through}"


def test_numpy_numbers_are_answers_like_any_other():
    assert_pass(ex.check_dropout_scale(np.float32(1.25)))
    assert_pass(ex.check_wrapper_parameters(np.int64(1_769_472)))
    assert_pass(ex.check_head_dim(np.int32(128)))
    assert_pass(ex.check_sharpest_head(np.int64(SHARPEST), WEIGHTS3))
    assert_not_yet(ex.check_sharpest_head(np.bool_(False), WEIGHTS3))
    assert_not_yet(ex.check_wrapper_parameters(np.float64(64.5)), "whole number")


def test_checkers_leave_the_global_rng_alone():
    torch.manual_seed(5)
    state = torch.get_rng_state()
    for name, (args, correct, wrong) in CASES.items():
        getattr(ex, name)(correct, *args)
        getattr(ex, name)(wrong[0][0], *args)
    assert torch.equal(torch.get_rng_state(), state)
