# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="06372efbaa6b"
# # 03 · 因果注意力（causal attention）
#
# GPT 模型训练的任务是预测下一个词元（token）。如果在计算位置 $i$ 时，注意力能看到 $i$ 之后的词元，那就等于考试时翻书抄答案。**因果注意力**（causal attention）也叫掩码注意力（masked attention），它让每个词元只能关注它自己和它之前的词元。本课用两种方法构建**因果掩码**（causal mask）。一种是书中“笨但直白”的三步法，它把道理讲得清清楚楚。另一种是实际代码采用的一步法，即填入 `-inf`。
#
# **学习目标**
# 1. 用**下三角矩阵**（lower-triangular matrix）遮住未来，再对每一行做**重新归一化**（renormalization），这就是三步法。
# 2. 回答**信息泄露**（information leakage）的问题。第 1 步的 softmax 看到过未来的分数，但这些分数没有留下任何痕迹。分别从代数上和数值上说明这一点。
# 3. 在 softmax 之前用 `-inf` 做掩码（一步法），并验证两种方法的结果一致。
# 4. 看懂背后的数学技巧。对全为 0 的分数做带掩码的 softmax，相当于对每个词元的过去取平均。换成真正的分数，得到的就是因果注意力，也就是对过去的加权平均。
#
# **预备知识：** 第 02 课（`02_trainable_qkv`）中的查询、键、值（query, key, value），缩放后的 softmax 和 `SelfAttentionV2`。**用时：** 约 85 分钟（阅读、运行 26 个代码单元格、1 次预测、1 道练习、1 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 分数 `(T, T)` → 因果权重 `(T, T)`（对角线以上为零，每行之和为 1）→ 上下文向量（context vector）`(T, d_out)`。

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="5b65fbe82db6"
# ## 1. 起点：能看到一切的注意力
#
# 我们取第 02 课的 `SelfAttentionV2`，使用书中的随机种子 789，完全按照它的 `forward` 中的做法计算注意力权重（attention weight）。

# %%
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
words = journey.words

torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in=3, d_out=2)

with torch.no_grad():
    queries = sa_v2.W_query(inputs)  # (T, d_out)
    keys = sa_v2.W_key(inputs)  # (T, d_out)
    values = sa_v2.W_value(inputs)  # (T, d_out)
attn_scores = queries @ keys.T  # (T, T)
d_k = keys.shape[-1]  # 2
attn_weights = torch.softmax(attn_scores / d_k**0.5, dim=-1)  # (T, T)
print(attn_weights)

# %%
torch.testing.assert_close(
    attn_weights, journey.reference["seed789_attn_weights"], atol=1e-4, rtol=0
)
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown] en_hash="4740b15081e9"
# “journey”那一行（第 2 行）是 [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477]。它把权重分给了“starts”、“with”、“one”、“step”，而这些词元全都在“journey”**之后**。模型生成文本时，这些词元还不存在。所以这张热力图（heatmap）中对角线以上的部分必须全部去掉。

# %%
import matplotlib.pyplot as plt

fig = mh.plot_attention(
    attn_weights,
    words,
    title=mh.tr("Before masking: every token sees all", "掩码之前：每个词元都能看到全部"),
)
plt.show()

# %% [markdown] en_hash="aefaf273d545"
# 掩码作用在分数上，所以先看看它要对分数做什么。查询与任何**更靠后**的键之间的分数（图中灰色部分）都必须忽略，只有对角线上及其下方的分数才算数。

# %%
fig = mh.figures.plot_causal_scores(attn_scores / d_k**0.5, words)
plt.show()

# %% [markdown] en_hash="734bb7c518b6"
# ## 2. 三步法
#
# 1. 照常做 softmax（上面已经做过了）。
# 2. 乘以一个元素全为 1 的下三角矩阵，对角线以上的元素随之变成 0。
# 3. 每一行除以它新的和，使每行之和重新等于 1。
#
# `torch.tril`（取自“triangle, lower”，即下三角）保留对角线及其下方的所有元素。

# %%
context_length = attn_scores.shape[0]  # T = 6
mask_simple = torch.tril(torch.ones(context_length, context_length))  # (T, T)
print(mask_simple)

# %%
masked_simple = attn_weights * mask_simple  # (T, T)，对角线以上为 0
print(masked_simple)

