# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="efe4a0035f80"
# # 04 · dropout（随机失活）
#
# 参数很多的模型容易**过拟合**（overfitting），也就是把训练文本背下来，而没有学到能推广到新文本的规律。**dropout**（随机失活）是对付过拟合、“防背题”的一种手段。训练时，它把流经网络的数值随机清零一部分，使模型无法依赖其中任何一个。在 GPT 这类模型中，dropout 可以作用在**注意力权重**（attention weights）上。本课最后，你要亲手实现书中的 `CausalAttention` 类。它把第 03 课的因果掩码（causal mask）和 dropout 装进同一个模块，一次处理一整个**批次**（batch）。
#
# **学习目标**
# 1. 把 `nn.Dropout` 用在书中 6×6 的例子上，说清楚保留下来的数值发生了什么变化，以及为什么。
# 2. 用 `.eval()` 关掉 dropout，并解释为什么平均值保持不变。
# 3. 知道 dropout 在注意力中放在哪里、真实模型用多大的丢弃率（dropout rate），以及 dropout 做不到什么（它救不了太小的数据集）。
# 4. 亲手实现 `CausalAttention`，检查器会对你的类做契约测试（contract test）。然后阅读书中的版本，它用**缓冲区**（`register_buffer`）保存掩码。在形状为 (2, 6, 3) 的批次上运行它，并弄清为什么要用缓冲区，而不是普通属性。
#
# **预备知识：** 第 03 课（`03_causal_attention`）中的因果掩码，以及种子 789 下加了掩码的注意力权重。**用时：** 约 100 分钟（阅读、运行 26 个代码单元格、1 次预测、3 道练习、1 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** `CausalAttention` 把 `(b, T, d_in)` 映射为 `(b, T, d_out)`。dropout 作用在形状为 `(b, T, T)` 的权重上，并且只在训练模式下生效。

# %%
import matplotlib.pyplot as plt
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")
journey = mh.load_journey()
words = journey.words

# %% [markdown] en_hash="e58544e73b6c"
# ## 1. 对全 1 矩阵做 dropout
#
# 先看书中的演示。设定 `torch.manual_seed(123)` 之后，对一个 6×6 的全 1 矩阵做丢弃率 p = 0.5 的 dropout，平均有一半的元素会被丢弃。
#
# **先预测，再运行。** 36 个 1 中大约有一半会变成 0。那些**保留下来**的元素，你觉得会是多少？把你的猜测填在 `None` 的位置，运行这个单元格（检查器只告诉你猜得对不对，不给出答案），然后运行下一个单元格。

# %%
prediction = None  # 你的预测：保留下来的元素的值
mhsa_helpers.exercises.check_survivor_prediction(prediction)

# %%
torch.manual_seed(123)
dropout = nn.Dropout(0.5)  # p = 0.5：每个元素以 0.5 的概率被清零
example = torch.ones(6, 6)  # (6, 6)
dropped = dropout(example)  # (6, 6)
print(dropped)

# %% [markdown] en_hash="0e420017329a"
# 下面验证这些数值与书中印出的一致。

# %%
torch.testing.assert_close(dropped, journey.reference["dropout_seed123_ones"], atol=1e-4, rtol=0)
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))
print(mh.say("zeros:", "零的个数："), int((dropped == 0).sum()), mh.say("of", "/"), dropped.numel())
assert int((dropped == 0).sum()) == 15
survivor = dropped[dropped != 0].unique().item()
print(
    mh.say("survivors are all", "保留下来的元素都是"),
    survivor,
    "= 1 / (1 - 0.5)",
    mh.say("| your prediction:", "| 你的预测："),
    prediction,
)

