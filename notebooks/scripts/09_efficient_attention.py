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
# the T x T weights to memory. This lesson shows both, proves with `assert_close` that the numbers
# do not change, shows where positional schemes such as RoPE and ALiBi plug into the block, runs
# it in bfloat16 — and then you build the fused class yourself.
#
# **Learning goals**
# 1. Understand a **fused QKV projection** (融合 QKV 投影): three weights stacked into one.
# 2. Call `torch.nn.functional.scaled_dot_product_attention` (SDPA, 缩放点积注意力) and torch's own
#    `nn.MultiheadAttention`, and get lesson 06's outputs from both after a weight copy.
# 3. Compute how much memory the (b, h, T, T) weights take, and what **FlashAttention**
#    (FlashAttention：分块计算、不存储 T×T 矩阵的精确注意力) saves by never storing them.
# 4. See where **RoPE** (旋转位置编码) and **ALiBi** (线性偏置注意力) act: on Q and K after the
#    projection, and on the scores.
# 5. Run the block in **bfloat16** (bf16) under **autocast** (自动混合精度) and compare it
#    with float32; measure the softmax in float16 and bfloat16, see which mask fill values
#    survive there, and upcast the softmax as production code does.
# 6. Build it: write a fused-QKV multi-head attention class that passes the contract tests.
#
# **Prerequisites:** lesson 06 (`MultiHeadAttention`, `view` + `transpose` into heads).
# **Time:** about 100 minutes (reading, running 27 code cells, 1 prediction, 2 exercises, 1
# build-it; the rule is in lesson 00).
#
# **Shape contract:** `x` (b, T, d_in) -> `qkv` (b, T, 3 * d_out) -> Q, K, V (b, h, T, head_dim)
# -> output (b, T, d_out), with `head_dim = d_out // num_heads`.
#
# ```mermaid
# flowchart LR
#   X["x (b, T, d_in)"] --> P["qkv: Linear d_in -> 3 d_out"]
#   P --> S["split: Q, K, V (b, T, d_out)"]
#   S --> H["view + transpose: (b, h, T, head_dim)"]
#   H --> A["SDPA: mask, softmax(QK^T / sqrt(head_dim)), @ V"]
#   A --> M["merge heads (b, T, d_out)"]
#   M --> O["out_proj"]
# ```

# %%
import matplotlib.pyplot as plt
import torch

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. One matmul instead of three
#
# `W_query`, `W_key` and `W_value` all read the same input `x`. An `nn.Linear` stores its weight as
# (out_features, in_features), so stacking the three (d_out, d_in) weights row-wise gives one
# (3 * d_out, d_in) weight $W_{qkv}$, and one matmul returns Q, K and V side by side:
#
# $$x W_{qkv}^\top = x\,[W_q; W_k; W_v]^\top = [\,x W_q^\top \mid x W_k^\top \mid x W_v^\top\,]
#   = [\,Q \mid K \mid V\,].$$
#
# `split` cuts the (b, T, 3 d_out) result apart again. We start from the book's example and
# lesson 06's class.

# %%
journey = mh.load_journey()
x = journey.batch  # (2, 6, 3)
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)

three = [mha.W_query(x), mha.W_key(x), mha.W_value(x)]  # 3 matmuls, each (2, 6, 4)
W_qkv = torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight])  # (12, 3)
fused = x @ W_qkv.T  # 1 matmul: (2, 6, 12)
queries, keys, values = fused.split(4, dim=-1)  # each (2, 6, 4)
print(
    mh.say("fused weight:", "融合权重："),
    tuple(W_qkv.shape),
    mh.say("-> fused output:", "-> 融合输出："),
    tuple(fused.shape),
)
for name, one, other in zip(["Q", "K", "V"], three, [queries, keys, values]):
    torch.testing.assert_close(one, other)
    print(
        name,
        mh.say(
            "from three matmuls == slice of the fused matmul",
            "由三次乘法得到 == 融合乘法结果的切片",
        ),
    )

# %% [markdown]
# The picture of what just happened: the weight is three blocks stacked on top of each other,
# and the output of the first sequence is three blocks side by side.

# %%
fig = mh.figures.plot_fused_qkv(W_qkv.detach(), fused[0].detach())
plt.show()

