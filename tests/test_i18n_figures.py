"""Figures speak the lesson language: every figure of ``mh.figures`` and ``ui/plotting.py``.

* In Chinese (``using_language("zh")``) each figure's title (or suptitle) holds Chinese, every
  title, axis label and legend entry that is prose differs from the English one, and drawing the
  figure (Agg, to PNG) emits no warning: the course's CJK font draws the Chinese.
* In English nothing changes: no Chinese character anywhere (the English lessons' tests check
  the exact texts).
* Without the font package (``fonts._font_file`` returns None, the font taken out of matplotlib's
  list) a Chinese lesson's figures are the English ones, Chinese tokens become positions, and
  nothing warns.
* ``use_cjk_font`` is idempotent and cheap; Latin text keeps DejaVu Sans; ``find_cjk_font`` and
  ``char_axis`` find the registered font; the lm tables follow the language.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import matplotlib

from mhsa_helpers.i18n import display_width

matplotlib.use("Agg")

import matplotlib as mpl
import matplotlib.pyplot as plt
import pytest
import torch
from figure_checks import (
    DPI,
    _close_figures,  # noqa: F401 (autouse fixture)
    alt_text_problem,
    assert_legible,
    lay_out_shown,
)
from matplotlib import font_manager
from matplotlib.figure import Figure, SubFigure
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import lm
from mhsa_helpers.i18n import language, tr, using_language
from mhsa_helpers.ui import fonts
from mhsa_helpers.ui.alt_text import describe

CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
INPUTS = mh.book_inputs()  # (6, 3)
WORDS = mh.book_words()
CHINESE_WORDS = ["你的", "旅程", "从", "一步", "开始", "。"]


# -- every figure, built from small real tensors -------------------------------------------------


def _dot_products(tokens: list[str]) -> Figure:
    return mh.figures.plot_dot_products(INPUTS[1], INPUTS, tokens, query_index=1)


def _softmax_steps(tokens: list[str]) -> Figure:
    return mh.figures.plot_softmax_steps(INPUTS @ INPUTS[1], tokens)


def _weighted_sum(tokens: list[str]) -> Figure:
    weights = torch.softmax(INPUTS @ INPUTS[1], 0)
    return mh.figures.plot_weighted_sum(weights, INPUTS, tokens)


def _self_similarity(tokens: list[str]) -> Figure:
    return mh.figures.plot_self_similarity(INPUTS @ INPUTS.T, tokens)


def _qkv_projections(tokens: list[str]) -> Figure:
    generator = torch.Generator().manual_seed(123)
    w_query, w_key, w_value = (torch.rand(3, 2, generator=generator) for _ in range(3))
    return mh.figures.plot_qkv_projections(INPUTS, w_query, w_key, w_value, tokens)


def _scaling_effect(tokens: list[str]) -> Figure:
    return mh.figures.plot_scaling_effect(INPUTS @ INPUTS[1] * 8, 64, tokens)


def _causal_scores(tokens: list[str]) -> Figure:
    return mh.figures.plot_causal_scores(INPUTS @ INPUTS.T, tokens)


def _mask_paths(tokens: list[str]) -> Figure:
    return mh.figures.plot_mask_paths(INPUTS @ INPUTS.T / 2**0.5, tokens)


def _dropout_mask(tokens: list[str]) -> Figure:
    weights = torch.softmax(INPUTS @ INPUTS.T, -1)
    keep = torch.rand(6, 6, generator=torch.Generator().manual_seed(1)) > 0.5
    return mh.figures.plot_dropout_mask(weights, keep, 0.5, tokens)


def _dropout_scaling(tokens: list[str]) -> Figure:
    torch.manual_seed(0)
    samples = {p: nn.Dropout(p)(torch.ones(20, 36)) for p in (0.1, 0.5, 0.9)}
    return mh.figures.plot_dropout_scaling(samples)


def _heads_concat(tokens: list[str]) -> Figure:
    outs = [torch.randn(6, 2, generator=torch.Generator().manual_seed(i)) for i in range(2)]
    return mh.figures.plot_heads_concat(outs, tokens)


def _matmul_counts(tokens: list[str]) -> Figure:
    counts = {
        "wrapper": {1: {"linear": 3, "matmul": 2}, 2: {"linear": 6, "matmul": 4}},
        "split": {1: {"linear": 4, "matmul": 2}, 2: {"linear": 4, "matmul": 2}},
    }
    return mh.figures.plot_matmul_counts(counts)


def _head_split(tokens: list[str]) -> Figure:
    projection = torch.randn(6, 6, generator=torch.Generator().manual_seed(0))
    heads = mh.split_heads(projection[None], 3)[0]  # (h, T, head_dim)
    merged = mh.merge_heads(heads[None])[0]  # (T, d_out)
    return mh.figures.plot_head_split(projection, heads, merged, tokens)


def _wrapper_vs_split(tokens: list[str]) -> Figure:
    torch.manual_seed(123)
    wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2)
    split = mh.multihead_from_wrapper(wrapper)
    return mh.figures.plot_wrapper_vs_split(
        [head.W_query.weight for head in wrapper.heads], split.W_query.weight
    )


def _head_entropy(tokens: list[str]) -> Figure:
    return mh.figures.plot_head_entropy(
        torch.tensor([1.0960, 1.0965]), 1.0965, title=tr("two heads", "两个头")
    )


def _fused_qkv(tokens: list[str]) -> Figure:
    weight = torch.randn(12, 3, generator=torch.Generator().manual_seed(0))
    return mh.figures.plot_fused_qkv(weight, INPUTS @ weight.T)


def _attention_memory(tokens: list[str]) -> Figure:
    lengths = [32, 64, 128]
    return mh.figures.plot_attention_memory(lengths, [4 * t * t for t in lengths], lengths)


def _forward_times(tokens: list[str]) -> Figure:
    lengths = [32, 64, 128, 256]
    times = {
        "MultiHeadAttention": [0.2, 0.5, 1.6, 6.0],
        "SDPAMultiHeadAttention": [0.3, 0.4, 1.0, 3.1],
    }
    return mh.figures.plot_forward_times(lengths, times, title=tr("measured", "实测"))


def _precision_error(tokens: list[str]) -> Figure:
    reference = torch.randn(2, 6, 4, generator=torch.Generator().manual_seed(0))
    return mh.figures.plot_precision_error(reference, reference.bfloat16())


def _relative_position_scores(tokens: list[str]) -> Figure:
    positions = torch.arange(5)
    scores = -0.5 * (positions[:, None] - positions[None, :]).float()
    return mh.figures.plot_relative_position_scores(scores, title=tr("ALiBi", "ALiBi 线性偏置"))


def _cross_attention(tokens: list[str]) -> Figure:
    weights = torch.softmax(torch.randn(3, 6, generator=torch.Generator().manual_seed(0)), -1)
    return mh.figures.plot_cross_attention(weights, tokens[:3], tokens)


def _kv_cache_growth(tokens: list[str]) -> Figure:
    return mh.figures.plot_kv_cache_growth([4, 5, 6], [4, 5, 6], [4, 1, 1])


def _learned_alignment(tokens: list[str]) -> Figure:
    after = torch.eye(4).flip(-1) * 0.9 + 0.025  # (4, 4): most weight on the reversed position
    return mh.figures.plot_learned_alignment(torch.full((4, 4), 0.25), after, [3, 2, 1, 0])


def _gqa_sharing(tokens: list[str]) -> Figure:
    return mh.figures.plot_gqa_sharing(torch.arange(2).repeat_interleave(4))


def _padded_batch(tokens: list[str]) -> Figure:
    mask = torch.tensor([[False, False, False, True], [False, False, False, False]])
    return mh.figures.padded_batch([tokens[:3], tokens[:4]], mask)


def _padding_masks(tokens: list[str]) -> Figure:
    return mh.figures.padding_masks(torch.tensor([True, False, False, False]), tokens[:4])


def _transformer_block(tokens: list[str]) -> Figure:
    torch.manual_seed(0)
    return mh.figures.plot_transformer_block(lm.CharTransformer(20, 16, 8, 2, 2))


def _rhyme_attention(tokens: list[str]) -> Figure:
    poem = "\n床前明月光，疑是地上霜。\n举头望明月，低头思故乡。\n"
    scores = torch.randn(len(poem), len(poem), generator=torch.Generator().manual_seed(0))
    causal = torch.ones(len(poem), len(poem), dtype=torch.bool).tril()
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), -1)  # (T, T)
    return mh.figures.plot_rhyme_attention(weights, poem)


def _attention_heatmap(tokens: list[str]) -> Figure:
    return mh.plot_attention(torch.softmax(INPUTS @ INPUTS.T, -1), tokens)


def _attention_heads(tokens: list[str]) -> Figure:
    weights = torch.softmax(torch.randn(2, 6, 6, generator=torch.Generator().manual_seed(0)), -1)
    return mh.plot_attention_heads(weights, tokens, suptitle=tr("two heads", "两个头"))


def _attention_grid(tokens: list[str]) -> Figure:
    weights = torch.softmax(torch.randn(2, 6, 6, generator=torch.Generator().manual_seed(0)), -1)
    return mh.plot_attention_grid(weights, tokens, title=tr("two heads", "两个头"))


FIGURES: dict[str, Callable[[list[str]], Figure]] = {
    "plot_dot_products": _dot_products,
    "plot_softmax_steps": _softmax_steps,
    "plot_weighted_sum": _weighted_sum,
    "plot_self_similarity": _self_similarity,
    "plot_qkv_projections": _qkv_projections,
    "plot_scaling_effect": _scaling_effect,
    "plot_causal_scores": _causal_scores,
    "plot_mask_paths": _mask_paths,
    "plot_dropout_mask": _dropout_mask,
    "plot_dropout_scaling": _dropout_scaling,
    "plot_heads_concat": _heads_concat,
    "plot_matmul_counts": _matmul_counts,
    "plot_head_split": _head_split,
    "plot_wrapper_vs_split": _wrapper_vs_split,
    "plot_fused_qkv": _fused_qkv,
    "plot_head_entropy": _head_entropy,
    "plot_attention_memory": _attention_memory,
    "plot_forward_times": _forward_times,
    "plot_precision_error": _precision_error,
    "plot_relative_position_scores": _relative_position_scores,
    "plot_cross_attention": _cross_attention,
    "plot_kv_cache_growth": _kv_cache_growth,
    "plot_learned_alignment": _learned_alignment,
    "plot_gqa_sharing": _gqa_sharing,
    "padded_batch": _padded_batch,
    "padding_masks": _padding_masks,
    "plot_transformer_block": _transformer_block,
    "plot_rhyme_attention": _rhyme_attention,
    "plot_attention": _attention_heatmap,
    "plot_attention_heads": _attention_heads,
    "plot_attention_grid": _attention_grid,
}
# Figures that label tokens (the others ignore ``tokens``).
WITH_TOKENS = [
    name
    for name in FIGURES
    if name
    not in {
        "plot_dropout_scaling",
        "plot_matmul_counts",
        "plot_wrapper_vs_split",
        "plot_fused_qkv",
        "plot_head_entropy",
        "plot_attention_memory",
        "plot_forward_times",
        "plot_precision_error",
        "plot_relative_position_scores",
        "plot_kv_cache_growth",
        "plot_learned_alignment",
        "plot_gqa_sharing",
        "plot_transformer_block",
        "plot_rhyme_attention",
    }
]
# Figures that draw a poem's characters on their axes in both languages (an English reader needs
# them too): their titles, labels and legend are checked as the others, their ticks hold the poem.
POEM_FIGURES = {"plot_rhyme_attention"}
# English texts that are code or symbols, the same in both languages.
CODE = {
    "1. masked_fill(future, -inf)",
    "softmax: exp(-inf) = 0",
    "softmax(scores)",
    "softmax(scores / sqrt(64))",
    "num_heads",
    "head_dim",
    "d_in",
    "d_out",
    "MiB",
    "MultiHeadAttention",
    "SDPAMultiHeadAttention",
    "1 - p",
    "1 / (1 - p)",
    "torch.cat(dim=-1): (6, 2 x 2 = 4)",
    "qkv(x) (6, 12) = Q | K | V",
}


def test_every_figure_is_covered():
    assert set(mh.figures.__all__) - {"PAD"} <= set(FIGURES)
    assert len(FIGURES) >= 26


def _figures(fig: Figure) -> Iterator[Figure | SubFigure]:
    yield fig
    for sub in fig.subfigs:
        yield from _figures(sub)


def suptitles(fig: Figure) -> list[str]:
    return [f._suptitle.get_text() for f in _figures(fig) if f._suptitle is not None]


def titles(fig: Figure) -> list[str]:
    """The suptitles, then every axes' titles (left, centre, right), without empty ones."""
    axes_titles = [ax.get_title(loc) for ax in fig.axes for loc in ("left", "center", "right")]
    return [t for t in [*suptitles(fig), *axes_titles] if t]