# %% [markdown] en_hash="5d1f81020490"
# 这一次 36 个元素中有 15 个被丢弃。“p = 0.5”是每个元素各自被丢弃的概率，而不是丢弃的确切个数。每个保留下来的元素都乘上了 **1 / (1 - p) = 2**。
#
# ## 2. 为什么要乘以 1 / (1 - p)？
#
# dropout 之后只剩下比例为 1 - p 的数值，整体信号也按这个比例减弱。把保留下来的数值除以 1 - p，正好能补偿回来，使每个元素**平均而言**保持原值。设随机的保留掩码 $m_{ij}$ 以概率 $1 - p$ 取 1，否则取 0。把**期望值**（expected value），即对许多次随机抽取的平均，记作 $\mathbb{E}$，那么 dropout 及其期望值分别为
#
# $$\operatorname{dropout}(a)_{ij} = \frac{m_{ij}}{1-p}\,a_{ij}, \qquad
# \mathbb{E}\big[\operatorname{dropout}(a)_{ij}\big] = (1-p)\cdot\frac{a_{ij}}{1-p} + p\cdot 0
# = a_{ij}.$$
#
# 对许多次随机抽取取平均，dropout 之后的全 1 矩阵（近似）仍是全 1 矩阵。

# %%
torch.manual_seed(123)
draws = torch.stack([dropout(example) for _ in range(2000)])  # (2000, 6, 6)
mean = draws.mean()
print(mh.say("average entry over 2000 draws:", "2000 次抽样中元素的平均值："), f"{mean:.3f}")
print(mh.say("fraction of zeros:", "零所占的比例："), f"{(draws == 0).float().mean():.3f}")
assert abs(mean.item() - 1.0) < 0.02
assert abs((draws == 0).float().mean().item() - 0.5) < 0.01

# %% [markdown] en_hash="0444e5b797d4"
# 换成其他丢弃率再量一次。对每个 p，我们对 2000 份 6×6 的全 1 矩阵做 dropout，测量保留下来的元素所占的比例、保留元素的值和全部元素的均值。图中的灰色曲线分别是 $1 - p$ 和 $1/(1-p)$。

# %%
samples = {}
for p in [0.1, 0.3, 0.5, 0.7, 0.9]:
    torch.manual_seed(123)
    samples[p] = nn.Dropout(p)(torch.ones(2000, 6, 6))  # (2000, 6, 6)
    kept = samples[p] != 0
    assert torch.allclose(samples[p][kept], torch.tensor(1 / (1 - p)))  # 保留的元素都是 1/(1-p)
    assert abs(samples[p].mean().item() - 1.0) < 0.02  # 均值保持为 1
fig = mh.figures.plot_dropout_scaling(samples)
plt.show()

# %% [markdown] en_hash="a4372da0657f"
# p 越大，保留下来的元素越少，每个元素被放大得越多。两者的乘积就是元素的均值，它在每种丢弃率下都保持为 1。
# %% [markdown] en_hash="e156a930c603"
# ## 3. 训练模式与评估模式
#
# dropout 只在训练时使用。每个 `nn.Module` 都有一个 `training` 标志，`.train()` 把它设为 `True`，`.eval()` 把它设为 `False`。处于评估模式的 `nn.Dropout` 会原样返回输入。有了 1/(1-p) 的缩放，从训练切换到评估（推理）时不需要改动任何别的东西，因为两种模式下每个数值的平均大小都一样。

# %%
dropout.eval()
print(mh.say("training:", "training 标志："), dropout.training)
assert torch.equal(dropout(example), example)  # 完全相同：没有丢弃，也没有缩放
dropout.train()
print(mh.say("training:", "training 标志："), dropout.training)
assert not torch.equal(dropout(example), example)

# %% [markdown] en_hash="7c2285231506"
# 使用模型之前忘记调用 `model.eval()`，是一个经典错误，它会让模型的输出一直带着随机性。（在更大的模型中，同一个标志会关掉所有子模块里的 dropout。）
#
# ## 4. dropout 放在注意力的哪里？
#
# 在 GPT 这类模型中，常见的位置有两个：
#
# * **softmax 之后，作用在注意力权重上**。这是书中的选择，即“实践中更常见的变体”，也是本课程所有类的做法。
# * 权重与值相乘之后，作用在上下文向量（context vector）上。
#
# 书中用 p = 0.5，只是为了让效果一眼就能看出来。真正训练 GPT 模型时，丢弃率要低得多。GPT-2 时代通常用 **0.1 或 0.2**，许多近期的大模型（例如 Llama）训练时则根本不用 dropout。
#
# 再说可复现性。设定种子之后，dropout 丢弃哪些元素由 torch 的随机数生成器决定。在 CPU 上使用 torch 2.13 时，本课程能复现书中的丢弃模式。换成其他 torch 版本或其他设备（GPU、Apple 的 MPS），同一个种子可能抽出不同的模式。但**规则**在哪里都一样：丢弃的元素置零，保留的元素乘以 1/(1-p)。
#
# 首先重新算出第 03 课中种子 789 下的因果注意力（causal attention）权重，掩码用 `-inf` 一步完成。