# %% [markdown]
# **Why one matmul beats three.** The arithmetic is identical (3 x b·T·d_in·d_out multiply-adds
# either way), but a computer is rarely limited by arithmetic alone:
#
# * `x` is read from memory **once** instead of three times, and one big matrix keeps the
#   multiply units busier than three thin ones (better *arithmetic intensity* / 算术强度);
# * one kernel launch (内核启动) instead of three (each launch has a fixed cost, which adds up when
#   a model runs thousands of them per token; this lesson does not measure it);
# * the three weights live in one tensor, so they are initialized, saved and sharded together
#   (sharded: split across several GPUs, each holding a slice of the tensor).
#
# The package's `mh.FusedQKVMultiHeadAttention` is lesson 06's class with this one change: a
# single `qkv = nn.Linear(d_in, 3 * d_out)` instead of `W_query`, `W_key`, `W_value`.
# `from_multihead(mha)` stacks `mha`'s weights into its `qkv` and copies `out_proj`, so it computes
# what lesson 06 computed. (At the end of the lesson you write this class yourself.)

# %%
from torch import nn

fused_mha = mh.FusedQKVMultiHeadAttention.from_multihead(mha)  # copies W_query/W_key/W_value
print(fused_mha)
out_06 = mha(x)  # (2, 6, 4), lesson 06
out_fused = fused_mha(x)  # (2, 6, 4), one projection matmul
torch.testing.assert_close(out_fused, out_06)
print(out_fused[0].detach())  # first sequence, (6, 4)
print(
    mh.say(
        "FusedQKVMultiHeadAttention == lesson 06 MultiHeadAttention",
        "FusedQKVMultiHeadAttention == 第 06 课的 MultiHeadAttention",
    )
)

# %% [markdown]
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
print(
    mh.say(
        "SDPA context == explicit mask + softmax + weighted sum:",
        "SDPA 的上下文 == 显式掩码 + softmax + 加权和：",
    ),
    tuple(context_sdpa.shape),
)

sdpa_mha = mh.SDPAMultiHeadAttention.from_multihead(mha)
torch.testing.assert_close(sdpa_mha(x), out_06)
print(
    mh.say(
        "SDPAMultiHeadAttention == lesson 06 MultiHeadAttention",
        "SDPAMultiHeadAttention == 第 06 课的 MultiHeadAttention",
    )
)

# %% [markdown]
# ### Two layouts of the heads
#
# Many codebases (timm's `Attention`, for one) cut the fused output into heads in one line:
# `qkv.view(b, T, 3, h, head_dim).permute(2, 0, 3, 1, 4)`. The `view` works because the fused
# weight stacks W_query, W_key, W_value row-wise: the 3 * d_out output features are 3 blocks
# (Q, K, V), each of h heads of head_dim features. The `permute` then moves those axes:
#
# | axis of the view | 0 | 1 | 2 | 3 | 4 |
# |---|---|---|---|---|---|
# | `view(b, T, 3, h, head_dim)` | b | T | 3 (Q, K or V) | h | head_dim |
# | `permute(2, 0, 3, 1, 4)` | 3 | b | h | T | head_dim |
#
# so that `unbind(0)` returns Q, K, V, each (b, h, T, head_dim), the layout SDPA takes. The
# **flash-attn** package's `flash_attn_func` takes (b, T, h, head_dim) instead: that is the
# view before any permute, so it needs no transpose on the way in and none on the way out.

# %%
b, T = x.shape[:2]  # 2, 6
h, hd = fused_mha.num_heads, fused_mha.head_dim  # 2, 2
with torch.no_grad():
    qkv_5d = fused_mha.qkv(x).view(b, T, 3, h, hd)  # (b, T, 3, h, head_dim)
    q5, k5, v5 = qkv_5d.permute(2, 0, 3, 1, 4).unbind(0)  # each (b, h, T, head_dim)
    for ours, permuted in zip(fused_mha.project(x), (q5, k5, v5)):
        assert torch.equal(ours, permuted)
    print("permute(2, 0, 3, 1, 4) ->", tuple(q5.shape), "== fused_mha.project(x)")

    q_flash, k_flash, v_flash = qkv_5d.unbind(2)  # each (b, T, h, head_dim): flash-attn's layout
    assert torch.equal(q_flash.transpose(1, 2), q5)  # SDPA's layout is one transpose away
    context = F.scaled_dot_product_attention(q5, k5, v5, is_causal=True)  # (b, h, T, head_dim)
    merged = context.transpose(1, 2).reshape(b, T, h * hd)  # (b, T, d_out)
print(
    mh.say("flash-attn layout", "flash-attn 的布局"),
    tuple(q_flash.shape),
    mh.say("| SDPA layout", "| SDPA 的布局"),
    tuple(q5.shape),
)
print(mh.say("merged heads", "合并后的头"), tuple(merged.shape))
torch.testing.assert_close(fused_mha.out_proj(merged), out_fused)

