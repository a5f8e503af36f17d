# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="3a8c479abc7b"
# # 06 · 多头注意力（multi-head attention）：拆分成多个头
#
# 第 05 课把每个**注意力头**（attention head）写成一个独立的模块，每个头要做 5 次小矩阵乘法。书中的第二个版本 `MultiHeadAttention` 换了一种做法。查询、键、值（query, key, value）各用一个大矩阵，一次就算出**所有**头的结果，再用 `view` 和 `transpose` 把结果切成多个头，由一次**批量矩阵乘法**（batched matrix multiplication）同时处理所有头。最后，**输出投影**（output projection，`out_proj`）把各个头的输出混合起来。本课最后会证明，两者计算的是同一个函数。
#
# 公式就是第 05 课的公式，再加上输出矩阵 $W^O$：
#
# $$\begin{aligned}
# \mathrm{head}_i &= \operatorname{Attention}(XW_i^Q,\; XW_i^K,\; XW_i^V), \\
# \operatorname{MultiHead}(X) &= \operatorname{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\,W^O .
# \end{aligned}$$
#
# 不同之处在于 $W_i^Q$ 放在**哪里**。它们不再是 $h$ 个各自独立的矩阵，而是并排放进一个大矩阵 $W^Q = [\,W_1^Q \mid W_2^Q \mid \dots \mid W_h^Q\,]$。于是一次乘法 $XW^Q$ 就算出了所有头的查询，第 $i$ 个头只读属于自己的那几列。
#
# **学习目标**
# 1. 把形状为 (b, T, d_out) 的投影切成多个头。先 `view` 成 (b, T, num_heads, head_dim)，再 `transpose(1, 2)` 成 (b, num_heads, T, head_dim)，其中 `head_dim = d_out // num_heads`（每头维度）。
# 2. 验证一次四维矩阵乘法与逐头循环的结果相同，再把各个头合并回去，并比较 `contiguous().view` 与 `reshape`。
# 3. 照着前向传播的 10 步表格，自己动手写出 `MultiHeadAttention`，再与书中的类及其数值对照。检查器会对你的类做契约测试（contract test）。
# 4. 证明包装器（wrapper）版本与拆分版本计算的是同一件事（`mh.multihead_from_wrapper`），并弄清为什么“相同”只在某些情况下意味着逐位相同。
# 5. 按 GPT-2 的几种规模数一数参数量，弄清为什么增加头数不需要额外的参数。
#
# **预备知识：** 第 05 课（`05_multihead_wrapper`）。**用时：** 约 110 分钟（阅读、运行 31 个代码单元格、1 次预测、3 道练习、1 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** `MultiHeadAttention` 把 `(b, T, d_in)` 变成 `(b, T, d_out)`。在内部，Q、K、V 的形状都是 `(b, num_heads, T, head_dim)`，注意力权重（attention weights）的形状是 `(b, num_heads, T, T)`。

# %%
import matplotlib.pyplot as plt
import torch
from IPython.display import Markdown
from torch import nn
from torch.overrides import TorchFunctionMode
from torch.utils.flop_counter import FlopCounterMode

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers.inspection import uniform_causal_entropy

mh.setup_lesson(lang="zh")
journey = mh.load_journey()
words = journey.words
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)
b, T, d_in = batch.shape

# %% [markdown] en_hash="ae03178ec23e"
# ## 1. 一个大投影，切成多个头
#
# 取 2 个头，每个头宽 2。我们不用两个 (3 → 2) 的查询矩阵，而是用一个 (3 → 4) 的矩阵。它输出的前两列（索引 0、1）是头 1 的查询，后两列（索引 2、3）是头 2 的查询。

# %%
num_heads, head_dim = 2, 2
d_out = num_heads * head_dim  # 4
torch.manual_seed(123)
W_query = nn.Linear(d_in, d_out, bias=False)
W_key = nn.Linear(d_in, d_out, bias=False)
W_value = nn.Linear(d_in, d_out, bias=False)
with torch.no_grad():
    queries = W_query(batch)  # (b, T, d_out)
    keys = W_key(batch)  # (b, T, d_out)
    values = W_value(batch)  # (b, T, d_out)
print(queries.shape)

# %% [markdown] en_hash="fc1bb7b902e1"
# **第 1 步**，用 `view` 把最后一个维度拆成 (num_heads, head_dim)。没有任何数字挪动位置，只是换一个形状去读同一块内存。

# %%
q = queries.view(b, T, num_heads, head_dim)  # (b, T, h, head_dim)
print(q.shape)
assert torch.equal(q[:, :, 0], queries[..., 0:2])  # 头 1 = 前两列（0:2）
assert torch.equal(q[:, :, 1], queries[..., 2:4])  # 头 2 = 后两列（2:4）
assert q.data_ptr() == queries.data_ptr()  # 这是视图，内存相同

# %% [markdown] en_hash="a626bb91dc41"
# **第 2 步**，用 `transpose(1, 2)` 把头这一维挪到词元（token）那一维的前面。现在每个头都是一个 (T, head_dim) 矩阵。PyTorch 的矩阵乘法会把前面所有的维度（批次**和**头）都当作批量维度，对其中每一对矩阵各做一次互不相干的乘法。

