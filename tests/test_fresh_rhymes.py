"""Lesson 12's fresh-rhyme sampling rule: where the next character ends a couplet-line, no
character that already ends a couplet-line of the poem may be drawn (``lm.fresh_rhyme_bans``,
``generate(step_banned=...)``, ``write_poems(fresh_rhymes=True)``), and ``repeated_rhyme_share``;
the stricter fresh-character rule, no character of the poem twice (``lm.fresh_char_bans``,
``write_poems(fresh_chars=True)``), and ``repeated_char_share``.

The shipped model's numbers with the rule are re-measured in ``test_char_lm_shipped.py``.
"""

from __future__ import annotations

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from mhsa_helpers import lm

QUIET_NIGHT = "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n"
CHARS = "山水花月风"  # a tiny poem alphabet: five characters that can end a line
TOKENIZER = lm.CharTokenizer(CHARS + "，。\n")


def uniform_model(context_length: int = 16, vocab_size: int = TOKENIZER.vocab_size):
    """A model over ``vocab_size`` tokens (``TOKENIZER``'s by default) whose next-token
    distribution is close to uniform."""
    torch.manual_seed(0)
    model = lm.CharTransformer(vocab_size, 8, context_length, 2, 1).eval()
    with torch.no_grad():
        model.tok_emb.weight.mul_(1e-3)  # tied to the LM head: logits near 0
    return model


def violations(text: str) -> list[int]:
    """The positions of ``text`` whose character the rule would have banned there."""
    return [t for t in range(1, len(text)) if text[t] in lm.fresh_rhyme_bans(text[:t])]


def banned_places(text: str) -> int:
    return sum(bool(lm.fresh_rhyme_bans(text[:t])) for t in range(1, len(text)))


# ----------------------------------------------------------------------- where the rule bans


def test_the_rule_bans_the_poem_s_line_ends_only_where_a_line_end_is_due():
    start = "\n床前明月光，疑是地上霜。\n举头望明月，"
    second = "低头思故乡"
    for k in range(len(second)):
        expected = "霜" if k == 4 else ""  # after 4 of 5: the next character ends the line
        assert lm.fresh_rhyme_bans(start + second[:k]) == expected, k
    assert lm.fresh_rhyme_bans("\n" + QUIET_NIGHT + "白日依山尽，黄河入海") == "霜乡"
    seven = "\n故人西辞黄鹤楼，烟花三月下扬州。\n孤帆远影碧空尽，唯见长江天际"
    assert lm.fresh_rhyme_bans(seven) == "州"
    assert lm.fresh_rhyme_bans(seven[:-1]) == ""  # one character before the place


def test_the_rule_forgets_a_poem_after_the_empty_line_that_ends_it():
    ended = "\n" + QUIET_NIGHT + "\n"
    assert lm.fresh_rhyme_bans(ended) == ""
    assert lm.fresh_rhyme_bans(ended + "白日依山尽，黄河入海") == ""  # the first line of a new poem
    assert lm.fresh_rhyme_bans(ended + "白日依山尽，黄河入海流。\n欲穷千里目，更上一层") == "流"


def test_the_rule_bans_nothing_in_a_line_that_is_not_two_halves():
    for text in (
        "\n床前明月光。\n疑是地上",  # no comma
        "\n床前明月光，疑是地上霜。\n举头，望明，月低头",  # two commas
        "\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡亲",  # past the place
        "",
        "\n",
    ):
        assert lm.fresh_rhyme_bans(text) == "", text


@settings(max_examples=200)
@given(st.text(alphabet=CHARS + "，。\n", max_size=40))
def test_bans_are_earlier_line_ends_of_the_poem_and_only_at_the_line_end_place(text):
    bans = lm.fresh_rhyme_bans(text)
    *earlier, current = text.split("\n\n")[-1].split("\n")
    ends = {lm.line_end(line) for line in earlier} - {None}
    assert set(bans) <= ends and len(set(bans)) == len(bans)
    halves = current.split("，")
    due = len(halves) == 2 and "。" not in current and len(halves[1]) == len(halves[0]) - 1
    assert bool(bans) == (due and bool(halves[0]) and bool(ends)), (text, bans)


def test_bad_input_is_named():
    with pytest.raises(TypeError, match="text must be a str"):
        lm.fresh_rhyme_bans(["床"])
    with pytest.raises(TypeError, match="tokenizer must be a CharTokenizer"):
        lm.fresh_rhyme_rule("山水")


