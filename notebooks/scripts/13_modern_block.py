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
# # 13 · The modern block: RoPE, RMSNorm, SwiGLU, QK-norm (现代解码器块)
#
# Lesson 12's block is GPT-2's (2019). The open models of today (Llama, Qwen, Mistral and their
# relatives) keep its shape, pre-norm attention then a feed-forward network, each with a residual
# connection, but swap three of its parts: RoPE, RMSNorm and SwiGLU. Newer models (Qwen3, OLMo 2,
# Gemma 3) add a fourth, QK-norm. This lesson takes them one at a time, shows what each one does
# with the lesson's own tensors, and assembles them into the decoder block that Hugging Face's
# `LlamaDecoderLayer` computes; with `qk_norm=True` the block is Qwen3's `Qwen3DecoderLayer`.
#
# **Learning goals**
# 1. **Rotary position embedding** (RoPE, 旋转位置编码): rotate pairs of query and key features
#    by an angle that grows with the position, and see, in numbers and in a figure, that a score
#    then depends only on the offset between two tokens; know where it acts (q and k, never v),
#    its two pairing conventions, and how it works with a KV cache.
# 2. **RMSNorm** (均方根归一化): layer norm without the mean and the bias, equal to
#    `torch.nn.RMSNorm`.
# 3. **SwiGLU** (门控前馈网络): a feed-forward network with a SiLU gate, and the width rule that
#    keeps GPT-2's parameter count.
# 4. **QK-norm** (QK 归一化): measure what it does to the size of the scores and to a training
#    run at a high learning rate.
# 5. Assemble the modern block, count its parameters beside GPT-2's, and build `apply_rope`,
#    RMSNorm and SwiGLU yourself.
#
# **Prerequisites:** lesson 09 (a first look at RoPE), lesson 10 (the KV cache, GQA), lesson 12
# (the pre-norm block, layer norm, GELU, a training loop with AdamW).
# **Time:** about 120 minutes (reading, running 22 code cells, 1 exercise, 3 build-its; the rule is
# in lesson 00).
#
# **Shape contract:** the block maps `(b, T, d_model)` to `(b, T, d_model)`; inside attention,
# queries `(b, h, T, head_dim)`, keys and values `(b, g, T, head_dim)` (g K/V heads, GQA), and
# RoPE's tables cos and sin `(T, head_dim)`.

# %%
import math

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch.nn import functional as F

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers import lm

mh.setup_lesson()

# %% [markdown]
# ## 1. RoPE: positions as rotations
#
# GPT-2 *adds* a learned vector to each token for its position, once, at the input (lesson 12).
# RoPE (Su et al., 2021) adds nothing. Inside every attention layer it *turns* each query and
# each key by an angle that depends on the token's position. The `head_dim` features of a head
# are taken in pairs, feature $i$ with feature $i + d/2$ ($d$ = `head_dim`), and pair $i$ of the
# token at position $m$ turns by the angle $m\,\theta_i$. (Lesson 09's `rope()` paired neighbours,
# $2i$ with $2i + 1$: the same rotation with the features in another order, the "interleaved"
# convention of "Two ways to pair the features" below. This lesson pairs $i$ with $i + d/2$, as Hugging Face's Llama
# does.)
#
# $$
# \begin{pmatrix} x'_i \\ x'_{i+d/2} \end{pmatrix} =
# \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
# \begin{pmatrix} x_i \\ x_{i+d/2} \end{pmatrix},
# \qquad \theta_i = 10000^{-2i/d}, \quad i = 0, \dots, d/2 - 1 .
# $$
#
# Pair 0 turns by one radian per position, the last pair hardly at all: fast and slow hands of a
# clock. Write $R_m$ for the whole rotation at position $m$. A rotation keeps lengths, its
# transpose turns back ($R_m^\top = R_{-m}$), and two turns add up, so the score of a query at
# position $m$ and a key at position $n$ is
#
# $$
# (R_m q)^\top (R_n k) = q^\top R_m^\top R_n\, k = q^\top R_{n-m}\, k :
# $$
#
# it depends on the positions only through their **offset** $m - n$. First the rotation by hand,
# one pair at a time, exactly as the formula says:

# %%
head_dim = 8
theta = 10000 ** (-torch.arange(0, head_dim, 2) / head_dim)  # (head_dim / 2,): one speed a pair
print("theta_i:", theta)


def rotate_pairs(x, m):  # x: (head_dim,), the token at position m
    half = len(x) // 2
    out = x.clone()
    for i in range(half):  # pair i: features i and i + half
        c, s = torch.cos(m * theta[i]), torch.sin(m * theta[i])
        out[i] = c * x[i] - s * x[i + half]
        out[i + half] = s * x[i] + c * x[i + half]
    return out  # (head_dim,)


torch.manual_seed(123)
q = torch.randn(head_dim)  # one query (head_dim,)
k = torch.randn(head_dim)  # one key (head_dim,)
print(mh.say("length of q before and after turning it to position 7:", "q 转到位置 7 前后的长度："))
print(round(q.norm().item(), 4), round(rotate_pairs(q, 7).norm().item(), 4))

# %% [markdown]
# **Predict, then run.** The next cell puts the query at position 5 and the key at position 3,
# then both 35 positions further on (40 and 38). Will the two scores be equal, and what about the
# query at 3 and the key at 5?

# %%
print(mh.say("without RoPE, q . k =", "没有 RoPE 时，q . k ="), round((q @ k).item(), 4))
for m, n in [(2, 0), (5, 3), (40, 38), (3, 5), (7, 0)]:
    score = rotate_pairs(q, m) @ rotate_pairs(k, n)
    print(
        mh.tr(
            f"query at {m:>2}, key at {n:>2} (offset {m - n:>2}): score {score:.4f}",
            f"查询在 {m:>2}，键在 {n:>2}（偏移 {m - n:>2}）：分数 {score:.4f}",
        )
    )

