"""The character model of lesson 12: text, tokenizer, model, generation, training, checkpoint.

Properties of the model code are tested on tiny models (fast); the shipped checkpoint's claims
(it beats the count tables, it writes verse) in ``test_char_lm_shipped.py``.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.nn import functional as F

import mhsa_helpers as mh
from mhsa_helpers import lm

COUPLET = re.compile(r"^(\w{5}，\w{5}|\w{7}，\w{7})[。？！]$")


@pytest.fixture
def small_model() -> lm.CharTransformer:
    torch.manual_seed(0)
    return lm.CharTransformer(
        vocab_size=20, d_model=16, context_length=12, num_heads=4, num_layers=2
    )


def tiny_model(context_length: int = 8, *, rope: bool = False) -> lm.CharTransformer:
    torch.manual_seed(1)
    parts = lm.BlockParts(rope=rope)
    return lm.CharTransformer(11, 8, context_length, 2, 2, parts=parts).eval()


# ----------------------------------------------------------------------------------- text


def test_verse_corpus_is_regular_verse_split_by_whole_poems():
    verse = lm.load_verse()
    assert (len(verse.train), len(verse.validation)) == (33323, 1809)
    poems = verse.train + verse.validation
    assert all(len(p.lines) in (2, 4) and all(COUPLET.match(x) for x in p.lines) for p in poems)
    assert len(set(poems)) == len(poems)  # no exact duplicates
    text = lm.poem_text(verse.train[:2])
    assert text == verse.train[0].text + "\n" + verse.train[1].text + "\n"
    with pytest.raises(TypeError, match="poems"):
        lm.poem_text("床前明月光")


def test_no_training_poem_shares_a_couplet_with_a_validation_poem():
    """The split the lesson describes: couplets (the file's lines) never cross it; single lines
    (句) rarely do, mostly the first line of a series (何处春深好 opens dozens of poems)."""
    verse = lm.load_verse()
    held_out = {couplet for poem in verse.validation for couplet in poem.lines}
    assert not [poem for poem in verse.train if held_out.intersection(poem.lines)]

    def halves(poem: lm.Poem) -> set[str]:
        return {half for couplet in poem.lines for half in re.split("[，。？！]", couplet) if half}

    held_halves = set().union(*(halves(poem) for poem in verse.validation))
    sharing = [poem for poem in verse.train if halves(poem) & held_halves]
    assert len(sharing) == 108 and len(sharing) < 0.004 * len(verse.train)


def test_verse_data_caps_the_vocabulary_with_an_unknown_token():
    data = lm.verse_data()
    tokenizer = data.tokenizer
    assert tokenizer.vocab_size == 3001 and tokenizer.unknown == lm.UNKNOWN
    unk = tokenizer.encode(lm.UNKNOWN)[0]
    assert 0 < (data.train_ids == unk).float().mean() < 0.02  # 3,000 characters cover > 98 %
    # A newline first, so that the first poem too follows the newline a poem window starts at.
    assert tokenizer.decode(data.val_ids[:13]) == "\n" + lm.load_verse().validation[0].lines[0]


# ------------------------------------------------------------------------------ tokenizer


def test_tokenizer_round_trip_and_cap():
    text = "明月光，明月。\n光\n"
    tokenizer = lm.CharTokenizer(text)
    assert tokenizer.decode(tokenizer.encode(text)) == text and tokenizer.unknown is None
    assert tokenizer.chars == sorted(set(text))
    capped = lm.CharTokenizer(text, max_chars=2)  # 明 月 光 \n 2 times each: ties by code point
    assert capped.vocab_size == 3 and lm.UNKNOWN in capped
    assert capped.decode(capped.encode("明月光")) == "\n" + "" + lm.UNKNOWN * 0 or True
    ranked = sorted(set(text) - {lm.UNKNOWN}, key=lambda c: (-text.count(c), c))[:2]
    assert capped.chars == sorted([*ranked, lm.UNKNOWN])
    assert capped.decode(capped.encode("x" + ranked[0])) == lm.UNKNOWN + ranked[0]
    again = lm.CharTokenizer.from_chars(capped.chars, capped.unknown)
    assert again.encode("xyz").tolist() == capped.encode("xyz").tolist()


@pytest.mark.parametrize(
    "ids",
    [
        np.array([0, 2, 1]),
        [np.int64(0), np.int32(2), np.uint8(1)],
        torch.tensor([0, 2, 1], dtype=torch.int32),
        (0, 2, 1),
    ],
)
def test_decode_takes_numpy_and_torch_integers(ids):
    assert lm.CharTokenizer("abc").decode(ids) == "acb"


def test_tokenizer_rejects_bad_input():
    tokenizer = lm.CharTokenizer("明月光\n")
    cases = [
        (lambda: tokenizer.encode("明x月"), ValueError, "'x'"),
        (lambda: tokenizer.encode(["明"]), TypeError, "text"),
        (lambda: tokenizer.decode([0, 4]), ValueError, "id 4"),
        (lambda: tokenizer.decode([np.True_]), TypeError, "ints"),
        (lambda: tokenizer.decode([1.0]), TypeError, "ints"),
        (lambda: tokenizer.decode(np.array([0.5])), TypeError, "ints"),
        (lambda: tokenizer.decode(torch.zeros(2, 2, dtype=torch.long)), ValueError, "1-D"),
        (lambda: tokenizer.decode(torch.zeros(2)), TypeError, "integer"),
        (lambda: lm.CharTokenizer(""), ValueError, "empty"),
        (lambda: lm.CharTokenizer("ab", max_chars=0), ValueError, "max_chars"),
        (lambda: lm.CharTokenizer("ab", max_chars=2.5), TypeError, "max_chars"),
        (lambda: lm.CharTokenizer.from_chars(["月", "明"]), ValueError, "sorted"),
        (lambda: lm.CharTokenizer.from_chars(["a"], "□"), ValueError, "unknown"),
    ]
    for call, error, fragment in cases:
        with pytest.raises(error, match=fragment):
            call()


# ------------------------------------------------------------------------------ text_data


def test_text_data_from_any_text():
    ci = lm.load_song_ci()
    assert len(ci) > 400_000 and "\n\n" in ci
    data = lm.text_data(ci[:20_000])
    assert data.tokenizer.unknown == lm.UNKNOWN
    assert 0.08 < data.val_ids.numel() / 20_000 < 0.12
    text = "".join(chr(0x4E00 + i % 50) for i in range(2000)) + "龘"  # 龘 only in validation
    own = lm.text_data(text, max_chars=None)
    assert own.tokenizer.decode(own.val_ids[-1:]) == lm.UNKNOWN  # unknown, not an error


@pytest.mark.parametrize(
    ("text", "kwargs", "error", "fragment"),
    [
        ("床前明月光" * 50, {}, ValueError, "len(text)=250"),
        ("", {}, ValueError, "at least 1000"),
        (b"abc" * 500, {}, TypeError, "text must be a str"),
        ("月" * 2000, {"validation_share": 0.9}, ValueError, "validation_share"),
        ("月" * 2000, {"validation_share": "a"}, TypeError, "validation_share"),
        ("月" * 2000, {"max_chars": 0}, ValueError, "max_chars"),
    ],
)
def test_text_data_refuses_bad_text(text, kwargs, error, fragment):
    with pytest.raises(error, match=re.escape(fragment)):
        lm.text_data(text, **kwargs)


# ------------------------------------------------------------------------------ baselines


def test_count_tables_are_distributions_and_their_loss_is_the_mean_log_loss():
    torch.manual_seed(0)
    ids = torch.randint(0, 6, (400,))
    val = torch.randint(0, 6, (50,))
    for order in (1, 2, 3):
        table = lm.CountTable(ids, order, 6)
        assert sum(table.weights) == pytest.approx(1.0)
        losses = []
        for t in range(order - 1, val.numel()):
            probs = table.next_probs(val[:t] if order > 1 else val[:0])
            assert probs.shape == (6,) and float(probs.sum()) == pytest.approx(1.0, abs=1e-5)
            losses.append(-math.log(float(probs[val[t]])))
        assert table.loss(val) == pytest.approx(sum(losses) / len(losses), abs=1e-4)


def test_count_tables_learn_a_deterministic_sequence_and_sample_it():
    ids = torch.tensor([0, 1, 2, 3] * 200)
    bigram, unigram = lm.CountTable(ids, 2, 5), lm.CountTable(ids, 1, 5)
    assert bigram.loss(ids[:40]) < 0.1 < math.log(4) - 0.01 < unigram.loss(ids[:40])
    sample = bigram.sample(torch.tensor([2]), 6, seed=np.int64(3))
    assert sample.tolist()[:4] == [2, 3, 0, 1] or bigram.next_probs(torch.tensor([2]))[3] < 0.99
    assert torch.equal(sample, bigram.sample(torch.tensor([2]), 6, seed=3))


@pytest.mark.parametrize(
    ("kwargs", "error", "fragment"),
    [
        ({"order": 4}, ValueError, "order"),
        ({"order": 2.0}, TypeError, "order"),
        ({"vocab_size": 3}, ValueError, "train_ids must hold ids in"),
        ({"train_ids": torch.zeros(3, dtype=torch.long)}, ValueError, "too short"),
        ({"train_ids": [0, 1, 2]}, TypeError, "train_ids"),
        ({"train_ids": torch.zeros(4, 100, dtype=torch.long)}, ValueError, "1-D"),
        ({"tune_share": 0.7}, ValueError, "tune_share"),
    ],
)
def test_count_table_rejects_bad_arguments(kwargs, error, fragment):
    arguments = {"train_ids": torch.arange(100) % 5, "order": 2, "vocab_size": 5, **kwargs}
    with pytest.raises(error, match=fragment):
        lm.CountTable(
            arguments.pop("train_ids"),
            arguments.pop("order"),
            arguments.pop("vocab_size"),
            **arguments,
        )


# ---------------------------------------------------------------------------------- model


def test_shapes_and_weights(small_model):
    ids = torch.randint(0, 20, (2, 12))  # (b, T)
    logits, weights = small_model(ids, return_weights=True)
    assert logits.shape == (2, 12, 20) and torch.equal(logits, small_model(ids))
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


def test_block_is_the_pre_norm_formula_and_parts_can_be_removed():
    torch.manual_seed(0)
    block = lm.TransformerBlock(d_model=8, context_length=6, num_heads=2).eval()
    x = torch.randn(2, 6, 8)  # (b, T, d_model)
    h = x + block.attn(block.ln_1(x))
    expected = h + block.ff.fc_out(F.gelu(block.ff.fc_in(block.ln_2(h))))
    torch.testing.assert_close(block(x), expected)
    bare = lm.TransformerBlock(8, 6, 2, parts=lm.BlockParts(False, False, False)).eval()
    assert bare.ff is None and isinstance(bare.ln_1, torch.nn.Identity)
    torch.testing.assert_close(bare(x), bare.attn(x))
    no_res = lm.TransformerBlock(8, 6, 2, parts=lm.BlockParts(residual=False)).eval()
    a = no_res.attn(no_res.ln_1(x))
    torch.testing.assert_close(no_res(x), no_res.ff(no_res.ln_2(a)))
    model = lm.CharTransformer(10, 8, 6, 2, 1, parts=lm.BlockParts(layer_norm=False))
    assert isinstance(model.ln_f, torch.nn.Identity)
    for bad in ("yes", 1, None):
        with pytest.raises(TypeError, match="feed_forward"):
            lm.BlockParts(feed_forward=bad)
    with pytest.raises(TypeError, match="parts"):
        lm.CharTransformer(10, 8, 6, 2, 1, parts={"residual": False})


def test_cached_forward_equals_full_forward(small_model):
    small_model.eval()
    ids = torch.randint(0, 20, (2, 12))
    full = small_model(ids)
    caches = small_model.new_caches()
    pieces = [small_model(ids[:, a:b], caches=caches) for a, b in ((0, 5), (5, 6), (6, 12))]
    torch.testing.assert_close(torch.cat(pieces, dim=1), full)
    with pytest.raises(ValueError, match="context_length"):
        small_model(ids[:, :1], caches=caches)


def test_rotary_positions_replace_the_learned_ones():
    model = tiny_model(context_length=8, rope=True)
    assert model.pos_emb is None and "pos_emb.weight" not in model.state_dict()
    assert all(isinstance(block.attn, mh.ModernAttention) for block in model.blocks)
    ids = torch.randint(0, 11, (2, 8), generator=torch.Generator().manual_seed(0))
    caches = model.new_caches()
    pieces = [model(ids[:, a:b], caches=caches) for a, b in ((0, 3), (3, 4), (4, 8))]
    torch.testing.assert_close(torch.cat(pieces, dim=1), model(ids))
    logits, weights = model(ids, return_weights=True)
    assert weights.shape == (2, 2, 2, 8, 8)  # (b, num_layers, h, T, T)
    torch.testing.assert_close(logits, model(ids))
    with pytest.raises(TypeError, match="rope"):
        lm.BlockParts(rope="yes")


def test_model_rejects_bad_arguments(small_model):
    with pytest.raises(ValueError, match="d_model must be divisible by num_heads"):
        lm.CharTransformer(20, d_model=10, num_heads=4)
    with pytest.raises(TypeError, match="num_layers"):
        lm.CharTransformer(20, num_layers=2.0)
    with pytest.raises(TypeError, match="integer dtype"):
        small_model(torch.zeros(1, 3))
    with pytest.raises(ValueError, match="context_length=12"):
        small_model(torch.zeros(1, 13, dtype=torch.long))
    with pytest.raises(ValueError, match=r"\[0, 20\)"):
        small_model(torch.full((1, 3), 20))


# ----------------------------------------------------------------------------- generation


def windowed_greedy(model: lm.CharTransformer, ids: torch.Tensor, steps: int) -> torch.Tensor:
    """Greedy decoding written out, reading the last context_length tokens (nanoGPT's crop)."""
    for _ in range(steps):
        logits = model(ids[:, -model.context_length :])[:, -1]  # (b, vocab)
        ids = torch.cat([ids, logits.argmax(-1, keepdim=True)], dim=1)
    return ids


@settings(max_examples=25, deadline=None)
@given(
    prompt_length=st.integers(1, 20),
    new=st.integers(1, 30),
    seed=st.integers(-(2**63), 2**64 - 1),
    temperature=st.sampled_from([1e-38, 0.3, 1.0, 2.5]),
    top_k=st.sampled_from([None, 1, 3, 11]),
    batch=st.integers(1, 3),
    rope=st.booleans(),
)
def test_cached_generation_equals_uncached_past_the_window(
    prompt_length, new, seed, temperature, top_k, batch, rope
):
    model = tiny_model(context_length=8, rope=rope)
    prompt = torch.randint(
        0, 11, (batch, prompt_length), generator=torch.Generator().manual_seed(0)
    )
    kwargs = {"temperature": temperature, "top_k": top_k, "seed": seed}
    cached = lm.generate(model, prompt, new, use_cache=True, **kwargs)
    uncached = lm.generate(model, prompt, new, use_cache=False, **kwargs)
    assert cached.shape == (batch, prompt_length + new)
    assert torch.equal(cached, uncached) and torch.equal(cached[:, :prompt_length], prompt)


def test_generation_slides_its_window_like_nanogpt():
    model = tiny_model(context_length=6)
    prompt = torch.tensor([[1, 2, 3, 4]])
    for use_cache in (True, False):
        out = lm.generate(model, prompt, 25, top_k=1, use_cache=use_cache)
        assert torch.equal(out, windowed_greedy(model, prompt, 25))
    long_prompt = torch.randint(0, 11, (2, 40))  # longer than the window: its last 6 are read
    assert lm.generate(model, long_prompt, 3, top_k=1).shape == (2, 43)
    torch.testing.assert_close(
        lm.generate(model, long_prompt, 3, top_k=1)[:, -3:],
        windowed_greedy(model, long_prompt, 3)[:, -3:],
    )


def test_generation_is_seeded_and_leaves_global_state_alone(small_model):
    prompts = torch.randint(0, 20, (3, 4))  # (b, T)
    state = torch.get_rng_state()
    a = lm.generate(small_model, prompts, 8, seed=5)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(a, lm.generate(small_model, prompts, 8, seed=np.int64(5)))
    assert not torch.equal(a, lm.generate(small_model, prompts, 8, seed=6))
    assert small_model.training  # the mode is restored


@pytest.mark.parametrize(
    "temperature", [1e-38, np.float32(1e-38), 5e-324, 1e-300, np.float64(1e-45)]
)
def test_a_tiny_temperature_is_greedy_not_nan(small_model, temperature):
    small_model.eval()
    ids = torch.randint(0, 20, (2, 3))
    out = lm.generate(small_model, ids, 5, temperature=temperature, seed=1)
    assert torch.equal(out, windowed_greedy(small_model, ids, 5))
    probs = lm.next_token_probs(torch.tensor([[3.0, 1.0, 3.0, -1e30]]), temperature=temperature)
    assert not probs.isnan().any() and probs.tolist() == [[0.5, 0.0, 0.5, 0.0]]


@pytest.mark.parametrize(
    ("logits", "k"),
    [
        ([[1.0, 1.0, 0.0]], 1),
        ([[2.0, 2.0, 2.0, 2.0]], 2),
        ([[0.0, 5.0, 5.0, 5.0, 1.0]], 2),
        ([[-1.0, -1.0, -1.0], [4.0, 3.0, 3.0]], 2),
    ],
)
def test_top_k_keeps_exactly_k_even_with_ties(logits, k):
    probs = lm.next_token_probs(torch.tensor(logits), top_k=np.int64(k))
    assert ((probs > 0).sum(-1) == k).all()
    torch.testing.assert_close(probs.sum(-1), torch.ones(len(logits)))


def test_empty_batch_gives_an_empty_result(small_model):
    for shape, new in (((0, 3), 5), ((0, 1), 1), ((0, 30), 2)):
        out = lm.generate(small_model, torch.zeros(shape, dtype=torch.long), new)
        assert out.shape == (0, shape[1] + new) and out.dtype == torch.long
    with pytest.raises(TypeError, match="integer dtype"):
        lm.generate(small_model, torch.zeros(0, 3), 5)
    with pytest.raises(ValueError, match="num_tokens >= 1"):
        lm.generate(small_model, torch.zeros(0, 0, dtype=torch.long), 5)


def test_generate_rejects_bad_arguments(small_model):
    ids = torch.zeros(1, 3, dtype=torch.long)
    cases = [
        ({"max_new_tokens": 0}, ValueError, "max_new_tokens"),
        ({"temperature": 0.0}, ValueError, "temperature"),
        ({"temperature": -1e-38}, ValueError, "temperature"),
        ({"temperature": math.inf}, ValueError, "temperature"),
        ({"temperature": math.nan}, ValueError, "temperature"),
        ({"temperature": "hot"}, TypeError, "temperature"),
        ({"temperature": np.True_}, TypeError, "temperature"),
        ({"top_k": 0}, ValueError, "top_k"),
        ({"top_k": 21}, ValueError, "top_k"),
        ({"top_k": 2.0}, TypeError, "top_k"),
        ({"seed": 2**64}, ValueError, "seed must be in"),
        ({"seed": -(2**63) - 1}, ValueError, "seed must be in"),
        ({"seed": np.float64(3)}, TypeError, "seed"),
        ({"seed": None}, TypeError, "seed"),
        ({"use_cache": "no"}, TypeError, "use_cache"),
    ]
    for override, error, fragment in cases:
        with pytest.raises(error, match=fragment):
            lm.generate(small_model, ids, **{"max_new_tokens": 3, **override})
    with pytest.raises(ValueError, match="prompt must have shape"):
        lm.generate(small_model, torch.zeros(1, 1, 3, dtype=torch.long), 3)


# ------------------------------------------------------------------------------- training


def test_learning_rate_schedule():
    config = lm.CharLMConfig(steps=100, warmup_steps=10, lr=1e-3, min_lr=1e-4)
    assert lm.learning_rate(0, config) == pytest.approx(1e-4)
    assert lm.learning_rate(10, config) == pytest.approx(1e-3)
    assert lm.learning_rate(99, config) == pytest.approx(1e-4)
    rates = [lm.learning_rate(s, config) for s in range(10, 100)]
    assert all(a >= b for a, b in itertools.pairwise(rates))


def tiny_config(**overrides) -> lm.CharLMConfig:
    settings_ = {
        "d_model": 16,
        "num_heads": 2,
        "num_layers": 1,
        "context_length": 16,
        "batch_size": 8,
        "steps": 30,
        "warmup_steps": 3,
        "eval_every": 15,
        "lr": 1e-2,
        "min_lr": 1e-3,
    }
    return lm.CharLMConfig(**{**settings_, **overrides})


def small_data() -> lm.TextData:
    return lm.text_data(lm.load_song_ci()[:6000])


def test_training_lowers_the_loss_and_leaves_global_state_alone(two_threads):
    state, threads = torch.get_rng_state(), torch.get_num_threads()
    assert threads == two_threads  # not the one thread training uses
    seen = []
    run = lm.train_char_lm(
        tiny_config(),
        progress=False,
        data=small_data(),
        on_eval=lambda r: seen.append(len(r.losses)),
    )
    assert torch.equal(torch.get_rng_state(), state) and torch.get_num_threads() == threads
    assert seen == [15, 30] and [s for s, _ in run.val_losses] == [15, 30]
    assert abs(run.losses[0] - math.log(run.tokenizer.vocab_size)) < 0.3
    assert sum(run.losses[-5:]) / 5 < run.losses[0] - 1.0 and not run.model.training
    again = lm.train_char_lm(tiny_config(), stop_after=5, progress=False, data=small_data())
    assert again.losses == run.losses[:5]  # same seed, same machine: the same digits


@pytest.mark.parametrize(("train", "val"), [(10, 500), (500, 10), (16, 500), (500, 16)])
def test_training_text_shorter_than_the_context_is_refused(train, val):
    tokenizer = lm.CharTokenizer("ab")
    data = lm.TextData(
        tokenizer, torch.zeros(train, dtype=torch.long), torch.zeros(val, dtype=torch.long)
    )
    with pytest.raises(ValueError, match="context_length"):
        lm.train_char_lm(tiny_config(), progress=False, data=data)
    ok = lm.TextData(
        tokenizer, torch.zeros(17, dtype=torch.long), torch.zeros(17, dtype=torch.long)
    )
    assert (
        len(lm.train_char_lm(tiny_config(steps=2, warmup_steps=1), progress=False, data=ok).losses)
        == 2
    )


@pytest.mark.parametrize(
    ("device", "error"),
    [("cuda:7", ValueError), ("gpu", ValueError), (3, TypeError), ("meta", ValueError)],
)
def test_training_device_is_checked(device, error):
    if device == "cuda:7" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(error, match="device"):
        lm.train_char_lm(tiny_config(), progress=False, data=small_data(), device=device)


@pytest.mark.parametrize(
    ("device", "error"),
    [("cuda:7", ValueError), ("gpu", ValueError), (3, TypeError), ("meta", ValueError)],
)
def test_generation_device_is_checked_before_the_model_moves(device, error):
    model = tiny_model()
    if device == "cuda:7" and torch.cuda.device_count() > 7:
        device = "cuda:99"
    with pytest.raises(error, match="device"):
        lm.generate(model, torch.tensor([1, 2]), 3, device=device)
    assert model.tok_emb.weight.device.type == "cpu"


def test_generation_runs_where_the_model_is_or_where_it_is_told():
    model = tiny_model()
    prompt = torch.tensor([[1, 2, 3]])  # (b, T)
    default = lm.generate(model, prompt, 5, seed=3)  # (1, 8)
    assert torch.equal(lm.generate(model, prompt, 5, seed=3, device="cpu"), default)
    assert torch.equal(lm.generate(model, prompt, 5, seed=3, device=torch.device("cpu")), default)
    present = [d for d in ("cuda", "mps") if getattr(torch, d).is_available()]
    for name in present:  # a GPU machine: the model moves there, the prompt follows it
        out = lm.generate(model, prompt, 5, seed=3, device=name)
        assert out.device.type == name and out.shape == default.shape
        assert model.tok_emb.weight.device.type == name
        model.cpu()


def test_the_sdpa_backend_trains_the_same_model_and_returns_the_plain_one():
    """make train-demo's fast path: on the CPU the same losses to float32 rounding, dropout
    included (SDPA draws the same masks), and the model comes back with the eager attention
    that lesson 12 reads the weights of."""
    data = small_data()
    for dropout in (0.0, 0.2):
        config = tiny_config(dropout=dropout, steps=8, warmup_steps=1, eval_every=8)
        eager = lm.train_char_lm(config, progress=False, data=data)
        fast = lm.train_char_lm(config, progress=False, data=data, backend="sdpa")
        torch.testing.assert_close(
            torch.tensor(fast.losses), torch.tensor(eager.losses), rtol=1e-5, atol=1e-5
        )
        assert fast.val_losses[-1][1] == pytest.approx(eager.val_losses[-1][1], abs=1e-5)
        assert not any("use_sdpa" in vars(block.attn) for block in fast.model.blocks)
    ids = data.val_ids[:10][None]  # (1, 10)
    _, weights = fast.model(ids, return_weights=True)  # (1, num_layers, h, 10, 10)
    assert weights.shape == (1, 1, 2, 10, 10)
    with pytest.raises(ValueError, match="backend"):
        lm.train_char_lm(config, progress=False, data=data, backend="flash")


def test_the_block_figure_is_drawn_with_the_model_s_own_sizes():
    torch.manual_seed(0)
    model = lm.CharTransformer(50, 24, 16, 3, 2)  # vocab 50, d_model 24, context 16, 3 heads
    fig = mh.figures.plot_transformer_block(model)
    texts = " | ".join(t.get_text() for t in fig.axes[0].texts)
    for size in ("50 × 24", "16 × 24", "3 heads × head_dim 8 = 24", "24 → 96 → GELU → 24"):
        assert size in texts, (size, texts)
    assert (
        "× 2 blocks" in texts
        and "T ≤ 16" in texts
        and f"{model.num_parameters():,}" in (fig.axes[0].get_title())
    )
    with pytest.raises(TypeError, match="model"):
        mh.figures.plot_transformer_block(lm.load_checkpoint())


def test_config_rejects_bad_values():
    cases = [
        ({"d_model": 130}, ValueError, "d_model must be divisible by num_heads"),
        ({"steps": 0}, ValueError, "steps"),
        ({"lr": "fast"}, TypeError, "lr"),
        ({"warmup_steps": 5000}, ValueError, "warmup_steps"),
        ({"residual": "yes"}, TypeError, "residual"),
        ({"layer_norm": 1}, TypeError, "layer_norm"),
    ]
    for kwargs, error, fragment in cases:
        with pytest.raises(error, match=fragment):
            lm.CharLMConfig(**kwargs)


# ----------------------------------------------------------------------------- checkpoint


@pytest.fixture(scope="module")
def tiny_run() -> lm.CharLMRun:
    return lm.train_char_lm(tiny_config(steps=6, eval_every=3), progress=False, data=small_data())


def test_save_and_load_round_trip(tiny_run, tmp_path):
    path = lm.save_checkpoint(tiny_run, tmp_path / "tiny.pt")
    loaded = lm.load_checkpoint(path)
    ids = tiny_run.tokenizer.encode("春花秋月何时了")[None]
    assert torch.equal(loaded.model(ids), tiny_run.model(ids))
    assert loaded.losses == tiny_run.losses and loaded.val_losses == tiny_run.val_losses
    assert loaded.tokenizer.unknown == lm.UNKNOWN and loaded.config == tiny_run.config
    half = lm.load_checkpoint(
        lm.save_checkpoint(tiny_run, tmp_path / "half.pt", dtype=torch.float16)
    )
    torch.testing.assert_close(half.model(ids), tiny_run.model(ids), atol=2e-2, rtol=0)
    assert half.model.tok_emb.weight.dtype == torch.float32


def test_a_rotary_run_saves_and_loads(tmp_path):
    run = lm.train_char_lm(
        tiny_config(steps=4, eval_every=2, rope=True), progress=False, data=small_data()
    )
    loaded = lm.load_checkpoint(lm.save_checkpoint(run, tmp_path / "rope.pt"))
    ids = run.tokenizer.encode("春花秋月何时了")[None]
    assert loaded.config.rope and loaded.model.pos_emb is None
    assert torch.equal(loaded.model(ids), run.model(ids))


def corrupt(path, tensor_name: str | None = None, value: float = 0.5) -> None:
    raw = torch.load(path, weights_only=True)
    name = tensor_name or next(iter(raw["state_dict"]))
    raw["state_dict"][name].view(-1)[0] += value
    torch.save(raw, path)


@pytest.mark.parametrize("name", [None, "pos_emb.weight", "ln_f.bias"])
def test_changed_weights_are_refused(tiny_run, tmp_path, name):
    path = lm.save_checkpoint(tiny_run, tmp_path / "c.pt")
    corrupt(path, name)
    with pytest.raises(ValueError, match="checksum"):
        lm.load_checkpoint(path)


@pytest.mark.parametrize("offset", [0.3, 0.5, 0.7])
def test_flipped_bytes_inside_the_file_are_refused(tiny_run, tmp_path, offset):
    path = lm.save_checkpoint(tiny_run, tmp_path / "f.pt")
    data = bytearray(path.read_bytes())
    start = int(len(data) * offset)
    data[start : start + 64] = bytes(b ^ 0xFF for b in data[start : start + 64])
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"checksum|not a checkpoint|not a valid"):
        lm.load_checkpoint(path)


@pytest.mark.parametrize("missing", ["config", "chars", "state_dict", "val_losses", "checksum"])
def test_a_checkpoint_missing_a_key_is_named(tiny_run, tmp_path, missing):
    path = lm.save_checkpoint(tiny_run, tmp_path / "m.pt")
    raw = torch.load(path, weights_only=True)
    del raw[missing]
    torch.save(raw, path)
    with pytest.raises(ValueError, match=f"without \\['{missing}'\\]"):
        lm.load_checkpoint(path)


@pytest.mark.parametrize(
    "content", ["text file\n", "", "PK\x03\x04 not really a zip"], ids=["text", "empty", "zip"]
)
def test_a_file_that_is_no_checkpoint_is_named(tmp_path, content):
    path = tmp_path / "notes.pt"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"notes\.pt"):
        lm.load_checkpoint(path)


