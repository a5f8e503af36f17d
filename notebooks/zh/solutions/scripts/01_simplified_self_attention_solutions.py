# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="450600712423"
# # 01 · 简化的自注意力 · 参考答案
#
# 这里详细解答 `01_simplified_self_attention.ipynb` 中的各道练习。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
attn_weights = torch.softmax(inputs @ inputs.T, dim=-1)  # (T, T)

# %% [markdown] en_hash="975df60c4138"
# **练习 1（第七个词元）。** 把“forward”接在六个嵌入的下面，用它给全部七个词元打分，做 softmax，再把七个向量混合起来。如果只混合书中的那六个，“forward”就被排除在它自己所在的句子之外了。

# %%
new_embedding = torch.tensor(mhsa_helpers.exercises.NEW_TOKEN_EMBEDDING)  # (d_in,) = (3,)
seven = torch.cat([inputs, new_embedding.unsqueeze(0)])  # (T + 1, d_in) = (7, 3)
scores_new = seven @ new_embedding  # (7,)
weights_new = torch.softmax(scores_new, dim=0)  # (7,)
answer = weights_new @ seven  # (d_in,)
print(weights_new)
print(answer)

result = mhsa_helpers.exercises.check_context_vector_new_token(answer)
assert result, result
result

# %% [markdown] en_hash="0dc1236d507d"
# **练习 2（对每一行都稳定的 softmax）。** 每一行减去它**自己**的最大值。`keepdim=True` 让形状保持为 (rows, 1)，从而能沿各列广播。整个矩阵只用一个最大值是不够的。在 `[[1000., 1001.], [-1000., -1001.]]` 中，第二行会变成 `exp(-2001)`，它被舍入为 0，而 `0 / 0` 是 `nan`。


# %%
def softmax_rows(x):
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)  # (rows, cols)，每一行的最大值都变成 0
    return e / e.sum(dim=-1, keepdim=True)  # (rows, cols)


print(softmax_rows(torch.tensor([[1000.0, 1001.0], [-1000.0, -1001.0]])))
answer = softmax_rows
result = mhsa_helpers.exercises.check_softmax_rows(answer)
assert result, result
result

# %% [markdown] en_hash="d969e7084e9f"
# **练习 3（收到的注意力）。** 词元 `j` 收到的注意力就是第 `j` 列，沿查询方向求和，即 `dim=0`。列和并不等于 1（只有行和才是 1），但所有列和加起来是 6，因为每个查询各分出 1 份。“journey”和“starts”收到的最多，热力图中颜色最深的两列也说明了这一点。

# %%
answer = attn_weights.sum(dim=0)  # (T,)
print(answer)
print(answer.sum())
result = mhsa_helpers.exercises.check_attention_received(answer)
assert result, result
result
