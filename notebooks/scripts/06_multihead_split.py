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
# # 06 · Multi-head attention, version 2: one big matrix, split into heads (多头注意力 · 拆分成多个头)
#
# Lesson 05 ran each **attention head** (注意力头) as a separate module: 5 small matrix
# products per head. The book's second version, `MultiHeadAttention`, computes the queries, keys and
# values of *all* heads with one big matrix each, cuts the result into heads with `view` and
# `transpose`, and lets a single **batched matrix multiplication** (批量矩阵乘法) handle every
# head at once. An **output projection** (输出投影, `out_proj`) mixes the heads at the end. Then
# we prove that this is the same function as the wrapper.
#
# The formulas are those of lesson 05 plus the output matrix $W^O$:
#
# $$\begin{aligned}
# \text{head}_i &= \text{Attention}(XW_i^Q,\; XW_i^K,\; XW_i^V), \\
# \text{MultiHead}(X) &= \text{Concat}(\text{head}_1, \dots, \text{head}_h)\,W^O .
# \end{aligned}$$
#
# What is new is *where* the $W_i^Q$ live: not in $h$ separate matrices, but side by side in one
# big $W^Q = [\,W_1^Q \mid W_2^Q \mid \dots \mid W_h^Q\,]$, so that one product $XW^Q$
# computes every head's queries, and head $i$ reads its own block of columns.
#
# **Learning goals**
# 1. Split a (b, T, d_out) projection into heads: `view` to (b, T, num_heads, head_dim), then
#    `transpose(1, 2)` to (b, num_heads, T, head_dim), with `head_dim = d_out // num_heads`
#    (每头维度).
# 2. Check that one 4-D matmul equals the per-head loop, and merge the heads back
#    (`contiguous().view` versus `reshape`).
# 3. Build `MultiHeadAttention` yourself from the 10-step table of the forward pass (a checker
#    runs contract tests on your class), then compare with the book's class and its numbers.
# 4. Prove wrapper and split version compute the same thing (`mh.multihead_from_wrapper`), and
#    see why "the same" means bit for bit only sometimes.
# 5. Count the parameters at GPT-2 sizes, and see why more heads cost no extra parameters.
#
# **Prerequisites:** lesson 05 (`05_multihead_wrapper`).
# **Time:** about 110 minutes (reading, running 31 code cells, 1 prediction, 3 exercises, 1
# build-it; the rule is in lesson 00).
#
# **Shape contract:** `MultiHeadAttention`: `(b, T, d_in)` → `(b, T, d_out)`; inside, each of
# Q, K, V is `(b, num_heads, T, head_dim)` and the weights are `(b, num_heads, T, T)`.

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

mh.setup_lesson()
journey = mh.load_journey()
words = journey.words
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)
b, T, d_in = batch.shape

# %% [markdown]
# ## 1. One big projection, cut into heads
#
# Take 2 heads of width 2. Instead of two (3 → 2) query matrices we use one (3 → 4) matrix: its
# output columns 0–1 are head 1's queries, columns 2–3 are head 2's.

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

# %% [markdown]
# **Step 1: `view`** splits the last dimension into (num_heads, head_dim). No number moves; the
# same memory is just read with a different shape.

# %%
q = queries.view(b, T, num_heads, head_dim)  # (b, T, h, head_dim)
print(q.shape)
assert torch.equal(q[:, :, 0], queries[..., 0:2])  # head 1 = columns 0:2
assert torch.equal(q[:, :, 1], queries[..., 2:4])  # head 2 = columns 2:4
assert q.data_ptr() == queries.data_ptr()  # a view: same memory

# %% [markdown]
# **Step 2: `transpose(1, 2)`** moves the head dimension in front of the tokens. Now each head
# is a (T, head_dim) matrix, and PyTorch's matmul treats all leading dimensions (batch *and*
# heads) as a batch of independent matrix products.