# %%
q = q.transpose(1, 2)  # (b, h, T, head_dim)
k = keys.view(b, T, num_heads, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
v = values.view(b, T, num_heads, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
print(q.shape)
assert torch.equal(q, mh.split_heads(queries, num_heads))  # 课程包的辅助函数做的是同一件事

# %% [markdown] en_hash="1ecfe9cc34cf"
# ## 2. 一次批量矩阵乘法算完所有头
#
# `q @ k.transpose(2, 3)` 对最后两个维度做矩阵乘法，即 (T, head_dim) @ (head_dim, T)，所有 (批次, 头) 组合同时进行。循环版本则一个头一个头地算。两者的数字逐位相同。

# %%
scores = q @ k.transpose(2, 3)  # (b, h, T, T)：一次调用算完所有头
scores_loop = torch.stack(
    [q[:, h] @ k[:, h].transpose(1, 2) for h in range(num_heads)], dim=1
)  # (b, h, T, T)：一次算一个头
print(scores.shape)
assert torch.equal(scores, scores_loop)
print(
    mh.say(
        "batched matmul == per-head loop (torch.equal)", "批量矩阵乘法 == 逐个头循环（torch.equal）"
    )
)

# %% [markdown] en_hash="da1cf3b583ef"
# 书里在一个 (1, 2, 3, 4) 的小张量上演示了同一件事，即 1 个序列、2 个头、3 个词元、head_dim 为 4，数字一个一个地写了出来。下面就是这个例子，连同书中印出的结果。

# %%
a = torch.tensor(
    [
        [
            [
                [0.2745, 0.6584, 0.2775, 0.8573],
                [0.8993, 0.0390, 0.9268, 0.7388],
                [0.7179, 0.7058, 0.9156, 0.4340],
            ],
            [
                [0.0772, 0.3565, 0.1479, 0.5331],
                [0.4066, 0.2318, 0.4545, 0.9737],
                [0.4606, 0.5159, 0.4220, 0.5786],
            ],
        ]
    ]
)  # (b, h, T, head_dim) = (1, 2, 3, 4)
all_heads = a @ a.transpose(2, 3)  # (b, h, T, T)
print(all_heads)

book_result = torch.tensor(
    [
        [
            [[1.3208, 1.1631, 1.2879], [1.1631, 2.2150, 1.8424], [1.2879, 1.8424, 2.0402]],
            [[0.4391, 0.7003, 0.5903], [0.7003, 1.3737, 1.0620], [0.5903, 1.0620, 0.9912]],
        ]
    ]
)  # (1, 2, 3, 3)，书中印出的结果
torch.testing.assert_close(all_heads, book_result, atol=1e-4, rtol=0)
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown] en_hash="5191ab81234c"
# 接着，书里把每个头单独算一遍，即 `first_head = a[0, 0] @ a[0, 0].T`，头 2 也照此计算。批量乘法的结果里装的正是这两个矩阵。

# %%
first_head = a[0, 0] @ a[0, 0].T  # (T, T)
second_head = a[0, 1] @ a[0, 1].T  # (T, T)
assert torch.equal(all_heads[0, 0], first_head)
assert torch.equal(all_heads[0, 1], second_head)
print(mh.say("First head:\n", "第一个头：\n"), first_head)
print(mh.say("Second head:\n", "第二个头：\n"), second_head)

# %% [markdown] en_hash="4cba6fa633ef"
# 注意力的其余部分对每个头照常进行。先加掩码，再除以 `head_dim` 的平方根进行缩放，然后在最后一个维度上做 softmax，最后乘以值。

# %%
future = torch.triu(torch.ones(T, T), diagonal=1).bool()  # (T, T)，在 b 和 h 上广播
weights = torch.softmax(scores.masked_fill(future, -torch.inf) / head_dim**0.5, dim=-1)
context = weights @ v  # (b, h, T, head_dim)
print(weights.shape, context.shape)

# %% [markdown] en_hash="1180420921f0"
# ## 3. 把各个头合并回去：`contiguous().view` 还是 `reshape`
#
# 要把各个头拼接起来，就得撤销拆分。先 `transpose(1, 2)` 变回 (b, T, h, head_dim)，再把最后两个维度展平成 d_out。可是转置（transpose）之后，数字在内存里不再是逐行排列的，也就是说，张量不再是**连续存储**（contiguous）的，于是 `view` 会拒绝执行。

# %%
context_t = context.transpose(1, 2)  # (b, T, h, head_dim)
print(mh.say("contiguous:", "是否连续存储："), context_t.is_contiguous())
try:
    context_t.view(b, T, d_out)
except RuntimeError as error:
    # torch 的报错信息建议改用 .reshape(...)，具体措辞随版本而变。
    assert "reshape" in str(error)
    print(
        type(error).__name__,
        mh.say("-- view() refuses a non-contiguous tensor", "—— view() 拒绝不连续的张量"),
    )

# %% [markdown] en_hash="e4222503f35b"
# 有两种修法。`contiguous()` 先把数据复制成逐行排列的顺序，之后 `view` 就能用了，书里就是这么做的。`reshape` 一步做完同样的事，能返回视图时就返回视图，必须复制时才复制。这里就必须复制。

# %%
merged_view = context_t.contiguous().view(b, T, d_out)  # (b, T, d_out)
merged_reshape = context_t.reshape(b, T, d_out)  # (b, T, d_out)
assert torch.equal(merged_view, merged_reshape)
print(
    mh.say("reshape copied:", "reshape 复制了数据："),
    merged_reshape.data_ptr() != context_t.data_ptr(),
)
print(
    mh.say("reshape of a contiguous tensor is a view:", "对连续张量做 reshape 得到的是视图："),
    queries.reshape(b, T, 2, 2).data_ptr() == queries.data_ptr(),
)
assert torch.equal(merged_view, mh.merge_heads(context))  # 课程包的辅助函数

# %% [markdown] en_hash="fd794fdd4253"
# 合并后的张量与包装器的拼接结果完全一样，头 1 的上下文向量（context vector）占前两列（索引 0、1），头 2 的占后两列（索引 2、3）。

# %%
assert torch.equal(merged_view, torch.cat([context[:, 0], context[:, 1]], dim=-1))
print(merged_view[0])  # (T, d_out)

# %% [markdown] en_hash="10644ceb0fcb"
# 下面用一张图看完整个来回，以第一个句子的查询为例。左边是 (6, 4) 的投影，每一列按它所属的头着色。中间是 `view` + `transpose` 从中切出的两个 (6, 2) 的头。右边是经过 `transpose` + `contiguous().view` 之后，又变回原样的 (6, 4) 矩阵。在同一个头**内部**，没有任何数字换位置，变的只是索引方式。

# %%
merged_queries = mh.merge_heads(q)  # (b, T, d_out)
fig = mh.figures.plot_head_split(queries[0], q[0], merged_queries[0], words)
plt.show()
assert torch.equal(merged_queries, queries)  # 先拆分再合并，原样不变

# %% [markdown] en_hash="3a1a3eade7f9"
# ## 4. 前向传播，一步一步来
#
# 把前面的内容合在一起，就是前向传播的十个步骤。表中写出每一步得到什么（用书中代码里的名字）以及它的形状。具体用哪些 PyTorch 调用，由你自己来选，第 1–3 节把它们都用过了。最后新增的是第 10 步 `out_proj`，它是一个作用在合并结果上的 (d_out → d_out) 线性层，即公式中的 $W^O$。各个头彼此看不到对方的结果，`out_proj` 才是把它们的输出混合在一起的地方。书中指出，这一层并非必不可少，但很多大语言模型（large language model，LLM）的架构都会用到它。键和值经历的第 2–4 步与查询完全一样。dropout（随机失活）只在训练时起作用，作用在第 7 步刚算出的权重上。
#
# 下面折叠的单元格只负责生成这张表。

# %% jupyter={"source_hidden": true}
forward_steps = [  # （步骤，得到什么：书中的名字、公式、结果的形状）
    (mh.say("1. input", "1. 输入序列"), mh.say("`x`", "`x`"), "$X$", "(b, T, d_in)"),
    (
        mh.say("2. project", "2. 生成 QKV"),
        mh.say(
            "`queries`, `keys`, `values`: `x` through `W_query`, `W_key`, `W_value`",
            "`queries`、`keys`、`values`：`x` 分别经过 `W_query`、`W_key`、`W_value`",
        ),
        "$Q = XW^Q$",
        "(b, T, d_out)",
    ),
    (
        mh.say("3. split", "3. 拆分成多头"),
        mh.say(
            "each of the three, its last dimension cut into `num_heads` blocks of `head_dim`",
            "三者各自把最后一维切成 `num_heads` 块，每块 `head_dim` 宽",
        ),
        mh.say("$h$ blocks of $d_k$ columns", "$h$ 块，每块 $d_k$ 列"),
        "(b, T, h, head_dim)",
    ),
    (
        mh.say("4. heads first", "4. 转置维度"),
        mh.say(
            "the same, with the head dimension in front of the tokens",
            "同样的数，头这一维挪到词元前面",
        ),
        "$Q_1, \\dots, Q_h$",
        "(b, h, T, head_dim)",
    ),
    (
        mh.say("5. scores", "5. 计算分数"),
        mh.say(
            "`attn_scores`: each head's queries against its own keys",
            "`attn_scores`：每个头的查询与它自己的键相乘",
        ),
        "$Q_iK_i^\\top$",
        "(b, h, T, T)",
    ),
    (
        mh.say("6. mask", "6. 加掩码"),
        mh.say(
            "`attn_scores`, the future hidden with the buffer `mask`, cut to T × T",
            "`attn_scores`，用缓冲区 `mask`（截成 T × T）遮住未来",
        ),
        mh.say("future $\\to -\\infty$", "未来 $\\to -\\infty$"),
        "(b, h, T, T)",
    ),
    (
        mh.say("7. scale, softmax", "7. 缩放、softmax"),
        mh.say(
            "`attn_weights`, then `dropout` on them (training only)",
            "`attn_weights`，随后对它做 `dropout`（只在训练时）",
        ),
        "$A_i = \\mathrm{softmax}(Q_iK_i^\\top / \\sqrt{d_k})$",
        "(b, h, T, T)",
    ),
    (
        mh.say("8. weighted sum", "8. 加权求和"),
        mh.say(
            "`context_vec`: each head's weights times its values",
            "`context_vec`：每个头的权重乘以它的值",
        ),
        "$\\mathrm{head}_i = A_iV_i$",
        "(b, h, T, head_dim)",
    ),
    (
        mh.say("9. merge", "9. 合并各头"),
        mh.say(
            "`context_vec`, the heads side by side again",
            "`context_vec`，各个头重新并排",
        ),
        "$\\mathrm{Concat}(\\mathrm{head}_1, \\dots, \\mathrm{head}_h)$",
        "(b, T, d_out)",
    ),
    (
        mh.say("10. output projection", "10. 输出投影"),
        mh.say("what `out_proj` makes of it: the output", "`out_proj` 的结果，即输出"),
        "$\\mathrm{Concat}(\\dots)\\,W^O$",
        "(b, T, d_out)",
    ),
]
rows = [
    f"| {step} | {what} | {formula} | {shape} |" for step, what, formula, shape in forward_steps
]
header = mh.say(
    "| step | what it produces | formula | shape |", "| 步骤 | 得到什么 | 公式 | 形状 |"
)
Markdown("\n".join([header, "|---|---|---|---|", *rows]))

# %% [markdown] en_hash="f35a7af7bb16"
# 其中 $h$ = `num_heads`，$d_k$ = `head_dim` = `d_out // num_heads`。
#
# ## 5. 自己动手实现
#
# 先别看书中的类，照着上面的表格自己写一个，把下面的 `MyMultiHeadAttention` 补充完整。构造函数接受与书中相同的参数 `(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`。请沿用书中的名字 `W_query`、`W_key`、`W_value`、`out_proj`、`dropout`，并像第 04 课的 `CausalAttention` 那样，把因果掩码（causal mask）注册为名为 `mask` 的缓冲区。`forward(x)` 接受形状为 (b, T, d_in) 的 x，返回 (b, T, d_out)。
#
# 检查器会按这些名字把 `mh.MultiHeadAttention` 的权重复制到你的模块里，然后做契约测试。它检查几种尺寸下的形状和因果性（改动靠后的词元，前面任何位置的输出都不变），检查每行权重之和是否为 1、输出是否相等、dropout 是否只在训练模式下起作用，以及每个参数是否都有梯度。如果哪里不对，提示会指出最可能的错误。第 6 节说明书中的版本在哪里，等你的类通过了再去看。


# %%
class MyMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # 在这里写代码：head_dim、W_query、W_key、W_value、out_proj、dropout 和 mask 缓冲区

    def forward(self, x):  # x: (b, T, d_in)
        # 在这里写代码：表中的第 2–10 步
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_build_multihead(MyMultiHeadAttention)

# %% [markdown] en_hash="2736383866a8"
# ## 6. 书中的类
#
# 为了不泄露动手实现的答案，书中的 `MultiHeadAttention` 不放在这里。它就是 `solutions/06_multihead_split_solutions.ipynb` 里第 5 节的解答，那里还会逐位检查它和包里的 `mh.MultiHeadAttention` 是同一个函数。等你的类通过检查，再把两者逐行对照。本课余下的部分都运行包里的这个类。


# %%
MultiHeadAttention = mh.MultiHeadAttention  # 书中的类，即课程包提供的版本

# %% [markdown] en_hash="31b8a87f7c4e"
# **追踪这张表。** 这个类真的会算出表中的那些形状吗？我们用一组各不相同的尺寸运行它一次，记录每个操作之后的形状。尺寸取 b=2、T=5、d_in=7、d_out=12、h=3、head_dim=4，这样即使两个维度被调换也藏不住。这里用到两样工具。一是挂在 `W_query` 和 `out_proj` 上的**前向钩子**（forward hook），PyTorch 会把模块的输入和输出传给钩子函数。二是一个 `TorchFunctionMode`，它和第 05 课的 `mh.CountMatmuls` 一样，能看到每一个张量操作（`view`、`transpose`、`@` 即 `matmul`，等等）。


# %%
class ShapeTrace(TorchFunctionMode):
    # 按运算的名字，记下每个运算返回的张量的形状

    def __init__(self):
        super().__init__()
        self.shapes = {}

    def record(self, name, tensor):
        self.shapes.setdefault(name, []).append(tuple(tensor.shape))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if isinstance(out, torch.Tensor):
            self.record(func.__name__, out)
        return out


sizes = {"b": 2, "T": 5, "d_in": 7, "d_out": 12, "h": 3, "head_dim": 4}


def trace_forward(module):
    # 在 ShapeTrace 下把 module 运行一次，返回表中每一步对应的实测形状
    trace = ShapeTrace()
    hooks = [
        module.register_forward_pre_hook(lambda mod, args: trace.record("input", args[0])),
        module.W_query.register_forward_hook(lambda mod, a, out: trace.record("W_query", out)),
        module.out_proj.register_forward_hook(lambda mod, a, out: trace.record("out_proj", out)),
    ]
    with trace:
        module(torch.randn(sizes["b"], sizes["T"], sizes["d_in"]))
    for hook in hooks:
        hook.remove()
    shapes = trace.shapes
    masked = shapes.get("masked_fill_") or shapes["masked_fill"]  # 原地版本或非原地版本
    return [  # 每一步背后的调用，按 forward 调用它们的顺序排列
        shapes["input"][0],
        shapes["W_query"][0],
        shapes["view"][1],  # view 依次用于键、查询、值，最后是合并
        shapes["transpose"][1],  # transpose 依次用于键、查询、值……
        shapes["matmul"][0],
        masked[0],
        shapes["softmax"][0],
        shapes["matmul"][1],
        shapes["view"][3],
        shapes["out_proj"][0],
    ]


args = (sizes["d_in"], sizes["d_out"], 8, 0.0, sizes["h"])  # context_length 为 8，不用 dropout
traced = trace_forward(MultiHeadAttention(*args))  # 课程包里的类
trace_rows = []
for (step, _, _, shape), got in zip(forward_steps, traced, strict=True):
    expected = tuple(sizes[name.strip()] for name in shape.strip("()").split(","))
    trace_rows.append((step, shape, expected, got))
    assert got == expected, step
mh.show_table(
    trace_rows,
    header=(
        mh.say("step", "步骤"),
        mh.say("table", "表中"),
        mh.say("= with these sizes", "= 代入尺寸"),
        mh.say("traced", "实测"),
    ),
)

# %% [markdown] en_hash="3c8a6a410b0d"
# 表中的每一个形状，都是这个类实际算出的形状。这个类就是 `mh.MultiHeadAttention`，即课程包提供的书中的类，本课程后面一直使用它。
#
# **注意宽度约定。** 这里的 `d_out` 是**总**宽度，由各个头平分（head_dim = d_out // num_heads），而在第 05 课的包装器里，它是每个头的宽度。书中的例子用 `d_out = 2` 和 2 个头，所以每个头宽 1，输出形状是 (2, 6, 2)。

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(d_in, d_out=2, context_length=T, dropout=0.0, num_heads=2)
context_vecs = mha(batch)  # (b, T, d_out)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)

# %% [markdown] en_hash="0e420017329a"
# 这些数值与书中印出的一致。

# %%
for sequence in context_vecs:  # 每个都是 (T, d_out)
    torch.testing.assert_close(
        sequence, journey.reference["multihead_seed123_d_out2_heads2"], atol=1e-4, rtol=0
    )
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown] en_hash="f04759502f2e"
# 这些数字和第 05 课包装器的输出不同，因为宽度约定不一样，而且 `out_proj` 有它自己的随机权重。第 8 节会说明如何让两者完全一致。
#
# **先预测，再运行。** 第 05 课的包装器每个头要做 5 次矩阵乘法。那么，这个类在 **12 个头**时，一次前向传播要调用多少次 `nn.Linear` 和 `@`？看看第 4 节的表格，把你的猜测写在 `None` 的位置，运行这个单元格，再运行下一个。

