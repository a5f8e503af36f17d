# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="5eb24be48baf"
# # 02 · 可训练的查询、键、值（query, key, value）
#
# 第 01 课直接用原始的嵌入（embedding）计算注意力，所以没有任何东西可以学习。现在，每个词元（token）要经过三次投影（projection），分别乘以三个**可训练权重矩阵**（trainable weight matrix）`W_query`、`W_key` 和 `W_value`。这就是 GPT 模型所用的**缩放点积注意力**（scaled dot-product attention）。我们用 `torch.manual_seed(123)` 复现书中的数字。
#
# **学习目标**
# 1. 为每个词元计算**查询、键和值**，并一步一步算出“journey”的上下文向量（context vector）。
# 2. 理解分数**为什么**要除以 $\sqrt{d_k}$。不这样做，就会出现 **softmax 饱和**（softmax saturation），进而导致**梯度消失**（vanishing gradient）。
# 3. 把计算封装成 `SelfAttentionV1`（用 `nn.Parameter`），看清 `nn.Linear` 怎样存储同一个矩阵（`linear.weight == W.T`），再亲手实现 `SelfAttentionV2`（用 `nn.Linear`）。
#
# **预备知识：** 第 01 课（`01_simplified_self_attention`）讲的分数、softmax 和上下文向量。还需要一点 PyTorch 基础，即 `nn.Module`、`nn.Parameter` 和 `nn.Linear`，并知道**自动求导**（autograd）做了什么。`requires_grad=True` 让 torch 记录下计算过程，之后 `.backward()` 才能把梯度填进来。哪里可以补课，第 00 课已经列出。
#
# **用时：** 约 90 分钟（阅读、运行 26 个代码单元格、1 次预测、2 道练习、1 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 输入 `(T, d_in) = (6, 3)` → 查询/键/值 `(T, d_out) = (6, 2)` → 权重 `(T, T)` → 上下文向量 `(T, d_out) = (6, 2)`。

# %%
import torch
from torch import nn

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="050bd23f7597"
# ## 1. 三个权重矩阵
#
# 第 01 课最后指出了原始点积（dot product）的三个局限。一是向量只要够长，不管含义如何都能拿到高分（6 个词元里只有 2 个与自己的分数最高）。二是分数矩阵是对称的。三是没有任何可以学习的东西。解决办法是让每个词元扮演两个不同的角色，每个角色都有自己学出来的向量。提问时用的是**查询**，被别人匹配时用的是**键**。此外还有第三个角色，即**值**，也就是被选中后要交出去的内容。
#
# 我们沿用书中的尺寸，把大小为 `d_in = 3` 的嵌入投影到 `d_out = 2`。GPT 模型中 `d_in == d_out`，这里取不同的大小，只是为了让形状更容易分辨。随机数由随机种子以及查询、键、值的创建顺序决定，所以你得到的数字和书中的一模一样。

# %%
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
x_2 = inputs[1]  # (d_in,) -- "journey"
d_in = inputs.shape[1]  # 3
d_out = 2

torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=True)  # (d_in, d_out)
W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=True)  # (d_in, d_out)
W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=True)  # (d_in, d_out)
print(f"{W_query=}\n\n{W_key=}\n\n{W_value=}")

# %% [markdown] en_hash="b366cdc5901c"
# `nn.Parameter` 加上 `requires_grad=True`，表示训练时要通过反向传播更新这些数。注意“权重”一词有两种含义。这里的**权重矩阵**是学出来的参数，而**注意力权重**（attention weights）是 softmax 的输出，每换一个输入都要重新计算。
#
# 这三个矩阵学的是什么？一种常见的理解是：
# * `W_query` 把词元变成一个提问：“我想找什么？”
# * `W_key` 把词元变成一个标签：“我能被什么匹配上？”
# * `W_value` 把词元变成内容：“如果我被选中，我交出什么？”
#
# ## 2. “journey”的查询、键和值
#
# 每一个都是向量与矩阵的乘积 `(d_in,) @ (d_in, d_out) -> (d_out,)`，即把词元从 3 维空间**投影**到一个新的 2 维空间。