# %% [markdown]
# Offset 2 gives one score wherever the pair sits; offset -2 (the key *after* the query) gives
# another, and so does offset 7. In a causal model only offsets $\ge 0$ occur.
#
# The package computes the same rotation for a whole sequence at once: `mh.rope_cos_sin`
# builds the tables of $\cos m\theta_i$ and $\sin m\theta_i$, shape `(T, head_dim)`: row $m$
# holds the `head_dim / 2` angles $m\theta_0, \dots, m\theta_{d/2-1}$ **twice**, once for each
# member of a pair (the cell prints `cos[1]`), so that they line up with the features $i$ and
# $i + d/2$. `mh.apply_rotary_pos_emb` turns queries and keys with them (Hugging Face's names).
# For the figure, put the **same** query and key at each of 6 positions: without RoPE all 36
# scores would be equal (the figure shows the 21 a causal model uses); with it, each diagonal
# (one offset) holds one value.

# %%
T = 6
cos, sin = mh.rope_cos_sin(torch.arange(T), head_dim)  # (T, head_dim) each
print("cos[1]:", cos[1])  # position 1: cos(theta_i) for i = 0..3, then the same 4 again
q_seq, k_seq = mh.apply_rotary_pos_emb(q.expand(T, -1), k.expand(T, -1), cos, sin)  # (T, hd)
for m in range(T):  # the package's rotation is the one by hand, row by row
    torch.testing.assert_close(q_seq[m], rotate_pairs(q, m))
scores = q_seq @ k_seq.T  # (T, T): query i, key j
for offset in range(T):
    diagonal = torch.diagonal(scores, offset=-offset)  # the scores with i - j = offset
    torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal))
print(mh.say("offset 2, every position:", "偏移 2，各个位置："), torch.diagonal(scores, offset=-2))
fig = mh.figures.plot_relative_position_scores(
    scores,
    title=mh.tr("RoPE: the same q and k at every position", "RoPE：每个位置上是同样的 q 和 k"),
)
fig.axes[0].legend(fontsize=9, ncol=3, loc="lower left", bbox_to_anchor=(0.0, 0.15))  # a free spot
fig.axes[-1].set_ylabel(mh.tr("score", "分数"))  # the colour bar
plt.show()


# %% [markdown]
# ### Where RoPE acts: on q and k, never on v
#
# ```mermaid
# flowchart LR
#     x["x (b, T, d_model)"] --> Q["q_proj"] --> RQ["RoPE"] --> S["scores q·k / √d"]
#     x --> K["k_proj"] --> RK["RoPE"] --> S
#     S --> W["causal softmax"] --> C["weights @ v"]
#     x --> V["v_proj (not rotated)"] --> C
#     C --> O["o_proj"]
# ```
#
# After the projections, before the scores: the rotation is there to make the *scores* see
# offsets. The values are what the weights average, the content a token passes on; a rotated
# value would carry its absolute position into the output. `mh.ModernAttention` (Llama's
# attention, on the course's core) does exactly this. Below, its queries and keys are rotated by
# hand at positions 0..4 and again at 50..54: the scores do not change, because every offset
# stays the same. Rotated values would change.

# %%
torch.manual_seed(123)
attn = mh.ModernAttention(d_model=16, context_length=64, num_heads=2, num_kv_groups=1).eval()
x = torch.randn(1, 5, 16)  # (b, T, d_model)
with torch.no_grad():
    q_heads = attn.q_proj(x).view(1, 5, 2, 8).transpose(1, 2)  # (b, h, T, head_dim)
    k_heads = attn.k_proj(x).view(1, 5, 1, 8).transpose(1, 2)  # (b, g, T, head_dim)
    v_heads = attn.v_proj(x).view(1, 5, 1, 8).transpose(1, 2)  # (b, g, T, head_dim)
    by_start = {}
    for start in (0, 50):
        cos5, sin5 = mh.rope_cos_sin(torch.arange(start, start + 5), 8)  # (T, head_dim)
        q_rot, k_rot = mh.apply_rotary_pos_emb(q_heads, k_heads, cos5, sin5)
        v_rot, _ = mh.apply_rotary_pos_emb(v_heads, v_heads, cos5, sin5)  # what RoPE never does
        by_start[start] = (q_rot @ k_rot.transpose(-2, -1) / math.sqrt(8), v_rot)  # (b,h,T,T)
    _, weights = attn(x, return_weights=True)  # (b, h, T, T)
causal = torch.ones(5, 5).triu(1).bool()
torch.testing.assert_close(
    torch.softmax(by_start[0][0].masked_fill(causal, -torch.inf), -1), weights
)
score_change = (by_start[50][0] - by_start[0][0]).abs().max().item()
value_change = (by_start[50][1] - by_start[0][1]).abs().max().item()
print(
    mh.say(
        "largest change of a score, positions 0.. -> 50..:", "分数的最大变化（位置 0.. -> 50..）："
    ),
    f"{score_change:.6f}",
)
print(
    mh.say(
        "largest change of a value, if v were rotated:   ", "如果旋转 v，值的最大变化：           "
    ),
    f"{value_change:.4f}",
)
assert score_change < 1e-4 < 0.1 < value_change

# %% [markdown]
# The scores by hand equal the module's attention weights after the causal softmax (the cell
# checks it), and moving the whole sentence 50 places on changes no score by more than float
# rounding.
#
# ### Two ways to pair the features
#
# Which features form a pair is a convention. Hugging Face's Llama and Qwen pair feature $i$ with
# $i + d/2$ (**rotate-half**, as above). The RoPE paper and Meta's original Llama code pair
# neighbours, $(2i, 2i + 1)$ (**interleaved**). Both are the same rotation, applied to the
# features in another order: `mh.interleaved_to_half(head_dim)` is the permutation
# `0 2 4 .. 1 3 5 ..` that takes one layout to the other. Since a dot product does not care in
# which order the features are listed, permuting each head's rows of $W_q$ and $W_k$ turns a
# checkpoint of one convention into one of the other, with the same scores.

