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
# # 09 · Efficient attention — fused QKV and FlashAttention (高效注意力：融合 QKV 与 FlashAttention)
#
# Lesson 06 built `MultiHeadAttention`: three projections, a (b, h, T, T) score matrix, a mask,
# a softmax, a weighted sum. Real models run **the same function** with two changes that make it
# fast: one matmul for Q, K and V instead of three, and a fused attention kernel that never writes
# the T x T weights to memory. This lesson builds both and proves, with `assert_close`, that the
# numbers do not change.
#
# **Learning goals**
# 1. Write a **fused QKV projection** (融合 QKV 投影) and show it equals three separate ones.
# 2. Call `torch.nn.functional.scaled_dot_product_attention` (SDPA, 缩放点积注意力) and torch's own
#    `nn.MultiheadAttention`, and get lesson 06's outputs from both after a weight copy.
# 3. Compute how much memory the (b, h, T, T) weights take, and what **FlashAttention**
#    (FlashAttention：分块计算、不存储 T×T 矩阵的精确注意力) saves by never storing them.
# 4. Time the teaching class against SDPA on your own machine.
#
# **Prerequisites:** lesson 06 (`MultiHeadAttention`, `view` + `transpose` into heads).
# **Time:** about 30 minutes.
#
# **Shape contract:** `x` (b, T, d_in) -> `qkv` (b, T, 3 * d_out) -> Q, K, V (b, h, T, head_dim)
# -> output (b, T, d_out), with `head_dim = d_out // num_heads`.

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. One matmul instead of three
#
# `W_query`, `W_key` and `W_value` all read the same input `x`. An `nn.Linear` stores its weight as
# (out_features, in_features), so stacking the three (d_out, d_in) weights row-wise gives one
# (3 * d_out, d_in) weight; `x @ W.T` then returns Q, K and V side by side in one (b, T, 3 d_out)
# tensor, and `split` cuts it apart again. We start from the book's example and lesson 06's class.

# %%
journey = mh.load_journey()
x = journey.batch  # (2, 6, 3)
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)

three = [mha.W_query(x), mha.W_key(x), mha.W_value(x)]  # 3 matmuls, each (2, 6, 4)
W_qkv = torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight])  # (12, 3)
fused = x @ W_qkv.T  # 1 matmul: (2, 6, 12)
queries, keys, values = fused.split(4, dim=-1)  # each (2, 6, 4)
print("fused weight:", tuple(W_qkv.shape), "-> fused output:", tuple(fused.shape))
for name, one, other in zip(["Q", "K", "V"], three, [queries, keys, values]):
    torch.testing.assert_close(one, other)
    print(name, "from three matmuls == slice of the fused matmul")

# %% [markdown]
# **Why one matmul beats three.** The arithmetic is identical (3 x b·T·d_in·d_out multiply-adds
# either way), but a computer is rarely limited by arithmetic alone:
#
# * `x` is read from memory **once** instead of three times, and one big matrix keeps the
#   multiply units busier than three thin ones (better *arithmetic intensity* / 算术强度);
# * one kernel launch (内核启动) instead of three (on a GPU each launch costs a few microseconds, which
#   matters when the model runs thousands of them per token);
# * the three weights live in one tensor, so they are initialized, saved and sharded together.
#
# Here is the class built inline, the way the package writes it:

# %%
from torch import nn


class FusedQKVAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)  # one projection for Q, K, V
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def forward(self, x):
        b, num_tokens, _ = x.shape
        qkv = self.qkv(x)  # (b, T, 3 * d_out)
        qkv = qkv.view(b, num_tokens, 3, self.num_heads, self.head_dim)  # (b, T, 3, h, hd)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)  # 3 x (b, h, T, head_dim)
        scores = queries @ keys.transpose(-2, -1)  # (b, h, T, T)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / self.head_dim**0.5, dim=-1)  # (b, h, T, T)
        context = self.dropout(weights) @ values  # (b, h, T, head_dim)
        context = context.transpose(1, 2).reshape(b, num_tokens, self.d_out)  # (b, T, d_out)
        return self.out_proj(context)  # (b, T, d_out)


