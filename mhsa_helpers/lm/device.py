"""Where lesson 12's model trains and writes: ``check_device(device)``.

The CPU is the default everywhere (the course's saved outputs were made there); CUDA and Apple's
MPS are accepted when this machine has them, and another device gives other last digits.
"""

from __future__ import annotations

import torch

__all__ = ["check_device"]


def check_device(device: object) -> torch.device:
    """``device`` as a ``torch.device`` if torch knows it and it is present, else raise."""
    if not isinstance(device, (str, torch.device)):
        raise TypeError(f"device must be a str or torch.device, got {type(device).__name__}")
    try:
        device = torch.device(device)
    except RuntimeError as err:
        raise ValueError(f"device={device!r} is not a device torch knows ({err})") from None
    present = {
        "cpu": True,
        "cuda": torch.cuda.is_available(),
        "mps": torch.backends.mps.is_available(),
    }
    if not present.get(device.type, False):
        raise ValueError(f"device={str(device)!r} is not available on this machine")
    return device
