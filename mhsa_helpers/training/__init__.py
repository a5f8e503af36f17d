"""Training: a tiny attention-only model, two toy tasks, the loop and a head metric (lesson 08).

* ``model`` -- ``TinyAttentionLM``;
* ``tasks`` -- ``make_repeat_batch``, ``make_shift_batch`` (seeded batch generators);
* ``loop`` -- ``train`` and the lesson's ``train_repeat_task`` / ``train_shift_task``;
* ``metrics`` -- ``offset_attention``, the weight each head puts ``k`` tokens back.
"""

from .loop import TrainingConfig, TrainingResult, train, train_repeat_task, train_shift_task
from .metrics import offset_attention
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