# %%
q = q.transpose(1, 2)  # (b, h, T, head_dim)
k = keys.view(b, T, num_heads, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
v = values.view(b, T, num_heads, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
print(q.shape)
assert torch.equal(q, mh.split_heads(queries, num_heads))  # the package's helper does the same

# %% [markdown]
# ## 2. One batched matmul for all heads
#
# `q @ k.transpose(2, 3)` multiplies the last two dimensions, (T, head_dim) @ (head_dim, T), for
# every (batch, head) pair at once. The loop version computes each head separately. Same
# numbers, bit for bit:

# %%
scores = q @ k.transpose(2, 3)  # (b, h, T, T): all heads in one call
scores_loop = torch.stack(
    [q[:, h] @ k[:, h].transpose(1, 2) for h in range(num_heads)], dim=1
)  # (b, h, T, T): one head at a time
print(scores.shape)
assert torch.equal(scores, scores_loop)
print(
    mh.say(
        "batched matmul == per-head loop (torch.equal)", "批量矩阵乘法 == 逐个头循环（torch.equal）"
    )
)

# %% [markdown]
# The book shows the same on a small (1, 2, 3, 4) tensor — one sequence, 2 heads, 3 tokens,
# head_dim 4 — written out number by number. Here it is, with the result the book prints:

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
)  # (1, 2, 3, 3), as printed in the book
torch.testing.assert_close(all_heads, book_result, atol=1e-4, rtol=0)
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown]
# The book then computes each head on its own, `first_head = a[0, 0] @ a[0, 0].T` and the same
# for head 2: the batched product holds exactly these two matrices.

# %%
first_head = a[0, 0] @ a[0, 0].T  # (T, T)
second_head = a[0, 1] @ a[0, 1].T  # (T, T)
assert torch.equal(all_heads[0, 0], first_head)
assert torch.equal(all_heads[0, 1], second_head)
print(mh.say("First head:\n", "第一个头：\n"), first_head)
print(mh.say("Second head:\n", "第二个头：\n"), second_head)

# %% [markdown]
# The rest of attention works per head unchanged: mask, scale by $\sqrt{\text{head\_dim}}$,
# softmax over the last dimension, multiply by the values.

# %%
future = torch.triu(torch.ones(T, T), diagonal=1).bool()  # (T, T), broadcast over b and h
weights = torch.softmax(scores.masked_fill(future, -torch.inf) / head_dim**0.5, dim=-1)
context = weights @ v  # (b, h, T, head_dim)
print(weights.shape, context.shape)

# %% [markdown]
# ## 3. Merging the heads back: `contiguous().view` or `reshape`
#
# To concatenate the heads we undo the split: `transpose(1, 2)` back to (b, T, h, head_dim),
# then flatten the last two dimensions into d_out. But after a transpose the numbers are no
# longer laid out row by row in memory (the tensor is not *contiguous* / 连续存储), and `view` refuses:

# %%
context_t = context.transpose(1, 2)  # (b, T, h, head_dim)
print(mh.say("contiguous:", "是否连续存储："), context_t.is_contiguous())
try:
    context_t.view(b, T, d_out)
except RuntimeError as error:
    # torch's message says to use .reshape(...) instead; its exact wording varies by version.
    assert "reshape" in str(error)
    print(
        type(error).__name__,
        mh.say("-- view() refuses a non-contiguous tensor", "—— view() 拒绝不连续的张量"),
    )

# %% [markdown]
# Two fixes. `contiguous()` copies the data into row-by-row order, after which `view` works (the
# book's way). `reshape` does the same in one call: it returns a view when it can and copies when
# it must — here it must.

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
assert torch.equal(merged_view, mh.merge_heads(context))  # the package's helper

# %% [markdown]
# The merged tensor is exactly the wrapper-style concatenation: head 1's context vectors in
# columns 0–1, head 2's in columns 2–3.

# %%
assert torch.equal(merged_view, torch.cat([context[:, 0], context[:, 1]], dim=-1))
print(merged_view[0])  # (T, d_out)

