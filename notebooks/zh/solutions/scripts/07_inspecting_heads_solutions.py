# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="2e2121c733e2"
# # 07 · 观察注意力头 · 参考答案
#
# `07_inspecting_heads.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import math

import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="d0de6ceddb2a"
# **练习 1。** $n$ 个相等的权重 $1/n$（权重为 0 的项不贡献熵，0 log 0 记为 0）的熵是 $H = -n \cdot \frac{1}{n} \log \frac{1}{n} = \log n$。所以 $n = e^{1.3863} = 4$，这一行均匀地分在 6 个键中的 4 个上。（均匀分在全部 6 个键上时熵是 $\log 6 = 1.79$，这是这一行可能的最大熵。）

# %%
n = round(math.exp(1.3863))  # 熵是 log n，所以 n = exp(熵)
row = torch.tensor([1 / n] * n + [0.0] * (6 - n))  # (6,)：n 个相等的权重，其余为 0
assert abs(-torch.special.xlogy(row, row).sum().item() - 1.3863) < 1e-4
answer = n
print(answer)
result = mhsa_helpers.exercises.check_keys_from_entropy(answer)
assert result, result
result

# %% [markdown] en_hash="6f7aa71c4914"
# **练习 2。** 先构建与课中相同的模块（随机种子 7、3 个头、那个更长的句子），再算出每一行的熵。它们按头取的平均就是 `mh.head_entropy`。`torch.special.xlogy(w, w)` 就是 $w \log w$，在 $w = 0$ 处取 0。如果直接写 `w * torch.log(w)`，对角线以上会得到 `0 * -inf = nan`。

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
torch.testing.assert_close(answer.mean(dim=-1), mh.head_entropy(weights_ex))  # 按头取的平均
result = mhsa_helpers.exercises.check_head_entropy(answer, weights_ex)
assert result, result
result

# %% [markdown] en_hash="00de3932e7d2"
# **练习 3。** 最集中的头熵最低，所以用 `argmin`。图中的头从 1 开始编号，索引 `i` 就是图中的“头 i+1”，它的格子颜色最深。

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
