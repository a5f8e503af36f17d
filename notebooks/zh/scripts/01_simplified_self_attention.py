# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="da39c3bc9cd8"
# # 01 · 简化的自注意力（simplified self-attention）
#
# **自注意力**（self-attention）让句子中的每个词元（token）都能看一看其他所有词元，从中取来自己需要的信息。这一课还没有可训练权重（trainable weights），只用原始的嵌入（embedding）来计算注意力。《从零构建大模型》（英文原书《Build a Large Language Model (From Scratch)》）第 3 章开头就是这样做的，我们还会把每一个数都与书中印出的数核对一遍。
#
# **学习目标**
# 1. 把**注意力分数**（attention score）算成**点积**（dot product）。先逐个计算，再用一次矩阵乘法全部算出。
# 2. 通过**归一化**（normalization）把分数变成**注意力权重**（attention weight）。先用除以总和的办法，再用 **softmax** 函数，并弄清朴素的 softmax 为什么会**溢出**（overflow），而 `torch.softmax` 为什么是**数值稳定**（numerically stable）的。
# 3. 把**上下文向量**（context vector）算成输入的加权和。先用循环，再用三行矩阵代码，并验证两者的结果一致。
# 4. 先预测，再验证。每个词元都和自己最相似吗？只有原始的点积为什么还不够？（这正是第 02 课引入查询和键的原因。）
#
# **预备知识：** 第 00 课（`00_start_here`）、Python 和矩阵乘法的概念。
#
# **用时：** 约 95 分钟（阅读、运行 29 个代码单元格、1 次预测、2 道练习、1 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 输入 `(T, d_in) = (6, 3)` → 分数和权重 `(T, T) = (6, 6)` → 上下文向量 `(T, d_in) = (6, 3)`。

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="596e236393a4"
# ## 1. 六个词元
#
# 书中的句子“Your journey starts with one step”被切分成六个**词元**，每个词元有一个 3 维的**嵌入向量**。我们直接加载它们，不必再手敲一遍。`inputs` 的第 `i` 行就是书中的 $x^{(i+1)}$。Python 从 0 开始计数，书从 1 开始，所以 `inputs[1]` 是 $x^{(2)}$，也就是“journey”。

# %%
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
for word, x in zip(journey.words, inputs):
    print(f"{word:>8}  {x}")

# %% [markdown] en_hash="079f170eeab5"
# ## 2. 一个查询的注意力分数：一次算一个点积
#
# 我们选“journey”作为**查询**（query），也就是提出问题的那个词元，把它与每个词元逐一比较，包括它自己。被拿来比较的这些词元叫作**键**（key）。这里的查询和键就是嵌入本身，到了第 02 课，它们会各自换成学习得到的向量。比较的方法就是点积，即把两个向量对应位置上的值相乘，再求和。对“Your”和“journey”来说，点积是
#
# $$x^{(1)} \cdot x^{(2)} = 0.43 \cdot 0.55 + 0.15 \cdot 0.87 + 0.89 \cdot 0.66 = 0.9544.$$
#
# 先让 Python 像手算那样，把这道算术做一遍。

# %%
x_1, x_2 = inputs[0], inputs[1]  # 各为 (3,)
by_hand = 0.43 * 0.55 + 0.15 * 0.87 + 0.89 * 0.66
print(round(by_hand, 4), torch.dot(x_1, x_2))

# %% [markdown] en_hash="9a581964b460"
# 一般地，对于有 $d$ 个特征的查询 $q$ 和键 $k$，有
#
# $$\text{分数}(q, k) = q \cdot k = \sum_{f=1}^{d} q_f \, k_f .$$
#
# 现在对全部六个词元做循环。留意第二项，那是查询和它自己的比较。

# %%
query = inputs[1]  # (3,) -- x(2), "journey"
attn_scores_2 = torch.empty(inputs.shape[0])  # (T,)
for i, x_i in enumerate(inputs):
    attn_scores_2[i] = torch.dot(x_i, query)
print(attn_scores_2)

# %%
torch.testing.assert_close(
    attn_scores_2, journey.reference["simplified_scores_2"], atol=1e-4, rtol=0
)
assert attn_scores_2.argmax() == 1

# %% [markdown] en_hash="c24be587fa3f"
# 这些值与书中印出的一致。下面看看这六个数各由什么组成。每根柱子把三个乘积 $q_f k_f$ 叠在一起，每个特征一种颜色，柱子的高度就是分数。画虚线的那根柱子是查询与它自己的分数。

