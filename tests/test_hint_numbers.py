"""Numbers in hints are shown as the lessons print them: at most 4 decimals, in both languages.

Every checker of the catalog in ``test_checkers_never_pass_wrong`` (lessons 01-10) gets each of
its plausible wrong answers, and every checker of lessons 11-12 its odd answers; no hint, English
or Chinese, may hold a decimal number with more than 4 digits after the point (a float shown
with ``str``/``repr`` such as ``0.30060961842536926``). The report names each checker and answer.
"""

from __future__ import annotations

import re

import torch
from hypothesis import given
from hypothesis import strategies as st
from test_checkers_never_pass_wrong import CASES, ODD_ANSWERS, _all_checkers, _args_for

from mhsa_helpers import exercises as ex
from mhsa_helpers.exercises._result import decimals

#: A decimal number with five or more digits after the point (not a part of a longer name).
LONG_DECIMAL = re.compile(r"(?<![A-Za-z_])\d+\.\d{5,}")


#: Wrong answers whose hints show computed values (the catalog's do not reach these paths).
EXTRA = {
    "softmax_rows (a softmax of 1.1 x)": lambda: ex.check_softmax_rows(
        lambda x: torch.softmax(1.1 * x, dim=-1)
    ),
    "prediction_saturation (1 / 3)": lambda: ex.check_prediction_saturation(1 / 3, reveal=True),
    "prediction_saturation (1 / 3, not revealed)": lambda: ex.check_prediction_saturation(1 / 3),
    "dropout_scale (1 / 3)": lambda: ex.check_dropout_scale(1 / 3),
    "head_dim (2 / 3)": lambda: ex.check_head_dim(2 / 3),
}


def _long_numbers(result) -> list[str]:
    return [
        f"{lang}: {text}"
        for lang in ("en", "zh")
        for text in [result.render(lang)]
        if LONG_DECIMAL.search(text)
    ]


def test_no_hint_shows_a_number_with_more_than_four_decimals():
    found = []
    for name, (args, _correct, wrong) in CASES.items():
        for index, (answer, _fragment) in enumerate(wrong):
            found += [
                f"{name} (wrong answer {index}) {t}"
                for t in _long_numbers(getattr(ex, name)(answer, *args))
            ]
    for name in _all_checkers():
        args = _args_for(name)
        for label, answer in ODD_ANSWERS.items():
            result = getattr(ex, name)(answer, *args)
            found += [f"{name} ({label}) {t}" for t in _long_numbers(result)]
    for label, result in EXTRA.items():
        found += [f"{label} {t}" for t in _long_numbers(result())]
    assert found == [], "\n".join(["hints with more than 4 decimals:", *found])


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_decimals_shows_at_most_four_decimals(x):
    shown = decimals(x)
    assert not LONG_DECIMAL.search(shown), shown
    if x == x and abs(x) < 1e15:
        assert abs(float(shown) - x) <= 5e-5 + 1e-12 * abs(x)
