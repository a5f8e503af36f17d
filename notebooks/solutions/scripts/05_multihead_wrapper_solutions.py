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
# # 05 · Multi-head attention as a wrapper — solutions (多头注意力 · 参考答案)
#
# Worked answers to the exercises of `05_multihead_wrapper.ipynb`. Try them yourself first. Each
# cell computes the answer and asserts that the checker passes.

# %%
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()
batch = mh.load_journey().batch  # (b, T, d_in) = (2, 6, 3)

# %% [markdown]
# **The prediction of section 6.** Each head runs `W_query`, `W_key`, `W_value` (3 `nn.Linear`
# calls) and `Q @ K^T`, `weights @ V` (2 `@`): 5 per head, 10 for 2 heads.

# %%
prediction = 2 * (3 + 2)
result = mhsa_helpers.exercises.check_matmul_prediction(prediction)
assert result, result
result

# %% [markdown]
# **Section 1: build the wrapper yourself.** The heads live in an `nn.ModuleList`, so that their
# parameters are registered (a plain list would hide them from `parameters()` and `.to()`);
# `forward` runs each head on the same x and concatenates along the last dimension. The checker
# runs its contract tests on it.


# %%
class MyMultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                mh.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):  # x: (b, T, d_in)
        outputs = [head(x) for head in self.heads]  # num_heads tensors (b, T, d_out)
        return torch.cat(outputs, dim=-1)  # (b, T, num_heads * d_out)


result = mhsa_helpers.exercises.check_wrapper_class(MyMultiHeadAttentionWrapper)
assert result, result
result

# %% [markdown]
# The same function as the package's wrapper: same seed, the same parameters in the same order,
# so outputs equal bit for bit, with dropout off and on.

# %%
torch.manual_seed(123)
ours = MyMultiHeadAttentionWrapper(3, 2, 6, 0.5, num_heads=3)
torch.manual_seed(123)
theirs = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.5, num_heads=3)
print(
    mh.assert_same_module(ours, theirs, mh.load_journey().batch)
)  # eval mode and seeded train mode

# %% [markdown]
# **Exercise 1.** Each head is a `CausalAttention` with three `nn.Linear(768, 64, bias=False)`
# layers, `W_query`, `W_key`, `W_value`: 3 × 768 × 64 = 147,456 numbers. The wrapper holds 12
# such heads and nothing else (no output projection): 12 × 147,456 = 1,769,472, exactly three
# 768 × 768 matrices. The heads split the width, so their number does not change the count.

# %%
per_head = 3 * 768 * 64  # W_query, W_key, W_value: (768, 64) each, no bias
answer = 12 * per_head
with torch.device("meta"):
    wrapper = mh.MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
assert sum(p.numel() for p in wrapper.parameters()) == answer
print(f"{answer:,}")

result = mhsa_helpers.exercises.check_wrapper_parameters(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** The wrapper creates its heads one after another, so after
# `torch.manual_seed(123)` its three heads draw the first three sets of weights, and a
# `CausalAttention` built right after it draws the fourth: the weights of head 4 of a 4-head
# wrapper built after the same seed. Its output is that wrapper's columns `6:8`.

# %%
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=3)
extra = mh.CausalAttention(3, 2, 6, 0.0)  # no second seed: the generator goes on
answer = extra(batch)  # (b, T, d_out) = (2, 6, 2)

torch.manual_seed(123)
wrapper_4 = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=4)
assert torch.equal(answer, wrapper_4(batch)[..., 6:8])  # the same as the 4-head wrapper's head 4
print(answer[0])

result = mhsa_helpers.exercises.check_head_output(answer)
assert result, result
result

# %% [markdown]
# **Exercise 3.** A (b, T, n) @ (n, m) product does b · T · n · m multiply-adds. Per head, each
# projection is (8, 100, 768) @ (768, 64); Q @ K^T is (8, 100, 64) @ (8, 64, 100) and weights
# @ V is (8, 100, 100) @ (8, 100, 64), each 8 · 100 · 100 · 64. Unlike the count of calls in
# section 6, the work grows with the batch and the sequence length. `FlopCounterMode` counts 2
# FLOPs per multiply-add and agrees.

# %%
b, T, d_in, head_dim, num_heads = 8, 100, 768, 64, 12
projections = 3 * num_heads * b * T * d_in * head_dim  # W_query, W_key, W_value
attention = 2 * num_heads * b * T * T * head_dim  # Q @ K^T and weights @ V
answer = projections + attention
print(f"{projections:,} + {attention:,} = {answer:,}")

torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(d_in, head_dim, T, 0.0, num_heads=num_heads)
with FlopCounterMode(display=False) as flops, torch.no_grad():
    wrapper(torch.randn(b, T, d_in))  # (b, T, num_heads * head_dim)
print(f"FlopCounterMode: {flops.get_total_flops():,} FLOPs = 2 x {answer:,}")
assert flops.get_total_flops() == 2 * answer

result = mhsa_helpers.exercises.check_matmul_count(answer)
assert result, result
result