# %%
prediction = None  # 你的预测：12 个头时 linear 和 matmul 的调用总次数
mhsa_helpers.exercises.check_split_matmul_prediction(prediction)

# %%
for heads in [1, 2, 4, 12]:
    module = MultiHeadAttention(d_in, 12 * 2, T, 0.0, num_heads=heads)
    with mh.CountMatmuls() as counter:
        module(batch)
    print(mh.say(f"{heads:>2} heads:", f"{heads:>2} 个头："), counter.counts)
    assert counter.counts == {"linear": 4, "matmul": 2}
print(mh.say("your prediction:", "你的预测："), prediction)

# %% [markdown] en_hash="424f9fd4270b"
# 结果是 4 次 `nn.Linear` 调用和 2 次 `@`，**与头数无关**。各个头藏在同一个张量的维度里，而不在 Python 循环里。下面把它与第 05 课的包装器放在一起比较。

# %%
counts = {"wrapper": {}, "MultiHeadAttention": {}}
for heads in [1, 2, 3, 4]:
    for name, module in [
        ("wrapper", mh.MultiHeadAttentionWrapper(d_in, 2, T, 0.0, num_heads=heads)),
        ("MultiHeadAttention", MultiHeadAttention(d_in, 2 * heads, T, 0.0, num_heads=heads)),
    ]:
        with mh.CountMatmuls() as counter:
            module(batch)
        counts[name][heads] = counter.counts
