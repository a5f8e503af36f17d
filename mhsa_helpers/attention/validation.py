"""Argument and input checks shared by every attention class.

Why a module of its own: each class must reject bad input *before* any matmul, with a
``ValueError``/``TypeError`` that names the parameter and the value. Writing those checks once
keeps the messages identical across classes and keeps ``forward`` short enough to read in a lesson.
"""

from __future__ import annotations

import math

import torch

__all__ = [
    "check_dropout",
    "check_flag",
    "check_forward_options",
    "check_heads",
    "check_input",
    "check_key_padding_mask",
    "check_positive_int",
]


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` if it is an int >= 1, else raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {name}={value}")
    return value


def check_flag(name: str, value: object) -> bool:
    """Return ``value`` if it is a real bool; anything else (``"False"``, 0, None) raises.

    A string such as ``"False"`` is truthy, so accepting it would silently mean True.
    """
    if not isinstance(value, bool):
        raise TypeError(
            f"{name} must be True or False, got {name}={value!r} ({type(value).__name__})"
        )
    return value


def check_dropout(value: object, name: str = "dropout") -> float:
    """Return ``value`` as a float if it is a probability in [0, 1), else raise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a float in [0, 1), got {value!r} ({type(value).__name__})")
    value = float(value)
    if not (0.0 <= value < 1.0) or math.isnan(value):
        raise ValueError(f"{name} must be in [0, 1), got {name}={value}")
    return value


def check_heads(d_out: int, num_heads: int) -> int:
    """Check ``num_heads`` >= 1 and ``d_out % num_heads == 0``; return ``head_dim``."""
    check_positive_int("d_out", d_out)
    check_positive_int("num_heads", num_heads)
    if d_out % num_heads != 0:
        raise ValueError(
            f"d_out must be divisible by num_heads, got d_out={d_out}, num_heads={num_heads} "
            f"(d_out % num_heads = {d_out % num_heads})"
        )
    return d_out // num_heads


def check_input(
    x: object,
    *,
    d_in: int,
    ndim: int | tuple[int, ...],
    context_length: int | None = None,
    dtype: torch.dtype | None = None,
    name: str = "x",
) -> torch.Tensor:
    """Validate an attention input tensor and return it unchanged.

    Checks, in this order: it is a tensor, its dtype is floating point, it has ``ndim``
    dimensions (one value or a tuple of allowed values), the last dimension is ``d_in``, and the
    token dimension (second to last) is at least 1 and at most ``context_length``, and (when
    ``dtype`` is given) the dtype equals the module's parameter dtype.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype (float32, float64, bfloat16, float16), "
            f"got {name}.dtype={x.dtype}; token ids must go through an embedding first"
        )
    if dtype is not None and x.dtype != dtype:
        raise TypeError(
            f"{name}.dtype={x.dtype} does not match the module's parameters ({dtype}); "
            f"convert one of them, e.g. module.to({dtype}) or {name}.to({dtype})"
        )
    allowed = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if x.dim() not in allowed:
        shapes = " or ".join(_shape_name(n) for n in allowed)
        raise ValueError(
            f"{name} must have {' or '.join(map(str, allowed))} dimensions {shapes}, "
            f"got {name}.shape={tuple(x.shape)}"
        )
    if x.shape[-1] != d_in:
        raise ValueError(
            f"last dimension of {name} must equal d_in={d_in}, got {name}.shape={tuple(x.shape)}"
        )
    num_tokens = x.shape[-2]
    if num_tokens < 1:
        raise ValueError(f"{name} must hold at least one token, got {name}.shape={tuple(x.shape)}")
    if context_length is not None and num_tokens > context_length:
        raise ValueError(
            f"{name} has {num_tokens} tokens, more than context_length={context_length} "
            f"({name}.shape={tuple(x.shape)})"
        )
    return x


def _shape_name(ndim: int) -> str:
    return {2: "(num_tokens, d_in)", 3: "(batch, num_tokens, d_in)"}.get(ndim, f"({ndim}-D)")


def check_key_padding_mask(
    key_padding_mask: object,
    *,
    num_keys: int,
    batch: int | None,
    device: torch.device | None = None,
    name: str = "key_padding_mask",
) -> torch.Tensor | None:
    """Validate a key padding mask and return it unchanged (None passes through).

    A key padding mask is a bool tensor, True at padding positions (the keys no query may see),
    as in ``torch.nn.MultiheadAttention``: shape (batch, num_keys), or (num_keys,) when the input
    is unbatched (``batch=None``). Other dtypes are rejected rather than guessed: a float mask
    could be additive, and a Hugging Face ``attention_mask`` uses the opposite convention (1 = real
    token; pass ``attention_mask == 0``).
    """
    if key_padding_mask is None:
        return None
    if not isinstance(key_padding_mask, torch.Tensor):
        raise TypeError(
            f"{name} must be a bool torch.Tensor (True at padding positions) or None, "
            f"got {type(key_padding_mask).__name__}"
        )
    if key_padding_mask.dtype != torch.bool:
        raise TypeError(
            f"{name} must have dtype torch.bool (True at padding positions), got "
            f"{name}.dtype={key_padding_mask.dtype}; from lengths use "
            f"torch.arange(T) >= lengths[:, None], from a 1 = real token mask use mask == 0"
        )
    expected = (num_keys,) if batch is None else (batch, num_keys)
    if tuple(key_padding_mask.shape) != expected:
        what = "(num_keys,)" if batch is None else "(batch, num_keys)"
        raise ValueError(
            f"{name} must have shape {what} = {expected}, got "
            f"{name}.shape={tuple(key_padding_mask.shape)}"
        )
    if device is not None and key_padding_mask.device != device:
        raise ValueError(f"{name} is on {key_padding_mask.device} but the input is on {device}")
    return key_padding_mask


def check_forward_options(
    x: torch.Tensor, key_padding_mask: object, return_weights: object
) -> torch.Tensor | None:
    """The keyword arguments every self-attention ``forward`` shares; return the padding mask.

    ``return_weights`` must be a real bool; ``key_padding_mask`` must be None or bool
    (b, num_tokens) for batched ``x`` (b, num_tokens, d_in), (num_tokens,) for unbatched ``x``.
    Call it after ``check_input(x)``.
    """
    check_flag("return_weights", return_weights)
    return check_key_padding_mask(
        key_padding_mask,
        num_keys=x.shape[-2],
        batch=x.shape[0] if x.dim() == 3 else None,
        device=x.device,
    )