# %% [markdown] en_hash="639b6fd2b85e"
# 各行之和不再是 1（第 1 行只剩下 0.1921）。第 3 步就来解决这个问题。

# %%
row_sums = masked_simple.sum(dim=-1, keepdim=True)  # (T, 1)
masked_simple_norm = masked_simple / row_sums  # (T, T)
print(masked_simple_norm)

# %%
torch.testing.assert_close(
    masked_simple_norm, journey.reference["seed789_masked_renormalized"], atol=1e-4, rtol=0
)
torch.testing.assert_close(masked_simple_norm.sum(dim=-1), torch.ones(context_length))
print(
    mh.say(
        "matches the book's printed values; every row sums to 1",
        "与书中印出的数值一致，每一行之和都是 1",
    )
)

# %% [markdown] en_hash="615f8e05884c"
# 现在“journey”只关注“Your”和它自己，权重为 [0.5517, 0.4483, 0, 0, 0, 0]，与书中印出的一致。最后一行（“step”可以看到所有词元）完全没有变化。
#
# ## 3. 未来漏进来了吗？
#
# 读到这里，你应该会起疑。第 1 步的 softmax 除以的是**整行**的和，未来的分数也算在里面。未来会不会借着这个分母，偷偷混进了权重？
#
# 不会。记第 $i$ 行缩放后的分数为 $s_j$，完整的分母为 $S = \sum_{k=1}^{T} e^{s_k}$。对于保留下来的位置 $j \le i$，有
#
# $$\text{第 1 步：} p_j = \frac{e^{s_j}}{S}, \qquad \text{第 3 步：}
# \frac{p_j}{\sum_{k \le i} p_k} = \frac{e^{s_j} / S}{\sum_{k \le i} e^{s_k} / S}
# = \frac{e^{s_j}}{\sum_{k \le i} e^{s_k}}.$$
#
# 未来信息只出现在分母 $S$ 中，而 $S$ 被约掉了。剩下的正是**只在未被遮住的分数上做的 softmax**。下面逐行验证这一点。

# %%
scaled_scores = attn_scores / d_k**0.5  # (T, T)
for i in range(context_length):
    only_past = torch.softmax(scaled_scores[i, : i + 1], dim=-1)  # (i + 1,)
    torch.testing.assert_close(masked_simple_norm[i, : i + 1], only_past)
print(
    mh.say(
        "each row of the three-step result == softmax over that row's past and present scores",
        "三步法结果的每一行 == 对该行过去和当前分数做的 softmax",
    )
)

# %% [markdown] en_hash="805831e5633e"
# ## 4. 一步法：在 softmax 之前填入 `-inf`
#
# 既然答案是“只在未被遮住的分数上做 softmax”，我们就可以直接这样算。把未来的分数设为 $-\infty$，再做 softmax。由于 $e^{-\infty} = 0$，这些位置的权重自动为 0，也从分母中消失了。每行之和本来就是 1，无需再重新归一化。
#
# `torch.triu(..., diagonal=1)`（取自“triangle, upper”，即上三角，从对角线上方一格开始）标出要隐藏的位置，`masked_fill` 再在掩码为 `True` 的地方写入 `-inf`。偏移量可正可负：0 就是对角线本身，正的 `diagonal` 把分界线往上移，负的往下移。例如 `torch.tril(..., diagonal=-1)` 只保留严格位于对角线以下的部分，掩码下面打印的就是它。

# %%
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)  # (T, T)，1 = 未来
print(mask)
print(torch.tril(torch.ones(4, 4), diagonal=-1))  # (4, 4)：严格位于对角线以下的部分
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)  # (T, T)
print(masked)

# %%
attn_weights_causal = torch.softmax(masked / d_k**0.5, dim=-1)  # (T, T)
print(attn_weights_causal)

# %% [markdown] en_hash="de5ef8850f42"
# 下面验证它与三步法得到的矩阵相同。

# %%
torch.testing.assert_close(attn_weights_causal, masked_simple_norm)
torch.testing.assert_close(
    attn_weights_causal, journey.reference["seed789_masked_renormalized"], atol=1e-4, rtol=0
)
largest_difference = (attn_weights_causal - masked_simple_norm).abs().max()
assert largest_difference < 1e-6
print(
    mh.say("largest difference below 1e-6:", "最大差异小于 1e-6："), bool(largest_difference < 1e-6)
)