# %% [markdown]
# SDPA returns only the context vectors, never the weights — that is the point of it. When you
# want to *look* at the weights (lesson 07), `SDPAMultiHeadAttention(..., return_weights=True)`
# falls back to the explicit path, which does store them:

# %%
out, w = sdpa_mha(x, return_weights=True)
torch.testing.assert_close(out, out_06)
print(tuple(w.shape), mh.say("weights of head 1, first sequence:", "头 1 在第一个序列上的权重："))
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
print(
    mh.say(
        "nn.MultiheadAttention == lesson 06 MultiHeadAttention (outputs and per-head weights)",
        "nn.MultiheadAttention == 第 06 课的 MultiHeadAttention（输出和每个头的权重）",
    )
)

# %% [markdown]
# ## 4. What FlashAttention avoids storing
#
# The explicit path materializes the (b, h, T, T) weights — several such tensors, in fact: the
# scores, the masked scores, the softmax output (kept for the backward pass), the dropout mask.
#
# **Predict, then run.** The next cell measures the weights of a small block (b = 4, 4 heads) at
# T = 64 and at T = 512. With 8 times the tokens, how many times more bytes will the weights
# take? Write your guess into `prediction`.

# %%
import mhsa_helpers.exercises

prediction = None  # YOUR CODE HERE: bytes at T=512 divided by bytes at T=64
mhsa_helpers.exercises.check_memory_growth(prediction)

# %% [markdown]
# The measurement, on the weights that the explicit path of `SDPAMultiHeadAttention` returns,
# next to what a flash kernel keeps instead: one number per row, the row's log-sum-exp,
# $\log \sum_j e^{s_j}$ over its scores $s_j$, the softmax's denominator in log form, from which
# the backward pass recomputes the weights; (b, h, T).

# %%
torch.manual_seed(0)
small = mh.SDPAMultiHeadAttention(d_in=64, d_out=64, context_length=512, dropout=0.0, num_heads=4)
lengths = [64, 128, 256, 512]
weights_bytes, row_stat_bytes = [], []
with torch.no_grad():
    for T in lengths:
        xt = torch.randn(4, T, 64)  # (b, T, d_in)
        _, w = small(xt, return_weights=True)  # (4, 4, T, T): stored by the explicit path
        weights_bytes.append(w.numel() * w.element_size())
        row_stat_bytes.append(w.shape[0] * w.shape[1] * T * w.element_size())  # (b, h, T)
        size = f"{tuple(w.shape)} = {weights_bytes[-1] / 2**20:6.2f} MiB"
        print(mh.say(f"T={T:>4}: weights {size}", f"T={T:>4}：权重 {size}"))
growth = weights_bytes[-1] / weights_bytes[0]
print(
    mh.say(f"8 x the tokens -> {growth:.0f} x the bytes", f"词元数 8 倍 -> 字节数 {growth:.0f} 倍"),
    end="",
)
print(
    ""
    if prediction is None
    else mh.say(f"  (you predicted {prediction})", f"  （你的预测是 {prediction}）")
)
assert growth == 64

# %%
fig = mh.figures.plot_attention_memory(
    lengths,
    weights_bytes,
    row_stat_bytes,
    title=mh.tr(
        "Extra memory of attention (b=4, h=4, float32)", "注意力的额外内存（b=4，h=4，float32）"
    ),
)
plt.show()

# %% [markdown]
# The weights grow with **T²**: T appears twice in their shape. FlashAttention (and SDPA's CPU
# "flash" kernel) cuts Q, K, V into tiles, keeps a running maximum and sum for the softmax of each
# row, and never writes the full matrix out: besides Q, K, V and the output, which grow as **T**,
# it stores only the (b, h, T) row statistics. On log-log axes a power law is a straight line: the
# weights' line climbs twice as steeply (slope 2) as the row statistics' (slope 1). At GPT-2
# small's width (12 heads, d = 768), float32, batch 1, for **one** (b, h, T, T) tensor of one
# layer (GPT-2 small itself stops at T = 1024; T = 4096 shows how the cost grows):


# %%
def attention_matrix_bytes(batch, heads, num_tokens, bytes_per_number=4):
    return batch * heads * num_tokens * num_tokens * bytes_per_number


def qkvo_bytes(batch, d_model, num_tokens, bytes_per_number=4):
    return 4 * batch * num_tokens * d_model * bytes_per_number  # Q, K, V and the output


