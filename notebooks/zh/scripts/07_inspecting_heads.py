# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="27318ab69e83"
# # 07 · 观察注意力头（attention heads）
#
# 第 06 课构建的 `MultiHeadAttention` 只用一个大投影（projection），再把结果切成多个头。每个头都算出自己的一个 (T, T) **注意力权重**（attention weights）矩阵。本课把这个模块打开，逐个头查看这些矩阵，并追问它们能告诉我们什么、不能告诉我们什么。
#
# **学习目标**
# 1. 用 `return_weights=True` 取出每个头的权重，为每个头画一张**热力图**（heatmap）。
# 2. 用**熵**（entropy）概括每个头。只看一个词元（token）的头，熵为 0。把注意力均匀分散开的因果头，熵最大，为 $\frac{1}{T}\sum_i \log(i+1)$。
# 3. 用一个交互式探索工具改变头数、dropout（随机失活）的丢弃率（dropout rate）和随机种子。
# 4. 认清局限。注意力权重不等于解释，头与头之间也可能存在**冗余**（redundancy）。第 08 课会训练模型，用实验来检验这一点。
#
# **预备知识：** 第 06 课（`06_multihead_split`）中的 `MultiHeadAttention`、`num_heads` 和 `head_dim = d_out // num_heads`。**用时：** 约 60 分钟（阅读、运行 17 个代码单元格、3 道练习，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 输入 `x` 的形状为 `(b, T, d_in)` 时，`mha(x, return_weights=True)` 返回 `(out, weights)`，其中 `out` 为 `(b, T, d_out)`，`weights` 为 `(b, num_heads, T, T)`。`mh.head_entropy(weights)` 给出 `(num_heads,)`。

# %%
import matplotlib.pyplot as plt
import torch

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="cb18d57b4863"
# ## 1. 每个头一张图：`return_weights=True`
#
# `MultiHeadAttention.forward` 有一个调试开关。设置 `return_weights=True` 后，它还会返回每个头的 softmax 权重，形状为 `(b, num_heads, T, T)`。我们沿用第 06 课里书中的设置（随机种子 123，`d_in=3`，`d_out=2`，2 个头，因此 `head_dim=1`），输入也是书中的那个批次（batch）。

# %%
journey = mh.load_journey()
words = journey.words
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)

torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2)
with torch.no_grad():
    out, weights = mha(batch, return_weights=True)  # (2, 6, 2), (2, 2, 6, 6)
print("out:    ", tuple(out.shape))
print("weights:", tuple(weights.shape), "= (b, num_heads, T, T)")
print(weights[0])  # (num_heads, T, T)：第一个序列的两个头

# %% [markdown] en_hash="4ca86a792257"
# 输出与书中印出的数值（见第 06 课）一致，可见这些正是书中构建的那个模块的权重。每一行对应一个查询，也就是发起关注的词元，每一列对应一个键，也就是被关注的词元。每行之和为 1，因果掩码（causal mask）把对角线以上的元素全部置零。

# %%
torch.testing.assert_close(
    out[0], journey.reference["multihead_seed123_d_out2_heads2"], atol=1e-4, rtol=0
)
torch.testing.assert_close(weights.sum(dim=-1), torch.ones(2, 2, 6))
assert torch.equal(weights.triu(diagonal=1), torch.zeros(2, 2, 6, 6))
print(
    mh.say(
        "matches the book; rows sum to 1; nothing above the diagonal",
        "与书中一致，每行之和为 1，对角线以上全为 0",
    )
)

# %%
fig = mh.plot_attention_heads(
    weights,
    words,
    suptitle=mh.tr("Book sentence, 2 heads (seed 123)", "书中的句子，2 个头（种子 123）"),
)
plt.show()

# %% [markdown] en_hash="c9c2dba33ff4"
# 返回的权重是在 **dropout 之前**取出的。dropout 只改变与值相乘的那个矩阵，所以无论在 `train()` 还是 `eval()` 模式下，你看到的权重都一样。dropout 会对权重做什么，第 04 课已经演示过。