# %%
inputs = journey.inputs  # (T, d_in) = (6, 3)
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in=3, d_out=2)
with torch.no_grad():
    queries = sa_v2.W_query(inputs)  # (T, d_out)
    keys = sa_v2.W_key(inputs)  # (T, d_out)
    values = sa_v2.W_value(inputs)  # (T, d_out)，练习 3 要用
attn_scores = queries @ keys.T  # (T, T)
future = torch.triu(torch.ones(6, 6), diagonal=1).bool()  # (T, T)，对角线以上为 True
attn_scores = attn_scores.masked_fill(future, -torch.inf)
attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
torch.testing.assert_close(
    attn_weights, journey.reference["seed789_masked_renormalized"], atol=1e-4, rtol=0
)
print(attn_weights)

# %% [markdown] en_hash="e08474a6d3d2"
# 接下来是书中的这一步。同样设定种子 123，再对这些权重做 p = 0.5 的 dropout，书中印出的也正是这个矩阵。和第 1 节对比一下就会发现，**同一个种子**丢弃的是**同样的位置**，每个保留下来的元素都翻了一倍。

# %%
torch.manual_seed(123)
attn_dropped = dropout(attn_weights)  # (T, T)
print(attn_dropped)

keep = journey.reference["dropout_seed123_ones"] != 0  # (T, T) 布尔张量，即第 1 节的丢弃模式
torch.testing.assert_close(attn_dropped, torch.where(keep, 2 * attn_weights, 0.0))
print(mh.say("row sums:", "每行之和："), attn_dropped.sum(dim=-1))  # (T,)，不再是 1
assert (attn_dropped[1] == 0).all()  # “journey”那一行的两个权重都被丢弃了

# %% [markdown] en_hash="b63ba4bb095c"
# 各行之和不再是 1，这一次“journey”那一行甚至被丢得一个不剩。这在训练中没有关系，因为下一次抽取会不一样，而平均来看每一行之和仍然是 1。下图展示了计算的三个部分，依次是权重、这个种子抽出的保留掩码（与全 1 矩阵时的相同），以及两者的乘积再乘以 $1/(1-p) = 2$。

# %%
fig = mh.figures.plot_dropout_mask(attn_weights, keep, 0.5, words)
plt.show()
torch.testing.assert_close(attn_weights * keep / (1 - 0.5), attn_dropped)  # 也就是图中画出的内容

# %% [markdown] en_hash="279f2b7dcef0"
# ## 5. dropout 做不到的事：救不了太小的数据集
#
# 人们常说，dropout 让死记硬背变得更难。那么，它能阻止网络背下一个很小的数据集吗？我们做个小实验来检验。数据是 8 个样本，配上**随机**标签（没有规律可学，只有答案可背）。网络很小，只有 2,692 个参数。我们用最朴素的**梯度下降**（gradient descent）训练 100 步，分别开启和关闭 dropout，然后在评估模式下测量训练准确率。（训练本身，包括损失、损失的梯度和参数更新，是第 08 课的主题，这里只关心结果。）

# %%
torch.manual_seed(0)
x_tiny = torch.randn(8, 16)  # (n, features)：8 个样本
y_tiny = torch.randint(0, 4, (8,))  # (n,)，4 类中的随机标签：没有可推广的规律


def train_tiny(p, steps=100, lr=0.5):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(16, 128), nn.ReLU(), nn.Dropout(p), nn.Linear(128, 4))
    assert sum(param.numel() for param in model.parameters()) == 2692
    for _ in range(steps):  # 模型处于训练模式，dropout 开启
        loss = nn.functional.cross_entropy(model(x_tiny), y_tiny)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= lr * param.grad  # 一步梯度下降
    model.eval()
    with torch.no_grad():
        return (model(x_tiny).argmax(-1) == y_tiny).float().mean().item()