fig = mh.figures.plot_matmul_counts(counts)
plt.show()

# %% [markdown] en_hash="0e6e6894db14"
# 只有一个头时，拆分版比包装器多一次调用（6 次对 5 次）。多出来的那次 `nn.Linear` 就是 `out_proj`，包装器没有这一层。从两个头开始，拆分版的调用次数就更少了，而且每多一个头，差距就拉大一些。
#
# 调用少，不一定就省时间。在课程的 2 核 CPU 上给两者计时（`benchmarks/attention.py --part wrapper-vs-split`，见第 05 课），让这个类计算与包装器相同的函数。8 到 64 个词元时它更快，包装器的耗时是它的 1.2–1.9 倍。可到了 512 个词元，它的前向传播反而是包装器的 1.4 倍。原因在于，它一次对所有头的分数 (b, h, T, T) 做掩码和 softmax，这 24 MiB 的数据放不进 CPU 的缓存，而包装器每个头只处理 2 MiB。在 CPU 上，矩阵乘法的次数并不说明一切。
#
# ## 7. 往里看一眼：`return_weights=True`
#
# `mh.MultiHeadAttention` 有一个调试开关。传入 `return_weights=True` 时，它还会额外返回注意力权重，形状为 (b, num_heads, T, T)，取自 softmax 之后、dropout 之前。在相同的随机种子下，它的权重与我们自己的类相同。书中的例子里每个头只有 1 维宽，能做的事很少，所以两个头都把权重几乎平均地分给了它们能看到的词元。单元格打印出每个头各行**熵**（entropy）的平均值。熵是第 07 课的度量，越大越均匀。旁边是它可能的最大值，也就是完全均匀的因果行的熵。