# %% [markdown]
# The whole round trip in one picture, for the queries of the first sentence: the (6, 4)
# projection, coloured by the head each column belongs to; the two (6, 2) heads that `view` +
# `transpose` cut out of it; and the same (6, 4) matrix again after `transpose` +
# `contiguous().view`. No number changes place *within* a head; only the bookkeeping changes.

# %%
merged_queries = mh.merge_heads(q)  # (b, T, d_out)
fig = mh.figures.plot_head_split(queries[0], q[0], merged_queries[0], words)
plt.show()
assert torch.equal(merged_queries, queries)  # split + merge = identity

# %% [markdown]
# ## 4. The forward pass, step by step
#
# Everything together: the ten steps of the forward pass. The table says what each step produces, under the names of the book's code,
# and its shape; the PyTorch calls are for you to choose (sections 1–3 used every one of them).
# New at the end is step 10, `out_proj`, a
# (d_out → d_out) linear layer applied to the merged heads ($W^O$ in the formula). The heads
# never see each other's results; `out_proj` is where their outputs get mixed. The book notes it
# is not strictly necessary but commonly used in many LLM architectures. Keys and values go through
# steps 2–4 exactly like the queries; dropout (training only) acts on the weights right after
# step 7. (The folded cell below only builds the table.)

# %% jupyter={"source_hidden": true}
forward_steps = [  # (step, what it produces: the book's names, formula, shape of the result)
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

# %% [markdown]
# Here $h$ = `num_heads` and $d_k$ = `head_dim` = `d_out // num_heads`.
#
# ## 5. Build it yourself
#
# Before you read the book's class, write it: fill in `MyMultiHeadAttention` below, following the
# table. The constructor takes the book's arguments, `(d_in, d_out, context_length, dropout,
# num_heads, qkv_bias=False)`; use the book's names `W_query`, `W_key`, `W_value`, `out_proj`,
# `dropout`, and register the causal mask as a buffer named `mask` (as `CausalAttention` did in
# lesson 04). `forward(x)` takes x (b, T, d_in) and returns (b, T, d_out).
#
# The checker copies the weights of `mh.MultiHeadAttention` into your module (by those names) and
# runs contract tests: shapes at several sizes, causality (changing a later token changes nothing
# earlier), rows of weights summing to 1, equal outputs, dropout in training mode only, and a
# gradient for every parameter. If something is off, its hint names the likely mistake. Section
# 6 says where the book's version is: read it once your class passes.


# %%
class MyMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # YOUR CODE HERE: head_dim, W_query, W_key, W_value, out_proj, dropout, the mask buffer

    def forward(self, x):  # x: (b, T, d_in)
        # YOUR CODE HERE: steps 2-10 of the table
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_build_multihead(MyMultiHeadAttention)

# %% [markdown]
# ## 6. The book's class
#
# The book's `MultiHeadAttention` is not printed here, so that it does not give the build-it
# away: it is the solution of section 5 in `solutions/06_multihead_split_solutions.ipynb`, which
# also checks, bit for bit, that it is the same function as the package's
# `mh.MultiHeadAttention`. Once your class passes, compare the two line by line. The rest of the
# lesson runs the package's class.


# %%
MultiHeadAttention = mh.MultiHeadAttention  # the book's class, as the package ships it

# %% [markdown]
# **Trace the table.** Does the class really produce the shapes of the table? We run it once
# with sizes that are all different (b=2, T=5, d_in=7, d_out=12, h=3, head_dim=4, so a swapped
# dimension cannot hide) and record the shape after each operation: **forward hooks** (前向钩子)
# on `W_query` and `out_proj` (PyTorch calls a hook with a module's input and output), plus a
# `TorchFunctionMode` like lesson 05's `mh.CountMatmuls` that sees every tensor operation
# (`view`, `transpose`, `@` = `matmul`, ...).


# %%
class ShapeTrace(TorchFunctionMode):
    # records the shape of every tensor an operation returns, by operation name

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
    # runs module once under a ShapeTrace; returns the traced shape behind each table step
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
    masked = shapes.get("masked_fill_") or shapes["masked_fill"]  # in place or not
    return [  # the call behind each step, in the order forward makes them
        shapes["input"][0],
        shapes["W_query"][0],
        shapes["view"][1],  # views: keys, queries, values, then the merge
        shapes["transpose"][1],  # transposes: keys, queries, values, ...
        shapes["matmul"][0],
        masked[0],
        shapes["softmax"][0],
        shapes["matmul"][1],
        shapes["view"][3],
        shapes["out_proj"][0],
    ]


args = (sizes["d_in"], sizes["d_out"], 8, 0.0, sizes["h"])  # context_length 8, no dropout
traced = trace_forward(MultiHeadAttention(*args))  # the package's class
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

# %% [markdown]
# Every shape in the table is the shape the class computes: `mh.MultiHeadAttention`, the book's
# class as the package ships it, which the rest of the course uses.
#
# **Watch the width convention.** Here `d_out` is the *total* width, split over the heads
# (head_dim = d_out // num_heads); in lesson 05's wrapper it was the width of each head. The
# book's example uses `d_out = 2` and 2 heads, so each head is 1 wide and the output is (2, 6, 2):

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(d_in, d_out=2, context_length=T, dropout=0.0, num_heads=2)
context_vecs = mha(batch)  # (b, T, d_out)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)

# %% [markdown]
# These match the book's printed values:

# %%
for sequence in context_vecs:  # (T, d_out) each
    torch.testing.assert_close(
        sequence, journey.reference["multihead_seed123_d_out2_heads2"], atol=1e-4, rtol=0
    )
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown]
# These are different numbers from lesson 05's wrapper — a different width convention and an
# `out_proj` with its own random weights. Section 8 shows how to make the two agree exactly.
#
# **Predict, then run.** Lesson 05's wrapper made 5 matrix multiplications per head. How many
# calls (`nn.Linear` plus `@`) does one forward pass of this class make with **12 heads**? Look at
# the table of section 4, write your guess in place of `None`, run the cell, then run the next one.

