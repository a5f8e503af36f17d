# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="883a951a1005"
# # 03 · 因果注意力 · 参考答案
#
# `03_causal_attention.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="0832dc9912a2"
# **练习 1（局部窗口）。** 要隐藏的有两部分。一是未来，即严格位于对角线上方的部分（`torch.triu(..., diagonal=1)`）。二是往前两步及更远的词元，即主对角线下方第二条对角线及其以下的部分（`torch.tril(..., diagonal=-2)`）。用 `|` 把两者合起来，剩下可见的就是一条宽度为 2 的带，由对角线和紧挨在它下面的那一条对角线组成。

# %%
T = 5
ones = torch.ones(T, T, dtype=torch.bool)
answer = torch.triu(ones, diagonal=1) | torch.tril(ones, diagonal=-2)  # (T, T)
print(answer)
result = mhsa_helpers.exercises.check_local_mask(answer)
assert result, result
result

# %% [markdown] en_hash="e8b96076efac"
# **练习 2（动手实现带窗口的因果权重）。** 根据最后一个维度构造掩码，这样任意的 T 和任意的前导维度（批次、头）都能处理，因为一个 (T, T) 的掩码会在这些维度上广播。窗口加上的是练习 1 掩码的下半部分，即往前 `w` 步及更远的键 `torch.tril(..., diagonal=-w)`，再用 `|` 和未来部分合起来。比 T 还宽的窗口不会多遮住什么。用非原地的 `masked_fill` 填入 `-inf`（它返回一个新张量，不改动调用者传入的分数），再沿最后一个维度做 softmax。对角线永远不会被遮住，所以不会有哪一行全是 `-inf`。这里不做缩放，因为传进来的分数已经除以了 $\sqrt{d_k}$。


# %%
def causal_weights(attn_scores, window=None):
    # (..., T, T) 的缩放后注意力分数 -> (..., T, T) 的因果注意力权重。
    # window=None：普通的因果注意力；window=w：每个词元只看得到它自己和它之前的 w - 1 个词元。
    T = attn_scores.shape[-1]
    ones = torch.ones(T, T, dtype=torch.bool, device=attn_scores.device)  # (T, T)
    hidden = torch.triu(ones, diagonal=1)  # (T, T)，对角线以上为 True，即未来
    if window is not None:
        hidden = hidden | torch.tril(ones, diagonal=-window)  # 再加上往前 w 步及更远的位置
    return torch.softmax(attn_scores.masked_fill(hidden, -torch.inf), dim=-1)  # (..., T, T)


scores_ex = torch.tensor(
    [
        [2.0, 1.0, 0.5, 3.0],
        [0.3, 1.2, 2.2, -1.0],
        [1.5, -0.5, 0.0, 2.5],
        [0.1, 0.4, 0.9, 1.6],
    ]
)  # (T, T) = (4, 4)
print(causal_weights(scores_ex))  # 第 1 行只能看到自己：[1, 0, 0, 0]
print(causal_weights(torch.zeros(2, 3, 3)))  # (b, T, T)：分数相等 → 1, 1/2, 1/3
print(causal_weights(torch.zeros(4, 4), window=2))  # 自己和前一个词元：1，之后 1/2, 1/2
assert torch.equal(causal_weights(scores_ex, window=4), causal_weights(scores_ex))  # w >= T

answer = causal_weights
result = mhsa_helpers.exercises.check_build_causal_weights(answer)
assert result, result
result
