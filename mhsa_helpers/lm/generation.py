"""``generate``: autoregressive sampling (自回归生成) from a ``CharTransformer``, of any length.

Each step turns the logits of the last position into probabilities (softmax of
``logits / temperature``, keeping only the ``top_k`` largest when given), draws the next token from
a generator seeded with ``seed``, appends it and repeats.

The model has learned positions 0 .. ``context_length - 1`` only, so it reads at most the last
``context_length`` tokens: once the text is longer, the window slides (滑动窗口) and the model
sees the last ``context_length`` tokens at positions 0 .. context_length - 1, as nanoGPT's
``generate`` crops its input.

* ``use_cache=True``: the prompt goes through the model once, filling one ``KVCache`` per block;
  each later step feeds only the newest token, which attends to every cached key and value. When
  the window slides, every token moves to a new position, so its cached keys (computed with the old
  position's embedding) no longer hold: from then on each step re-reads the whole window, exactly
  as the uncached path does.
* ``use_cache=False``: every step runs the whole window again (the full re-computation).

Both paths compute the same logits up to float rounding and draw from the same seeded generator,
so they produce the same tokens; the cached one is faster within the first window.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from ..validation import as_float, as_int, check_flag, check_positive_int, check_seed
from .device import check_device
from .model import CharTransformer

__all__ = ["generate", "next_token_probs"]


def next_token_probs(
    logits: torch.Tensor, *, temperature: float = 1.0, top_k: int | None = None
) -> torch.Tensor:
    """Logits (b, vocab) -> probabilities (b, vocab): softmax(logits / temperature), top-k only.

    ``temperature`` < 1 sharpens the distribution (more likely characters get even more likely),
    > 1 flattens it; a tiny temperature tends to greedy decoding (ties share the probability).
    ``top_k`` keeps exactly the k largest logits (the first in vocabulary order among ties) and
    sets the others to -inf, so only k characters can be drawn (``top_k=1`` is greedy decoding).

    Infinite logits, as the limit of large ones: where a row holds ``+inf``, its ``+inf`` ids
    share the probability (the others get 0); a row whose logits are all ``-inf`` (every token
    banned) has no distribution and raises ``ValueError``, as does a NaN logit.
    """
    if not isinstance(logits, torch.Tensor) or not logits.is_floating_point():
        raise TypeError("logits must be a floating-point torch.Tensor")
    if logits.dim() < 1 or logits.shape[-1] < 1:
        raise ValueError(f"logits must end in a vocabulary dimension, got {tuple(logits.shape)}")
    temperature = _check_temperature(temperature)
    top_k = _check_top_k(top_k, logits.shape[-1])
    if logits.numel() and not logits.is_meta:
        logits = _finite_rows(logits)  # (..., vocab), every row with a finite maximum
    # Subtract the maximum first: logits / 1e-38 would overflow, (logits - max) / 1e-38 is 0
    # for the largest logit and -inf for the others, a valid distribution.
    # In float64: a temperature below float32's range (1e-300) would round to 0 in float32.
    shifted = (logits - logits.amax(dim=-1, keepdim=True)).double()  # (b, vocab), max 0
    scaled = shifted / temperature  # (b, vocab)
    if top_k is not None:
        keep = torch.zeros_like(scaled, dtype=torch.bool)
        # A stable descending sort keeps tied logits in vocabulary order (torch.topk does not
        # promise which of equal values it returns).
        order = torch.sort(scaled, dim=-1, descending=True, stable=True).indices  # (b, vocab)
        keep.scatter_(-1, order[..., :top_k], True)  # exactly k per row, ties: first ids
        scaled = scaled.masked_fill(~keep, float("-inf"))  # (b, vocab)
    return torch.softmax(scaled, dim=-1).to(logits.dtype)  # (b, vocab)


def _finite_rows(logits: torch.Tensor) -> torch.Tensor:
    """``logits`` with each row that holds ``+inf`` turned into 0 there and ``-inf`` elsewhere.

    Raises ``ValueError`` for a NaN logit or a row of ``-inf`` only, naming the first such row.
    """
    nan = logits.isnan()
    if bool(nan.any()):
        row = [int(i) for i in nan.nonzero()[0][:-1]]
        raise ValueError(f"logits hold NaN (row {row}); a NaN logit gives no distribution")
    dead = (logits == float("-inf")).all(dim=-1)  # (...,)
    if bool(dead.any()):
        row = [int(i) for i in dead.nonzero()[0]]
        raise ValueError(
            f"every logit of row {row} is -inf (every token banned or masked): no token can be "
            "drawn"
        )
    top = logits == float("inf")  # (..., vocab)
    rows = top.any(dim=-1, keepdim=True)  # (..., 1)
    if not bool(rows.any()):
        return logits
    limit = torch.zeros_like(logits).masked_fill(~top, float("-inf"))  # the +inf ids share it
    return torch.where(rows, limit, logits)


def _check_temperature(temperature: object) -> float:
    value = as_float("temperature", temperature)
    if not (value > 0 and value != float("inf")):
        raise ValueError(
            f"temperature must be a positive finite number, got temperature={temperature!r} "
            "(for greedy decoding use top_k=1)"
        )
    return value


def _check_top_k(top_k: object, vocab_size: int) -> int | None:
    if top_k is None:
        return None
    value = as_int("top_k", top_k)
    if not 1 <= value <= vocab_size:
        raise ValueError(f"top_k must be in [1, vocab_size={vocab_size}], got top_k={top_k}")
    return value


def _check_banned(
    banned: object, vocab_size: int, name: str = "banned", where: str = ""
) -> torch.Tensor:
    """``banned`` as a sorted tensor of distinct token ids; ``name`` and ``where`` ("for row 1")
    say in the error which argument held it."""
    if isinstance(banned, torch.Tensor):
        if banned.is_floating_point() or banned.dtype == torch.bool or banned.dim() > 1:
            raise TypeError(
                f"{name} must hold integer token ids, got a {banned.dtype} tensor{where}"
            )
        values = banned.tolist()
    elif isinstance(banned, (list, tuple, set, frozenset)):
        values = [as_int(name, v) for v in banned]
    else:
        raise TypeError(
            f"{name} must be a list or tensor of token ids, got {type(banned).__name__}{where}"
        )
    values = [values] if isinstance(values, int) else values
    if any(not 0 <= v < vocab_size for v in values):
        raise ValueError(
            f"{name} ids must be in [0, {vocab_size}), got {sorted(values)[:10]}{where}"
        )
    if len(set(values)) >= vocab_size:
        raise ValueError(f"{name} must leave at least one token that can be drawn{where}")
    return torch.tensor(sorted(set(values)), dtype=torch.long)


def _check_step_banned(step_banned: object) -> Callable[[torch.Tensor], object] | None:
    if step_banned is not None and not callable(step_banned):
        raise TypeError(
            "step_banned must be None or a function of the ids so far returning one list of "
            f"token ids per row, got step_banned={step_banned!r} ({type(step_banned).__name__})"
        )
    return step_banned


def _step_ban_mask(rule: Callable[[torch.Tensor], object], ids: torch.Tensor, vocab_size: int):
    """The (b, vocab) mask of what ``rule(ids)`` bans at this step, its answer checked first."""
    answer = rule(ids)
    if isinstance(answer, (str, bytes, torch.Tensor)) or not isinstance(answer, Sequence):
        raise TypeError(
            "step_banned must return a list with one list of token ids per row, got "
            f"{type(answer).__name__}"
        )
    if len(answer) != ids.shape[0]:
        raise ValueError(
            f"step_banned must return one list of token ids per row ({ids.shape[0]} rows), got "
            f"{len(answer)} lists"
        )
    mask = torch.zeros(ids.shape[0], vocab_size, dtype=torch.bool)  # (b, vocab)
    for row, ids_of_row in enumerate(answer):
        mask[row, _check_banned(ids_of_row, vocab_size, "step_banned", f" for row {row}")] = True
    return mask.to(ids.device)


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
    banned: Sequence[int] | torch.Tensor = (),
    step_banned: Callable[[torch.Tensor], Sequence[Sequence[int]]] | None = None,
    device: str | torch.device | None = None,
) -> torch.Tensor:
    """Continue ``prompt`` by ``max_new_tokens`` sampled tokens; return prompt + new tokens.

    Args:
        model: a ``CharTransformer`` (run in eval mode; its mode is restored afterwards).
        prompt: token ids (T,) or (b, T), e.g. ``tokenizer.encode("明月")``; any length (the
            model reads its last ``context_length`` tokens).
        max_new_tokens: how many tokens to add, any number >= 1: past ``context_length`` the
            window slides.
        temperature, top_k: see ``next_token_probs`` (numpy numbers are accepted).
        seed: seeds the sampling generator, an int in [-2**63, 2**64 - 1] (the global RNG is
            not touched).
        use_cache: one ``KVCache`` per block (True) or the full re-computation (False).
        banned: token ids never drawn (their logits set to -inf first), e.g. the tokenizer's
            unknown-character token: ``banned=tokenizer.encode(lm.UNKNOWN)``.
        step_banned: a rule that bans tokens at one step only, or None. Before each draw it is
            called with the ids so far, (b, T_so_far), and returns one list of token ids per
            row, banned (logits set to -inf, before top-k) for that row's next token only;
            ``lm.fresh_rhyme_rule(tokenizer)`` is one (``write_poems(fresh_rhymes=True)``). A
            row whose every token is banned raises ``ValueError``.
        device: where to generate (``"cuda"`` or ``"mps"`` when present). None: where the model
            is. Otherwise the model is moved there first (``model.to(device)``, as
            ``train_char_lm`` leaves it on its device). The prompt follows the model; the CPU,
            the default, is what the course's saved outputs were made on.

    Returns ids of shape (T + max_new_tokens,) or (b, T + max_new_tokens), like ``prompt``, on
    the model's device; an empty batch (b = 0) gives an empty result of that shape.
    """
    if not isinstance(model, CharTransformer):
        raise TypeError(f"model must be a CharTransformer, got {type(model).__name__}")
    if not isinstance(prompt, torch.Tensor):
        raise TypeError(f"prompt must be a torch.Tensor of token ids, got {type(prompt).__name__}")
    max_new_tokens = check_positive_int("max_new_tokens", max_new_tokens)
    temperature = _check_temperature(temperature)
    top_k = _check_top_k(top_k, model.vocab_size)
    seed = check_seed("seed", seed)
    check_flag("use_cache", use_cache)
    banned_ids = _check_banned(banned, model.vocab_size)
    rule = _check_step_banned(step_banned)
    if device is not None:
        model.to(check_device(device))
    prompt = prompt.to(model.tok_emb.weight.device)  # the prompt follows the model
    if prompt.dim() not in (1, 2):
        raise ValueError(
            f"prompt must have shape (T,) or (batch, T), got prompt.shape={tuple(prompt.shape)}"
        )
    squeeze = prompt.dim() == 1
    ids = prompt.unsqueeze(0) if squeeze else prompt  # (b, T)
    if ids.shape[0] == 0 and ids.shape[1] >= 1:  # nothing to continue, but check the dtype
        model.check_ids(torch.zeros(1, 1, dtype=ids.dtype, device=ids.device), name="prompt")
        return ids.new_zeros(0, ids.shape[1] + max_new_tokens)
    window = model.context_length
    model.check_ids(ids[:, -window:], name="prompt")
    low, high = int(ids.min()), int(ids.max())  # every prompt id, not only the window's
    if low < 0 or high >= model.vocab_size:
        raise ValueError(
            f"token ids (prompt) must be in [0, {model.vocab_size}), got values from {low} to "
            f"{high} (prompt.shape={tuple(prompt.shape)})"
        )
    # torch.Generator takes seeds in [-2**63, 2**64); a negative one as its 64-bit pattern.
    generator = torch.Generator(device=ids.device).manual_seed(seed % 2**64)
    was_training = model.training
    model.eval()
    try:
        caches = model.new_caches() if use_cache else None
        cached = 0  # tokens in the caches
        for _ in range(max_new_tokens):
            if caches is not None and ids.shape[1] <= window:
                logits = model(ids[:, cached:], caches=caches)  # (b, new, vocab)
                cached = ids.shape[1]
            else:  # no cache, or the window slid: re-read the last `window` tokens
                logits = model(ids[:, -window:])  # (b, <= window, vocab)
            last = logits[:, -1]  # (b, vocab)
            if banned_ids.numel():
                last = last.index_fill(-1, banned_ids.to(last.device), float("-inf"))
            if rule is not None:
                last = last.masked_fill(_step_ban_mask(rule, ids, last.shape[-1]), float("-inf"))
            probs = next_token_probs(last, temperature=temperature, top_k=top_k)
            next_id = torch.multinomial(probs, 1, generator=generator)  # (b, 1)
            ids = torch.cat([ids, next_id.to(ids.dtype)], dim=1)  # (b, T_so_far + 1)
    finally:
        model.train(was_training)
    return ids[0] if squeeze else ids
