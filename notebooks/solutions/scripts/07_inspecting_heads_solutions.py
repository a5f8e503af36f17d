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
# # 07 · Inspecting attention heads — solutions (检查注意力头 · 参考答案)
#
# Worked answers to the exercises of `07_inspecting_heads.ipynb`. Try them yourself first. Each
# cell computes the answer and asserts that the checker passes.

# %%
import math

import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1.** $n$ equal weights $1/n$ (the zeros add nothing, 0 log 0 counts as 0) have
# entropy $H = -n \cdot \frac{1}{n} \log \frac{1}{n} = \log n$. So $n = e^{1.3863} = 4$: the
# row is spread evenly over 4 of the 6 keys. (Even over all 6 it would be $\log 6 = 1.79$, the
# largest entropy the row can have.)

# %%
n = round(math.exp(1.3863))  # entropy log n -> n = exp(entropy)
row = torch.tensor([1 / n] * n + [0.0] * (6 - n))  # (6,): n equal weights, then zeros
assert abs(-torch.special.xlogy(row, row).sum().item() - 1.3863) < 1e-4
answer = n
print(answer)
result = mhsa_helpers.exercises.check_keys_from_entropy(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** The same block as in the lesson (seed 7, 3 heads, the longer sentence), then the
# entropy of every row; their mean per head is `mh.head_entropy`. `torch.special.xlogy(w, w)` is $w \log w$ with 0 where
# $w = 0$; plain `w * torch.log(w)` would give `0 * -inf = nan` above the diagonal.

# %%
from mhsa_helpers.ui.sentences import LONGER_SENTENCE, embed_words

long_words = LONGER_SENTENCE.split()
long_inputs = 3.0 * embed_words(long_words)  # (T, d_in) = (11, 3)
torch.manual_seed(7)
mha_ex = mh.MultiHeadAttention(d_in=3, d_out=24, context_length=11, dropout=0.0, num_heads=3)
with torch.no_grad():
    _, weights_ex = mha_ex(long_inputs.unsqueeze(0), return_weights=True)  # (1, 3, 11, 11)
weights_ex = weights_ex[0]  # (num_heads, T, T) = (3, 11, 11)

answer = -torch.special.xlogy(weights_ex, weights_ex).sum(dim=-1)  # (num_heads, T)
print(answer)
torch.testing.assert_close(answer.mean(dim=-1), mh.head_entropy(weights_ex))  # the per-head mean
result = mhsa_helpers.exercises.check_head_entropy(answer, weights_ex)
assert result, result
result

# %% [markdown]
# **Exercise 3.** The sharpest head has the lowest entropy: `argmin`. In the plots heads are
# numbered from 1, so index `i` is "Head i+1"; its cells are the darkest.

# %%
import matplotlib.pyplot as plt

answer = int(mh.head_entropy(weights_ex).argmin())
print(mh.say(f"index {answer} -> Head {answer + 1}", f"索引 {answer} -> 头 {answer + 1}"))
result = mhsa_helpers.exercises.check_sharpest_head(answer, weights_ex)
assert result, result
fig = mh.plot_attention_grid(
    weights_ex,
    long_words,
    title=mh.tr("Exercise block, 3 heads (seed 7)", "练习中的块，3 个头（种子 7）"),
)
plt.show()
result
