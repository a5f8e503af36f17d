"""The checkers of lessons 01-06 speak both languages.

For every checker, a correct answer and at least one wrong or missing answer: the result rendered
in Chinese holds Chinese characters (a ``[通过]``/``[还没对]``/``[已记下]`` mark and a translated
name and message), the result rendered in English holds none.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torch
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import exercises as ex
from mhsa_helpers.exercises import _common
from mhsa_helpers.exercises._build import BuildSpec, ContractError, build_checker
from mhsa_helpers.i18n import Text, tr, using_language

CJK = re.compile(r"[\u4e00-\u9fff]")
INPUTS = mh.book_inputs()  # (6, 3)


# -- answers ---------------------------------------------------------------------------------------


def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return e / e.sum(dim=-1, keepdim=True)


def naive_softmax(x: torch.Tensor) -> torch.Tensor:
    return torch.exp(x) / torch.exp(x).sum(dim=-1, keepdim=True)


def causal_weights(attn_scores: torch.Tensor, window: int | None = None) -> torch.Tensor:
    T = attn_scores.shape[-1]
    hidden = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    if window is not None:
        hidden = hidden | torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-window)
    return torch.softmax(attn_scores.masked_fill(hidden, -torch.inf), dim=-1)


def causal_weights_zero_fill(attn_scores: torch.Tensor) -> torch.Tensor:
    T = attn_scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill(future, 0.0), dim=-1)


def causal_weights_in_place(attn_scores: torch.Tensor) -> torch.Tensor:
    T = attn_scores.shape[-1]
    future = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    return torch.softmax(attn_scores.masked_fill_(future, -torch.inf), dim=-1)


class NoScalingV2(mh.SelfAttentionV2):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        keys, queries, values = self.W_key(x), self.W_query(x), self.W_value(x)
        return torch.softmax(queries @ keys.T, dim=-1) @ values


class ScaffoldV2(nn.Module):
    def __init__(self, d_in: int, d_out: int, qkv_bias: bool = False) -> None:
        super().__init__()
        raise NotImplementedError


class NoScalingMHA(mh.MultiHeadAttention):
    """The book's class with the scores left unscaled (head_dim ** 0.5 replaced by 1)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, T, _ = x.shape
        split = [
            layer(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
            for layer in (self.W_query, self.W_key, self.W_value)
        ]
        queries, keys, values = split  # (b, h, T, head_dim)
        scores = queries @ keys.transpose(2, 3)  # (b, h, T, T)
        scores = scores.masked_fill(self.mask.bool()[:T, :T], -torch.inf)
        weights = self.dropout(torch.softmax(scores, dim=-1))
        merged = (weights @ values).transpose(1, 2).contiguous().view(b, T, self.d_out)
        return self.out_proj(merged)


class ViewWithoutContiguousMHA(mh.MultiHeadAttention):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, T, _ = x.shape
        split = [
            layer(x).view(b, T, self.num_heads, self.head_dim).transpose(1, 2)
            for layer in (self.W_query, self.W_key, self.W_value)
        ]
        queries, keys, values = split
        scores = queries @ keys.transpose(2, 3) / self.head_dim**0.5
        scores = scores.masked_fill(self.mask.bool()[:T, :T], -torch.inf)
        weights = torch.softmax(scores, dim=-1)
        return self.out_proj((weights @ values).transpose(1, 2).view(b, T, self.d_out))


class NoOutProjMHA(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def seed123_attn_weights() -> torch.Tensor:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    with torch.no_grad():
        keys = INPUTS @ sa_v1.W_key
        queries = INPUTS @ sa_v1.W_query
        return torch.softmax(queries @ keys.T / 2**0.5, dim=-1)  # (6, 6)


def seed123_values() -> torch.Tensor:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    with torch.no_grad():
        return INPUTS @ sa_v1.W_value  # (6, 2)


def seed123_visible_3() -> torch.Tensor:
    """Exercise 3's answer: the context vector of "starts" over the first three tokens only."""
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    with torch.no_grad():
        scores = (INPUTS[2] @ sa_v1.W_query) @ (INPUTS[:3] @ sa_v1.W_key).T  # (3,)
        values = INPUTS[:3] @ sa_v1.W_value  # (3, 2)
    return torch.softmax(scores / 2**0.5, dim=-1) @ values


def v1_and_v2() -> tuple[nn.Module, nn.Module]:
    torch.manual_seed(123)
    sa_v1 = mh.SelfAttentionV1(3, 2)
    sa_v2 = mh.SelfAttentionV2(3, 2)
    with torch.no_grad():
        for n in ("W_query", "W_key", "W_value"):
            getattr(sa_v2, n).weight.copy_(getattr(sa_v1, n).T)
    return sa_v1, sa_v2


def context_vector_of_forward() -> torch.Tensor:
    new = torch.tensor(ex.NEW_TOKEN_EMBEDDING)
    seven = torch.cat([INPUTS, new.unsqueeze(0)])  # (7, 3)
    return torch.softmax(seven @ new, dim=0) @ seven  # (3,)


def received() -> torch.Tensor:
    return torch.softmax(INPUTS @ INPUTS.T, dim=-1).sum(dim=0)  # (6,)


def self_match_count() -> int:
    scores = INPUTS @ INPUTS.T
    return int((scores.argmax(dim=-1) == torch.arange(6)).sum())


def local_mask() -> torch.Tensor:
    ones = torch.ones(5, 5, dtype=torch.bool)
    return torch.triu(ones, diagonal=1) | torch.tril(ones, diagonal=-2)


def extra_head() -> torch.Tensor:
    """The head built right after the 3-head wrapper: a 4-head wrapper's head 4."""
    from mhsa_helpers.exercises.lesson05 import _wrapper_output

    return _wrapper_output()[..., 6:8]


X_HEADS = torch.arange(5 * 12, dtype=torch.float32).view(5, 12)  # (T, d_out), no batch axis
SPLIT = X_HEADS.view(5, 3, 4).transpose(0, 1)  # (h, T, head_dim)


# -- the cases: (id, passes?, call) ----------------------------------------------------------------

Case = tuple[str, bool, Callable[[], ex.CheckResult]]

CASES: list[Case] = [
    # lesson 01
    (
        "check_context_vector_new_token ok",
        True,
        lambda: ex.check_context_vector_new_token(context_vector_of_forward()),
    ),
    ("check_context_vector_new_token none", False, lambda: ex.check_context_vector_new_token(None)),
    (
        "check_context_vector_new_token (7, 3)",
        False,
        lambda: ex.check_context_vector_new_token(torch.ones(7, 3)),
    ),
    (
        "check_context_vector_new_token wrong",
        False,
        lambda: ex.check_context_vector_new_token(torch.zeros(3)),
    ),
    (
        "check_context_vector_new_token not a tensor",
        False,
        lambda: ex.check_context_vector_new_token("x"),
    ),
    ("check_softmax_rows ok", True, lambda: ex.check_softmax_rows(softmax_rows)),
    ("check_softmax_rows none", False, lambda: ex.check_softmax_rows(None)),
    ("check_softmax_rows tensor", False, lambda: ex.check_softmax_rows(torch.ones(2))),
    ("check_softmax_rows overflow", False, lambda: ex.check_softmax_rows(naive_softmax)),
    ("check_softmax_rows raises", False, lambda: ex.check_softmax_rows(lambda x: 1 / 0)),
    ("check_attention_received ok", True, lambda: ex.check_attention_received(received())),
    ("check_attention_received rows", False, lambda: ex.check_attention_received(torch.ones(6))),
    (
        "check_attention_received shape",
        False,
        lambda: ex.check_attention_received(torch.ones(6, 6)),
    ),
    (
        "check_prediction_self_match revealed ok",
        True,
        lambda: ex.check_prediction_self_match(self_match_count(), reveal=True),
    ),
    ("check_prediction_self_match noted", False, lambda: ex.check_prediction_self_match(3)),
    ("check_prediction_self_match none", False, lambda: ex.check_prediction_self_match(None)),
    (
        "check_prediction_self_match none revealed",
        False,
        lambda: ex.check_prediction_self_match(None, reveal=True),
    ),
    (
        "check_prediction_self_match wrong",
        False,
        lambda: ex.check_prediction_self_match(6 - self_match_count(), reveal=True),
    ),
    (
        "check_prediction_self_match odd",
        False,
        lambda: ex.check_prediction_self_match("two", reveal=True),
    ),
    # lesson 02
    ("check_context_vector_3 ok", True, lambda: ex.check_context_vector_3(seed123_visible_3())),
    (
        "check_context_vector_3 all six",
        False,
        lambda: ex.check_context_vector_3(seed123_attn_weights()[2] @ seed123_values()),
    ),
    (
        "check_context_vector_3 cut",
        False,
        lambda: ex.check_context_vector_3(seed123_attn_weights()[2][:3] @ seed123_values()[:3]),
    ),
    ("check_context_vector_3 none", False, lambda: ex.check_context_vector_3(None)),
    ("check_v1_to_v2 ok", True, lambda: ex.check_v1_to_v2(v1_and_v2()[1], v1_and_v2()[0], INPUTS)),
    ("check_v1_to_v2 none", False, lambda: ex.check_v1_to_v2(None, v1_and_v2()[0], INPUTS)),
    ("check_v1_to_v2 v1", False, lambda: ex.check_v1_to_v2(v1_and_v2()[0], v1_and_v2()[0], INPUTS)),
    (
        "check_v1_to_v2 fresh",
        False,
        lambda: ex.check_v1_to_v2(mh.SelfAttentionV2(3, 2), v1_and_v2()[0], INPUTS),
    ),
    ("check_v1_to_v2 number", False, lambda: ex.check_v1_to_v2(3, v1_and_v2()[0], INPUTS)),
    (
        "check_build_self_attention ok",
        True,
        lambda: ex.check_build_self_attention(mh.SelfAttentionV2),
    ),
    ("check_build_self_attention none", False, lambda: ex.check_build_self_attention(None)),
    (
        "check_build_self_attention instance",
        False,
        lambda: ex.check_build_self_attention(mh.SelfAttentionV2(3, 2)),
    ),
    (
        "check_build_self_attention unscaled",
        False,
        lambda: ex.check_build_self_attention(NoScalingV2),
    ),
    (
        "check_build_self_attention scaffold",
        False,
        lambda: ex.check_build_self_attention(ScaffoldV2),
    ),
    (
        "check_prediction_saturation revealed ok",
        True,
        lambda: ex.check_prediction_saturation(1.0, reveal=True),
    ),
    ("check_prediction_saturation noted", False, lambda: ex.check_prediction_saturation(0.5)),
    (
        "check_prediction_saturation wrong",
        False,
        lambda: ex.check_prediction_saturation(0.3, reveal=True),
    ),
    ("check_prediction_saturation none", False, lambda: ex.check_prediction_saturation(None)),
    (
        "check_prediction_saturation odd",
        False,
        lambda: ex.check_prediction_saturation(1.5, reveal=True),
    ),
    # lesson 03
    ("check_local_mask ok", True, lambda: ex.check_local_mask(local_mask())),
    ("check_local_mask none", False, lambda: ex.check_local_mask(None)),
    ("check_local_mask inverted", False, lambda: ex.check_local_mask(~local_mask())),
    (
        "check_local_mask causal",
        False,
        lambda: ex.check_local_mask(torch.triu(torch.ones(5, 5), 1).bool()),
    ),
    (
        "check_local_mask shape",
        False,
        lambda: ex.check_local_mask(torch.ones(4, 4, dtype=torch.bool)),
    ),
    ("check_local_mask not a tensor", False, lambda: ex.check_local_mask([[True]])),
    ("check_local_mask -inf", False, lambda: ex.check_local_mask(torch.full((5, 5), -torch.inf))),
    ("check_build_causal_weights ok", True, lambda: ex.check_build_causal_weights(causal_weights)),
    ("check_build_causal_weights none", False, lambda: ex.check_build_causal_weights(None)),
    ("check_build_causal_weights class", False, lambda: ex.check_build_causal_weights(nn.Linear)),
    (
        "check_build_causal_weights zero fill",
        False,
        lambda: ex.check_build_causal_weights(causal_weights_zero_fill),
    ),
    (
        "check_build_causal_weights in place",
        False,
        lambda: ex.check_build_causal_weights(causal_weights_in_place),
    ),
    (
        "check_build_causal_weights identity",
        False,
        lambda: ex.check_build_causal_weights(lambda s: s),
    ),
    (
        "check_prediction_changed_weights revealed ok",
        True,
        lambda: ex.check_prediction_changed_weights(6, reveal=True),
    ),
    (
        "check_prediction_changed_weights noted",
        False,
        lambda: ex.check_prediction_changed_weights(36),
    ),
    (
        "check_prediction_changed_weights wrong",
        False,
        lambda: ex.check_prediction_changed_weights(30, reveal=True),
    ),
    (
        "check_prediction_changed_weights none",
        False,
        lambda: ex.check_prediction_changed_weights(None),
    ),
    # lesson 04
    ("check_dropout_scale ok", True, lambda: ex.check_dropout_scale(1.25)),
    ("check_dropout_scale none", False, lambda: ex.check_dropout_scale(None)),
    ("check_dropout_scale 0.8", False, lambda: ex.check_dropout_scale(0.8)),
    ("check_dropout_scale other", False, lambda: ex.check_dropout_scale(7)),
    ("check_dropout_scale text", False, lambda: ex.check_dropout_scale("1.25")),
    ("check_zero_fraction ok", True, lambda: ex.check_zero_fraction((15 + 21 * 0.5) / 36)),
    ("check_zero_fraction none", False, lambda: ex.check_zero_fraction(None)),
    ("check_zero_fraction half", False, lambda: ex.check_zero_fraction(0.5)),
    ("check_zero_fraction count", False, lambda: ex.check_zero_fraction(25.5)),
    ("check_zero_fraction other", False, lambda: ex.check_zero_fraction(0.6)),
    ("check_dropout_rate ok", True, lambda: ex.check_dropout_rate(0.3)),
    ("check_dropout_rate none", False, lambda: ex.check_dropout_rate(None)),
    ("check_dropout_rate zeros", False, lambda: ex.check_dropout_rate(0.25)),
    ("check_dropout_rate factor", False, lambda: ex.check_dropout_rate(1 / 0.7)),
    ("check_survivor_prediction ok", True, lambda: ex.check_survivor_prediction(2.0)),
    ("check_survivor_prediction wrong", False, lambda: ex.check_survivor_prediction(1.0)),
    ("check_survivor_prediction none", False, lambda: ex.check_survivor_prediction(None)),
    ("check_survivor_prediction odd", False, lambda: ex.check_survivor_prediction("two")),
    # lesson 05
    ("check_wrapper_parameters ok", True, lambda: ex.check_wrapper_parameters(1_769_472)),
    ("check_wrapper_parameters none", False, lambda: ex.check_wrapper_parameters(None)),
    ("check_wrapper_parameters one head", False, lambda: ex.check_wrapper_parameters(147_456)),
    ("check_wrapper_parameters odd", False, lambda: ex.check_wrapper_parameters("64")),
    ("check_head_output ok", True, lambda: ex.check_head_output(extra_head())),
    ("check_head_output none", False, lambda: ex.check_head_output(None)),
    ("check_head_output whole", False, lambda: ex.check_head_output(torch.ones(2, 6, 6))),
    ("check_head_output wrong", False, lambda: ex.check_head_output(torch.zeros(2, 6, 2))),
    ("check_matmul_count ok", True, lambda: ex.check_matmul_count(1_538_457_600)),
    ("check_matmul_count none", False, lambda: ex.check_matmul_count(None)),
    ("check_matmul_count calls", False, lambda: ex.check_matmul_count(60)),
    ("check_matmul_count other", False, lambda: ex.check_matmul_count(7)),
    ("check_matmul_prediction ok", True, lambda: ex.check_matmul_prediction(10)),
    ("check_matmul_prediction wrong", False, lambda: ex.check_matmul_prediction(5)),
    ("check_matmul_prediction none", False, lambda: ex.check_matmul_prediction(None)),
    # lesson 06
    ("check_head_dim ok", True, lambda: ex.check_head_dim(128)),
    ("check_head_dim none", False, lambda: ex.check_head_dim(None)),
    ("check_head_dim total", False, lambda: ex.check_head_dim(4096)),
    ("check_head_dim odd", False, lambda: ex.check_head_dim(12.5)),
    ("check_mha_parameter_count ok", True, lambda: ex.check_mha_parameter_count(1536)),
    ("check_mha_parameter_count none", False, lambda: ex.check_mha_parameter_count(None)),
    ("check_mha_parameter_count no bias", False, lambda: ex.check_mha_parameter_count(1537)),
    ("check_mha_parameter_count heads", False, lambda: ex.check_mha_parameter_count(24)),
    ("check_mha_parameter_count other", False, lambda: ex.check_mha_parameter_count(3)),
    ("check_split_into_heads ok", True, lambda: ex.check_split_into_heads(SPLIT, X_HEADS)),
    ("check_split_into_heads none", False, lambda: ex.check_split_into_heads(None, X_HEADS)),
    (
        "check_split_into_heads no transpose",
        False,
        lambda: ex.check_split_into_heads(X_HEADS.view(5, 3, 4), X_HEADS),
    ),
    (
        "check_split_into_heads mixed",
        False,
        lambda: ex.check_split_into_heads(X_HEADS.view(3, 5, 4), X_HEADS),
    ),
    ("check_split_into_heads bad x", False, lambda: ex.check_split_into_heads(SPLIT, None)),
    ("check_split_matmul_prediction ok", True, lambda: ex.check_split_matmul_prediction(6)),
    ("check_split_matmul_prediction wrong", False, lambda: ex.check_split_matmul_prediction(12)),
    ("check_split_matmul_prediction none", False, lambda: ex.check_split_matmul_prediction(None)),
    ("check_build_multihead ok", True, lambda: ex.check_build_multihead(mh.MultiHeadAttention)),
    ("check_build_multihead none", False, lambda: ex.check_build_multihead(None)),
    (
        "check_build_multihead instance",
        False,
        lambda: ex.check_build_multihead(mh.MultiHeadAttention(4, 4, 4, 0.0, 2)),
    ),
    (
        "check_build_multihead not a class",
        False,
        lambda: ex.check_build_multihead("MultiHeadAttention"),
    ),
    ("check_build_multihead unscaled", False, lambda: ex.check_build_multihead(NoScalingMHA)),
    (
        "check_build_multihead view",
        False,
        lambda: ex.check_build_multihead(ViewWithoutContiguousMHA),
    ),
    ("check_build_multihead no out_proj", False, lambda: ex.check_build_multihead(NoOutProjMHA)),
    (
        "check_causal_attention_class ok",
        True,
        lambda: ex.check_causal_attention_class(mh.CausalAttention),
    ),
    ("check_causal_attention_class none", False, lambda: ex.check_causal_attention_class(None)),
    ("check_wrapper_class ok", True, lambda: ex.check_wrapper_class(mh.MultiHeadAttentionWrapper)),
    ("check_wrapper_class wrong", False, lambda: ex.check_wrapper_class(mh.CausalAttention)),
]


BY_CHECKER: dict[str, list[Case]] = {}
for _case in CASES:
    BY_CHECKER.setdefault(_case[0].split()[0], []).append(_case)


@pytest.mark.parametrize("checker", sorted(BY_CHECKER))
def test_checker_speaks_both_languages(checker: str) -> None:
    """Every case of the checker; the report names each case that fails, with its assertion."""
    failed = []
    for case_id, passes, call in BY_CHECKER[checker]:
        try:
            _speaks_both_languages(passes, call)
        except AssertionError as error:
            failed.append(f"{case_id}: {error}")
    assert failed == []


def _speaks_both_languages(passes: bool, call: Callable[[], ex.CheckResult]) -> None:
    result = call()
    assert isinstance(result, ex.CheckResult)
    assert bool(result) is passes, repr(result)
    zh, en = result.render("zh"), result.render("en")
    assert CJK.search(zh), zh
    assert not CJK.search(en), en
    assert isinstance(result.exercise, Text) and isinstance(result.text, Text)
    assert CJK.search(result.exercise.zh), result.exercise  # the name is translated too
    assert CJK.search(result.text.zh), result.text
    assert en == repr(result)  # English stays the default
    assert zh.startswith(("[通过] ", "[还没对] ", "[未完成] ", "[已记下] ")), zh
    with using_language("zh"):
        assert str(result) == zh
        assert result.message == result.text.zh


def test_every_checker_of_lessons_01_06_is_covered() -> None:
    from mhsa_helpers.exercises import lesson01, lesson02, lesson03, lesson04, lesson05, lesson06

    modules = (lesson01, lesson02, lesson03, lesson04, lesson05, lesson06)
    checkers = {n for m in modules for n in m.__all__ if n.startswith("check_")}
    for passes in (True, False):
        covered = {case_id.split()[0] for case_id, ok, _ in CASES if ok is passes}
        assert checkers <= covered, sorted(checkers - covered)


def test_contract_helpers_need_texts() -> None:
    with pytest.raises(_common.UntranslatedMessage):
        ContractError("plain")  # type: ignore[arg-type]
    error = ContractError(tr("a hint.", "一个提示。"))
    assert str(error) == "a hint." and error.text.zh == "一个提示。"
    name = tr("build it", "动手实现")
    passed = tr("correct.", "正确。")
    spec = BuildSpec(
        name=name,
        contracts=(),
        passed=passed,
        missing_what=tr("your class", "你的类"),
        instance_hint=tr("pass the class.", "请传入类本身。"),
        not_class_hint=tr("got {kind} {cls!r}.", "收到的是 {kind} {cls!r}。"),
    )
    result = build_checker("check_class", spec, "A class answer.")(42)
    assert result.render("en") == "[NOT YET] build it: hint: got int 42."
    assert result.render("zh") == "[还没对] 动手实现。提示：收到的是 int 42。"
    spec = BuildSpec(name, (), passed, answer="function", function_name="my_fn")
    missing = build_checker("check_function", spec, "A function answer.")(None)
    assert "`answer = my_fn`" in missing.render("zh")
    assert CJK.search(missing.render("zh")) and not CJK.search(missing.render("en"))
