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

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1.** The fused weight stacks the three (d_out, d_in) weights row-wise, in the order
# query, key, value, so that `qkv(x).split(d_out, dim=-1)` returns Q, K, V. We rebuild the
# lesson's `mha` with the same seed.

# %%
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)

answer = torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight], dim=0)  # (12, 3)
result = mhsa_helpers.exercises.check_fused_qkv_weight(answer, mha)
assert result
result

# %% [markdown]
# And it does what it promises: a fused module carrying this weight equals `mha`.

# %%
fused = mh.FusedQKVMultiHeadAttention(3, 4, 6, 0.0, num_heads=2)
with torch.no_grad():
    fused.qkv.weight.copy_(answer)
    fused.out_proj.load_state_dict(mha.out_proj.state_dict())
x = mh.load_journey().batch  # (2, 6, 3)
torch.testing.assert_close(fused(x), mha(x))
print("fused module with this weight == mha")

# %% [markdown]
# **Exercise 2.** One (T, T) matrix per head and per sequence, 4 bytes per float32 number:
# 1 x 25 x 1024 x 1024 x 4 bytes = 100 MiB — for every layer (GPT-2 XL has 48).

# %%
batch, heads, T, bytes_per_float32 = 1, 25, 1024, 4
answer = batch * heads * T * T * bytes_per_float32
print(f"{answer:,} bytes = {answer / 2**20:.0f} MiB")
result = mhsa_helpers.exercises.check_attention_matrix_bytes(answer)
assert result
result
