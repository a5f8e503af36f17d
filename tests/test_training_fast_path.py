"""Training's fast path (``lm.training_attention``) computes the model the eager path computes.

``train_char_lm(backend="sdpa")`` runs each block's ``MultiHeadAttention`` with one fused QKV
matmul and ``F.scaled_dot_product_attention(is_causal=True)``, without the NaN check of each
block's input; benchmarks/char_lm_training.py times it against a nanoGPT block. Here: the same
logits and the same gradients as the plain (eager, checked) model, dropout included; the
shipped checkpoint gives the same logits; the plain model comes back afterwards; a diverged
run still stops with an error.
"""

from __future__ import annotations

import copy

import pytest
import torch
from torch.nn import functional as F

from mhsa_helpers import lm


def logits_and_grads(
    model: lm.CharTransformer, ids: torch.Tensor, seed: int
) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
    """One training step's logits (b, T, vocab) and every parameter's gradient."""
    model.zero_grad(set_to_none=True)
    torch.manual_seed(seed)  # the same dropout masks in both paths (SDPA draws them alike)
    logits = model(ids[:, :-1])  # (b, T, vocab)
    F.cross_entropy(logits.reshape(-1, model.vocab_size), ids[:, 1:].reshape(-1)).backward()
    return logits.detach(), {n: p.grad.clone() for n, p in model.named_parameters()}


@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_fast_path_gives_the_eager_logits_and_gradients(dropout):
    torch.manual_seed(0)
    plain = lm.CharTransformer(40, 24, 16, 3, 2, dropout=dropout).train()
    fast = copy.deepcopy(plain)
    ids = torch.randint(0, 40, (4, 17))  # (b, T + 1)
    want, want_grads = logits_and_grads(plain, ids, seed=5)
    with lm.training_attention(fast, "sdpa"):
        assert all(block.attn.use_sdpa and not block.attn.check_finite for block in fast.blocks)
        got, got_grads = logits_and_grads(fast, ids, seed=5)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-6)
    assert got_grads.keys() == want_grads.keys()
    for name, grad in want_grads.items():
        torch.testing.assert_close(got_grads[name], grad, rtol=1e-4, atol=1e-6, msg=name)


def test_the_shipped_checkpoint_gives_the_same_logits_on_the_fast_path():
    model = lm.load_checkpoint().model.eval()
    ids = lm.verse_data().val_ids[: model.context_length][None]  # (1, T)
    with torch.no_grad():
        want = model(ids)  # (1, T, vocab)
        with lm.training_attention(model, "sdpa"):
            got = model(ids)
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_the_plain_attention_comes_back_even_after_an_error():
    torch.manual_seed(0)
    model = lm.CharTransformer(20, 8, 8, 2, 2)
    with pytest.raises(RuntimeError, match="inside"), lm.training_attention(model, "sdpa"):
        raise RuntimeError("inside")
    for block in model.blocks:
        assert not {"use_sdpa", "check_finite"} & set(vars(block.attn))
        assert block.attn.use_sdpa is False and block.attn.check_finite is True
    with pytest.raises(ValueError, match="backend"), lm.training_attention(model, "flash"):
        pass


def test_a_diverged_run_stops_at_the_step_whose_loss_is_not_finite():
    """The blocks' NaN check is off while training; the loss check names the step instead."""
    config = lm.CharLMConfig(
        d_model=16, num_heads=2, num_layers=1, context_length=16, batch_size=4, steps=4,
        warmup_steps=1, eval_every=1,
    )  # fmt: skip

    def poison(run: lm.CharLMRun) -> None:  # after step 2, a NaN in position 0's embedding
        if len(run.losses) == 2:
            with torch.no_grad():
                run.model.pos_emb.weight[0, 0] = float("nan")

    data = lm.text_data(lm.load_song_ci()[:6000])
    with pytest.raises(ValueError, match="loss of step 3 is nan"):
        lm.train_char_lm(config, progress=False, data=data, backend="sdpa", on_eval=poison)