inline = FusedQKVAttention(3, 4, 6, 0.0, num_heads=2)
fused_mha = mh.FusedQKVMultiHeadAttention.from_multihead(mha)  # copies W_query/W_key/W_value
inline.load_state_dict(fused_mha.state_dict())  # same names: qkv, out_proj, mask
out_06 = mha(x)  # (2, 6, 4), lesson 06
assert torch.equal(inline(x), fused_mha(x))  # the inline class is the package's class
torch.testing.assert_close(fused_mha(x), out_06)
print(out_06[0].detach())  # first sequence, (6, 4)
print("fused QKV (inline == mh.FusedQKVMultiHeadAttention) == lesson 06 MultiHeadAttention")

# %% [markdown]
# `assert_close` rather than `torch.equal`: one (3 d_out x d_in) matmul may add its products in
# another order than three separate ones, so the last bit of a float can differ. The results
# agree to float32 rounding (about 1e-7 relative), which is all that "the same function" can
# promise in floating point.
#
# ## 2. SDPA: the fused attention kernel
#
# After the projection, everything from `Q @ K.T` to `weights @ V` is one standard operation,
# and PyTorch ships it as a single function, `F.scaled_dot_product_attention`. `is_causal=True`
# applies the causal mask (因果掩码); the scale is `1 / sqrt(head_dim)` by default; `dropout_p`
# drops weights (pass 0.0 in evaluation, the function does not look at `.training`).

# %%
import torch.nn.functional as F

q, k, v = fused_mha.project(x)  # each (2, 2, 6, 2): (b, h, T, head_dim)
context_sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (b, h, T, head_dim)
context_explicit, weights = mh.masked_attention(q, k, v, mha.causal_mask(6))  # + (b, h, T, T)
torch.testing.assert_close(context_sdpa, context_explicit)
print("SDPA context == explicit mask + softmax + weighted sum:", tuple(context_sdpa.shape))

sdpa_mha = mh.SDPAMultiHeadAttention.from_multihead(mha)
torch.testing.assert_close(sdpa_mha(x), out_06)
print("SDPAMultiHeadAttention == lesson 06 MultiHeadAttention")

# %% [markdown]
# SDPA returns only the context vectors, never the weights — that is the point of it. When you
# want to *look* at the weights (lesson 07), `SDPAMultiHeadAttention(..., return_weights=True)`
# falls back to the explicit path, which does store them:

# %%
out, w = sdpa_mha(x, return_weights=True)
torch.testing.assert_close(out, out_06)
print(tuple(w.shape), "weights of head 1, first sequence:")
print(w[0, 0].detach())

# %% [markdown]
# ## 3. torch's own `nn.MultiheadAttention`
#
# PyTorch's built-in layer is a fused-QKV attention too: its `in_proj_weight` is exactly our
# stacked (3 d_out, d_in) weight (for self-attention its input width must equal `embed_dim`,
# i.e. d_in == d_out, the usual case inside a transformer). Three things to watch:
#
# * `bias=True` gives both the Q/K/V projections and `out_proj` a bias; our `qkv_bias=False`
#   means a zero `in_proj_bias`.
# * `batch_first=True` makes it take (b, T, d) like our classes.
# * Masks come in **two conventions**: for `nn.MultiheadAttention` (and this course) a `True`
#   entry is *hidden*; for `F.scaled_dot_product_attention` a `True` entry *may be attended*.

# %%
torch.manual_seed(123)
mha_4 = mh.MultiHeadAttention(d_in=4, d_out=4, context_length=6, dropout=0.0, num_heads=2)
x4 = torch.randn(2, 6, 4)  # (b, T, d_in) with d_in == d_out
torch_mha = nn.MultiheadAttention(embed_dim=4, num_heads=2, bias=True, batch_first=True)
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(
        torch.cat([mha_4.W_query.weight, mha_4.W_key.weight, mha_4.W_value.weight])
    )  # (12, 4)
    torch_mha.in_proj_bias.zero_()
    torch_mha.out_proj.load_state_dict(mha_4.out_proj.state_dict())
