"""Argument and input checks for the whole package (the base layer: it imports only torch/numpy).

Why a module of its own: every class and helper -- attention classes, plots, explorers, trainers,
the character model -- must reject bad input *before* any matmul, with a ``ValueError``/
``TypeError`` that names the parameter and the value. Writing those checks once keeps the messages
identical everywhere and keeps each ``forward`` short enough to read in a lesson.

The conventions, everywhere in the package: a number may be a Python or numpy scalar (as
``torch.nn.Linear`` allows) and comes back as a Python ``int``/``float``; a bool is never a number;
a flag must be a real ``bool``; a value outside its range raises ``ValueError`` naming the range.
"""

from __future__ import annotations

import math
import numbers
from typing import cast

import numpy as np
import torch

__all__ = [
    "as_float",
    "as_int",
    "autocast_accepts",
    "check_attention_inputs",
    "check_dropout",
    "check_finite",
    "check_flag",
    "check_heads",
    "check_input",
    "check_int_in_range",
    "check_key_padding_mask",
    "check_merge",
    "check_positive_int",
    "check_real_in_range",
    "check_seed",
    "check_split",
    "compute_dtype",
    "is_bool",
]


def is_bool(value: object) -> bool:
    """True for ``True``/``False`` and numpy's ``np.True_``/``np.False_`` (never a number here)."""
    return isinstance(value, (bool, np.bool_))


def as_int(name: str, value: object) -> int:
    """Return ``value`` as a Python int if it is an integer (``4``, ``np.int64(4)``), else raise.

    ``torch.nn.Linear`` accepts numpy integers, so every size here does too. Booleans
    (``True``, ``np.True_``) are rejected: ``True`` as a size is a mistake, not 1.
    """
    if is_bool(value) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {name}={value!r} ({type(value).__name__})")
    return int(value)


def as_float(name: str, value: object) -> float:
    """Return ``value`` as a Python float if it is a real number (int, float, numpy scalar).

    Booleans are rejected (``lr=True`` is a mistake, not 1.0); NaN and infinity are returned
    as they are, for the caller's range check to reject with its own message.
    """
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a number, got {name}={value!r} ({type(value).__name__})")
    return float(value)


def check_positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int if it is an integer >= 1, else raise naming ``name``."""
    value = as_int(name, value)
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {name}={value}")
    return value


def check_seed(name: str, value: object) -> int:
    """Return ``value`` as an int if ``torch.manual_seed`` can take it, else raise naming ``name``.

    torch seeds are 64-bit: from -2**63 to 2**64 - 1.
    """
    value = as_int(name, value)
    if not -(2**63) <= value < 2**64:
        raise ValueError(
            f"{name} must be in [-2**63, 2**64 - 1] (a 64-bit seed), got {name}={value}"
        )
    return value


def check_int_in_range(name: str, value: object, low: int, high: int) -> int:
    """Return ``value`` as an int if ``low <= value <= high``, else raise naming the range."""
    value = as_int(name, value)
    if not low <= value <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {name}={value}")
    return value


def check_real_in_range(name: str, value: object, low: float, high: float) -> float:
    """Return ``value`` as a float if ``low <= value <= high`` (NaN is outside), else raise."""
    number = as_float(name, value)
    if not low <= number <= high:
        raise ValueError(f"{name} must be in [{low}, {high}], got {name}={value!r}")
    return number


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
    if is_bool(value) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a float in [0, 1), got {value!r} ({type(value).__name__})")
    value = float(value)
    if not (0.0 <= value < 1.0) or math.isnan(value):
        raise ValueError(f"{name} must be in [0, 1), got {name}={value}")
    return value


def check_heads(d_out: object, num_heads: object) -> int:
    """Check ``num_heads`` >= 1 and ``d_out % num_heads == 0``; return ``head_dim``."""
    d_out = check_positive_int("d_out", d_out)
    num_heads = check_positive_int("num_heads", num_heads)
    if d_out % num_heads != 0:
        raise ValueError(
            f"d_out must be divisible by num_heads, got d_out={d_out}, num_heads={num_heads} "
            f"(d_out % num_heads = {d_out % num_heads})"
        )
    return d_out // num_heads


def check_split(x: object, num_heads: object) -> None:
    """Check that ``x`` (b, T, width) can be split into ``num_heads`` heads of equal width.

    Metadata only (no host synchronisation), so ``split_heads`` can call it on every forward.
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if isinstance(num_heads, int) and not isinstance(num_heads, bool) and num_heads >= 1:
        heads = num_heads  # the common case, kept free of extra calls under torch.compile
    else:
        heads = check_positive_int("num_heads", num_heads)
    if x.dim() != 3:
        raise ValueError(f"x must have shape (b, T, width), got x.shape={tuple(x.shape)}")
    if x.shape[-1] % heads != 0:
        raise ValueError(
            f"the width of x must be divisible by num_heads, got x.shape={tuple(x.shape)}, "
            f"num_heads={heads} (width % num_heads = {x.shape[-1] % heads})"
        )


