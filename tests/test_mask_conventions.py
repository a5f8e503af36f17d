"""Lesson 11's mask-conventions exercise: a Hugging Face attention_mask into SDPA's additive mask.

``hf_to_additive(attention_mask, dtype)`` is tried in float32, float16 and bfloat16. Right
answers in several spellings pass; each usual mistake (inverted meaning, a bool or 0/1 mask, a
mask in another dtype, -1e9 or float32's lowest number overflowing to -inf in low precision, -inf
itself, a fill too small to hide, a (b, T) mask that broadcasts wrongly, a causal mask in an
encoder, the query axis instead of the key axis, an in-place change) is named; the empty answer
says what to write and where, never how.
"""

from __future__ import annotations

import re

import pytest
import torch
from exercise_checks import assert_not_yet, assert_pass

from mhsa_helpers import exercises as ex
from mhsa_helpers.i18n import using_language

check = ex.check_hf_to_additive_mask


def _hf(m, dtype):
    """Hugging Face's own spelling: (1 - mask) times the dtype's lowest number, (b, 1, 1, T)."""
    return (1.0 - m[:, None, None, :].to(dtype)) * torch.finfo(dtype).min


RIGHT = {
    "(1 - m) * finfo(dtype).min": _hf,
    "zeros, masked_fill": lambda m, dtype: torch.zeros(
        m.shape[0], 1, 1, m.shape[1], dtype=dtype
    ).masked_fill(m[:, None, None, :] == 0, torch.finfo(dtype).min),
    "where, then to(dtype)": lambda m, dtype: torch.where(m.bool(), 0.0, torch.finfo(dtype).min).to(
        dtype
    )[:, None, None, :],
    "expanded to (b, 1, T, T)": lambda m, dtype: _hf(m, dtype).expand(
        m.shape[0], 1, m.shape[1], m.shape[1]
    ),
}


@pytest.mark.parametrize("label", RIGHT)
def test_right_answers_pass(label):
    assert_pass(check(RIGHT[label]))


def _in_place(m, dtype):
    m[:, 0] = 1  # changes the caller's mask (position 0 becomes real everywhere)
    return _hf(m, dtype)


def _raises(m, dtype):
    raise IndexError("too many indices")


def _not_written(m, dtype):
    raise NotImplementedError


def _causal(m, dtype):
    """Section 7's hf_additive line for a decoder: the causal part kept."""
    t = m.shape[-1]
    keep = torch.tril(torch.ones(t, t)) * m[:, None, None, :]  # (b, 1, T, T)
    return ((1.0 - keep) * torch.finfo(dtype).min).to(dtype)


def _float32_constant(m, dtype):
    """Section 7's constant, cast at the end: -3.4e38 is -inf in float16 and bfloat16."""
    return ((1.0 - m[:, None, None, :].float()) * torch.finfo(torch.float32).min).to(dtype)


def _fill(value):
    """0 at the real keys, ``value`` (cast to ``dtype``) at the pads, (b, 1, 1, T)."""
    return lambda m, dtype: torch.zeros(m.shape[0], 1, 1, m.shape[1], dtype=dtype).masked_fill(
        m[:, None, None, :] == 0, value
    )


def _bfloat16_slip(m, dtype):
    """Right in float32 and float16, float32's lowest number in bfloat16 (rounds to -inf)."""
    return _float32_constant(m, dtype) if dtype == torch.bfloat16 else _hf(m, dtype)