accuracy = {p: train_tiny(p) for p in [0.0, 0.5]}
for p, acc in accuracy.items():
    print(
        mh.say(
            f"dropout p={p}: training accuracy {acc:.0%} on 8 random labels",
            f"dropout p={p}：在 8 个随机标签上的训练准确率为 {acc:.0%}",
        )
    )
assert accuracy[0.5] == 1.0  # 无论有没有 dropout，都背下来了

# %% [markdown] en_hash="e0cb1e975a71"
# p = 0.5 时，网络照样把 8 个随机标签全都背了下来，和不用 dropout 时完全一样（瞎猜只能猜对 25%）。在这里，dropout 并没有让死记硬背变得明显更难。标签是随机的，没有任何可以推广的规律，所以在这些标签上拿到 100% 纯属死记硬背，而 dropout 没能阻止这一点。8 个样本缺少的信息，dropout 补不上，只有更多的数据才行。

# %% [markdown] en_hash="59506c798d20"
# ## 6. 动手探索：拖动丢弃率滑块
#
# 拖动**丢弃率**滑块会看到，p 越大，保留下来的权重越少，被放大得也越多（p = 0.1 时乘以 1.11，p = 0.9 时乘以 10）。拖动**随机种子**滑块可以换一次随机抽取。（请在 JupyterLab 中拖动滑块。CI 会运行这个单元格，但不比较它的输出。）

# %%
# NBVAL_IGNORE_OUTPUT
explorer = mh.dropout_explorer(attn_weights, words)
explorer

# %% [markdown] en_hash="6e9498fecb98"
# 拖动滑块会重新运行控件背后的函数，函数的返回值就是 dropout 之后的矩阵。下面用代码把滑块设为 p = 0.1（训练中实际会用的丢弃率），看看效果。

# %%
# NBVAL_IGNORE_OUTPUT
explorer.kwargs_widgets[0].value = 0.1  # “丢弃率”滑块
dropped_01 = explorer.result  # (T, T)
kept = dropped_01 != 0
torch.testing.assert_close(dropped_01[kept], attn_weights[kept] / 0.9)  # 保留下来的元素乘以 1.11
assert not kept[future].any()  # 被遮住的未来仍被遮住

# %%
survived, total = int(kept.sum()), int((attn_weights != 0).sum())
print(
    mh.say(
        f"p=0.1: {survived} of {total} weights survive, x1.11",
        f"p=0.1：{total} 个权重中保留了 {survived} 个，乘以 1.11",
    )
)

# %% [markdown] en_hash="6639877a1256"
# ## 7. 亲手实现 `CausalAttention`
#
# 现在我们像书中那样，把第 02 课以来的所有内容装进一个模块，包括可训练的投影（projection）、因果掩码、按 $\sqrt{d_k}$ 缩放，以及对权重做 dropout。其中有两点是新的：
#
# * 它接收一个**批次**，`x` 的形状是 (b, T, d_in)。所以对键做转置（transpose）时，交换的是第 1 维和第 2 维，而不是第 0 维和第 1 维。
# * 掩码只按最长的输入创建一次，这个长度就是**上下文长度**（context length）`context_length`。掩码用 `register_buffer` 注册，在 `forward` 中再切成 (T, T)，所以更短的输入也能用。
#
# 先别看书中的类，自己补全下面的 `MyCausalAttention`。构造函数的参数和书中一样，是 `(d_in, d_out, context_length, dropout, qkv_bias=False)`。请沿用书中的名字 `W_query`、`W_key`、`W_value`（每个都是 `nn.Linear(d_in, d_out, bias=qkv_bias)`）和 `dropout`，并把因果掩码注册为名叫 `mask` 的缓冲区。`forward(x)` 接收形状为 (b, T, d_in) 的 x，对注意力权重做 dropout，返回形状为 (b, T, d_out) 的上下文向量。
#
# 检查器会按这些名字，把 `mh.CausalAttention` 的权重复制进你的模块，再做契约测试。它检查几种尺寸下的输出是否一致，检查因果性，即改动后面的词元（token）不会改变前面的输出，检查 dropout 是否只在训练模式下起作用，还检查每个权重是否都有梯度。如果哪里不对，提示会指出最可能的错误。