# %%
torch.manual_seed(123)
mha_pkg = mh.MultiHeadAttention(d_in, 2, T, 0.0, num_heads=2)
out, attn = mha_pkg(batch, return_weights=True)  # (b, T, d_out), (b, h, T, T)
print(out.shape, attn.shape)
assert attn.shape == (2, 2, 6, 6)
assert torch.allclose(attn.sum(-1), torch.ones(2, 2, 6))  # 每行之和为 1
assert (attn.triu(diagonal=1) == 0).all()  # 因果
entropy = mh.head_entropy(attn.detach())  # (num_heads,)
print(
    mh.say("mean row entropy per head:", "每个头各行的平均熵："),
    entropy,
    mh.say("| even rows:", "| 完全均匀的行："),
    f"{uniform_causal_entropy(T):.4f}",
)
assert (uniform_causal_entropy(T) - entropy < 1e-3).all()  # 两个头都几乎均匀
fig = mh.plot_attention_heads(
    attn.detach(),
    words,
    suptitle=mh.tr("MultiHeadAttention, seed 123", "MultiHeadAttention，种子 123"),
)
plt.show()

# %% [markdown] en_hash="0876123bf974"
# ## 8. 证明：包装器版本和拆分版本是同一个函数
#
# 书中说两个类都在计算多头注意力，我们可以把这句话说得更精确。取一个包装器，再构造一个 `MultiHeadAttention`，让它的大矩阵由各个头的矩阵上下堆叠而成。头 1 的权重成为前 head_dim 行（索引 0 … head_dim − 1），头 2 的权重是接下来的 head_dim 行，依此类推。再让 `out_proj` 是恒等映射（权重为单位矩阵，偏置为 0），这样拼接结果原样通过。`mh.multihead_from_wrapper` 做的正是这件事。