# %%
perm = mh.interleaved_to_half(head_dim)
print("interleaved_to_half:", perm.tolist())
torch.manual_seed(123)
q6, k6 = torch.randn(6, head_dim), torch.randn(6, head_dim)  # 6 tokens (T, head_dim)
cos6, sin6 = mh.rope_cos_sin(torch.arange(6), head_dim)  # (T, head_dim)
q_inter = mh.apply_rotary_interleaved(q6, cos6, sin6)  # neighbours paired (T, head_dim)
k_inter = mh.apply_rotary_interleaved(k6, cos6, sin6)
q_half, k_half = mh.apply_rotary_pos_emb(q6[:, perm], k6[:, perm], cos6, sin6)  # permuted first
torch.testing.assert_close(q_inter[:, perm], q_half)  # the same numbers, in another order
scores_inter, scores_half = q_inter @ k_inter.T, q_half @ k_half.T  # (T, T) each
torch.testing.assert_close(scores_inter, scores_half)
print(
    mh.say("largest score difference between the conventions:", "两种约定的分数最大差："),
    f"{(scores_inter - scores_half).abs().max().item():.6f}",
)
q_plain, k_plain = mh.apply_rotary_pos_emb(q6, k6, cos6, sin6)  # rotate-half, not permuted
scores_plain = q_plain @ k_plain.T  # (T, T)
print(
    mh.say("without the permutation:", "不做置换时："),
    f"{(scores_inter - scores_plain).abs().max().item():.4f}",
)

# %% [markdown]
# ### RoPE with a KV cache
#
# With a KV cache (lesson 10) the model sees one new token at a time. The cache holds keys that
# are **already rotated**, each at its own position, and never turns them again; the new token
# must be rotated at its *true* position, `offset = len(cache)` (the start position, not an
# offset between two tokens), not at 0. `mh.ModernAttention` reads it from the cache and keeps
# RoPE's tables in `attn.rotary_emb`, an `mh.RotaryEmbedding`: `rotary_emb(x, offset)` returns
# the cos and sin rows of positions `offset .. offset + T - 1` (its third argument,
# `position_ids`, gives each row of a padded batch its own positions; unused here). One token at
# a time then equals one pass over the whole sequence:

# %%
torch.manual_seed(123)
attn = mh.ModernAttention(d_model=16, context_length=32, num_heads=4, num_kv_groups=2).eval()
x = torch.randn(2, 7, 16)  # (b, T, d_model)
with torch.no_grad():
    full = attn(x)  # (b, T, d_model): all 7 tokens in one pass
    cache = mh.KVCache(32)
    steps = [attn(x[:, t : t + 1], cache=cache) for t in range(7)]  # each (b, 1, d_model)
    cached = torch.cat(steps, dim=1)  # (b, T, d_model)
    k_all = attn.k_proj(x).view(2, 7, 2, 4).transpose(1, 2)  # (b, g, T, head_dim)
    cos7, sin7 = mh.rope_cos_sin(torch.arange(7), attn.head_dim)  # (T, head_dim)
    _, k_rotated = mh.apply_rotary_pos_emb(k_all, k_all, cos7, sin7)  # (b, g, T, head_dim)
print(cache)
torch.testing.assert_close(cache.keys, k_rotated)  # the cache holds the rotated keys
print(
    mh.say("cached, token by token == one full pass:", "用缓存逐个词元 == 一次完整计算："),
    torch.allclose(cached, full, atol=1e-6),
)


class ForgetsOffset(mh.RotaryEmbedding):
    # a slip: every new token is rotated as if it were at position 0

    def forward(self, x, offset=0, position_ids=None):
        return super().forward(x, 0, position_ids)


broken = mh.ModernAttention(d_model=16, context_length=32, num_heads=4, num_kv_groups=2).eval()
broken.load_state_dict(attn.state_dict())
broken.rotary_emb = ForgetsOffset(attn.head_dim, 32)
with torch.no_grad():
    broken_cache = mh.KVCache(32)
    broken_steps = torch.cat([broken(x[:, t : t + 1], cache=broken_cache) for t in range(7)], 1)
error = (broken_steps - full).abs().amax(dim=(0, 2))  # (T,): the largest error per position
print(
    mh.say(
        "without the offset, largest error per position:", "忘了起始位置时，每个位置的最大误差："
    ),
    error,
)
print(
    mh.say("for scale, the largest output:", "作为参照，输出的最大绝对值："),
    round(full.abs().max().item(), 4),
)
assert error[0] < 1e-6 and (error[1:] > 1e-2).all()

# %% [markdown]
# Token 0 is right (its true position *is* 0); from token 1 on, every new query and key is turned
# as if it stood at position 0, so the offsets the scores see are wrong and so is every output.
#
# ## 2. RMSNorm: keep the size, drop the centre
#
# Layer norm (lesson 12) centres each token's vector, divides by its standard deviation, then
# scales and shifts it with two learned vectors $\gamma$ and $\beta$:
#
# $$
# \mathrm{LayerNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\,\gamma + \beta, \qquad
# \mathrm{RMSNorm}(x) = \frac{x}{\sqrt{\tfrac{1}{d}\sum_j x_j^2 + \epsilon}}\,\gamma .
# $$
#
# RMSNorm (Zhang & Sennrich, 2019) drops the mean $\mu$ and the shift $\beta$: it only divides by
# the **root mean square** (均方根), so that every vector leaves with the same size. What keeps
# deep stacks trainable is that the sizes of the vectors stay under control. Zhang and Sennrich
# ("Root Mean Square Layer Normalization", 2019) found that re-centring adds little: models
# train about as well without it, and one statistic is cheaper to compute than two. So an RMSNorm
# has one learned vector, $\gamma$ (the paper allows an optional shift; Llama and the models after
# it leave it out).