# %%
query_2 = x_2 @ W_query  # (d_out,)
key_2 = x_2 @ W_key  # (d_out,)
value_2 = x_2 @ W_value  # (d_out,)
print(f"{query_2=}\n{key_2=}\n{value_2=}")

# %%
for name, tensor in [("query_2", query_2), ("key_2", key_2), ("value_2", value_2)]:
    torch.testing.assert_close(
        tensor.detach(), journey.reference[f"seed123_{name}"], atol=1e-4, rtol=0
    )
print(
    mh.say(
        "query_2, key_2, value_2 match the book's printed values",
        "query_2、key_2、value_2 与书中印出的数值一致",
    )
)

# %% [markdown] en_hash="29ffab5642c6"
# 要计算 $z^{(2)}$，还需要**每个**词元的键和值。键和值各用一次矩阵乘法就能算出。

# %%
keys = inputs @ W_key  # (T, d_out)
values = inputs @ W_value  # (T, d_out)
print(f"{keys.shape=}, {values.shape=}")

# %% [markdown] en_hash="73bdcd51bea5"
# 下面把六个词元的三种投影都画成矩阵，并标出形状。同一个 `inputs` (6, 3) 乘以三个不同的矩阵 (3, 2)，得到三个不同的结果 (6, 2)。`queries` 中“journey”那一行就是 `query_2`。

# %%
import matplotlib.pyplot as plt

fig = mh.figures.plot_qkv_projections(inputs, W_query, W_key, W_value, journey.words)
plt.show()

# %% [markdown] en_hash="6763d79b935d"
# ## 3. 注意力分数（attention scores）
#
# 做法和第 01 课一样，只是现在查询换成了 `query_2`，键换成了投影后的 `keys`。“journey”与自己的分数是一次点积，六个分数则由 `query_2 @ keys.T` 一次算出。

# %%
attn_score_22 = query_2.dot(key_2)  # ()
print(attn_score_22)
attn_scores_2 = query_2 @ keys.T  # (d_out,) @ (d_out, T) -> (T,)
print(attn_scores_2)

# %%
torch.testing.assert_close(
    attn_score_22.detach(), journey.reference["seed123_attn_score_22"], atol=1e-4, rtol=0
)
torch.testing.assert_close(
    attn_scores_2.detach(), journey.reference["seed123_attn_scores_2"], atol=1e-4, rtol=0
)
assert torch.equal(attn_scores_2[1], attn_score_22)

# %% [markdown] en_hash="193feb9fea99"
# 两者都与书中印出的数值一致，向量的第二个元素正是上面单独算出的那个分数。
#
# 现在来算**每个**查询与每个键的分数。第 01 课的两条结论不再成立。矩阵不再对称（“with”对“journey”的关注，并不等于“journey”对“with”的关注），对角线也不再特殊。

# %%
queries = inputs @ W_query  # (T, d_out)
all_scores = (queries @ keys.T).detach()  # (T, T)
print(mh.say("'with' looks at 'journey':", "“with”对“journey”的分数："), f"{all_scores[3, 1]:.4f}")
print(mh.say("'journey' looks at 'with':", "“journey”对“with”的分数："), f"{all_scores[1, 3]:.4f}")
print(mh.say("symmetric:", "对称："), torch.equal(all_scores, all_scores.T))
for i, word in enumerate(journey.words):
    print(
        f"{word:>8}",
        mh.say("scores highest with", "得分最高的是"),
        journey.words[all_scores[i].argmax()],
    )