# %%
prediction = None  # YOUR PREDICTION HERE: linear + matmul calls with 12 heads
mhsa_helpers.exercises.check_split_matmul_prediction(prediction)

# %%
for heads in [1, 2, 4, 12]:
    module = MultiHeadAttention(d_in, 12 * 2, T, 0.0, num_heads=heads)
    with mh.CountMatmuls() as counter:
        module(batch)
    print(mh.say(f"{heads:>2} heads:", f"{heads:>2} 个头："), counter.counts)
    assert counter.counts == {"linear": 4, "matmul": 2}
print(mh.say("your prediction:", "你的预测："), prediction)

# %% [markdown]
# 4 `nn.Linear` calls and 2 `@` **whatever the number of heads**: the heads live inside the
# dimensions of one tensor, not in a Python loop. Side by side with lesson 05's wrapper:

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

# %% [markdown]
# With one head the split class makes one call more than the wrapper (6 against 5): the extra
# `nn.Linear` is `out_proj`, which the wrapper does not have. From two heads on it makes fewer,
# and the gap grows with every head.
#
# Fewer calls are not always less time. Timed against each other on the course's 2-core CPU
# (`benchmarks/attention.py --part wrapper-vs-split`, lesson 05), this class computing the
# wrapper's function was faster for 8 to 64 tokens (the wrapper took 1.2–1.9x its time), but at
# 512 tokens its forward pass took 1.4x the wrapper's: it runs mask and softmax over the scores of
# all heads at once, (b, h, T, T), 24 MiB that do not stay in the CPU's cache, where the wrapper
# handles 2 MiB per head. The matmul count is not the whole story on a CPU.
#
# ## 7. Looking inside: `return_weights=True`
#
# `mh.MultiHeadAttention` has a debug switch: `return_weights=True` also returns the attention
# weights, (b, num_heads, T, T), taken after the softmax and before dropout. With the same seed
# it holds the same weights as our class. In the book's example each head is only 1 wide, so a
# head has little to work with: both heads spread their weight almost evenly over the tokens they
# may see. The cell prints their mean row **entropy** (熵, lesson 07's measure: the larger, the
# more even), next to its largest possible value, that of perfectly even causal rows.