# %%
# 在小张量上演示这两个新工具。批次：transpose(1, 2) 交换最后两维。
toy_x = torch.zeros(2, 3, 4)  # (b, T, d)
print(toy_x.transpose(1, 2).shape)  # (b, d, T)：批次那一维仍在最前面
# 缓冲区：模块保存的张量（会随 .to(device) 一起移动），但它不是参数。
toy = nn.Module()
toy.register_buffer("mask", torch.triu(torch.ones(4, 4), diagonal=1).bool())  # (4, 4)
print(toy.mask[:3, :3])  # 像 forward 那样切成 (T, T) = (3, 3)
print(dict(toy.named_buffers()).keys(), list(toy.parameters()))


# %%
class MyCausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        # 在这里写代码：W_query、W_key、W_value、dropout 和掩码缓冲区

    def forward(self, x):  # x: (b, T, d_in)
        # 在这里写代码：查询、键、值，加掩码的分数，softmax，dropout，加权求和
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_causal_attention_class(MyCausalAttention)

# %% [markdown] en_hash="973a96c293af"
# ## 8. 书中的类
#
# 为了不泄露动手实现的答案，书中的 `CausalAttention` 不放在这里。它就是 `solutions/04_dropout_solutions.ipynb` 里第 7 节的解答，那里还会逐位检查它和包里的 `mh.CausalAttention` 是同一个函数。等你的类通过检查，再逐行对照两者。本课余下的部分都用包里的这个类。

# %%
CausalAttention = mh.CausalAttention  # 书中的类，即课程包提供的版本

# %% [markdown] en_hash="cdabe554aa2e"
# 书中的批次是把这句话重复两遍，形状为 (2, 6, 3)。取种子 123、d_out = 2、dropout 0.0，就得到书中的上下文向量。

# %%
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)
torch.manual_seed(123)
ca = CausalAttention(d_in=3, d_out=2, context_length=batch.shape[1], dropout=0.0)
context_vecs = ca(batch)  # (b, T, d_out)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)

# %% [markdown] en_hash="f105c8c10795"
# 这些数值与书中印出的一致。批次中的两个序列是同一句话，所以两半都等于书中的那个矩阵。

# %%
for sequence in context_vecs:  # 每个都是 (T, d_out)
    torch.testing.assert_close(
        sequence, journey.reference["causal_attention_seed123"], atol=1e-4, rtol=0
    )
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown] en_hash="62b0db66b741"
# ## 9. 为什么用 `register_buffer`？
#
# 掩码不需要学习，所以它不能是**参数**。它没有梯度，也不该被优化器（optimizer）改动。但它又是模块状态的一部分，必须随模型一起保存，也必须随模型一起搬到 GPU 上。缓冲区正是为此而设的。下面看看模块里都有什么。

# %%
print("state_dict:      ", list(ca.state_dict()))
print("named_parameters:", [name for name, _ in ca.named_parameters()])
print(mh.pad(mh.say("buffers:", "缓冲区："), 17), [name for name, _ in ca.named_buffers()])
assert "mask" in ca.state_dict() and "mask" not in dict(ca.named_parameters())

# %% [markdown] en_hash="008fe34dc9cd"
# `mask` 保存在 `state_dict` 中，但不是参数。它还会跟着模块走，`.to()` 会把缓冲区和参数一起转换。这里我们把模块转换成 float64（如果有 GPU，`ca.to("cuda")` 也会以同样的方式把掩码搬到 GPU 上）。如果掩码只是一个普通属性，它就会被落下，`forward` 会把一个 float32 的 CPU 张量掺进 float64（或 GPU）的运算里。


# %%
class PlainAttributeMask(nn.Module):
    def __init__(self, context_length):
        super().__init__()
        self.W_query = nn.Linear(3, 2)
        self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)


plain = PlainAttributeMask(6).to(torch.float64)
ca64 = CausalAttention(3, 2, 6, 0.0).to(torch.float64)
mh.show_table(
    [
        (mh.say("plain attribute", "普通属性"), plain.mask.dtype, "mask" in plain.state_dict()),
        (mh.say("buffer", "缓冲区"), ca64.mask.dtype, "mask" in ca64.state_dict()),
    ],
    header=("", "mask.dtype", mh.say("in state_dict", "在 state_dict 中")),
)
assert ca64.mask.dtype == torch.float64 and plain.mask.dtype == torch.float32

