"""Rotary position embeddings (旋转位置编码, RoPE; Su et al., 2021), as in Hugging Face's Llama.

GPT-2 *adds* a learned vector per position to each token. RoPE instead *rotates* each query and
key: the features are taken in pairs, and pair i of the token at position m is turned by the angle
``m * theta_i``, with ``theta_i = base ** (-2 i / head_dim)`` (one fast pair, the others slower
and slower). A rotation keeps lengths, and two rotations subtract in a dot product, so

    rotate(q, m) . rotate(k, n)  depends on m and n only through the offset m - n.

RoPE acts on the queries and keys after the projections, before the scores, and never on the
values.

Pairing conventions. Hugging Face's Llama and Qwen pair feature i with feature i + head_dim / 2
(``rotate_half``): ``x * cos + rotate_half(x) * sin``. The original RoPE code (and Meta's Llama)
pairs neighbours (2 i, 2 i + 1) -- ``apply_rotary_interleaved``. The two are the same function up
to a permutation of the features, ``interleaved_to_half`` (so up to a permutation of the rows of
``W_query``/``W_key``): checkpoints are converted that way.

The tables. ``rope_cos_sin`` computes cos and sin for any positions (float32, Hugging Face's
order of operations, so the tables are bit for bit theirs). ``RotaryEmbedding`` computes them
once for every position up to its ``max_position_embeddings`` and slices them on each call; with a
KV cache the new tokens start at ``offset = len(cache)``, their true positions.
"""

from __future__ import annotations

import torch
from torch import nn

from ..validation import as_int, check_positive_int, check_real_in_range

__all__ = [
    "RotaryEmbedding",
    "apply_rotary_interleaved",
    "apply_rotary_pos_emb",
    "interleaved_to_half",
    "rope_cos_sin",
    "rotate_half",
]


def check_head_dim(head_dim: object) -> int:
    """``head_dim`` as an int, positive and even (RoPE rotates pairs), else raise naming it."""
    head_dim = check_positive_int("head_dim", head_dim)
    if head_dim % 2:
        raise ValueError(f"head_dim must be even (RoPE rotates pairs of features), got {head_dim}")
    return head_dim