MiB = 2**20
for T in [1024, 4096]:
    weights_big = attention_matrix_bytes(1, 12, T)
    linear_bytes = qkvo_bytes(1, 768, T)
    print(
        mh.say(
            f"T={T:>5}: (1, 12, T, T) weights = {weights_big:>11,} bytes = "
            f"{weights_big / MiB:5.0f} MiB   |   Q, K, V, out = {linear_bytes / MiB:3.0f} MiB",
            f"T={T:>5}：(1, 12, T, T) 的权重 = {weights_big:>11,} 字节 = "
            f"{weights_big / MiB:5.0f} MiB   |   Q、K、V 和输出 = {linear_bytes / MiB:3.0f} MiB",
        )
    )
assert attention_matrix_bytes(1, 12, 4096) == 16 * attention_matrix_bytes(1, 12, 1024)
assert qkvo_bytes(1, 768, 4096) == 4 * qkvo_bytes(1, 768, 1024)

# %% [markdown]
# Four times the tokens cost 16 times the memory for the weights (768 MiB for a single tensor at
# T = 4096, before counting the copies that the backward pass keeps), but only 4 times for
# Q, K, V and the output. That is why long-context models in practice rely on fused,
# memory-efficient kernels.
#
# ## 5. Where positions enter: RoPE and ALiBi
#
# Lesson 07 showed that attention alone ignores the order of the keys; lesson 08's model adds a
# learned **positional embedding** to the input. Most recent models instead put the position
# *inside* the attention block, in one of two places (this section shows where; it does not
# implement a full model):
#
# * **RoPE** (rotary position embedding, 旋转位置编码) acts on **Q and K after the projection**:
#   it rotates each pair of features of the query and key at position $p$ by an angle
#   $p\,\theta_i$, where pair $i$ (features $2i$ and $2i+1$) turns at its own speed
#   $\theta_i = 10000^{-2i/\text{head\_dim}}$: the first pair fast, the last ones slowly.
#   V is not touched.
# * **ALiBi** (attention with linear biases, 线性偏置注意力) acts on the **scores**: it adds
#   $-m_h\,(i - j)$ to the score of query $i$ and key $j$, a penalty that grows with distance,
#   with one slope $m_h$ per head.
#
# ```mermaid
# flowchart LR
#   X["x"] --> P["qkv projection"] --> S["Q, K, V (b, h, T, head_dim)"]
#   S -->|"Q, K"| R["RoPE: rotate by position"]
#   R --> SC["scores QK^T / sqrt(head_dim)"]
#   SC --> AB["ALiBi: + (-m_h (i - j))"]
#   AB --> MS["causal mask, softmax"]
#   S -->|"V unchanged"| WV["weights @ V"]
#   MS --> WV
# ```
#
# **RoPE in a few lines.** For a pair $(x_1, x_2)$ at position $p$:
# $(x_1 \cos p\theta - x_2 \sin p\theta,\; x_1 \sin p\theta + x_2 \cos p\theta)$.
# Rotating the query by $i\theta$ and the key by $j\theta$ leaves their dot product depending
# on $i - j$ only, because a rotation by $i\theta$ followed by the inverse of one by $j\theta$ is a
# rotation by $(i - j)\theta$.


# %%
def rope(t, base=10000.0):
    # rotates feature pairs (0, 1), (2, 3), ... of t (b, h, T, head_dim) by position * theta_i
    head_dim, num_tokens = t.shape[-1], t.shape[-2]
    theta = base ** (-torch.arange(0, head_dim, 2) / head_dim)  # (head_dim / 2,)
    angles = torch.arange(num_tokens)[:, None] * theta  # (T, head_dim / 2)
    cos, sin = angles.cos(), angles.sin()
    first, second = t[..., 0::2], t[..., 1::2]  # (b, h, T, head_dim / 2) each
    rotated = torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)
    return rotated.flatten(-2)  # (b, h, T, head_dim)


q, k, v = fused_mha.project(x)  # each (2, 2, 6, 2): (b, h, T, head_dim)
q_rot, k_rot = rope(q), rope(k)  # same shapes; only Q and K change
print("Q", tuple(q.shape), "-> RoPE ->", tuple(q_rot.shape))
context_rope = F.scaled_dot_product_attention(q_rot, k_rot, v, is_causal=True)  # (b, h, T, hd)
print(mh.say("context with RoPE:", "加了 RoPE 的上下文："), tuple(context_rope.shape))

# %% [markdown]
# To see the "relative position only" property, put the **same** token at every position: the
# query and key of "journey" (head 1), repeated 6 times. Without RoPE all 36 scores would be
# equal. With RoPE the score of query $i$ and key $j$ depends only on the offset $i - j$:

