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
# # 08 · Training a tiny attention model — solutions (训练一个小注意力模型 · 参考答案)
#
# Worked answers to the exercises of `08_training_tiny_model.ipynb`. Try them yourself first.
# Each cell computes the answer and asserts that the checker passes.

# %%
import math

import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1.** A loss is $-\log p(\text{right token})$, so $p = e^{-\text{loss}}$. The uniform
# guess: $p = e^{-\log 64} = 1/64$. After epoch 2: $p = e^{-0.63} \approx 0.53$. The ratio is
# $64 \cdot e^{-0.63} = e^{\log 64 - 0.63} \approx 34.1$: a difference of losses is a ratio of
# probabilities. (The ratio of the losses, 4.16 / 0.63 = 6.6, compares two logs and means
# nothing here; and $1 - 0.63$ is not a probability: $64 \cdot 0.37 = 23.7$ is wrong.)

# %%
uniform_p, trained_p = 1 / 64, math.exp(-0.63)
answer = trained_p / uniform_p
print(f"{answer:.2f}")
result = mhsa_helpers.exercises.check_probability_gain(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** Start from -100 everywhere (no target), then copy the inputs $k$ places to the
# right: position $t$ gets `ids[:, t - k]`.

# %%
ids_ex = torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(3))  # (b, T)
k = 3
answer = torch.full_like(ids_ex, -100)  # (b, T)
answer[:, k:] = ids_ex[:, :-k]
print(ids_ex)
print(answer)
result = mhsa_helpers.exercises.check_shift_targets(answer, ids_ex, k)
assert result, result
result

# %% [markdown]
# **Exercise 3.** The weights on "the token 2 back" are the diagonal 2 below the main one:
# `torch.diagonal(..., offset=-2)` gives, per head, the T - 2 entries `[t, t - 2]`; their mean is
# the answer. First, the lesson's trained model and its weights on one sequence.

# %%
from mhsa_helpers.training import make_shift_batch

shift = mh.train_shift_task(k=2, num_heads=4, seed=0, progress=False)
shift_ids, _ = make_shift_batch(2, 12, 64, 2, torch.Generator().manual_seed(0))
with torch.no_grad():
    _, shift_weights = shift.model(shift_ids[:1], return_weights=True)  # (1, 4, 12, 12)
weights_ex = shift_weights[0]  # (num_heads, T, T)

answer = torch.diagonal(weights_ex, offset=-2, dim1=-2, dim2=-1).mean(dim=-1)  # (num_heads,)
print(answer)
result = mhsa_helpers.exercises.check_offset_attention(answer, weights_ex, 2)
assert result, result
result