def rope_cos_sin(
    positions: torch.Tensor, head_dim: int, base: float = 10000.0
) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of ``positions[t] * theta_i``, float32 (T, head_dim), rotate-half layout.

    ``theta_i = base ** (-2 i / head_dim)`` for i < head_dim / 2; the second half of each row
    repeats the first (feature i and feature i + head_dim / 2 form pair i). ``positions``: an
    integer tensor (T,). ``base`` is Hugging Face's ``rope_theta`` (Llama 2: 10,000; Qwen3: 10**6).
    """
    head_dim = check_head_dim(head_dim)
    base = check_real_in_range("base", base, 1.0 + 1e-9, float("inf"))
    if not isinstance(positions, torch.Tensor) or positions.dim() != 1:
        raise ValueError(f"positions must be a 1-D tensor, got {positions!r}")
    if positions.is_floating_point() or positions.is_complex() or positions.dtype == torch.bool:
        raise TypeError(f"positions must be an integer tensor, got dtype {positions.dtype}")
    steps = torch.arange(0, head_dim, 2, dtype=torch.int64, device=positions.device).float()
    inv_freq = 1.0 / (base ** (steps / head_dim))  # (head_dim / 2,): theta_i
    freqs = positions[:, None].float() * inv_freq  # (T, head_dim / 2): m * theta_i
    angles = torch.cat((freqs, freqs), dim=-1)  # (T, head_dim)
    return angles.cos(), angles.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """(..., d) -> (..., d): halves (x1, x2) become (-x2, x1), as Hugging Face's ``rotate_half``."""
    x1 = x[..., : x.shape[-1] // 2]  # (..., d / 2)
    x2 = x[..., x.shape[-1] // 2 :]  # (..., d / 2)
    return torch.cat((-x2, x1), dim=-1)  # (..., d)


def apply_rotary_pos_emb(
    q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotate queries and keys (b, h, T, head_dim) by cos/sin (T, head_dim): the RoPE step.

    cos/sin may also be (b, 1, T, head_dim): one row of positions per sequence.

    ``x * cos + rotate_half(x) * sin``: pair (x_i, x_{i + d/2}) turns by its angle. The values
    are not passed: RoPE never touches them.
    """
    q_embed = q * cos + rotate_half(q) * sin  # (b, h, T, head_dim)
    k_embed = k * cos + rotate_half(k) * sin  # (b, h_kv, T, head_dim)
    return q_embed, k_embed


def apply_rotary_interleaved(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """RoPE with neighbouring pairs (x_{2i}, x_{2i+1}) -- the original paper's convention.

    ``cos``/``sin`` are the rotate-half tables (T, head_dim) of ``rope_cos_sin``; their first half
    holds the angles. Equal to the rotate-half convention up to ``interleaved_to_half``::

        apply_rotary_interleaved(x, cos, sin)[..., perm] == x[..., perm] * cos + rotate_half(...)
    """
    half = x.shape[-1] // 2
    cos_i = cos[..., :half].repeat_interleave(2, dim=-1)  # (T, head_dim): c0 c0 c1 c1 ...
    sin_i = sin[..., :half].repeat_interleave(2, dim=-1)  # (T, head_dim)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, head_dim / 2) each
    turned = torch.stack((-odd, even), dim=-1).flatten(-2)  # (..., T, head_dim): -x1 x0 -x3 x2
    return x * cos_i + turned * sin_i  # (..., T, head_dim)


def interleaved_to_half(head_dim: int) -> torch.Tensor:
    """The permutation (head_dim,) from interleaved pairs to rotate-half pairs: 0 2 4 .. 1 3 5 ..

    ``x_half = x_interleaved[..., perm]``; applied to the rows of each head of ``W_query`` and
    ``W_key`` it converts a checkpoint from one convention to the other.
    """
    head_dim = check_head_dim(head_dim)
    return torch.cat((torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)))


class RotaryEmbedding(nn.Module):
    """The cos/sin tables of RoPE, computed once for ``max_position_embeddings`` positions.

    Args:
        head_dim: the width of one head (even).
        max_position_embeddings: how many positions the tables cover (the context length).
        base: Hugging Face's ``rope_theta``.

    ``rope(x, offset=0)`` returns cos and sin (T, head_dim) in ``x.dtype`` for the T tokens of
    ``x`` (..., T, head_dim) at positions ``offset .. offset + T - 1``: a slice of the tables,
    no trigonometry. The tables are buffers that follow ``.to(device)`` but are not saved in the
    ``state_dict`` (they are recomputed, not learned).
    """

    cos_cached: torch.Tensor  # (max_position_embeddings, head_dim), float32
    sin_cached: torch.Tensor  # (max_position_embeddings, head_dim), float32

    def __init__(self, head_dim: int, max_position_embeddings: int, base: float = 10000.0):
        super().__init__()
        self.head_dim = check_head_dim(head_dim)
        self.max_position_embeddings = check_positive_int(
            "max_position_embeddings", max_position_embeddings
        )
        self.base = check_real_in_range("base", base, 1.0 + 1e-9, float("inf"))
        cos, sin = rope_cos_sin(
            torch.arange(self.max_position_embeddings), self.head_dim, self.base
        )  # (max_position_embeddings, head_dim) twice
        self.register_buffer("cos_cached", cos, persistent=False)
        self.register_buffer("sin_cached", sin, persistent=False)

    def forward(
        self, x: torch.Tensor, offset: int = 0, position_ids: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """cos, sin (T, head_dim) in ``x.dtype`` for positions ``offset .. offset + T - 1``.

        ``position_ids`` (b, T), integers: each row's own positions instead (padded batches);
        cos and sin are then (b, 1, T, head_dim), broadcasting over the heads.
        """
        if not isinstance(x, torch.Tensor) or x.dim() < 2:
            raise ValueError(f"x must be a tensor (..., T, head_dim), got {x!r}")
        num_tokens = x.shape[-2]
        if position_ids is not None:
            if not isinstance(position_ids, torch.Tensor) or position_ids.dim() != 2:
                raise ValueError(f"position_ids must be a (b, T) tensor, got {position_ids!r}")
            if position_ids.shape[-1] != num_tokens or position_ids.is_floating_point():
                raise ValueError(
                    f"position_ids must be integers (b, T={num_tokens}), got "
                    f"shape {tuple(position_ids.shape)}, dtype {position_ids.dtype}"
                )
            if position_ids.numel() and (
                int(position_ids.min()) < 0
                or int(position_ids.max()) >= self.max_position_embeddings
            ):
                raise ValueError(
                    "position_ids must lie in [0, max_position_embeddings="
                    f"{self.max_position_embeddings}), got {position_ids.tolist()}"
                )
            cos = self.cos_cached[position_ids].to(dtype=x.dtype)  # (b, T, head_dim)
            sin = self.sin_cached[position_ids].to(dtype=x.dtype)  # (b, T, head_dim)
            return cos.unsqueeze(1), sin.unsqueeze(1)  # (b, 1, T, head_dim) twice
        offset = as_int("offset", offset)
        if offset < 0 or offset + num_tokens > self.max_position_embeddings:
            raise ValueError(
                f"positions offset={offset} .. {offset + num_tokens - 1} are outside the "
                f"tables' max_position_embeddings={self.max_position_embeddings}"
            )
        end = offset + num_tokens
        cos = self.cos_cached[offset:end].to(dtype=x.dtype)  # (T, head_dim)
        sin = self.sin_cached[offset:end].to(dtype=x.dtype)  # (T, head_dim)
        return cos, sin

    def extra_repr(self) -> str:
        return (
            f"head_dim={self.head_dim}, max_position_embeddings={self.max_position_embeddings}, "
            f"base={self.base}"
        )
