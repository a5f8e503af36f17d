"""``generate``: autoregressive sampling (自回归生成) from a ``CharTransformer``.

Each step turns the logits of the last position into probabilities (softmax of
``logits / temperature``, keeping only the ``top_k`` largest when given), draws the next token from
a generator seeded with ``seed``, appends it and repeats.

* ``use_cache=True``: the prompt goes through the model once, filling one ``KVCache`` per block;
  each later step feeds only the newest token, which attends to every cached key and value.
* ``use_cache=False``: every step runs the whole sequence again (the full re-computation).

Both paths compute the same logits up to float rounding and draw from the same seeded generator,
so they produce the same tokens; the cached one is faster because it skips the re-computation.
"""

from __future__ import annotations

import math

import torch

from ..validation import check_flag, check_positive_int
from .model import CharTransformer

__all__ = ["generate", "next_token_probs"]


def next_token_probs(
    logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None
) -> torch.Tensor:
    """Logits (b, vocab) -> probabilities (b, vocab): softmax(logits / temperature), top-k only.

    ``temperature`` < 1 sharpens the distribution (more likely characters get even more likely),
    > 1 flattens it. ``top_k`` sets every logit below the k-th largest to -inf first, so only the
    k most likely characters can be drawn (``top_k=1`` is greedy decoding).
    """
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError("logits must be a floating-point torch.Tensor")
    temperature = _check_temperature(temperature)
    _check_top_k(top_k, logits.shape[-1])
    scaled = logits / temperature  # (b, vocab)
    if top_k is not None:
        kth = torch.topk(scaled, top_k, dim=-1).values[..., -1:]  # (b, 1)
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))  # (b, vocab)
    return torch.softmax(scaled, dim=-1)  # (b, vocab)


def _check_temperature(temperature: object) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)):
        raise TypeError(
            f"temperature must be a positive number, got temperature={temperature!r} "
            f"({type(temperature).__name__})"
        )
    if not (math.isfinite(temperature) and temperature > 0):
        raise ValueError(
            f"temperature must be a positive finite number, got temperature={temperature!r} "
            "(for greedy decoding use top_k=1)"
        )
    return float(temperature)


def _check_top_k(top_k: object, vocab_size: int) -> None:
    if top_k is None:
        return
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise TypeError(f"top_k must be None or an int, got top_k={top_k!r}")
    if not 1 <= top_k <= vocab_size:
        raise ValueError(f"top_k must be in [1, vocab_size={vocab_size}], got top_k={top_k}")


@torch.no_grad()
def generate(
    model: CharTransformer,
    prompt: torch.Tensor,
    max_new_tokens: int,
    *,
    temperature: float = 1.0,
    top_k: int | None = None,
    seed: int = 0,
    use_cache: bool = True,
) -> torch.Tensor:
    """Continue ``prompt`` by ``max_new_tokens`` sampled tokens; return prompt + new tokens.

    Args:
        model: a ``CharTransformer`` (run in eval mode; its mode is restored afterwards).
        prompt: token ids (T,) or (b, T), e.g. ``tokenizer.encode("明月")``.
        max_new_tokens: how many tokens to add; prompt + new tokens must fit in
            ``model.context_length`` (the learned positions end there).
        temperature, top_k: see ``next_token_probs``.
        seed: seeds the sampling generator (the global RNG is not touched).
        use_cache: one ``KVCache`` per block (True) or the full re-computation (False).

    Returns ids of shape (T + max_new_tokens,) or (b, T + max_new_tokens), like ``prompt``.
    """
    if not isinstance(model, CharTransformer):
        raise TypeError(f"model must be a CharTransformer, got {type(model).__name__}")
    if not isinstance(prompt, torch.Tensor):
        raise TypeError(f"prompt must be a torch.Tensor of token ids, got {type(prompt).__name__}")
    check_positive_int("max_new_tokens", max_new_tokens)
    _check_temperature(temperature)
    _check_top_k(top_k, model.vocab_size)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got seed={seed!r}")
    check_flag("use_cache", use_cache)
    squeeze = prompt.dim() == 1
    ids = prompt.unsqueeze(0) if squeeze else prompt  # (b, T)
    model.check_ids(ids, name="prompt")
    total = ids.shape[1] + max_new_tokens
    if total > model.context_length:
        raise ValueError(
            f"prompt ({ids.shape[1]} tokens) + max_new_tokens={max_new_tokens} = {total} exceeds "
            f"context_length={model.context_length}"
        )
    generator = torch.Generator(device=ids.device).manual_seed(seed)
    was_training = model.training
    model.eval()
    try:
        caches = model.new_caches() if use_cache else None
        step_input = ids  # (b, T): the whole prompt first
        for _ in range(max_new_tokens):
            # Without caches, the whole sequence again; with them, only the newest tokens.
            logits = model(ids) if caches is None else model(step_input, caches=caches)
            probs = next_token_probs(logits[:, -1], temperature=temperature, top_k=top_k)
            next_id = torch.multinomial(probs, 1, generator=generator)  # (b, 1)
            ids = torch.cat([ids, next_id], dim=1)  # (b, T_so_far + 1)
            step_input = next_id
    finally:
        model.train(was_training)
    return ids[0] if squeeze else ids