# %%
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(d_in, 2, T, 0.0, num_heads=2)  # d_out=2 是每个头的宽度
split = mh.multihead_from_wrapper(wrapper)  # 总宽度 d_out = 2 * 2 = 4
print(split)

assert torch.equal(
    split.W_query.weight, torch.cat([head.W_query.weight for head in wrapper.heads])
)  # (h * head_dim, d_in)
assert torch.equal(split.out_proj.weight, torch.eye(4))
assert torch.equal(split(batch), wrapper(batch))
torch.testing.assert_close(
    split(batch)[0], journey.reference["wrapper_seed123_d_out2_heads2"], atol=1e-4, rtol=0
)
print(
    mh.say(
        "split(batch) == wrapper(batch), bit for bit (torch.equal)",
        "split(batch) == wrapper(batch)，逐位相同（torch.equal）",
    )
)

# %% [markdown] en_hash="ffd5ec77f6c2"
# 同一个计算有两种画法。先看流程：
#
# ```mermaid
# flowchart TB
#     subgraph split ["拆分版：每种投影一个大矩阵"]
#         direction TB
#         x2["x (b, T, d_in)"] --> big["W_query、W_key、W_value：(b, T, d_out)"]
#         big --> cut["view + transpose：(b, h, T, head_dim)"]
#         cut --> att["注意力：一次批量矩阵乘法算完所有头"]
#         att --> merge["transpose + view：(b, T, d_out)"]
#         merge --> proj["out_proj"]
#     end
#     subgraph wrapper ["包装器：每个头一个模块"]
#         direction TB
#         x1["x (b, T, d_in)"] --> h1["头 1：W_query、W_key、W_value、注意力"]
#         x1 --> h2["头 2：W_query、W_key、W_value、注意力"]
#         h1 --> cat["cat：(b, T, 2 * head_dim)"]
#         h2 --> cat
#     end
# ```
#
# 再看矩阵。上面是包装器的两个头，各有一个自己的 (2, 3) `W_query`，要做两次小矩阵乘法。下面是拆分版唯一的一个 (4, 3) `W_query`，装的是同样的数字，头 1 的行在上，头 2 的行在下，只需一次乘法。`W_key` 和 `W_value` 同理。`multihead_from_wrapper` 把 `out_proj` 设成了恒等映射，所以它什么也不改变。

# %%
fig = mh.figures.plot_wrapper_vs_split(
    [head.W_query.weight for head in wrapper.heads], split.W_query.weight
)
plt.show()

# %% [markdown] en_hash="84826b7abee8"
# 在书中的例子上，两者逐位相同。到了 GPT-2 的规模（12 个头 × 64），两者只在 float32 的舍入误差范围内相等。本课末尾折叠起来的检查单元格会运行这一比较，并说明为什么不能保证每种尺寸下都逐位相等。浮点加法不满足结合律，一次大矩阵乘法累加部分和的顺序，可能与十二次小矩阵乘法不同。
#
# ## 9. GPT-2 的规模，以及为什么多几个头不花钱
#
# 书中的例子用 2 个头、d_out = 2。最小的 GPT-2（1.24 亿参数，最初报告为 1.17 亿）有 12 个头，head_dim 为 64（12 × 64 = 768），上下文长度（context length）为 1024。最大的 GPT-2（15 亿参数）有 25 个头，d = 1600。GPT 中 d_in = d_out。在 `meta` 设备上构建这样的模块只会创建形状，不占内存，也不生成随机数，而数参数只需要形状。不用 `qkv_bias` 时，共有三个 d×d 矩阵，再加上 `out_proj`（d×d 的权重加 d 个偏置），合计 4·d² + d。

