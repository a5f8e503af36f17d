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
# # 03 · Causal attention — solutions (因果注意力 · 参考答案)
#
# Worked answers to the exercises of `03_causal_attention.ipynb`. Try them yourself first. Each
# cell computes the answer and asserts that the checker passes.

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1 (a local window).** Two things to hide: the future, strictly above the diagonal
# (`torch.triu(..., diagonal=1)`), and every token two or more steps back, from the second
# diagonal below the main one down (`torch.tril(..., diagonal=-2)`). `|` combines them. What
# stays visible is a band of width 2: the diagonal and the one just under it.

# %%
T = 5
ones = torch.ones(T, T, dtype=torch.bool)
answer = torch.triu(ones, diagonal=1) | torch.tril(ones, diagonal=-2)  # (T, T)
print(answer)
result = mhsa_helpers.exercises.check_local_mask(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2 (build it: causal weights, with a window).** Build the mask from the last
# dimension, so that any T and any leading (batch, head) dimensions work: a (T, T) mask
# broadcasts over them. The window adds the lower part of exercise 1's mask: keys `w` or more
# steps back, `torch.tril(..., diagonal=-w)`, joined to the future with `|`; a window wider than
# T hides nothing more. Use the out-of-place `masked_fill` (it returns a new tensor and leaves
# the caller's scores alone), fill with `-inf`, and take the softmax over the last dimension.
# The diagonal is never hidden, so no row is all `-inf`. No scaling here: the scores arrive
# already divided by $\sqrt{d_k}$.


# %%
def causal_weights(attn_scores, window=None):
    # (..., T, T) scaled attention scores -> (..., T, T) causal attention weights.
    # window=None: plain causal attention; window=w: each token sees itself and the w - 1 before it.
    T = attn_scores.shape[-1]
    ones = torch.ones(T, T, dtype=torch.bool, device=attn_scores.device)  # (T, T)
    hidden = torch.triu(ones, diagonal=1)  # (T, T), True above the diagonal: the future
    if window is not None:
        hidden = hidden | torch.tril(ones, diagonal=-window)  # and w or more steps back
    return torch.softmax(attn_scores.masked_fill(hidden, -torch.inf), dim=-1)  # (..., T, T)


scores_ex = torch.tensor(
    [
        [2.0, 1.0, 0.5, 3.0],
        [0.3, 1.2, 2.2, -1.0],
        [1.5, -0.5, 0.0, 2.5],
        [0.1, 0.4, 0.9, 1.6],
    ]
)  # (T, T) = (4, 4)
print(causal_weights(scores_ex))  # row 1 can only see itself: [1, 0, 0, 0]
print(causal_weights(torch.zeros(2, 3, 3)))  # (b, T, T): equal scores -> 1, 1/2, 1/3
print(causal_weights(torch.zeros(4, 4), window=2))  # itself and one before: 1, then 1/2, 1/2
assert torch.equal(causal_weights(scores_ex, window=4), causal_weights(scores_ex))  # w >= T

answer = causal_weights
result = mhsa_helpers.exercises.check_build_causal_weights(answer)
assert result, result
result
