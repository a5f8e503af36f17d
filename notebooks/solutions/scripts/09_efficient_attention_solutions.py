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
# # 09 · Efficient attention — solutions (高效注意力：参考答案)
#
# Worked answers to the exercises of `09_efficient_attention.ipynb`. Try them yourself first.

# %%
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1.** `qkv.weight` is (3 * d_out, d_in) with the blocks stacked along the rows in the
# order query, key, value, so W_key is rows `d_out` to `2 * d_out - 1`. `split(d_out, dim=0)`
# returns the three blocks; the middle one is W_key.

# %%
torch.manual_seed(7)
fused_ex = mh.FusedQKVMultiHeadAttention(
    d_in=5, d_out=6, context_length=8, dropout=0.0, num_heads=3
)

d_out = fused_ex.d_out
answer = fused_ex.qkv.weight[d_out : 2 * d_out]  # (d_out, d_in) = (6, 5)
w_query, w_key, w_value = fused_ex.qkv.weight.split(d_out, dim=0)  # the same, with split
assert torch.equal(answer, w_key)
print(tuple(answer.shape))
result = mhsa_helpers.exercises.check_key_block(answer, fused_ex)
assert result, result
result

# %% [markdown]
# **Exercise 2.** One (T, T) matrix per head and per sequence, 4 bytes per float32 number:
# the weights take $1 \times 25 \times T^2 \times 4 = 100\,T^2$ bytes. They fit in $2^{30}$ bytes
# while $T^2 \le 2^{30} / 100$, so T is the integer square root of $2^{30} // 100$: about 3.2
# times GPT-2 XL's context, for one layer (it has 48) and one sequence.

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

# %% [markdown]
# **Exercise 3 (build it).** One projection, `view` to (b, T, 3, h, head_dim), and `permute` puts
# the "which of Q, K, V" axis first and the heads before the tokens, so unpacking gives three
# (b, h, T, head_dim) tensors (the same as `split(d_out, dim=-1)` then `view` + `transpose(1, 2)`
# for each). After the weighted sum, `transpose(1, 2)` makes the tensor non-contiguous, so the
# heads are merged with `.contiguous().view(...)`.


# %%
class MyFusedAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out, self.num_heads, self.head_dim = d_out, num_heads, d_out // num_heads
        self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)  # one projection for Q, K, V
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

# %% [markdown]
# The class carries the package's state_dict names (`qkv`, `out_proj`, `mask`), so a package
# module's weights load into it, and both compute the same outputs bit for bit:

# %%
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)
package = mh.FusedQKVMultiHeadAttention.from_multihead(mha)
mine = MyFusedAttention(3, 4, 6, 0.0, num_heads=2)
mine.load_state_dict(package.state_dict())
x = mh.load_journey().batch  # (2, 6, 3)
assert torch.equal(mine(x), package(x))
torch.testing.assert_close(mine(x), mha(x))
print(mine(x)[0].detach())  # (6, 4): lesson 06's numbers
