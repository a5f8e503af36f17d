"""The character model of lesson 12: text, tokenizer, model, generation, training, checkpoint."""

from __future__ import annotations

import importlib.util
import itertools
import math
import warnings
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import pytest
import torch
from torch.nn import functional as F

import mhsa_helpers as mh
from mhsa_helpers import lm

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def checkpoint() -> lm.CharLMCheckpoint:
    return lm.load_checkpoint()


@pytest.fixture
def small_model() -> lm.CharTransformer:
    torch.manual_seed(0)
    return lm.CharTransformer(
        vocab_size=20, d_model=16, context_length=12, num_heads=4, num_layers=2
    )


def demo_config() -> lm.CharLMConfig:
    """The config of tools/train_char_lm.py (imported from the script itself)."""
    spec = importlib.util.spec_from_file_location("train_char_lm", ROOT / "tools/train_char_lm.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.DEMO_CONFIG


# ----------------------------------------------------------------------------------- text


def test_tang300_poems_and_lines():
    poems = lm.load_tang300()
    assert len(poems) == 313
    assert poems[0].title == "感遇・其一" and poems[0].author == "张九龄"
    assert poems[0].lines[0] == "兰叶春葳蕤，桂华秋皎洁。"
    lines = [line for poem in poems for line in poem.lines]
    assert all(line and "\n" not in line for line in lines) and len(lines) == 1600
    ending = sum(line[-1] in lm.PUNCTUATION for line in lines)
    assert ending > 0.99 * len(lines)  # a few prose prefaces wrap mid-sentence
    text = lm.poem_text(poems[:2])
    assert text == "\n".join(poems[0].lines) + "\n\n" + "\n".join(poems[1].lines) + "\n\n"


def test_split_is_by_whole_poems():
    poems = lm.load_tang300()
    train, validation = lm.split_poems(poems)
    assert len(validation) == 313 // 20 and len(train) + len(validation) == 313
    assert not set(train) & set(validation)
    assert validation[0] is poems[19]
    with pytest.raises(ValueError, match="every"):
        lm.split_poems(poems, every=1)
    with pytest.raises(TypeError, match="poems"):
        lm.poem_text("床前明月光")


# ------------------------------------------------------------------------------ tokenizer


def test_tokenizer_round_trip_on_the_whole_text():
    text = lm.poem_text(lm.load_tang300())
    tokenizer = lm.CharTokenizer(text)
    ids = tokenizer.encode(text)
    assert ids.dtype == torch.long and ids.shape == (len(text),)
    assert tokenizer.decode(ids) == text
    assert tokenizer.decode(ids[:5].tolist()) == text[:5]
    assert tokenizer.chars == sorted(set(text)) and tokenizer.vocab_size == len(set(text))
    assert lm.CharTokenizer.from_chars(tokenizer.chars).chars == tokenizer.chars
    assert "月" in tokenizer and "a" not in tokenizer


def test_tokenizer_rejects_bad_input():
    tokenizer = lm.CharTokenizer("明月光\n")
    with pytest.raises(ValueError, match="'x'"):
        tokenizer.encode("明x月")
    with pytest.raises(TypeError, match="text"):
        tokenizer.encode(["明"])
    with pytest.raises(ValueError, match="id 4"):
        tokenizer.decode([0, 4])
    with pytest.raises(ValueError, match="1-D"):
        tokenizer.decode(torch.zeros(2, 2, dtype=torch.long))
    with pytest.raises(TypeError, match="integer"):
        tokenizer.decode(torch.zeros(2))
    with pytest.raises(ValueError, match="empty"):
        lm.CharTokenizer("")
    with pytest.raises(ValueError, match="sorted"):
        lm.CharTokenizer.from_chars(["月", "明"])


# ---------------------------------------------------------------------------------- model


def test_shapes_and_weights(small_model):
    ids = torch.randint(0, 20, (2, 12))  # (b, T)
    logits = small_model(ids)
    assert logits.shape == (2, 12, 20)
    logits2, weights = small_model(ids, return_weights=True)
    assert torch.equal(logits, logits2)
    assert weights.shape == (2, 2, 4, 12, 12)  # (b, num_layers, h, T, T)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 2, 4, 12))
    assert small_model.lm_head.weight is small_model.tok_emb.weight  # tied
    expected = 20 * 16 + 12 * 16 + 2 * (4 * 16 * 16 + 16 + 2 * 2 * 16 + 2 * 16 * 64 + 64 + 16)
    assert small_model.num_parameters() == expected + 2 * 16


def test_untrained_loss_is_about_log_vocab(small_model):
    ids = torch.randint(0, 20, (8, 12))
    loss = F.cross_entropy(small_model(ids).reshape(-1, 20), ids.roll(-1, 1).reshape(-1))
    assert abs(loss.item() - math.log(20)) < 0.1


def test_causality(small_model):
    small_model.eval()
    ids = torch.randint(0, 20, (1, 12))
    base = small_model(ids)
    for j in range(12):
        changed = ids.clone()
        changed[0, j] = (changed[0, j] + 1) % 20
        out = small_model(changed)
        assert torch.equal(out[:, :j], base[:, :j]), f"position < {j} saw token {j}"
        assert not torch.equal(out[:, j:], base[:, j:])


def test_block_is_the_pre_norm_formula():
    torch.manual_seed(0)
    block = lm.TransformerBlock(d_model=8, context_length=6, num_heads=2).eval()
    x = torch.randn(2, 6, 8)  # (b, T, d_model)
    h = x + block.attn(block.ln_1(x))
    expected = h + block.ff.fc_out(F.gelu(block.ff.fc_in(block.ln_2(h))))
    torch.testing.assert_close(block(x), expected)


def test_cached_forward_equals_full_forward(small_model):
    small_model.eval()
    ids = torch.randint(0, 20, (2, 12))
    full = small_model(ids)
    caches = small_model.new_caches()
    pieces = [small_model(ids[:, a:b], caches=caches) for a, b in ((0, 5), (5, 6), (6, 12))]
    torch.testing.assert_close(torch.cat(pieces, dim=1), full)
    assert [len(c) for c in caches] == [12, 12]
    with pytest.raises(ValueError, match="context_length"):
        small_model(ids[:, :1], caches=caches)


def test_model_rejects_bad_arguments(small_model):
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        lm.CharTransformer(20, d_model=10, num_heads=4)
    with pytest.raises(TypeError, match="num_layers"):
        lm.CharTransformer(20, num_layers=2.0)
    with pytest.raises(ValueError, match="vocab_size"):
        lm.CharTransformer(0)
    with pytest.raises(ValueError, match="dropout"):
        lm.CharTransformer(20, dropout=1.5)
    with pytest.raises(TypeError, match="integer dtype"):
        small_model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="context_length=12"):
        small_model(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 20\)"):
        small_model(torch.full((1, 3), 20))
    with pytest.raises(ValueError, match=r"ids\.shape"):
        small_model(torch.zeros(3, dtype=torch.long))
    with pytest.raises(TypeError, match="return_weights"):
        small_model(torch.zeros(1, 3, dtype=torch.long), return_weights="yes")
    with pytest.raises(TypeError, match="caches"):
        small_model(torch.zeros(1, 3, dtype=torch.long), caches=[mh.KVCache(12)])


