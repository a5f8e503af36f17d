# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="544023722a67"
# # 13 · 现代解码器块（modern decoder block）：RoPE、RMSNorm、SwiGLU 与 QK 归一化（QK normalization）
#
# 第 12 课的块是 GPT-2（2019 年）的块。今天的开放权重模型（Llama、Qwen、Mistral 及其同类）沿用了它的结构：先是带前置归一化（pre-normalization）的注意力，再是前馈网络（feed-forward network），两者各带一个残差连接（residual connection）。但它们换掉了其中三个部件：RoPE、RMSNorm 和 SwiGLU。较新的模型（Qwen3、OLMo 2、Gemma 3）还加了第四个部件，即 QK 归一化。本课逐一介绍这些部件，用本课自己的张量演示每个部件做了什么，最后把它们组装成一个解码器块，它的计算与 Hugging Face 的 `LlamaDecoderLayer` 完全相同。设 `qk_norm=True` 时，这个块就是 Qwen3 的 `Qwen3DecoderLayer`。
#
# **学习目标**
# 1. **旋转位置编码**（rotary position embedding，RoPE）。把查询和键的特征两两配对，按随位置增长的角度旋转。用数字和图看清楚，旋转之后分数只取决于两个词元（token）之间的偏移。知道它作用在哪里（q 和 k，从不作用于 v），知道它的两种配对约定，以及它怎样与 KV 缓存（KV cache）配合。
# 2. **均方根归一化**（RMSNorm）。它是去掉了减均值和平移（β）的层归一化（layer normalization），与 `torch.nn.RMSNorm` 相等。
# 3. **门控前馈网络**（SwiGLU）。带 SiLU 门控的前馈网络，以及让参数量与 GPT-2 持平的宽度规则。
# 4. **QK 归一化**（QK-norm）。测量它对分数大小的影响，以及对高学习率（learning rate）训练的影响。
# 5. 组装现代解码器块（modern decoder block），与 GPT-2 的块对比参数量，并亲手实现 `apply_rope`、RMSNorm 和 SwiGLU。
#
# **预备知识：** 第 09 课（初识 RoPE），第 10 课（KV 缓存、分组查询注意力（grouped-query attention，GQA）），第 12 课（前置归一化的块、层归一化、GELU、用 AdamW 的训练循环）。**用时：** 约 120 分钟（阅读、运行 22 个代码单元格、1 道练习、3 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 块把 `(b, T, d_model)` 映射为 `(b, T, d_model)`。在注意力内部，查询为 `(b, h, T, head_dim)`，键和值为 `(b, g, T, head_dim)`（g 个 K/V 头，即分组查询注意力），RoPE 的 cos 表和 sin 表为 `(T, head_dim)`。

# %%
import math

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch.nn import functional as F

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers import lm

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="397147a41cb0"
# ## 1. RoPE：把位置变成旋转
#
# GPT-2 在输入处给每个词元**加上**一个学到的位置向量，只加一次（第 12 课）。RoPE（Su 等，2021）什么也不加。它在每一个注意力层里，按词元的位置把每个查询和每个键**转**过一个角度。一个头的 `head_dim` 个特征两两配对，特征 $i$ 与特征 $i + d/2$ 为一对（$d$ 即 `head_dim`）。位置 $m$ 上的词元，第 $i$ 对转过的角度是 $m\,\theta_i$。（第 09 课的 `rope()` 把相邻的特征 $2i$ 和 $2i + 1$ 配成一对。那是同一个旋转，只是特征的顺序不同，也就是本节后面“特征的两种配对方式”中的“交错”约定。本课像 Hugging Face 的 Llama 一样，把 $i$ 与 $i + d/2$ 配成一对。）公式如下：
#
# $$
# \begin{pmatrix} x'_i \\ x'_{i+d/2} \end{pmatrix} =
# \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
# \begin{pmatrix} x_i \\ x_{i+d/2} \end{pmatrix},
# \qquad \theta_i = 10000^{-2i/d}, \quad i = 0, \dots, d/2 - 1 .
# $$
#
# 第 0 对每个位置转一弧度，最后一对几乎不动，就像钟表上的快针和慢针。把位置 $m$ 上的整个旋转记作 $R_m$。旋转不改变长度，它的转置（transpose）就是反向旋转（$R_m^\top = R_{-m}$），两次旋转的角度可以相加。所以，位置 $m$ 上的查询与位置 $n$ 上的键的分数是
#
# $$
# (R_m q)^\top (R_n k) = q^\top R_m^\top R_n\, k = q^\top R_{n-m}\, k ,
# $$
#
# 它对位置的依赖只体现在**偏移** $m - n$ 上。先完全按公式手算旋转，一次转一对。

# %%
head_dim = 8
theta = 10000 ** (-torch.arange(0, head_dim, 2) / head_dim)  # (head_dim / 2,)：每对一个速度
print("theta_i:", theta)