def prose(fig: Figure) -> list[str]:
    """Titles, axis labels, legend entries and figure-level texts, in drawing order."""
    found = list(titles(fig))
    for ax in fig.axes:
        found += [ax.get_xlabel(), ax.get_ylabel()]
        legend = ax.get_legend()
        if legend is not None:
            found += [t.get_text() for t in legend.get_texts()]
    for f in _figures(fig):
        found += [t.get_text() for t in f.texts]
    return [t for t in found if t]


def drawn_text(fig: Figure) -> list[str]:
    """All the text of a figure just drawn: ``prose`` plus tick labels and ``ax.text``."""
    found = prose(fig)
    for ax in fig.axes:
        found += [t.get_text() for t in ax.get_xticklabels() + ax.get_yticklabels()]
        found += [t.get_text() for t in ax.texts]
    return found


def every_text(fig: Figure) -> list[str]:
    """All the text of the figure once drawn (``drawn_text`` after ``draw_silently``)."""
    draw_silently(fig)
    return drawn_text(fig)


def draw_silently(fig: Figure) -> float:
    """Lay the figure out as a lesson draws it (``figure_checks.lay_out_shown``: 80 dpi) with
    every warning an error (a missing glyph warns when its text is laid out); returns the width
    of the PNG a lesson would show, to measure legibility on."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return lay_out_shown(fig)


def build(name: str, lang: str, tokens: list[str] = WORDS) -> Figure:
    """The figure ``name`` in ``lang``, made as a lesson makes it: at ``setup_lesson``'s 80 dpi."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with using_language(lang), mpl.rc_context({"figure.dpi": DPI}):
            return FIGURES[name](list(tokens))