# %% [markdown] en_hash="881ade8263d0"
# 在这组随机、未经训练的矩阵下，碰巧每个查询都最看重“journey”，所以只有“journey”这一行的最大分数落在对角线上。哪些词元彼此匹配，如今由 `W_query` 和 `W_key` 决定，而不再只取决于嵌入向量的长度。训练还会改变这两个矩阵。
#
# ## 4. 缩放的 softmax
#
# 做 softmax 之前，分数要先除以 $\sqrt{d_k}$，即键向量维度的平方根（这里 `d_k = 2`）。缩放点积注意力里的“缩放”指的就是这一步。把输入按行堆成 $X$ (T, d_in)，令查询 $Q = XW^Q$、键 $K = XW^K$、值 $V = XW^V$（代码中分别是 `W_query`、`W_key`、`W_value`）。对所有词元一次性计算，本课算的就是
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V,$$
#
# 这正是论文《Attention Is All You Need》中的公式。先算出分数 $QK^\top$ (T, T)，加以缩放，对每一行做 softmax，再对值加权求和，得到 (T, d_out)。

# %%
d_k = keys.shape[-1]  # 2
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)  # (T,)
print(attn_weights_2)
torch.testing.assert_close(
    attn_weights_2.detach(), journey.reference["seed123_attn_weights_2"], atol=1e-4, rtol=0
)

# %% [markdown] en_hash="6b500f142759"
# ### 为什么要除以 $\sqrt{d_k}$？
#
# **第 1 步：点积随维度增大而变大。** 假设 $q$ 和 $k$ 的各个分量相互独立，均值为 0，方差为 1。那么 $q \cdot k = \sum_{i=1}^{d_k} q_i k_i$ 是 $d_k$ 个方差为 1 的项之和，它的方差就是 $d_k$。除以 $\sqrt{d_k}$，正好把方差拉回到 1。我们在 10,000 对随机向量上量一量。

# %%
_ = torch.manual_seed(123)
for size in (2, 8, 64, 512):
    q = torch.randn(10_000, size)  # (N, d_k)
    k = torch.randn(10_000, size)  # (N, d_k)
    dots = (q * k).sum(dim=-1)  # (N,)
    scaled = dots / size**0.5  # (N,)
    print(
        f"d_k = {size:3d}   var(q.k) = {dots.var():6.1f}   var(q.k / sqrt(d_k)) = {scaled.var():.2f}"
    )

# %% [markdown] en_hash="95095db9a82c"
# **第 2 步：分数太大会让 softmax 饱和。** GPT-2 中每个注意力头（attention head）的 $d_k = 64$（见第 06 课）。为了看得更清楚，我们取 512，用一个随机查询对六个随机键，各分量的方差都是 1。
#
# **先预测，再运行。** 不做缩放时，六个 softmax 权重中**最大**的那个会是多少？（六个分数相等时，每个权重都是 1/6 = 0.17，而单个权重最大只能是 1。）把 `None` 换成 0 到 1 之间的一个数，再运行这个单元格。它只会把你的猜测记下来。

# %%
import mhsa_helpers.exercises

my_guess = None  # 你的预测：0 到 1 之间的一个数
mhsa_helpers.exercises.check_prediction_saturation(my_guess)

# %%
_ = torch.manual_seed(123)
size = 512
q = torch.randn(size)  # (d_k,)
k = torch.randn(6, size)  # (T, d_k)
scores_big = k @ q  # (T,)
weights_raw = torch.softmax(scores_big, dim=-1)  # (T,)
weights_scaled = torch.softmax(scores_big / size**0.5, dim=-1)  # (T,)
mh.show_table(
    [
        (mh.say("scores", "分数"), scores_big),
        ("softmax", weights_raw),
        (mh.say("scaled softmax", "缩放后的 softmax"), weights_scaled),
    ]
)
fig = mh.figures.plot_scaling_effect(scores_big, size)
plt.show()
mhsa_helpers.exercises.check_prediction_saturation(my_guess, reveal=True)