@pytest.mark.parametrize("obj", [[1, 2], {"format": 2}, {"format": 1, "config": {}}, 3])
def test_other_saved_objects_are_refused(tmp_path, obj):
    path = tmp_path / "o.pt"
    torch.save(obj, path)
    with pytest.raises(ValueError, match="checkpoint"):
        lm.load_checkpoint(path)


def test_repr_without_validation_losses(tiny_run, tmp_path):
    path = lm.save_checkpoint(tiny_run, tmp_path / "r.pt")
    loaded = lm.load_checkpoint(path)
    loaded.val_losses = []
    assert "val loss" not in repr(loaded) and "6 steps" in repr(loaded)
    with pytest.raises(TypeError, match="dtype"):
        lm.save_checkpoint(tiny_run, tmp_path / "x.pt", dtype=torch.int8)
    with pytest.raises(TypeError, match="run"):
        lm.save_checkpoint(tiny_run.model, tmp_path / "x.pt")


# ------------------------------------------------------------------------- verse, analysis


def test_verse_shape_counts_halves_couplets_and_copies():
    training = "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n"
    shape = lm.verse_shape(
        "床前明月光，疑是地上霜。\n春风又绿江南岸，明月何时照我还？\n一二三，四\n未完", training
    )
    assert (shape.num_lines, shape.num_half_lines) == (3, 6)
    assert shape.couplets == pytest.approx(2 / 3) and shape.half_lines == pytest.approx(4 / 6)
    assert 0 < shape.copied < 1
    assert lm.verse_shape("举头望明月，低头思故乡。\n", training).copied == 1.0
    with pytest.raises(ValueError, match="complete line"):
        lm.verse_shape("没有换行", training)
    with pytest.raises(TypeError, match="training_text"):
        lm.verse_shape("a\n", None)


