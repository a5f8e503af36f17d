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
# **Exercise 1.** A causal query i sees keys 0 .. i. With left padding the first T - L_b
# positions of sequence b are pads, so while the query itself is a pad, every key it sees is a
# pad: its row is blind. Each pad gives one such row, and a real query sees at least itself:
# (5 - 3) + (5 - 1) + (5 - 4) = 7. (With right padding no row is blind: the pads come after the
# real tokens, which every query sees.) The mask of both parts confirms it.

# %%
lengths, T = torch.tensor([3, 1, 4]), 5
answer = int((T - lengths).sum())  # one blind row per pad: 2 + 4 + 1
pads = torch.arange(T) < (T - lengths)[:, None]  # (b, T_k), True = a pad key
future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T_q, T_k), True = a future key
hidden = future | pads[:, None, :]  # (b, T_q, T_k): the pads broadcast over the queries
assert int(hidden.all(dim=-1).sum()) == answer
print(answer)
result = mhsa_helpers.exercises.check_blind_rows(answer)
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
# **Exercise 3.** Section 7 multiplies by `torch.finfo(torch.float32).min`, about -3.4e38. In
# float16 that number, like -1e9, lies below the lowest finite value -65504 and becomes -inf (in
# bfloat16 it rounds to -inf too), and -inf turns a row with no real key into NaN. So the fill is
# the lowest number of the dtype asked for, `torch.finfo(dtype).min`, and the mask is built in
# that dtype. Padding hides keys, so the mask broadcasts over the heads and the queries:
# (b, 1, 1, T).


# %%
def hf_to_additive(attention_mask, dtype):
    lowest = torch.finfo(dtype).min  # the dtype's own lowest finite number: -65504 in float16
    pads = (attention_mask == 0)[:, None, None, :]  # (b, 1, 1, T): True at a padded key
    zeros = torch.zeros(pads.shape, dtype=dtype)  # (b, 1, 1, T): added to the real keys
    return zeros.masked_fill(pads, lowest)  # (b, 1, 1, T): 0 at real keys, lowest at pads


answer = hf_to_additive
result = mhsa_helpers.exercises.check_hf_to_additive_mask(answer)
assert result
result

# %% [markdown]
# The two constants that fit float32 become -inf in low precision; the dtype's own lowest number
# does not, and in every dtype SDPA computes what the same sequences compute with their pads cut
# off:

# %%
import torch.nn.functional as F

print(mh.say("-1e9 in float16:", "-1e9 在 float16 中："), torch.tensor(-1e9).half().item())
print(
    mh.say("float32's lowest in bfloat16:", "float32 的最小值在 bfloat16 中："),
    torch.tensor(torch.finfo(torch.float32).min).bfloat16().item(),
)
attention_mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0]])  # (b, T): left, right padding
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    q, k, v = (torch.randn(2, 3, 5, 4).to(dtype) for _ in range(3))  # (b, h, T, head_dim)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=hf_to_additive(attention_mask, dtype))
    for b in range(2):
        real = attention_mask[b] == 1  # (T,)
        alone = F.scaled_dot_product_attention(q[b], k[b][:, real], v[b][:, real])  # pads removed
        torch.testing.assert_close(out[b].float(), alone.float(), atol=1e-2, rtol=1e-2)
    print(
        f"{dtype!s:<15}",
        mh.say(
            "SDPA with the additive mask == the sequences with their pads removed",
            "带加性掩码的 SDPA == 去掉填充后的序列",
        ),
    )
