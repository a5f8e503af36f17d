"""Lesson 12's verse measures: rhyme groups (pypinyin), tones, whole poems, poem windows.

The shipped model's numbers are re-measured in ``test_char_lm_shipped.py``; here the measures
themselves, on known characters, real poems and tiny models.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

import mhsa_helpers as mh
from mhsa_helpers import lm

QUIET_NIGHT = "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n"
STORK_TOWER = "白日依山尽，黄河入海流。\n欲穷千里目，更上一层楼。\n"


@pytest.mark.parametrize(
    "chars",
    ["光霜乡长", "来开台怀", "时知诗衣", "人春心深", "中风东声明", "流楼秋愁", "家花沙"],
)
def test_characters_known_to_rhyme_share_a_group(chars):
    assert len({lm.rhyme_class(c) for c in chars}) == 1, [(c, lm.rhyme_class(c)) for c in chars]


@pytest.mark.parametrize("pair", ["光来", "人风", "花山", "楼霜", "天时", "山风"])
def test_characters_known_not_to_rhyme_differ(pair):
    first, second = (lm.rhyme_class(c) for c in pair)
    assert first is not None and second is not None and first != second


def test_a_character_without_reading_has_no_group_and_bad_input_is_named():
    assert lm.rhyme_class("，") is None and lm.rhyme_class("□") is None
    with pytest.raises(ValueError, match="char"):
        lm.rhyme_class("光霜")
    with pytest.raises(TypeError, match="char"):
        lm.rhyme_class(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="text"):
        lm.rhyme_share(None)  # type: ignore[arg-type]


def test_real_poems_rhyme_and_their_pairs_are_named():
    assert lm.rhyme_share(QUIET_NIGHT) == 1.0 and lm.rhyme_share(STORK_TOWER) == 1.0
    pairs = lm.rhyme_pairs(QUIET_NIGHT + "\n" + STORK_TOWER)
    assert [(p.first, p.second) for p in pairs] == [("霜", "乡"), ("流", "楼")]  # not 乡 -> 流
    with mh.i18n.using_language("en"):
        assert lm.describe_pair(pairs[0]) == "霜 shuang · 乡 xiang: rhymes"
    with mh.i18n.using_language("zh"):
        assert lm.describe_pair(pairs[0]) == "霜 shuang · 乡 xiang：押韵"


def test_validation_poems_rhyme_far_above_chance_and_shuffled_ends_rhyme_at_chance():
    poems = [p.text for p in lm.load_verse().validation]
    real = lm.rhyme_share("\n".join(poems))
    chance = lm.chance_rhyme_share(poems, seed=0)
    assert real > 0.75 and 0.05 < chance < 0.2
    # Chance measured another way: every poem keeps its lines, but each line's end character is
    # swapped for the end of a random line of another poem.
    rng = random.Random(1)
    ends = [line[-2] for poem in poems for line in poem.split("\n") if line]
    shuffled = [
        "".join(line[:-2] + rng.choice(ends) + line[-1] + "\n" for line in poem.split("\n") if line)
        for poem in poems
    ]
    assert abs(lm.rhyme_share("\n".join(shuffled)) - chance) < 0.03


def test_tones_of_known_characters_and_the_second_character_rule():
    assert [lm.tone_class(c) for c in "明是光月"] == ["平", "仄", "平", "仄"]
    assert lm.tone_class("，") is None
    assert lm.tone_opposition_share(STORK_TOWER) == 1.0  # 日/河, 穷/上
    assert lm.tone_opposition_share(QUIET_NIGHT) == 0.5  # 前/是, but 头/头 (an old-style quatrain)
    same = "春风吹落花，秋风扫落叶。\n"  # 风 / 风: both level, not opposed
    assert lm.tone_opposition_share(same) == 0.0


@given(
    metre=st.sampled_from([5, 7]),
    lines=st.sampled_from([1, 2, 3, 4, 5]),
    broken=st.sampled_from([None, "short", "comma", "metre"]),
)
@settings(max_examples=60, deadline=None)
def test_poem_form_accepts_exactly_whole_poems(metre, lines, broken):
    def line(n):
        return "山" * n + "，" + "水" * n + "。"

    body = [line(metre) for _ in range(lines)]
    if broken == "short":
        body[-1] = "山" * (metre - 1) + "，" + "水" * metre + "。"
    elif broken == "comma":
        body[-1] = "山" * metre + "水" * metre + "。"
    elif broken == "metre" and lines > 1:
        body[0] = line(12 - metre)
    form = lm.poem_form("\n".join(body) + "\n")
    whole = lines in (2, 4) and (broken is None or (broken == "metre" and lines == 1))
    assert form == (f"{metre}x{lines}" if whole else None)


def test_a_written_poem_ends_at_its_empty_line():
    poem = lm.WrittenPoem.from_text("\n" + QUIET_NIGHT + "\n白日依山")
    assert poem.text == QUIET_NIGHT and poem.ended and poem.form == "5x2" and poem.complete
    cut = lm.WrittenPoem.from_text(QUIET_NIGHT + "白日依山")
    assert not cut.ended and not cut.complete
    score = lm.score_poems("x", [poem, cut], QUIET_NIGHT)
    assert score.complete == 0.5 and score.copied == 1.0 and score.num_poems == 2


def test_poem_windows_start_at_the_newline_before_each_poem():
    data = lm.verse_data()
    newline = data.tokenizer.encode("\n")
    starts = data.train_starts
    assert starts is not None and starts.numel() == len(lm.load_verse().train)
    assert torch.equal(data.train_ids[starts], newline.expand(starts.numel()))
    first_chars = data.train_ids[starts + 1]
    assert not torch.isin(first_chars, newline).any()
    text = lm.poem_text(lm.load_verse().train[:3])
    shown = data.tokenizer.decode(data.train_ids[starts[1] : starts[2] + 1])
    assert shown == "\n" + text.split("\n\n")[1] + "\n\n"


def test_validation_loss_on_poems_counts_every_character_once():
    torch.manual_seed(0)
    model = lm.CharTransformer(12, 8, 10, 2, 1).eval()
    ids = torch.tensor([0, 3, 4, 5, 0, 0, 6, 7, 0, 0, 8, 9, 10, 11, 5, 4, 3, 0, 0, 1])
    starts = lm.poem_starts(ids, 0)
    assert starts.tolist() == [0, 5, 9, 18]  # the newline before each poem
    # By hand: each poem from the newline before it up to the next poem's.
    total = 0.0
    pieces = [(0, 5), (5, 4), (9, 9), (18, 1)]
    for s, size in pieces:
        logits = model(ids[s : s + size][None])[0]
        total += F.cross_entropy(logits, ids[s + 1 : s + size + 1], reduction="sum").item()
    expected = total / (ids.numel() - 1)
    assert lm.validation_loss(model, ids, starts=starts, batch_size=2) == pytest.approx(expected)
    with pytest.raises(TypeError, match="ids"):
        lm.validation_loss(model, ids[None])
    with pytest.raises(TypeError, match="ids"):
        lm.validation_loss(model, ids.tolist())  # type: ignore[arg-type]


def test_training_windows_start_at_poems_when_asked(monkeypatch):
    data = lm.verse_data()
    config = lm.CharLMConfig(
        d_model=16,
        num_heads=2,
        num_layers=1,
        context_length=40,
        batch_size=4,
        steps=2,
        warmup_steps=0,
        eval_every=2,
    )
    seen = []
    original = lm.training._random_windows

    def spy(ids, batch_size, length, starts=None):
        inputs, targets = original(ids, batch_size, length, starts)
        seen.append((inputs, starts))
        return inputs, targets

    monkeypatch.setattr(lm.training, "_random_windows", spy)
    newline = int(data.tokenizer.encode("\n"))
    train_ids, val_ids = data.train_ids[:5000], data.val_ids[:400]
    small = lm.TextData(
        data.tokenizer,
        train_ids,
        val_ids,
        lm.poem_starts(train_ids, newline),
        lm.poem_starts(val_ids, newline),
    )
    lm.train_char_lm(config, data=small, progress=False)
    lm.train_char_lm(dataclasses.replace(config, poem_windows=False), data=small, progress=False)
    (poem_inputs, poem_starts), (any_inputs, any_starts) = seen[0], seen[2]
    assert poem_starts is not None and (poem_inputs[:, 0] == newline).all()
    assert any_starts is None and not (any_inputs[:, 0] == newline).all()


def _tool(name: str):
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ablation_records_are_the_tool_s_rows_and_the_shipped_recipe():
    """Lesson 12's table: every trained row was trained with the tool's config for it (the last
    one with the shipped recipe), and carries the poem columns the lesson prints."""
    ablation, train = _tool("ablation_char_lm"), _tool("train_char_lm")
    rows = lm.load_ablation()
    assert [row["name"] for row in rows] == ["bigram table", *ablation.ROWS, "shipped model"]
    for row in rows[1:-1]:
        assert lm.CharLMConfig.from_dict(row["config"]) == ablation.row_config(row["name"])
    assert lm.CharLMConfig.from_dict(rows[-1]["config"]) == train.FULL_CONFIG
    assert ablation.row_config("+ poem windows") == train.DEMO_CONFIG  # make train-demo's row
    for row in rows[1:]:
        assert all(0 <= row[key] <= 1 for key in ("complete", "rhyme", "copied")), row
    shipped = lm.load_checkpoint()
    assert rows[-1]["val_loss"] == round(shipped.val_losses[-1][1], 4)


def test_rhyme_odds_adds_up_the_probability_of_the_right_group():
    """On a tiny untrained model: the base share is the group's share of the training couplet
    ends, and the model's share is its probability on that group's characters, by hand."""
    poem = "\n" + QUIET_NIGHT  # one rhyme: 乡 must rhyme with 霜 (江阳)
    training = QUIET_NIGHT + STORK_TOWER  # couplet ends 霜 乡 流 楼: 江阳 is half of them
    tokenizer = lm.CharTokenizer(poem + STORK_TOWER)
    torch.manual_seed(0)
    model = lm.CharTransformer(tokenizer.vocab_size, 8, 32, 2, 1).eval()
    odds = lm.rhyme_odds(model, tokenizer, [poem], training)
    assert odds.num_queries == 1 and odds.base == 0.5
    with torch.no_grad():
        probs = model(tokenizer.encode(poem)[None])[0, len(poem) - 4].softmax(-1)  # before 乡
    same = [i for i, c in enumerate(tokenizer.chars) if lm.rhyme_class(c) == "江阳"]
    assert odds.model == pytest.approx(float(probs[same].sum()))
    with pytest.raises(ValueError, match="rhyme"):
        lm.rhyme_odds(model, tokenizer, ["\n床前明月光，疑是地上霜。\n"], training)
