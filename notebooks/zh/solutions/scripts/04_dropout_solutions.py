# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="4b58460379b8"
# # 04 · dropout（随机失活）· 参考答案
#
# `04_dropout.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。


# %%
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")
journey = mh.load_journey()

# %% [markdown] en_hash="44229afa15c3"
# **第 1 节的预测。** 保留下来的元素等于 2：每个元素以 1 - 0.5 的概率保留下来，把保留下来的元素除以 1 - p，矩阵的均值就保持为 1。

# %%
prediction = 2.0
result = mhsa_helpers.exercises.check_survivor_prediction(prediction)
assert result, result
result

# %% [markdown] en_hash="ca9a745950ef"
# **练习 1。** 保留下来的比例是 1 - p = 0.8，所以保留的元素要除以 0.8：因子是 1 / (1 - 0.2) = 1.25。我们在全 1 矩阵上用 `nn.Dropout(0.2)` 验证一下。

# %%
p = 0.2
answer = 1 / (1 - p)
print(answer)

torch.manual_seed(123)
survivors = nn.Dropout(p)(torch.ones(6, 6))  # (6, 6)
assert torch.allclose(survivors[survivors != 0], torch.tensor(answer))

result = mhsa_helpers.exercises.check_dropout_scale(answer)
assert result, result
result

# %% [markdown] en_hash="ea7f7dbc9eee"
# **练习 2。** 对角线以上的 15 个元素在 dropout 之前就是 0，之后仍是 0。其余 21 个元素中，dropout 平均清零一半：10.5 个。预计 0 的个数：36 个中有 15 + 10.5 = 25.5 个。

# %%
answer = (15 + 21 * 0.5) / 36
print(f"{answer:.4f}")

# A simulation agrees: the average fraction of zeros over 2000 draws.
weights = journey.reference["seed789_masked_renormalized"]  # (6, 6)
dropout = nn.Dropout(0.5)
torch.manual_seed(123)
simulated = torch.stack([(dropout(weights) == 0).float().mean() for _ in range(2000)]).mean()
print(f"simulated: {simulated:.3f}")
assert abs(simulated.item() - answer) < 0.01

result = mhsa_helpers.exercises.check_zero_fraction(answer)
assert result, result
result

# %% [markdown] en_hash="286090740a81"
# **练习 3。** 保留 `keep_ex` 为 True 的元素，其余清零，再把保留下来的元素除以保留的比例 1 - 0.25 = 0.75（即乘以 4/3）。不要照搬书中的 ×2：那是 p = 0.5 时的因子。

# %%
inputs = journey.inputs  # (T, d_in)
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in=3, d_out=2)
with torch.no_grad():
    scores = sa_v2.W_query(inputs) @ sa_v2.W_key(inputs).T  # (T, T)
future = torch.triu(torch.ones(6, 6), diagonal=1).bool()  # (T, T)
attn_weights = torch.softmax(scores.masked_fill(future, -torch.inf) / 2**0.5, dim=-1)  # (T, T)

keep_ex = torch.rand(6, 6, generator=torch.Generator().manual_seed(2025)) >= 0.25  # (T, T)
answer = attn_weights * keep_ex / (1 - 0.25)  # (T, T)
print(answer)

# The rows that kept everything they had now sum to 4/3; on average every row sums to 1.
print("row sums:", answer.sum(dim=-1))

result = mhsa_helpers.exercises.check_manual_dropout(answer)
assert result, result
result
