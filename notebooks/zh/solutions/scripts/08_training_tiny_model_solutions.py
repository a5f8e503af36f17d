# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="b11cdff5fca1"
# # 08 · 训练一个小模型 · 参考答案
#
# `08_training_tiny_model.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import math

import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="54bc73826bc2"
# **练习 1。** 损失是 $-\log p(\text{正确词元})$，所以 $p = e^{-\text{损失}}$。均匀猜测时 $p = e^{-\log 64} = 1/64$，第 2 轮后 $p = e^{-0.63} \approx 0.53$。两者之比是 $64 \cdot e^{-0.63} = e^{\log 64 - 0.63} \approx 34.1$。损失之差就是概率之比。（损失之比 4.16 / 0.63 = 6.6 比较的是两个对数，在这里没有意义。$1 - 0.63$ 也不是概率，$64 \cdot 0.37 = 23.7$ 是错的。）

# %%
uniform_p, trained_p = 1 / 64, math.exp(-0.63)
answer = trained_p / uniform_p
print(f"{answer:.2f}")
result = mhsa_helpers.exercises.check_probability_gain(answer)
assert result, result
result

# %% [markdown] en_hash="c96982bceadc"
# **练习 2。** 先把所有位置都设为 -100（表示没有目标），再把输入向右复制 $k$ 个位置，让位置 $t$ 得到 `ids[:, t - k]`。

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

# %% [markdown] en_hash="c09f7157754a"
# **练习 3。** 放在“往前 2 个词元”上的权重，就是主对角线下方的第 2 条对角线。`torch.diagonal(..., offset=-2)` 为每个头给出 T - 2 个元素 `[t, t - 2]`，它们的平均值就是答案。下面先取出本课训练好的模型，以及它在一个序列上的权重。

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