# %%
q_same = q[0, 0, 1].expand(6, -1).reshape(1, 1, 6, 2)  # "journey"'s query at every position
k_same = k[0, 0, 1].expand(6, -1).reshape(1, 1, 6, 2)  # and its key
scores_rope = (rope(q_same) @ rope(k_same).transpose(-2, -1))[0, 0]  # (T, T)
for offset in range(6):
    diagonal = torch.diagonal(scores_rope, offset=-offset)  # the scores with i - j = offset
    torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal))
fig = mh.figures.plot_relative_position_scores(
    scores_rope, title=mh.tr("RoPE: same token everywhere", "RoPE：处处是同一个词元")
)
plt.show()

# %% [markdown]
# **ALiBi** needs no change to Q or K at all: a float `attn_mask` is *added* to the scores inside
# SDPA, so the bias and the causal mask go in as one (h, T, T) tensor (`-inf` above the diagonal).
# With slopes $m_h = 2^{-8(h+1)/H}$ (the choice of the ALiBi paper, Press et al., 2022, for $H$ heads):

# %%
import math

H, T = 2, 6
slopes = torch.tensor([2 ** (-8 * (h + 1) / H) for h in range(H)])  # (h,)
distance = torch.arange(T)[:, None] - torch.arange(T)[None, :]  # (T, T): i - j
future = distance < 0  # True above the diagonal = hidden
alibi = -slopes[:, None, None] * distance  # (h, T, T)
bias = alibi.masked_fill(future, -torch.inf)  # (h, T, T)
context_alibi = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # (b, h, T, head_dim)
explicit = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(2) + bias, dim=-1) @ v
torch.testing.assert_close(context_alibi, explicit)
print(mh.say("ALiBi slopes per head:", "每个头的 ALiBi 斜率："), slopes)
print(
    mh.say(
        "SDPA with the ALiBi bias == explicit softmax(scores + bias) @ V:",
        "带 ALiBi 偏置的 SDPA == 显式的 softmax(scores + bias) @ V：",
    ),
    tuple(explicit.shape),
)

# %%
fig = mh.figures.plot_relative_position_scores(
    alibi[0].masked_fill(future, 0.0),
    title=mh.tr("ALiBi bias of head 1: -m (i - j)", "头 1 的 ALiBi 偏置：-m (i - j)"),
)
plt.show()

# %% [markdown]
# Both pictures have the same structure — constant along each diagonal — for different reasons:
# RoPE gets it from rotations of Q and K, ALiBi adds it to the scores directly. Either way the
# rest of the block (SDPA, the mask, `out_proj`) is unchanged, which is why both slot into the
# classes of this course without touching their shape contract. (With a KV cache, lesson 10,
# RoPE rotates each key once, at its own position, before it is cached.)
#
# ## 6. bfloat16 under autocast
#
# **bfloat16** numbers take half the bytes of float32; on hardware with bfloat16 matrix units
# (recent GPUs and some CPUs) they are also multiplied faster, which this lesson does not
# measure. bfloat16 keeps float32's range (8 exponent bits) but only 8 significant bits, so
# each number is rounded to about $2^{-8} \approx 0.4\%$ of its size. **Autocast** runs the
# matmuls of a block in bfloat16 while the parameters stay float32; you change nothing in the
# class:

# %%
torch.manual_seed(0)
block = mh.SDPAMultiHeadAttention(d_in=64, d_out=64, context_length=32, dropout=0.0, num_heads=4)
block.eval()
xb = torch.randn(2, 32, 64)  # (b, T, d_in), float32
with torch.no_grad():
    out32 = block(xb)  # (2, 32, 64) float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out16 = block(xb)  # (2, 32, 64) bfloat16
print(
    mh.say("parameters:", "参数："),
    block.qkv.weight.dtype,
    mh.say("| input:", "| 输入："),
    xb.dtype,
)
print(
    mh.say("output without autocast:", "不用 autocast 的输出："),
    out32.dtype,
    mh.say("| with autocast:", "| 用 autocast："),
    out16.dtype,
)
error = (out16.float() - out32).abs()  # (2, 32, 64)
relative = (error.max() / out32.abs().max()).item()
print(
    mh.say("largest error below 1% of the largest output:", "最大误差低于最大输出的 1%："),
    relative < 0.01,
)
below_step = (error / out32.abs().max() < 2**-8).float().mean().item()
assert relative < 0.01 and below_step > 0.95  # almost all below bfloat16's step
assert out16.dtype == torch.bfloat16 and block.qkv.weight.dtype == torch.float32
torch.testing.assert_close(out16.float(), out32, atol=2e-2, rtol=2e-2)

