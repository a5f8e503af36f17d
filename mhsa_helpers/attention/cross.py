"""Cross-attention (交叉注意力): queries from one sequence, keys and values from another.

In an encoder-decoder model (translation, speech recognition) the decoder's tokens ask questions
(queries) of the encoder's output (keys and values). Nothing is hidden: every target token may
look at every source token, so there is no causal mask, and the two sequences may differ in
length (n_q vs n_kv) and in width (d_q vs d_kv). A padded source batch passes
``key_padding_mask`` (bool (b, n_kv), True at the source's padding positions).
"""

from __future__ import annotations

import torch
from torch import nn

from ..validation import check_dropout, check_flag, check_heads, check_positive_int
from .base import AttentionModule
from .functional import attend, merge_heads, split_heads

__all__ = ["CrossMultiHeadAttention"]


class CrossMultiHeadAttention(AttentionModule):
    """Multi-head cross-attention: (b, n_q, d_q) queries over (b, n_kv, d_kv) -> (b, n_q, d_out).

    W_query: d_q -> d_out, W_key and W_value: d_kv -> d_out, out_proj: d_out -> d_out, with
    ``head_dim = d_out // num_heads``. Dropout acts on the weights in training mode only.

    Like every attention class it refuses NaN/inf input with a ``ValueError`` naming the first
    bad (batch, token) position; that check reads the input on the host, and
    ``module.check_finite = False`` skips it where speed matters more (NaN then flows through).
    """

    def __init__(
        self,
        d_q: int,
        d_kv: int,
        d_out: int,
        num_heads: int,
        dropout: float = 0.0,
        qkv_bias: bool = False,
    ):
        super().__init__()
        self.d_q = check_positive_int("d_q", d_q)
        self.d_kv = check_positive_int("d_kv", d_kv)
        self.head_dim = check_heads(d_out, num_heads)
        self.d_out = int(d_out)
        self.num_heads = int(num_heads)
        self.dropout = nn.Dropout(check_dropout(dropout))
        check_flag("qkv_bias", qkv_bias)
        self.W_query = nn.Linear(self.d_q, self.d_out, bias=qkv_bias)
        self.W_key = nn.Linear(self.d_kv, self.d_out, bias=qkv_bias)
        self.W_value = nn.Linear(self.d_kv, self.d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(self.d_out, self.d_out)

    def forward(
        self,
        query: torch.Tensor,
        key_value: torch.Tensor,
        *,
        key_padding_mask: torch.Tensor | None = None,
        return_weights: bool = False,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return (b, n_q, d_out), or ``(out, weights)`` with weights (b, num_heads, n_q, n_kv).

        ``key_padding_mask``: bool (b, n_kv), True at padding positions of ``key_value`` (the keys
        no query may attend to), as in ``torch.nn.MultiheadAttention``; None when nothing is
        padded. Weights are taken after softmax and before dropout; each row sums to 1 over the
        real keys and is zero on padded ones; a query whose keys are all padding gets zero
        weights and a zero context vector (its output is ``out_proj.bias``).
        """
        self.begin_forward(query, key_padding_mask, return_weights, key_value=key_value)
        queries = split_heads(self.W_query(query), self.num_heads)  # (b, h, n_q, head_dim)
        keys = split_heads(self.W_key(key_value), self.num_heads)  # (b, h, n_kv, head_dim)
        values = split_heads(self.W_value(key_value), self.num_heads)  # (b, h, n_kv, head_dim)
        context_vec, attn_weights = attend(
            queries, keys, values, key_padding_mask=key_padding_mask, dropout=self.dropout
        )  # (b, h, n_q, head_dim), (b, h, n_q, n_kv); no causal mask
        out = self.out_proj(merge_heads(context_vec))  # (b, n_q, d_out)
        if not return_weights:
            return out
        assert attn_weights is not None  # the eager backend returns them
        return out, attn_weights

    def input_width(self, name: str) -> int:
        """``query`` is d_q wide, ``key_value`` d_kv (for ``begin_forward``'s checks)."""
        return self.d_kv if name == "key_value" else self.d_q

    def extra_repr(self) -> str:
        return (
            f"d_q={self.d_q}, d_kv={self.d_kv}, d_out={self.d_out}, "
            f"num_heads={self.num_heads}, head_dim={self.head_dim}"
        )