# -------------------------------------------------------------------- the rule in generation


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), batch=st.integers(1, 4))
def test_generation_with_the_rule_never_draws_a_banned_line_end(seed, batch):
    prompts = TOKENIZER.encode("\n山").expand(batch, -1)  # (batch, 2)
    rule = lm.fresh_rhyme_rule(TOKENIZER)
    out = lm.generate(uniform_model(), prompts, 40, seed=seed, step_banned=rule)
    for row in out:
        assert violations(TOKENIZER.decode(row)) == []


def test_without_the_rule_the_same_model_repeats_line_ends_so_the_test_has_teeth():
    prompts = TOKENIZER.encode("\n山").expand(64, -1)  # (64, 2)
    plain = lm.generate(uniform_model(), prompts, 40, seed=0)
    texts = [TOKENIZER.decode(row) for row in plain]
    assert sum(banned_places(text) for text in texts) >= 20  # 28 places where a ban applies
    assert sum(len(violations(text)) for text in texts) >= 2  # 4 repeated line ends


def test_a_rule_that_bans_nothing_changes_nothing_and_bans_act_at_their_step_only():
    model = uniform_model()
    prompts = torch.tensor([[1, 2], [3, 4]])
    plain = lm.generate(model, prompts, 10, seed=5)
    none = lm.generate(model, prompts, 10, seed=5, step_banned=lambda ids: [[], []])
    assert torch.equal(plain, none)
    everything_but_2 = [i for i in range(TOKENIZER.vocab_size) if i != 2]

    def at_step_4(ids):  # after 4 new tokens, row 0 may only draw token 2
        return [everything_but_2 if ids.shape[1] == 6 else [], []]

    out = lm.generate(model, prompts, 10, seed=5, step_banned=at_step_4)
    assert out[0, 6] == 2 and torch.equal(out[:, :6], plain[:, :6])


def test_bad_rules_are_named_before_any_matmul(monkeypatch):
    model = uniform_model()
    prompts = torch.tensor([[1, 2], [3, 4]])
    with pytest.raises(TypeError, match=r"step_banned must be None or a function.*step_banned=3"):
        lm.generate(model, prompts, 3, step_banned=3)
    cases = [
        (lambda ids: "山", TypeError, "step_banned must return a list"),
        (lambda ids: torch.zeros(2, 1), TypeError, "step_banned must return a list"),
        (lambda ids: [[1]], ValueError, r"one list of token ids per row \(2 rows\), got 1"),
        (lambda ids: [[1], 2], TypeError, "list or tensor of token ids, got int for row 1"),
        (lambda ids: [[1], [99]], ValueError, r"step_banned ids must be in \[0, 8\)"),
        (lambda ids: [[1.5], []], TypeError, "step_banned"),
        (lambda ids: [list(range(8)), []], ValueError, "at least one token .* for row 0"),
    ]
    for rule, error, fragment in cases:
        with pytest.raises(error, match=fragment):
            lm.generate(model, prompts, 3, step_banned=rule)

    def no_forward(*args, **kwargs):
        raise AssertionError("the model ran before the bad argument was named")

    monkeypatch.setattr(model, "forward", no_forward)
    with pytest.raises(TypeError, match="fresh_rhymes"):
        lm.write_poems(model, TOKENIZER, "山", fresh_rhymes="yes")
    with pytest.raises(TypeError, match="step_banned"):
        lm.generate(model, prompts, 3, step_banned="no")


def test_write_poems_with_the_rule_writes_no_repeated_line_end():
    model = uniform_model(context_length=40)
    firsts = CHARS * 12
    plain = lm.write_poems(model, TOKENIZER, firsts, seed=0, top_k=None)
    fresh = lm.write_poems(model, TOKENIZER, firsts, seed=0, top_k=None, fresh_rhymes=True)
    assert sum(len(violations("\n" + poem.text)) for poem in plain) >= 2  # 3 without the rule
    assert all(violations("\n" + poem.text) == [] for poem in fresh)


# ---------------------------------------------------------------- repeated_rhyme_share