@pytest.fixture
def no_font_warnings(caplog):
    """Fail if matplotlib's font manager logs a warning (a family or a weight it cannot find)."""
    font_manager.fontManager._findfont_cached.cache_clear()  # look every font up again
    with caplog.at_level(logging.WARNING, logger="matplotlib.font_manager"):
        yield
    logged = [r.getMessage() for r in caplog.get_records("call") if r.name.startswith("matplotlib")]
    assert not logged


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_in_both_languages(name, caplog):
    """Each figure drawn once in English, once in Chinese (with Chinese tokens where it labels
    tokens):

    * English: no Chinese character anywhere;
    * Chinese: the title (or suptitle) holds Chinese, and every title, axis label and legend
      entry that is English prose (not code, a token or a symbol) is translated;
    * Chinese tokens are drawn with the CJK font (figures that label tokens);
    * every drawing emits no warning (a missing glyph warns, a font lookup that fails logs), and
      both languages are legible (tick labels >= 9 pt, >= 600 px wide at the lessons' 80 dpi);
    * both languages' alt text (``alt_text.describe``) says what the figure shows, in the
      lesson language (``figure_checks.alt_text_problem``).

    Without the font package: ``test_every_figure_without_the_font_package``.
    """
    font_manager.fontManager._findfont_cached.cache_clear()  # look every font up again
    with caplog.at_level(logging.WARNING, logger="matplotlib.font_manager"):
        _with_the_font(name)
    logged = [r.getMessage() for r in caplog.get_records("call") if r.name.startswith("matplotlib")]
    assert not logged, f"{name}: {logged}"


