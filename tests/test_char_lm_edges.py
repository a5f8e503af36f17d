"""The character model's edges and its checkpoints (issue 30, sections 1 and 2).

Each bad input gets a ValueError/TypeError naming the parameter and the value, before any work;
a checkpoint is never lost by a failed write and never loaded when any part of it was changed.
"""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from mhsa_helpers import lm
from mhsa_helpers.attention.functional import masked_attention
from mhsa_helpers.attention.kv_cache import KVCache
from mhsa_helpers.data import data_file
from mhsa_helpers.inspection import offset_attention
from mhsa_helpers.lm import checkpoint as ckpt


def tiny_model() -> lm.CharTransformer:
    torch.manual_seed(1)
    return lm.CharTransformer(11, 8, 6, 2, 2).eval()


# ------------------------------------------------------------------------------ the inputs


@pytest.mark.parametrize(
    ("text", "position"),
    [("ab\ud800c", 2), ("\udcff" + "x" * 1200, 0), ("床前明月光" * 300 + "\udce9", 1500)],
    ids=["high", "escaped-byte-first", "escaped-byte-last"],
)
def test_lone_surrogates_are_named_with_their_position(text, position):
    for call in (lm.CharTokenizer, lm.text_data, lm.CharTokenizer("abc□").encode):
        with pytest.raises(
            ValueError, match=rf"text holds a lone surrogate .* position {position}"
        ):
            call(text)