torch_mha.eval()

hidden = mha_4.causal_mask(6)  # bool (6, 6), True above the diagonal = hidden
out_torch, w_torch = torch_mha(
    x4, x4, x4, attn_mask=hidden, need_weights=True, average_attn_weights=False
)
out_ours, w_ours = mha_4(x4, return_weights=True)
torch.testing.assert_close(out_torch, out_ours)
torch.testing.assert_close(w_torch, w_ours)
out_fast, _ = torch_mha(x4, x4, x4, attn_mask=hidden, is_causal=True, need_weights=False)
torch.testing.assert_close(out_fast, out_ours)
print("nn.MultiheadAttention == lesson 06 MultiHeadAttention (outputs and per-head weights)")

# %% [markdown]
# ## 4. What FlashAttention avoids storing
#
# The explicit path materializes a (b, h, T, T) tensor — several of them, in fact: the scores, the
# masked scores, the softmax output (kept for the backward pass), the dropout mask. Their size
# grows with **T²**. FlashAttention (and SDPA's CPU "flash" kernel) cuts Q, K, V into tiles, keeps
# a running maximum and sum for the softmax of each row, and never writes the full matrix out:
# besides Q, K, V and the output, which grow as **T**, it stores only one number per row.
#
# At GPT-2 small's width (12 heads, d = 768), float32, batch 1, for **one** (b, h, T, T) tensor
# of one layer:


# %%
def attention_matrix_bytes(batch, heads, num_tokens, bytes_per_number=4):
    return batch * heads * num_tokens * num_tokens * bytes_per_number


def qkvo_bytes(batch, d_model, num_tokens, bytes_per_number=4):
    return 4 * batch * num_tokens * d_model * bytes_per_number  # Q, K, V and the output


MiB = 2**20
for T in [1024, 4096]:
    weights_bytes = attention_matrix_bytes(1, 12, T)
    linear_bytes = qkvo_bytes(1, 768, T)
    print(
        f"T={T:>5}: (1, 12, T, T) weights = {weights_bytes:>11,} bytes = {weights_bytes / MiB:5.0f} MiB"
        f"   |   Q, K, V, out = {linear_bytes / MiB:3.0f} MiB"
    )
assert attention_matrix_bytes(1, 12, 4096) == 16 * attention_matrix_bytes(1, 12, 1024)
assert qkvo_bytes(1, 768, 4096) == 4 * qkvo_bytes(1, 768, 1024)

# %% [markdown]
# Four times the tokens cost 16 times the memory for the weights (768 MiB for a single tensor at
# T = 4096, before counting the copies that the backward pass keeps), but only 4 times for
# Q, K, V and the output. That is why long-context models in practice rely on fused, memory-efficient kernels.
#
# ## 5. A small benchmark on your machine
#
# Time a forward pass of lesson 06's class and of the SDPA class (same weights) for a few
# sequence lengths. The sizes are tiny so that the notebook stays fast; `benchmarks/attention.py`
# (`make bench`) does the real measurement at GPT-2 size. Times depend on your machine, so the
# next cell's output is not compared by CI (`NBVAL_IGNORE_OUTPUT`), but it still checks that
# every time is positive and sane.

# %%
# NBVAL_IGNORE_OUTPUT
import math
import time

from tqdm import tqdm

lengths = [32, 64, 128, 256]
torch.manual_seed(0)
teach = mh.MultiHeadAttention(d_in=64, d_out=64, context_length=256, dropout=0.0, num_heads=4)
teach.eval()
fast = mh.SDPAMultiHeadAttention.from_multihead(teach)