# ----------------------------------------------------------------------------- generation


@pytest.mark.parametrize(
    ("temperature", "top_k", "seed"), [(1.0, None, 0), (0.8, 10, 1), (1.3, 3, 2), (0.5, None, 3)]
)
def test_cached_generation_equals_uncached(checkpoint, temperature, top_k, seed):
    model, tokenizer = checkpoint.model, checkpoint.tokenizer
    prompt = tokenizer.encode("\n床前明月光，")
    kwargs = {"temperature": temperature, "top_k": top_k, "seed": seed}
    cached = lm.generate(model, prompt, 60, use_cache=True, **kwargs)
    uncached = lm.generate(model, prompt, 60, use_cache=False, **kwargs)
    assert cached.shape == (len(prompt) + 60,)
    assert torch.equal(cached, uncached), (
        tokenizer.decode(cached) + " vs " + tokenizer.decode(uncached)
    )
    assert torch.equal(cached[: len(prompt)], prompt)


def test_generation_is_seeded_and_batched(small_model):
    prompts = torch.randint(0, 20, (3, 4))  # (b, T)
    state = torch.get_rng_state()
    a = lm.generate(small_model, prompts, 8, seed=5)
    assert torch.equal(torch.get_rng_state(), state)  # the global RNG is untouched
    assert a.shape == (3, 12)
    assert torch.equal(a, lm.generate(small_model, prompts, 8, seed=5))
    assert torch.equal(a, lm.generate(small_model, prompts, 8, seed=5, use_cache=False))
    assert not torch.equal(a, lm.generate(small_model, prompts, 8, seed=6))
    assert small_model.training  # the mode is restored


