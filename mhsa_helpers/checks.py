"""Checks the lessons run: the inline class equals the package's class; counting matmuls.

Why a helper: lessons 02, 04, 05, 06 and 12 each prove that a class the lesson typed inline
computes exactly what ``mhsa_helpers`` computes. The proof is the same every time -- same
parameter names, equal parameters, bit-identical outputs in eval mode and, with the same seed,
in training mode (so dropout draws the same mask) -- so it is written once, here.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from .i18n import say
from .validation import check_seed

__all__ = ["CountMatmuls", "assert_same_module"]


def assert_same_module(
    ours: nn.Module, reference: nn.Module, *inputs: torch.Tensor, seed: int = 1
) -> str:
    """Assert that ``ours`` and ``reference`` are the same function, bit for bit.

    Checks, raising ``AssertionError`` naming what differs: the same ``state_dict`` keys in the
    same order; every parameter ``torch.equal``; outputs on ``inputs`` ``torch.equal`` in eval
    mode and in training mode after ``torch.manual_seed(seed)`` for each. Both modules are left
    in eval mode. Returns a one-line confirmation to print.
    """
    for name, module in (("ours", ours), ("reference", reference)):
        if not isinstance(module, nn.Module):
            raise TypeError(f"{name} must be an nn.Module, got {type(module).__name__}")
    if not inputs or not all(isinstance(x, torch.Tensor) for x in inputs):
        raise TypeError(
            "inputs must be one or more torch.Tensors to run both modules on, got "
            f"{[type(x).__name__ for x in inputs]}"
        )
    seed = check_seed("seed", seed)
    ours_keys, reference_keys = list(ours.state_dict()), list(reference.state_dict())
    assert ours_keys == reference_keys, f"state_dict keys differ: {ours_keys} vs {reference_keys}"
    for (name, p_ours), (_, p_ref) in zip(ours.named_parameters(), reference.named_parameters()):
        assert torch.equal(p_ours, p_ref), f"parameter {name} differs"
    for training in (False, True):
        ours.train(training)
        reference.train(training)
        torch.manual_seed(seed)
        out_ours = ours(*inputs)
        torch.manual_seed(seed)
        out_ref = reference(*inputs)
        mode = "train" if training else "eval"
        assert torch.equal(out_ours, out_ref), f"outputs differ in {mode} mode"
    ours.eval()
    reference.eval()
    mine, name = type(ours).__name__, type(reference).__name__
    return say(
        f"inline {mine} == mhsa_helpers.{name} (same parameters; eval and train mode)",
        f"课内的 {mine} == mhsa_helpers.{name}（参数相同，eval 和 train 模式都一样）",
    )


class CountMatmuls(TorchFunctionMode):
    """Count matrix multiplications: ``nn.Linear`` calls ("linear") and ``@`` ("matmul").

    A ``TorchFunctionMode`` sees every torch function called inside its ``with`` block, so
    lessons 05 and 06 can count the products a forward pass makes instead of guessing::

        with mh.CountMatmuls() as counter:
            module(x)
        counter.counts  # {"linear": ..., "matmul": ...}
    """

    def __init__(self):
        super().__init__()
        self.counts = {"linear": 0, "matmul": 0}

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", "")
        if name in self.counts:
            self.counts[name] += 1
        return func(*args, **(kwargs or {}))
