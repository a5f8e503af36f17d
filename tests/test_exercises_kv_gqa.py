"""Lesson 10's build-its (the KV cache, GQA's key/value sharing) and its empty-answer messages.

Correct answers in several spellings pass; each usual mistake gets NOT YET with a hint that names
it; every lesson-10 checker, given no answer, says what to write and where, never the method.
"""

from __future__ import annotations

import re

import pytest
import torch

from mhsa_helpers import exercises as ex
from mhsa_helpers.exercises import lesson10
from mhsa_helpers.i18n import using_language


def assert_not_yet(result, *fragments: str) -> None:
    shown = repr(result)
    assert not result and shown.startswith(("[NOT YET] ", "[TO DO] ")), shown
    for fragment in fragments:
        assert fragment in shown, shown


# -- the KV cache --------------------------------------------------------------------------------


def causal(q, keys, values, offset):
    """New queries (b, h, n, d) at the cache offset attend over keys/values (b, h, T, d)."""
    n, T = q.shape[-2], keys.shape[-2]
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)[offset : offset + n]  # (n, T)
    scores = (q @ keys.transpose(-2, -1)) / q.shape[-1] ** 0.5  # (b, h, n, T)
    return torch.softmax(scores.masked_fill(mask, -torch.inf), dim=-1) @ values


class CatCache:
    """The lesson's solution: torch.cat, the mask sliced at the offset."""

    def __init__(self, max_len):
        self.max_len = max_len
        self.keys = None
        self.values = None

    def __len__(self):
        return 0 if self.keys is None else self.keys.shape[-2]

    def store(self, k, v):
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=-2)
        self.values = v if self.values is None else torch.cat([self.values, v], dim=-2)

    def check_room(self, n):
        if len(self) + n > self.max_len:
            raise ValueError(f"the cache holds {len(self)} of {self.max_len} tokens")

    def attend(self, q, offset):
        return causal(q, self.keys, self.values, offset)

    def append_and_attend(self, q, k, v):
        self.check_room(k.shape[-2])
        offset = len(self)
        self.store(k, v)
        return self.attend(q, offset)


class Preallocated:
    """A production spelling: buffers of max_len allocated at the first call, a position counter,
    SDPA with a bool mask (True = may attend)."""

    def __init__(self, max_len):
        self.max_len, self.pos, self.k_buf, self.v_buf = max_len, 0, None, None

    def append_and_attend(self, q, k, v):
        b, h, n, d = k.shape
        if self.pos + n > self.max_len:
            raise ValueError("cache full")
        if self.k_buf is None:
            self.k_buf = k.new_zeros(b, h, self.max_len, d)
            self.v_buf = v.new_zeros(b, h, self.max_len, d)
        self.k_buf[:, :, self.pos : self.pos + n] = k
        self.v_buf[:, :, self.pos : self.pos + n] = v
        T = self.pos + n
        allowed = torch.ones(T, T, dtype=torch.bool).tril()[self.pos :]  # (n, T)
        self.pos = T
        return torch.nn.functional.scaled_dot_product_attention(
            q, self.k_buf[:, :, :T], self.v_buf[:, :, :T], attn_mask=allowed
        )


class ListCache:
    """Keeps lists of chunks and builds the mask by comparing positions."""

    def __init__(self, max_len):
        self.max_len, self.ks, self.vs = max_len, [], []

    def append_and_attend(self, q, k, v):
        cached = sum(t.shape[-2] for t in self.ks)
        if cached + k.shape[-2] > self.max_len:
            raise ValueError("too long")
        self.ks.append(k)
        self.vs.append(v)
        keys, values = torch.cat(self.ks, -2), torch.cat(self.vs, -2)
        query_pos = torch.arange(cached, cached + q.shape[-2])[:, None]
        hidden = torch.arange(keys.shape[-2])[None, :] > query_pos  # (n, T)
        scores = q @ keys.mT * q.shape[-1] ** -0.5
        return scores.masked_fill(hidden, float("-inf")).softmax(-1) @ values


@pytest.mark.parametrize("cls", [CatCache, Preallocated, ListCache])
def test_kv_cache_correct_spellings_pass(cls):
    result = ex.check_kv_cache_step(cls)
    assert result and repr(result).startswith("[PASS] "), repr(result)


def variant(**overrides):
    """A CatCache with some of its steps replaced by a mistake."""
    return type("Wrong", (CatCache,), overrides)


def top_left(self, q, offset):
    T = self.keys.shape[-2]
    mask = torch.ones(q.shape[-2], T, dtype=torch.bool).triu(1)  # is_causal's alignment
    scores = (q @ self.keys.transpose(-2, -1)) / q.shape[-1] ** 0.5
    return torch.softmax(scores.masked_fill(mask, -torch.inf), dim=-1) @ self.values