# %%
torch.manual_seed(123)
mha_pkg = mh.MultiHeadAttention(d_in, 2, T, 0.0, num_heads=2)
out, attn = mha_pkg(batch, return_weights=True)  # (b, T, d_out), (b, h, T, T)
print(out.shape, attn.shape)
assert attn.shape == (2, 2, 6, 6)
assert torch.allclose(attn.sum(-1), torch.ones(2, 2, 6))  # each row sums to 1
assert (attn.triu(diagonal=1) == 0).all()  # causal
entropy = mh.head_entropy(attn.detach())  # (num_heads,)
print(
    mh.say("mean row entropy per head:", "每个头各行的平均熵："),
    entropy,
    mh.say("| even rows:", "| 完全均匀的行："),
    f"{uniform_causal_entropy(T):.4f}",
)
assert (uniform_causal_entropy(T) - entropy < 1e-3).all()  # both heads nearly even
fig = mh.plot_attention_heads(
    attn.detach(),
    words,
    suptitle=mh.tr("MultiHeadAttention, seed 123", "MultiHeadAttention，种子 123"),
)
plt.show()

# %% [markdown]
# ## 8. The proof: the wrapper and the split version are the same function
#
# The book states that both classes compute multi-head attention. We can make that exact. Take
# a wrapper, and build a `MultiHeadAttention` whose big matrices are the heads' matrices stacked
# on top of each other (head 1's weights become rows 0 … head_dim − 1, head 2's the next
# head_dim rows, and so on), with an identity `out_proj` (weight = identity matrix, bias = 0)
# so the concatenation passes through unchanged. `mh.multihead_from_wrapper` does exactly that.

# %%
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(d_in, 2, T, 0.0, num_heads=2)  # d_out=2 PER HEAD
split = mh.multihead_from_wrapper(wrapper)  # d_out = 2 * 2 = 4 in total
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

# %% [markdown]
# Two pictures of the same computation. First as a flow:
#
# ```mermaid
# flowchart TB
#     subgraph split ["split: one big matrix per projection"]
#         direction TB
#         x2["x (b, T, d_in)"] --> big["W_query, W_key, W_value: (b, T, d_out)"]
#         big --> cut["view + transpose: (b, h, T, head_dim)"]
#         cut --> att["attention, all heads in one batched matmul"]
#         att --> merge["transpose + view: (b, T, d_out)"]
#         merge --> proj["out_proj"]
#     end
#     subgraph wrapper ["wrapper: one module per head"]
#         direction TB
#         x1["x (b, T, d_in)"] --> h1["head 1: W_query, W_key, W_value, attention"]
#         x1 --> h2["head 2: W_query, W_key, W_value, attention"]
#         h1 --> cat["cat: (b, T, 2 * head_dim)"]
#         h2 --> cat
#     end
# ```
#
# Then as matrices. Top: the wrapper's two heads, each with its own (2, 3) `W_query` — two small
# matrix products. Bottom: the split version's one (4, 3) `W_query`, which holds the same
# numbers, head 1's rows on top of head 2's — one product. (The same holds for `W_key` and
# `W_value`; `multihead_from_wrapper` made `out_proj` the identity, so it changes nothing.)

# %%
fig = mh.figures.plot_wrapper_vs_split(
    [head.W_query.weight for head in wrapper.heads], split.W_query.weight
)
plt.show()