def best_time(module, x, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        module(x)
        times.append(time.perf_counter() - start)
    return min(times)  # the least disturbed run


ms = {"MultiHeadAttention": [], "SDPAMultiHeadAttention": []}
with torch.no_grad():
    for T in tqdm(lengths, desc="sequence length"):
        xb = torch.randn(4, T, 64)  # (b, T, d_in)
        torch.testing.assert_close(fast(xb), teach(xb))
        ms["MultiHeadAttention"].append(1e3 * best_time(teach, xb))
        ms["SDPAMultiHeadAttention"].append(1e3 * best_time(fast, xb))
for T, slow_ms, fast_ms in zip(lengths, *ms.values()):
    print(
        f"T={T:>4}: teaching {slow_ms:7.3f} ms   SDPA {fast_ms:7.3f} ms   ratio {slow_ms / fast_ms:4.1f}x"
    )
for series in ms.values():
    assert all(0 < t < 2000 and math.isfinite(t) for t in series), series

# %% [markdown]
# The plot puts the measured times next to the memory of the weights tensor the teaching class
# stores (computed, (4, 4, T, T) float32), which grows as T² while SDPA's extra memory grows as T.

# %%
import matplotlib.pyplot as plt

fig, (ax_time, ax_mem) = plt.subplots(1, 2, figsize=(9, 3.4), layout="constrained")
for name, series in ms.items():
    ax_time.plot(lengths, series, marker="o", label=name)
ax_time.set(yscale="log", xlabel="sequence length T", ylabel="forward time (ms)")
ax_time.set_title("Measured on this machine")
ax_time.legend()
teach_mem = [attention_matrix_bytes(4, 4, T) / MiB for T in lengths]
sdpa_mem = [4 * 4 * T * 4 / MiB for T in lengths]  # one float per row: the softmax statistics
ax_mem.plot(lengths, teach_mem, marker="o", label="(b, h, T, T) weights  ~ T^2")
ax_mem.plot(lengths, sdpa_mem, marker="o", label="flash row statistics  ~ T")
ax_mem.set(yscale="log", xlabel="sequence length T", ylabel="MiB (computed)")
for ax in (ax_time, ax_mem):
    ax.set_xscale("log", base=2)
    ax.set_xticks(lengths, [str(T) for T in lengths])
ax_mem.set_title("Extra memory of attention")
ax_mem.legend()
plt.show()

# %% [markdown]
# How large the speed gap is depends on the machine and on T (at very short T SDPA's fixed cost
# per call can even make it slower); it grows with T, and on a GPU SDPA wins by a wide margin.
# Above all, SDPA keeps its extra memory linear in T.
#
# ## Summary
#
# * A **fused QKV projection** is the three projections stacked into one `nn.Linear(d_in, 3 d_out)`:
#   same numbers, one matmul, `x` read once.
# * `F.scaled_dot_product_attention(q, k, v, is_causal=True)` computes mask + scaled softmax +
#   weighted sum in one kernel; it returns no weights, so inspection needs the explicit path.
# * `nn.MultiheadAttention` is the same function again: its `in_proj_weight` is our stacked weight.
#   Mind the mask convention (True = hidden there, True = allowed in SDPA).
# * The explicit path stores (b, h, T, T) tensors, memory ~ T²; FlashAttention tiles the
#   computation and stores O(T).
#
# Next: lesson 10 uses these pieces to generate text token by token with a KV cache, lets a
# decoder attend to an encoder (cross-attention), and shrinks the cache with grouped-query
# attention.
#
# ## Exercises
#
# Solutions: `solutions/09_efficient_attention_solutions.ipynb`.
#
# **Exercise 1.** Build the fused (3 * d_out, d_in) weight that makes one `nn.Linear` compute
# `mha`'s queries, keys and values (the order matters).

# %%
import mhsa_helpers.exercises

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_fused_qkv_weight(answer, mha)

# %% [markdown]
# **Exercise 2.** GPT-2 XL has 25 heads and a context of 1024 tokens. How many bytes does one
# layer's float32 attention-weight tensor (b, h, T, T) take for one sequence (batch 1)? Give an int.

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_attention_matrix_bytes(answer)