# %%
gpt2 = {"small": (768, 12), "medium": (1024, 16), "large": (1280, 20), "xl": (1600, 25)}
for name, (d, heads) in gpt2.items():
    with torch.device("meta"):
        module = mh.MultiHeadAttention(d, d, 1024, 0.0, num_heads=heads)
    count = sum(p.numel() for p in module.parameters())
    assert count == 4 * d * d + d
    assert module.head_dim == 64
    print(
        mh.say(
            f"GPT-2 {name:<6}: d={d:>4}, {heads:>2} heads x {module.head_dim} -> {count:>10,} parameters",
            f"GPT-2 {name:<6}：d={d:>4}，{heads:>2} 个头 × {module.head_dim} -> {count:>10,} 个参数",
        )
    )

# %% [markdown] en_hash="a53b4cedd399"
# GPT-2 的每种规模都保持 head_dim = 64，模型变大时增加的是头数。最小的 GPT-2 中一个注意力块约有 240 万个参数。整个模型有 12 个这样的块，另外还有前馈层和嵌入（embedding）层，它们的参数更多。`mask` 缓冲区（1024 × 1024）不是参数，不计入其中。
#
# **为什么要多个头？** 注意公式 4·d² + d 中**没有**出现的那个量，即头数。把 d_out = 768 分成 12 个 64 维的头，所花的参数与一个 768 维宽的头完全相同。

# %%
for heads in [1, 4, 12]:
    with torch.device("meta"):
        module = mh.MultiHeadAttention(768, 768, 1024, 0.0, num_heads=heads)
    count = sum(p.numel() for p in module.parameters())
    print(
        mh.say(
            f"{heads:>2} head(s) of head_dim {module.head_dim:>3}: {count:,} parameters, "
            f"{heads} attention weighting(s) per token",
            f"{heads:>2} 个头，head_dim {module.head_dim:>3}：{count:,} 个参数，"
            f"每个词元 {heads} 组注意力权重",
        )
    )
    assert count == 4 * 768 * 768 + 768

# %% [markdown] en_hash="ce0a5d249b1f"
# 变的是词元能用这些参数做什么。只有一个头时，每个词元只有**一组** softmax 权重去分配给其他词元。如果它需要从两个地方获取信息，比如紧挨在前面的那个词和句子的主语，就只能把权重分给两者，得到的是它们的值的混合。十二个头则给它十二组互相独立的权重分配。每个头在 Q 和 K 中属于自己的 64 列里比较查询和键，即 (b, T, 768) → (b, 12, T, 64)，并读取值向量中属于自己的 64 列。各个头的输出并排放着，随后由 `out_proj` 把它们组合起来。代价是每个头的分数只是 head_dim = 64 个数的点积（dot product）。这正是原始论文（Vaswani et al., 2017）的动机。论文说，各个头关注的是不同的**表示子空间**（representation subspace）。至于训练好的头是否真的分工成可辨认的角色，则是一个需要用实验回答的问题，第 07 课和第 08 课会去看一看。
#
# **头多了，计算量也不变。** 每个头的分数 $Q_iK_i^\top$ 和加权求和 $A_iV_i$ 各需 $T^2 \cdot$ head_dim 次乘加。$h$ 个头合计 $h \cdot T^2 \cdot d_{out} / h = T^2 \cdot d_{out}$，与一个宽度为 $d_{out}$ 的头相同。无论一个头还是多个头，注意力都是 $O(T^2 \cdot d)$。`torch.utils.flop_counter` 里的 `FlopCounterMode` 可以统计浮点运算次数（FLOP，每次乘加算 2 次）。下面仍在 `meta` 设备上，按 GPT-2 small 的宽度和上下文长度统计一次前向传播。

# %%
for heads in [1, 4, 12]:
    with torch.device("meta"):  # 只有形状，不占内存，也不生成随机数
        module = mh.MultiHeadAttention(768, 768, 1024, 0.0, num_heads=heads)
        x_meta = torch.empty(1, 1024, 768)  # (b, T, d_in)
    with FlopCounterMode(display=False) as flops:
        module(x_meta)  # (b, T, d_out)
    by_op = {str(op): n for op, n in flops.get_flop_counts()["Global"].items()}
    attention = by_op["aten.bmm"]  # Q K^T 和 weights @ V，所有头的 (b, h, T, T) 乘积
    print(
        mh.say(
            f"{heads:>2} head(s): {flops.get_total_flops() / 1e9:.2f} GFLOP, of which "
            f"{attention / 1e9:.2f} in the (T, T) products",
            f"{heads:>2} 个头：{flops.get_total_flops() / 1e9:.2f} GFLOP，其中 "
            f"{attention / 1e9:.2f} 在 (T, T) 乘积里",
        )
    )
    assert attention == 2 * 2 * 1024**2 * 768  # 2 次乘积 × 2 FLOP × T^2 × d_out，与 h 无关