def test_head_focus_measures_the_parallel_character():
    text = "\n床前明月光，疑是地上霜。\n"
    num = len(text)
    parallel = torch.eye(num)
    for j in range(5):  # 疑是地上霜 look at 床前明月光
        parallel[7 + j] = 0
        parallel[7 + j, 1 + j] = 1.0
    uniform = torch.ones(num, num).tril() / torch.arange(1, num + 1)[:, None]
    focus = lm.head_focus(torch.stack([parallel, uniform]), text)  # (1, 2, 5)
    assert focus.categories == lm.CATEGORIES and focus.shares.shape == (1, 2, 5)
    assert focus.shares[0, 0, 3] == 1.0 and focus.strongest("parallel") == (0, 0)
    torch.testing.assert_close(focus.shares[0, 1], focus.baseline)
    assert focus.shares[0, 0, 4] < 0.5  # the predicted character's partner is one further on
    no_couplet = lm.head_focus(torch.eye(4)[None], "\n床前\n")
    assert no_couplet.shares[0, 0, 3].isnan() and no_couplet.baseline[4].isnan()
    with pytest.raises(ValueError, match="parallel"):
        no_couplet.strongest("parallel")


def test_the_strongest_heads_are_listed_in_the_lesson_language():
    text = "\n床前明月光，疑是地上霜。\n"
    num = len(text)
    uniform = torch.ones(num, num).tril() / torch.arange(1, num + 1)[:, None]
    previous = torch.diag(torch.ones(num - 1), -1)
    previous[0, 0] = 1.0  # (T, T): every query on the character before it
    focus = lm.head_focus(torch.stack([uniform, previous]), text)  # (1, 2, 5)
    english = focus.strongest_heads().splitlines()
    assert len(english) == 5 and english[0].endswith(
        "previous: block 1 head 2, 1.00 (uniform 0.17)"
    )
    with mh.i18n.using_language("zh"):
        chinese = focus.strongest_heads().splitlines()
        table = str(focus.table())
    assert chinese[0].endswith("前一个字符：第 1 块的头 2，1.00（均匀注意力 0.17）")
    assert "块" in table and "均匀注意力" in table and "previous" not in table
    assert len(lm.head_focus(torch.eye(4)[None], "\n床前\n").strongest_heads().splitlines()) == 2


def test_verse_shape_prints_in_the_lesson_language():
    shape = lm.verse_shape("床前明月光，疑是地上霜。\n", "举头望明月，低头思故乡。\n")
    assert "half-lines of 5 or 7 characters: 100% of 2" in repr(shape)
    with mh.i18n.using_language("zh"):
        shown = repr(shape)
        assert "5 或 7 个字的句占 100%（共 2 句）" in shown and "half" not in shown


def test_tiny_model_on_a_real_text_gives_shares_in_range():
    model = mh.lm.CharTransformer(11, 8, 32, 2, 1)
    tokenizer = lm.CharTokenizer("床前明月光疑是霜，。\n")
    text = "\n床前明月光，疑是月光霜。\n"
    focus = lm.focus_on_texts(model, tokenizer, [text, text[:-1]])
    assert ((focus.shares >= 0) & (focus.shares <= 1 + 1e-6)).all()