WRONG = [
    (
        "inverted",
        lambda m, dtype: m[:, None, None, :].to(dtype) * torch.finfo(dtype).min,
        "inverted",
    ),
    ("bool mask", lambda m, dtype: m.bool()[:, None, None, :], "a bool mask"),
    ("0/1 float mask", lambda m, dtype: m[:, None, None, :].to(dtype), "hides nothing"),
    ("int mask", lambda m, dtype: m[:, None, None, :], "int64"),
    (
        "float32 constant kept in float32",
        lambda m, dtype: _fill(-3e38)(m, torch.float32),
        "float16 was asked for",
    ),
    (
        "-1e9 overflows in float16",
        lambda m, dtype: _hf(m, dtype) / torch.finfo(dtype).min * -1e9,
        "overflows to -inf",
    ),
    ("-1e9 does not fit a float16", _fill(-1e9), "does not fit in a float16"),
    ("float32's lowest number cast", _float32_constant, "to -inf when it becomes a float16"),
    ("bfloat16 only", _bfloat16_slip, "rounds to -inf when it becomes a bfloat16"),
    ("-inf", _fill(-torch.inf), "softmax of all -inf = NaN"),
    ("a fill too small", _fill(-1.0), "still get weight"),
    (
        "(b, T)",
        lambda m, dtype: _hf(m, dtype)[:, 0, 0, :],
        "lines up the mask's axes from the right",
    ),
    ("(b, 1, T)", lambda m, dtype: _hf(m, dtype)[:, 0], "does not broadcast"),
    ("query axis", lambda m, dtype: _hf(m, dtype).transpose(-2, -1), "hides query rows"),
    ("causal mask", _causal, "causal mask crept in"),
    ("in place", _in_place, "in-place"),
    ("raises", _raises, "raised IndexError"),
    ("returns None", lambda m, dtype: None, "returned NoneType"),
    ("not written", _not_written, "not written yet"),
    ("one argument only", lambda m: _hf(m, torch.float32), "raised TypeError"),
    (
        "per head",
        lambda m, dtype: _hf(m, dtype) * (torch.arange(2) == 0).to(dtype)[None, :, None, None],
        "heads",
    ),
]


@pytest.mark.parametrize(("label", "answer", "fragment"), WRONG, ids=[w[0] for w in WRONG])
def test_wrong_answers_are_named(label, answer, fragment):
    assert_not_yet(check(answer), fragment)


def test_a_wrong_answer_is_named_in_chinese_too():
    with using_language("zh"):
        text = repr(check(_fill(-1e9)))
    assert text.startswith("[还没对] ") and "放不进 float16" in text, text
    with using_language("zh"):
        text = repr(check(_float32_constant))
    assert text.startswith("[还没对] ") and "float16 最小的有限数" in text, text


@pytest.mark.parametrize(
    "answer", [None, "hf_to_additive", 3, torch.zeros(3, 1, 1, 5), torch.zeros(3, 1, 1, 5).half()]
)
def test_odd_answers_do_not_pass(answer):
    assert_not_yet(check(answer))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_empty_answer_says_what_to_write_not_how(lang):
    with using_language(lang):
        text = repr(check(None))
    marker = {"en": "YOUR CODE HERE", "zh": "在这里写代码"}[lang]  # the lessons' exercise marker
    assert "`answer = hf_to_additive`" in text and marker in text, text
    for method in ("finfo", "[:,", "None]", "==", ".to(", "unsqueeze", "masked_fill", "(b, 1"):
        assert method not in text.replace("`None`", ""), (method, text)
    assert not re.search(r"\d", text), text


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_a_right_answer_gives_sdpa_the_output_of_hidden_pads(dtype):
    """The mask the checker accepts is what SDPA needs, in low precision too: pads get no weight,
    and a row with no real key stays finite (where -inf would give NaN)."""
    attention_mask = torch.tensor([[0, 1, 1, 1], [1, 1, 0, 0]])  # (b, T), 1 = real
    q, k, v = (torch.randn(2, 2, 4, 3).to(dtype) for _ in range(3))  # (b, h, T, head_dim)
    sdpa = torch.nn.functional.scaled_dot_product_attention
    out = sdpa(q, k, v, attn_mask=_hf(attention_mask, dtype))  # (b, h, T, head_dim)
    for b in range(2):
        real = attention_mask[b].bool()
        alone = sdpa(q[b : b + 1], k[b : b + 1, :, real], v[b : b + 1, :, real])
        torch.testing.assert_close(out[b : b + 1].float(), alone.float(), atol=1e-2, rtol=1e-2)
    all_pads = torch.zeros(1, 4, dtype=torch.long)  # (1, T): no real key at all
    assert torch.isfinite(sdpa(q[:1], k[:1], v[:1], attn_mask=_hf(all_pads, dtype))).all()
