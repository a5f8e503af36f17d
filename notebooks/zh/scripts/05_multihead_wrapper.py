# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="ea090104f81e"
# # 05 · 多头注意力（multi-head attention）：多个头并排拼接
#
# 一个因果注意力（causal attention）模块只能学到一种“哪个词元（token）对哪个词元重要”的关系。**多头注意力**把好几个这样的模块并排运行，每个模块都有自己的 `W_query`、`W_key` 和 `W_value`，因此每个**注意力头**（attention head）可以学到不同的模式，最后再把各个头的输出拼接起来。书中把多头注意力实现了两遍。本课先用最直白的写法，把几个独立的 `CausalAttention` 模块并排装进一个**包装器**（wrapper）。第 06 课再讲更快的写法。
#
# **学习目标**
# 1. 用几个独立的 `CausalAttention` 头亲手搭出 `MultiHeadAttentionWrapper`，复现书中形状为 (2, 6, 4) 的输出。检查器会对你的类做契约测试（contract test）。
# 2. 弄清宽度约定。在这个包装器里，`d_out` 是**每个**头的宽度，输出宽度是 `num_heads * d_out`。
# 3. 看清每个头都是一个独立的模块，并查看每个头的注意力权重（attention weight）。
# 4. 算一算代价。每个头的每个投影（projection）都要做一次矩阵乘法，再看看这个次数能预测多少耗时，又预测不了什么。
#
# 用公式表示（沿用论文《Attention Is All You Need》的记号），第 $i$ 个头有自己的投影矩阵 $W_i^Q, W_i^K, W_i^V$，做的就是第 04 课的因果注意力：
#
# $$\mathrm{head}_i = \operatorname{Attention}(XW_i^Q,\; XW_i^K,\; XW_i^V), \qquad
# \operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\Big(\frac{QK^\top}{\sqrt{d_k}}\Big)V,$$
#
# 包装器再把这些头并排放在一起，即 $\operatorname{MultiHead}(X) = \operatorname{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)$。第 06 课还会在拼接之后加上输出矩阵 $W^O$。
#
# **预备知识：** 第 04 课（`04_dropout`）中的 `CausalAttention` 类。**用时：** 约 90 分钟（阅读、运行 21 个代码单元格、1 次预测、3 道练习、1 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** `MultiHeadAttentionWrapper` 把 `(b, T, d_in)` 变成 `(b, T, num_heads * d_out)`，其中每个头把 `(b, T, d_in)` 变成 `(b, T, d_out)`。

# %%
import time

import matplotlib.pyplot as plt
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")
journey = mh.load_journey()
words = journey.words
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)

# %% [markdown] en_hash="5a90bbed8b63"
# ## 1. 包装器
#
# 一个头就是第 04 课的 `CausalAttention`。我们直接用 `mh.CausalAttention`，第 04 课已经验证过它与我们自己写的类相同。包装器把 `num_heads` 个这样的头放进一个 `nn.ModuleList`，这样它们的参数才会被注册。它让每个头处理同一份输入，再把结果沿最后一维拼接起来。
#
# ```mermaid
# flowchart LR
#     x["x (b, T, d_in)"] --> h1["头 1：自己的 W_query、W_key、W_value"]
#     x --> h2["头 2：自己的 W_query、W_key、W_value"]
#     h1 -- "(b, T, d_out)" --> cat["torch.cat(..., dim=-1)"]
#     h2 -- "(b, T, d_out)" --> cat
#     cat --> out["(b, T, 2 * d_out)"]
# ```
#
# **动手实现。** 先别打开书中的类，自己写一遍，补全下面的 `MyMultiHeadAttentionWrapper`。构造函数的参数与书中相同，是 `(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`。各个头放在 `self.heads` 里，它是由 `num_heads` 个因果注意力头组成的 `nn.ModuleList`。每个头都用 `(d_in, d_out, context_length, dropout, qkv_bias)` 构造，可以用 `mh.CausalAttention`，也可以用你在第 04 课写的类。`forward(x)` 接收形状为 (b, T, d_in) 的 x，返回形状为 (b, T, num_heads * d_out) 的输出。
#
# 检查器会按各个头的参数名，把 `mh.MultiHeadAttentionWrapper` 的权重复制进你的模块，再用 2 个头做契约测试。它检查几种尺寸下的输出是否一致、是否满足因果性、dropout（随机失活）是否只在训练模式下起作用，以及每个权重是否都有梯度。没有通过时，提示会指出最可能的错误。


# %%
class MyMultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # 在这里写代码：self.heads，num_heads 个因果注意力头

    def forward(self, x):  # x: (b, T, d_in)
        # 在这里写代码：在 x 上运行每个头，把输出并排拼起来
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_wrapper_class(MyMultiHeadAttentionWrapper)