# %%
fig = mh.figures.plot_precision_error(out32, out16)
plt.show()

# %% [markdown]
# The points lie on the diagonal: the same function. The errors, measured against the largest
# output, are almost all below $2^{-8}$, bfloat16's step, and none reaches 1 %: rounding, not a
# bug. They do not shrink for small outputs, because a small output is a sum of larger products,
# and each of those was rounded. That is what "bfloat16 is good enough for attention" means in
# practice: the same function, computed less precisely, in half the memory. Training in bfloat16
# usually keeps float32 master weights (the optimizer's own full-precision copy of the weights,
# which each step updates; autocast does the same here) so that small updates are not
# rounded away. (The exact errors depend on your CPU's bfloat16 kernels, so this lesson prints only
# the comparison, not the numbers.)

# %% [markdown]
# ## 7. Softmax and masks in low precision
#
# Autocast keeps the softmax in float32 on purpose. What happens when the softmax itself runs in
# float16 or bfloat16? The block of section 6 gives the scores: its own Q and K for `xb`,
# causally masked, with float32 as the reference. `torch.finfo(dtype).eps` is the dtype's step
# at 1.

# %%
with torch.no_grad():
    q32, k32, _ = block.project(xb)  # each (2, 4, 32, 16): (b, h, T, head_dim)
future32 = torch.ones(32, 32, dtype=torch.bool).triu(diagonal=1)  # (T, T), True = hidden
scores32 = (q32 @ k32.transpose(-2, -1) / math.sqrt(16)).masked_fill(future32, -torch.inf)
reference = torch.softmax(scores32, dim=-1)  # (2, 4, 32, 32), float32
low_rows = []
for dtype in (torch.float16, torch.bfloat16):
    weights_low = torch.softmax(scores32.to(dtype), dim=-1)  # (2, 4, 32, 32) in dtype
    error = (weights_low.float() - reference).abs().max().item()
    off = (weights_low.float().sum(dim=-1) - 1).abs().max().item()
    low_rows.append((dtype, f"{torch.finfo(dtype).eps:.0e}", f"{error:.0e}", f"{off:.0e}"))
mh.show_table(
    low_rows,
    header=(
        "dtype",
        "eps",
        mh.say("largest error", "最大误差"),
        mh.say("row sums off by", "行和的偏差"),
    ),
)

# %% [markdown]
# bfloat16's error is about ten times float16's: it has 3 fewer significant bits. Either way
# the weights of a row no longer sum to exactly 1. That is rounding, and a model tolerates it.
# The masks are a different story. A fill value that is fine in float32 may not exist in a
# smaller type:

# %%
for dtype in (torch.float16, torch.bfloat16, torch.float32):
    lowest = torch.finfo(dtype).min
    as_dtype = torch.tensor(-1e9).to(dtype).item()
    print(
        f"{dtype!s:<16}",
        mh.say(
            f"lowest number {lowest:>10.3g}   -1e9 becomes {as_dtype:.4g}",
            f"最小的数 {lowest:>10.3g}   -1e9 变成 {as_dtype:.4g}",
        ),
    )
try:
    scores32.half().masked_fill(future32, -1e9)
except RuntimeError as error:
    print(
        mh.say(
            "float16 masked_fill(-1e9) raised:",
            "float16 的 masked_fill(-1e9) 报错（-1e9 超出了 float16 的范围）：",
        ),
        error,
    )
lowest16 = torch.finfo(torch.float16).min
print(
    mh.say("float16: -30 + lowest =", "float16：-30 + 最小的数 ="),
    (torch.tensor(-30.0).half() + lowest16).item(),
)

# %% [markdown]
# In float16 the largest number is 65504, so $-10^9$ is $-\infty$ (and `masked_fill` refuses to
# write it), and even the lowest number plus a score of -30 overflows to $-\infty$. bfloat16 has
# float32's range, so $-10^9$ survives, rounded. This is why Hugging Face fills with
# `torch.finfo(dtype).min` instead of a constant, and why this course fills with `-inf` and
# treats a row with no visible key on its own (lesson 11): any fill must be below every score,
# and no finite number is safe in every dtype.
#
# **The fix production code uses: upcast the softmax.** Hugging Face's Llama computes
# `softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)`: the scores may be low
# precision, the softmax runs and returns float32. Measured on the same scores:

