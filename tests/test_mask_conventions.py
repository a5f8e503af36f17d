"""Lesson 11's mask-conventions exercise: a Hugging Face attention_mask into SDPA's bool mask.

Right answers in several spellings pass; each usual mistake (inverted meaning, a float or int
mask, a (b, T) mask that broadcasts wrongly, a causal mask in an encoder, the query axis instead
of the key axis, an answer that only fits right padding, an in-place change) is named; the
empty answer says what to write and where, never how.
"""

from __future__ import annotations

import re

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass

from mhsa_helpers import exercises as ex
from mhsa_helpers.i18n import using_language

check = ex.check_hf_to_sdpa_mask


def _causal(m):
    t = m.shape[-1]
    return torch.ones(t, t, dtype=torch.bool).tril()


RIGHT = {
    "bool, (b, 1, 1, T)": lambda m: m.bool()[:, None, None, :],
    "== 1, unsqueeze": lambda m: (m == 1).unsqueeze(1).unsqueeze(2),
    "!= 0, view": lambda m: (m != 0).view(m.shape[0], 1, 1, m.shape[1]),
    "expanded to (b, 1, T, T)": lambda m: (m > 0)[:, None, None, :].expand(
        m.shape[0], 1, m.shape[1], m.shape[1]
    ),
    "~(m == 0), our mask inverted": lambda m: ~(m == 0)[:, None, None, :],
}


@pytest.mark.parametrize("label", RIGHT)
def test_right_answers_pass(label):
    assert_pass(check(RIGHT[label]))


def _in_place(m):
    m.clamp_(0, 1)
    m[:, 0] = 1  # changes the caller's mask (position 0 becomes real everywhere)
    return m.bool()[:, None, None, :]


def _raises(m):
    raise IndexError("too many indices")


def _lesson_mask_hard_coded(m):
    lesson = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 0, 0]])
    return lesson.bool()[:, None, None, :]


def _from_lengths(m):
    """Right padding only: lengths from the count of ones, then arange < lengths."""
    lengths = m.sum(dim=-1)
    return (torch.arange(m.shape[-1]) < lengths[:, None])[:, None, None, :]


WRONG = [
    ("inverted", lambda m: (m == 0)[:, None, None, :], "inverted"),
    ("float mask", lambda m: m.float()[:, None, None, :], "float32 mask"),
    ("float -inf/0 right idea, wrong dtype", lambda m: (1.0 - m[:, None, None, :]) * -1e9, "bool"),
    ("int mask", lambda m: m[:, None, None, :], "int64"),
    ("unchanged (b, T) int", lambda m: m, "int64"),
    ("(b, T) bool", lambda m: m.bool(), "lines up the mask's axes from the right"),
    ("(b, 1, T) bool", lambda m: m.bool()[:, None, :], "does not broadcast"),
    ("query axis", lambda m: m.bool()[:, None, :, None], "hides query rows"),
    ("causal mask", lambda m: m.bool()[:, None, None, :] & _causal(m), "causal mask crept in"),
    ("right padding only", _from_lengths, "wrong places"),
    ("the lesson's mask", _lesson_mask_hard_coded, "broadcast"),
    ("in place", _in_place, "in-place"),
    ("raises", _raises, "raised IndexError"),
    ("returns None", lambda m: None, "returned NoneType"),
    ("returns a list", lambda m: m.bool().tolist(), "returned list"),
    ("all True", lambda m: torch.ones_like(m, dtype=torch.bool)[:, None, None, :], "wrong places"),
    (
        "per head",
        lambda m: m.bool()[:, None, None, :] & (torch.arange(2) == 0)[None, :, None, None],
        "heads",
    ),
]


@pytest.mark.parametrize(("label", "answer", "fragment"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_answers_are_named(label, answer, fragment):
    assert_not_yet(check(answer), fragment)


def test_a_wrong_answer_is_named_in_chinese_too():
    with using_language("zh"):
        text = repr(check(lambda m: (m == 0)[:, None, None, :]))
    assert text.startswith("[还没对] ") and "弄反了" in text, text


@pytest.mark.parametrize(
    "answer", [None, "hf_to_sdpa", 3, torch.ones(3, 1, 1, 5, dtype=torch.bool)]
)
def test_odd_answers_do_not_pass(answer):
    assert_not_yet(check(answer))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_empty_answer_says_what_to_write_not_how(lang):
    with using_language(lang):
        text = repr(check(None))
    assert "`answer = hf_to_sdpa`" in text and "YOUR CODE HERE" in text, text
    for method in ("[:,", "None]", "==", "!=", "~", ".bool", "unsqueeze", "view", "(b, 1"):
        assert method not in text.replace("`None`", ""), (method, text)
    assert not re.search(r"\d", text), text


def test_a_right_answer_gives_sdpa_the_output_of_hidden_pads():
    """The conversion the checker accepts is what SDPA needs: pads get no weight."""
    attention_mask = torch.tensor([[0, 1, 1, 1], [1, 1, 0, 0]])  # (b, T), 1 = real
    q, k, v = (torch.randn(2, 2, 4, 3) for _ in range(3))  # (b, h, T, head_dim)
    out = torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=RIGHT["bool, (b, 1, 1, T)"](attention_mask)
    )  # (b, h, T, head_dim)
    for b in range(2):
        real = attention_mask[b].bool()
        alone = torch.nn.functional.scaled_dot_product_attention(
            q[b : b + 1], k[b : b + 1, :, real], v[b : b + 1, :, real]
        )
        torch.testing.assert_close(out[b : b + 1], alone)
