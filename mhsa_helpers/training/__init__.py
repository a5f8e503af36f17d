"""Training: a tiny attention-only model, two toy tasks and the loop (lesson 08).

* ``model`` -- ``TinyAttentionLM``;
* ``tasks`` -- ``make_repeat_batch``, ``make_shift_batch`` (seeded batch generators);
* ``loop`` -- ``train`` and the lesson's ``train_repeat_task`` / ``train_shift_task``.

The head metric the lesson measures, ``offset_attention`` (the weight each head puts ``k`` tokens
back), lives with the other head metrics in ``mhsa_helpers.inspection``; it is re-exported here.
"""

from ..inspection import offset_attention
from .loop import TrainingConfig, TrainingResult, train, train_repeat_task, train_shift_task
from .model import TinyAttentionLM
from .tasks import IGNORE_INDEX, make_repeat_batch, make_shift_batch

__all__ = [
    "IGNORE_INDEX",
    "TinyAttentionLM",
    "TrainingConfig",
    "TrainingResult",
    "make_repeat_batch",
    "make_shift_batch",
    "offset_attention",
    "train",
    "train_repeat_task",
    "train_shift_task",
]