@pytest.mark.parametrize("name", FIGURES)
def test_every_figure_without_the_font_package(name):
    """Without the font package (``no_font_package``), the Chinese lesson's figure is the English
    one: the same titles, labels and legend (one that names a token shows the token's
    position), Chinese tokens become positions, no Chinese character is drawn, nothing warns and
    nothing is registered. (A test of its own: with ``test_every_figure_in_both_languages`` it
    took over 10 s for the largest figure.)"""
    english_text = _ENGLISH_TEXT.get(name) or every_text(build(name, "en"))
    english_prose = _ENGLISH_PROSE.get(name) or prose(build(name, "en"))
    tokens = CHINESE_WORDS if name in WITH_TOKENS else WORDS
    with no_font_package():
        assert fonts.cjk_font() is None
        assert fonts.find_cjk_font("旅程") is None  # no Chinese font left
        with using_language("zh"):
            fig = build(name, "zh", tokens)
        draw_silently(fig)
        drawn = drawn_text(fig)
        assert not [t for t in drawn if CJK.search(t)], drawn
        if name in WITH_TOKENS or name in POEM_FIGURES:  # the English prose (a token: position)
            shown = prose(fig)
            assert len(shown) == len(english_prose), (shown, english_prose)
            for zh, en in zip(shown, english_prose, strict=True):
                assert zh == en or any(word in en for word in WORDS), (zh, en)
        else:  # every text, tick labels too, is the English figure's once drawn
            assert drawn == english_text
        assert fonts.figure_text("key", "键") == "key" and language() == "en"
        assert list(mpl.rcParams["font.family"]) == ["sans-serif"]  # nothing was registered


