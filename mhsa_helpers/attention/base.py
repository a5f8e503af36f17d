"""The two base classes: checking ``forward``'s arguments once, and the causal multi-head steps.

* ``AttentionModule`` -- what *every* attention class shares: every check of ``forward``'s
  arguments, once per call and before any matmul (``begin_forward``). The teaching classes, the
  wrapper, the production variants and cross-attention all call it; none repeats a check.
* ``CausalSelfAttentionBase`` -- what the causal classes add: constructor checks, the causal
  ``mask`` buffer, dropout, and the step after the projections (``attend_and_project``: the KV
  cache update, the attention core ``functional.attend``, merging the heads and ``out_proj``).
  So each subclass's ``forward`` shows only its own idea: how it computes queries, keys and
  values. It creates *no* parameters: each subclass creates its layers itself, in the book's order
  (W_query, W_key, W_value, then out_proj), so that ``torch.manual_seed(123)`` reproduces the
  book's numbers.

The path of a ``key_padding_mask``, e.g. in ``MultiHeadAttention``::

    forward ──> begin_forward            (checked once: bool (b, T), on x's device)
            └─> attend_and_project ──> [cache.append: the cache's padding + the new tokens']
                                   └─> functional.attend ──> attention_mask (causal | padding)
                                                         └─> eager_attention: softmax
"""

from __future__ import annotations

import torch
from torch import nn

from ..validation import (
    check_dropout,
    check_flag,
    check_heads,
    check_input,
    check_key_padding_mask,
    check_positive_int,
    compute_dtype,
)
from .functional import attend, causal_mask, merge_heads
from .kv_cache import KVCache

__all__ = ["AttentionModule", "CausalSelfAttentionBase"]


class AttentionModule(nn.Module):
    """Checks every attention ``forward`` runs first: ``begin_forward``. No parameters, no state.

    Class attributes a subclass may set: ``check_finite`` (True: NaN and inf input raise a
    ``ValueError`` naming the first bad (batch, token) position, in every class; an instance may
    set it to False to skip the check, which reads the tensor on the host) and ``input_ndim``
    ((3,) for (b, T, d_in); ``SelfAttentionV1/V2`` also take an unbatched (T, d_in) sequence:
    (2, 3)).
    """

    check_finite: bool = True
    input_ndim: tuple[int, ...] = (3,)
    d_in: int
    context_length: int | None = None  # None: no limit on the number of tokens

    def input_width(self, name: str) -> int:
        """The last dimension that input ``name`` must have (``d_in``; cross-attention: two)."""
        return self.d_in

    def check_input(self, x: object, name: str = "x") -> torch.Tensor:
        """Raise ``TypeError``/``ValueError`` for any tensor ``forward`` cannot take as ``name``."""
        param = next(self.parameters())
        return check_input(
            x,
            d_in=self.input_width(name),
            ndim=self.input_ndim,
            context_length=self.context_length,
            dtype=param.dtype,
            device=param.device,
            finite=self.check_finite,
            name=name,
        )

    def begin_forward(
        self,
        x: torch.Tensor,
        key_padding_mask: object,
        return_weights: object,
        cache: object = None,
        *,
        key_value: torch.Tensor | None = None,
    ) -> None:
        """Every check of ``forward``'s arguments, once, before any matmul.

        Checks ``x`` (named ``query`` when there is a ``key_value``), then ``key_value``, then
        ``return_weights`` and ``key_padding_mask`` (it describes the keys: those of ``x``, or of
        ``key_value`` in cross-attention), then, with a ``cache``, that it is a ``KVCache``
        belonging to this layer that the new tokens fit in, with keys of the dtype this call
        computes.
        """
        self.check_input(x, "x" if key_value is None else "query")
        source = x  # the tokens the keys come from
        if key_value is not None:
            source = self.check_input(key_value, "key_value")
            if x.shape[0] != key_value.shape[0]:
                raise ValueError(
                    "query and key_value must have the same batch size, got "
                    f"query.shape={tuple(x.shape)}, key_value.shape={tuple(key_value.shape)}"
                )
        check_flag("return_weights", return_weights)
        check_key_padding_mask(
            key_padding_mask,
            num_keys=source.shape[-2],
            batch=source.shape[0] if source.dim() == 3 else None,
            device=source.device,
        )
        if cache is not None:
            if not isinstance(cache, KVCache):
                raise TypeError(
                    f"cache must be a KVCache or None, got cache={cache!r} ({type(cache).__name__})"
                )
            param_dtype = next(self.parameters()).dtype
            cache.check(
                x,
                context_length=self.context_length,
                layer=self,
                dtype=compute_dtype(x, param_dtype),
            )


