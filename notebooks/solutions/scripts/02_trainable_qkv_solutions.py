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
# **Exercise 1 (build it: `SelfAttentionV2`).** Three `nn.Linear` layers created in the book's
# order (query, key, value); the forward pass is the recipe
# $\mathrm{softmax}(QK^\top / \sqrt{d_k})\,V$ with $d_k$ = `keys.shape[-1]`.


# %%
class MySelfAttentionV2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):  # x: (T, d_in)
        keys = self.W_key(x)  # (T, d_out)
        queries = self.W_query(x)  # (T, d_out)
        values = self.W_value(x)  # (T, d_out)
        attn_scores = queries @ keys.T  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
        return attn_weights @ values  # (T, d_out)


torch.manual_seed(789)
mine = MySelfAttentionV2(d_in, d_out)
print(mine(inputs))  # (T, d_out): the book's seed-789 numbers
torch.testing.assert_close(
    mine(inputs).detach(), journey.reference["self_attention_v2_seed789"], atol=1e-4, rtol=0
)

answer = MySelfAttentionV2
result = mhsa_helpers.exercises.check_build_self_attention(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2 (weight transfer).** `nn.Linear` keeps `weight` as `(d_out, d_in)` and computes
# `x @ weight.T`; `SelfAttentionV1` computes `x @ W` with `W` of shape `(d_in, d_out)`. So
# `weight = W.T`, for each of the three projections.

# %%
torch.manual_seed(123)
sa_v1 = mh.SelfAttentionV1(d_in, d_out)  # (the lesson's sa_v1)

sa_v2 = mh.SelfAttentionV2(d_in, d_out)
sa_v2.W_query.weight = nn.Parameter(sa_v1.W_query.T)  # (d_out, d_in)
sa_v2.W_key.weight = nn.Parameter(sa_v1.W_key.T)  # (d_out, d_in)
sa_v2.W_value.weight = nn.Parameter(sa_v1.W_value.T)  # (d_out, d_in)

assert torch.equal(sa_v2(inputs), sa_v1(inputs))
print(sa_v2(inputs))  # (T, d_out): the book's seed-123 numbers, now from V2

answer = sa_v2
result = mhsa_helpers.exercises.check_v1_to_v2(answer, sa_v1, inputs)
assert result, result
result

# %% [markdown]
# **Exercise 3.** The same steps as for "journey", with `inputs[2]` ("starts") as the query and
# only the first three keys and values: the softmax runs over those three scores, so the weights
# sum to 1, and the context vector is their weighted sum of the three values. (Cutting the six
# weights of section 4's recipe to three would leave them summing to less than 1: the hidden
# tokens must not enter the softmax at all. Lesson 03 does this with a mask.)

# %%
torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
W_key = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
W_value = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)

query_3 = inputs[2] @ W_query  # (d_out,)
keys = inputs[:3] @ W_key  # (3, d_out): "Your", "journey", "starts"
values = inputs[:3] @ W_value  # (3, d_out)
attn_scores_3 = query_3 @ keys.T  # (3,)
d_k = keys.shape[-1]
attn_weights_3 = torch.softmax(attn_scores_3 / d_k**0.5, dim=-1)  # (3,)
print(attn_weights_3, attn_weights_3.sum())
answer = attn_weights_3 @ values  # (d_out,)
print(answer)

result = mhsa_helpers.exercises.check_context_vector_3(answer)
assert result, result
result