def _with_the_font(name: str) -> list[str]:
    """The checks of ``test_every_figure_in_both_languages`` with the font package; returns
    the English figure's text."""
    english = build(name, "en")
    assert not (problem := alt_text_problem(describe(english), chinese=False)), (name, problem)
    width = draw_silently(english)
    english_text = prose(english) if name in POEM_FIGURES else drawn_text(english)
    assert not [t for t in english_text if CJK.search(t)], name
    assert_legible(name, english, width)

    chinese = build(name, "zh", CHINESE_WORDS if name in WITH_TOKENS else WORDS)
    with using_language("zh"):
        problem = alt_text_problem(describe(chinese), chinese=True)
    assert not problem, (name, problem)
    width = draw_silently(chinese)
    main = titles(chinese) or [chinese.axes[0].get_xlabel()]  # plot_attention: caller's title
    assert main[0], f"{name} has no title"
    assert CJK.search(main[0]), f"{name}: {main[0]!r}"
    en_prose, zh_prose = prose(english), prose(chinese)
    assert len(en_prose) == len(zh_prose), (en_prose, zh_prose)
    for en, zh in zip(en_prose, zh_prose, strict=True):
        if en in CODE or en in WORDS or re.match(r"W_\w+ \(", en):
            continue
        if re.search(r"[A-Za-z]{2,}", en):
            assert CJK.search(zh), f"{name}: {en!r} is not translated ({zh!r})"
    assert_legible(name, chinese, width)
    if name in WITH_TOKENS:  # the Chinese tokens, drawn with the CJK font
        assert any("旅程" in t for t in drawn_text(chinese)), name
    if name in POEM_FIGURES:  # the poem's characters, drawn with the CJK font in both
        assert any("床" in t for t in drawn_text(chinese)) and "床" in drawn_text(english), name
    _ENGLISH_TEXT[name] = drawn_text(english)
    _ENGLISH_PROSE[name] = en_prose
    return _ENGLISH_TEXT[name]


# The English figure's text once drawn, by figure: ``_with_the_font`` draws it anyway, and
# ``test_every_figure_without_the_font_package`` compares with it (``--dist loadfile`` runs both
# tests of a figure in one process; a figure not seen yet is built and drawn there).
_ENGLISH_TEXT: dict[str, list[str]] = {}
# Its titles, labels and legend (``prose``), likewise.
_ENGLISH_PROSE: dict[str, list[str]] = {}


