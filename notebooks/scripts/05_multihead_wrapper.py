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
# # 05 · Multi-head attention, version 1: a wrapper of heads (多头注意力 · 多个头并排拼接)
#
# One causal attention module learns one notion of "which token matters for which". **Multi-head
# attention** (多头注意力) runs several of them side by side, each with its own `W_query`,
# `W_key`, `W_value`, so each **attention head** (注意力头) can learn a different pattern, and
# concatenates their outputs. The book builds it twice: first the plain way in this lesson —
# put separate `CausalAttention` modules side by side — then the fast way in lesson 06.
#
# **Learning goals**
# 1. Build `MultiHeadAttentionWrapper` yourself from separate `CausalAttention` heads (a checker
#    runs contract tests on your class) and reproduce the book's (2, 6, 4) output.
# 2. Get the width convention right: in the wrapper `d_out` is the width of *each* head; the
#    output is `num_heads * d_out` wide.
# 3. See that each head is an independent module, and look at each head's attention weights.
# 4. Count the cost: one matrix multiplication per head for each projection; then see what the
#    count does and does not predict about the time.
#
# In formulas (the notation of "Attention Is All You Need"), head $i$ has its own projection
# matrices $W_i^Q, W_i^K, W_i^V$ and runs the causal attention of lesson 04:
#
# $$\text{head}_i = \text{Attention}(XW_i^Q,\; XW_i^K,\; XW_i^V), \qquad
# \text{Attention}(Q, K, V) = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V,$$
#
# and the wrapper puts the heads side by side:
# $\text{MultiHead}(X) = \text{Concat}(\text{head}_1, \dots, \text{head}_h)$. (Lesson 06 adds
# the output matrix $W^O$ after the concatenation.)
#
# **Prerequisites:** lesson 04 (`04_dropout`): the `CausalAttention` class.
# **Time:** about 90 minutes (reading, running 21 code cells, 1 prediction, 3 exercises, 1
# build-it; the rule is in lesson 00).
#
# **Shape contract:** `MultiHeadAttentionWrapper`: `(b, T, d_in)` → `(b, T, num_heads * d_out)`;
# each head: `(b, T, d_in)` → `(b, T, d_out)`.

# %%
import time

import matplotlib.pyplot as plt
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()
journey = mh.load_journey()
words = journey.words
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)

# %% [markdown]
# ## 1. The wrapper
#
# A head is exactly the `CausalAttention` of lesson 04 (we use `mh.CausalAttention`, which we
# checked equals our inline class). The wrapper keeps `num_heads` of them in an `nn.ModuleList`
# (so their parameters are registered), runs each one on the same input, and concatenates the
# results along the last dimension:
#
# ```mermaid
# flowchart LR
#     x["x (b, T, d_in)"] --> h1["head 1: own W_query, W_key, W_value"]
#     x --> h2["head 2: own W_query, W_key, W_value"]
#     h1 -- "(b, T, d_out)" --> cat["torch.cat(..., dim=-1)"]
#     h2 -- "(b, T, d_out)" --> cat
#     cat --> out["(b, T, 2 * d_out)"]
# ```
#
# **Build it yourself.** Before you open the book's class, write it: fill in
# `MyMultiHeadAttentionWrapper` below. The constructor takes the book's arguments, `(d_in, d_out,
# context_length, dropout, num_heads, qkv_bias=False)`; keep the heads in `self.heads`, an
# `nn.ModuleList` of `num_heads` causal heads (`mh.CausalAttention`, or your class of lesson
# 04), each built with `(d_in, d_out, context_length, dropout, qkv_bias)`. `forward(x)` takes x
# (b, T, d_in) and returns (b, T, num_heads * d_out).
#
# The checker copies the weights of `mh.MultiHeadAttentionWrapper` into your module (by the
# heads' names) and runs contract tests with 2 heads: equal outputs at several sizes, causality,
# dropout in training mode only, and a gradient for every weight. Its hint names the likely
# mistake.


# %%
class MyMultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # YOUR CODE HERE: self.heads, one causal head per head

    def forward(self, x):  # x: (b, T, d_in)
        # YOUR CODE HERE: run every head on x, put the outputs side by side
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_wrapper_class(MyMultiHeadAttentionWrapper)

# %% [markdown]
# The book's `MultiHeadAttentionWrapper` is not printed here, so that it does not give the
# build-it away: it is the solution in `solutions/05_multihead_wrapper_solutions.ipynb`, which
# also checks, bit for bit, that it is the same function as the package's
# `mh.MultiHeadAttentionWrapper`. Once your class passes, compare the two. The rest of the lesson
# runs the package's class.

# %%
# the book's class, as the package ships it
MultiHeadAttentionWrapper = mh.MultiHeadAttentionWrapper