# %%
upcast_rows = []
for dtype in (torch.float16, torch.bfloat16):
    upcast = torch.softmax(scores32.to(dtype), dim=-1, dtype=torch.float32)  # float32
    error = (upcast - reference).abs().max().item()
    off = (upcast.sum(dim=-1) - 1).abs().max().item()
    assert off < 1e-6, off
    back = (upcast.to(dtype).float() - reference).abs().max().item()  # .to(query.dtype)
    upcast_rows.append((dtype, f"{error:.0e}", "< 1e-06", f"{back:.0e}"))
mh.show_table(
    upcast_rows,
    header=(
        "dtype",
        mh.say("upcast error", "升精度误差"),
        mh.say("row sums off by", "行和的偏差"),
        mh.say("cast back: error", "转回后的误差"),
    ),
)
hand = torch.exp(20 * scores32.half())  # a softmax written by hand in float16, no max subtracted
print(
    mh.say("largest score x 20:", "最大分数 × 20："),
    round(20 * scores32.max().item(), 1),
    mh.say("| exp in float16:", "| 在 float16 中取 exp："),
    hand.max(),
)

# %% [markdown]
# Upcast, the weights keep only the rounding of the scores (8e-05 instead of 2e-04 in float16,
# 5e-04 instead of 2e-03 in bfloat16), and every row sums to 1 within $10^{-6}$, a few float32 steps (how many depends on the order
# in which your CPU adds a row, so the table prints the bound, not the step count). Cast back to the low dtype, as the
# next matmul needs, the error is the first table's again: torch's own softmax kernel already
# computes in float32 on this CPU and rounds only its result. So the upcast guards against the
# cases where that is not so: a kernel that accumulates in the low dtype, and softmaxes written
# by hand. The last line shows the worst one: $e^{x}$ overflows float16 for any $x > 11.1$, so
# a hand-written softmax that does not subtract the row maximum returns inf and then NaN.
#
# ## 8. A small benchmark on your machine
#
# Time a forward pass of lesson 06's class and of the SDPA class (same weights) for a few
# sequence lengths. The sizes are tiny so that the notebook stays fast; `benchmarks/attention.py`
# (`make bench`) does the real measurement at GPT-2 size. Times depend on your machine, so the
# next cell's output is not compared by CI (`NBVAL_IGNORE_OUTPUT`), but it still checks that
# every time is positive and sane.

# %%
# NBVAL_IGNORE_OUTPUT
import itertools
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
    for T in tqdm(lengths, desc=mh.say("sequence length", "序列长度")):
        xb = torch.randn(4, T, 64)  # (b, T, d_in)
        torch.testing.assert_close(fast(xb), teach(xb))
        ms["MultiHeadAttention"].append(1e3 * best_time(teach, xb))
        ms["SDPAMultiHeadAttention"].append(1e3 * best_time(fast, xb))
for T, slow_ms, fast_ms in zip(lengths, *ms.values()):
    print(
        mh.say(
            f"T={T:>4}: teaching {slow_ms:7.3f} ms   SDPA {fast_ms:7.3f} ms   "
            f"ratio {slow_ms / fast_ms:4.1f}x",
            f"T={T:>4}：教学版 {slow_ms:7.3f} ms   SDPA {fast_ms:7.3f} ms   "
            f"倍数 {slow_ms / fast_ms:4.1f}x",
        )
    )
ratios = [slow / quick for slow, quick in zip(*ms.values())]
faster = sum(ratio > 1 for ratio in ratios)
print(
    mh.say(
        f"SDPA faster at {faster} of {len(ratios)} lengths; ratios {min(ratios):.1f}x to "
        f"{max(ratios):.1f}x",
        f"SDPA 在 {len(ratios)} 个长度中的 {faster} 个上更快，倍数从 {min(ratios):.1f} 到 "
        f"{max(ratios):.1f}",
    )
)
grew = all(b > a for a, b in itertools.pairwise(ratios))
print(mh.say("the ratio grew at every longer T:", "倍数随 T 每一步都在增大："), grew)
for series in ms.values():
    assert all(0 < t < 2000 and math.isfinite(t) for t in series), series

# %%
fig = mh.figures.plot_forward_times(
    lengths, ms, title=mh.tr("Measured on this machine", "在本机上实测")
)
plt.show()