# %% [markdown] en_hash="1047868e11fe"
# 两者在浮点精度内相等（本课末尾折叠起来的检查单元格会细看最后几个比特）。下图用我们缩放后的分数，把两条路径并排画了出来。上面是三步法，下面是先填入 `-inf`、再做一次 softmax，两条路最后得到同一个矩阵。

# %%
fig = mh.figures.plot_mask_paths(attn_scores / d_k**0.5, words)
plt.show()

# %% [markdown] en_hash="8bdbe83a8b24"
# 实际的实现都用一步法，用一次 `masked_fill` 代替乘法、求和与除法这三步。GPT 模型生成文本时，`-inf` 技巧还会再次出现。**top-k 采样**（top-k sampling）在 softmax 之前，把最大的 k 个分数以外的所有分数都设为 `-inf`，于是只有这 k 个词元可能被选中。

# %% [markdown] en_hash="5d6492d5db82"
# ## 5. 数学上的小技巧：因果注意力是对过去的平均
#
# Andrej Karpathy 在讲座《Let's build GPT》里从另一个角度看待因果掩码。一个词元对它的过去能做的最简单的事，就是对它自己和它之前的所有词元取**平均**。词元从 1 开始编号，第 $i$ 个词元得到
#
# $$\bar{x}^{(i)} = \frac{1}{i} \sum_{j=1}^{i} x^{(j)} .$$
#
# 先用循环对六个嵌入（embedding）计算一遍。代码从 0 开始编号，所以代码里索引为 `i` 的那一行，就是公式里的第 $i + 1$ 个词元。

# %%
average_loop = torch.zeros(context_length, 3)  # (T, d_in)
for i in range(context_length):
    average_loop[i] = inputs[: i + 1].mean(dim=0)  # (d_in,)：前 i + 1 行（索引 0..i）的平均
print(average_loop)

# %% [markdown] en_hash="c623986041ab"
# 这个循环其实就是一次矩阵乘法。把 `torch.tril(torch.ones(T, T))`（第 2 节的 `mask_simple`）的每一行除以该行之和，第 $i$ 行的前 $i$ 个元素就是 $1/i$，其余是 0。用它乘以输入，正好得到前 $i$ 个词元的平均，即
#
# $$\bar{X} = W X, \qquad W_{ij} = \begin{cases} 1/i & j \le i \\ 0 & j > i \end{cases}$$

# %%
ones_below = torch.tril(torch.ones(context_length, context_length))  # (T, T)
average_weights = ones_below / ones_below.sum(dim=-1, keepdim=True)  # (T, T)，每行之和为 1
average_matmul = average_weights @ inputs  # (T, T) @ (T, d_in) -> (T, d_in)
print(average_weights)
assert torch.equal(ones_below, mask_simple)  # 正是三步法里的那个矩阵
torch.testing.assert_close(average_matmul, average_loop)  # 循环 == 矩阵乘法

# %% [markdown] en_hash="51d27cda75f9"
# $W$ 也可以写成一个 softmax。从全为 0 的分数出发（哪个词元都不偏爱），像第 4 节那样用 $-\infty$ 遮住未来，再对每一行做 softmax。看得见的 $i$ 个位置变成 $e^0 = 1$，被遮住的位置变成 $e^{-\infty} = 0$。于是每一行在过去的位置上是 $1/i$，在未来的位置上是 0，得到的还是同一个矩阵。写成公式就是
#
# $$W = \operatorname{softmax}\big(\operatorname{mask}(\mathbf{0})\big), \qquad
# \operatorname{mask}(S)_{ij} = \begin{cases} S_{ij} & j \le i \\ -\infty & j > i
# \end{cases}$$

# %%
zero_scores = torch.zeros(context_length, context_length)  # (T, T)：还没有任何偏好
average_softmax = torch.softmax(zero_scores.masked_fill(mask.bool(), -torch.inf), dim=-1)  # (T, T)
print(average_softmax)
assert torch.equal(average_softmax, average_weights)  # 带 -inf 的 softmax == tril / 行和
torch.testing.assert_close(average_softmax @ inputs, average_loop)  # 三种算法结果一致