# %% [markdown]
# The book's example: seed 123, `d_out = 2` per head, 2 heads, no dropout.

# %%
torch.manual_seed(123)
context_length = batch.shape[1]  # 6
d_in, d_out = 3, 2
mha = MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads=2)
context_vecs = mha(batch)  # (b, T, num_heads * d_out)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)

# %% [markdown]
# These match the book's printed values (both sequences of the batch are the same sentence):

# %%
for sequence in context_vecs:  # (T, num_heads * d_out) each
    torch.testing.assert_close(
        sequence, journey.reference["wrapper_seed123_d_out2_heads2"], atol=1e-4, rtol=0
    )
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown]
# ## 2. Each head is a whole `CausalAttention`
#
# Look at the first two columns: [-0.4519, 0.2216], [-0.5874, 0.0058], ... They are the output of
# lesson 04's single `CausalAttention` with seed 123. No coincidence: the wrapper creates its
# heads one after another, so after `torch.manual_seed(123)` head 1 draws exactly the weights a
# lone `CausalAttention` would draw. Head 2 draws the next random numbers and fills columns 2–3.

# %%
torch.manual_seed(123)
single = mh.CausalAttention(d_in, d_out, context_length, 0.0)
assert torch.equal(context_vecs[..., 0:2], single(batch))  # head 1 = columns 0:2
assert torch.equal(context_vecs[..., 2:4], mha.heads[1](batch))  # head 2 = columns 2:4
torch.testing.assert_close(
    context_vecs[0, :, 0:2], journey.reference["causal_attention_seed123"], atol=1e-4, rtol=0
)
print(
    mh.say(
        "columns 0:2 = the single CausalAttention of lesson 04; columns 2:4 = head 2",
        "前两列（0:2）= 第 04 课的单个 CausalAttention，后两列（2:4）= 头 2",
    )
)

# %% [markdown]
# The picture of the same thing, for the first sequence of the batch: each head's (6, 2)
# context vectors, and the concatenation in which every head keeps its own two columns.

# %%
with torch.no_grad():
    head_outputs = [head(batch)[0] for head in mha.heads]  # each (T, d_out)
fig = mh.figures.plot_heads_concat(head_outputs, words)
plt.show()
assert torch.equal(torch.cat(head_outputs, dim=-1), context_vecs[0])  # what the figure shows

# %% [markdown]
# The heads share nothing: every head has its own three projection matrices. The module's
# parameters show it (no `out_proj` here; that comes in lesson 06):

# %%
for name, param in mha.named_parameters():
    print(f"{name:<22} {tuple(param.shape)}")  # (d_out, d_in) per head and projection
print(mh.say("buffers:", "缓冲区："), [name for name, _ in mha.named_buffers()])

# %% [markdown]
# ## 3. The width convention
#
# In the wrapper, **`d_out` is the width of each head**; nothing is split. Every head adds
# `d_out` columns, so the output width is `num_heads * d_out`. (Lesson 06's `MultiHeadAttention`
# uses the other convention, found in most code: `d_out` is the *total* width, and each head gets
# `head_dim = d_out // num_heads`. Mixing the two up is a common source of shape errors.)

# %%
for num_heads in [1, 2, 3, 4]:
    torch.manual_seed(123)
    wrapper = MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads)
    shape = tuple(wrapper(batch).shape)
    print(
        mh.say(
            f"num_heads={num_heads}, d_out={d_out} per head -> output {shape}",
            f"num_heads={num_heads}，每个头 d_out={d_out} -> 输出 {shape}",
        )
    )
    assert wrapper(batch).shape == (2, 6, num_heads * d_out)

# %% [markdown]
# So to get a 768-wide output like GPT-2 small from 12 heads, the wrapper needs `d_out=64`:

# %%
with torch.device("meta"):  # shapes only: no memory, no random numbers
    gpt2_like = MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
    print(gpt2_like(torch.empty(1, 4, 768)).shape)  # (b, T, 12 * 64)

# %% [markdown]
# ## 4. What does each head look at?
#
# Each head compares the tokens in a space of its own: its `W_query` and `W_key` map the 3 input
# features to 2 numbers of its own, (b, T, 3) → (b, T, 2), and its scores see only those 2. The
# paper that introduced multi-head attention (Vaswani et al., 2017) says the heads attend to different **representation
# subspaces** (表示子空间). Each head computes its own (T, T) attention weights.
# `CausalAttention` returns them with `return_weights=True`; stacking the heads gives
# (b, num_heads, T, T). With only 2 dimensions per head and random (untrained) weights the
# patterns are similar. Whether training makes heads differ is a question for lesson 08, which
# finds both: heads that differ, and heads that all learn the same thing.