# %% [markdown]
# How large the speed gap is depends on the machine, and even on the run: the printed line
# before the last says at how many lengths SDPA was faster on yours, and by how much. Every build
# of this notebook has given other ratios, and they did **not** grow steadily with T. At these
# tiny sizes the fixed cost of each call weighs as much as the T² work, so this benchmark cannot
# say how the gap scales with T; the last printed line says whether it grew at every step on
# your machine. What holds at every size is the memory: SDPA keeps its extra memory linear in T
# (section 4).
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
# * RoPE rotates Q and K after the projection; ALiBi adds a distance penalty to the scores (a
#   float `attn_mask` in SDPA). Both make a score depend on the offset $i - j$.
# * Under `torch.autocast("cpu", dtype=torch.bfloat16)` the same block runs in bfloat16 with
#   float32 parameters; almost every error is below $2^{-8}$ of the largest output.
# * A softmax in float16 or bfloat16 is off by a fraction of its dtype's step (2e-04 in float16,
#   2e-03 in bfloat16) and its rows no longer sum
#   to 1; upcasting it (`softmax(..., dtype=torch.float32)`) leaves only the scores' rounding.
#   $-10^9$ is $-\infty$ in float16: fill with `-inf` or `torch.finfo(dtype).min`, never a
#   constant picked for float32.
# * `view(b, T, 3, h, head_dim).permute(2, 0, 3, 1, 4)` cuts a fused output into Q, K, V in
#   SDPA's (b, h, T, head_dim) layout; flash-attn takes the (b, T, h, head_dim) view directly.
#
# Next: lesson 10 uses these pieces to generate text token by token with a KV cache, lets a
# decoder attend to an encoder (cross-attention), and shrinks the cache with grouped-query
# attention.

# %% [markdown]
# ### Check (for CI; collapsed)
#
# This cell proves what the lesson relies on, so that a change to the package cannot silently
# break the story. Open it if you are curious; you can skip it.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# The fused class equals lesson 06's class to float rounding, not bit for bit: one
# (3 d_out x d_in) matmul may add its products in another order than three separate ones, so the
# last bit of a float can differ (about 1e-7 relative in float32).
torch.testing.assert_close(fused_mha(x), mha(x))
torch.testing.assert_close(sdpa_mha(x), mha(x))
assert torch.equal(fused_mha.qkv.weight, W_qkv)
assert sorted(fused_mha.state_dict()) == ["mask", "out_proj.bias", "out_proj.weight", "qkv.weight"]
largest_gap = (fused_mha(x) - mha(x)).abs().max().item()
print(
    mh.say(
        "fused == lesson 06 to float rounding:", "融合版 == 第 06 课的类，误差在浮点舍入范围内："
    ),
    largest_gap < 1e-6,
)

# %% [markdown]
# ## Exercises
#
# Solutions: `solutions/09_efficient_attention_solutions.ipynb`.
#
# **Exercise 1.** The other way round: `fused_ex` below is a fused module (say, loaded from a
# checkpoint). Cut its **W_key** weight, shape (d_out, d_in), out of `fused_ex.qkv.weight`.

# %%
torch.manual_seed(7)
fused_ex = mh.FusedQKVMultiHeadAttention(
    d_in=5, d_out=6, context_length=8, dropout=0.0, num_heads=3
)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_key_block(answer, fused_ex)

# %% [markdown]
# **Exercise 2.** GPT-2 XL has 25 heads and a context of 1024 tokens. Say one layer's float32
# attention-weight tensor (b, h, T, T), for one sequence (batch 1), may take at most 1 GiB
# ($2^{30}$ bytes). What is the longest context T whose weights still fit? Give an int. (The
# memory function above goes from T to bytes; here you go the other way.)

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_longest_context(answer)

# %% [markdown]
# **Exercise 3 (build it).** Write the fused-QKV multi-head attention class yourself: the same
# constructor as lesson 06's `MultiHeadAttention`,
# `(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`, with **one**
# `self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)`, `self.out_proj`, `self.dropout` and a
# causal `mask` buffer; `forward(x)` maps (b, T, d_in) to (b, T, d_out). Follow the flowchart at
# the top: project, split Q, K, V, view to (b, T, h, head_dim) and transpose, scaled scores,
# mask, softmax, dropout, weights @ V, merge the heads, `out_proj`.
#
# The checker builds your class at three sizes, copies the package's weights into `qkv` and
# `out_proj`, and compares with `mh.FusedQKVMultiHeadAttention`; it also tests causality, rows
# summing to 1, dropout in train vs eval mode and gradient flow, and names the usual mistakes.


# %%
class MyFusedAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # YOUR CODE HERE: self.qkv, self.out_proj, self.dropout, the mask buffer

    def forward(self, x):
        # YOUR CODE HERE: (b, T, d_in) -> (b, T, d_out)
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_build_fused_multihead(MyFusedAttention)