def rotate_pairs(x, m):  # x：(head_dim,)，位置 m 上的词元
    half = len(x) // 2
    out = x.clone()
    for i in range(half):  # 第 i 对：特征 i 和 i + half
        c, s = torch.cos(m * theta[i]), torch.sin(m * theta[i])
        out[i] = c * x[i] - s * x[i + half]
        out[i + half] = s * x[i] + c * x[i + half]
    return out  # (head_dim,)


torch.manual_seed(123)
q = torch.randn(head_dim)  # 一个查询 (head_dim,)
k = torch.randn(head_dim)  # 一个键 (head_dim,)
print(mh.say("length of q before and after turning it to position 7:", "q 转到位置 7 前后的长度："))
print(round(q.norm().item(), 4), round(rotate_pairs(q, 7).norm().item(), 4))

# %% [markdown] en_hash="e7ea8d8d7777"
# **先预测，再运行。** 下一个单元格把查询放在位置 5、键放在位置 3，再把两者都往后挪 35 个位置（40 和 38）。两个分数会相等吗？查询在 3、键在 5 时又会怎样？

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

# %% [markdown] en_hash="54792a345e17"
# 偏移为 2 时，不管查询和键放在哪里，分数都相同。偏移为 −2（键在查询**之后**）或 7 时，分数各不相同。在因果模型里只会出现 $\ge 0$ 的偏移。
#
# 软件包一次就能对整个序列做同样的旋转。`mh.rope_cos_sin` 构造 $\cos m\theta_i$ 和 $\sin m\theta_i$ 的表，形状为 `(T, head_dim)`。第 $m$ 行把 `head_dim / 2` 个角度 $m\theta_0, \dots, m\theta_{d/2-1}$ 存了**两遍**，一对中的两个成员各用一遍（单元格打印出 `cos[1]`），这样它们正好对上特征 $i$ 和 $i + d/2$。`mh.apply_rotary_pos_emb` 用这两张表旋转查询和键（函数名沿用 Hugging Face 的）。为了画图，把**同一个**查询和键分别放到 6 个位置上。没有 RoPE 时，36 个分数全都相等（图中画的是因果模型用到的 21 个）。有了 RoPE，同一条对角线（同一个偏移）上的分数都相等。

# %%
T = 6
cos, sin = mh.rope_cos_sin(torch.arange(T), head_dim)  # 各为 (T, head_dim)
print("cos[1]:", cos[1])  # 位置 1：先是 i = 0..3 的 cos(theta_i)，再把这 4 个重复一遍
q_seq, k_seq = mh.apply_rotary_pos_emb(q.expand(T, -1), k.expand(T, -1), cos, sin)  # (T, hd)
for m in range(T):  # 软件包的旋转逐行等于手算的旋转
    torch.testing.assert_close(q_seq[m], rotate_pairs(q, m))
scores = q_seq @ k_seq.T  # (T, T)：查询 i，键 j
for offset in range(T):
    diagonal = torch.diagonal(scores, offset=-offset)  # i - j = offset 的那些分数
    torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal))
print(mh.say("offset 2, every position:", "偏移 2，各个位置："), torch.diagonal(scores, offset=-2))
fig = mh.figures.plot_relative_position_scores(
    scores,
    title=mh.tr("RoPE: the same q and k at every position", "RoPE：每个位置上是同样的 q 和 k"),
)
fig.axes[0].legend(fontsize=9, ncol=3, loc="lower left", bbox_to_anchor=(0.0, 0.15))  # 放在空白处
fig.axes[-1].set_ylabel(mh.tr("score", "分数"))  # 颜色条
plt.show()


# %% [markdown] en_hash="9d50d8ad81e7"
# ### RoPE 作用在哪里：q 和 k，从不作用于 v
#
# ```mermaid
# flowchart LR
#     x["x (b, T, d_model)"] --> Q["q_proj"] --> RQ["RoPE"] --> S["分数 q·k / √d"]
#     x --> K["k_proj"] --> RK["RoPE"] --> S
#     S --> W["因果 softmax"] --> C["权重 @ v"]
#     x --> V["v_proj（不旋转）"] --> C
#     C --> O["o_proj"]
# ```
#
# 旋转放在投影（projection）之后、计算分数之前，因为它的用处是让**分数**看到偏移。值是注意力权重（attention weight）加权平均的对象，代表一个词元向外传递的内容。如果旋转了值，输出里就会带上它的绝对位置。`mh.ModernAttention`（Llama 式注意力，基于课程的核心代码实现）正是这样做的。下面先在位置 0..4、再在位置 50..54 手动旋转它的查询和键。分数不变，因为每个偏移都没有变。旋转过的值却会变。

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
        v_rot, _ = mh.apply_rotary_pos_emb(v_heads, v_heads, cos5, sin5)  # RoPE 从不这样做
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

