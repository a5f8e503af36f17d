"""``CharTransformer``: a small GPT-style character model built on the course's attention.

Three classes, one idea each (the layout of nanoGPT's model.py):

* ``FeedForward`` -- the position-wise feed-forward network (前馈网络);
* ``TransformerBlock`` -- layer norm -> ``MultiHeadAttention`` -> residual, layer norm ->
  feed-forward -> residual (a pre-norm Transformer block, Transformer 块);
* ``CharTransformer`` -- token and position embeddings, ``num_layers`` blocks, a final layer norm
  and the LM head: ids (b, T) -> logits (b, T, vocab_size).

The attention inside is ``mhsa_helpers.MultiHeadAttention`` of lesson 06, unchanged; with one
``KVCache`` per block (``model.new_caches()``), the model generates one token at a time without
recomputing the past.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from ..attention.kv_cache import KVCache
from ..attention.modern import ModernAttention
from ..attention.multihead import MultiHeadAttention
from ..validation import check_dropout, check_flag, check_positive_int

__all__ = ["BlockParts", "CharTransformer", "FeedForward", "TransformerBlock"]


class FeedForward(nn.Module):
    """Linear (d_model -> hidden) -> GELU -> Linear (hidden -> d_model) -> dropout.

    Attention only *mixes* the vectors of different positions (a weighted average); this small
    network then transforms each position's vector on its own, which is where most of a
    Transformer's parameters and much of its "knowledge" live.
    """

    def __init__(self, d_model: int, hidden: int, dropout: float = 0.0):
        super().__init__()
        self.fc_in = nn.Linear(d_model, hidden)
        self.act = nn.GELU()
        self.fc_out = nn.Linear(hidden, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(b, T, d_model) -> (b, T, d_model), each position separately."""
        return self.dropout(self.fc_out(self.act(self.fc_in(x))))  # (b, T, d_model)


@dataclass(frozen=True)
class BlockParts:
    """Which parts a ``TransformerBlock`` has (all by default; lesson 12's ablation removes some).

    ``feed_forward`` -- the ``FeedForward`` after attention; ``residual`` -- the two additions
    ``x + ...``; ``layer_norm`` -- ``ln_1``, ``ln_2`` and the model's ``ln_f`` (``nn.Identity``
    when off); ``rope`` -- rotary positions (lesson 13's ``ModernAttention``: RoPE on each
    head's queries and keys, no biases) instead of the model's learned ``pos_emb`` (off by default).
    """

    feed_forward: bool = True
    residual: bool = True
    layer_norm: bool = True
    rope: bool = False

    def __post_init__(self) -> None:
        for name in ("feed_forward", "residual", "layer_norm", "rope"):
            check_flag(name, getattr(self, name))


