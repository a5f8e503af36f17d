# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 00 · Start here — Multi-Head Self-Attention, step by step (多头自注意力，一步一步)
#
# 中文版 / Chinese edition: [notebooks/zh/00_start_here.ipynb](zh/00_start_here.ipynb) — the same
# lessons and the same code in Simplified Chinese. Pick the edition you read more easily; both
# print the same numbers.
#
# This course takes you from a plain **dot product** (点积) to the **multi-head attention**
# (多头注意力) block that GPT models run, one small step per lesson. Every lesson is a notebook you
# run top to bottom; every number it prints is checked by CI, and most of them match the numbers
# printed in *Build a Large Language Model (From Scratch)*, chapter 3 (the book uses
# `torch.manual_seed(123)` and `(789)`; so do we).
#
# **Goals of this notebook**
# 1. Check that your environment works: torch, the device, plotting, interactive widgets.
# 2. See the lesson map, the conventions every lesson follows and the glossary of terms.
#
# **Time:** about 20 minutes (reading, running 8 code cells; the rule follows).
#
# **How the times are estimated.** Every lesson states its time in its opening, and the lesson map
# below lists them. All come from one rule applied to the lesson's English text: minutes = prose
# words / 120 + 1.5 per code cell + 3 per prediction + 8 per exercise + 20 per build-it exercise
# (writing a class or function), rounded to the nearest 5. It assumes a careful first reading that
# runs every cell and tries everything; `tools/lesson_times.py` computes the times and writes them
# into every lesson, this map and the README. Take longer where an idea is new to you.
#
# **Prerequisites** (what the lessons use without teaching it; one evening of reading each if it
# is new to you):
# * **Python**: functions, classes, loops, list comprehensions.
# * **Linear algebra**: vectors, the dot product (点积), matrix products and the transpose.
# * **PyTorch basics**: tensors and their shapes, `@`, indexing and broadcasting; `nn.Module`,
#   `nn.Parameter` and `nn.Linear` (lesson 02 builds on them).
# * **Autograd** (自动求导): `requires_grad=True`, `loss.backward()` and `.grad`. Lesson 02 uses
#   it to show why the scores are scaled and to check that gradients reach every weight.
# * **Training a model**: the **cross-entropy loss** (交叉熵损失) of a next-token prediction, the
#   **Adam** optimizer (Adam 优化器) and a training loop (`zero_grad`, `backward`, `step`).
#   Lesson 08 (training a tiny model) and the lessons that train after it use them; lesson 08
#   recaps the loop, but not the theory.
#
# The PyTorch tutorial "Learn the Basics" (pytorch.org/tutorials) covers the last three.
#
# **Shape contract:** the book's example `journey.inputs` is `(T, d_in) = (6, 3)`: six tokens,
# three features each.