def no_mask(self, q, offset):
    scores = (q @ self.keys.transpose(-2, -1)) / q.shape[-1] ** 0.5
    return torch.softmax(scores, dim=-1) @ self.values


def full_mask_top_rows(self, q, offset):
    T = self.keys.shape[-2]
    mask = torch.ones(T, T, dtype=torch.bool).triu(1)[: q.shape[-2]]  # rows 0..n-1, not offset..
    scores = (q @ self.keys.transpose(-2, -1)) / q.shape[-1] ** 0.5
    return torch.softmax(scores.masked_fill(mask, -torch.inf), dim=-1) @ self.values


class ForgetsThePast(CatCache):
    def append_and_attend(self, q, k, v):
        self.check_room(k.shape[-2])
        self.keys, self.values = k, v  # replaces the cache instead of appending
        return self.attend(q, 0)


def wrong_dim(dim):
    def store(self, k, v):
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=dim)
        self.values = v if self.values is None else torch.cat([self.values, v], dim=dim)

    return store


class CachesQueries(CatCache):
    def append_and_attend(self, q, k, v):
        self.check_room(k.shape[-2])
        offset = len(self)
        self.store(q, v)  # the queries cached as keys
        return self.attend(q, offset)


class ValuesAreKeys(CatCache):
    def append_and_attend(self, q, k, v):
        self.check_room(k.shape[-2])
        offset = len(self)
        self.store(k, k)
        return self.attend(q, offset)


class Unbounded(CatCache):
    def check_room(self, n):
        pass


class RefusesWhenFilled(CatCache):
    """Off by one: refuses a chunk that fills the cache to exactly max_len."""

    def check_room(self, n):
        if len(self) + n >= self.max_len:
            raise ValueError("the cache is full")


class IndexErrorWhenFull(CatCache):
    def check_room(self, n):
        if len(self) + n > self.max_len:
            raise IndexError("full")


class AppendsThenRefuses(CatCache):
    def append_and_attend(self, q, k, v):
        offset = len(self)
        self.store(k, v)
        self.check_room(0)
        return self.attend(q, offset)


class InPlaceKeys(CatCache):
    def append_and_attend(self, q, k, v):
        k.mul_(1.0)  # a write that keeps the values
        return super().append_and_attend(q, k, v)


class ScalesQueriesInPlace(CatCache):
    def append_and_attend(self, q, k, v):
        q /= 1.0
        return super().append_and_attend(q, k, v)


class Unscaled(CatCache):
    def attend(self, q, offset):
        return causal(q * q.shape[-1] ** 0.5, self.keys, self.values, offset)


class ReturnsTuple(CatCache):
    def append_and_attend(self, q, k, v):
        return super().append_and_attend(q, k, v), None


class NotWritten(CatCache):
    def append_and_attend(self, q, k, v):
        raise NotImplementedError


@pytest.mark.parametrize(
    ("cls", "fragments"),
    [
        (variant(attend=top_left), ("cache offset", "rows offset:offset + n")),
        (variant(attend=full_mask_top_rows), ("cache offset",)),
        (variant(attend=no_mask), ("own future",)),
        (ForgetsThePast, ("append k and v",)),
        (variant(store=wrong_dim(1)), ("along dim 1", "dim=-2")),
        (variant(store=wrong_dim(-1)), ("along dim 3", "dim=-2")),
        (variant(store=wrong_dim(0)), ("along dim 0",)),
        (CachesQueries, ("self.keys holds the queries", "cache the keys k")),
        (ValuesAreKeys, ("self.values holds the keys",)),
        (Unbounded, ("Unbounded(5) holding 3 token(s) took 4 more", "ValueError")),
        (IndexErrorWhenFull, ("raised IndexError", "ValueError")),
        (RefusesWhenFilled, ("off by one", "exactly max_len", "(test: b=2")),
        (AppendsThenRefuses, ("still appended",)),
        (InPlaceKeys, ("k or v in place",)),
        (ScalesQueriesInPlace, ("argument q in place",)),
        (Unscaled, ("not scaled",)),
        (ReturnsTuple, ("tuple",)),
        (NotWritten, ("not written yet",)),
    ],
    ids=lambda value: getattr(value, "__name__", None) or "",
)
def test_kv_cache_mistakes_are_named(cls, fragments):
    assert_not_yet(ex.check_kv_cache_step(cls), *fragments)


@pytest.mark.parametrize("cls", [ScalesQueriesInPlace, InPlaceKeys, RefusesWhenFilled])
def test_kv_cache_hint_gives_the_test_setting_once(cls):
    """The sizes tested follow the hint in one bracket, never a bracket inside a bracket."""
    result = ex.check_kv_cache_step(cls)
    english, chinese = result.render("en"), result.render("zh")
    assert english.count("(test:") == 1 and "(test: b=" in english, english
    assert chinese.count("测试") == 1 and "（测试：b=" in chinese, chinese