# %% [markdown] en_hash="7094b0e0d27f"
# 不做缩放时，分数分布在几十个单位的范围内，softmax 几乎把全部权重都给了一个词元，变成了生硬的“取最大值”。做了缩放，权重依然有高有低、层次分明。
#
# **第 3 步：饱和的 softmax（几乎）没有梯度。** 记分数为 $s$，softmax 权重为 $p$。分数 $s_j$ 变动时，权重 $p_i$ 跟着变多少，由导数 $\partial p_i / \partial s_j = p_i(\delta_{ij} - p_j)$ 给出，其中 $i = j$ 时 $\delta_{ij}$ 为 1，否则为 0。这 $T \times T$ 个导数合在一起，就是**雅可比矩阵**（Jacobian）。当某个 $p_i \approx 1$、其余都 $\approx 0$ 时，矩阵的每个元素都 $\approx 0$，训练几乎无法通过注意力权重得到任何信号。下面按公式算出雅可比矩阵，并与自动求导的结果核对。


# %%
def softmax_jacobian(p):
    # (..., T) 的概率 -> 由 d p_i / d s_j 组成的 (..., T, T) 矩阵。
    # diag_embed(p)：把 p 放在 (T, T) 矩阵的对角线上（即 delta_ij p_i 这一项）；
    # p.unsqueeze(-1) * p.unsqueeze(-2)：一列 (T, 1) 乘一行 (1, T)，得到所有的 p_i p_j。
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


jac_autograd = torch.autograd.functional.jacobian(
    lambda s: torch.softmax(s, dim=-1), scores_big / size**0.5
)  # (T, T)
torch.testing.assert_close(softmax_jacobian(weights_scaled), jac_autograd)
print(
    mh.say("largest |gradient entry|, unscaled:", "未缩放时，梯度元素的最大绝对值："),
    softmax_jacobian(weights_raw).abs().max(),
)
print(
    mh.say("largest |gradient entry|, scaled  :", "缩放之后，梯度元素的最大绝对值："),
    softmax_jacobian(weights_scaled).abs().max(),
)

# %% [markdown] en_hash="ce453f9f6130"
# 单个例子可能只是运气好，所以下面对 1,000 个随机查询（每个配六个键）取平均，看最大权重的均值，以及 softmax 雅可比矩阵的平均大小。这里的大小指 Frobenius 范数（Frobenius norm），即所有元素平方和的平方根。

# %%
_ = torch.manual_seed(123)
scaling_rows = []
for size in (2, 64, 512):
    q = torch.randn(1000, 1, size)  # (N, 1, d_k)
    k = torch.randn(1000, 6, size)  # (N, T, d_k)
    s = (q * k).sum(dim=-1)  # (N, T)
    p_raw = torch.softmax(s, dim=-1)  # (N, T)
    p_scaled = torch.softmax(s / size**0.5, dim=-1)  # (N, T)
    max_raw, max_scaled = p_raw.max(dim=-1).values.mean(), p_scaled.max(dim=-1).values.mean()
    g_raw = softmax_jacobian(p_raw).norm(dim=(-2, -1)).mean()
    g_scaled = softmax_jacobian(p_scaled).norm(dim=(-2, -1)).mean()
    scaling_rows.append(
        (size, f"{max_raw:.2f}", f"{max_scaled:.2f}", f"{g_raw:.2f}", f"{g_scaled:.2f}")
    )
mh.show_table(
    scaling_rows,
    header=(
        "d_k",
        mh.say("max weight: raw", "最大权重：未缩放"),
        mh.say("scaled", "缩放后"),
        mh.say("gradient size: raw", "梯度大小：未缩放"),
        mh.say("scaled", "缩放后"),
    ),
)

# %% [markdown] en_hash="ecbe085ae5eb"
# 随着 $d_k$ 增大，不缩放那一列的最大权重趋向 1，梯度趋向 0，而缩放后的那一列基本不变。这就是除以 $\sqrt{d_k}$ 的全部理由。
#
# ## 5. “journey”的上下文向量
#
# 最后一步还是第 01 课的加权求和，只不过加的是**值**，而不是原始输入。

# %%
context_vector_2 = attn_weights_2 @ values  # (T,) @ (T, d_out) -> (d_out,)
print(context_vector_2)
torch.testing.assert_close(
    context_vector_2.detach(), journey.reference["seed123_context_vector_2"], atol=1e-4, rtol=0
)
fig = mh.figures.plot_weighted_sum(
    attn_weights_2,
    values,
    journey.words,
    title=mh.tr("context_vector_2 = weighted sum of the values", "context_vector_2 = 值的加权和"),
)
plt.show()