def test_repeated_rhyme_share_counts_poems_that_end_two_lines_with_one_character():
    repeats = "白日依山尽，黄河入海流。\n欲穷千里目，更上一层流。\n"
    assert lm.repeated_rhyme_share([QUIET_NIGHT]) == 0.0
    assert lm.repeated_rhyme_share([QUIET_NIGHT, repeats]) == 0.5
    written = lm.WrittenPoem(repeats, True, lm.poem_form(repeats))
    assert lm.repeated_rhyme_share([written, QUIET_NIGHT, "一行而已，只有一联。\n"]) == 0.5
    nan = lm.repeated_rhyme_share(["一行而已，只有一联。\n"])
    assert nan != nan  # no poem with two line ends


def test_repeated_rhyme_share_names_bad_input():
    with pytest.raises(TypeError, match="poems must be a list"):
        lm.repeated_rhyme_share(QUIET_NIGHT)
    with pytest.raises(TypeError, match="poems must hold str or WrittenPoem, got int"):
        lm.repeated_rhyme_share([QUIET_NIGHT, 3])


# ------------------------------------------------ the stricter rule: no character twice


def char_violations(text: str) -> list[int]:
    """The positions of ``text`` whose character the fresh-character rule would have banned."""
    return [t for t in range(1, len(text)) if text[t] in lm.fresh_char_bans(text[:t])]


@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet=CHARS + "，。\n", max_size=30))
def test_fresh_char_bans_are_the_poem_s_characters_since_its_empty_line(text):
    bans = lm.fresh_char_bans(text)
    poem = text.rsplit("\n\n", 1)[-1]
    assert set(bans) == set(poem) - set("，。\n")
    assert len(bans) == len(set(bans))  # each once
    assert bans == "".join(dict.fromkeys(c for c in poem if c in CHARS))  # in order of use
    assert set(lm.fresh_rhyme_bans(text)) <= set(bans)  # stricter than the rhyme rule


def test_fresh_char_bans_on_a_real_poem():
    assert lm.fresh_char_bans("\n床前明月光，疑是地上") == "床前明月光疑是地上"
    assert lm.fresh_char_bans("\n" + QUIET_NIGHT) == "床前明月光疑是地上霜举头望低思故乡"
    assert lm.fresh_char_bans("\n" + QUIET_NIGHT + "\n") == ""  # the poem has ended
    assert lm.fresh_char_bans("\n" + QUIET_NIGHT + "\n白日") == "白日"
    with pytest.raises(TypeError, match="text must be a str, got list"):
        lm.fresh_char_bans(["床"])
    with pytest.raises(TypeError, match="tokenizer must be a CharTokenizer"):
        lm.fresh_char_rule("山水")


def test_write_poems_with_fresh_chars_repeats_no_character_and_no_line_end():
    tokenizer = lm.CharTokenizer("山水花月风云天地人家日夜春秋江河" + "，。\n")
    model = uniform_model(context_length=40, vocab_size=tokenizer.vocab_size)  # 19 tokens
    firsts = "山水花月" * 8
    plain = lm.write_poems(model, tokenizer, firsts, seed=0, top_k=None)
    fresh = lm.write_poems(model, tokenizer, firsts, seed=0, top_k=None, fresh_chars=True)
    assert lm.repeated_char_share(plain) >= 0.5  # the test has teeth: most plain poems repeat
    assert all(char_violations("\n" + poem.text) == [] for poem in fresh)
    assert lm.repeated_char_share(fresh) == 0.0
    assert sum(len(poem.text) for poem in fresh) >= 100  # it still writes
    with pytest.raises(TypeError, match="fresh_chars"):
        lm.write_poems(model, tokenizer, "山", fresh_chars=1.0)


def test_repeated_char_share_counts_poems_that_write_a_character_twice():
    assert lm.repeated_char_share([QUIET_NIGHT]) == 1.0  # 明月 twice
    once = "白日依山尽，黄河入海流。\n"
    written = lm.WrittenPoem(once, True, lm.poem_form(once))
    assert lm.repeated_char_share([written, QUIET_NIGHT]) == 0.5
    assert lm.repeated_char_share([once]) == 0.0
    nan = lm.repeated_char_share([])
    assert nan != nan
    with pytest.raises(TypeError, match="poems must be a list"):
        lm.repeated_char_share(QUIET_NIGHT)
    with pytest.raises(TypeError, match="poems must hold str or WrittenPoem, got int"):
        lm.repeated_char_share([QUIET_NIGHT, 3])