# %% [markdown] en_hash="03e2fb1bdfb7"
# 1 个、4 个、12 个头都是 8.05 GFLOP。其中 3.22 GFLOP 是 (T, T) 的那两次乘法，随 $T^2$ 增长，其余是四个投影，随 $T$ 增长。
#
# **检查单元格（已折叠，供课程的测试使用）。** 下面隐藏的单元格检查的是，在 GPT-2 small 的形状下（12 个头 × 64，随机的 64 个词元输入），包装器与 `mh.multihead_from_wrapper` 的结果在 float32 舍入误差范围内相等。它们是否也逐位相同，取决于 CPU、BLAS 库和线程数，因为浮点加法不满足结合律。在 float32 中，(0.1 + 0.3) + 0.4 与 0.1 + (0.3 + 0.4) 在最后一位上不同。因此，本课程一般用 `torch.testing.assert_close` 检查“同一个函数”，只在计算过程能完全对齐的小例子上才用 `torch.equal`。点击该单元格即可展开。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
torch.manual_seed(123)
wrapper_big = mh.MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
split_big = mh.multihead_from_wrapper(wrapper_big)
x_big = torch.randn(1, 64, 768)  # (b, T, d_in)
with torch.no_grad():
    out_wrapper, out_split = wrapper_big(x_big), split_big(x_big)  # 每个都是 (b, T, 768)
torch.testing.assert_close(out_split, out_wrapper, rtol=1e-5, atol=1e-6)
print(
    mh.say(
        "GPT-2 small shape: wrapper == split to float32 rounding (rtol=1e-5, atol=1e-6)",
        "GPT-2 small 的形状：wrapper == split，误差在 float32 舍入范围内（rtol=1e-5，atol=1e-6）",
    )
)

left = (torch.tensor(0.1) + torch.tensor(0.3)) + torch.tensor(0.4)  # float32
right = torch.tensor(0.1) + (torch.tensor(0.3) + torch.tensor(0.4))
assert not torch.equal(left, right)
torch.testing.assert_close(left, right)
print(f"(0.1 + 0.3) + 0.4 = {left.item():.10f}, 0.1 + (0.3 + 0.4) = {right.item():.10f}")

# %% [markdown] en_hash="39d8fcebb403"
# ## 小结
#
# * 拆分多个头时，先 `view(b, T, num_heads, head_dim)`，再 `transpose(1, 2)` 得到 (b, h, T, head_dim)，其中 `head_dim = d_out // num_heads`。头 1 是前 head_dim 列，头 2 是接下来的 head_dim 列，依此类推。
# * 一次**批量矩阵乘法** `q @ k.transpose(2, 3)` 就算出所有头，与逐头循环的结果逐位相同。
# * 合并回去时，先 `transpose(1, 2)`，再 `contiguous().view(b, T, d_out)`，也可以用 `reshape`，它在必要时会复制。直接对转置后的张量调用 `view` 会失败。
# * `out_proj`（输出投影）负责混合各个头。无论多少个头，代价都是 4 次线性层调用加 2 次矩阵乘法。调用次数少了，是否更快要看尺寸。在 CPU 上，512 个词元时测得包装器的前向传播更快。不带 qkv 偏置时参数量为 4·d² + d，计算量为 $O(T^2 \cdot d)$。两者都与头数无关，所以在参数量和计算量都不变的情况下，更多的头换来更多组相互独立的注意力权重分配。
# * 包装器的 `d_out` 是每个头的宽度，`MultiHeadAttention` 的 `d_out` 是总宽度。
# * `mh.multihead_from_wrapper` 把包装器变成拆分版。两者在书中的例子上逐位相同，在 GPT-2 的规模下在 float32 舍入误差范围内相等，因为浮点加法不满足结合律。
# * 对前向传播的追踪（钩子加一个 `TorchFunctionMode`）证实了 10 步表格中的每一个形状。
# * 下一课，第 07 课深入各个头的内部，介绍热力图（heatmap）、熵，以及一个交互式探索工具。
#
# ## 练习
#
# 参考答案见 `solutions/06_multihead_split_solutions.ipynb`。最大的一道练习，即实现这个类，在第 5 节。
#
# **练习 1（热身）。** 一个与 Llama 2 7B 的注意力一样大的模块有 d_out = 4096 和 32 个头。`head_dim` 是多少？

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_head_dim(answer)

# %% [markdown] en_hash="19902c519c8e"
# **练习 2。** 一个 `MultiHeadAttention` 的 d_in = d_out = d，并且像真正的 GPT-2 一样使用 `qkv_bias=True`，它有 9,443,328 个参数。d 是多少？第 9 节的公式没有算 Q/K/V 的偏置。先把偏置加进去，再从参数量倒推出 d。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_mha_parameter_count(answer)

# %% [markdown] en_hash="6572951c1dc8"
# **练习 3。** `forward` 拆分的是一个**批次** (b, T, d_out)。下面的 `x_ex` 只是一个序列，没有批次轴，它有 T = 5 个词元，d_out = 12。请把它拆成 **3** 个头，形状为 (num_heads, T, head_dim)，让头 1（索引 0）拿到每个词元的前 head_dim 个数。现在哪一维是词元轴？`transpose(1, 2)` 又该怎么改？先试试 `x_ex.view(3, 5, 4)`，看看检查器怎么说。

# %%
x_ex = torch.arange(5 * 12, dtype=torch.float32).view(5, 12)  # (T, d_out)：没有批次轴

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_split_into_heads(answer, x_ex)
