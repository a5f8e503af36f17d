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
# # 06 · Multi-head attention with split matrices — solutions (多头注意力 · 参考答案)
#
# Worked answers to the exercises of `06_multihead_split.ipynb`. Try them yourself first. Each
# cell computes the answer and asserts that the checker passes.

# %%
import math

import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Section 5: build it yourself.** The book's class, written from the table of section 4. The
# comments give each line's step number and shape. The checker runs its contract tests on it.


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
        )  # (context_length, context_length), 1 = future

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
        attn_weights = self.dropout(attn_weights)  # training only
        context = attn_weights @ values  # 8. (b, h, T, head_dim)
        context = context.transpose(1, 2).contiguous().view(b, num_tokens, self.d_out)  # 9.
        return self.out_proj(context)  # 10. (b, T, d_out)


result = mhsa_helpers.exercises.check_build_multihead(MyMultiHeadAttention)
assert result, result
result

# %% [markdown]
# The same function as the package's `mh.MultiHeadAttention`: same seed, the same layers in the
# same order, so the same weights and outputs equal bit for bit, with dropout off and on.

# %%
torch.manual_seed(123)
ours = MyMultiHeadAttention(3, 4, 6, 0.5, num_heads=2)
torch.manual_seed(123)
theirs = mh.MultiHeadAttention(3, 4, 6, 0.5, num_heads=2)
print(mh.assert_same_module(ours, theirs, mh.load_journey().batch))  # eval and seeded train mode

# %% [markdown]
# **The prediction of section 6.** 6 calls for any number of heads: `W_query`, `W_key`,
# `W_value`, `out_proj` (4 `nn.Linear`) and `Q @ K^T`, `weights @ V` (2 `@`). No line of `forward`
# runs once per head; the heads are a dimension of the tensors.

# %%
prediction = 4 + 2
result = mhsa_helpers.exercises.check_split_matmul_prediction(prediction)
assert result, result
result

# %% [markdown]
# **Exercise 1.** In `MultiHeadAttention` `d_out` is the total width, shared by the heads:
# 4096 // 32 = 128 — twice GPT-2's head width of 64.

# %%
answer = 4096 // 32
with torch.device("meta"):  # shapes only
    assert mh.MultiHeadAttention(4096, 4096, 1024, 0.0, num_heads=32).head_dim == answer
print(answer)

result = mhsa_helpers.exercises.check_head_dim(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** `W_query`, `W_key`, `W_value`: a d×d weight and (with `qkv_bias=True`) a d
# bias each; `out_proj`: d×d + d. Total 4·d² + 4·d = 9,443,328. Adding 1 makes it a square,
# 4·d² + 4·d + 1 = (2·d + 1)² = 9,443,329 = 3073², so d = 1536. (Without the Q/K/V biases,
# 4·d² + d = 9,443,328 has no whole solution: d ≈ 1536.37.)

# %%
count = 9_443_328
# 4·d² + 4·d = count  ->  (2·d + 1)² = count + 1  ->  d = (sqrt(count + 1) - 1) / 2
root = math.isqrt(count + 1)
assert root * root == count + 1  # an exact square: d is a whole number
answer = (root - 1) // 2
with torch.device("meta"):  # 24 heads of 64, as in GPT-2; the heads do not change the count
    module = mh.MultiHeadAttention(answer, answer, 1024, 0.0, num_heads=24, qkv_bias=True)
assert sum(p.numel() for p in module.parameters()) == count
print(answer)

result = mhsa_helpers.exercises.check_mha_parameter_count(answer)
assert result, result
result

# %% [markdown]
# **Exercise 3.** Without a batch axis the tokens are axis 0. First `view` to
# (T, num_heads, head_dim) — that cuts each token's 12 numbers into 3 groups of 4 — then
# `transpose(0, 1)` to put heads before tokens (`transpose(1, 2)` would swap heads and
# head_dim). `x_ex.view(3, 5, 4)` has the right shape but the wrong content: it cuts across
# tokens.

# %%
x_ex = torch.arange(5 * 12, dtype=torch.float32).view(5, 12)  # (T, d_out): no batch axis

answer = x_ex.view(5, 3, 4).transpose(0, 1)  # (h, T, head_dim)
print(answer[0])  # head 0: columns 0:4 of each token
assert torch.equal(answer[0], x_ex[:, 0:4])
assert torch.equal(answer, mh.split_heads(x_ex[None], 3)[0])  # a batch of one, split, unwrapped
assert not torch.equal(x_ex.view(3, 5, 4), answer)

result = mhsa_helpers.exercises.check_split_into_heads(answer, x_ex)
assert result, result
result