class CausalSelfAttentionBase(AttentionModule):
    """Shared constructor checks, ``mask`` buffer, dropout and the attention step (no parameters).

    Sizes may be Python or numpy integers (stored as Python ints), ``dropout`` any real number
    in [0, 1).
    """

    # True: attend with torch's fused F.scaled_dot_product_attention unless the weights are asked
    # for; False: always the explicit path (the teaching classes).
    use_sdpa: bool = False
    mask: torch.Tensor  # (context_length, context_length) buffer, 1 above the diagonal
    out_proj: nn.Linear  # created by each multi-head subclass, after W_query/W_key/W_value
    context_length: int

    def __init__(
        self, d_in: int, d_out: int, context_length: int, dropout: float, num_heads: int = 1
    ):
        super().__init__()
        self.d_in = check_positive_int("d_in", d_in)
        self.head_dim = check_heads(d_out, num_heads)
        self.d_out = int(d_out)
        self.num_heads = int(num_heads)
        self.context_length = check_positive_int("context_length", context_length)
        self.dropout = nn.Dropout(check_dropout(dropout))
        # A buffer, not a parameter: it moves with .to(device), is saved in state_dict, and never
        # receives gradients. 1 above the diagonal marks the future.
        self.register_buffer("mask", causal_mask(self.context_length))

    def causal_mask(self, num_tokens: int) -> torch.Tensor:
        """Bool (num_tokens, num_tokens), True above the diagonal (positions to hide)."""
        return self.mask.bool()[:num_tokens, :num_tokens]

    def attend_and_project(
        self,
        queries: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        key_padding_mask: torch.Tensor | None,
        cache: KVCache | None,
        return_weights: bool,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Cache update, causal attention, merge the heads, ``out_proj``.

        queries (b, h, n, head_dim) and keys/values (b, h_kv, n, head_dim) of the n new tokens ->
        (b, n, d_out), or ``(out, weights)`` with weights (b, h, n, T_k) when ``return_weights``.
        With a ``cache`` (already checked by ``begin_forward``), the new keys and values are
        appended to it and the queries attend over all T_k = len(cache) cached ones, the n new
        tokens being the last n positions: query i sees keys 0 .. T_k - n + i.
        ``key_padding_mask`` (bool (b, n), True at padding) hides padded keys as well; the cache
        keeps the padding of the cached ones.
        """
        if cache is not None:
            keys, values, key_padding_mask = cache.append(
                keys, values, key_padding_mask, layer=self
            )  # (b, h_kv, T_k, head_dim) twice, (b, T_k) or None
        context_vec, attn_weights = attend(
            queries,
            keys,
            values,
            causal=self.mask,
            key_padding_mask=key_padding_mask,
            dropout=self.dropout,
            backend="sdpa" if self.use_sdpa and not return_weights else "eager",
        )  # (b, h, n, head_dim), (b, h, n, T_k) or None
        out = self.out_proj(merge_heads(context_vec))  # (b, n, d_out)
        if not return_weights:
            return out
        assert attn_weights is not None  # the eager backend returns them
        return out, attn_weights

    def extra_repr(self) -> str:
        return (
            f"d_in={self.d_in}, d_out={self.d_out}, context_length={self.context_length}, "
            f"num_heads={self.num_heads}, head_dim={self.head_dim}"
        )