def test_title_given_as_text_follows_the_language():
    weights = torch.softmax(INPUTS @ INPUTS.T, -1)
    title = tr("one head", "一个头")
    assert mh.plot_attention(weights, WORDS, title=title).axes[0].get_title() == "one head"
    with using_language("zh"):
        assert mh.plot_attention(weights, WORDS, title=title).axes[0].get_title() == "一个头"
        # a plain string stays as it is
        assert mh.plot_attention(weights, WORDS, title="raw").axes[0].get_title() == "raw"


def test_english_texts_stay_the_same():
    fig = build("plot_attention", "en")
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key (attended to)", "query (attending)")
    with using_language("zh"):
        fig = build("plot_attention", "zh")
    ax = fig.axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == (
        "键（被关注方）",
        "查询（关注方）",
    )
    assert build("plot_dot_products", "en").axes[0].get_title() == (
        "Query 'journey' scored against every key (one stacked part per feature)"
    )
    assert build("plot_dot_products", "zh").axes[0].get_title() == (
        "查询“journey”与每个键的分数（每个特征一段）"
    )


# -- the font ------------------------------------------------------------------------------------


def test_use_cjk_font_is_idempotent_and_keeps_dejavu_for_latin():
    with mpl.rc_context({"font.family": ["sans-serif"]}):
        assert fonts.use_cjk_font() == fonts.CJK_FAMILY
        family = list(mpl.rcParams["font.family"])
        count = len(font_manager.fontManager.ttflist)
        registered = fonts._register.cache_info().misses
        for _ in range(100):  # cheap: the font is looked for and registered once, not per call
            assert fonts.use_cjk_font() == fonts.CJK_FAMILY
        assert fonts._register.cache_info().misses == registered
        assert len(font_manager.fontManager.ttflist) == count
        assert list(mpl.rcParams["font.family"]) == family == ["DejaVu Sans", fonts.CJK_FAMILY]
        # Registering again after the cache is cleared adds no second copy of the font.
        fonts._register.cache_clear()
        assert fonts.use_cjk_font() == fonts.CJK_FAMILY
        assert len(font_manager.fontManager.ttflist) == count
        latin = font_manager.findfont(font_manager.FontProperties(family=family))
        assert Path(latin).name == "DejaVuSans.ttf"
        # The package's file, or the machine's own copy of the same family (Debian's
        # fonts-noto-cjk): matplotlib may pick either, and both draw the same glyphs.
        chinese = font_manager.findfont(fonts.CJK_FAMILY, fallback_to_default=False)
        assert font_manager.get_font(chinese).family_name == fonts.CJK_FAMILY
    assert fonts.cjk_font() == fonts.CJK_FAMILY


def test_chinese_text_falls_back_to_noto_without_warnings(no_font_warnings):
    with mpl.rc_context({"font.family": ["sans-serif"]}):
        fonts.use_cjk_font()
        fig, ax = plt.subplots()
        ax.set_title("注意力权重 attention（，。）")
        draw_silently(fig)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bold_and_italic_text_find_a_face_without_warnings(lang, no_font_warnings):
    fonts.use_cjk_font()
    fig, ax = plt.subplots()
    with using_language(lang):
        ax.set_title(fonts.figure_text("Bold title", "粗体标题"), weight="bold")
        ax.set_xlabel(fonts.figure_text("italic label", "斜体标签"), style="italic")
        ax.text(0.5, 0.5, "bold 粗", weight=700)
    draw_silently(fig)


def test_can_draw_and_token_labels():
    assert fonts.can_draw("journey é → ∑") and fonts.can_draw("床前明月光，\n")
    assert fonts.token_labels(["a", 1]) == ["a", "1"]
    assert fonts.token_labels(["床", "前"]) == ["床", "前"]


def test_find_cjk_font_finds_the_registered_font():
    assert lm.find_cjk_font("床前明月光") == fonts.CJK_FAMILY
    axis = lm.char_axis("\n床前明月光，")
    assert axis.font == fonts.CJK_FAMILY and axis.labels[1:] == list("床前明月光，")