# %% [markdown] en_hash="fd8ea98a5ecc"
# 手算的分数经过因果 softmax 后，与模块给出的注意力权重相等，单元格里已做了检查。把整句话往后挪 50 个位置，分数的变化不超过浮点舍入误差。
#
# ### 特征的两种配对方式
#
# 哪些特征配成一对，只是一种约定。Hugging Face 的 Llama 和 Qwen 把特征 $i$ 与 $i + d/2$ 配对（**rotate-half**，前后两半配对，即上面的做法）。RoPE 的论文和 Meta 最初的 Llama 代码把相邻的特征 $(2i, 2i + 1)$ 配对（**interleaved**，交错配对）。两者是同一个旋转，只是特征的排列顺序不同。`mh.interleaved_to_half(head_dim)` 就是把一种排列变成另一种的置换 `0 2 4 .. 1 3 5 ..`。点积（dot product）与特征的排列顺序无关，所以只要置换每个头在 $W_q$ 和 $W_k$ 中的行，就能把一种约定的检查点（checkpoint）转换成另一种，分数不变。

# %%
perm = mh.interleaved_to_half(head_dim)
print("interleaved_to_half:", perm.tolist())
torch.manual_seed(123)
q6, k6 = torch.randn(6, head_dim), torch.randn(6, head_dim)  # 6 个词元 (T, head_dim)
cos6, sin6 = mh.rope_cos_sin(torch.arange(6), head_dim)  # (T, head_dim)
q_inter = mh.apply_rotary_interleaved(q6, cos6, sin6)  # 相邻特征配对 (T, head_dim)
k_inter = mh.apply_rotary_interleaved(k6, cos6, sin6)
q_half, k_half = mh.apply_rotary_pos_emb(q6[:, perm], k6[:, perm], cos6, sin6)  # 先置换
torch.testing.assert_close(q_inter[:, perm], q_half)  # 同样的数，顺序不同
scores_inter, scores_half = q_inter @ k_inter.T, q_half @ k_half.T  # 各为 (T, T)
torch.testing.assert_close(scores_inter, scores_half)
print(
    mh.say("largest score difference between the conventions:", "两种约定的分数最大差："),
    f"{(scores_inter - scores_half).abs().max().item():.6f}",
)
q_plain, k_plain = mh.apply_rotary_pos_emb(q6, k6, cos6, sin6)  # rotate-half 配对，不做置换
scores_plain = q_plain @ k_plain.T  # (T, T)
print(
    mh.say("without the permutation:", "不做置换时："),
    f"{(scores_inter - scores_plain).abs().max().item():.4f}",
)

# %% [markdown] en_hash="7e16ebca8ac6"
# ### RoPE 与 KV 缓存
#
# 有了 KV 缓存（第 10 课），模型每次只看到一个新词元。缓存里的键**已经旋转过**，各自按自己的位置旋转，之后不再转动。新词元必须按它**真实的**位置 `offset = len(cache)`（即起始位置）旋转，而不是按位置 0。`mh.ModernAttention` 从缓存中读出这个起始位置，并把 RoPE 的表存在 `attn.rotary_emb`（一个 `mh.RotaryEmbedding`）里：调用 `rotary_emb(x, offset)` 返回位置 `offset .. offset + T - 1` 的 cos 行和 sin 行（第三个参数 `position_ids` 让一批补齐到同样长度的序列（第 11 课）中每一行各用自己的位置，这里不用）。这样，逐个词元地计算，就等于对整个序列做一次计算。

# %%
torch.manual_seed(123)
attn = mh.ModernAttention(d_model=16, context_length=32, num_heads=4, num_kv_groups=2).eval()
x = torch.randn(2, 7, 16)  # (b, T, d_model)
with torch.no_grad():
    full = attn(x)  # (b, T, d_model)：7 个词元一次算完
    cache = mh.KVCache(32)
    steps = [attn(x[:, t : t + 1], cache=cache) for t in range(7)]  # 每个为 (b, 1, d_model)
    cached = torch.cat(steps, dim=1)  # (b, T, d_model)
    k_all = attn.k_proj(x).view(2, 7, 2, 4).transpose(1, 2)  # (b, g, T, head_dim)
    cos7, sin7 = mh.rope_cos_sin(torch.arange(7), attn.head_dim)  # (T, head_dim)
    _, k_rotated = mh.apply_rotary_pos_emb(k_all, k_all, cos7, sin7)  # (b, g, T, head_dim)
print(cache)
torch.testing.assert_close(cache.keys, k_rotated)  # 缓存里存的是旋转过的键
print(
    mh.say("cached, token by token == one full pass:", "用缓存逐个词元 == 一次完整计算："),
    torch.allclose(cached, full, atol=1e-6),
)


class ForgetsOffset(mh.RotaryEmbedding):
    # 一个失误：每个新词元都按位置 0 来旋转

    def forward(self, x, offset=0, position_ids=None):
        return super().forward(x, 0, position_ids)


broken = mh.ModernAttention(d_model=16, context_length=32, num_heads=4, num_kv_groups=2).eval()
broken.load_state_dict(attn.state_dict())
broken.rotary_emb = ForgetsOffset(attn.head_dim, 32)
with torch.no_grad():
    broken_cache = mh.KVCache(32)
    broken_steps = torch.cat([broken(x[:, t : t + 1], cache=broken_cache) for t in range(7)], 1)