# %%
dropping = mh.MultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.5, num_heads=2)
dropping.load_state_dict(mha.state_dict())
dropping.train()
with torch.no_grad():
    _, weights_train = dropping(batch, return_weights=True)  # (2, 2, 6, 6)
assert torch.equal(weights_train, weights)
print(
    mh.say("same weights in train mode with dropout 0.5:", "train 模式、dropout 0.5 时权重不变："),
    torch.equal(weights_train, weights),
)

# %% [markdown] en_hash="97601a1b07eb"
# ## 2. 熵：每个头一个数
#
# 只有 2 个头时，每个头画一张热力图还看得过来，可 GPT-2 small 有 12 层，每层 12 个头。有一种常见的概括办法，常被用作衡量头重要性的粗略指标，就是计算每一行权重的**熵**，单位是奈特（nats，即取自然对数）。
#
# $$H(\text{行}) = -\sum_j w_j \log w_j, \qquad 0 \log 0 = 0.$$
#
# * 如果一行把全部权重都放在一个键上，这一行就是一个独热向量（one-hot vector），它的熵 $H = 0$。这样的头非常集中。
# * 如果一行在 $n$ 个键上均匀分布，那么 $H = \log n$，这是 $n$ 个键所能达到的最大值。
# * 在**因果**头中，第 $i$ 行（从 0 数起）只能看到 $i + 1$ 个键，所以它的最大值是 $\log(i + 1)$。因此，一个头在 $T$ 行上的平均熵至多为 $\frac{1}{T}\sum_{i<T} \log(i+1)$（$T = 6$ 时为 1.0965），而不是 $\log T$。
#
# `mh.head_entropy(weights)` 返回每个头的平均行熵，形状为 `(num_heads,)`。它用 `torch.special.xlogy(w, w)` 来算，在 `w = 0` 处结果恰好为 0，用不着常见的 `log(w + 1e-9)` 这种凑合的写法。先看两个极端情况。

# %%
from mhsa_helpers.inspection import uniform_causal_entropy

one_hot = torch.eye(6).unsqueeze(0)  # (1, T, T)：每个词元只关注自己
lower = torch.tril(torch.ones(6, 6))
uniform_causal = (lower / lower.sum(dim=-1, keepdim=True)).unsqueeze(0)  # (1, T, T)
mh.show_table(
    [
        (mh.say("one-hot head", "独热的头"), mh.head_entropy(one_hot)),
        (mh.say("uniform causal head", "均匀的因果头"), mh.head_entropy(uniform_causal)),
        (
            mh.say("mean of log(i+1), T=6", "log(i+1) 的平均值，T=6"),
            f"{uniform_causal_entropy(6):.4f}",
        ),
    ]
)
assert torch.equal(mh.head_entropy(one_hot), torch.zeros(1))
torch.testing.assert_close(
    mh.head_entropy(uniform_causal), torch.tensor([1.0965]), atol=1e-4, rtol=0
)

# %% [markdown] en_hash="8bb3967387b3"
# 再看书中的两个头（对批次中的两个序列和所有行取平均）。

# %%
entropy_book = mh.head_entropy(weights)  # (num_heads,)
print(mh.say("entropy per head:", "每个头的熵："), entropy_book)
print(mh.say("maximum for T=6:", "T=6 时的最大值："), f"{uniform_causal_entropy(6):.4f}")
assert (entropy_book <= uniform_causal_entropy(6) + 1e-6).all()

# %%
fig = mh.figures.plot_head_entropy(
    entropy_book,
    uniform_causal_entropy(6),
    title=mh.tr("Book sentence, 2 heads", "书中的句子，2 个头"),
)
plt.show()

# %% [markdown] en_hash="83bc42df975d"
# 两个头都紧贴着最大值，几乎把注意力平均地分散开了。这不是注意力本身的性质，而是**这个**模块的性质。它的权重没有经过训练，书中的嵌入（embedding）又很小（各元素都小于 1），所以每个分数 $q \cdot k / \sqrt{d_k}$ 都接近 0。一组几乎相等的分数经过 softmax，得到的几乎就是均匀分布。

