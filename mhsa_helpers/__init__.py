"""mhsa_helpers -- the final classes and helpers of the course
"Multi-Head Self-Attention, step by step" (多头自注意力，一步一步).

Lessons build each class inline, then check that it equals the class exported here, so the
lesson code and the package never drift apart. Names follow the book: ``W_query``, ``W_key``,
``W_value``, ``out_proj``, ``context_length``, ``num_heads``, ``head_dim``, ``d_in``, ``d_out``.

Where each idea lives:

* ``attention/`` -- the attention classes (torch only), on one functional core;
* ``training/`` -- a tiny attention LM, toy tasks, the training loop, a head metric;
* ``lm/`` -- a small character-level Transformer that learns the Tang 300 and writes (lesson 12);
* ``inspection`` -- numbers that summarise heads (entropy);
* ``ui/`` -- heatmaps, widgets and the explorers (matplotlib, seaborn, ipywidgets);
* ``exercises/`` -- the lessons' checkers;
* ``i18n`` -- the lesson language (English / 简体中文) and bilingual texts: ``tr``, ``say``;
* ``data`` -- the book's example and the glossary, shipped inside the package;
* ``lesson`` and ``checks`` -- deterministic notebook settings and the lessons' closing checks.

``import mhsa_helpers`` loads only torch: the names from ``ui``, ``training``, ``lm`` and
``exercises`` are imported the first time they are used.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version

from .attention import (
    CausalAttention,
    CrossMultiHeadAttention,
    FusedQKVMultiHeadAttention,
    GroupedQueryAttention,
    KVCache,
    MultiHeadAttention,
    MultiHeadAttentionWrapper,
    SDPAMultiHeadAttention,
    SelfAttentionV1,
    SelfAttentionV2,
    causal_attention,
    causal_mask,
    masked_attention,
    merge_heads,
    multihead_from_wrapper,
    split_heads,
)
from .checks import CountMatmuls, assert_same_module
from .data import Journey, book_inputs, book_words, load_glossary, load_journey, reference
from .i18n import Text, language, say, set_language, tr
from .inspection import head_entropy
from .lesson import setup_lesson

try:
    __version__ = version("mhsa_helpers")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

# Imported on first use (name -> module), so that scripts and tests that only need the
# attention classes never load matplotlib, seaborn, pandas or ipywidgets (torch itself may load
# tqdm, through torch.hub).
_LAZY = {
    "ExplorerView": ".ui",
    "attention_explorer": ".ui",
    "dropout_explorer": ".ui",
    "heads_explorer": ".ui",
    "training_explorer": ".ui",
    "glossary_table": ".ui",
    "plot_attention": ".ui",
    "plot_attention_grid": ".ui",
    "plot_attention_heads": ".ui",
    "TinyAttentionLM": ".training",
    "TrainingResult": ".training",
    "offset_attention": ".training",
    "train_repeat_task": ".training",
    "train_shift_task": ".training",
    "CharTokenizer": ".lm",
    "CharTransformer": ".lm",
}
_SUBPACKAGES = ("attention", "exercises", "lm", "training", "ui")
# ``mh.figures`` is the conceptual figures of the lessons (``ui.figures``).
_ALIASES = {"figures": ".ui.figures"}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    if name in _ALIASES:
        return importlib.import_module(_ALIASES[name], __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBPACKAGES, *_ALIASES})


__all__ = [
    "CausalAttention",
    "CharTokenizer",
    "CharTransformer",
    "CountMatmuls",
    "CrossMultiHeadAttention",
    "ExplorerView",
    "FusedQKVMultiHeadAttention",
    "GroupedQueryAttention",
    "Journey",
    "KVCache",
    "MultiHeadAttention",
    "MultiHeadAttentionWrapper",
    "SDPAMultiHeadAttention",
    "SelfAttentionV1",
    "SelfAttentionV2",
    "Text",
    "TinyAttentionLM",
    "TrainingResult",
    "assert_same_module",
    "attention_explorer",
    "book_inputs",
    "book_words",
    "causal_attention",
    "causal_mask",
    "dropout_explorer",
    "glossary_table",
    "head_entropy",
    "heads_explorer",
    "language",
    "load_glossary",
    "load_journey",
    "masked_attention",
    "merge_heads",
    "multihead_from_wrapper",
    "offset_attention",
    "plot_attention",
    "plot_attention_grid",
    "plot_attention_heads",
    "reference",
    "say",
    "set_language",
    "setup_lesson",
    "split_heads",
    "tr",
    "train_repeat_task",
    "train_shift_task",
    "training_explorer",
]