@pytest.mark.parametrize("mistake", lesson10._KV_MISTAKES)
def test_each_kv_mistake_changes_the_outputs_at_the_checked_sizes(mistake):
    """Every mistake the hints name is visible at the sizes checked (so none passes as right)."""
    torch.manual_seed(0)
    for b, h, d, chunks in lesson10._KV_SIZES:
        q, k, v = (torch.randn(b, h, sum(chunks), d) for _ in range(3))
        right = lesson10._cached_attention(q, k, v, chunks)
        assert not torch.allclose(right, lesson10._cached_attention(q, k, v, chunks, mistake))


def test_kv_cache_wrong_kinds():
    assert_not_yet(ex.check_kv_cache_step(CatCache(4)), "the class itself", "no parentheses")
    assert_not_yet(ex.check_kv_cache_step(len), "the class itself")
    assert_not_yet(ex.check_kv_cache_step(int), "no method `append_and_attend`")
    assert_not_yet(ex.check_kv_cache_step(None), "answer = MyKVCache")


# -- repeat_kv -------------------------------------------------------------------------------------


def interleave(x, n_rep):
    return x.repeat_interleave(n_rep, dim=1)


def expand_reshape(x, n_rep):  # the Hugging Face Llama spelling
    b, g, T, d = x.shape
    if n_rep == 1:
        return x
    return x[:, :, None, :, :].expand(b, g, n_rep, T, d).reshape(b, g * n_rep, T, d)


