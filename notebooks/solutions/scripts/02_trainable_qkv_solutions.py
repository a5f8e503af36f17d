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
# # 02 · Trainable queries, keys and values — solutions (查询、键、值 · 参考答案)
#
# Worked answers to the exercises of `02_trainable_qkv.ipynb`. Try them yourself first. Each
# cell computes the answer and asserts that the checker passes.

# %%
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
d_in, d_out = 3, 2

# %% [markdown]
# **Exercise 1.** `nn.Linear` keeps `weight` as `(d_out, d_in)` and computes `x @ weight.T`;
# `SelfAttentionV1` computes `x @ W` with `W` of shape `(d_in, d_out)`. So `W = weight.T`, for
# each of the three projections. (The lesson defines both classes inline; they equal the ones
# in `mhsa_helpers`, which we use here.)

# %%
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in, d_out)  # (the lesson's sa_v2)

torch.manual_seed(123)
sa_v1 = mh.SelfAttentionV1(d_in, d_out)
sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T)  # (d_in, d_out)
sa_v1.W_key = nn.Parameter(sa_v2.W_key.weight.T)  # (d_in, d_out)
sa_v1.W_value = nn.Parameter(sa_v2.W_value.weight.T)  # (d_in, d_out)

assert torch.equal(sa_v1(inputs), sa_v2(inputs))
print(sa_v1(inputs))  # (T, d_out): the book's seed-789 numbers, now from V1

answer = sa_v1
result = mhsa_helpers.exercises.check_v2_to_v1(answer, sa_v2, inputs)
assert result, result
result

# %% [markdown]
# **Exercise 2.** The same steps as for "journey", with `inputs[2]` ("starts") as the query.

# %%
torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
W_key = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
W_value = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)

query_3 = inputs[2] @ W_query  # (d_out,)
keys = inputs @ W_key  # (T, d_out)
attn_scores_3 = query_3 @ keys.T  # (T,)
d_k = keys.shape[-1]
answer = torch.softmax(attn_scores_3 / d_k**0.5, dim=-1)  # (T,)
print(answer)

result = mhsa_helpers.exercises.check_attn_weights_3(answer)
assert result, result
result