# %%
import matplotlib.pyplot as plt

fig = mh.figures.plot_dot_products(query, inputs, journey.words, query_index=1)
plt.show()

# %% [markdown] en_hash="56c06114b468"
# 对“journey”来说，最大的分数 1.4950 正是它与自己的分数。紧随其后的是“starts”（1.4754），因为它的嵌入和“journey”的几乎一样。两个向量的方向越一致，点积越大。**不仅如此**，向量越长，点积也越大。那么，是不是每个词元都和自己最相似呢？先把这个问题记下来。第 5 节会算出全部分数，你要在看到它们之前先预测答案。

# %% [markdown] en_hash="4579d1644b6a"
# ## 3. 从分数到权重：归一化
#
# 分数可以是任意大小。要把它们当作混合的比例来用，需要一组非负、总和为 1 的数。“归一化”听起来高深，字面意思不过是把总和归为 1。最简单的办法是除以总和。比如两个人分别有 6 个和 4 个苹果，换算成权重就是 6/(6+4) = 0.6 和 4/(6+4) = 0.4。

# %%
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()  # (T,)
print(mh.say("Attention weights:", "注意力权重："), attn_weights_2_tmp)
print(mh.say("Sum:", "总和："), attn_weights_2_tmp.sum())

# %% [markdown] en_hash="589f3e9d9dff"
# 实际的注意力用的是 **softmax**，即 $\mathrm{softmax}(x)_i = e^{x_i} / \sum_j e^{x_j}$。指数运算把每个值都变成正数（负的分数也不例外），并拉大它们之间的差距，让最大的分数更明显地胜出。在训练中，它的梯度性质也更好。比较一下两行输出，softmax 给“journey”的权重是 0.2379，而不是 0.2278。

# %%
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)  # (T,)
print(mh.say("Attention weights:", "注意力权重："), attn_weights_2)
print(mh.say("Sum:", "总和："), attn_weights_2.sum())

# %% [markdown] en_hash="a02c916c4790"
# 把两种做法并排对照。左边是分数，右边的柱子是 softmax 由分数得到的权重，圆点是简单除以总和得到的权重。两者的顺序相同，softmax 把权重往分数最高的词元那边挪。最大的两个权重变大了（“journey”从 0.2278 变成 0.2379），其余三个变小了。不过并不是每个差距都被拉大。这些分数彼此很接近，$e^x$ 在这一段几乎是一条直线，最小的权重甚至还略有增大（从 0.1077 变成 0.1082）。

# %%
fig = mh.figures.plot_softmax_steps(attn_scores_2, journey.words)
plt.show()

# %%
torch.testing.assert_close(
    attn_weights_2_tmp, journey.reference["simplified_sum_normalized_2"], atol=1e-4, rtol=0
)
torch.testing.assert_close(
    attn_weights_2, journey.reference["simplified_softmax_2"], atol=1e-4, rtol=0
)
print(mh.say("both match the book's printed values", "两者都与书中印出的数值一致"))

# %% [markdown] en_hash="87b7886e5e3d"
# ### 朴素的 softmax，以及它为什么会出错
#
# 直接照着公式写，softmax 只需要一行代码。


# %%
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


print(softmax_naive(attn_scores_2))
torch.testing.assert_close(softmax_naive(attn_scores_2), attn_weights_2)

# %% [markdown] en_hash="fc548803ac2d"
# 在我们这些小分数上，它与 `torch.softmax` 的结果一致。现在把分数调大：向量较长、又不做缩放时，分数就可能这么大（见第 02 课）。`float32` 能表示的最大数约为 $3.4 \times 10^{38}$，所以只要 $x > 88.7$，$e^{x}$ 就会变成 `inf`，而 `inf / inf` 是 `nan`。

# %%
big = torch.tensor([1000.0, 1001.0])  # float32
print("exp(big)            :", torch.exp(big))
print("softmax_naive(big)  :", softmax_naive(big))
print("torch.softmax(big)  :", torch.softmax(big, dim=0))
print(mh.say("scores * 100, naive :", "分数 × 100，朴素公式："), softmax_naive(attn_scores_2 * 100))
print(
    mh.say("scores * 100, torch :", "分数 × 100，torch   ："),
    torch.softmax(attn_scores_2 * 100, dim=0),
)

# %%
assert torch.isnan(softmax_naive(big)).all()
assert torch.isfinite(torch.softmax(big, dim=0)).all()