def index_select(x, n_rep):
    return x[:, torch.arange(x.shape[1] * n_rep) // n_rep]


@pytest.mark.parametrize("fn", [expand_reshape, index_select])
def test_repeat_kv_correct_spellings_pass(fn):
    result = ex.check_repeat_kv(fn)
    assert result and repr(result).startswith("[PASS] "), repr(result)


def test_repeat_kv_with_repeat_interleave_is_refused():
    """The brief says "this time without repeat_interleave"."""
    result = ex.check_repeat_kv(interleave)
    assert not result and "without repeat_interleave" in repr(result), repr(result)


def tiled(x, n_rep):
    return x.repeat(1, n_rep, 1, 1)


def on_tokens(x, n_rep):
    return x.repeat_interleave(n_rep, dim=2)


def on_batch(x, n_rep):
    return x.repeat_interleave(n_rep, dim=0)


def on_last(x, n_rep):
    return x.repeat_interleave(n_rep, dim=-1)


def unchanged(x, n_rep):
    return x


def breaks_at_one(x, n_rep):
    if n_rep == 1:
        raise ValueError("n_rep must be at least 2")
    return x.repeat_interleave(n_rep, dim=1)


def writes_input(x, n_rep):
    x.mul_(1.0)
    return x.repeat_interleave(n_rep, dim=1)


def half_precision(x, n_rep):
    return x.repeat_interleave(n_rep, dim=1).half()


def expand_wrong_order(x, n_rep):
    b, g, T, d = x.shape
    return x[:, None].expand(b, n_rep, g, T, d).reshape(b, g * n_rep, T, d)


def shuffled(x, n_rep):
    return x.repeat_interleave(n_rep, dim=1).flip(1)


@pytest.mark.parametrize(
    ("fn", "fragments"),
    [
        (tiled, ("grouped wrongly", "[0, 1, 2, 0, 1, 2]")),
        (expand_wrong_order, ("grouped wrongly",)),
        (on_tokens, ("dim 2 (the tokens)", "along dim 1")),
        (on_batch, ("dim 0 (the batch)",)),
        (on_last, ("dim 3 (head_dim)",)),
        (unchanged, ("n_rep = 2 times",)),
        (breaks_at_one, ("n_rep=1", "raised ValueError")),
        (writes_input, ("in place",)),
        (half_precision, ("torch.float16",)),
        (shuffled, ("x[:, i // n_rep]",)),
    ],
    ids=lambda value: getattr(value, "__name__", None) or "",
)
def test_repeat_kv_mistakes_are_named(fn, fragments):
    assert_not_yet(ex.check_repeat_kv(fn), *fragments)


def test_repeat_kv_wrong_kinds():
    x = torch.randn(1, 2, 3, 4)
    assert_not_yet(ex.check_repeat_kv(interleave(x, 2)), "not a call")
    assert_not_yet(ex.check_repeat_kv(torch.nn.Linear), "expected a function")
    assert_not_yet(ex.check_repeat_kv(None), "answer = repeat_kv")


def test_repeat_kv_matches_the_package_gqa():
    """The function the checker wants is the sharing mh.GroupedQueryAttention does."""
    import mhsa_helpers as mh

    torch.manual_seed(0)
    gqa = mh.GroupedQueryAttention(12, 12, 8, 0.0, num_heads=6, num_kv_groups=2).eval()
    x = torch.randn(2, 5, 12)  # (b, T, d_in)
    b, T, _ = x.shape
    q = gqa.W_query(x).view(b, T, 6, 2).transpose(1, 2)  # (b, h, T, head_dim)
    k = interleave(gqa.W_key(x).view(b, T, 2, 2).transpose(1, 2), 3)  # (b, h, T, head_dim)
    v = interleave(gqa.W_value(x).view(b, T, 2, 2).transpose(1, 2), 3)
    context = causal(q, k, v, 0).transpose(1, 2).reshape(b, T, 12)  # (b, T, d_out)
    with torch.no_grad():
        torch.testing.assert_close(gqa.out_proj(context), gqa(x))


# -- the empty answer says what to write and where, never the method ----------------------------

LESSON10 = [name for name in lesson10.__all__ if name.startswith("check_")]
OPERATOR_OR_DIGIT = re.compile(r"[*/+^×·\d]")  # "=" stays: `answer = ...`


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("name", LESSON10)
def test_empty_answer_names_what_to_write_not_how(name, lang):
    with using_language(lang):
        result = getattr(ex, name)(None)
        shown, exercise = repr(result), str(result.exercise)
    assert not result
    message = shown.split(exercise, 1)[1]  # what follows the exercise's name
    assert "`answer" in message or "`prediction" in message, message
    assert not OPERATOR_OR_DIGIT.search(message.replace("K/V", "")), message  # a name, no "/"
    assert "head_dim" not in message and "K and V" not in message, message


def test_kv_groups_empty_answer_uses_the_lessons_word():
    """The lesson says K/V 组数 (K/V groups), not 键值分组的个数."""
    with using_language("zh"):
        shown = repr(ex.check_kv_cache_bytes(None))
    assert "K/V 组数（一个整数）" in shown and "键值分组" not in shown, shown


def test_the_lesson10_checkers_are_all_here():
    assert len(LESSON10) == 6, LESSON10


def test_kv_cache_cat_on_a_wrong_dim_is_named_from_the_cache_when_cat_succeeds():
    """Chunks of one token each concatenate on any dim; the cached tensor's shape names it."""
    saved = lesson10._KV_SIZES
    try:
        lesson10._KV_SIZES = ((1, 2, 3, (1, 1, 1)),)
        result = ex.check_kv_cache_step(variant(store=wrong_dim(1)))
    finally:
        lesson10._KV_SIZES = saved
    assert_not_yet(result, "grew along dim 1", "dim=-2")


class SDPAIsCausal(CatCache):
    """SDPA's is_causal=True aligns its mask top-left: wrong as soon as something is cached."""

    def attend(self, q, offset):
        return torch.nn.functional.scaled_dot_product_attention(
            q, self.keys, self.values, is_causal=True
        )


class SDPAIsCausalOnlyWhenEmpty(CatCache):
    """The usual repair: is_causal for the prefill, an explicit offset mask afterwards."""

    def attend(self, q, offset):
        if offset == 0:
            return torch.nn.functional.scaled_dot_product_attention(
                q, self.keys, self.values, is_causal=True
            )
        return super().attend(q, offset)


def test_sdpa_is_causal_after_a_cache_is_named_and_its_repair_passes():
    assert_not_yet(ex.check_kv_cache_step(SDPAIsCausal), "cache offset")
    assert ex.check_kv_cache_step(SDPAIsCausalOnlyWhenEmpty)


CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize(
    "call",
    [
        lambda: ex.check_kv_cache_step(CatCache),
        lambda: ex.check_kv_cache_step(variant(attend=top_left)),
        lambda: ex.check_kv_cache_step(variant(store=wrong_dim(1))),
        lambda: ex.check_kv_cache_step(Unbounded),
        lambda: ex.check_kv_cache_step(CachesQueries),
        lambda: ex.check_kv_cache_step(InPlaceKeys),
        lambda: ex.check_repeat_kv(interleave),
        lambda: ex.check_repeat_kv(tiled),
        lambda: ex.check_repeat_kv(on_tokens),
        lambda: ex.check_repeat_kv(breaks_at_one),
    ],
)
def test_build_it_results_speak_both_languages(call):
    result = call()
    english, chinese = result.render("en"), result.render("zh")
    assert not CHINESE.search(english), english
    assert CHINESE.search(chinese.split("：", 1)[-1]), chinese  # the hint itself, not only the name
    assert english.startswith("[PASS]" if result else ("[NOT YET]", "[TO DO]")), english