def test_top_k_1_is_greedy(small_model):
    small_model.eval()
    ids = torch.randint(0, 20, (1, 3))
    greedy = ids
    for _ in range(5):
        greedy = torch.cat([greedy, small_model(greedy)[:, -1].argmax(-1, keepdim=True)], dim=1)
    assert torch.equal(lm.generate(small_model, ids, 5, top_k=1, seed=9), greedy)


def test_next_token_probs():
    logits = torch.tensor([[2.0, 1.0, 0.0, -1.0], [0.0, 0.0, 3.0, 1.0]])
    probs = lm.next_token_probs(logits, temperature=0.5, top_k=2)
    torch.testing.assert_close(probs.sum(-1), torch.ones(2))
    assert ((probs > 0).sum(-1) == 2).all()
    torch.testing.assert_close(probs[0, :2], torch.softmax(torch.tensor([4.0, 2.0]), 0))
    torch.testing.assert_close(lm.next_token_probs(logits), torch.softmax(logits, -1))


def test_generate_rejects_bad_arguments(small_model):
    ids = torch.zeros(1, 3, dtype=torch.long)
    cases = [
        ({"max_new_tokens": 0}, ValueError, "max_new_tokens"),
        ({"max_new_tokens": 10}, ValueError, "max_new_tokens=10"),
        ({"temperature": 0.0}, ValueError, "temperature"),
        ({"temperature": "hot"}, TypeError, "temperature"),
        ({"top_k": 0}, ValueError, "top_k"),
        ({"top_k": 21}, ValueError, "top_k"),
        ({"top_k": 2.0}, TypeError, "top_k"),
        ({"seed": None}, TypeError, "seed"),
        ({"use_cache": "no"}, TypeError, "use_cache"),
    ]
    for override, error, fragment in cases:
        kwargs = {"max_new_tokens": 3, **override}
        with pytest.raises(error, match=fragment):
            lm.generate(small_model, ids, **kwargs)
    with pytest.raises(TypeError, match="model"):
        lm.generate(torch.nn.Linear(2, 2), ids, 3)
    with pytest.raises(TypeError, match="prompt"):
        lm.generate(small_model, [0, 1], 3)
    with pytest.raises(TypeError, match="integer dtype"):
        lm.generate(small_model, torch.zeros(1, 3), 3)


# ------------------------------------------------------------------------------- training


def test_learning_rate_schedule():
    config = lm.CharLMConfig(steps=100, warmup_steps=10, lr=1e-3, min_lr=1e-4)
    assert lm.learning_rate(0, config) == pytest.approx(1e-4)
    assert lm.learning_rate(9, config) == pytest.approx(1e-3)
    assert lm.learning_rate(10, config) == pytest.approx(1e-3)
    assert lm.learning_rate(99, config) == pytest.approx(1e-4)
    rates = [lm.learning_rate(s, config) for s in range(10, 100)]
    assert all(a >= b for a, b in itertools.pairwise(rates))


def test_config_rejects_bad_values():
    cases = [
        ({"d_model": 130}, ValueError, "d_model must be divisible by num_heads"),
        ({"steps": 0}, ValueError, "steps"),
        ({"lr": 0}, ValueError, "lr"),
        ({"lr": "fast"}, TypeError, "lr"),
        ({"min_lr": 1.0}, ValueError, "min_lr"),
        ({"warmup_steps": 5000}, ValueError, "warmup_steps"),
        ({"dropout": -0.1}, ValueError, "dropout"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"batch_size": True}, TypeError, "batch_size"),
    ]
    for kwargs, error, fragment in cases:
        with pytest.raises(error, match=fragment):
            lm.CharLMConfig(**kwargs)
    with pytest.raises(ValueError, match="unknown"):
        lm.CharLMConfig.from_dict({"d_model": 64, "colour": "red"})


def tiny_config(**overrides) -> lm.CharLMConfig:
    settings = {
        "d_model": 32,
        "num_heads": 2,
        "num_layers": 1,
        "context_length": 32,
        "batch_size": 8,
        "steps": 40,
        "warmup_steps": 5,
        "eval_every": 20,
        "lr": 1e-2,
        "min_lr": 1e-3,
    }
    return lm.CharLMConfig(**{**settings, **overrides})