# %% [markdown] en_hash="6c86160bbe0d"
# **因果注意力，就是带上学到的偏好来做这个平均。** 把 0 换成 `sa_v2` 缩放后的分数 $q^{(i)} \cdot k^{(j)} / \sqrt{d_k}$，同样的带掩码 softmax 就给出第 4 节的因果权重。再用这些权重去乘值（而不是输入），每个词元得到的就是它过去各个值的**加权平均**（weighted average），权重取决于它的查询与每个键的匹配程度。写成公式就是
#
# $$Z = \operatorname{softmax}\Big(\operatorname{mask}\big(QK^\top / \sqrt{d_k}\big)\Big)\,V .$$

# %%
scored = torch.softmax((attn_scores / d_k**0.5).masked_fill(mask.bool(), -torch.inf), dim=-1)
torch.testing.assert_close(scored, attn_weights_causal)  # (T, T)：第 4 节的权重
context_causal = scored @ values  # (T, T) @ (T, d_out) -> (T, d_out)
print(mh.say("plain average, row 'starts':", "简单平均，“starts”这一行："), average_weights[2])
print(mh.say("causal weights, row 'starts':", "因果权重，“starts”这一行："), scored[2])
print(context_causal)

fig, (ax_average, ax_scored) = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
mh.plot_attention(
    average_weights,
    words,
    ax=ax_average,
    title=mh.tr("Zero scores: the plain average", "分数全为 0：简单平均"),
    vmax=1.0,
    cbar=False,
)
mh.plot_attention(
    scored,
    words,
    ax=ax_scored,
    title=mh.tr("Scores of sa_v2: causal attention", "sa_v2 的分数：因果注意力"),
    vmax=1.0,
)
plt.show()

# %% [markdown] en_hash="9896a0821d31"
# 分数全为 0 时，得到的是简单平均。有了学到的分数，词元就能自己选择多听过去的哪一部分。`sa_v2` 的权重还没有训练，所以因果权重的各行仍接近简单平均。例如“starts”这一行是 0.3800、0.3097、0.3103，而简单平均是各 1/3。上面两张图并排展示了这一点。让权重偏离平均的是训练（第 08 课）。
#
# ## 6. 用实验来证明：改变未来
#
# 如果没有泄露，那么改变**最后一个**词元（“step”）就不应该改变前面任何一行。我们把它的嵌入换成一个截然不同的向量，然后全部重算一遍。
#
# **先预测，再运行。** 使用一步法的因果掩码时，“step”的嵌入改变后，36 个注意力权重中会有几个发生变化？把 `None` 换成 0 到 36 之间的一个整数，然后运行单元格。这个单元格只会记下你的猜测。

# %%
import mhsa_helpers.exercises

my_guess = None  # 你的预测：0 到 36 之间的一个整数
mhsa_helpers.exercises.check_prediction_changed_weights(my_guess)

# %% [markdown] en_hash="2b3432f52f25"
# 下面三个函数对任意输入 `x` 都使用 `sa_v2` 的权重，分别计算一步法的因果权重、三步法的因果权重和完全不加掩码的权重。


# %%
def causal_weights_one_step(x):
    # 一步法：sa_v2 对输入 x 的因果注意力权重，(T, d_in) -> (T, T)
    with torch.no_grad():
        scores = sa_v2.W_query(x) @ sa_v2.W_key(x).T  # (T, T)
    future = torch.triu(torch.ones(len(x), len(x), dtype=torch.bool), diagonal=1)  # (T, T)
    return torch.softmax(scores.masked_fill(future, -torch.inf) / d_k**0.5, dim=-1)


def causal_weights_three_step(x):
    # 三步法：sa_v2 对输入 x 的因果注意力权重，(T, d_in) -> (T, T)
    with torch.no_grad():
        scores = sa_v2.W_query(x) @ sa_v2.W_key(x).T  # (T, T)
    weights = torch.softmax(scores / d_k**0.5, dim=-1) * torch.tril(torch.ones(len(x), len(x)))
    return weights / weights.sum(dim=-1, keepdim=True)


def full_weights(x):
    # 完全不加掩码，用来对比
    with torch.no_grad():
        scores = sa_v2.W_query(x) @ sa_v2.W_key(x).T  # (T, T)
    return torch.softmax(scores / d_k**0.5, dim=-1)