# %% [markdown] en_hash="728219b9bc4f"
# 为了不泄露动手实现的答案，书中的 `MultiHeadAttentionWrapper` 不放在这里。它就是 `solutions/05_multihead_wrapper_solutions.ipynb` 里的解答，那里还会逐位检查它和包里的 `mh.MultiHeadAttentionWrapper` 是同一个函数。等你的类通过检查，再对照两者。本课余下的部分都用包里的这个类。

# %%
# 书中的类，即课程包提供的版本
MultiHeadAttentionWrapper = mh.MultiHeadAttentionWrapper


# %% [markdown] en_hash="b8a4a60c18cc"
# 书中的例子用种子 123，每个头 `d_out = 2`，共 2 个头，不使用 dropout。

# %%
torch.manual_seed(123)
context_length = batch.shape[1]  # 6
d_in, d_out = 3, 2
mha = MultiHeadAttentionWrapper(d_in, d_out, context_length, 0.0, num_heads=2)
context_vecs = mha(batch)  # (b, T, num_heads * d_out)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)

# %% [markdown] en_hash="9e7c989deedf"
# 这些数字与书中印出的一致。批次（batch）里的两个序列是同一个句子。

# %%
for sequence in context_vecs:  # 每个都是 (T, num_heads * d_out)
    torch.testing.assert_close(
        sequence, journey.reference["wrapper_seed123_d_out2_heads2"], atol=1e-4, rtol=0
    )
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown] en_hash="62707175346c"
# ## 2. 每个头都是一个完整的 `CausalAttention`
#
# 看前两列 [-0.4519, 0.2216]、[-0.5874, 0.0058]……它们正是第 04 课里种子为 123 的那个单头 `CausalAttention` 的输出。这并非巧合。包装器是一个接一个地创建各个头的，所以在 `torch.manual_seed(123)` 之后，头 1 抽到的权重与单独创建一个 `CausalAttention` 时完全相同。头 2 接着抽取后面的随机数，占据后两列（索引 2、3）。

# %%
torch.manual_seed(123)
single = mh.CausalAttention(d_in, d_out, context_length, 0.0)
assert torch.equal(context_vecs[..., 0:2], single(batch))  # 头 1 = 前两列（0:2）
assert torch.equal(context_vecs[..., 2:4], mha.heads[1](batch))  # 头 2 = 后两列（2:4）
torch.testing.assert_close(
    context_vecs[0, :, 0:2], journey.reference["causal_attention_seed123"], atol=1e-4, rtol=0
)
print(
    mh.say(
        "columns 0:2 = the single CausalAttention of lesson 04; columns 2:4 = head 2",
        "前两列（0:2）= 第 04 课的单个 CausalAttention，后两列（2:4）= 头 2",
    )
)

# %% [markdown] en_hash="d70956694a3c"
# 下面把同一件事画成图，取批次中的第一个序列。图中有每个头的 (6, 2) 上下文向量（context vector），还有拼接后的结果，每个头在其中各占自己的两列。

# %%
with torch.no_grad():
    head_outputs = [head(batch)[0] for head in mha.heads]  # 每个都是 (T, d_out)
fig = mh.figures.plot_heads_concat(head_outputs, words)
plt.show()
assert torch.equal(torch.cat(head_outputs, dim=-1), context_vecs[0])  # 图中画的就是它

# %% [markdown] en_hash="205b485a6fe6"
# 各个头之间什么都不共享，每个头都有自己的三个投影矩阵。模块的参数清楚地表明了这一点。这里还没有 `out_proj`，它要到第 06 课才出现。

# %%
for name, param in mha.named_parameters():
    print(f"{name:<22} {tuple(param.shape)}")  # 每个头的每个投影都是 (d_out, d_in)
print(mh.say("buffers:", "缓冲区："), [name for name, _ in mha.named_buffers()])

# %% [markdown] en_hash="4e961f283efa"
# ## 3. 宽度约定
#
# 在这个包装器里，**`d_out` 是每个头的宽度**，什么也不切分。每个头贡献 `d_out` 列，所以输出宽度是 `num_heads * d_out`。第 06 课的 `MultiHeadAttention` 采用另一种约定，大多数代码也这样约定，即 `d_out` 是**总**宽度，每个头分到 `head_dim = d_out // num_heads`。把这两种约定搞混，是形状错误的常见来源。

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

# %% [markdown] en_hash="3b3224254640"
# 所以，要像 GPT-2 small 那样用 12 个头得到 768 维的输出，包装器需要 `d_out=64`。

# %%
with torch.device("meta"):  # 只有形状，不占内存，也不生成随机数
    gpt2_like = MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
    print(gpt2_like(torch.empty(1, 4, 768)).shape)  # (b, T, 12 * 64)

