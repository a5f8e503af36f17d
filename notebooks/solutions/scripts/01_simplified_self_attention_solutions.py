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
# # 01 · Simplified self-attention — solutions (简化的自注意力 · 参考答案)
#
# Worked answers to the exercises of `01_simplified_self_attention.ipynb`. Try them yourself
# first. Each cell computes the answer and asserts that the checker passes.

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
attn_weights = torch.softmax(inputs @ inputs.T, dim=-1)  # (T, T)

# %% [markdown]
# **Exercise 1.** The context vector of "one" ($x^{(5)}$ = `inputs[4]`): scores against every
# token, softmax, weighted sum of the inputs. It is row 4 of the lesson's `all_context_vecs`.

# %%
scores_5 = inputs @ inputs[4]  # (T,)
weights_5 = torch.softmax(scores_5, dim=0)  # (T,)
answer = weights_5 @ inputs  # (d_in,)
print(answer)
torch.testing.assert_close(
    answer, journey.reference["simplified_all_context"][4], atol=1e-4, rtol=0
)

result = mhsa_helpers.exercises.check_context_vector_5(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** Subtract the maximum before `exp`: the largest exponent becomes $e^0 = 1$ (no
# overflow) and the sum is at least 1 (no `0 / 0`). The result is unchanged because $e^{-\max}$
# cancels between numerator and denominator.


# %%
def softmax_stable(x):
    e = torch.exp(x - x.max())  # every exponent <= 0
    return e / e.sum()


print(softmax_stable(torch.tensor([1000.0, 1001.0])))
answer = softmax_stable
result = mhsa_helpers.exercises.check_stable_softmax(answer)
assert result, result
result

# %% [markdown]
# **Exercise 3.** Sum over the last dimension (`dim=-1`, along each row): every row of softmax
# weights sums to 1. Summing with `dim=0` would add up columns, which mean nothing here.

# %%
answer = attn_weights.sum(dim=-1)  # (T,)
print(answer)
result = mhsa_helpers.exercises.check_row_sums(answer)
assert result, result
result