changed = inputs.clone()  # (T, d_in)
changed[5] = torch.tensor([5.0, -3.0, 2.0])  # 一个截然不同的“step”
print(
    mh.say("no mask: largest change in rows 1-5 =", "不加掩码：第 1-5 行的最大变化 ="),
    (full_weights(changed) - full_weights(inputs))[:5].abs().max(),
)

# %% [markdown] en_hash="a6410062c053"
# 不加掩码时，未来明显改变了前面的行。用了一步法掩码，前五行则**完全相同，一个比特都不差**，因为未来的分数在 softmax 看到它们之前，就已经被 `-inf` 覆盖了。

# %%
before, after = causal_weights_one_step(inputs), causal_weights_one_step(changed)
assert torch.equal(before[:5], after[:5])
print(
    mh.say("one-step: rows 1-5 unchanged (torch.equal):", "一步法：第 1-5 行不变（torch.equal）："),
    torch.equal(before[:5], after[:5]),
)
print(mh.say("only the last row moved:\n", "只有最后一行变了：\n"), after[5])
print(
    mh.say("weights that changed, with the mask:", "加掩码时变化的权重："),
    int((before != after).sum()),
    mh.say("of 36", "/ 36"),
)
unmasked_changes = int((full_weights(changed) != full_weights(inputs)).sum())
print(
    mh.say("weights that changed, without a mask:", "不加掩码时变化的权重："),
    unmasked_changes,
    mh.say("of 36", "/ 36"),
)
mhsa_helpers.exercises.check_prediction_changed_weights(my_guess, reveal=True)

# %% [markdown] en_hash="6758b020fd6d"
# 最后一行是唯一允许看“step”的一行，而它会看所有词元，所以它的六个权重全都变了，其余 30 个权重分毫未动。不加掩码时，36 个权重全都会变。

# %% [markdown] en_hash="9a7cb6c30ae4"
# 用三步法时，前面各行保持不变，最多只在最后一位上有舍入差异。未来确实进入了 $S$（所以第 1 步的舍入有所不同），但它在第 3 步被约掉了。

# %%
before3, after3 = causal_weights_three_step(inputs), causal_weights_three_step(changed)
torch.testing.assert_close(after3[:5], before3[:5], atol=1e-6, rtol=0)
torch.testing.assert_close(after3, after)
print(
    mh.say(
        "three-step: rows 1-5 unchanged to 1e-6, and equal to the one-step result",
        "三步法：第 1-5 行在 1e-6 内不变，并且等于一步法的结果",
    )
)

# %% [markdown] en_hash="f84bae19f7c8"
# ## 7. 掩码前后对比
#
# 下图用同一个从 0 到 1 的色标，画出同一组权重在掩码前后的样子。对角线以下，每一行都被拉伸，使行和重新为 1。对角线以上则什么都不剩。越靠前的词元，能分到它注意力的词元就越少（“Your”把全部注意力都留给了自己）。

# %%
fig, (ax_before, ax_after) = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
mh.plot_attention(
    attn_weights,
    words,
    ax=ax_before,
    title=mh.tr("Before: full attention", "掩码前：完整的注意力"),
    vmax=1.0,
    cbar=False,
)
mh.plot_attention(
    attn_weights_causal,
    words,
    ax=ax_after,
    title=mh.tr("After: causal mask", "掩码后：因果掩码"),
    vmax=1.0,
)
plt.show()

# %% [markdown] en_hash="ce4e4408133d"
# ### 检查（供 CI 使用，已折叠）
#
# 下一个单元格在 JupyterLab 中是隐藏的（点击即可展开）。它检查本课所依赖的两件事：
# * 课程的工具包做的是同样的事。`mh.causal_mask` 构造出的正是我们的掩码。`mh.masked_attention`（后续各课中每个因果注意力类都会调用它）给出的权重与我们的一步法逐位相同，上下文向量也正是掩码后的权重乘以值。
# * 两种方法在浮点精度内一致，但不一定逐位相同。三步法舍入两次（先除以完整的和 $S$，再除以部分和），而且在 softmax 内部减去的是**整行**的最大值，一步法则只做一次除法。在本课程的 CI 机器上，对角线上及其下方的 21 个元素中有好几个在最后几位上不同（具体几个取决于 CPU，所以这个单元格不打印个数）。因此本课用 `assert_close` 来比较两者。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
assert torch.equal(mh.causal_mask(context_length), mask)
context_vecs, weights_pkg = mh.masked_attention(
    queries, keys, values, mh.causal_mask(context_length).bool()
)
assert torch.equal(weights_pkg, attn_weights_causal)
assert torch.equal(context_vecs, attn_weights_causal @ values)
torch.testing.assert_close(context_vecs[0], values[0])  # “Your”只能看到它自己
print(
    mh.say(
        "mh.causal_mask and mh.masked_attention == the one-step method, bit for bit",
        "mh.causal_mask 和 mh.masked_attention == 一步法，逐位相同",
    )
)