# %% [markdown] en_hash="d2e5faa9fba9"
# 掩码按 `context_length` 个词元创建，在 `forward` 中再切片，所以任何更短的输入都能用。取前 4 个词元，得到的正是上面输出的前 4 行。因果注意力从不看后面的词元，所以少掉的那些词元什么也改变不了。

# %%
short = ca(batch[:, :4])  # (b, 4, d_out)
print(short.shape)
torch.testing.assert_close(short, context_vecs[:, :4])

# %% [markdown] en_hash="d61f731cb40a"
# 打开 dropout 后，输出在训练模式下是随机的，在评估模式下是确定的。

# %%
torch.manual_seed(123)
ca_drop = CausalAttention(3, 2, 6, dropout=0.5)
out_train_1, out_train_2 = ca_drop(batch), ca_drop(batch)  # 每个都是 (b, T, d_out)
assert not torch.equal(out_train_1, out_train_2)  # 两次不同的 dropout 抽取
ca_drop.eval()
assert torch.equal(ca_drop(batch), ca_drop(batch))  # 评估模式：没有 dropout
torch.testing.assert_close(ca_drop(batch), context_vecs)  # 权重与 ca 相同（种子 123）
print(
    mh.say(
        "train: random, eval: deterministic and equal to the dropout-free module",
        "train 模式随机，eval 模式确定，并且等于不带 dropout 的模块",
    )
)

# %% [markdown] en_hash="8071d4f37478"
# ## 小结
#
# * **dropout**（随机失活）在训练时以概率 p 把每个数值清零，并把保留下来的数值乘以 $1/(1-p)$，所以每个元素的期望值不变。书中种子 123、p = 0.5 下的 6×6 全 1 矩阵有 15 个 0，保留下来的元素都等于 2。
# * dropout 阻止不了网络背下一个很小的数据集。8 个样本配 2,692 个参数，即使开着 p = 0.5 的 dropout，网络也照样把 8 个随机标签全背了下来，和不用 dropout 时一样。
# * `.eval()` 关掉 dropout（输出与输入完全相同），`.train()` 把它打开。
# * 在注意力中，dropout 作用在 softmax 之后的权重上（书中的选择）。这样一来各行之和不再是 1，但平均来看仍是 1。训练 GPT 时用 p = 0.1–0.2。
# * `CausalAttention` 处理一个批次，把 (b, T, d_in) 映射为 (b, T, d_out)。它的掩码是一个**缓冲区**，保存在 `state_dict` 中，会被 `.to()` 搬动，但不是参数。
# * 第 05 课让几个 `CausalAttention` 头并排运行，这就是**多头注意力**（multi-head attention）。
#
# ## 练习
#
# 参考答案见 `solutions/04_dropout_solutions.ipynb`。
#
# **练习 1（热身）。** 训练 GPT 时常用 p = 0.2。`nn.Dropout(0.2)` 会把保留下来的数值乘以多少？（一个数。）

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_dropout_scale(answer)

# %% [markdown] en_hash="79e20e8fa7a0"
# **练习 2。** 取一个由因果注意力权重组成的 6×6 矩阵（对角线以上的 15 个元素为 0，其余 21 个为正数），对它做 p = 0.5 的 dropout。你**预计**做完之后，36 个元素中有多大比例是 0？（0 到 1 之间的一个数。）

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_zero_fraction(answer)

# %% [markdown] en_hash="1875d61b98ac"
# **练习 3。** dropout 放在第 4 节提到的另一个位置，即作用在上下文向量上，而不是注意力权重上。一个 dropout 层放在加权求和之后，在训练模式下作用于第 4 节的上下文向量 `attn_weights @ values` (6, 2)（因果权重和同一个 `sa_v2` 的值 `values`），输出了下面的 `ctx_dropped`。这一层的丢弃率 p 是多少？（答案是一个数。可以数一数零的个数，但 p 要从保留下来的元素推算。）

# %%
ctx_dropped = mhsa_helpers.exercises.lesson04.exercise_dropped_context()  # (T, d_out)
print(ctx_dropped)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_dropout_rate(answer)