# %%
with torch.no_grad():
    weights = torch.stack(
        [head(batch, return_weights=True)[1] for head in mha.heads], dim=1
    )  # (b, num_heads, T, T)
print(weights.shape)
assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 6))  # every row sums to 1
assert (weights.triu(diagonal=1) == 0).all()  # causal: nothing above the diagonal
fig = mh.plot_attention_heads(
    weights, words, suptitle=mh.tr("Two heads, seed 123", "两个头，种子 123")
)
plt.show()

# %% [markdown]
# ## 5. Explore: slide the number of heads
#
# The **heads** slider builds `MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads)` after
# `torch.manual_seed(123)` and draws one heatmap per head. Watch head 1 while you slide: it never
# changes, because every new head is created *after* the ones before it. (Slide it in JupyterLab;
# CI runs the cell but does not compare its output.)

# %%
# NBVAL_IGNORE_OUTPUT
explorer = mh.heads_explorer(words)
explorer

# %% [markdown]
# What moving the slider to 3 does — the result is the (heads, T, T) weights that were drawn:

# %%
# NBVAL_IGNORE_OUTPUT
explorer.kwargs_widgets[0].value = 3  # the "heads" slider
three = explorer.result  # (3, T, T)
assert three.shape == (3, 6, 6)
assert torch.equal(three[0], weights[0, 0])  # head 1 as in our 2-head module
assert torch.equal(three[1], weights[0, 1])  # head 2 too

# %%
print(mh.say("weights shape with 3 heads:", "3 个头时权重的形状："), tuple(three.shape))
print(
    mh.say("row 'journey', head by head:\n", "“journey”这一行，逐个头来看：\n"), three[:, 1, :2]
)  # (heads, 2)

# %% [markdown]
# ## 6. The cost: one matmul per head and per projection
#
# The wrapper is easy to read, but it runs the heads one after another. How many matrix
# multiplications does that take? We will count them instead of guessing:
# `mh.CountMatmuls` is a `torch.overrides.TorchFunctionMode` (20 lines in
# `mhsa_helpers/checks.py`): it sees every torch function called inside its `with` block and
# counts the `linear` (the `nn.Linear` layers) and `matmul` (`@`) calls.
#
# **Predict, then run.** How many calls (`nn.Linear` plus `@`) does one forward pass of our
# 2-head `mha` make? Go through the steps of one head (your `MyCausalAttention.forward` from
# lesson 04), write your guess in place of `None`, run the cell, then run the next one.

# %%
prediction = None  # YOUR PREDICTION HERE: linear + matmul calls of the 2-head wrapper
mhsa_helpers.exercises.check_matmul_prediction(prediction)

# %%
with mh.CountMatmuls() as counter:
    mha(batch)
print(
    mh.say("2 heads:", "2 个头："),
    counter.counts,
    mh.say("| total", "| 合计"),
    sum(counter.counts.values()),
)
print(mh.say("your prediction:", "你的预测："), prediction)

# %% [markdown]
# Per head, `forward` calls `W_query`, `W_key`, `W_value` (three small matrix products) and then
# `Q @ K^T` and `weights @ V`. The same count for 1 to 4 heads:

# %%
wrapper_counts = {}
for num_heads in [1, 2, 3, 4]:
    torch.manual_seed(123)
    wrapper = MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads)
    with mh.CountMatmuls() as counter:
        wrapper(batch)
    wrapper_counts[num_heads] = counter.counts
    assert counter.counts == {"linear": 3 * num_heads, "matmul": 2 * num_heads}
fig = mh.figures.plot_matmul_counts({"wrapper": wrapper_counts})
plt.show()

# %% [markdown]
# Five products per head, so 5 × `num_heads` per forward pass. The total arithmetic is the same
# as one projection of width `num_heads * d_out`, but done as many small calls, and every call
# has a fixed cost (Python, dispatch). Does that cost show? The timing below compares 12
# separate (T, 768) @ (768, 64) products with one (T, 768) @ (768, 768) product, for a short and a
# long sequence, and prints the ratio: above 1 means the 12 small products took longer. Times
# depend on your machine, so CI does not compare the printed numbers; it only checks that both
# results are equal and the times are sane.

# %%
# NBVAL_IGNORE_OUTPUT
W_heads = [torch.randn(768, 64) for _ in range(12)]  # one (d_in, head_dim) matrix per head
W_big = torch.cat(W_heads, dim=1)  # (d_in, 12 * 64)


def best_of(fn, repeats=20):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