# %%
torch.manual_seed(123)
x = 0.5 * torch.randn(3, 6) + torch.tensor([[2.0], [-1.0], [0.0]])  # 3 tokens, d=6, shifted rows
layer_normed = F.layer_norm(x, (6,))  # no gamma, no beta
rms_normed = F.rms_norm(x, (6,))  # no gamma


def rms(t):  # root mean square of each row
    return t.pow(2).mean(-1).sqrt()


def mean(t):  # each row's mean, to 4 places; + 0.0 shows -0.0 as 0.0
    return t.mean(-1).round(decimals=4) + 0.0


mh.show_table(
    [
        (mh.say("input", "输入"), mean(x), rms(x)),
        ("LayerNorm", mean(layer_normed), rms(layer_normed)),
        ("RMSNorm", mean(rms_normed), rms(rms_normed)),
    ],
    header=("", mh.say("mean", "均值"), "RMS"),
)
centred = x - x.mean(-1, keepdim=True)  # (3, 6)
torch.testing.assert_close(F.rms_norm(centred, (6,)), F.layer_norm(x, (6,)), atol=1e-4, rtol=0)
layer_norm_count = sum(p.numel() for p in nn.LayerNorm(6).parameters())  # weight and bias
rms_norm_count = sum(p.numel() for p in mh.RMSNorm(6).parameters())  # weight only
print(
    mh.say("parameters of LayerNorm(6) and RMSNorm(6):", "LayerNorm(6) 与 RMSNorm(6) 的参数个数："),
    layer_norm_count,
    rms_norm_count,
)

# %% [markdown]
# Both outputs have RMS 1; only layer norm's rows have mean 0. On a centred vector the two are
# the same function (the cell checks it). `mh.RMSNorm` is what the package's modern block uses;
# like Hugging Face's `LlamaRMSNorm` it computes in float32 and casts back, and it equals
# `torch.nn.RMSNorm`:

# %%
torch.manual_seed(123)
ours, theirs = mh.RMSNorm(6, eps=1e-6), nn.RMSNorm(6, eps=1e-6)
with torch.no_grad():
    ours.weight.normal_()
    theirs.weight.copy_(ours.weight)
print(ours)
torch.testing.assert_close(ours(x), theirs(x))
print(
    mh.say("mh.RMSNorm == torch.nn.RMSNorm:", "mh.RMSNorm == torch.nn.RMSNorm："),
    tuple(ours(x).shape),
)  # (3, 6)

# %% [markdown]
# ## 3. SwiGLU: a gated feed-forward network
#
# GPT-2's feed-forward network widens each token's vector to $4d$, applies GELU and narrows it
# back: two matrices. SwiGLU (Shazeer, 2020) computes *two* widened vectors from the same input;
# one goes through **SiLU** and multiplies the other element by element, like a gate that opens
# or closes each hidden feature for this token:
#
# $$
# \mathrm{SiLU}(z) = z\,\sigma(z), \qquad
# \mathrm{SwiGLU}(x) = W_{down}\big(\mathrm{SiLU}(W_{gate}\,x) \odot W_{up}\,x\big),
# $$
#
# $\sigma(z) = 1 / (1 + e^{-z})$ the logistic sigmoid and $\odot$ the element-wise product; no
# biases. SiLU (also called
# Swish) looks like GELU: smooth, near 0 for large negative inputs, near the identity for large
# positive ones.

# %%
z = torch.tensor([-4.0, -1.0, -0.5, 0.0, 0.5, 1.0, 4.0])
print("z:       ", z)
print("SiLU(z): ", F.silu(z))  # z * sigmoid(z)
print("GELU(z): ", F.gelu(z))
torch.testing.assert_close(F.silu(z), z * torch.sigmoid(z))

# %% [markdown]
# **The width rule.** Three matrices of shape $(d, h)$ hold $3dh$ numbers, GPT-2's two of shape
# $(d, 4d)$ hold $8d^2$. With $h = \tfrac{2}{3} \cdot 4d = \tfrac{8}{3}d$ the counts match, so a
# model can swap its feed-forward network without growing. Llama rounds $h$ up to a multiple of
# 256: at $d = 4096$ (Llama 2 7B) that gives 11,008, the `intermediate_size` in its config.

# %%
d_model = 768  # GPT-2 small's width
gelu_ff = lm.FeedForward(d_model, 4 * d_model)  # fc_in, GELU, fc_out, with biases
swiglu = mh.SwiGLU(d_model)  # gate_proj, up_proj, down_proj, no biases
print(swiglu)
mh.show_table(
    [
        (
            mh.say("GELU feed-forward", "GELU 前馈网络"),
            f"4d = {4 * d_model}",
            f"{sum(p.numel() for p in gelu_ff.parameters()):,}",
        ),
        (
            "SwiGLU",
            f"2/3 * 4d = {swiglu.hidden_dim}",
            f"{sum(p.numel() for p in swiglu.parameters()):,}",
        ),
    ],
    header=("", mh.say("hidden width", "隐藏宽度"), mh.say("parameters", "参数个数")),
)
print(
    mh.say(
        "Llama 2 7B's width: swiglu_hidden_dim(4096, 256) =",
        "Llama 2 7B 的宽度：swiglu_hidden_dim(4096, 256) =",
    ),
    mh.swiglu_hidden_dim(4096, 256),
)