# %% [markdown] en_hash="4ac3b6541dcc"
# 分数是绝对值很大的负数时，问题出在另一头，叫作**下溢**（underflow）。$e^{-1000}$ 被舍入为 0，而 `0 / 0` 同样是 `nan`。那么 `torch.softmax` 为什么没事？因为把每个分数都减去同一个数 $c$，softmax 的结果不变，$e^{c}$ 会被约掉。
#
# $$\frac{e^{x_i - c}}{\sum_j e^{x_j - c}} = \frac{e^{x_i} e^{-c}}{\sum_j e^{x_j} e^{-c}} =
# \frac{e^{x_i}}{\sum_j e^{x_j}}.$$
#
# 取 $c = \max_j x_j$，最大的指数项就是 $e^0 = 1$，不会溢出。和式中至少有一项是 1，所以总和也永远不会是 0。这就是 `torch.softmax` 内部用的技巧。

# %%
shifted = attn_scores_2 - attn_scores_2.max()  # (T,)，全都 <= 0
print(shifted)
assert torch.equal(torch.softmax(attn_scores_2, dim=0), torch.softmax(shifted, dim=0))
print(softmax_naive(big - big.max()))  # 朴素公式，平移之后就安全了

# %% [markdown] en_hash="c894b3ff74b2"
# ## 4. “journey”的上下文向量
#
# **上下文向量** $z^{(2)}$ 是**所有**输入向量的加权和，所用的权重就是“journey”的注意力权重。它的大小和一个嵌入相同（这里是 3）。每个词元都在其中掺进一点，掺得最多的是“journey”和“starts”。

# %%
context_vec_2 = torch.zeros(inputs.shape[1])  # (d_in,) = (3,)
for i, x_i in enumerate(inputs):
    context_vec_2 += attn_weights_2[i] * x_i
print(context_vec_2)

# %%
torch.testing.assert_close(
    context_vec_2, journey.reference["simplified_context_2"], atol=1e-4, rtol=0
)
# 这个循环就是向量与矩阵的乘积 (T,) @ (T, d_in) -> (d_in,)
torch.testing.assert_close(attn_weights_2 @ inputs, context_vec_2)

# %% [markdown] en_hash="45e4a71f4afb"
# 这与书中印出的 $z^{(2)}$ = [0.4419, 0.6515, 0.5683] 一致。用符号写就是
#
# $$z^{(2)} = \sum_{j=1}^{T} \alpha_{2j} \, x^{(j)}, \qquad \alpha_{2j} =
# \mathrm{softmax}_j\big(x^{(2)} \cdot x^{(j)}\big).$$
#
# 下图中，每个词元的嵌入先按它的权重缩小，再按特征逐个叠起来。黑色的柱子是总和，也就是 $z^{(2)}$ 的三个分量。

# %%
fig = mh.figures.plot_weighted_sum(
    attn_weights_2,
    inputs,
    journey.words,
    title=mh.tr("z(2): the context vector of 'journey'", "z(2)：“journey”的上下文向量"),
)
plt.show()

# %% [markdown] en_hash="d3c3d97c77f9"
# ## 5. 一次算出所有词元：三行代码
#
# 每个词元都可以当查询。把所有查询堆叠起来，这些点积就变成了一次矩阵乘法，`inputs @ inputs.T` 的第 `[i, j]` 项就是 $x^{(i+1)} \cdot x^{(j+1)}$。（`inputs.T` 是**转置**（transpose），形状为 (3, 6)。`@` 要求内侧的两个维度相等，即 (6, **3**) @ (**3**, 6)。）然后对每一行做 softmax（`dim=-1`，即最后一个维度），再做一次乘法，把输入混合起来。
#
# $$Z = \mathrm{softmax}\big(X X^\top\big) \, X, \qquad X \in \mathbb{R}^{T \times d_{in}},$$
#
# 其中 softmax 按行计算。第 02 课会把它变成真正的注意力公式。
#
# **先预测，再运行。** 下一个单元格会打印出全部 36 个分数。在此之前先想一想，六个词元中，有几个词元所在行的最大分数是它与**自己**的分数（即对角线上的那个）？把 `None` 换成 0 到 6 之间的一个整数，然后运行单元格。它只会记下你的猜测。

# %%
import mhsa_helpers.exercises

my_guess = None  # 你的预测：0 到 6 之间的一个整数
mhsa_helpers.exercises.check_prediction_self_match(my_guess)

