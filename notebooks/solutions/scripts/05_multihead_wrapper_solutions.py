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
# **Exercise 1.** In the wrapper `d_out` is per head and the heads are concatenated: 6 × 96.
# `d_in` = 512 only sets the width of the input. Building the module on the `meta` device checks
# the shape without allocating anything.

# %%
answer = 6 * 96
with torch.device("meta"):
    wrapper = mh.MultiHeadAttentionWrapper(512, 96, 256, 0.1, num_heads=6)
    assert wrapper(torch.empty(1, 4, 512)).shape[-1] == answer
print(answer)

result = mhsa_helpers.exercises.check_wrapper_width(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** Head k owns columns `(k - 1) * d_out : k * d_out` of the concatenation, so
# head 3 is `4:6`. It equals running `wrapper.heads[2]` on its own.

# %%
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=3)
out = wrapper(batch)  # (b, T, 3 * d_out) = (2, 6, 6)
answer = out[..., 4:6]  # (b, T, d_out)
assert torch.equal(answer, wrapper.heads[2](batch))
print(answer[0])

result = mhsa_helpers.exercises.check_head_output(answer)
assert result, result
result

# %% [markdown]
# **Exercise 3.** Per head: `W_query`, `W_key`, `W_value` (3 `nn.Linear` calls), then
# `Q @ K^T` and `weights @ V` (2 `@`): 5 per head, 60 for 12 heads. The batch does not change
# the count: one `nn.Linear` or `@` call handles all 8 sequences and 100 tokens at once (that is
# what a batched matmul is). The counter agrees.


# %%
answer = 12 * (3 + 2)
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(3, 2, 100, 0.0, num_heads=12)
x = torch.rand(8, 100, 3)  # (b, T, d_in)
with mh.CountMatmuls() as counter:
    wrapper(x)
print(counter.counts)
assert sum(counter.counts.values()) == answer

result = mhsa_helpers.exercises.check_matmul_count(answer)
assert result, result
result