# %% [markdown] en_hash="5e55b65d3dbe"
# 这与书中印出的 [0.3061, 0.8210] 一致。对每个词元，计算分为以下四步：
# 1. 算出所有词元的键和值（`W_key`、`W_value`），以及当前词元的查询（`W_query`）。
# 2. 分数 = 查询 · 键。
# 3. 权重 = softmax(分数 / $\sqrt{d_k}$)。
# 4. 上下文向量 = 权重 · 值。
#
# 下面的流程图对所有词元一次算完，形状取本课的数值。
#
# ```mermaid
# flowchart LR
#     X["输入 X (T, d_in)"] --> Q["查询 Q = X W_query (T, d_out)"]
#     X --> K["键 K = X W_key (T, d_out)"]
#     X --> V["值 V = X W_value (T, d_out)"]
#     Q --> S["分数 = Q K^T (T, T)"]
#     K --> S
#     S --> W["权重 = softmax(分数 / sqrt(d_k)) (T, T)"]
#     W --> Z["上下文向量 = 权重 V (T, d_out)"]
#     V --> Z
# ```
#
# 顺带一提（第 10 课还会讲到），模型逐个词元地生成文本时，前面词元的键和值不会再变，所以可以把它们存起来，不必重新计算。这块存储就叫 **KV 缓存**（KV cache）。
#
# ## 6. `SelfAttentionV1`：把同样的步骤写成模块
#
# 一次处理所有查询时，第 1–4 步全都变成了矩阵乘法。我们照着书中的代码来写。


# %%
class SelfAttentionV1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)

    def forward(self, x):  # x: (T, d_in)
        keys = x @ self.W_key  # (T, d_out)
        queries = x @ self.W_query  # (T, d_out)
        values = x @ self.W_value  # (T, d_out)
        attn_scores = queries @ keys.T  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
        context_vec = attn_weights @ values  # (T, d_out)
        return context_vec


torch.manual_seed(123)
sa_v1 = SelfAttentionV1(d_in, d_out)
print(sa_v1(inputs))

# %% [markdown] en_hash="678b4f8a7be7"
# 种子相同，`torch.rand` 的调用顺序也相同，所以这个模块里装的正是第 1 节的那几个矩阵，它输出的第二行就是我们的 `context_vector_2`。整个矩阵都与书中印出的数值一致。
#
# 注意调用的写法是 `sa_v1(inputs)`，而不是 `sa_v1.forward(inputs)`。调用一个模块，运行的是 `nn.Module.__call__`。它会运行 `forward`，并在前后运行注册在这个模块上的**钩子**（hook，第 06 课用它追踪形状）。两种写法得到同一个 (T, d_out) 张量，下一个单元格会验证这一点。请直接调用模块本身，这样钩子才会运行。

# %%
assert torch.equal(sa_v1.W_query, W_query) and torch.equal(sa_v1.W_value, W_value)
out_v1 = sa_v1(inputs).detach()  # (T, d_out)
assert torch.equal(out_v1, sa_v1.forward(inputs).detach())  # (T, d_out)，module(x) 即运行 forward
torch.testing.assert_close(out_v1[1], context_vector_2.detach())
torch.testing.assert_close(
    out_v1, journey.reference["self_attention_v1_seed123"], atol=1e-4, rtol=0
)

# %% [markdown] en_hash="95eb968ea2c9"
# 下面是 `sa_v1` 内部的注意力权重，每个查询一行，唯独少了“starts”这一行，练习 3 要用到它。现在由投影决定谁关注谁。在这组随机（未经训练）的矩阵下，各行的权重仍然几乎均匀，只是每一行都稍稍偏向“journey”和“starts”。