def test_a_font_registered_later_is_found(monkeypatch):
    """The cached search is per font list: a None found before registering does not stick."""
    path = fonts._font_file()
    assert path is not None
    package = [e for e in font_manager.fontManager.ttflist if Path(e.fname) == path]
    others = without_chinese(font_manager.fontManager.ttflist)  # as on a machine with none
    monkeypatch.setattr(font_manager.fontManager, "ttflist", others)
    with monkeypatch.context() as patch:
        patch.setattr(fonts, "_font_file", lambda: None)
        fonts._clear_caches()
        assert lm.find_cjk_font("旅") is None
    fonts._clear_caches()
    others.extend(package)  # what addfont does: the same list, longer
    assert lm.find_cjk_font("旅") == fonts.CJK_FAMILY
    fonts._clear_caches()


# -- without the font package --------------------------------------------------------------------


@functools.cache
def _draws_chinese(fname: str) -> bool:
    try:
        return ord("旅") in font_manager.get_font(fname).get_charmap()
    except (OSError, RuntimeError):
        return False


def without_chinese(entries: list) -> list:
    """matplotlib's font entries less every font that can draw Chinese (the package's and the
    machine's own, e.g. Debian's fonts-noto-cjk, which CI installs for the browser test)."""
    return [e for e in entries if not _draws_chinese(e.fname)]


@contextlib.contextmanager
def no_font_package() -> Iterator[None]:
    """As if ``noto-cjk-sans-otc`` were not installed on a machine with no Chinese font: no
    file, and no font in matplotlib's list that can draw Chinese."""
    path = fonts._font_file()
    assert path is not None
    with pytest.MonkeyPatch.context() as monkeypatch:
        kept = without_chinese(font_manager.fontManager.ttflist)
        monkeypatch.setattr(font_manager.fontManager, "ttflist", kept)
        font_manager.fontManager._findfont_cached.cache_clear()
        monkeypatch.setattr(fonts, "_font_file", lambda: None)
        fonts._clear_caches()
        try:
            with mpl.rc_context({"font.family": ["sans-serif"]}):
                yield
        finally:
            fonts._clear_caches()
            font_manager.fontManager._findfont_cached.cache_clear()


@pytest.fixture
def without_font_package():
    with no_font_package():
        yield


def test_without_the_font_package_char_axis_uses_positions(without_font_package):
    assert fonts.find_cjk_font("旅程") is None  # the fixture left no Chinese font
    text = "\n床前明月光，"
    axis = lm.char_axis(text)
    assert axis.font is None and axis.labels == ["\\n", "1", "2", "3", "4", "5", ","]
    assert not fonts.can_draw("床") and fonts.token_labels(["床", "a"]) == ["1", "2"]
    with using_language("zh"):
        fig = mh.plot_attention(torch.eye(len(text)), axis.labels, title=tr("poem", "诗"))
    assert fig.axes[0].get_title() == "poem"
    draw_silently(fig)


# -- the char LM's printed tables ----------------------------------------------------------------


def test_char_table_and_head_focus_table_follow_the_language():
    text = "床前，\n"
    english = str(lm.char_table(text))
    with using_language("zh"):
        chinese = str(lm.char_table(text))
    assert english.splitlines()[0].split()[0] == "position"
    assert chinese.splitlines()[0].split() == ["位置", "0", "1", "2", "3"]
    assert chinese.splitlines()[1].split() == ["字符", "床", "前", "，", "\\n"]
    focus = lm.HeadFocus(torch.full((1, 2, 3), 0.25), torch.full((3,), 0.1))
    table = str(focus.table())
    assert not CJK.search(table) and table.splitlines()[-1].split()[0] == "uniform"
    with using_language("zh"):
        zh_table = str(focus.table())
    assert "前一个字符" in zh_table and "均匀注意力" in zh_table
    width = display_width  # the columns line up in Chinese too
    assert len({width(line) for line in zh_table.splitlines()}) == 1
    assert {width(line) for line in table.splitlines()} == {len(table.splitlines()[0])}