def test_a_latin1_file_read_with_surrogateescape_is_refused(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(("caf\xe9 au lait\n" * 200).encode("latin-1"))
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    with pytest.raises(ValueError, match=r"text holds a lone surrogate '\\udce9' at position 3"):
        lm.text_data(text)


@pytest.mark.parametrize("bad", [999, -5, 11])
def test_every_prompt_id_is_checked_not_only_the_window(bad):
    model = tiny_model()
    prompt = torch.tensor([bad] + [1] * 10)  # the bad id lies before the last 6 (the window)
    with pytest.raises(ValueError, match=rf"prompt.*\[0, 11\).*{bad}"):
        lm.generate(model, prompt, 2)


@given(
    st.lists(st.integers(0, 3), min_size=2, max_size=12).flatmap(
        lambda row: st.tuples(st.just(row), st.integers(1, len(row)))
    )
)
def test_top_k_keeps_the_first_ids_among_ties(case):
    row, k = case
    probs = lm.next_token_probs(torch.tensor([row], dtype=torch.float32), top_k=k)[0]
    order = sorted(range(len(row)), key=lambda i: (-row[i], i))  # larger first, then id order
    assert sorted(int(i) for i in probs.nonzero()) == sorted(order[:k])


def test_infinite_logits_have_a_defined_result_or_a_clear_error():
    inf = math.inf
    probs = lm.next_token_probs(torch.tensor([[1.0, inf, 2.0, inf], [0.0, 1.0, 2.0, 3.0]]))
    assert probs[0].tolist() == [0.0, 0.5, 0.0, 0.5]  # the +inf ids share it
    assert not probs.isnan().any() and torch.allclose(probs.sum(-1), torch.ones(2))
    assert lm.next_token_probs(torch.tensor([-inf, inf, 0.0]), top_k=1).tolist() == [0, 1, 0]
    with pytest.raises(ValueError, match=r"row \[1\] is -inf"):
        lm.next_token_probs(torch.tensor([[0.0, 1.0], [-inf, -inf]]))
    with pytest.raises(ValueError, match="NaN"):
        lm.next_token_probs(torch.tensor([[0.0, math.nan]]))


def test_generate_with_every_token_banned_but_one_still_draws_it():
    model = tiny_model()
    out = lm.generate(model, torch.tensor([1, 2]), 3, banned=list(range(1, 11)))
    assert out[2:].tolist() == [0, 0, 0]


def test_learning_rate_holds_min_lr_past_the_schedule_and_checks_its_arguments():
    config = lm.CharLMConfig(steps=100, warmup_steps=10, lr=1e-3, min_lr=1e-4)
    for step in (99, 100, 150, 10_000):
        assert lm.learning_rate(step, config) == pytest.approx(1e-4)
    with pytest.raises(ValueError, match="step=-1"):
        lm.learning_rate(-1, config)
    with pytest.raises(TypeError, match="step"):
        lm.learning_rate("3", config)
    with pytest.raises(TypeError, match="config must be a CharLMConfig, got NoneType"):
        lm.learning_rate(3, None)


def test_training_refuses_ids_past_the_vocabulary_before_the_first_step():
    data = lm.text_data(lm.load_song_ci()[:3000])
    vocab = data.tokenizer.vocab_size
    config = lm.CharLMConfig(
        d_model=8, num_heads=2, num_layers=1, context_length=8, batch_size=2, steps=2,
        warmup_steps=0, eval_every=2,
    )  # fmt: skip
    for name, bad in (("train_ids", vocab), ("val_ids", -1)):
        ids = getattr(data, name).clone()
        ids[3] = bad
        broken = dataclasses.replace(data, **{name: ids})
        with pytest.raises(ValueError, match=rf"data\.{name} holds ids .*{bad}.*\[0, {vocab}\)"):
            lm.train_char_lm(config, data=broken, progress=False)


def test_head_dim_zero_is_refused_before_the_softmax():
    q = torch.zeros(2, 3, 0)
    with pytest.raises(ValueError, match=r"d_k >= 1.*queries.shape=\(2, 3, 0\)"):
        masked_attention(q, q, torch.zeros(2, 3, 4))


@pytest.mark.parametrize("shape", [(0, 0, 0), (2, 0, 0), (1, 0, 3, 3), (0, 2, 3, 3)])
def test_head_focus_on_empty_weights_is_refused(shape):
    with pytest.raises(ValueError, match=r"weights\.shape"):
        lm.head_focus(torch.zeros(shape), "" if shape[-1] == 0 else "abc")


def test_offset_attention_measures_a_char_transformer_and_keeps_its_mode():
    model = tiny_model().train()
    shares = offset_attention(model, 0)
    assert shares.shape == (2, 2) and model.training  # (num_layers, num_heads)
    ids = torch.randint(0, 11, (3, 6))
    _, weights = model.eval()(ids, return_weights=True)  # (b, L, h, T, T)
    torch.testing.assert_close(
        offset_attention(model, 1, ids)[1], offset_attention(weights[:, 1], 1)
    )
    model.train()
    with pytest.raises(ValueError, match="token ids"):
        offset_attention(model, 1, torch.tensor([[99, 1]]))
    assert model.training  # restored after the model's own error


def test_kv_cache_names_the_device_of_a_step_that_does_not_fit():
    cache = KVCache(8)
    cache.update(torch.zeros(1, 2, 3, 4), torch.zeros(1, 2, 3, 4))
    meta = torch.zeros(1, 2, 1, 4, device="meta")
    with pytest.raises(ValueError, match="keys and values are on meta but the cache is on cpu"):
        cache.update(meta, meta)
    assert len(cache) == 3


# ----------------------------------------------------------------------------- checkpoints


@pytest.fixture(scope="module")
def tiny_run() -> lm.CharLMRun:
    config = lm.CharLMConfig(
        d_model=8, num_heads=2, num_layers=1, context_length=8, batch_size=2, steps=2,
        warmup_steps=0, eval_every=2,
    )  # fmt: skip
    return lm.train_char_lm(config, progress=False, data=lm.text_data(lm.load_song_ci()[:3000]))


def test_save_checkpoint_checks_the_path_first(tiny_run, tmp_path):
    with pytest.raises(FileNotFoundError, match="no folder"):
        lm.save_checkpoint(tiny_run, tmp_path / "missing" / "c.pt")
    with pytest.raises(IsADirectoryError, match="is a folder"):
        lm.save_checkpoint(tiny_run, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_keeps_the_old_checkpoint(tiny_run, tmp_path, monkeypatch):
    path = lm.save_checkpoint(tiny_run, tmp_path / "c.pt")
    before = path.read_bytes()

    def fail(obj, handle, *args, **kwargs):
        handle.write(b"half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(torch, "save", fail)
    with pytest.raises(OSError, match="disk full"):
        lm.save_checkpoint(tiny_run, path)
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["c.pt"]


@pytest.mark.parametrize(
    "edit",
    [
        lambda raw: raw["chars"].reverse(),
        lambda raw: raw.update(unknown=None),
        lambda raw: raw["config"].update(num_heads=4),
        lambda raw: raw["config"].update(dropout=0.5),
        lambda raw: raw["losses"].append(1.0),
        lambda raw: raw["val_losses"][0].__setitem__(1, 0.1),
    ],
    ids=["chars", "unknown", "heads", "dropout", "losses", "val-losses"],
)
def test_a_checkpoint_changed_anywhere_is_refused(tiny_run, tmp_path, edit):
    path = lm.save_checkpoint(tiny_run, tmp_path / "c.pt")
    raw = torch.load(path, weights_only=True)
    edit(raw)
    torch.save(raw, path)
    with pytest.raises(ValueError, match="does not match the checkpoint's checksum"):
        lm.load_checkpoint(path)


def test_the_shipped_checkpoint_is_format_3_and_a_format_2_file_is_refused(tmp_path):
    """Format 2's checksum covered the weights only: such a file, intact, is refused with a
    message that says how to write it again."""
    raw = torch.load(data_file(ckpt.DEMO_CHECKPOINT), weights_only=True)
    assert raw["format"] == 3 and ckpt.record_checksum(raw) == raw["checksum"]
    raw["format"], raw["checksum"] = 2, ckpt.tensor_checksum(raw["state_dict"])
    path = tmp_path / "old.pt"
    torch.save(raw, path)
    with pytest.raises(ValueError, match="format-2 checkpoint"):
        lm.load_checkpoint(path)