# %% [markdown] en_hash="8fa647b018a0"
# ## 4. 每个头在看什么？
#
# 每个头都在自己的空间里比较词元。它的 `W_query` 和 `W_key` 把 3 个输入特征映射成它自己的 2 个数，即 (b, T, 3) → (b, T, 2)，它的分数只看得到这 2 个数。提出多头注意力的原始论文（Vaswani 等，2017）说，各个头关注的是不同的**表示子空间**（representation subspace）。每个头都算出自己的 (T, T) 注意力权重。`CausalAttention` 在 `return_weights=True` 时会返回这些权重，把各个头的权重堆叠起来，就得到 (b, num_heads, T, T)。每个头只有 2 个维度，权重又是随机的（未经训练），所以这些模式看起来差不多。训练能不能让各个头变得不同，要到第 08 课才能回答。第 08 课两种情况都会遇到，有的头各不相同，也有的头全都学成了同一个样子。

# %%
with torch.no_grad():
    weights = torch.stack(
        [head(batch, return_weights=True)[1] for head in mha.heads], dim=1
    )  # (b, num_heads, T, T)
print(weights.shape)
assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 6))  # 每行之和为 1
assert (weights.triu(diagonal=1) == 0).all()  # 因果：对角线以上全为 0
fig = mh.plot_attention_heads(
    weights, words, suptitle=mh.tr("Two heads, seed 123", "两个头，种子 123")
)
plt.show()

# %% [markdown] en_hash="222870b74eae"
# ## 5. 动手探索：拖动头数
#
# 拖动“头数”滑块时，程序会在 `torch.manual_seed(123)` 之后构建 `MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads)`，并为每个头画一张热力图（heatmap）。拖动时请盯住头 1。它从不改变，因为每个新头都是在前面那些头**之后**才创建的。请在 JupyterLab 里拖动滑块。CI 会运行这个单元格，但不比较它的输出。

# %%
# NBVAL_IGNORE_OUTPUT
explorer = mh.heads_explorer(words)
explorer

# %% [markdown] en_hash="39a6235c7ffc"
# 下面的单元格把滑块拖到 3，得到的结果就是图中画出的那组 (heads, T, T) 权重。

# %%
# NBVAL_IGNORE_OUTPUT
explorer.kwargs_widgets[0].value = 3  # “头数”滑块
three = explorer.result  # (3, T, T)
assert three.shape == (3, 6, 6)
assert torch.equal(three[0], weights[0, 0])  # 头 1 与我们的 2 头模块相同
assert torch.equal(three[1], weights[0, 1])  # 头 2 也相同

# %%
print(mh.say("weights shape with 3 heads:", "3 个头时权重的形状："), tuple(three.shape))
print(
    mh.say("row 'journey', head by head:\n", "“journey”这一行，逐个头来看：\n"), three[:, 1, :2]
)  # (heads, 2)

# %% [markdown] en_hash="34574bb3509e"
# ## 6. 代价：每个头、每个投影各一次矩阵乘法
#
# 包装器读起来很容易，但它是一个头接一个头地运行的。这需要多少次矩阵乘法？我们不去猜，而是数一数。`mh.CountMatmuls` 是一个 `torch.overrides.TorchFunctionMode`，只有 20 行代码，在 `mhsa_helpers/checks.py` 里。它能看到 `with` 块内调用的每一个 torch 函数，并统计 `linear`（即 `nn.Linear` 层）和 `matmul`（即 `@`）的调用次数。
#
# **先预测，再运行。** 我们的 2 头 `mha` 做一次前向传播，要调用多少次 `nn.Linear` 和 `@`？过一遍一个头的各个步骤（你在第 04 课写的 `MyCausalAttention.forward`），把你的猜测写在 `None` 的位置，运行这个单元格，再运行下一个。

# %%
prediction = None  # 你的预测：2 头包装器调用 linear 和 matmul 的总次数
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

# %% [markdown] en_hash="9d4810797846"
# 每个头的 `forward` 先调用 `W_query`、`W_key`、`W_value`，这是三次小的矩阵乘法，然后算 `Q @ K^T` 和 `weights @ V`。下面对 1 到 4 个头做同样的计数。

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

# %% [markdown] en_hash="748a13e21a6d"
# 每个头 5 次乘法，所以每次前向传播共 5 × `num_heads` 次。总的计算量与一个宽度为 `num_heads * d_out` 的投影相同，只不过拆成了许多次小调用，而每次调用都有固定开销（Python 本身的开销和分派）。这份开销看得出来吗？下面的计时比较 12 次独立的 (T, 768) @ (768, 64) 乘法与一次 (T, 768) @ (768, 768) 乘法，分别用一个短序列和一个长序列，并打印两者的比值。比值大于 1，说明 12 次小乘法更慢。耗时取决于你的机器，所以 CI 不比较打印出的数字，只检查两种算法的结果相等、耗时在合理范围内。