kept = ~mask.bool()  # (T, T)：对角线上及其下方的 21 个元素
assert (attn_weights_causal - masked_simple_norm)[kept].abs().max() < 1e-6
print(
    mh.say(
        "three-step vs one-step: every kept entry agrees to within 1e-6",
        "三步法与一步法：保留的每个元素相差都在 1e-6 以内",
    )
)

# %% [markdown] en_hash="684e1178beb1"
# ## 小结
#
# * **因果注意力**让词元 $i$ 只关注词元 $1..i$。在 (T, T) 的注意力权重中，对角线以上的元素都必须为 0。
# * 三步法先做 softmax，再乘以 `torch.tril(torch.ones(T, T))`，最后每行除以它的和。书中“journey”那一行变成 [0.5517, 0.4483, 0, 0, 0, 0]。
# * 不存在**信息泄露**。整行的分母在重新归一化时被约掉了，结果就是只在未被遮住的分数上做的 softmax。改变一个未来的词元，前面的行保持不变。
# * 实际该用的是一步法，即先做 `scores.masked_fill(torch.triu(ones, diagonal=1).bool(), -torch.inf)`，再做 softmax。它得到的权重相同（在浮点精度内），运算却更少。
# * 数学上的小技巧：`tril(ones) / 行和`、对全为 0 的分数做 `-inf` 掩码后的 softmax、一个循环，这三者都是对每个词元的过去取平均。把 0 换成分数 $QK^\top / \sqrt{d_k}$，同一个 softmax 就成了因果注意力，也就是对过去各个值的加权平均。
# * 第 04 课将加入 **dropout**（随机失活），并把这一切封装成一个能处理批次（batch）输入的 `CausalAttention` 类，掩码作为缓冲区（buffer）保存在类中。
#
# ## 练习
#
# 参考答案见 `solutions/03_causal_attention_solutions.ipynb`。
#
# **练习 1（局部窗口）。** 有些模型只让每个词元看到最近的几个词元，这叫作**局部注意力**（local attention）或**滑动窗口注意力**（sliding-window attention）。取 `T = 5`，假设每个词元只能看到**它自己和紧挨在它前面的那一个词元**。请构造一个 (5, 5) 的布尔掩码，在词元**不能**看的位置上为 `True`（也就是 `masked_fill` 接受的那种掩码）。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_local_mask(answer)

# %% [markdown] en_hash="70c12dcbf1ce"
# **练习 2（动手实现带窗口的因果权重）。** 编写 `causal_weights(attn_scores, window=None)`。它的输入是**已经**除以 $\sqrt{d_k}$ 缩放过的分数，形状为 (T, T)，也可以带任意前导维度，即 (..., T, T)，例如 (b, T, T) 或 (b, num_heads, T, T)。它返回形状相同的注意力权重。`window=None` 时，结果就是本课的因果权重。`window=w`（w 为 ≥ 1 的整数）时，权重是**局部**的，每个词元只看得到自己和紧挨在它前面的 `w - 1` 个词元。练习 1 就是 `w = 2` 的情形，这里则要对任意 T、任意 w 和任意前导维度都成立。写好后令 `answer = causal_weights`（函数本身）。检查器会在多种大小、批次形状和窗口（包括比 T 还宽的窗口）下运行它，检查不该看的位置是否为零、每行之和是否为 1、改变未来的分数是否对结果毫无影响、梯度是否只流向过去的分数，并会指出常见的错误。


# %%
def causal_weights(attn_scores, window=None):
    # (..., T, T) 的缩放后注意力分数 -> (..., T, T) 的因果注意力权重。
    # window=None：普通的因果注意力；window=w：每个词元只看得到它自己和它之前的 w - 1 个词元。
    # 在这里写代码
    raise NotImplementedError


answer = None  # 在这里写代码
mhsa_helpers.exercises.check_build_causal_weights(answer)