error = (broken_steps - full).abs().amax(dim=(0, 2))  # (T,)：每个位置的最大误差
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

# %% [markdown] en_hash="650090e322bb"
# 词元 0 是对的（它的真实位置**就是** 0）。从词元 1 起，每个新的查询和键都被当作位于位置 0 来旋转，于是分数看到的偏移是错的，每个输出也都是错的。
#
# ## 2. RMSNorm：只缩放，不中心化
#
# 层归一化（第 12 课）先把每个词元的向量中心化，除以它的标准差，再用两个学到的向量 $\gamma$ 和 $\beta$ 缩放和平移：
#
# $$
# \mathrm{LayerNorm}(x) = \frac{x - \mu}{\sqrt{\sigma^2 + \epsilon}}\,\gamma + \beta, \qquad
# \mathrm{RMSNorm}(x) = \frac{x}{\sqrt{\tfrac{1}{d}\sum_j x_j^2 + \epsilon}}\,\gamma .
# $$
#
# RMSNorm（Zhang 与 Sennrich，2019）去掉了均值 $\mu$ 和平移 $\beta$。它只除以**均方根**（root mean square），使归一化后每个向量的均方根都是 1。深层堆叠之所以能训练，靠的是向量的大小始终受控。Zhang 和 Sennrich 在论文《Root Mean Square Layer Normalization》（2019）中发现，重新中心化作用不大。不做它，模型训练得差不多一样好，而且只算一个统计量比算两个便宜。所以 RMSNorm 只有一个学到的向量 $\gamma$（论文允许加一个可选的平移，Llama 及其后的模型都不用它）。

# %%
torch.manual_seed(123)
x = 0.5 * torch.randn(3, 6) + torch.tensor([[2.0], [-1.0], [0.0]])  # 3 个词元，d=6，各行有平移
layer_normed = F.layer_norm(x, (6,))  # 没有 gamma 和 beta
rms_normed = F.rms_norm(x, (6,))  # 没有 gamma


def rms(t):  # 每一行的均方根
    return t.pow(2).mean(-1).sqrt()


def mean(t):  # 每一行的均值，保留 4 位小数；加 0.0 把 -0.0 显示为 0.0
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
layer_norm_count = sum(p.numel() for p in nn.LayerNorm(6).parameters())  # 权重和偏置
rms_norm_count = sum(p.numel() for p in mh.RMSNorm(6).parameters())  # 只有权重
print(
    mh.say("parameters of LayerNorm(6) and RMSNorm(6):", "LayerNorm(6) 与 RMSNorm(6) 的参数个数："),
    layer_norm_count,
    rms_norm_count,
)

# %% [markdown] en_hash="0a1cdfba6ea8"
# 两个输出的 RMS 都是 1，只有层归一化的各行均值为 0。对已经中心化的向量，两者是同一个函数（单元格里做了检查）。软件包的现代块用的是 `mh.RMSNorm`。它和 Hugging Face 的 `LlamaRMSNorm` 一样，先在 float32 下计算，再转回原来的类型，并且与 `torch.nn.RMSNorm` 相等。

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

# %% [markdown] en_hash="c55eac86b87e"
# ## 3. SwiGLU：带门控的前馈网络
#
# GPT-2 的前馈网络把每个词元的向量加宽到 $4d$，经过 GELU，再收窄回来，共两个矩阵。SwiGLU（Shazeer，2020）从同一个输入算出**两个**加宽的向量。其中一个经过 **SiLU 激活函数**（SiLU activation function），再与另一个逐元素相乘，就像一道门，为这个词元打开或关上每一个隐藏特征：
#
# $$
# \mathrm{SiLU}(z) = z\,\sigma(z), \qquad
# \mathrm{SwiGLU}(x) = W_{down}\big(\mathrm{SiLU}(W_{gate}\,x) \odot W_{up}\,x\big),
# $$
#
# 其中 $\sigma(z) = 1 / (1 + e^{-z})$ 是 logistic sigmoid 函数，$\odot$ 是逐元素乘积，没有偏置。SiLU（又称 Swish）看上去很像 GELU。它是光滑的，输入为很大的负数时接近 0，输入为很大的正数时接近恒等映射。

# %%
z = torch.tensor([-4.0, -1.0, -0.5, 0.0, 0.5, 1.0, 4.0])
print("z:       ", z)
print("SiLU(z): ", F.silu(z))  # z 乘以 sigmoid(z)
print("GELU(z): ", F.gelu(z))
torch.testing.assert_close(F.silu(z), z * torch.sigmoid(z))

