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
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1.** In `MultiHeadAttention` `d_out` is the total width, shared by the heads:
# 1600 // 25 = 64 — the same head width as GPT-2 small (768 // 12).

# %%
answer = 1600 // 25
with torch.device("meta"):  # shapes only
    assert mh.MultiHeadAttention(1600, 1600, 1024, 0.0, num_heads=25).head_dim == answer
print(answer)

result = mhsa_helpers.exercises.check_head_dim(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** `W_query`, `W_key`, `W_value`: a d×d weight and (with `qkv_bias=True`) a d
# bias each; `out_proj`: d×d + d. Total 4·d² + 4·d for d = 1024.

# %%
d = 1024
answer = 4 * d * d + 4 * d
with torch.device("meta"):
    module = mh.MultiHeadAttention(d, d, 1024, 0.0, num_heads=16, qkv_bias=True)
assert sum(p.numel() for p in module.parameters()) == answer
print(f"{answer:,}")

result = mhsa_helpers.exercises.check_mha_parameter_count(answer)
assert result, result
result

# %% [markdown]
# **Exercise 3.** First `view` to (b, T, num_heads, head_dim) — that cuts each token's 8 numbers
# into 4 pairs — then `transpose(1, 2)` to put heads before tokens. `x_ex.view(2, 4, 3, 2)`
# has the right shape but the wrong content: it cuts across tokens.

# %%
x_ex = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 8)  # (b, T, d_out)

answer = x_ex.view(2, 3, 4, 2).transpose(1, 2)  # (b, h, T, head_dim)
print(answer[0, 0])  # head 1 of sequence 1: columns 0:2 of each token
assert torch.equal(answer[0, 0], x_ex[0, :, 0:2])
assert torch.equal(answer, mh.split_heads(x_ex, 4))
assert not torch.equal(x_ex.view(2, 4, 3, 2), answer)

result = mhsa_helpers.exercises.check_split_into_heads(answer, x_ex)
assert result, result
result