# %% [markdown]
# ## The lesson map
#
# | # | notebook | you build | key idea | time |
# |---|---|---|---|---|
# | 01 | [`01_simplified_self_attention`](01_simplified_self_attention.ipynb) | your own scores, softmax and context vectors; your own stable row softmax | attention = weighted average | 95 min |
# | 02 | [`02_trainable_qkv`](02_trainable_qkv.ipynb) | your own `SelfAttentionV2` (the book's `SelfAttentionV1` is shown) | queries, keys, values (查询、键、值) | 90 min |
# | 03 | [`03_causal_attention`](03_causal_attention.ipynb) | your own causal weights, also with a sliding window | no peeking at the future (因果注意力); a weighted average of the past | 85 min |
# | 04 | [`04_dropout`](04_dropout.ipynb) | your own `CausalAttention`; dropout on context vectors by hand | dropout on attention weights (随机失活) | 100 min |
# | 05 | [`05_multihead_wrapper`](05_multihead_wrapper.ipynb) | your own `MultiHeadAttentionWrapper`; the multiply-adds of a 12-head wrapper | several heads side by side | 90 min |
# | 06 | [`06_multihead_split`](06_multihead_split.ipynb) | your own `MultiHeadAttention`; the head split of an unbatched sequence | one big matrix, split into heads | 110 min |
# | 07 | [`07_inspecting_heads`](07_inspecting_heads.ipynb) | head entropies by hand; the sharpest head | what do heads look at? | 60 min |
# | 08 | [`08_training_tiny_model`](08_training_tiny_model.ipynb) | the untrained loss; shift-task targets; per-head offset shares by hand | watching heads learn | 80 min |
# | 09 | [`09_efficient_attention`](09_efficient_attention.ipynb) | your own fused-QKV `MultiHeadAttention`; the longest context that fits | the same block, made fast; RoPE/ALiBi; bf16 | 100 min |
# | 10 | [`10_cross_attention_kv_cache_gqa`](10_cross_attention_kv_cache_gqa.ipynb) | your own KV cache (`append_and_attend`) and GQA's `repeat_kv`; a sliding-window chunk mask; cache and parameter sizes | generating, and making it smaller | 125 min |
# | 11 | [`11_padded_batches`](11_padded_batches.ipynb) | a causal-and-padding mask; your own masked softmax; a Hugging Face mask turned into SDPA's additive mask, in any dtype | sentences of different lengths (填充掩码) | 90 min |
# | 12 | [`12_tiny_char_lm`](12_tiny_char_lm.ipynb) | the pre-norm `Block`, `get_batch` and one training step (the loss, AdamW); sampling probabilities; a model trained on the Song ci or your own text | a Transformer block around attention; the KV cache at work | 175 min |
# | 13 | [`13_modern_block`](13_modern_block.ipynb) | `apply_rope`, RMSNorm and SwiGLU; attention two tokens back, per head | today's block: RoPE, RMSNorm, SwiGLU, QK-norm | 120 min |
#
# In all about 22 hours: a weekend, or two weeks of evenings.
#
# Solutions to the exercises are in `solutions/` — try first, then compare.
#
# **Conventions.** Shapes are written `(b, T, d)`: batch (批次), tokens (词元), features. Code
# follows the book's names: `W_query`, `W_key`, `W_value`, `out_proj`, `d_in`, `d_out`,
# `context_length`, `num_heads`, `head_dim`. Each lesson teaches a class inline, then checks that it
# computes exactly what the class in the course package `mhsa_helpers` computes. Key terms carry
# their Chinese name in brackets the first time they appear; the glossary at the end of this
# notebook lists all of them. Figure titles in the code are written `mh.tr("English", "中文")`:
# both editions run the same code, and the Chinese one (`mh.setup_lesson(lang="zh")`) draws the
# Chinese text.

# %% [markdown]
# ## Environment check
#
# `setup_lesson()` is the first call of every lesson: it seeds the random number generators, sets
# torch to print 4 decimals, and uses one CPU thread so that your printed digits match the saved
# ones (one thread removes the run-to-run differences that come from splitting sums over threads;
# different CPUs may still differ far below the printed precision).

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# Versions and the device differ from machine to machine, so this cell's output is not compared by
# CI (`NBVAL_IGNORE_OUTPUT`); the assertions below it still run everywhere. Its last line says
# whether your system has a font with Chinese characters (the Chinese terms in the lessons and the
# glossary need one; the figures bring their own): if not, it names the one command that installs
# it.

# %%
# NBVAL_IGNORE_OUTPUT
import platform
from importlib.metadata import version

from mhsa_helpers.system_fonts import missing_cjk_font

if torch.cuda.is_available():
    device = "cuda"
elif torch.backends.mps.is_available():
    device = "mps"
else:
    device = "cpu"
print("python     ", platform.python_version())
print("torch      ", torch.__version__)
print("device     ", device)
for package in ["matplotlib", "seaborn", "ipywidgets", "jupyterlab", "mhsa_helpers"]:
    print(f"{package:<11}", version(package))