# %% [markdown] en_hash="613d4a01d75a"
# **宽度规则。** 三个形状为 $(d, h)$ 的矩阵共有 $3dh$ 个数，GPT-2 的两个形状为 $(d, 4d)$ 的矩阵共有 $8d^2$ 个数。取 $h = \tfrac{2}{3} \cdot 4d = \tfrac{8}{3}d$，两者就相等，模型换掉前馈网络也不会变大。Llama 把 $h$ 向上取整到 256 的倍数。在 $d = 4096$（Llama 2 7B）时得到 11,008，即它配置中的 `intermediate_size`。

# %%
d_model = 768  # GPT-2 small 的宽度
gelu_ff = lm.FeedForward(d_model, 4 * d_model)  # fc_in、GELU、fc_out，带偏置
swiglu = mh.SwiGLU(d_model)  # gate_proj、up_proj、down_proj，没有偏置
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

# %% [markdown] en_hash="ba63f9a62e73"
# 两者之差 3,840 就是 GPT-2 的偏置（$4d + d$）。Shazeer 把同等大小的门控前馈网络与 GELU、ReLU 前馈网络放在一起比较，发现在他的语言建模和微调（在较窄的任务上继续训练已训练好的模型）任务上，门控版本更好。本课不重复这项测量。
#
# ## 4. QK 归一化：对每个头的 q 和 k 做 RMSNorm
#
# 分数是 $q \cdot k / \sqrt{d}$，而在第 12 课的块里，没有什么能阻止 $q$ 和 $k$ 在训练中越变越长。分数一大，softmax 就把几乎全部权重放在一个键上，它的梯度也变得极小。**QK 归一化**对每个头的查询和键做 RMSNorm（在 `head_dim` 个特征上做，带学到的权重 $\gamma_q, \gamma_k$），位置在投影之后、RoPE **之前**（Qwen3、Gemma 3；OLMo 2 则对整个投影，即所有头的查询和所有头的键一起做归一化，同样在 RoPE 之前）。RMS 为 1 的向量长度是 $\sqrt{d}$，而 RoPE 不改变长度，所以当权重还是初始值时，每个分数都有上界：
#
# $$
# \left|\frac{q \cdot k}{\sqrt{d}}\right| \le \frac{\lVert q\rVert\,\lVert k\rVert}{\sqrt d}
# = \sqrt{d} .
# $$
#
# 权重学习之后，上界再乘以 $\max|\gamma_q| \cdot \max|\gamma_k|$。为了看到分数，`scores_of` 手动重复模块的各个步骤（结果已与模块输出的注意力权重核对）。然后把 $W_q$ 和 $W_k$ 放大 10 倍，模拟长时间训练后权重变大的情形。


# %%
def scores_of(attn, x):  # ModernAttention 缩放后的分数，(b, h, T, T)
    b, n, _ = x.shape
    q = attn.q_proj(x).view(b, n, attn.num_heads, attn.head_dim)  # (b, T, h, head_dim)
    k = attn.k_proj(x).view(b, n, attn.num_kv_groups, attn.head_dim)  # (b, T, g, head_dim)
    if attn.qk_norm:
        q, k = attn.q_norm(q), attn.k_norm(k)  # 在 head_dim 上做 RMSNorm，在 RoPE 之前
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

# %% [markdown] en_hash="22eb875a6514"
# 没有 QK 归一化时，分数涨了 100 倍（10 × 10）。有了它，分数纹丝不动，而且始终低于 $\sqrt{8} \approx 2.83$。QK 归一化并不让分数变小（这里它一开始反而比没有时大），它固定的是分数的大小，不管 $W_q$ 和 $W_k$ 有多大。
#
# **在高学习率下。** 下面训练一个小模型：嵌入层（embedding）→ 一个现代块 → RMSNorm → 语言模型头（language model head，LM head），词表（vocabulary）只有 16 个词元，序列长 16。其中的块是 `mh.ModernDecoderLayer`，即第 5 节组装的那个块在课程包里的版本。任务是输出往前数第二个位置上的词元，所以注意力必须依靠相对位置。学习率取常用的 0.003 和偏高的 0.2 两种，每种都在有、无 QK 归一化下各训练一次，共四次，每次 60 步（AdamW）。每次训练不到一秒。

# %%
# NBVAL_IGNORE_OUTPUT
# 学习率为 0.2 时，这几次训练对舍入极其敏感：处理器运算的最后几位不同，后面的数字就不同。
# 所以不逐位比对输出，只用 assert 检查处处成立的结论。
vocab, T_toy, d_toy, heads_toy = 16, 16, 32, 4


class TinyModern(nn.Module):
    def __init__(self, qk_norm):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_toy)
        self.block = mh.ModernDecoderLayer(d_toy, T_toy, heads_toy, heads_toy, qk_norm=qk_norm)
        self.norm = mh.RMSNorm(d_toy)
        self.head = nn.Linear(d_toy, vocab, bias=False)

    def forward(self, ids):  # 输入 (b, T)，输出 logits (b, T, vocab)
        return self.head(self.norm(self.block(self.emb(ids))))


gen = torch.Generator().manual_seed(0)
pool = torch.randint(vocab, (512, T_toy + 2), generator=gen)  # 随机的词元行


