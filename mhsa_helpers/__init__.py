"""mhsa_helpers -- the final classes and helpers of the course
"Multi-Head Self-Attention, step by step" (多头自注意力，一步一步).

Lessons build each class inline, then check that it equals the class exported here, so the
lesson code and the package never drift apart. Names follow the book: ``W_query``, ``W_key``,
``W_value``, ``out_proj``, ``context_length``, ``num_heads``, ``head_dim``, ``d_in``, ``d_out``.

Where each idea lives:

* ``validation`` -- the argument checks every other module uses (the base layer);
* ``attention/`` -- the attention classes (torch only), on one functional core;
* ``layers/`` and ``blocks`` -- RoPE, RMSNorm, SwiGLU and the modern decoder block (lesson 13);
* ``training/`` -- a tiny attention LM, toy tasks, the training loop;
* ``lm/`` -- a small character-level Transformer that learns the Tang 300 and writes (lesson 12);
* ``inspection`` -- numbers that summarise heads (entropy, attention at an offset);
* ``ui/`` -- heatmaps, widgets and the explorers (matplotlib, seaborn, ipywidgets);
* ``exercises/`` -- the lessons' checkers;
* ``i18n`` -- the lesson language (English / 简体中文) and bilingual texts: ``tr``, ``say``,
  ``pad``;
* ``tables`` -- ``show_table``: tables that line up in JupyterLab (HTML) and as text, in both
  languages;
* ``data`` -- the book's example and the glossary, shipped inside the package;
* ``lesson`` and ``checks`` -- deterministic notebook settings and the lessons' closing checks.

``import mhsa_helpers`` loads only torch: the names from ``ui``, ``training``, ``lm`` and
``exercises`` are imported the first time they are used. One table, ``_PUBLIC`` (name -> the
module that defines it), gives the names loaded at once (from the modules in ``_EAGER``), the
names loaded on first use (the rest) and ``__all__``.
"""

import os as _os
from importlib import import_module as _import_module
from importlib import metadata as _metadata

# One order of additions in MKL's matrix products on every processor, asked for before any of the
# package's modules (or a lesson) does its first product; a value set before import is kept.
# Why, and what it costs: mhsa_helpers.lesson.reproducible_math. Benchmarks set MKL_CBWR=AUTO.
_os.environ.setdefault("MKL_CBWR", "COMPATIBLE")

# Every public name -> the module (relative to this package) that defines it.
_PUBLIC = {
    # attention classes and their functional core (torch only)
    "SelfAttentionV1": ".attention",
    "SelfAttentionV2": ".attention",
    "CausalAttention": ".attention",
    "MultiHeadAttentionWrapper": ".attention",
    "MultiHeadAttention": ".attention",
    "multihead_from_wrapper": ".attention",
    "FusedQKVMultiHeadAttention": ".attention",
    "SDPAMultiHeadAttention": ".attention",
    "CrossMultiHeadAttention": ".attention",
    "GroupedQueryAttention": ".attention",
    "KVCache": ".attention",
    "ModernAttention": ".attention",
    "causal_mask": ".attention",
    "masked_attention": ".attention",
    "split_heads": ".attention",
    "merge_heads": ".attention",
    # the parts of today's open models (RoPE, RMSNorm, SwiGLU) and their decoder block
    "RotaryEmbedding": ".layers",
    "apply_rotary_pos_emb": ".layers",
    "apply_rotary_interleaved": ".layers",
    "interleaved_to_half": ".layers",
    "rope_cos_sin": ".layers",
    "rotate_half": ".layers",
    "RMSNorm": ".layers",
    "SwiGLU": ".layers",
    "swiglu_hidden_dim": ".layers",
    "ModernDecoderLayer": ".blocks",
    # head metrics, lesson data, language, notebook settings and checks
    "head_entropy": ".inspection",
    "offset_attention": ".inspection",
    "Journey": ".data",
    "book_inputs": ".data",
    "book_words": ".data",
    "load_glossary": ".data",
    "load_journey": ".data",
    "reference": ".data",
    "Text": ".i18n",
    "language": ".i18n",
    "pad": ".i18n",
    "say": ".i18n",
    "set_language": ".i18n",
    "tr": ".i18n",
    "Table": ".tables",
    "show_table": ".tables",
    "setup_lesson": ".lesson",
    "CountMatmuls": ".checks",
    "assert_same_module": ".checks",
    # plots and widgets (matplotlib, seaborn, ipywidgets: loaded on first use)
    "ExplorerView": ".ui",
    "attention_explorer": ".ui",
    "dropout_explorer": ".ui",
    "heads_explorer": ".ui",
    "training_explorer": ".ui",
    "glossary_table": ".ui",
    "plot_attention": ".ui",
    "plot_attention_grid": ".ui",
    "plot_attention_heads": ".ui",
    # lesson 08's tiny model and tasks, lesson 12's character model
    "TinyAttentionLM": ".training",
    "TrainingResult": ".training",
    "train_repeat_task": ".training",
    "train_shift_task": ".training",
    "CharTokenizer": ".lm",
    "CharTransformer": ".lm",
}
# Modules that need only torch: their names are loaded with the package.
_EAGER = (
    ".attention",
    ".layers",
    ".blocks",
    ".inspection",
    ".data",
    ".i18n",
    ".tables",
    ".lesson",
    ".checks",
)
# Subpackages reachable as attributes (``mh.ui``, ``mh.lm`` ...); ``mh.figures`` is ``ui.figures``.
_SUBPACKAGES = {
    name: f".{name}" for name in ("attention", "exercises", "layers", "lm", "training", "ui")
}
_SUBPACKAGES["figures"] = ".ui.figures"

__all__ = sorted(_PUBLIC)

for _name, _module in _PUBLIC.items():
    if _module in _EAGER:
        globals()[_name] = getattr(_import_module(_module, __name__), _name)
del _name, _module

try:
    __version__ = _metadata.version("mhsa_helpers")
except _metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"


def __getattr__(name: str) -> object:
    """Load a lazy name (or a subpackage) the first time it is used."""
    if name in _PUBLIC:
        value = getattr(_import_module(_PUBLIC[name], __name__), name)
        globals()[name] = value
        return value
    if name in _SUBPACKAGES:
        return _import_module(_SUBPACKAGES[name], __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC, *_SUBPACKAGES})
