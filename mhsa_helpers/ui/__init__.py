"""Everything a learner sees: heatmaps, widget plumbing and the lessons' explorers.

This subpackage imports matplotlib, seaborn and ipywidgets, so ``import mhsa_helpers`` does not
load it: it is imported on first use of one of its names (``mh.plot_attention``, ...).

* ``plotting`` -- seaborn heatmaps labelled with the tokens, and one fast grid for widgets;
* ``widgets`` -- a picture that re-draws in place under a set of controls;
* ``sentences`` -- the explorers' example sentences and toy embeddings;
* ``glossary`` -- the course glossary as one scrollable table (lesson 00);
* ``explorers`` -- one module per explorer (dropout, heads, attention, training).
"""

from .explorers import (
    ExplorerView,
    attention_explorer,
    dropout_explorer,
    heads_explorer,
    training_explorer,
)
from .glossary import glossary_table
from .plotting import figure_png, plot_attention, plot_attention_grid, plot_attention_heads

__all__ = [
    "ExplorerView",
    "attention_explorer",
    "dropout_explorer",
    "figure_png",
    "glossary_table",
    "heads_explorer",
    "plot_attention",
    "plot_attention_grid",
    "plot_attention_heads",
    "training_explorer",
]
