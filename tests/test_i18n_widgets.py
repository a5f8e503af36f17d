"""The explorers speak the lesson language: slider labels, messages, titles, example sentences.

Labels are read when an explorer is built, messages when a view is computed. The English ones are
exactly what they were (the English lessons' outputs must not change); the Chinese labels are the
course's names (common.md): 头数, 丢弃率, 缩放, 随机种子, 句子, 模式, k. In Chinese the attention
explorer also offers two Chinese sentences (word tokens, toy embeddings); in English it does not.
"""

from __future__ import annotations

import re
import warnings

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

import mhsa_helpers as mh
from mhsa_helpers.i18n import using_language
from mhsa_helpers.lm import training as lm_training
from mhsa_helpers.training import loop
from mhsa_helpers.ui import sentences as sent
from mhsa_helpers.ui.explorers import attention

CHINESE = re.compile(r"[\u4e00-\u9fff]")

LABELS = {
    "en": {
        "heads": "heads",
        "dropout": "dropout",
        "scale": "scale",
        "seed": "seed",
        "sentence": "sentence",
        "mode": "mode",
        "k": "k",
    },
    "zh": {
        "heads": "头数",
        "dropout": "丢弃率",
        "scale": "缩放",
        "seed": "随机种子",
        "sentence": "句子",
        "mode": "模式",
        "k": "k",
    },
}


@pytest.fixture(autouse=True)
def _restore_matplotlib_settings():
    """Drawing in Chinese adds the CJK font to matplotlib's settings: undo it after each test."""
    with matplotlib.rc_context():
        yield


def _descriptions(w) -> dict[str, str]:
    return {name: control.description for name, control in w.controls.items()}


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_attention_explorer_labels(lang):
    with using_language(lang):
        w = mh.attention_explorer(draw=False)
    assert _descriptions(w) == {
        name: LABELS[lang][name]
        for name in ("heads", "dropout", "scale", "seed", "sentence", "mode")
    }
    modes = w.controls["mode"].options
    assert modes == (("eval", "train") if lang == "en" else ("评估", "训练")) or [
        label for label, _ in modes
    ] == (["eval", "train"] if lang == "en" else ["评估", "训练"])
    assert w.controls["mode"].value == "eval"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_other_explorers_labels(lang):
    with using_language(lang):
        dropout = mh.dropout_explorer()
        heads = mh.heads_explorer()
        training = mh.training_explorer()
    labels = LABELS[lang]
    assert _descriptions(dropout) == {"dropout": labels["dropout"], "seed": labels["seed"]}
    assert _descriptions(heads) == {"heads": labels["heads"]}
    assert _descriptions(training) == {
        "heads": labels["heads"],
        "k": labels["k"],
        "seed": labels["seed"],
    }
    button = training.manual_button.description
    assert button == ("Train" if lang == "en" else "训练")


def test_chinese_sentences_only_in_chinese():
    with using_language("en"):
        english = sent.example_sentences()
        w = mh.attention_explorer(draw=False)
    assert list(english) == ["book", "longer"]
    assert [value for _, value in w.controls["sentence"].options] == ["book", "longer"]
    assert [label for label, _ in w.controls["sentence"].options] == [
        "book: Your journey starts with one step",
        "longer: The cat sat on the mat because the mat was warm",
    ]
    with pytest.raises(ValueError, match="sentence"), using_language("en"):
        attention.explore_attention(sentence="book_zh")

    with using_language("zh"):
        chinese = sent.example_sentences()
        w = mh.attention_explorer(draw=False)
    assert list(chinese) == ["book", "longer", "book_zh", "longer_zh"]
    assert sent.example_sentences("zh").keys() == chinese.keys()
    assert sent.example_sentences("en").keys() == english.keys()
    labels = [label for label, _ in w.controls["sentence"].options]
    assert labels[2] == "书中例句（中文）：你的 旅程 从 一 步 开始"
    assert all(CHINESE.search(label) for label in labels)
    words, inputs = chinese["book_zh"]
    assert words == ["你的", "旅程", "从", "一", "步", "开始"]
    assert inputs.shape == (6, 3)
    torch.testing.assert_close(inputs, sent.embed_words(words))
    words, inputs = chinese["longer_zh"]
    assert words == sent.ZH_LONGER_SENTENCE.split() and inputs.shape == (len(words), 3)
    first, second = (i for i, word in enumerate(words) if word == "垫子")
    torch.testing.assert_close(inputs[first], inputs[second])  # a repeated word, the same key
    # The book's sentence and embeddings are the same in both languages.
    torch.testing.assert_close(chinese["book"][1], english["book"][1])
    assert chinese["book"][0] == english["book"][0]


