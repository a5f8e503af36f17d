"""``TinyAttentionLM``: the smallest language model that needs its attention heads.

Token embedding + position embedding, one causal ``MultiHeadAttention`` block, and a linear LM
head: ids (b, T) -> logits (b, T, vocab_size). No feed-forward block, no residual connection, no
layer norm: every prediction has to flow through the attention heads, which is what lessons 07 and
08 want to look at.
"""

from __future__ import annotations

import torch
from torch import nn

from ..attention.multihead import MultiHeadAttention
from ..validation import check_dropout, check_flag, check_positive_int

__all__ = ["TinyAttentionLM"]


class TinyAttentionLM(nn.Module):
    """ids (b, T) -> logits (b, T, vocab_size) through one causal multi-head attention block.

    Layers, created in this order (so a seed gives the same model every time):
    ``tok_emb`` (vocab_size, d_model), ``pos_emb`` (context_length, d_model),
    ``attn`` = ``MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)``,
    ``lm_head`` = ``Linear(d_model, vocab_size)``.

    ``forward`` does no host synchronisation, so a training step never waits for the device: the
    attention block's NaN check is off (``attn.check_finite = False``; embeddings of valid ids are
    finite), and token ids are range-checked only for CPU tensors outside ``torch.compile``. On
    a GPU, an id outside [0, vocab_size) trips a device-side assert inside ``nn.Embedding``;
    ``model.check_ids(ids, check_values=True)`` checks them explicitly (one synchronisation).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int,
        context_length: int,
        num_heads: int,
        dropout: float = 0.0,
    ):
        super().__init__()
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.d_model = check_positive_int("d_model", d_model)
        self.context_length = check_positive_int("context_length", context_length)
        self.num_heads = check_positive_int("num_heads", num_heads)
        dropout = check_dropout(dropout)
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads, got d_model={self.d_model}, "
                f"num_heads={self.num_heads} (d_model % num_heads = "
                f"{self.d_model % self.num_heads})"
            )
        d_model, context_length = self.d_model, self.context_length
        self.tok_emb = nn.Embedding(self.vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.attn = MultiHeadAttention(d_model, d_model, context_length, dropout, self.num_heads)
        self.attn.check_finite = False  # no host sync per step; see the class docstring
        self.lm_head = nn.Linear(d_model, self.vocab_size)

    @property
    def head_dim(self) -> int:
        return self.attn.head_dim

    def check_ids(self, ids: object, *, check_values: bool | None = None) -> torch.Tensor:
        """Raise ``TypeError``/``ValueError`` for anything that is not a valid (b, T) id tensor.

        The dtype and shape checks read only metadata. ``check_values`` also checks that every id
        lies in [0, vocab_size), which reads the tensor (a host synchronisation on a GPU); the
        default (None) does it only for CPU tensors and never while ``torch.compile`` traces.
        """
        if not isinstance(ids, torch.Tensor):
            raise TypeError(f"ids must be a torch.Tensor of token ids, got {type(ids).__name__}")
        if ids.dtype not in (torch.long, torch.int32):
            raise TypeError(
                f"ids must have an integer dtype an embedding takes (torch.long or torch.int32), "
                f"got ids.dtype={ids.dtype}; "
                "pass token ids, not embeddings"
            )
        if ids.device != self.tok_emb.weight.device:
            raise ValueError(
                f"ids is on {ids.device} but the model is on {self.tok_emb.weight.device}; "
                f"move one of them, e.g. ids.to({str(self.tok_emb.weight.device)!r})"
            )
        if ids.dim() != 2:
            raise ValueError(
                f"ids must have shape (batch, num_tokens), got ids.shape={tuple(ids.shape)}"
            )
        num_tokens = ids.shape[1]
        if num_tokens < 1:
            raise ValueError(f"ids must hold at least one token, got ids.shape={tuple(ids.shape)}")
        if num_tokens > self.context_length:
            raise ValueError(
                f"ids has {num_tokens} tokens, more than context_length={self.context_length} "
                f"(ids.shape={tuple(ids.shape)})"
            )
        if check_values is None:
            check_values = ids.device.type == "cpu" and not torch.compiler.is_compiling()
        if check_values and ids.numel():
            low, high = int(ids.min()), int(ids.max())
            if low < 0 or high >= self.vocab_size:
                raise ValueError(
                    f"token ids must be in [0, {self.vocab_size}) (vocab_size={self.vocab_size}), "
                    f"got ids from {low} to {high}"
                )
        return ids

    def forward(
        self, ids: torch.Tensor, return_weights: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return logits (b, T, vocab_size), or ``(logits, weights)`` with weights (b, h, T, T)."""
        check_flag("return_weights", return_weights)
        self.check_ids(ids)
        positions = torch.arange(ids.shape[1], device=ids.device)  # (T,)
        x = self.tok_emb(ids) + self.pos_emb(positions)  # (b, T, d_model)
        out, weights = self.attn(x, return_weights=True)  # (b, T, d_model), (b, h, T, T)
        logits = self.lm_head(out)  # (b, T, vocab_size)
        return (logits, weights) if return_weights else logits

    def extra_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, d_model={self.d_model}, "
            f"context_length={self.context_length}, num_heads={self.num_heads}, "
            f"head_dim={self.head_dim}"
        )