def test_training_lowers_the_loss_and_leaves_global_state_alone():
    state, threads = torch.get_rng_state(), torch.get_num_threads()
    run = lm.train_char_lm(tiny_config(), progress=False)
    assert torch.equal(torch.get_rng_state(), state) and torch.get_num_threads() == threads
    vocab = run.tokenizer.vocab_size
    assert len(run.losses) == 40 and [s for s, _ in run.val_losses] == [20, 40]
    assert abs(run.losses[0] - math.log(vocab)) < 0.2
    assert sum(run.losses[-5:]) / 5 < run.losses[0] - 1.0
    assert not run.model.training
    again = lm.train_char_lm(tiny_config(), stop_after=10, progress=False)
    assert again.losses == run.losses[:10]  # same seed, same machine: the same digits
    with pytest.raises(ValueError, match="stop_after"):
        lm.train_char_lm(tiny_config(), stop_after=41, progress=False)
    with pytest.raises(TypeError, match="config"):
        lm.train_char_lm({"steps": 3}, progress=False)
    with pytest.raises(TypeError, match="progress"):
        lm.train_char_lm(tiny_config(), stop_after=1, progress="no")


def test_script_first_steps_reproduce_the_recorded_losses(checkpoint):
    config = demo_config()
    assert checkpoint.config == config == lm.CharLMConfig()
    run = lm.train_char_lm(config, stop_after=3, progress=False)
    # Same machine: identical; another CPU may round the last bits differently.
    torch.testing.assert_close(
        torch.tensor(run.losses), torch.tensor(checkpoint.losses[:3]), rtol=1e-4, atol=1e-4
    )


# ----------------------------------------------------------------------------- checkpoint


def test_shipped_checkpoint(checkpoint):
    path = ROOT / "data" / lm.DEMO_CHECKPOINT
    assert path.stat().st_size <= 5 * 1024 * 1024
    config = checkpoint.config
    assert len(checkpoint.losses) == config.steps
    assert checkpoint.val_losses[-1][0] == config.steps
    assert checkpoint.tokenizer.vocab_size == lm.tang300_data().tokenizer.vocab_size
    assert not checkpoint.model.training
    best_val = min(loss for _, loss in checkpoint.val_losses)
    last_val = checkpoint.val_losses[-1][1]
    assert abs(checkpoint.losses[0] - math.log(checkpoint.tokenizer.vocab_size)) < 0.2
    assert best_val < checkpoint.val_losses[0][1] and last_val < 6.5
    assert sum(checkpoint.losses[-50:]) / 50 < best_val - 1.0  # it overfits (lesson 12 says so)
    # Recorded validation loss == the loaded model's loss on the held-out poems.
    measured = lm.validation_loss(checkpoint.model, lm.tang300_data().val_ids)
    assert measured == pytest.approx(last_val, abs=1e-4)


def test_save_and_load_round_trip(tmp_path):
    run = lm.train_char_lm(tiny_config(steps=6, eval_every=3), progress=False)
    path = lm.save_checkpoint(run, tmp_path / "tiny.pt")
    loaded = lm.load_checkpoint(path)
    ids = run.tokenizer.encode("床前明月光，")[None]
    assert torch.equal(loaded.model(ids), run.model(ids))
    assert loaded.losses == run.losses and loaded.val_losses == run.val_losses
    assert loaded.config == run.config and loaded.tokenizer.chars == run.tokenizer.chars
    with pytest.raises(FileNotFoundError, match="train-demo"):
        lm.load_checkpoint(tmp_path / "missing.pt")
    torch.save({"hello": 1}, tmp_path / "other.pt")
    with pytest.raises(ValueError, match="checkpoint"):
        lm.load_checkpoint(tmp_path / "other.pt")
    with pytest.raises(TypeError, match="run"):
        lm.save_checkpoint(run.model, tmp_path / "x.pt")


# ------------------------------------------------------------------------------- analysis


