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
# **Exercise 1.** The future is strictly above the diagonal: `torch.triu` with `diagonal=1`
# (with `diagonal=0` a token could not even see itself). `.bool()` gives the `True`/`False`
# mask that `masked_fill` takes.

# %%
T = 4
answer = torch.triu(torch.ones(T, T), diagonal=1).bool()  # (T, T)
print(answer)
result = mhsa_helpers.exercises.check_causal_mask_4(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** Fill the future with `-inf`, then softmax over each row. Row 1 can only see
# itself, so it must be [1, 0, 0, 0].

# %%
scores_ex = torch.tensor(
    [
        [2.0, 1.0, 0.5, 3.0],
        [0.3, 1.2, 2.2, -1.0],
        [1.5, -0.5, 0.0, 2.5],
        [0.1, 0.4, 0.9, 1.6],
    ]
)  # (T, T) = (4, 4)

future = torch.triu(torch.ones(4, 4, dtype=torch.bool), diagonal=1)  # (T, T)
answer = torch.softmax(scores_ex.masked_fill(future, -torch.inf), dim=-1)  # (T, T)
print(answer)
torch.testing.assert_close(answer[0], torch.tensor([1.0, 0.0, 0.0, 0.0]))

result = mhsa_helpers.exercises.check_one_step_mask(answer, scores_ex)
assert result, result
result