# %%
attn_scores = inputs @ inputs.T  # (T, T)
attn_weights = torch.softmax(attn_scores, dim=-1)  # (T, T)，每一行的和为 1
all_context_vecs = attn_weights @ inputs  # (T, d_in)
print(mh.say("attention scores:", "注意力分数：") + f"\n{attn_scores}\n")
print(mh.say("attention weights:", "注意力权重：") + f"\n{attn_weights}\n")
print(f"all_context_vecs:\n{all_context_vecs}")

# %% [markdown] en_hash="b909846e8ce5"
# 现在揭晓预测的答案。每一行中，哪个键得到的分数最大？

# %%
best_key = attn_scores.argmax(dim=-1)  # (T,)
for i, word in enumerate(journey.words):
    print(f"{word:>8}", mh.say("scores highest with", "得分最高的是"), journey.words[best_key[i]])
fig = mh.figures.plot_self_similarity(attn_scores, journey.words)
plt.show()
mhsa_helpers.exercises.check_prediction_self_match(my_guess, reveal=True)

# %% [markdown] en_hash="52b0b4d9e1e9"
# 只有“Your”和“journey”与自己的分数最高，另外**四个**词元都输给了别的词元。原因就在公式 $x \cdot y = \lVert x \rVert \, \lVert y \rVert \cos \theta$ 里。点积不仅取决于两个向量的方向有多一致，还会随向量的长度而增长。比较一下各个嵌入的长度，也就是**范数**（norm）$\lVert x \rVert$。

# %%
print(inputs.norm(dim=-1))  # (T,)，每个嵌入的长度
assert (best_key == torch.arange(6)).sum() == 2

# %% [markdown] en_hash="0d00c4966023"
# “with”（长度 0.70）输给了长长的“journey”（1.22），尽管“with”与它自己的方向完全一致。原始点积还有两个局限。一是分数矩阵是**对称矩阵**（symmetric matrix），即 `attn_scores[i, j] == attn_scores[j, i]`，所以“with”对“journey”的关注必然等于“journey”对“with”的关注。二是这里没有任何东西可以学习。第 02 课给每个词元两个不同的、可学习的向量，一个是用来提问的**查询**（query），一个是供查询来匹配的**键**（key），这两个局限就此消除。长度的影响却只消除了一部分，因为查询和键仍然是这些向量的投影（projection），向量的长度依旧会影响分数。
#
# 回到那三个矩阵。每个矩阵的第 2 行（索引 1）正是我们为“journey”手算出的结果，而上下文矩阵与书中印出的值一致。

# %%
torch.testing.assert_close(attn_scores[1], attn_scores_2)
torch.testing.assert_close(attn_weights[1], attn_weights_2)
torch.testing.assert_close(all_context_vecs[1], context_vec_2)
torch.testing.assert_close(
    all_context_vecs, journey.reference["simplified_all_context"], atol=1e-4, rtol=0
)
assert torch.equal(attn_scores, attn_scores.T)  # 正如上文所说，矩阵是对称的

# %% [markdown] en_hash="1edab68d01ef"
# ### 双重循环的结果一样
#
# 如果矩阵乘法看起来像变魔术，可以把它展开成遍历所有 $(i, j)$ 对的两层循环，第 `[i, j]` 项就是一个点积。

# %%
attn_scores_loop = torch.empty(inputs.shape[0], inputs.shape[0])  # (T, T)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores_loop[i, j] = torch.dot(x_i, x_j)
print(attn_scores_loop)

# %% [markdown] en_hash="fb105cf0bc9a"
# ## 6. 看看权重
#
# 用一张**热力图**（heatmap）来展示这个 (6, 6) 的注意力权重矩阵。行是查询（谁在关注），列是键（被关注的是谁），每一行的和都是 1。没有可训练权重时，这张图平淡无奇。每个词元都把注意力分散给所有词元，只是“journey”和“starts”稍稍多得一些，因为它们的嵌入最长。

# %%
fig = mh.plot_attention(
    attn_weights,
    journey.words,
    title=mh.tr("Simplified self-attention weights", "简化自注意力的权重"),
)
plt.show()

# %% [markdown] en_hash="0908e1a8a931"
# ### 检查（供 CI 使用，已折叠）
#
# 下一个单元格在 JupyterLab 中是隐藏的（点击即可展开）。它检查本课顺带提到的两个说法。一是双重循环与矩阵乘法的结果相等，但只在浮点舍入误差之内成立，因为两者相加的顺序可能不同，所以这里用 `assert_close` 而不是 `torch.equal`。二是每一行权重之和都是 1。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
torch.testing.assert_close(attn_scores_loop, attn_scores)
torch.testing.assert_close(attn_weights.sum(dim=-1), torch.ones(6))
print(
    mh.say(
        "double loop == inputs @ inputs.T (to float rounding); every row of weights sums to 1",
        "双重循环 == inputs @ inputs.T（在浮点舍入误差内），权重的每一行之和都是 1",
    )
)

