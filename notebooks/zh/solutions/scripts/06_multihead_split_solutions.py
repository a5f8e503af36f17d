# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="4a0331214f1c"
# # 06 · 多头注意力：拆分成多个头 · 参考答案
#
# `06_multihead_split.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import math

import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="6cb1b01e8d1a"
# **第 5 节的动手实现。** 这就是书中的类，照着第 4 节的表格写成。注释标出了每一行对应的步骤编号和形状。检查器会对它做契约测试（contract test）。


# %%
class MyMultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )  # (context_length, context_length)，1 表示未来

    def forward(self, x):  # 1. x: (b, T, d_in)
        b, num_tokens, _ = x.shape
        shape = (b, num_tokens, self.num_heads, self.head_dim)
        queries = self.W_query(x).view(shape).transpose(1, 2)  # 2.-4. (b, h, T, head_dim)
        keys = self.W_key(x).view(shape).transpose(1, 2)  # (b, h, T, head_dim)
        values = self.W_value(x).view(shape).transpose(1, 2)  # (b, h, T, head_dim)
        attn_scores = queries @ keys.transpose(2, 3)  # 5. (b, h, T, T)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]  # (T, T)
        attn_scores.masked_fill_(mask_bool, -torch.inf)  # 6.
        attn_weights = torch.softmax(attn_scores / self.head_dim**0.5, dim=-1)  # 7. (b, h, T, T)
        attn_weights = self.dropout(attn_weights)  # 只在训练时
        context = attn_weights @ values  # 8. (b, h, T, head_dim)
        context = context.transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)  # 9.
        return self.out_proj(context)  # 10. (b, T, d_out)


result = mhsa_helpers.exercises.check_build_multihead(MyMultiHeadAttention)
assert result, result
result

# %% [markdown] en_hash="683216fe3ab0"
# 它和课程包里的 `mh.MultiHeadAttention` 是同一个函数。种子相同，相同的层按相同顺序创建，所以权重相同，无论关闭还是打开 dropout，输出都逐位相等。

# %%
torch.manual_seed(123)
ours = MyMultiHeadAttention(3, 4, 6, 0.5, num_heads=2)
torch.manual_seed(123)
theirs = mh.MultiHeadAttention(3, 4, 6, 0.5, num_heads=2)
print(mh.assert_same_module(ours, theirs, mh.load_journey().batch))  # 评估模式和设了种子的训练模式

# %% [markdown] en_hash="afb2223acffc"
# **第 6 节的预测。** 无论多少个头，都是 6 次调用，即 `W_query`、`W_key`、`W_value`、`out_proj` 这 4 次 `nn.Linear`，加上 `Q @ K^T`、`weights @ V` 这 2 次 `@`。`forward` 中没有哪一行会每个头各运行一次，各个头只是张量的一个维度。

# %%
prediction = 4 + 2
result = mhsa_helpers.exercises.check_split_matmul_prediction(prediction)
assert result, result
result

# %% [markdown] en_hash="8aac3b2f8b41"
# **练习 1。** 在 `MultiHeadAttention` 中，`d_out` 是由各个头共享的总宽度，所以 `head_dim` = 4096 // 32 = 128，是 GPT-2 每头宽度 64 的两倍。

# %%
answer = 4096 // 32
with torch.device("meta"):  # 只有形状
    assert mh.MultiHeadAttention(4096, 4096, 1024, 0.0, num_heads=32).head_dim == answer
print(answer)

result = mhsa_helpers.exercises.check_head_dim(answer)
assert result, result
result

# %% [markdown] en_hash="5bea751b6748"
# **练习 2。** `W_query`、`W_key`、`W_value` 各有一个 d×d 的权重，在 `qkv_bias=True` 时还各有 d 个偏置。`out_proj` 有 d×d + d 个参数。总数是 4·d² + 4·d = 9,443,328。两边加 1 就成了平方数，4·d² + 4·d + 1 = (2·d + 1)² = 9,443,329 = 3073²，所以 d = 1536。如果不算 Q/K/V 的偏置，4·d² + d = 9,443,328 没有整数解，d ≈ 1536.37。

# %%
count = 9_443_328
# 由 4·d² + 4·d = count 得 (2·d + 1)² = count + 1，于是 d = (sqrt(count + 1) - 1) / 2
root = math.isqrt(count + 1)
assert root * root == count + 1  # 恰好是平方数，所以 d 是整数
answer = (root - 1) // 2
with torch.device("meta"):  # 像 GPT-2 一样用 24 个 64 维的头，头数不改变参数量
    module = mh.MultiHeadAttention(answer, answer, 1024, 0.0, num_heads=24, qkv_bias=True)
assert sum(p.numel() for p in module.parameters()) == count
print(answer)

result = mhsa_helpers.exercises.check_mha_parameter_count(answer)
assert result, result
result

# %% [markdown] en_hash="36a48317ea16"
# **练习 3。** 没有批次轴时，词元是第 0 维。先 `view` 成 (T, num_heads, head_dim)，把每个词元的 12 个数切成 3 组，每组 4 个。再 `transpose(0, 1)`，把头这一维放到词元前面。若用 `transpose(1, 2)`，交换的会是头和 head_dim。`x_ex.view(3, 5, 4)` 的形状没错，内容却是错的，因为它跨越了词元的边界来切。

# %%
x_ex = torch.arange(5 * 12, dtype=torch.float32).view(5, 12)  # (T, d_out)：没有批次轴

answer = x_ex.view(5, 3, 4).transpose(0, 1)  # (h, T, head_dim)
print(answer[0])  # 头 1（索引 0）：每个词元的前四列（0:4）
assert torch.equal(answer[0], x_ex[:, 0:4])
assert torch.equal(answer, mh.split_heads(x_ex[None], 3)[0])  # 包成大小为 1 的批次，拆分后再取出
assert not torch.equal(x_ex.view(3, 5, 4), answer)

result = mhsa_helpers.exercises.check_split_into_heads(answer, x_ex)
assert result, result
result