# %% [markdown]
# The difference, 3,840, is GPT-2's biases ($4d + d$). Shazeer measured gated feed-forward
# networks of equal size beside GELU and ReLU ones and found them better on his language
# modelling and fine-tuning tasks (fine-tuning: training a trained model further on a narrower
# task); this lesson does not repeat that measurement.
#
# ## 4. QK-norm: RMSNorm on each head's q and k
#
# A score is $q \cdot k / \sqrt{d}$, and nothing in lesson 12's block limits how long $q$ and $k$
# grow during training. When scores grow large, the softmax puts nearly all weight on one key,
# and its gradients become tiny. **QK-norm** applies an RMSNorm to each head's query and key
# (over the `head_dim` features, with learned weights $\gamma_q, \gamma_k$), after the
# projections and **before** RoPE (Qwen3, Gemma 3; OLMo 2 normalises all heads' queries, and all
# keys, together over the whole projection, also before RoPE). A vector of RMS 1 has length $\sqrt{d}$, and
# RoPE keeps lengths, so with the weights at their initial ones every score is bounded:
#
# $$
# \left|\frac{q \cdot k}{\sqrt{d}}\right| \le \frac{\lVert q\rVert\,\lVert k\rVert}{\sqrt d}
# = \sqrt{d} \qquad (\text{times } \max|\gamma_q| \cdot \max|\gamma_k| \text{ once they learn}).
# $$
#
# To see the scores, `scores_of` repeats the module's steps by hand (checked against its weights).
# Then we blow up $W_q$ and $W_k$ tenfold, as a long training run might:


# %%
def scores_of(attn, x):  # the scaled scores of a ModernAttention, (b, h, T, T)
    b, n, _ = x.shape
    q = attn.q_proj(x).view(b, n, attn.num_heads, attn.head_dim)  # (b, T, h, head_dim)
    k = attn.k_proj(x).view(b, n, attn.num_kv_groups, attn.head_dim)  # (b, T, g, head_dim)
    if attn.qk_norm:
        q, k = attn.q_norm(q), attn.k_norm(k)  # RMSNorm over head_dim, before RoPE
    q, k = q.transpose(1, 2), k.transpose(1, 2)  # (b, h, T, hd), (b, g, T, hd)
    cos, sin = attn.rotary_emb(q)  # (T, head_dim)
    q, k = mh.apply_rotary_pos_emb(q, k, cos, sin)
    k = k.repeat_interleave(attn.num_heads // attn.num_kv_groups, dim=1)  # (b, h, T, head_dim)
    return q @ k.transpose(-2, -1) / math.sqrt(attn.head_dim)


torch.manual_seed(123)
x = torch.randn(4, 12, 32)  # (b, T, d_model)
for qk_norm in (False, True):
    torch.manual_seed(123)
    attn = mh.ModernAttention(32, 16, num_heads=4, num_kv_groups=2, qk_norm=qk_norm).eval()
    with torch.no_grad():
        s = scores_of(attn, x)  # (b, h, T, T)
        causal = torch.ones(12, 12).triu(1).bool()
        torch.testing.assert_close(
            torch.softmax(s.masked_fill(causal, -torch.inf), -1), attn(x, return_weights=True)[1]
        )
        before = s.masked_fill(causal, 0).abs().max().item()
        attn.q_proj.weight.mul_(10)
        attn.k_proj.weight.mul_(10)
        after = scores_of(attn, x).masked_fill(causal, 0).abs().max().item()
    print(
        mh.tr(
            f"qk_norm={qk_norm!s:>5}: largest |score| {before:7.2f}, with W_q, W_k x10: {after:7.2f}",
            f"qk_norm={qk_norm!s:>5}：最大 |分数| {before:7.2f}，W_q、W_k 放大 10 倍后：{after:7.2f}",
        )
    )
print(mh.say("the bound sqrt(head_dim) =", "上界 sqrt(head_dim) ="), round(math.sqrt(8), 2))

# %% [markdown]
# Without QK-norm the scores grow 100-fold (10 × 10); with it they do not move, and they stay
# below $\sqrt{8} \approx 2.83$. QK-norm does not make scores small (here they start larger than
# without it): it fixes their size, whatever the size of $W_q$ and $W_k$.
#
# **At a high learning rate.** A tiny model (embedding → one modern block → RMSNorm → LM head;
# the block is `mh.ModernDecoderLayer`, the package's copy of the block section 5 assembles;
# a 16-token vocabulary, sequences of 16) learns to output the token two places back: a task for attention with relative
# positions. It trains for 60 AdamW steps, with and without QK-norm, at a usual learning rate
# (0.003) and at a high one (0.2). Each run takes a fraction of a second.

# %%
# NBVAL_IGNORE_OUTPUT
# At lr 0.2 these runs are chaotic: the last bits of a processor's arithmetic change their
# later digits, so the output is not compared digit by digit; the asserts check what holds.
vocab, T_toy, d_toy, heads_toy = 16, 16, 32, 4


class TinyModern(nn.Module):
    def __init__(self, qk_norm):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_toy)
        self.block = mh.ModernDecoderLayer(d_toy, T_toy, heads_toy, heads_toy, qk_norm=qk_norm)
        self.norm = mh.RMSNorm(d_toy)
        self.head = nn.Linear(d_toy, vocab, bias=False)

    def forward(self, ids):  # (b, T) -> logits (b, T, vocab)
        return self.head(self.norm(self.block(self.emb(ids))))


gen = torch.Generator().manual_seed(0)
pool = torch.randint(vocab, (512, T_toy + 2), generator=gen)  # random token rows