def train_toy(qk_norm, lr, steps=60):
    torch.manual_seed(123)  # 每次训练的初始权重和批次都相同
    gen.manual_seed(1)
    model = TinyModern(qk_norm)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        rows = pool[torch.randint(len(pool), (32,), generator=gen)]  # (32, T + 2)
        inputs, targets = rows[:, 2:], rows[:, :-2]  # 目标：往前第二个位置上的词元
        loss = F.cross_entropy(model(inputs).reshape(-1, vocab), targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():  # 最后一步之后，最后一批上的分数
        h = model.block.input_layernorm(model.emb(inputs))  # 注意力读入的内容
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
learned = runs[(0.2, True)][0].block.self_attn  # 它的 q_norm 和 k_norm 权重已经学过
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
assert sum(learned[1][-10:]) / 10 < 1.2  # 有 QK 归一化时，它学会了


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

# %% [markdown] en_hash="8ca15a64012c"
# 这几次训练只能说明以下几点：在常用学习率下，两次训练很接近（60 步之内都还没学完。每次训练一开始的损失都是 2.94，略高于随机水平（chance level），因为未训练的 logits 并不全相等）。学习率为 0.2 时，两者的损失都先往上跳，有 QK 归一化的跳得更高（见上图。表中只有第 1、20、40 步的损失和最后 10 步的平均，看不出这次跳升）。接着，没有 QK 归一化的那次，最大分数涨到上千甚至上万，softmax 把全部权重放在一个键上，那次跳升之后，损失一直停在随机水平附近（ln 16 ≈ 2.77），直到最后一步。有 QK 归一化的那次，最大分数在 100 左右，损失降到 1 以下。学到的归一化权重让分数超过了 $\sqrt{8}$，但没有超过它们决定的上界（最后一行）。在这个学习率下，训练对舍入极其敏感。处理器运算的最后几位不同，第 1 步之后的数字就可能不同，所以你的表可能和这里的不一样。这个单元格只检查在任何机器上都成立的结论。一个玩具模型、一个随机种子，不能据此得出普遍结论。不过，Qwen3、OLMo 2 和 Gemma 3 确实用 QK 归一化来稳定大规模训练。
#
# ## 5. 组装现代解码器块
#
# ```mermaid
# flowchart LR
#     x["x (b, T, d)"] --> N1["RMSNorm"] --> A["GQA + RoPE<br/>（QK 归一化、滑动窗口）"]
#     A --> P1(("+"))
#     x --> P1
#     P1 --> N2["RMSNorm"] --> F["SwiGLU"] --> P2(("+"))
#     P1 --> P2
#     P2 --> y["(b, T, d)"]
# ```
#
# 结构是第 12 课的前置归一化块，部件是本课的。注意力是 `mh.ModernAttention`，它包括分组的 K/V 头（第 10 课）、作用于 q 和 k 的 RoPE、可选的 QK 归一化和滑动窗口（第 03 课的窗口，查询 $i$ 只看最近的 `sliding_window` 个位置），而且哪里都没有偏置。下面使用 Hugging Face 的命名。


# %%
class ModernBlock(nn.Module):
    def __init__(self, d_model, context_length, num_heads, num_kv_groups, qk_norm=False):
        super().__init__()
        self.self_attn = mh.ModernAttention(
            d_model, context_length, num_heads, num_kv_groups, qk_norm=qk_norm
        )
        self.mlp = mh.SwiGLU(d_model)  # 隐藏宽度：2/3 * 4 规则
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

# %% [markdown] en_hash="eeb4e11399e4"
# 下面把它的参数与 GPT-2 的块（`lm.TransformerBlock`，第 12 课）放在一起比较，宽度取 GPT-2 small 的 768，12 个头。一次让 K/V 头与查询头一样多，一次只用 4 个 K/V 头（分组查询注意力）。


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

# %% [markdown] en_hash="e505de8c727e"
# K/V 头与查询头一样多时，现代块比 GPT-2 的块少 6,144 个参数（0.09%），即 `out_proj` 和前馈网络的偏置，以及层归一化的平移向量（课程的 `MultiHeadAttention` 没有 q、k、v 偏置，而原版 GPT-2 有）。权重的个数相同。用 4 个 K/V 头的分组查询注意力省下注意力权重的三分之一，KV 缓存也只有原来的三分之一（第 10 课）。RoPE 完全不增加参数，它的表是算出来的，不是学出来的。新旧部件的对照如下：
#
# | GPT-2（第 12 课） | 现代部件 | 使用它的模型 |
# |---|---|---|
# | LayerNorm（均值、缩放、平移） | RMSNorm | Llama、Qwen、Mistral、Gemma、DeepSeek、OLMo 2 |
# | 学到的位置向量，在输入处相加 | 每一层中作用于 q 和 k 的 RoPE | Llama、Qwen、Mistral、Gemma、OLMo 2。DeepSeek-V2/V3 旋转 q 和 k 中单独的一部分（解耦 RoPE，decoupled RoPE） |
# | GELU 前馈网络，宽度 4d | SwiGLU，宽度 ⅔ · 4d | Llama、Qwen、Mistral、DeepSeek、OLMo 2。Gemma 的门控用 GELU 而不是 SiLU（GeGLU） |
# | 每个头有自己的 K 和 V | 分组查询注意力，每组查询头共享 K/V 头 | Llama 3、Mistral 7B、Qwen2 和 Qwen3。DeepSeek-V2/V3 改为压缩 K 和 V（多头潜在注意力，multi-head latent attention） |
# | 线性层带偏置（GPT-2 的每一层都有） | 没有偏置 | Llama、Mistral、OLMo 2、Qwen3（Qwen2 保留了 q、k、v 的偏置） |
# | 无 | QK 归一化 | Qwen3、OLMo 2、Gemma 3 |
# | 完整的因果注意力（causal attention） | 滑动窗口 | Mistral 7B（4,096 个位置），Gemma 2 和 3 的部分层 |
#
# 除 OLMo 2 以外，这些模型都保留了前置归一化。OLMo 2 把 RMSNorm 移到注意力和前馈网络的**输出**上，仍放在残差分支之内。
#
# ## 6. 与 Hugging Face 的层相等
#
# 块的参数名沿用 Hugging Face 的命名，所以 `LlamaDecoderLayer` 的权重可以按名字载入。RoPE 的表和因果掩码（causal mask）是缓冲区（buffer），不会被保存。

# %%
print(list(modern_gqa.state_dict()))

# %% [markdown] en_hash="d4c121a0bad8"
# 课程的测试直接拿 `transformers` 库验证了这种相等（它只是测试的依赖，本课从不导入它）。`tests/test_modern_hf.py` 中有这些测试：
#
# * `test_rotary_tables_are_hugging_faces_bit_for_bit`：`mh.rope_cos_sin` 给出的 cos 表和 sin 表与 Llama 的逐位相同。
# * `test_rmsnorm_and_swiglu_equal_hugging_faces`：`mh.RMSNorm` 和 `mh.SwiGLU` 等于 `LlamaRMSNorm` 和 `LlamaMLP`。
# * `test_equals_hugging_face_layer`：`mh.ModernAttention` 和 `mh.ModernDecoderLayer` 等于 Llama 和 Qwen3 的注意力层和解码器层（权重按名字复制）。
# * `test_two_layer_model_equals_hugging_face_model`：两个堆叠的块等于 2 层的 Llama 或 Qwen3 模型，带滑动窗口时也一样。
#
# 在课程根目录下，先用 `make test` 装好测试工具（`dev` 附加依赖，含 pytest 和 `transformers`），再运行 `.venv/bin/pytest -q tests/test_modern_hf.py`。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# 供 CI 的检查：本课写出的块与软件包的 ModernDecoderLayer 逐位相同。
torch.manual_seed(7)
ours = ModernBlock(d_model=64, context_length=32, num_heads=8, num_kv_groups=2, qk_norm=True)
torch.manual_seed(7)
theirs = mh.ModernDecoderLayer(64, 32, 8, 2, qk_norm=True)
with torch.no_grad():  # 让归一化权重偏离初始值，这样换错归一化就会暴露出来
    for (_, p_ours), (_, p_theirs) in zip(ours.named_parameters(), theirs.named_parameters()):
        if p_ours.dim() == 1:
            p_ours.add_(0.1 * torch.randn_like(p_ours))
            p_theirs.copy_(p_ours)
print(mh.assert_same_module(ours, theirs, torch.randn(2, 10, 64)))
assert count(gpt2_block) - count(modern_mha) == 6_144  # 正文所说的数
assert count(gelu_ff) - count(swiglu) == 3_840 == 5 * 768
assert count(modern_mha.self_attn) - count(modern_gqa.self_attn) == count(modern_mha.self_attn) // 3

assert runs[(0.2, False)][1][-1] > 2.5 > 1.0 > runs[(0.2, True)][1][-1]

# %% [markdown] en_hash="0e6aa43e7367"
# ## 小结
#
# * **RoPE** 把位置 $m$ 上每个查询和键的第 $i$ 对特征转过 $m\theta_i$，于是分数只取决于查询与键之间的偏移。它在投影之后作用于 q 和 k，从不作用于 v，也不增加参数。有 KV 缓存时，它按每个新词元的真实位置 `len(cache)` 旋转（忘了这个起始位置，第一个词元之后的每个输出都是错的）。rotate-half 配对与交错配对只差 $W_q$ 和 $W_k$ 各行的一个置换。
# * **RMSNorm** 除以均方根再缩放，即去掉了减均值和平移（β）的层归一化，也就是 `torch.nn.RMSNorm`。
# * **SwiGLU** 计算 $W_{down}(\mathrm{SiLU}(W_{gate}x) \odot W_{up}x)$。宽度取 ⅔ · 4d 时，它的三个矩阵与 GPT-2 的两个矩阵含有同样多的数。
# * **QK 归一化**把每个分数限制在 $\sqrt{d}$ 乘以归一化权重之内。在我们的玩具模型中，学习率为 0.2 时，没有它的那次停在随机水平，有它的那次学会了任务。
# * 现代块由前置的 RMSNorm、带 RoPE 的分组查询注意力（可选 QK 归一化和滑动窗口）和 SwiGLU 组成，没有偏置。在 GPT-2 的宽度下，它的参数略少，用分组查询注意力还会更少。
#
# ## 练习
#
# 参考答案见 `solutions/13_modern_block_solutions.ipynb`。
#
# **动手实现：`apply_rope`。** 编写 `apply_rope(q, k, v, offset)`，其中 q 的形状为 `(b, h, T, head_dim)`，k 和 v 的形状为 `(b, g, T, head_dim)`（用分组查询注意力时 g < h）。它返回 `(q, k, v)`，其中 q 和 k 按位置 `offset, offset + 1, ..., offset + T - 1` 旋转（rotate-half 配对，$\theta_i = 10000^{-2i/d}$），v 原样返回。不要调用 `mh.apply_rotary_pos_emb`。角度表用 `mh.rope_cos_sin` 得到，配对用 `mh.rotate_half`（它把两半 $(x_1, x_2)$ 变成 $(-x_2, x_1)$），公式中的旋转由你自己写。检查器会试起始位置 `offset` 取 0、5 和 7 的情况，并指出常见的错误（旋转了 v、把相邻特征配成一对、漏了起始位置 `offset`）。


# %%
def apply_rope(q, k, v, offset=0):  # q: (b, h, T, head_dim); k, v: (b, g, T, head_dim)
    # 在这里写代码
    raise NotImplementedError("write apply_rope")


answer = None  # 在这里写代码：写好之后 answer = apply_rope
mhsa_helpers.exercises.check_apply_rope(answer)


# %% [markdown] en_hash="2ba2d9ff2b3e"
# **动手实现：RMSNorm。** 编写 `MyRMSNorm(d, eps=1e-6)`。它有一个学到的 `weight`（形状为 `(d,)` 的 `nn.Parameter`，初始值全为 1），它的 `forward(x)` 按第 2 节的公式对最后一维做归一化，不调用 `F.rms_norm` 或 `nn.RMSNorm`。检查器在三种宽度和 eps 取值下，分别用 float32 和 float64 把它与 `torch.nn.RMSNorm` 比较。


# %%
class MyRMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        # 在这里写代码：self.weight 和 self.eps

    def forward(self, x):  # (..., d) -> (..., d)
        # 在这里写代码
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_rms_norm(MyRMSNorm)


# %% [markdown] en_hash="c08fd6f582da"
# **动手实现：SwiGLU。** 编写 `MySwiGLU(d_model, hidden_dim=None)`。它有三个不带偏置的 `nn.Linear` 层，按 Hugging Face 的命名，分别是 `gate_proj` 和 `up_proj`（d_model → hidden_dim），以及 `down_proj`（hidden_dim → d_model）。`hidden_dim=None` 时使用第 3 节的宽度规则 `int(2 * 4 * d_model / 3)`。`forward(x)` 就是第 3 节的公式。


# %%
class MySwiGLU(nn.Module):
    def __init__(self, d_model, hidden_dim=None):
        super().__init__()
        # 在这里写代码：先算宽度，再建 gate_proj、up_proj、down_proj

    def forward(self, x):  # (..., d_model) -> (..., d_model)
        # 在这里写代码
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_swiglu(MySwiGLU)

# %% [markdown] en_hash="4342ce6fbeb1"
# **练习 1。** 第 4 节的玩具模型（学习率 0.2，有 QK 归一化）只在位置 0..15 上训练过。现在它的 16 个词元排在另外 40 个词元之后，就像 KV 缓存里已经存了 40 个词元，于是它们位于位置 40..55（`far`）。**先预测**：对每个头，各个查询分给“恰好往前两个位置的键”的平均权重，会比位置 0..15 上的大、小，还是一样？然后完成答案所依赖的那一步：计算玩具注意力由 `h_ex` 在位置 `far` 上得到的键，即经过它的 `k_norm` 和 RoPE 之后的键，形状为 `(1, heads, T, head_dim)`。模块本身做不到这一点（它的表只到它的 `context_length`，即 16）。第 4 节的 `scores_of` 算的是位置 0..15 上的键。检查器的结论也会回答你的预测。

# %%
toy = runs[(0.2, True)][0].eval()
row = torch.randint(vocab, (1, T_toy), generator=torch.Generator().manual_seed(5))  # (1, T)
with torch.no_grad():
    h_ex = toy.block.input_layernorm(toy.emb(row))  # (1, T, d_model)：注意力读到的输入
far = torch.arange(40, 40 + T_toy)  # (T,)：缓存了 40 个词元之后的位置

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_far_keys(answer, toy.block.self_attn, h_ex, far)