# %% [markdown]
# Bit for bit on the book's example. At GPT-2 size (12 heads × 64) the two agree to float32
# rounding: the collapsed check cell at the end of the lesson runs that comparison and shows
# why bitwise equality is not promised for every size (floating-point addition is not
# associative, and a big matmul may add its partial sums in a different order than twelve small
# ones).
#
# ## 9. GPT-2 sizes, and why more heads cost nothing
#
# The book's example uses 2 heads and d_out = 2. The smallest GPT-2 (124 million parameters, first reported as 117 million) has
# 12 heads with head_dim 64 (12 × 64 = 768) and a context length of 1024; the largest (1.5
# billion) has 25 heads, d = 1600. In GPT, d_in = d_out. Building such modules on the `meta`
# device creates only shapes (no memory, no random numbers), which is all we need to count
# parameters. Without `qkv_bias` there are three d×d matrices plus `out_proj` (d×d + d bias):
# 4·d² + d.

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

# %% [markdown]
# Every GPT-2 size keeps head_dim = 64 and adds heads as it grows. One attention block of the
# smallest GPT-2 has about 2.4 million parameters; the model has 12 such blocks (plus the
# feed-forward layers and embeddings, which are bigger). The `mask` buffer (1024 × 1024) is not a
# parameter and is not counted.
#
# **Why several heads?** Notice what the formula 4·d² + d does *not* contain: the number of
# heads. Splitting d_out = 768 into 12 heads of 64 costs exactly the parameters of one head of
# width 768:

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

# %% [markdown]
# What changes is what a token can do with them. One head gives each token *one* softmax over
# the others: if it needs information from two places (say the previous word and the subject of
# the sentence), it has to split its weight between them and receives a blend of their values.
# Twelve heads give it twelve independent weightings. Each head compares queries and keys in its
# own 64 columns of Q and K, (b, T, 768) → (b, 12, T, 64), and reads its own 64 columns of the
# values; the outputs sit side by side and `out_proj` then combines them. The price is that each
# head's scores are dot products of only head_dim = 64 numbers. This is the motivation of the
# original paper (Vaswani et al., 2017), which says the heads attend to different
# **representation subspaces** (表示子空间); whether trained heads really divide the work into
# recognisable roles is an empirical question, which lessons 07 and 08 look at.
#
# **Nor do more heads cost more arithmetic.** Per head, the scores $Q_iK_i^\top$ and the weighted
# sum $A_iV_i$ each take $T^2 \cdot$ head_dim multiply-adds; $h$ heads take
# $h \cdot T^2 \cdot d_{out} / h = T^2 \cdot d_{out}$, the same as one head of width $d_{out}$.
# Attention is $O(T^2 \cdot d)$ for one head or many. `FlopCounterMode` (in
# `torch.utils.flop_counter`) counts the FLOPs (2 per multiply-add) of one forward pass at GPT-2
# small's width and context, on the `meta` device again:

# %%
for heads in [1, 4, 12]:
    with torch.device("meta"):  # shapes only: no memory, no random numbers
        module = mh.MultiHeadAttention(768, 768, 1024, 0.0, num_heads=heads)
        x_meta = torch.empty(1, 1024, 768)  # (b, T, d_in)
    with FlopCounterMode(display=False) as flops:
        module(x_meta)  # (b, T, d_out)
    by_op = {str(op): n for op, n in flops.get_flop_counts()["Global"].items()}
    attention = by_op["aten.bmm"]  # Q K^T and weights @ V, all heads: (b, h, T, T) products
    print(
        mh.say(
            f"{heads:>2} head(s): {flops.get_total_flops() / 1e9:.2f} GFLOP, of which "
            f"{attention / 1e9:.2f} in the (T, T) products",
            f"{heads:>2} 个头：{flops.get_total_flops() / 1e9:.2f} GFLOP，其中 "
            f"{attention / 1e9:.2f} 在 (T, T) 乘积里",
        )
    )
    assert attention == 2 * 2 * 1024**2 * 768  # 2 products x 2 FLOPs x T^2 x d_out, any h