def train_toy(qk_norm, lr, steps=60):
    torch.manual_seed(123)  # the same initial weights and batches in every run
    gen.manual_seed(1)
    model = TinyModern(qk_norm)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        rows = pool[torch.randint(len(pool), (32,), generator=gen)]  # (32, T + 2)
        inputs, targets = rows[:, 2:], rows[:, :-2]  # target: the token two places back
        loss = F.cross_entropy(model(inputs).reshape(-1, vocab), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():  # the scores on the last batch, after the last step
        h = model.block.input_layernorm(model.emb(inputs))  # what the attention reads
        largest = scores_of(model.block.self_attn, h).abs().max().item()
    return model, losses, largest


runs = {(lr, qk): train_toy(qk, lr) for lr in (0.003, 0.2) for qk in (False, True)}
print(mh.say("chance level: ln 16 =", "随机水平：ln 16 ="), round(math.log(vocab), 3))
toy_rows = []
for (lr, qk), (_, losses, largest) in runs.items():
    last = sum(losses[-10:]) / 10
    shown = (losses[0], losses[19], losses[39], last)
    toy_rows.append((lr, qk, *(f"{loss:.2f}" for loss in shown), f"{largest:.1f}"))
mh.show_table(
    toy_rows,
    header=(
        "lr",
        "qk_norm",
        mh.say("loss: step 1", "损失：第 1 步"),
        mh.say("step 20", "第 20 步"),
        mh.say("step 40", "第 40 步"),
        mh.say("steps 51-60, mean", "第 51-60 步平均"),
        mh.say("largest |score|, step 60", "第 60 步最大 |分数|"),
    ),
)
learned = runs[(0.2, True)][0].block.self_attn  # its q_norm and k_norm weights have learned
bound = math.sqrt(8) * learned.q_norm.weight.abs().max() * learned.k_norm.weight.abs().max()
print(
    mh.say(
        "lr 0.2 with QK-norm: the bound sqrt(8) * max|w_q| * max|w_k| =",
        "lr 0.2、有 QK 归一化：上界 sqrt(8) * max|w_q| * max|w_k| =",
    ),
    round(bound.item(), 1),
)
assert runs[(0.2, True)][2] <= bound
stalled, learned = runs[(0.2, False)], runs[(0.2, True)]
assert abs(sum(stalled[1][20:]) / 40 - math.log(vocab)) < 0.3 and stalled[2] > 1000
assert sum(learned[1][-10:]) / 10 < 1.2  # with QK-norm it learns


# %%
fig, axes = plt.subplots(2, 1, figsize=(8, 6.4), layout="constrained", sharex=True)
for ax, lr in zip(axes, (0.003, 0.2)):
    for qk, style in ((False, "-"), (True, "--")):
        ax.plot(runs[(lr, qk)][1], style, label=mh.tr(f"qk_norm={qk}", f"qk_norm={qk}"))
    ax.axhline(
        math.log(vocab),
        color="grey",
        linewidth=1,
        label=mh.tr("chance (ln 16)", "随机水平（ln 16）"),
    )
    ax.set_ylabel(mh.tr("training loss", "训练损失"))
    ax.set_title(mh.tr(f"AdamW, learning rate {lr}", f"AdamW，学习率 {lr}"))
    ax.legend()
axes[1].set_xlabel(mh.tr("step", "步数"))
plt.show()

# %% [markdown]
# What these runs show, and no more: at the usual learning rate the two runs are close (neither
# has finished learning in 60 steps; every run starts a little above chance, at 2.94, because
# the untrained logits are not all equal). At 0.2 both losses first jump higher, the run with
# QK-norm higher; then, without QK-norm the largest score grows to many thousands, the softmax
# puts all its weight on one key, and after the jump the loss stays near chance (ln 16 ≈ 2.77) to
# the last step; with QK-norm the largest score stays near 100 and the loss falls below 1. The
# learned norm weights let the scores grow past $\sqrt{8}$, but never past the bound they set
# (the last line). At this learning rate the runs are chaotic: the last bits of a processor's
# arithmetic change their later digits, so your table may differ from this one after step 1,
# and the cell checks only what holds on every machine. One toy and one seed are not a general
# law; QK-norm is what Qwen3, OLMo 2 and Gemma 3 use to keep their large runs stable.
#
# ## 5. The modern block, assembled
#
# ```mermaid
# flowchart LR
#     x["x (b, T, d)"] --> N1["RMSNorm"] --> A["GQA + RoPE<br/>(QK-norm, sliding window)"]
#     A --> P1(("+"))
#     x --> P1
#     P1 --> N2["RMSNorm"] --> F["SwiGLU"] --> P2(("+"))
#     P1 --> P2
#     P2 --> y["(b, T, d)"]
# ```
#
# The shape is lesson 12's pre-norm block; the parts are this lesson's. The attention is
# `mh.ModernAttention`: grouped K/V heads (lesson 10), RoPE on q and k, optionally QK-norm and a
# sliding window (lesson 03's window: query $i$ sees the last `sliding_window` positions), and no
# biases anywhere. With Hugging Face's names:


# %%
class ModernBlock(nn.Module):
    def __init__(self, d_model, context_length, num_heads, num_kv_groups, qk_norm=False):
        super().__init__()
        self.self_attn = mh.ModernAttention(
            d_model, context_length, num_heads, num_kv_groups, qk_norm=qk_norm
        )
        self.mlp = mh.SwiGLU(d_model)  # hidden width: the 2/3 * 4 rule
        self.input_layernorm = mh.RMSNorm(d_model)
        self.post_attention_layernorm = mh.RMSNorm(d_model)

    def forward(self, x):  # (b, T, d_model) -> (b, T, d_model)
        h = x + self.self_attn(self.input_layernorm(x))
        return h + self.mlp(self.post_attention_layernorm(h))


torch.manual_seed(123)
block = ModernBlock(d_model=64, context_length=32, num_heads=8, num_kv_groups=2, qk_norm=True)
x = torch.randn(2, 10, 64)  # (b, T, d_model)
print(mh.say("block output:", "块的输出："), tuple(block(x).shape))  # (b, T, d_model)
print(block)

# %% [markdown]
# Its parameters beside GPT-2's block (`lm.TransformerBlock`, lesson 12) at GPT-2 small's
# width, 768, with 12 heads: once with as many K/V heads as query heads, once with 4 (GQA).


# %%
def count(module):
    return sum(p.numel() for p in module.parameters())


gpt2_block = lm.TransformerBlock(768, 1024, 12)
modern_mha = mh.ModernDecoderLayer(768, 1024, 12, 12)
modern_gqa = mh.ModernDecoderLayer(768, 1024, 12, 4)
rows = [
    (
        mh.say("norms", "归一化"),
        count(gpt2_block.ln_1) + count(gpt2_block.ln_2),
        [
            count(m.input_layernorm) + count(m.post_attention_layernorm)
            for m in (modern_mha, modern_gqa)
        ],
    ),
    (
        mh.say("attention", "注意力"),
        count(gpt2_block.attn),
        [count(m.self_attn) for m in (modern_mha, modern_gqa)],
    ),
    (
        mh.say("feed-forward", "前馈网络"),
        count(gpt2_block.ff),
        [count(m.mlp) for m in (modern_mha, modern_gqa)],
    ),
    (mh.say("total", "合计"), count(gpt2_block), [count(modern_mha), count(modern_gqa)]),
]
mh.show_table(
    [(name, f"{gpt2:,}", f"{mha:,}", f"{gqa:,}") for name, gpt2, (mha, gqa) in rows],
    header=(
        mh.say("part", "部分"),
        "GPT-2",
        mh.say("modern (12 K/V)", "现代 12 K/V 头"),
        mh.say("modern (4 K/V)", "现代 4 K/V 头"),
    ),
)
biases = [n for n, _ in modern_gqa.named_parameters() if "bias" in n]
print(mh.say("biases in the modern block:", "现代块里的偏置："), biases)

# %% [markdown]
# With as many K/V heads, the modern block has 6,144 parameters (0.09 %) fewer than GPT-2's:
# the biases of `out_proj` and of the feed-forward network, and the layer norms' shift vectors
# (the course's `MultiHeadAttention` has no q, k, v biases; GPT-2's own has them). The weights
# are the same in number. GQA with 4 K/V heads saves a third of the attention's weights, and its
# KV cache is 3 times smaller (lesson 10). RoPE adds no parameters at all: its tables are
# computed, not learned.
#
# | GPT-2 (lesson 12) | modern part | which models use it |
# |---|---|---|
# | LayerNorm (mean, scale, shift) | RMSNorm | Llama, Qwen, Mistral, Gemma, DeepSeek, OLMo 2 |
# | learned position vectors, added at the input | RoPE on q and k in every layer | Llama, Qwen, Mistral, Gemma, OLMo 2; DeepSeek-V2/V3 rotate a separate part of q and k ("decoupled RoPE") |
# | GELU feed-forward, width 4d | SwiGLU, width ⅔ · 4d | Llama, Qwen, Mistral, DeepSeek, OLMo 2; Gemma gates with GELU instead of SiLU (GeGLU) |
# | every head its own K and V | GQA: K/V heads shared by groups of query heads | Llama 3, Mistral 7B, Qwen2 and Qwen3; DeepSeek-V2/V3 compress K and V instead (multi-head latent attention) |
# | biases in the linear layers (GPT-2 has them in every one) | no biases | Llama, Mistral, OLMo 2, Qwen3 (Qwen2 kept biases on q, k, v) |
# | nothing | QK-norm | Qwen3, OLMo 2, Gemma 3 |
# | full causal attention | sliding window | Mistral 7B (4,096 positions); Gemma 2 and 3 in some of their layers |
#
# Pre-norm stays in all of them except OLMo 2, which moves its RMSNorms onto the *outputs* of
# attention and the feed-forward network, inside the residual branch.
#
# ## 6. Equal to Hugging Face's layers
#
# The block's parameter names are Hugging Face's, so a `LlamaDecoderLayer`'s weights load by
# name; RoPE's tables and the causal mask are buffers that are not saved:

# %%
print(list(modern_gqa.state_dict()))

# %% [markdown]
# The course's tests prove the equality with the `transformers` library itself (a test-only
# dependency: this lesson never imports it). In `tests/test_modern_hf.py`:
#
# * `test_rotary_tables_are_hugging_faces_bit_for_bit`: `mh.rope_cos_sin` gives Llama's cos and
#   sin tables, bit for bit;
# * `test_rmsnorm_and_swiglu_equal_hugging_faces`: `mh.RMSNorm` and `mh.SwiGLU` equal
#   `LlamaRMSNorm` and `LlamaMLP`;
# * `test_equals_hugging_face_layer`: `mh.ModernAttention` and `mh.ModernDecoderLayer` equal
#   Llama's and Qwen3's attention and decoder layers (weights copied by name);
# * `test_two_layer_model_equals_hugging_face_model`: two stacked blocks equal a 2-layer Llama or
#   Qwen3 model, also with a sliding window.
#
# From the course folder, after `make test` has installed the test tools once (the `dev` extra:
# pytest and `transformers`), run `.venv/bin/pytest -q tests/test_modern_hf.py`.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# Checks for CI: the lesson's inline block is the package's ModernDecoderLayer, bit for bit.
torch.manual_seed(7)
ours = ModernBlock(d_model=64, context_length=32, num_heads=8, num_kv_groups=2, qk_norm=True)
torch.manual_seed(7)
theirs = mh.ModernDecoderLayer(64, 32, 8, 2, qk_norm=True)
with torch.no_grad():  # norms off their initial ones, so that a swapped norm would show
    for (_, p_ours), (_, p_theirs) in zip(ours.named_parameters(), theirs.named_parameters()):
        if p_ours.dim() == 1:
            p_ours.add_(0.1 * torch.randn_like(p_ours))
            p_theirs.copy_(p_ours)
print(mh.assert_same_module(ours, theirs, torch.randn(2, 10, 64)))
assert count(gpt2_block) - count(modern_mha) == 6_144  # the numbers the text states
assert count(gelu_ff) - count(swiglu) == 3_840 == 5 * 768
assert count(modern_mha.self_attn) - count(modern_gqa.self_attn) == count(modern_mha.self_attn) // 3

assert runs[(0.2, False)][1][-1] > 2.5 > 1.0 > runs[(0.2, True)][1][-1]

# %% [markdown]
# ## Summary
#
# * **RoPE** turns pair $i$ of each query and key at position $m$ by $m\theta_i$; a score then
#   depends only on the offset between query and key. It acts on q and k after the projections,
#   never on v, adds no parameters, and with a KV cache rotates each new token at its true
#   position `len(cache)` (without that offset, every output after the first token is wrong).
#   Rotate-half and interleaved pairs differ by a permutation of $W_q$'s and $W_k$'s rows.
# * **RMSNorm** divides by the root mean square and scales: layer norm without the mean and the
#   bias, `torch.nn.RMSNorm`.
# * **SwiGLU**: $W_{down}(\mathrm{SiLU}(W_{gate}x) \odot W_{up}x)$; at width ⅔ · 4d its three
#   matrices hold as many numbers as GPT-2's two.
# * **QK-norm** bounds each score by $\sqrt{d}$ times the norm weights; in our toy at learning
#   rate 0.2 the run without it stayed at chance while the run with it learned.
# * The modern block: pre-RMSNorm, GQA with RoPE (QK-norm, sliding window), SwiGLU, no biases;
#   at GPT-2's width it has slightly fewer parameters, and with GQA fewer still.
#
# ## Exercises
#
# Solutions: `solutions/13_modern_block_solutions.ipynb`.
#
# **Build it: `apply_rope`.** Write `apply_rope(q, k, v, offset)` for q of shape
# `(b, h, T, head_dim)` and k, v of shape `(b, g, T, head_dim)` (with GQA, g < h): return `(q, k, v)` with q and k rotated
# at the positions `offset, offset + 1, ..., offset + T - 1` (rotate-half pairs,
# $\theta_i = 10000^{-2i/d}$), and v as it came. Do not call `mh.apply_rotary_pos_emb`: take the
# angles' tables from `mh.rope_cos_sin` and the pairing from `mh.rotate_half` (which turns the
# halves $(x_1, x_2)$ into $(-x_2, x_1)$), and write the rotation of the formula yourself. The
# checker tries offsets 0, 5 and 7 and names the usual slips (rotating v, neighbouring pairs, a
# missing offset).


# %%
def apply_rope(q, k, v, offset=0):  # q: (b, h, T, head_dim); k, v: (b, g, T, head_dim)
    # YOUR CODE HERE
    raise NotImplementedError("write apply_rope")


answer = None  # YOUR CODE HERE: answer = apply_rope once it is written
mhsa_helpers.exercises.check_apply_rope(answer)


# %% [markdown]
# **Build it: RMSNorm.** Write `MyRMSNorm(d, eps=1e-6)` with a learned `weight` (an
# `nn.Parameter` of shape `(d,)`, starting at ones) whose `forward(x)` normalises the last
# dimension as the formula of section 2 says, without calling `F.rms_norm` or `nn.RMSNorm`. The
# checker compares it with `torch.nn.RMSNorm` for three widths and values of eps, in float32 and
# float64.


# %%
class MyRMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        # YOUR CODE HERE: self.weight and self.eps

    def forward(self, x):  # (..., d) -> (..., d)
        # YOUR CODE HERE
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_rms_norm(MyRMSNorm)


# %% [markdown]
# **Build it: SwiGLU.** Write `MySwiGLU(d_model, hidden_dim=None)` with three `nn.Linear` layers
# without biases, named as Hugging Face names them: `gate_proj` and `up_proj` (d_model →
# hidden_dim) and `down_proj` (hidden_dim → d_model). With `hidden_dim=None` use the width rule
# of section 3, `int(2 * 4 * d_model / 3)`. `forward(x)` is the formula of section 3.


# %%
class MySwiGLU(nn.Module):
    def __init__(self, d_model, hidden_dim=None):
        super().__init__()
        # YOUR CODE HERE: the width, then gate_proj, up_proj, down_proj

    def forward(self, x):  # (..., d_model) -> (..., d_model)
        # YOUR CODE HERE
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_swiglu(MySwiGLU)

# %% [markdown]
# **Exercise 1.** Section 4's toy model (learning rate 0.2, with QK-norm) was trained on rows at
# positions 0..15 only. Now its 16 tokens come after 40 others, as with a KV cache that holds 40
# tokens: they sit at positions 40..55 (`far`). **Predict first**: for each head, the mean weight
# that a query puts on the key exactly two positions before it, will it be larger than at
# positions 0..15, smaller, or the same? Then do the step the answer hangs on: compute the keys
# the toy attention makes from `h_ex` at the positions `far`, after its `k_norm` and RoPE, shape
# `(1, heads, T, head_dim)`. The module cannot do it for you (its tables stop at its
# `context_length`, 16); section 4's `scores_of` makes them at 0..15. The checker's verdict
# also answers your prediction.

# %%
toy = runs[(0.2, True)][0].eval()
row = torch.randint(vocab, (1, T_toy), generator=torch.Generator().manual_seed(5))  # (1, T)
with torch.no_grad():
    h_ex = toy.block.input_layernorm(toy.emb(row))  # (1, T, d_model): what the attention reads
far = torch.arange(40, 40 + T_toy)  # (T,): the positions after 40 cached tokens

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_far_keys(answer, toy.block.self_attn, h_ex, far)