for num_tokens in [6, 256]:
    x = torch.randn(num_tokens, 768)  # (T, d_in)
    t_loop = best_of(lambda: torch.cat([x @ W for W in W_heads], dim=1))  # noqa: B023
    t_big = best_of(lambda: x @ W_big)  # noqa: B023
    print(
        mh.say(
            f"T={num_tokens:>3}: 12 small matmuls {t_loop * 1e3:.3f} ms, "
            f"one big matmul {t_big * 1e3:.3f} ms, ratio {t_loop / t_big:.1f}x",
            f"T={num_tokens:>3}：12 次小乘法 {t_loop * 1e3:.3f} ms，"
            f"一次大乘法 {t_big * 1e3:.3f} ms，比值 {t_loop / t_big:.1f}x",
        )
    )
    assert 0 < t_big < 1 and 0 < t_loop < 1
torch.testing.assert_close(torch.cat([x @ W for W in W_heads], dim=1), x @ W_big)

# %% [markdown]
# The two give the same numbers (the last cell's `assert_close`). Read the two ratios your machine
# printed. They are often close to 1, and not always above it: for one product of this size the
# fixed cost of a call is small next to the work, and a busy machine moves the times by more than
# that cost. So a single matmul does not show the cost of many calls; the whole modules do, as
# measured next.
#
# The same question for the whole modules is measured in `benchmarks/attention.py --part
# wrapper-vs-split`: the wrapper against lesson 06's split class computing the same function,
# one thread, on the course's 2-core machine. For 8 to 64 tokens the wrapper took 1.2–1.9x the
# time of the split class without `out_proj` (the same function). At 512 tokens its forward pass took only 0.7x: there most of the work
# is in the (T, T) steps (mask, softmax), and the wrapper does them one head at a time on 2 MiB of
# scores, small enough for the CPU's cache, where the split class works through 24 MiB at once.
# So the count predicts the cost of the calls, not the whole time (the table is in
# `benchmarks/README.md`). Lesson 06 turns the one-big-matrix observation into a class: one big
# `W_query`, `W_key`, `W_value`, split into heads afterwards.

# %% [markdown]
# ## Summary
#
# * **Multi-head attention** (多头注意力) = several independent **attention heads** (注意力头),
#   each with its own `W_query`/`W_key`/`W_value`, outputs concatenated on the last dimension.
# * The wrapper version keeps `num_heads` `CausalAttention` modules in an `nn.ModuleList`. The
#   book's example (seed 123, `d_out=2`, 2 heads) gives a (2, 6, 4) output whose first two
#   columns are lesson 04's single-head output.
# * Width convention of the wrapper: `d_out` per head, output width `num_heads * d_out`.
# * Cost: 3 projections + 2 attention products per head, run one head after another:
#   5 × `num_heads` matrix multiplications per forward pass. Many small calls cost time when the
#   calls are small; on a CPU the count is not the whole story (at 512 tokens the wrapper's
#   forward pass measured faster than lesson 06's split class).
# * Next: lesson 06 computes all heads with one big matrix per projection and one batched
#   matrix multiplication (批量矩阵乘法), and proves it gives the same result.
#
# ## Exercises
#
# Solutions: `solutions/05_multihead_wrapper_solutions.ipynb`.
#
# **Exercise 1.** How many trainable parameters does section 3's 768-wide wrapper hold,
# `MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)` (no `qkv_bias`)? Count what one
# head holds first (section 2 listed the parameters of a head), then the whole wrapper, by hand.
# (A whole number; the solutions confirm it by counting the module's parameters.)

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_wrapper_parameters(answer)

# %% [markdown]
# **Exercise 2.** The wrapper builds its heads one after the other, and each draws its weights
# from the random generator in turn (section 2). After `torch.manual_seed(123)`, build a wrapper
# of the book's class with **3 heads** (`d_in=3`, `d_out=2`, `context_length=6`, `dropout=0.0`) and, right
# after it, without a second seed, one more `mh.CausalAttention(3, 2, 6, 0.0)`. Set `answer` to
# this extra head's output on `batch`, a (2, 6, 2) tensor. Then explain it: the same numbers are
# a slice of the output of another wrapper built after the same seed. Which wrapper, which
# columns? Check your guess in a cell of your own.

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_head_output(answer)

# %% [markdown]
# **Exercise 3.** Section 6 counted the *calls*; now count the *work* inside them. A
# **multiply-add** is one multiplication and one addition: computing (T, n) @ (n, m) takes
# T · n · m of them. How many multiply-adds do the three projections and the two attention
# products of all heads make in one forward pass of `MultiHeadAttentionWrapper(768, 64, 100,
# 0.0, num_heads=12)` on a batch of **8 sequences of 100 tokens**, x (8, 100, 768)? (Ignore the
# mask and the softmax.) Work it out with the T · n · m rule; the solution notebook confirms it
# with `torch.utils.flop_counter.FlopCounterMode`.

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_matmul_count(answer)
