"""The lessons' interactive explorers: slide a value, watch the attention heatmaps change.

One module per explorer: ``dropout`` (lesson 04), ``heads`` (lesson 05), ``attention``
(lesson 07's heads/dropout/scale/sentence explorer) and ``training`` (lesson 08's train button).
Each returns an ``ipywidgets.interactive`` whose callback returns what it drew, so
``w.controls["name"].value = ...`` followed by ``w.result`` is testable without a browser.
"""

from .attention import ExplorerView, attention_explorer, explore_attention
from .dropout import dropout_explorer, dropout_weights
from .heads import heads_explorer, wrapper_head_weights
from .training import training_explorer

__all__ = [
    "ExplorerView",
    "attention_explorer",
    "dropout_explorer",
    "dropout_weights",
    "explore_attention",
    "heads_explorer",
    "training_explorer",
    "wrapper_head_weights",
]
