# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="1fc18de9e53b"
# # 09 · 高效注意力 · 参考答案
#
# `09_efficient_attention.ipynb` 中各道练习的详解。请先自己动手做一遍。

# %%
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="527bb9f3587f"
# **练习 1。** `qkv.weight` 的形状是 (3 * d_out, d_in)，三块按查询、键、值的顺序沿行叠放，所以 W_key 是第 `d_out` 行到第 `2 * d_out - 1` 行。`split(d_out, dim=0)` 会返回这三块，中间那块就是 W_key。

# %%
torch.manual_seed(7)
fused_ex = mh.FusedQKVMultiHeadAttention(
    d_in=5, d_out=6, context_length=8, dropout=0.0, num_heads=3
)

d_out = fused_ex.d_out
answer = fused_ex.qkv.weight[d_out : 2 * d_out]  # (d_out, d_in) = (6, 5)
w_query, w_key, w_value = fused_ex.qkv.weight.split(d_out, dim=0)  # 用 split 得到同样的结果
assert torch.equal(answer, w_key)
print(tuple(answer.shape))
result = mhsa_helpers.exercises.check_key_block(answer, fused_ex)
assert result, result
result

# %% [markdown] en_hash="6a8bdccf80a1"
# **练习 2。** 每个头、每个序列各有一个 (T, T) 矩阵，每个 float32 数占 4 字节，所以权重占 $1 \times 25 \times T^2 \times 4 = 100\,T^2$ 字节。只要 $T^2 \le 2^{30} / 100$，就放得下，所以 T 是 $2^{30} // 100$ 的整数平方根。这大约是 GPT-2 XL 上下文的 3.2 倍，而且只算了一层（GPT-2 XL 有 48 层）和一个序列。

# %%
import math

batch, heads, bytes_per_float32, budget = 1, 25, 4, 2**30
answer = math.isqrt(budget // (batch * heads * bytes_per_float32))
fits, too_many = (batch * heads * t**2 * bytes_per_float32 for t in (answer, answer + 1))
print(
    mh.say(
        f"T = {answer}: {fits:,} bytes <= {budget:,}", f"T = {answer}：{fits:,} 字节 <= {budget:,}"
    )
)
print(mh.say(f"T = {answer + 1}: {too_many:,} bytes", f"T = {answer + 1}：{too_many:,} 字节"))
result = mhsa_helpers.exercises.check_longest_context(answer)
assert result, result
result

# %% [markdown] en_hash="8392ea8e84fe"
# **练习 3（动手实现）。** 只做一次投影，再 `view` 成 (b, T, 3, h, head_dim)。`permute` 把“Q、K、V 中的哪一个”这一轴放到最前面，并把头放到词元之前，这样拆包就得到三个 (b, h, T, head_dim) 张量。这与先 `split(d_out, dim=-1)`、再对每一块做 `view` + `transpose(1, 2)` 的结果相同。加权求和之后，`transpose(1, 2)` 会让张量不再连续存储，所以合并各头时要用 `.contiguous().view(...)`。


# %%
class MyFusedAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)  # Q、K、V 共用一个投影
        self.out_proj = nn.Linear(d_out, d_out)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("mask", torch.triu(torch.ones(context_length, context_length), 1))

    def forward(self, x):
        b, num_tokens, _ = x.shape
        qkv = self.qkv(x)  # (b, T, 3 * d_out)
        qkv = qkv.view(b, num_tokens, 3, self.num_heads, self.head_dim)  # (b, T, 3, h, hd)
        queries, keys, values = qkv.permute(2, 0, 3, 1, 4)  # 3 x (b, h, T, head_dim)
        scores = queries @ keys.transpose(-2, -1)  # (b, h, T, T)
        scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], -torch.inf)
        weights = torch.softmax(scores / self.head_dim**0.5, dim=-1)  # (b, h, T, T)
        context = self.dropout(weights) @ values  # (b, h, T, head_dim)
        context = context.transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)
        return self.out_proj(context)  # (b, T, d_out)


result = mhsa_helpers.exercises.check_build_fused_multihead(MyFusedAttention)
assert result, result
result

# %% [markdown] en_hash="a75a369a35c9"
# 这个类沿用了包里的 state_dict 名称（`qkv`、`out_proj`、`mask`），所以包里模块的权重可以直接加载进来，两者算出的输出逐位相同：

# %%
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)
package = mh.FusedQKVMultiHeadAttention.from_multihead(mha)
mine = MyFusedAttention(3, 4, 6, 0.0, num_heads=2)
mine.load_state_dict(package.state_dict())
x = mh.load_journey().batch  # (2, 6, 3)
assert torch.equal(mine(x), package(x))
torch.testing.assert_close(mine(x), mha(x))
print(mine(x)[0].detach())  # (6, 4)，与第 06 课的数值相同