# %%
shown = [0, 1, 3, 4, 5]  # 除 "starts"（索引 2）以外的每个查询
with torch.no_grad():
    queries_shown = inputs[shown] @ sa_v1.W_query  # (5, d_out)
    keys_v1 = inputs @ sa_v1.W_key  # (T, d_out)
    attn_weights_v1 = torch.softmax(queries_shown @ keys_v1.T / d_k**0.5, dim=-1)  # (5, T)
torch.testing.assert_close(attn_weights_v1[1], attn_weights_2.detach())  # "journey" 那一行
fig = mh.plot_attention(
    attn_weights_v1,
    journey.words,
    query_tokens=[journey.words[i] for i in shown],
    title=mh.tr("SelfAttentionV1 weights (seed 123)", "SelfAttentionV1 的权重（种子 123）"),
)
plt.show()

# %% [markdown] en_hash="382922850a92"
# ## 7. `SelfAttentionV2`：改用 `nn.Linear` 层
#
# 书中的第二个版本把三个 `nn.Parameter` 矩阵换成三个层 `nn.Linear(d_in, d_out, bias=qkv_bias)`，名字仍叫 `W_query`、`W_key`、`W_value`。线性层替我们做矩阵乘法，可以加偏置，初始的随机值也更好。除此之外，前向传播的步骤完全相同。你会在练习 1 中亲手写出这个类，这里先用课程自带的 `mh.SelfAttentionV2` 看看它算出什么。

# %%
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in, d_out)
print(sa_v2(inputs))
torch.testing.assert_close(
    sa_v2(inputs).detach(), journey.reference["self_attention_v2_seed789"], atol=1e-4, rtol=0
)

# %% [markdown] en_hash="812c166f6898"
# 用书中的种子 789，结果与书中印出的数值一致。这些数字与 V1 的不同（而且可以是负数），原因在于初始化不同，而不是计算方式不同。
#
# **`nn.Linear` 存的是转置（transpose）。** 线性层保存的 `weight` 形状为 `(d_out, d_in)`，计算的是 `x @ weight.T`。所以，V1 风格、形状为 `(d_in, d_out)` 的矩阵 `W` 就是 `linear.weight.T`。

# %%
print(sa_v2.W_query.weight.shape)  # (d_out, d_in) = (2, 3)
torch.testing.assert_close(sa_v2.W_query(inputs), inputs @ sa_v2.W_query.weight.T)

# %% [markdown] en_hash="7d3a5154b4cd"
# **为什么这种初始化更好。** `torch.rand` 从 $[0, 1)$ 中取值，每个权重都是正数，与一个很宽的输入相乘，结果会随 `d_in` 增大而变大。`nn.Linear` 从 $[-1/\sqrt{d_{in}}, 1/\sqrt{d_{in}})$ 中取值，以 0 为中心，宽度越大，取值范围越窄，所以无论 `d_in` 是多少，投影结果的大小都差不多。下面在 GPT-2 的宽度 768 上比一比。

# %%
_ = torch.manual_seed(123)
x_wide = torch.randn(6, 768)  # (T, 768)
W_rand = torch.rand(768, 64)  # V1 的写法，(d_in, d_out)
linear = nn.Linear(768, 64, bias=False)  # V2 的写法，weight 为 (d_out, d_in)
with torch.no_grad():
    weight_range = f"[{linear.weight.min():.4f}, {linear.weight.max():.4f}]"
    mh.show_table(
        [
            (mh.say("std of x @ W_rand", "x @ W_rand 的标准差"), f"{(x_wide @ W_rand).std():.2f}"),
            (mh.say("std of linear(x)", "linear(x) 的标准差"), f"{linear(x_wide).std():.2f}"),
            (mh.say("linear.weight range", "linear.weight 的范围"), weight_range),
            ("1 / sqrt(768)", f"{1 / 768**0.5:.4f}"),
        ]
    )