def test_head_focus_on_known_weights():
    text = "明月，\n光照。\n"  # T = 8
    num = len(text)
    previous = torch.zeros(num, num)
    previous[0, 0] = 1.0
    previous[torch.arange(1, num), torch.arange(num - 1)] = 1.0  # each query: key t - 1
    uniform = torch.ones(num, num).tril() / torch.arange(1, num + 1)[:, None]
    focus = lm.head_focus(torch.stack([previous, uniform]), text)  # (1, 2, 3)
    assert focus.shares.shape == (1, 2, 3)
    assert focus.shares[0, 0, 0] == 1.0
    torch.testing.assert_close(focus.shares[0, 1], focus.baseline)
    # line start: queries 4..7 have the newline at 3 before them; query 7 also has no other.
    torch.testing.assert_close(focus.shares[0, 0, 1], torch.tensor(0.25))  # only query 4
    assert focus.strongest("previous") == (0, 0)
    assert "uniform" in focus.table() and focus.table().count("\n") == 5
    with pytest.raises(ValueError, match=r"len\(text\)"):
        lm.head_focus(uniform[None], text[:-1])
    with pytest.raises(ValueError, match="category"):
        focus.strongest("commas")
    with pytest.raises(TypeError, match="floating"):
        lm.head_focus(torch.ones(2, 8, 8, dtype=torch.long), text)


def test_head_focus_of_the_shipped_model(checkpoint):
    poem = "\n" + lm.load_tang300()[0].text
    weights = lm.attention_on(checkpoint.model, checkpoint.tokenizer, poem)
    config = checkpoint.config
    assert weights.shape == (config.num_layers, config.num_heads, len(poem), len(poem))
    focus = lm.head_focus(weights, poem)
    assert ((focus.shares >= 0) & (focus.shares <= 1 + 1e-6)).all()
    # Some head gives punctuation far more weight than uniform attention would.
    assert focus.shares[..., 2].max() > 2 * focus.baseline[2]


# --------------------------------------------------------------------------------- labels


def test_labels_without_a_chinese_font():
    text = "床前明月光，\n"
    axis = lm.char_axis(text, font=False)
    assert axis.labels == ["0", "1", "2", "3", "4", ",", "\\n"] and axis.font is None
    assert all(label.isascii() for label in axis.labels)
    table = lm.char_table(text)
    assert table.splitlines()[0].split() == ["position", *map(str, range(7))]
    assert "床" in table and "\\n" in table
    forced = lm.char_axis(text, font="Some CJK Font")
    assert (
        forced.labels[:5] == list("床前明月光") and forced.rc["font.family"][0] == "Some CJK Font"
    )
    assert lm.find_cjk_font("abc") == "DejaVu Sans"
    # matplotlib ships "Last Resort", whose character map covers everything with empty boxes.
    found = lm.find_cjk_font("床前明月光")
    assert found is None or "last resort" not in found.lower()
    with pytest.raises(TypeError, match="font"):
        lm.char_axis(text, font=3)
    with pytest.raises(ValueError, match="per_row"):
        lm.char_table(text, per_row=0)


def test_heatmap_with_the_found_labels_emits_no_warning():
    text = "\n床前明月光，疑是地上霜。\n"
    axis = lm.char_axis(text)  # a CJK font where one is installed, positions otherwise
    if axis.font is not None:
        assert lm.find_cjk_font(text.strip()) == axis.font
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with plt.rc_context(axis.rc):
            fig = mh.plot_attention(torch.eye(len(text)), axis.labels)
            fig.canvas.draw()
    plt.close(fig)


def test_copied_share():
    reference = "床前明月光，疑是地上霜。"
    assert lm.copied_share("床前明月光", reference, n=4) == 1.0
    assert lm.copied_share("床前明月霜", reference, n=4) == 0.5  # 床前明月 yes, 前明月霜 no
    assert lm.copied_share("月光\n疑是地", reference, n=2) == 1.0  # pieces with "\n" skipped
    with pytest.raises(ValueError, match="n must"):
        lm.copied_share("abc", reference, n=0)
    with pytest.raises(ValueError, match="piece"):
        lm.copied_share("ab", reference, n=4)


def test_focus_on_texts_averages(small_model):
    tokenizer = lm.CharTokenizer("".join(chr(0x4E00 + i) for i in range(17)) + "，。\n")
    texts = ["\n" + chr(0x4E00) * 4 + "，\n", "\n一丁，七。\n万"]
    focus = lm.focus_on_texts(small_model, tokenizer, texts)
    each = [lm.head_focus(lm.attention_on(small_model, tokenizer, t), t) for t in texts]
    torch.testing.assert_close(focus.shares, (each[0].shares + each[1].shares) / 2)
    torch.testing.assert_close(focus.baseline, (each[0].baseline + each[1].baseline) / 2)
    with pytest.raises(TypeError, match="texts"):
        lm.focus_on_texts(small_model, tokenizer, "\n一，")