font_hint = missing_cjk_font()
print(
    mh.pad(mh.say("CJK font", "中文字体"), 11),
    mh.say("found", "已找到") if font_hint is None else font_hint,
)

# %%
assert tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 4), torch.__version__
assert device in {"cpu", "cuda", "mps"}
x = torch.ones(2, 3, device=device)
assert (x @ x.T).sum().item() == 12.0
print(mh.say("torch works; every lesson runs on the CPU", "torch 可以用，每一课都在 CPU 上运行"))

# %% [markdown]
# ## The book's example
#
# Every lesson uses the same six tokens, loaded from `data/journey.json` by `mhsa_helpers`:

# %%
journey = mh.load_journey()
print(journey.sentence)
print(journey.inputs)  # (6, 3): one 3-dimensional embedding (嵌入) per word
assert journey.inputs.shape == (6, 3)

# %% [markdown]
# ## Plotting works
#
# The lessons draw their tensors as heatmaps. Here is the simplest one: the six embeddings
# themselves, one row per token, one column per feature (lesson 01 starts from these numbers).

# %%
import matplotlib.pyplot as plt
import seaborn as sns

fig, ax = plt.subplots(figsize=(7.8, 4.2), layout="constrained")
sns.heatmap(
    journey.inputs.numpy(),
    annot=True,
    fmt=".2f",
    cmap="Blues",
    xticklabels=[mh.say(f"feature {i}", f"特征 {i}") for i in (1, 2, 3)],
    yticklabels=journey.words,
    ax=ax,
)
ax.set_title(mh.tr("The six embeddings (6, 3)", "六个嵌入向量 (6, 3)"))
ax.tick_params(axis="y", rotation=0)  # words read left to right
plt.show()

# %% [markdown]
# ## Widgets work
#
# Later lessons let you slide the number of heads and the dropout rate. Move this slider: the text
# under it should change. If you see a slider, widgets are working in your JupyterLab. (Widget
# output is not compared by CI; the assertions after it check the callback itself.)

# %%
# NBVAL_IGNORE_OUTPUT
import ipywidgets as widgets


def describe(heads=12):
    head_dim = 768 // heads
    return mh.say(
        f"GPT-2 small width 768 with {heads} heads → head_dim = {head_dim}",
        f"GPT-2 small 的宽度 768，{heads} 个头 → head_dim = {head_dim}",
    )


demo = widgets.interactive(
    describe,
    heads=widgets.SelectionSlider(
        options=[1, 2, 3, 4, 6, 8, 12], value=12, description=mh.say("heads", "头数")
    ),
)
demo

# %%
demo.kwargs_widgets[0].value = 12  # what moving the slider does
assert demo.result.endswith("head_dim = 64"), demo.result  # 768 // 12
print(demo.result)
assert version("ipywidgets").startswith("8.")

# %% [markdown]
# ## The glossary (术语表)
#
# The course uses one set of terms, in English and in Chinese: the glossary `data/glossary.json`,
# also printed in the README. `mh.glossary_table()` shows all of it in one table (scroll inside
# it), each term with a short note in the lesson's language; `mh.load_glossary()` gives the same
# terms as a list of dicts with `en`, `zh`, `note` (the note in English) and `note_zh` (in Chinese).

# %%
mh.glossary_table()

# %% [markdown]
# ## Summary
#
# * torch, plotting and widgets work in this environment; every lesson runs on the CPU.
# * The course's example is six tokens with 3-D embeddings, loaded with `mh.load_journey()`.
# * Each lesson builds a class inline and checks it against `mhsa_helpers`; exercises come with
#   checkers and worked solutions.
# * `mh.glossary_table()` lists every term of the course in English and Chinese.
#
# If every cell ran without an error, you are set. Open [`01_simplified_self_attention.ipynb`](01_simplified_self_attention.ipynb).