# %% [markdown] en_hash="d7553633566d"
# ## 3. 一个更长的句子
#
# 书中只给了六个词的嵌入。为了用更长的句子，我们用确定性的方法造一些玩具嵌入。`mh.ui.sentences.embed_words` 给每个不同的词分配一个固定的随机向量，取值在 $[0, 1)^3$ 中。这个向量在每台机器上都一样，同一个词每次出现时也一样。我们把这些向量乘以 3，让分数不至于太小。模块有四个头，宽度 `d_out = 24`（`head_dim = 6`）。作为对比，下面的单元格还在不乘 3 的嵌入上运行了同一个模块。

# %%
from mhsa_helpers.ui.sentences import LONGER_SENTENCE, embed_words

long_words = LONGER_SENTENCE.split()
long_inputs = 3.0 * embed_words(long_words)  # (T, d_in) = (11, 3)
print(LONGER_SENTENCE, "->", tuple(long_inputs.shape))

torch.manual_seed(123)
mha_long = mh.MultiHeadAttention(d_in=3, d_out=24, context_length=11, dropout=0.0, num_heads=4)
with torch.no_grad():
    _, weights_long = mha_long(long_inputs.unsqueeze(0), return_weights=True)  # (1, 4, 11, 11)
    _, weights_x1 = mha_long(embed_words(long_words).unsqueeze(0), return_weights=True)
entropy_long = mh.head_entropy(weights_long)  # (4,)
entropy_x1 = mh.head_entropy(weights_x1)  # (4,)：同样的头，嵌入不乘 3
mh.show_table(
    [
        (mh.say("entropy per head, x3", "每个头的熵，×3"), entropy_long),
        (mh.say("entropy per head, x1", "每个头的熵，x1"), entropy_x1),
        (mh.say("maximum for T=11", "T=11 时的最大值"), f"{uniform_causal_entropy(11):.4f}"),
    ]
)
assert (entropy_long < entropy_x1).all()  # 乘以 3 让每个头都稍微集中一些
assert (entropy_long > 0.9 * uniform_causal_entropy(11)).all()  # 都仍接近均匀

# %% [markdown] en_hash="e26dd95777b6"
# 乘以 3 之后，熵从 1.5899–1.5909 变成了 1.47–1.58。前者都在最大值 1.5911 的 0.1% 以内，后者则是最大值的 92%–99%。各个头变得稍微集中了一些，彼此也略有不同，但四个头都仍然接近均匀，下面的热力图看上去也差不多。未经训练的头之间还谈不上有什么有意思的差别，第 08 课会训练它们。
#
# 对于更大的网格，我们改用 `mh.plot_attention_grid` 来画。它的面板与 `plot_attention_heads` 相同（每个头一块，共用一个色标），只是格子里不写数字。它画得也足够快，下面的探索工具每拖动一次滑块都能重画。

# %%
fig = mh.plot_attention_grid(
    weights_long[0], long_words, title=mh.tr("Longer sentence, 4 heads", "更长的句子，4 个头")
)
plt.show()

# %% [markdown] en_hash="dd826d0fd155"
# 看看重复出现的词“the”（位置 0、4、7，做嵌入时“The”被转成了小写）和“mat”（位置 5 和 8）所在的列。一个查询给同一个词的每个副本的权重都相同。这是因为它们的嵌入相同，键也就相同，而这个模块里没有任何东西告诉它一个词元位于**哪里**。在一个查询能看到的键当中，注意力并不理会它们的先后顺序，相同的词元得到相同的权重。因果掩码是唯一的顺序信号，所以 GPT 模型要给词元加上**位置嵌入**（positional embedding），第 08 课就会这样做。