def test_explorer_with_a_chinese_sentence():
    with using_language("zh"):
        view = attention.explore_attention(heads=2, sentence="book_zh", scale=3.0)
        w = mh.attention_explorer(heads=2, sentence="longer_zh", scale=3.0, draw=False)
        w.controls["heads"].value = 3
    assert view.ok and view.weights.shape == (2, 6, 6)
    assert view.words == ["你的", "旅程", "从", "一", "步", "开始"]
    assert w.result.ok and w.result.words == sent.ZH_LONGER_SENTENCE.split()
    assert w.result.weights.shape == (3, 9, 9)


def test_explorer_draws_chinese_words_without_missing_glyphs():
    with using_language("zh"), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        w = mh.attention_explorer(heads=2, sentence="book_zh", scale=3.0)
    assert w.result.ok and w.image.value  # a picture was drawn
    missing = [str(x.message) for x in caught if "missing from font" in str(x.message)]
    assert not missing, missing


def test_messages_follow_the_language():
    with using_language("en"):
        en = attention.explore_attention(heads=2)
        en_bad = attention.explore_attention(heads=5)
        en_train = attention.explore_attention(heads=2, mode="train", dropout=0.5)
    assert en.message == "2 heads x head_dim 12 = d_out 24; eval mode: dropout is off"
    assert en_bad.message == (
        "5 heads do not divide d_out = 24 (d_out % num_heads = 4); MultiHeadAttention would "
        "raise. Try one of [1, 2, 3, 4, 6, 8, 12, 24]."
    )
    assert en_train.message == (
        "2 heads x head_dim 12 = d_out 24; train mode: weights after dropout p=0.5, survivors x2.00"
    )
    with using_language("zh"):
        zh = attention.explore_attention(heads=2)
        zh_bad = attention.explore_attention(heads=5)
        w = mh.attention_explorer(heads=2, draw=False)
        html = w.message.value
    for message in (zh.message, zh_bad.message, html):
        assert CHINESE.search(message), message
    assert "每个头的熵（奈特）" in html
    torch.testing.assert_close(zh.weights, en.weights)  # only the words change


def test_titles():
    with using_language("en"):
        assert (
            attention._title(2, 12, "eval", 0.0) == "2 heads (head_dim 12), eval mode, dropout 0.0"
        )
        assert attention._title(1, 24, "eval", 0.5) == (
            "1 head (head_dim 24), eval mode, dropout 0.5 (off in eval mode)"
        )
        assert (
            attention._title(3, 8, "train", 0.2) == "3 heads (head_dim 8), train mode, dropout 0.2"
        )
    with using_language("zh"):
        title = attention._title(2, 12, "train", 0.5)
    if mh.ui.fonts.cjk_font() is not None:
        assert title == "2 个头（head_dim 12），训练模式，dropout 0.5"
    else:  # no CJK font: figures stay English
        assert title == "2 heads (head_dim 12), train mode, dropout 0.5"


def test_training_explorer_message_in_chinese():
    with using_language("zh"):
        w = mh.training_explorer(heads=3, d_model=32)
        w.manual_button.click()
    assert w.result["result"] is None
    assert CHINESE.search(w.result["message"]), w.result["message"]
    with using_language("en"):
        w = mh.training_explorer(heads=3, d_model=32)
        w.manual_button.click()
    assert w.result["message"] == "<b style='color:#b00'>3 heads do not divide d_model = 32.</b>"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_progress_bar_descriptions(monkeypatch, lang):
    seen: list[str] = []

    def record(total, desc, enabled=True):
        seen.append(desc)

    monkeypatch.setattr(loop, "progress_bar", record)
    monkeypatch.setattr(lm_training, "progress_bar", record)
    # The demo's 3 blocks x 4 heads, 8 wide, on a short text: one step takes milliseconds.
    sizes = {"d_model": 8, "num_heads": 4, "num_layers": 3, "context_length": 8}
    config = mh.lm.CharLMConfig(**sizes, batch_size=2, steps=2, warmup_steps=1, eval_every=1)
    poem = "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n\n"
    with using_language(lang):
        mh.train_shift_task(epochs=1, steps_per_epoch=1, batch_size=2)
        mh.train_repeat_task(epochs=1, steps_per_epoch=1, batch_size=2)
        mh.lm.train_char_lm(config, stop_after=1, data=mh.lm.text_data(poem * 60))
    if lang == "en":
        assert seen == [
            "shift task, 4 heads",
            "repeat task, 4 heads",
            "training 3 blocks x 4 heads",
        ]
    else:
        assert seen == ["平移任务，4 个头", "重复任务，4 个头", "训练 3 个块 × 4 个头"]