class TransformerBlock(nn.Module):
    """``x + attn(ln_1(x))``, then ``x + ff(ln_2(x))``: (b, T, d_model) -> (b, T, d_model).

    * ``ln_1``, ``ln_2`` -- layer norm (层归一化): each position's vector is rescaled to mean 0 and
      variance 1 (then a learned scale and shift), which keeps the numbers in a range where
      training is stable however many blocks are stacked;
    * ``attn`` -- the course's causal ``MultiHeadAttention(d_model, d_model, context_length,
      dropout, num_heads)``;
    * the two additions are residual connections (残差连接): each sub-layer only adds a correction
      to its input, so the signal and the gradient also have a direct path through the block.
    """

    def __init__(
        self,
        d_model: int,
        context_length: int,
        num_heads: int,
        dropout: float = 0.0,
        ff_hidden: int | None = None,
        *,
        parts: BlockParts | None = None,
    ):
        super().__init__()
        hidden = 4 * d_model if ff_hidden is None else check_positive_int("ff_hidden", ff_hidden)
        self.parts = BlockParts() if parts is None else parts
        norm = nn.LayerNorm if self.parts.layer_norm else nn.Identity
        self.ln_1 = norm(d_model)
        self.attn: MultiHeadAttention | ModernAttention
        if self.parts.rope:  # rotary positions: lesson 13's attention, one K/V head per head
            self.attn = ModernAttention(
                d_model, context_length, num_heads, num_heads, dropout=dropout
            )
        else:
            self.attn = MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.ln_2 = norm(d_model)
        self.ff = FeedForward(d_model, hidden, dropout) if self.parts.feed_forward else None

    def forward(
        self,
        x: torch.Tensor,
        *,
        return_weights: bool = False,
        cache: KVCache | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return (b, T, d_model), or ``(out, weights)`` with weights (b, num_heads, T, T_k)."""
        if return_weights:
            attended, weights = self.attn(self.ln_1(x), return_weights=True, cache=cache)
        else:  # no weights asked: a fused attention (SDPA) may skip the (T, T) matrix
            attended, weights = self.attn(self.ln_1(x), cache=cache), None
        x = x + attended if self.parts.residual else attended  # (b, T, d_model)
        if self.ff is not None:
            fed = self.ff(self.ln_2(x))  # (b, T, d_model)
            x = x + fed if self.parts.residual else fed  # (b, T, d_model)
        return (x, weights) if return_weights else x


class CharTransformer(nn.Module):
    """ids (b, T) -> logits (b, T, vocab_size): a decoder-only Transformer for characters.

    Layers, created in this order (so a seed gives the same model every time):

    * ``tok_emb`` -- token embedding (词元嵌入), ``Embedding(vocab_size, d_model)``: one learned
      vector per character;
    * ``pos_emb`` -- learned positional embedding (位置嵌入), ``Embedding(context_length,
      d_model)``: one learned vector per position, added to the token's, since attention by
      itself does not know the order of its inputs (None with ``parts.rope``: the attention then
      rotates queries and keys by their positions instead);
    * ``blocks`` -- ``num_layers`` ``TransformerBlock`` s;
    * ``ln_f`` -- a final layer norm;
    * ``lm_head`` -- ``Linear(d_model, vocab_size, bias=False)``, one score (logit) per possible
      next character. Its weight *is* ``tok_emb.weight`` (weight tying, as in GPT-2): reading a
      character and writing it use the same vectors, which saves vocab_size * d_model parameters.

    Weights start as in GPT-2 (normal, standard deviation 0.02; biases 0), so the untrained model
    guesses almost uniformly: its loss starts near log(vocab_size).
    """

    def __init__(
        self,
        vocab_size: int,
        d_model: int = 128,
        context_length: int = 128,
        num_heads: int = 4,
        num_layers: int = 3,
        dropout: float = 0.0,
        *,
        parts: BlockParts | None = None,
    ):
        super().__init__()
        self.vocab_size = check_positive_int("vocab_size", vocab_size)
        self.d_model = check_positive_int("d_model", d_model)
        self.context_length = check_positive_int("context_length", context_length)
        self.num_heads = check_positive_int("num_heads", num_heads)
        self.num_layers = check_positive_int("num_layers", num_layers)
        self.dropout_rate = check_dropout(dropout)
        if parts is not None and not isinstance(parts, BlockParts):
            raise TypeError(f"parts must be a BlockParts or None, got {type(parts).__name__}")
        self.parts = BlockParts() if parts is None else parts
        if d_model % num_heads:
            raise ValueError(
                f"d_model must be divisible by num_heads, got d_model={d_model}, "
                f"num_heads={num_heads} (d_model % num_heads = {d_model % num_heads})"
            )
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = None if self.parts.rope else nn.Embedding(context_length, d_model)
        self.blocks = nn.ModuleList(
            [
                TransformerBlock(d_model, context_length, num_heads, dropout, parts=self.parts)
                for _ in range(num_layers)
            ]
        )
        self.ln_f = nn.LayerNorm(d_model) if self.parts.layer_norm else nn.Identity()
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.apply(self._init_weights)
        self.lm_head.weight = self.tok_emb.weight  # weight tying

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    @property
    def head_dim(self) -> int:
        return self.d_model // self.num_heads

    def num_parameters(self) -> int:
        """Number of learned numbers (the tied LM head counted once)."""
        return sum(p.numel() for p in self.parameters())

    def new_caches(self) -> list[KVCache]:
        """One empty ``KVCache`` per block, for ``forward(ids, caches=...)``."""
        return [KVCache(self.context_length) for _ in self.blocks]

    def check_ids(self, ids: object, offset: int = 0, *, name: str = "ids") -> torch.Tensor:
        """Raise ``TypeError``/``ValueError`` unless ``ids`` is a valid (b, T) id tensor.

        ``name`` is the argument the caller passed (``generate`` checks its ``prompt``).
        """
        if not isinstance(ids, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor of token ids, got {type(ids).__name__}")
        if ids.dtype not in (torch.long, torch.int32):
            raise TypeError(
                f"{name} must have an integer dtype an embedding takes (torch.long or "
                f"torch.int32), got {name}.dtype={ids.dtype}"
            )
        if ids.device != self.tok_emb.weight.device:
            raise ValueError(
                f"{name} is on {ids.device} but the model is on {self.tok_emb.weight.device}; "
                f"move one of them, e.g. {name}.to({str(self.tok_emb.weight.device)!r})"
            )
        if ids.dim() != 2 or ids.shape[1] < 1:
            raise ValueError(
                f"{name} must have shape (batch, num_tokens) with num_tokens >= 1, "
                f"got {name}.shape={tuple(ids.shape)}"
            )
        if offset + ids.shape[1] > self.context_length:
            cached = f" after {offset} cached tokens" if offset else ""
            raise ValueError(
                f"{name} has {ids.shape[1]} tokens{cached}, more than context_length="
                f"{self.context_length} ({name}.shape={tuple(ids.shape)})"
            )
        if int(ids.min()) < 0 or int(ids.max()) >= self.vocab_size:
            raise ValueError(
                f"token ids ({name}) must be in [0, {self.vocab_size}), got values from "
                f"{int(ids.min())} to {int(ids.max())}"
            )
        return ids

    def _check_caches(self, caches: object) -> int:
        """Return the number of cached tokens (the position of the first new token)."""
        if not isinstance(caches, Sequence) or len(caches) != self.num_layers:
            raise TypeError(
                f"caches must be a list of {self.num_layers} KVCache (one per block; "
                f"model.new_caches()), got {type(caches).__name__}"
            )
        if not all(isinstance(c, KVCache) for c in caches):
            raise TypeError("caches must hold KVCache objects only (model.new_caches())")
        lengths = {len(c) for c in caches}
        if len(lengths) != 1:
            raise ValueError(f"the caches hold different numbers of tokens: {sorted(lengths)}")
        return lengths.pop()

    def forward(
        self,
        ids: torch.Tensor,
        *,
        return_weights: bool = False,
        caches: list[KVCache] | None = None,
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Return logits (b, T, vocab_size), or ``(logits, weights)``.

        ``weights`` (b, num_layers, num_heads, T, T_k) are every block's attention weights.
        With ``caches`` (one ``KVCache`` per block), ``ids`` are the *next* tokens, at positions
        ``len(cache) ..``; they attend to every cached token too (T_k = cached + T).
        """
        check_flag("return_weights", return_weights)
        offset = 0 if caches is None else self._check_caches(caches)
        self.check_ids(ids, offset)
        x = self.tok_emb(ids)  # (b, T, d_model)
        if self.pos_emb is not None:
            positions = torch.arange(offset, offset + ids.shape[1], device=ids.device)  # (T,)
            x = x + self.pos_emb(positions)  # (b, T, d_model)
        all_weights = []
        for i, block in enumerate(self.blocks):
            cache = None if caches is None else caches[i]
            if return_weights:
                x, weights = block(x, return_weights=True, cache=cache)  # (b, h, T, T_k)
                all_weights.append(weights)
            else:
                x = block(x, cache=cache)  # (b, T, d_model)
        logits = self.lm_head(self.ln_f(x))  # (b, T, vocab_size)
        if not return_weights:
            return logits
        return logits, torch.stack(all_weights, dim=1)  # (b, num_layers, h, T, T_k)

    def extra_repr(self) -> str:
        return (
            f"vocab_size={self.vocab_size}, d_model={self.d_model}, "
            f"context_length={self.context_length}, num_heads={self.num_heads}, "
            f"num_layers={self.num_layers}, head_dim={self.head_dim}"
        )