# %%
# NBVAL_IGNORE_OUTPUT
W_heads = [torch.randn(768, 64) for _ in range(12)]  # 每个头一个 (d_in, head_dim) 矩阵
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

# %% [markdown] en_hash="b315826865b6"
# 两种算法给出相同的数字，上一个单元格里的 `assert_close` 确认了这一点。再看你的机器打印出的两个比值。它们通常接近 1，而且不一定大于 1。对这么大的一次乘法来说，调用的固定开销比计算本身小得多，机器一忙，耗时的波动就超过了这点开销。所以单看一次乘法，看不出调用多的代价，要看整个模块，下面就来测量。
#
# `benchmarks/attention.py --part wrapper-vs-split` 对整个模块做了这项测量。它在课程的 2 核机器上单线程运行，拿包装器与第 06 课的拆分版类比较，两者计算的是同一个函数。8 到 64 个词元时，包装器的耗时是不带 `out_proj` 的拆分版（计算同一个函数）的 1.2–1.9 倍。到了 512 个词元，包装器的前向传播只用了拆分版 0.7 倍的时间。这时大部分计算在掩码和 softmax 这些 (T, T) 的步骤里。包装器一次只处理一个头的 2 MiB 分数，放得进 CPU 的缓存，拆分版却要一口气处理 24 MiB。可见，乘法次数预测的是调用的开销，而不是全部耗时（表格见 `benchmarks/README.md`）。第 06 课把“一个大矩阵”的发现写成一个类，`W_query`、`W_key`、`W_value` 各用一个大矩阵，算完之后再切分成各个头。

# %% [markdown] en_hash="68185678d228"
# ## 小结
#
# * **多头注意力**由几个独立的**注意力头**组成，每个头都有自己的 `W_query`、`W_key`、`W_value`，各个头的输出沿最后一维拼接。
# * 包装器写法在一个 `nn.ModuleList` 里放 `num_heads` 个 `CausalAttention` 模块。书中的例子（种子 123，`d_out=2`，2 个头）给出 (2, 6, 4) 的输出，其前两列就是第 04 课的单头输出。
# * 在包装器里，`d_out` 是每个头的宽度，输出宽度是 `num_heads * d_out`。
# * 每个头做 3 次投影和 2 次注意力乘法，各个头依次运行，所以每次前向传播共 5 × `num_heads` 次矩阵乘法。每次调用都很小时，调用多就费时间。但在 CPU 上，次数并不说明一切。512 个词元时，测得包装器的前向传播比第 06 课的拆分版更快。
# * 第 06 课对每个投影只用一个大矩阵，再用一次批量矩阵乘法（batched matrix multiplication）算出所有头，并证明结果与本课相同。
#
# ## 练习
#
# 参考答案见 `solutions/05_multihead_wrapper_solutions.ipynb`。
#
# **练习 1。** 第 3 节那个输出宽 768 的包装器 `MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)`（不带 `qkv_bias`）有多少个可训练的参数？先数一个头有多少（第 2 节列出了一个头的参数），再手算整个包装器。（答案是一个整数。参考答案会数一遍模块的参数来验证。）

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_wrapper_parameters(answer)

# %% [markdown] en_hash="4420e88a5853"
# **练习 2。** 包装器是一个接一个地创建各个头的，每个头依次从随机数生成器中抽取权重（第 2 节）。设好 `torch.manual_seed(123)` 之后，先用书中的包装器类建一个 **3 个头**的包装器（`d_in=3`、`d_out=2`、`context_length=6`、`dropout=0.0`），然后不要重新设种子，紧接着再建一个 `mh.CausalAttention(3, 2, 6, 0.0)`。把 `answer` 设为这个新头在 `batch` 上的输出，它是一个 (2, 6, 2) 的张量。然后解释：同样的数也是同一种子之后建的另一个包装器输出的一个切片。是哪个包装器，哪几列？在你自己的单元格里验证你的猜想。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_head_output(answer)

# %% [markdown] en_hash="2af12044bd91"
# **练习 3。** 第 6 节数的是**调用**次数，现在来数调用内部的**工作量**。一次**乘加**就是一次乘法加一次加法，计算 (T, n) @ (n, m) 需要 T · n · m 次乘加。`MultiHeadAttentionWrapper(768, 64, 100, 0.0, num_heads=12)` 在一个由 **8 个序列、每个 100 个词元**组成的批次 x (8, 100, 768) 上做一次前向传播。所有头的三次投影和两次注意力乘积一共要做多少次乘加？掩码和 softmax 不计在内。请用 T · n · m 这条规则算出来，参考答案会用 `torch.utils.flop_counter.FlopCounterMode` 核对。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_matmul_count(answer)