# %% [markdown]
# The same 8.05 GFLOP for 1, 4 or 12 heads; 3.22 of them are the (T, T) products, which grow with
# $T^2$, the rest are the four projections, which grow with $T$.
#
# **Check cell (collapsed; it serves the course's tests).** The hidden cell below checks that
# at GPT-2 small's shape (12 heads × 64, a random 64-token input) the wrapper
# and `mh.multihead_from_wrapper` agree to float32 rounding; whether they are also bit-identical
# there depends on the CPU, the BLAS library and the thread count, because floating-point
# addition is not associative: (0.1 + 0.3) + 0.4 and 0.1 + (0.3 + 0.4) differ in float32 in the
# last bit. That is why the course checks "same function" with `torch.testing.assert_close` in
# general and keeps `torch.equal` for small examples where the computations line up exactly.
# Click the cell to expand it.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
torch.manual_seed(123)
wrapper_big = mh.MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
split_big = mh.multihead_from_wrapper(wrapper_big)
x_big = torch.randn(1, 64, 768)  # (b, T, d_in)
with torch.no_grad():
    out_wrapper, out_split = wrapper_big(x_big), split_big(x_big)  # (b, T, 768) each
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

# %% [markdown]
# ## Summary
#
# * Split heads: `view(b, T, num_heads, head_dim)` then `transpose(1, 2)` → (b, h, T, head_dim),
#   with `head_dim = d_out // num_heads`. Head 1 = the first head_dim columns,
#   head 2 the next head_dim, and so on.
# * One **batched matrix multiplication** (批量矩阵乘法) `q @ k.transpose(2, 3)` computes every
#   head; it equals the per-head loop bit for bit.
# * Merge back: `transpose(1, 2)` then `contiguous().view(b, T, d_out)` (or `reshape`, which
#   copies when it must). `view` alone fails on the transposed tensor.
# * `out_proj` (输出投影) mixes the heads. Cost: 4 linear layers + 2 matmuls for any number of
#   heads (fewer calls; whether that is faster depends on the sizes: at 512 tokens the wrapper's
#   forward pass measured faster on a CPU). Parameters: 4·d² + d without qkv bias, and FLOPs
#   $O(T^2 \cdot d)$: both independent of the number of heads, so more heads buy more independent
#   attention weightings at the same parameter count and arithmetic.
# * Width conventions: wrapper `d_out` per head; `MultiHeadAttention` `d_out` total.
# * `mh.multihead_from_wrapper` turns a wrapper into the split version: bit-identical on the
#   book's example, equal to float32 rounding at GPT-2 size (float addition is not associative).
# * A trace of the forward pass (hooks + a `TorchFunctionMode`) confirms every shape of the
#   10-step table.
# * Next: lesson 07 looks inside the heads: heatmaps, entropy, and an interactive explorer.
#
# ## Exercises
#
# Solutions: `solutions/06_multihead_split_solutions.ipynb`. (The biggest exercise, building the
# class, is in section 5.)
#
# **Exercise 1 (warm-up).** A block the size of Llama 2 7B's attention has d_out = 4096 and 32 heads. What
# is `head_dim`?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_head_dim(answer)

# %% [markdown]
# **Exercise 2.** A `MultiHeadAttention` with d_in = d_out = d and `qkv_bias=True` (as in the
# real GPT-2) has 9,443,328 parameters. What is d? (Section 9's formula counts the block without
# Q/K/V biases: add them first, then go from the count back to d.)

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_mha_parameter_count(answer)

# %% [markdown]
# **Exercise 3.** `forward` splits a *batch* (b, T, d_out). `x_ex` below is one sequence
# without a batch axis: T = 5 tokens of d_out = 12. Split it into **3** heads, shape
# (num_heads, T, head_dim), with head 1 (index 0) holding the first head_dim numbers of every
# token. Which axis is the token axis now, and what becomes of `transpose(1, 2)`? (Try
# `x_ex.view(3, 5, 4)` first and see what the checker says.)

# %%
x_ex = torch.arange(5 * 12, dtype=torch.float32).view(5, 12)  # (T, d_out): no batch axis

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_split_into_heads(answer, x_ex)
