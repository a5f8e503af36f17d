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
# # 11 · Padded batches — solutions (填充掩码：参考答案)
#
# Worked answers to the exercises of `11_padded_batches.ipynb`. Try them first.

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1.** Two parts. The pads: with left padding, sequence b has T - L_b pads at
# positions 0 .. T - L_b - 1, a (b, T_k) mask of keys, which broadcasts over the queries as
# (b, 1, T_k). The future: one (T_q, T_k) matrix for every sequence. A key is hidden if either
# part hides it, so combine them with `|`. A pad query sees nothing: its row is all `True`, one
# of the rows the lesson leaves unmasked and zeroes.

# %%
lengths, T = torch.tensor([3, 1, 4]), 5
pads = torch.arange(T) < (T - lengths)[:, None]  # (b, T_k), True = a pad key
future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T_q, T_k), True = a future key
answer = future | pads[:, None, :]  # (b, T_q, T_k): the pads broadcast over the queries
print(answer[1].int())  # length 1: four pads, then one real token
result = mhsa_helpers.exercises.check_left_padding_mask(answer)
assert result
result

# %% [markdown]
# **Exercise 2.** Find the rows whose positions are all hidden, leave them out of the `-inf`
# fill (their softmax is then finite, so no NaN exists anywhere, not even in the backward pass),
# and set their weights to zero afterwards. This is what `mh.masked_attention` does.


# %%
def masked_softmax(scores, hidden):
    empty = hidden.all(dim=-1, keepdim=True)  # (..., T_q, 1): rows with nothing to see
    weights = torch.softmax(scores.masked_fill(hidden & ~empty, -torch.inf), dim=-1)
    return weights.masked_fill(empty, 0.0)  # (..., T_q, T_k)


answer = masked_softmax
result = mhsa_helpers.exercises.check_masked_softmax(answer)
assert result
result

# %% [markdown]
# The same function agrees with the package's core on a left-padded causal example (identity
# keys, so the core's scores are the queries divided by sqrt(T)):

# %%
T = 4
scores = torch.randn(2, T, T)  # (b, T_q, T_k)
pad = torch.tensor([[True, True, False, False], [False, False, False, False]])  # (b, T)
causal = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T)
identity = torch.eye(T).expand(2, T, T)
_, weights = mh.masked_attention(scores, identity, identity, causal, key_padding_mask=pad)
torch.testing.assert_close(masked_softmax(scores / T**0.5, causal | pad[:, None, :]), weights)
print(weights[0])

# %% [markdown]
# **Exercise 3.** SDPA's bool mask is True where a query *may attend*, a Hugging Face mask is 1
# at a real token: the same positions, so one comparison gives them. Padding hides keys, so the
# result must broadcast over the heads and the queries: size-1 axes there, (b, 1, 1, T).


# %%
def hf_to_sdpa(attention_mask):
    real = attention_mask == 1  # (b, T): True = a real token, which SDPA may attend
    return real[:, None, None, :]  # (b, 1, 1, T): broadcast over heads and queries


answer = hf_to_sdpa
result = mhsa_helpers.exercises.check_hf_to_sdpa_mask(answer)
assert result
result

# %% [markdown]
# SDPA with this mask computes what the same sequences compute with their pads cut off:

# %%
import torch.nn.functional as F

attention_mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0]])  # (b, T): left, right padding
q, k, v = (torch.randn(2, 3, 5, 4) for _ in range(3))  # (b, h, T, head_dim)
out = F.scaled_dot_product_attention(q, k, v, attn_mask=hf_to_sdpa(attention_mask))
for b in range(2):
    real = attention_mask[b] == 1  # (T,)
    alone = F.scaled_dot_product_attention(q[b], k[b][:, real], v[b][:, real])  # pads removed
    torch.testing.assert_close(out[b], alone)
print("SDPA with hf_to_sdpa's mask == the same sequences with their pads removed")