# %%
the_0 = weights_long[0, :, 7:, 0]  # (h, 4)：键“The”，查询 7..10
the_4, the_7 = weights_long[0, :, 7:, 4], weights_long[0, :, 7:, 7]  # 各为 (h, 4)
torch.testing.assert_close(the_0, the_7, atol=1e-6, rtol=0)
torch.testing.assert_close(the_4, the_7, atol=1e-6, rtol=0)
torch.testing.assert_close(weights_long[0, :, 8:, 5], weights_long[0, :, 8:, 8], atol=1e-6, rtol=0)
print(
    mh.say(
        "head 1: key 'the' at positions 0, 4, 7 (rows), seen by queries 7..10 (columns):",
        "头 1：位置 0、4、7 上的键“the”（行），被查询 7..10 看到的权重（列）：",
    )
)
print(torch.stack([the_0[0], the_4[0], the_7[0]]))  # (3, 4)

# %% [markdown] en_hash="9006429dc0dd"
# ## 4. 探索工具
#
# 拖动滑块试试。“头数”改变的是一个新建的 `MultiHeadAttention(3, 24, ...)` 的 `num_heads`。随机种子不变，所以权重矩阵（weight matrix）也不变，变的只是这 24 列切分成头的方式。24 不能被 5 或 7 整除，所以选 5 个或 7 个头时，探索工具不画图，而是给出说明。这是该模块唯一的硬约束，即 `d_out % num_heads == 0`。“丢弃率”只在“模式”选为“训练”（`train`）时起作用。这时图中显示的是 dropout **之后**的权重，也就是真正与值相乘的那个矩阵，其中一部分元素被置零，留下的按 $1/(1-p)$ 放大。“缩放”给嵌入乘上一个倍数，“随机种子”抽取另一组权重，“句子”可以切换到那个更长的句子，也可以换成这两个句子的中文版。
#
# （这个控件需要一个正在运行的内核。课程网站上有一个不需要内核的版本：拖动头数和丢弃率两个滑块，就会换上生成网站时预先画好的图。）

# %%
# NBVAL_IGNORE_OUTPUT
explorer = mh.attention_explorer(heads=2, scale=3.0)
explorer

# %% [markdown] en_hash="9e6fcecc34ca"
# 下面用代码完成拖动滑块的动作，测试也是这样驱动这个控件的。探索工具的 `.result` 保存着最近一次的视图，包括权重、图中显示的内容、各个头的熵和提示信息。

# %%
explorer.controls["heads"].value = 4  # 相当于把“头数”滑块拖到 4
view = explorer.result
print(view.message)
print(
    mh.say("weights:", "权重："),
    tuple(view.weights.shape),
    mh.say(" entropy:", " 熵："),
    view.entropy,
)
assert view.weights.shape == (4, 6, 6) and view.head_dim == 6

explorer.controls["heads"].value = 5  # 不能整除 d_out = 24
print(explorer.result.message)
assert not explorer.result.ok

explorer.controls["heads"].value = 2
explorer.controls["mode"].value = "train"
explorer.controls["dropout"].value = 0.5
view = explorer.result
kept = view.shown != 0
torch.testing.assert_close(view.shown[kept], 2 * view.weights[kept])  # 留下的元素乘以 1/(1-0.5)
print(view.message)
visible = ~torch.ones(6, 6).triu(1).bool()  # 因果掩码放行的 21 个位置
dropped = 1 - kept[:, visible].float().mean().item()
print(mh.say("share of visible weights dropped:", "可见权重中被丢弃的比例："), f"{dropped:.2f}")

# %% [markdown] en_hash="08efe4ac9cdd"
# ## 5. 头能告诉我们什么，不能告诉我们什么
#
# “不同的头学习输入的不同方面”是一个流传很广的说法，书里也这么讲。但每个头具体学到了什么，书里没有给出证据，今天的**可解释性**（interpretability）研究也仍在争论。所以看这些图时要有分寸：
#
# * **权重不等于解释。** 一个头可能强烈地关注某个词元，而这个词元的值向量却很小，或者这个头的输出大多被 `out_proj` 忽略。权重说明的是头关注哪里，而不是它传递了什么，也不能说明预测是否依赖于它。
# * **熵不等于重要性。** 熵低只说明集中，并不说明有用。
# * **头与头之间可能冗余。** 几个头可能携带相同的信息，去掉其中一个，模型几乎察觉不到。
#
# 本课中的头都没有经过训练，所以还没有什么可解释的。第 08 课会训练一个很小的模型，再用**消融**（ablation）检验这些说法，也就是关掉一个头，测量模型因此变差了多少。