def check_merge(x: object) -> None:
    """Check that ``x`` is a (b, num_heads, T, head_dim) tensor, for ``merge_heads``."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"x must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != 4:
        raise ValueError(
            f"x must have shape (b, num_heads, T, head_dim), got x.shape={tuple(x.shape)}"
        )


def check_attention_inputs(
    queries: object,
    keys: object,
    values: object,
    mask: object,
    dropout: object,
    key_padding_mask: object = None,
) -> torch.Tensor | None:
    """Check the arguments of ``masked_attention`` (metadata only, before any matmul).

    ``queries`` (..., T_q, d_k), ``keys`` (..., T_k, d_k) and ``values`` (..., T_k, d_v) are
    floating-point tensors of one dtype whose leading dimensions broadcast; ``mask`` is None or
    bool, broadcastable to (T_q, T_k); ``dropout`` is None or callable (an ``nn.Dropout``);
    ``key_padding_mask`` is None or bool (b, T_k) -- (T_k,) for unbatched (T, d) inputs -- as
    ``check_key_padding_mask`` checks it. Returns the key padding mask.
    """
    named = {"queries": queries, "keys": keys, "values": values}
    for name, t in named.items():
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
        if not t.is_floating_point():
            raise TypeError(f"{name} must have a floating-point dtype, got {name}.dtype={t.dtype}")
        if t.dim() < 2:
            raise ValueError(
                f"{name} must have at least 2 dimensions (..., num_tokens, dim), "
                f"got {name}.shape={tuple(t.shape)}"
            )
    q, k, v = (cast(torch.Tensor, t) for t in (queries, keys, values))
    mixed = k.dtype != q.dtype or v.dtype != q.dtype
    if mixed and not all(autocast_accepts(t) for t in (q, k, v)):  # autocast casts them itself
        raise TypeError(
            f"queries, keys and values must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}"
        )
    if q.shape[-1] < 1:
        raise ValueError(
            f"queries and keys must have a last dimension d_k >= 1 (the scores are divided by "
            f"sqrt(d_k)), got queries.shape={tuple(q.shape)}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries and keys must have the same last dimension d_k, got "
            f"queries.shape={tuple(q.shape)}, keys.shape={tuple(k.shape)}"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"keys and values must hold the same number of tokens, got "
            f"keys.shape={tuple(k.shape)}, values.shape={tuple(v.shape)}"
        )
    try:
        lead = torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except RuntimeError:
        raise ValueError(
            "the leading (batch, head) dimensions of queries, keys and values must broadcast, "
            f"got queries.shape={tuple(q.shape)}, keys.shape={tuple(k.shape)}, "
            f"values.shape={tuple(v.shape)}"
        ) from None
    if mask is not None:
        if not isinstance(mask, torch.Tensor):
            raise TypeError(f"mask must be a bool torch.Tensor or None, got {type(mask).__name__}")
        if mask.dtype != torch.bool:
            raise TypeError(
                f"mask must have dtype torch.bool (True where attention is forbidden), "
                f"got mask.dtype={mask.dtype}"
            )
        try:
            torch.broadcast_shapes(mask.shape, (*lead, q.shape[-2], k.shape[-2]))
        except RuntimeError:
            raise ValueError(
                f"mask must broadcast to (T_q, T_k) = {(q.shape[-2], k.shape[-2])}, "
                f"got mask.shape={tuple(mask.shape)}"
            ) from None
    if dropout is not None and not callable(dropout):
        raise TypeError(f"dropout must be an nn.Dropout or None, got {type(dropout).__name__}")
    return check_key_padding_mask(
        key_padding_mask,
        num_keys=k.shape[-2],
        batch=lead[0] if lead else None,
        device=q.device,
    )


def autocast_accepts(x: torch.Tensor) -> bool:
    """True when ``torch.autocast`` is on for ``x``'s device and will cast ``x`` for the matmuls.

    Inside ``torch.autocast("cpu", dtype=torch.bfloat16)`` a float32 layer returns bfloat16, so
    the next layer receives bfloat16 while its parameters are float32; autocast casts both
    operands of every matmul, so that input is fine. Autocast never casts float64.
    """
    device_type = x.device.type
    try:
        enabled = torch.is_autocast_enabled(device_type)
    except (RuntimeError, TypeError):  # a device type autocast does not know
        return False
    return enabled and x.dtype != torch.float64


def compute_dtype(x: torch.Tensor, param_dtype: torch.dtype) -> torch.dtype:
    """The dtype a layer's matmuls produce from input ``x``: what its keys and values will be.

    Inside ``torch.autocast`` that casts ``x`` (see ``autocast_accepts``), autocast's dtype (e.g.
    bfloat16); otherwise the parameters' dtype. A ``KVCache`` stores keys of this dtype.
    """
    if autocast_accepts(x):
        return torch.get_autocast_dtype(x.device.type)
    return param_dtype


def check_input(
    x: object,
    *,
    d_in: int,
    ndim: int | tuple[int, ...],
    context_length: int | None = None,
    dtype: torch.dtype | None = None,
    device: torch.device | None = None,
    finite: bool = False,
    name: str = "x",
) -> torch.Tensor:
    """Validate an attention input tensor and return it unchanged.

    Checks, in this order: it is a tensor, its dtype is floating point, (when ``dtype`` is
    given) the dtype equals the module's parameter dtype -- or ``torch.autocast`` is on for its
    device and will cast it --, (when ``device`` is given) it is on the parameters' device, it
    has ``ndim`` dimensions (one value or a tuple of allowed values), the last dimension is
    ``d_in``, the token dimension (second to last) is at least 1 and at most
    ``context_length``, and (when ``finite``) every value is finite.

    The finite check reads the tensor on the host (one synchronisation), so the production
    classes skip it; it is also skipped while ``torch.compile`` traces the module and for meta
    tensors (shapes without values, for working out output shapes).
    """
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if not x.is_floating_point():
        raise TypeError(
            f"{name} must have a floating-point dtype (float32, float64, bfloat16, float16), "
            f"got {name}.dtype={x.dtype}; token ids must go through an embedding first"
        )
    if dtype is not None and x.dtype != dtype and not autocast_accepts(x):
        raise TypeError(
            f"{name}.dtype={x.dtype} does not match the module's parameters ({dtype}); "
            f"convert one of them, e.g. module.to({dtype}) or {name}.to({dtype})"
        )
    if device is not None and x.device != device:
        raise ValueError(
            f"{name} is on {x.device} but the module's parameters are on {device}; move one of "
            f"them, e.g. {name}.to({str(device)!r})"
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
    if finite and not x.is_meta and not torch.compiler.is_compiling():
        check_finite(x, name=name)
    return x


def check_finite(x: torch.Tensor, *, name: str = "x") -> None:
    """Raise ``ValueError`` naming the first (batch, token) position of ``x`` that holds NaN/inf.

    ``x`` is (..., num_tokens, width). One NaN would otherwise spread silently: every query that
    attends to that token gets a NaN output (and in a causal layer, every later one).
    """
    bad = ~torch.isfinite(x.detach())  # (..., T, width)
    if not bool(bad.any()):
        return
    bad_tokens = bad.any(dim=-1)  # (..., T)
    first = [int(i) for i in bad_tokens.nonzero()[0]]  # index of the first bad token
    value = float(x.detach()[tuple(first)][bad[tuple(first)]][0])
    *batch, token = first
    where = f"token {token}"
    if batch:
        where = f"batch {', '.join(map(str, batch))}, {where}"
    raise ValueError(
        f"{name} has a non-finite value ({value}) at {where} ({name}.shape={tuple(x.shape)}); "
        "one NaN or inf would make the output of every query that sees it NaN"
    )


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