# %% [markdown] en_hash="4b1b4b898bb4"
# ### 练习要用的两个工具
#
# 下面的练习要用到两个本课还没用过的工具，这里先在一个小张量上演示。`torch.cat` 沿一个已有的维度把张量接起来（默认 `dim=0`，即按行接）。`keepdim=True` 会保留 `max`、`sum`、`mean` 这类归约运算去掉的那一维，这样结果仍和原来的行对齐（每行一个值，形状 (rows, 1)），可以和它们广播运算。有一个归约不太一样：`max(dim=...)` 返回的是一对结果，即最大值和它们所在的位置（索引），其中 `.values` 才是最大值张量。

# %%
a = torch.tensor([[1.0, 2.0], [3.0, 5.0]])  # (2, 2)
row = torch.tensor([[7.0, 8.0]])  # (1, 2)
print(torch.cat([a, row]))  # (3, 2)：先是 a 的各行，再接上 row
print(a.mean(dim=-1))  # (2,)：每行一个平均值，行这一维没有了
print(a.mean(dim=-1, keepdim=True))  # (2, 1)：保留了这一维
print(a - a.mean(dim=-1, keepdim=True))  # (2, 2)：每一行减去它自己的平均值
print(a.max(dim=-1, keepdim=True).values)  # (2, 1)：每一行的最大值

# %% [markdown] en_hash="8b9edc8a78f9"
# ## 小结
#
# * **注意力分数**是查询与键的点积。`inputs @ inputs.T` 一次给出全部分数，形状为 (T, T)。原始点积会偏袒长向量，6 个词元中只有 2 个与自己的分数最高。
# * 对每一行（`dim=-1`）做 **softmax**，就把分数变成了**注意力权重**，它们全为正数，和为 1。朴素的 `exp(x) / exp(x).sum()` 遇到大分数会溢出成 `nan`。`torch.softmax` 先减去该行的最大值，这在数学上什么也没有改变。
# * **上下文向量**是输入的加权和，即 `attn_weights @ inputs`，形状为 (T, d_in)。循环版和矩阵版的结果一致，也与书中印出的值吻合。
# * 还缺什么？这里的模型什么也**学**不到。第 02 课会加入可训练的查询、键、值（query, key, value）矩阵。
#
# ## 练习
#
# 把你的答案写在 `None` 处，运行单元格，再读一读检查器打印的那一行。参考答案见 `solutions/01_simplified_self_attention_solutions.ipynb`。
#
# **练习 1（第七个词元）。** 句子还在继续，变成了“Your journey starts with one step forward”。新词元“forward”有一个编造的嵌入 `mhsa_helpers.exercises.NEW_TOKEN_EMBEDDING` = (0.60, 0.40, 0.20)。让“forward”关注全部**七个**词元（包括它自己），计算它的上下文向量（形状为 (3,)）。

# %%
new_embedding = torch.tensor(mhsa_helpers.exercises.NEW_TOKEN_EMBEDDING)  # (d_in,) = (3,)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_context_vector_new_token(answer)

# %% [markdown] en_hash="d95521e0ae98"
# **练习 2（动手实现对每一行都稳定的 softmax）。** 第 3 节让 softmax 对**一个**向量变得安全。请写一个函数 `softmax_rows(x)`，对形状为 (rows, cols) 的二维张量 `x` 返回每一行的 softmax。无论数值多大多小，结果都不能出现 `inf` 或 `nan`，而且不能调用 `torch.softmax`。然后令 `answer = softmax_rows`（函数本身）。检查器还会试一个各行数值相差极远的矩阵 `[[1000., 1001.], [-1000., -1001.]]`。整个矩阵只用一个最大值，够不够？

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_softmax_rows(answer)

# %% [markdown] en_hash="cc6be8b2a9d9"
# **练习 3（热身：收到的注意力）。** `attn_weights` 的每一行是一个词元**分出去**的注意力，和为 1。每个词元从全部六个查询那里总共**收到**多少注意力？把它算成一个形状为 (6,) 的张量。哪个词元收到的最多？第 6 节的热力图是否与此一致？

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_attention_received(answer)