# %% [markdown] en_hash="26727729a38f"
# ### 检查（供 CI 使用，已折叠）
#
# 下一个单元格在 JupyterLab 中是隐藏的（点击即可展开）。它检查本课内联写出的 `SelfAttentionV1` 就是课程中的 `mh.SelfAttentionV1`，即种子相同、参数相同时，两者的输出逐位相同（课程包里的类只多了输入检查）。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
torch.manual_seed(123)
inline_v1 = SelfAttentionV1(d_in, d_out)
torch.manual_seed(123)
package_v1 = mh.SelfAttentionV1(d_in, d_out)
print(mh.assert_same_module(inline_v1, package_v1, inputs))

# %% [markdown] en_hash="4f34b6fe85af"
# ## 小结
#
# * 三个**可训练权重矩阵**把每个词元投影成一个**查询**、一个**键**和一个**值**（形状都是 `(T, d_out)`）。
# * 分数 `queries @ keys.T` 在做 softmax 之前要除以 $\sqrt{d_k}$。点积的方差是 $d_k$，不缩放就会让 softmax 饱和（权重接近 0 或 1），并让它的梯度消失。
# * 上下文向量是 `attn_weights @ values`，形状为 `(T, d_out)`。种子为 123 时，第 2 行就是书中的 [0.3061, 0.8210]。
# * `SelfAttentionV1` 直接用 `nn.Parameter` 存放形状为 `(d_in, d_out)` 的矩阵。`SelfAttentionV2` 用 `nn.Linear`，它的 `weight` 是转置 `(d_out, d_in)`，而且它的初始化能让投影结果保持合适的大小。
# * 下一课（第 03 课）不让词元偷看后面的内容，这就是因果注意力（causal attention）。
#
# ## 练习
#
# 参考答案见 `solutions/02_trainable_qkv_solutions.ipynb`。
#
# **练习 1（动手实现 `SelfAttentionV2`）。** 在下面的框架中写出书中的 `SelfAttentionV2`。`__init__(self, d_in, d_out, qkv_bias=False)` 创建三个层 `nn.Linear(d_in, d_out, bias=qkv_bias)`，分别命名为 `W_query`、`W_key`、`W_value`。`forward(self, x)` 接收形状为 (T, d_in) 的 `x`，按照 $\mathrm{softmax}(QK^\top / \sqrt{d_k})\,V$ 返回上下文向量 (T, d_out)。然后令 `answer = MySelfAttentionV2`（类本身）。检查器会用几组不同的尺寸构建它，把它的权重复制到 `mh.SelfAttentionV2` 中，比较两者的输出，检查每一行权重之和是否为 1、梯度能否传到全部三个层，并指出常见的错误。


# %%
class MySelfAttentionV2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        # 在这里写代码：self.W_query、self.W_key、self.W_value
        raise NotImplementedError

    def forward(self, x):  # x: (T, d_in)
        # 在这里写代码：键、查询、值 → 分数 → 缩放的 softmax → 上下文向量
        raise NotImplementedError


answer = None  # 在这里写代码
mhsa_helpers.exercises.check_build_self_attention(answer)

# %% [markdown] en_hash="aefcb8c3e1a3"
# **练习 2（权重迁移）。** `sa_v1`（种子 123，直接存放矩阵）和一个 `SelfAttentionV2` 计算的是同一个函数，只是权重的存储方式不同。创建一个 `mh.SelfAttentionV2(d_in, d_out)`，把 `sa_v1` 的三个矩阵复制到它的各层中，让它的输出与 `sa_v1` **完全相同**。第 7 节讲过 `nn.Linear` 怎样存储它的矩阵。层的 `weight` 要赋一个 `nn.Parameter(...)`。最后把 `answer` 设为这个对象。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_v1_to_v2(answer, sa_v1, inputs)

# %% [markdown] en_hash="71bfa5db4a0f"
# **练习 3。** 逐个词元写出文本的模型不能往后看：读到“starts”时，它后面的词元还没有出现。用第 1 节中种子 123 的矩阵，计算“starts”（$x^{(3)}$）的**上下文向量**，但只用它读过的词元“Your”“journey”“starts”：对这个查询和这三个词元，走一遍第 5 节的完整步骤（形状为 (2,)）。它的注意力权重之和还是 1 吗？怎样保证这一点？

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_context_vector_3(answer)