# %% [markdown] en_hash="ed9a73373e73"
# ## 小结
#
# * `mha(x, return_weights=True)` 返回 `(out, weights)`，其中 `weights` 的形状为 `(b, num_heads, T, T)`，取自 softmax 之后、dropout 之前。`mh.plot_attention_heads(weights, words)` 为每个头画一张热力图。
# * 一行的**熵**是 $-\sum_j w_j \log w_j$，约定 $0 \log 0 = 0$（`torch.special.xlogy`）。独热的行熵为 0，均匀的因果行 $i$ 熵为 $\log(i+1)$。`mh.head_entropy` 按头取平均。
# * 未经训练的头作用在很小的嵌入上时，注意力几乎是均匀的。没有位置信息时，相同的词元无论在哪里都得到相同的权重。
# * 注意力权重不等于解释，熵低不等于重要，头与头之间可能冗余。图只能给出线索，要靠消融（第 08 课）来检验。

# %% [markdown] en_hash="f83e059ece30"
# ## 练习
#
# 参考答案见 `solutions/07_inspecting_heads_solutions.ipynb`。
#
# **练习 1。** 一个查询能看到 6 个键。它的那一行权重在其中几个键上相等，其余的键上为 0，熵是 1.3863 奈特。它把权重放在了几个键上？（给出一个数。先写出 n 个相等权重的熵。）

# %%
import mhsa_helpers.exercises

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_keys_from_entropy(answer)

# %% [markdown] en_hash="c8b27cde1646"
# **练习 2。** `mh.head_entropy` 给每个头一个数，即各行熵的平均值。请算出它拿来求平均的那些数：`weights_ex` 中每个头每一行的熵，结果的形状为 `(3, 11)`。`weights_ex` 来自一个新模块，它有 3 个头（`head_dim = 8`）和另一组权重（随机种子 7），输入是那个更长的句子。当心对角线以上的那些零，`0 * log(0)` 必须算作 0。

# %%
torch.manual_seed(7)
mha_ex = mh.MultiHeadAttention(d_in=3, d_out=24, context_length=11, dropout=0.0, num_heads=3)
with torch.no_grad():
    _, weights_ex = mha_ex(long_inputs.unsqueeze(0), return_weights=True)  # (1, 3, 11, 11)
weights_ex = weights_ex[0]  # (num_heads, T, T) = (3, 11, 11)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_head_entropy(answer, weights_ex)

# %% [markdown] en_hash="5ed9b0ff6f95"
# **练习 3。** `weights_ex` 中哪个头最集中（各行熵的平均值最低）？给出它从 0 开始计数的索引（一个整数）。然后用 `mh.plot_attention_grid(weights_ex, long_words)` 画出热力图，看看你是否同意这个结论。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_sharpest_head(answer, weights_ex)

# %% [markdown] en_hash="39e300d40a95"
# ### 检查（供 CI 使用，已折叠）
#
# 这个单元格验证本课所依赖的结论。这样一来，包里的代码即使有改动，也不会悄无声息地让课文的讲述失效。它放在练习之后，因为它手工计算了一个熵（也就是练习 2），所以请先做练习。好奇的话可以展开看看，跳过也没关系。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# mh.head_entropy 就是第 2 节的公式。
by_hand = -torch.special.xlogy(weights_long, weights_long).sum(dim=-1).mean(dim=(0, 2))  # (4,)
torch.testing.assert_close(mh.head_entropy(weights_long), by_hand)
# “同一个词的每个副本权重相同”在浮点舍入误差（1e-6）内成立，并非逐位相同。
# 两个键相等，但 softmax 按某一种顺序对一行求和。
print(
    mh.say("the two 'the' columns differ by less than 1e-6:", "两个“the”列的差异小于 1e-6："),
    (the_4 - the_7).abs().max().item() < 1e-6,
)
