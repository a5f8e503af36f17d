"""The shipped model's claims that lesson 12 prints: it beats the count tables, it writes whole
poems that rhyme, without copying, and one head looks at the rhyme above.

The margin over the count tables is measured on a slice of the validation poems; the poems are
written from other first characters and another seed than the lesson's (a fresh sample, not the
lesson's printout again); the tests that train or generate are marked ``slow``.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
import torch

from mhsa_helpers import lm

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def shipped() -> lm.CharLMCheckpoint:
    return lm.load_checkpoint()


def train_tool():
    spec = importlib.util.spec_from_file_location("train_char_lm", ROOT / "tools/train_char_lm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def demo_config() -> lm.CharLMConfig:
    """The shipped recipe of tools/train_char_lm.py (``--full``; imported from the script)."""
    return train_tool().FULL_CONFIG


def test_shipped_checkpoint_is_the_script_s_and_small(shipped):
    assert (ROOT / "data" / lm.DEMO_CHECKPOINT).stat().st_size < 10 * 1024 * 1024
    assert shipped.config == demo_config() and shipped.config.poem_windows
    assert len(shipped.losses) == shipped.config.steps == shipped.val_losses[-1][0]
    assert shipped.tokenizer.chars == lm.verse_data().tokenizer.chars


def test_the_checkpoint_repr_follows_the_lesson_language(shipped):
    from mhsa_helpers.i18n import using_language

    with using_language("en"):
        assert repr(shipped) == (
            "CharLMCheckpoint(2,369,088 parameters, vocab_size=3001, 4500 steps, "
            "last val loss 3.873)"
        )
    with using_language("zh"):
        assert repr(shipped) == (
            "CharLMCheckpoint(2,369,088 个参数，vocab_size=3001，训练了 4500 步，"
            "最后的验证损失 3.873)"
        )


@pytest.mark.slow  # two training steps of the full-size model: about 2 s on one core
@pytest.mark.parametrize("backend", ["eager", "sdpa"])  # sdpa: make train-demo's fast path
def test_script_first_steps_reproduce_the_recorded_losses(shipped, backend):
    """Two training steps of the full-size model on the script's data. The run ends with a
    validation pass, which the training losses do not depend on (it draws no random numbers and
    comes after the last step): it is given one window of the validation text, not all 87,761
    characters (15 s of the test's 19 s)."""
    full = lm.verse_data()
    window = demo_config().context_length + 1
    data = lm.TextData(
        full.tokenizer,
        full.train_ids,
        full.val_ids[:window],
        train_starts=full.train_starts,  # the recipe's windows start at a poem's start
        val_starts=full.val_starts[full.val_starts < window - 1],
    )
    run = lm.train_char_lm(
        demo_config(),
        stop_after=2,
        progress=False,
        data=data,
        backend=backend,
        threads=train_tool().FULL_THREADS,  # the shipped run's threads
    )
    # Same machine: identical; another CPU may round the last bits differently.
    torch.testing.assert_close(
        torch.tensor(run.losses), torch.tensor(shipped.losses[:2]), rtol=1e-4, atol=1e-4
    )


def test_the_model_beats_every_count_table_and_has_its_recorded_validation_loss(shipped):
    """Both on the first eighth of the validation poems, each poem read from its start as in
    training: the model's loss there is within 0.1 nats of the recorded one, and every count
    table's is at least a quarter nat above it."""
    data = lm.verse_data()
    part = data.val_ids[: data.val_ids.numel() // 8]
    starts = data.val_starts[data.val_starts < part.numel() - 1]
    model_loss = lm.validation_loss(shipped.model, part, starts=starts)
    # The recorded loss was measured in float32 before the float16 rounding of the saved weights.
    assert model_loss == pytest.approx(shipped.val_losses[-1][1], abs=0.1)
    for order in (1, 2, 3):  # by a quarter nat
        table = lm.CountTable(data.train_ids, order, data.tokenizer.vocab_size).loss(part)
        assert model_loss <= table - 0.25, (order, table, model_loss)


@pytest.mark.slow  # 60 poems in one batch: a few seconds on one core
def test_it_writes_whole_poems_that_rhyme_without_copying(shipped):
    """The issue's goals, re-measured on 60 other poems (validation poems 60-119's first
    characters, seed 1; the lesson prints seed 0 on poems 0-59): at least 90 % complete, at least
    60 % of adjacent couplet ends rhyming (chance about 11 %), at most 2 % copied."""
    tokenizer = shipped.tokenizer
    verse = lm.load_verse()
    firsts = "".join(p.lines[0][0] for p in verse.validation if p.lines[0][0] in tokenizer.chars)
    poems = lm.write_poems(shipped.model, tokenizer, firsts[60:120], seed=1)
    score = lm.score_poems("model", poems, lm.poem_text(verse.train))
    assert score.complete >= 0.9 and score.copied <= 0.02, score
    assert score.rhyme >= 0.6, score


@pytest.mark.slow  # 60 poems twice, in one batch each: several seconds on one core
def test_with_the_fresh_rhyme_rule_no_poem_repeats_a_rhyme_and_the_goals_hold(shipped):
    """Lesson 12's setting, the sampling rule ``fresh_rhymes=True``, re-measured on the same 60
    other poems as above: the goals still hold, no poem ends two couplets with one character,
    where the model alone does so in some (the lesson's seed 0: 25 %; here 2 of 60 at least)."""
    tokenizer = shipped.tokenizer
    verse = lm.load_verse()
    firsts = "".join(p.lines[0][0] for p in verse.validation if p.lines[0][0] in tokenizer.chars)
    fresh = lm.write_poems(shipped.model, tokenizer, firsts[60:120], seed=1, fresh_rhymes=True)
    alone = lm.write_poems(shipped.model, tokenizer, firsts[60:120], seed=1)
    score = lm.score_poems("model + rule", fresh, lm.poem_text(verse.train))
    assert score.complete >= 0.9 and score.copied <= 0.02 and score.rhyme >= 0.6, score
    assert lm.repeated_rhyme_share(fresh) == 0
    assert lm.repeated_rhyme_share(alone) >= 2 / 60


@pytest.mark.slow  # 60 poems twice, in one batch each: several seconds on one core
def test_at_the_lesson_s_setting_no_character_repeats_and_the_goals_hold(shipped):
    """Lesson 12's setting since the blind readings (temperature 0.5, top-k 20, the rule
    ``fresh_chars=True``), re-measured on the same 60 other poems as above: the goals hold, no
    poem writes a character twice, where the model alone at that temperature does so in most
    (the lesson's seed 0: 93 %)."""
    tokenizer = shipped.tokenizer
    verse = lm.load_verse()
    firsts = "".join(p.lines[0][0] for p in verse.validation if p.lines[0][0] in tokenizer.chars)
    setting = {"temperature": 0.5, "top_k": 20}
    fresh = lm.write_poems(
        shipped.model, tokenizer, firsts[60:120], seed=1, fresh_chars=True, **setting
    )
    alone = lm.write_poems(shipped.model, tokenizer, firsts[60:120], seed=1, **setting)
    train_text = lm.poem_text(verse.train)
    score = lm.score_poems("model + rule", fresh, train_text)
    assert score.complete >= 0.9 and score.copied <= 0.02 and score.rhyme >= 0.6, score
    assert lm.repeated_char_share(fresh) == 0 and lm.repeated_rhyme_share(fresh) == 0
    assert lm.repeated_char_share(alone) >= 0.5


@pytest.mark.slow  # 100 poems through the model with their weights: a few seconds
def test_a_head_looks_at_the_rhyme_above_when_a_rhyme_is_due(shipped):
    """On validation poems 200-299 (the lesson measures 0-199): the strongest rhyme head gives
    the rhyme above several times the weight it gives to the same distance elsewhere, and several
    times the uniform share."""
    poems = ["\n" + p.text for p in lm.load_verse().validation[200:300]]
    focus = lm.rhyme_focus(shipped.model, shipped.tokenizer, poems)
    layer, head = focus.strongest()
    assert focus.rhyme[layer, head] > 3 * focus.control[layer, head], focus
    assert focus.rhyme[layer, head] > 5 * focus.uniform, focus
