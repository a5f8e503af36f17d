# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="2583701b24c0"
# # 05 · 多头注意力：叠罗汉 · 参考答案
#
# `05_multihead_wrapper.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")
batch = mh.load_journey().batch  # (b, T, d_in) = (2, 6, 3)

# %% [markdown] en_hash="1942fad3b9c7"
# **第 6 节的预测。** 每个头调用 `W_query`、`W_key`、`W_value`（3 次 `nn.Linear` 调用）以及 `Q @ K^T`、`weights @ V`（2 次 `@`）：每个头 5 次，2 个头共 10 次。

# %%
prediction = 2 * (3 + 2)
result = mhsa_helpers.exercises.check_matmul_prediction(prediction)
assert result, result
result

# %% [markdown] en_hash="b11f03b38d38"
# **练习 1。** 在包装器里 `d_out` 是每个头的宽度，各个头拼接在一起：6 × 96。`d_in` = 512 只决定输入的宽度。在 `meta` 设备上构建这个模块，可以在不分配任何内存的情况下检查形状。

# %%
answer = 6 * 96
with torch.device("meta"):
    wrapper = mh.MultiHeadAttentionWrapper(512, 96, 256, 0.1, num_heads=6)
    assert wrapper(torch.empty(1, 4, 512)).shape[-1] == answer
print(answer)

result = mhsa_helpers.exercises.check_wrapper_width(answer)
assert result, result
result

# %% [markdown] en_hash="a5f8dcd9512b"
# **练习 2。** 头 k 占据拼接结果的第 `(k - 1) * d_out : k * d_out` 列，所以头 3 是 `4:6`。它等于单独运行 `wrapper.heads[2]` 的结果。

# %%
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=3)
out = wrapper(batch)  # (b, T, 3 * d_out) = (2, 6, 6)
answer = out[..., 4:6]  # (b, T, d_out)
assert torch.equal(answer, wrapper.heads[2](batch))
print(answer[0])

result = mhsa_helpers.exercises.check_head_output(answer)
assert result, result
result

# %% [markdown] en_hash="664d3bcae3b1"
# **练习 3。** 每个头：`W_query`、`W_key`、`W_value`（3 次 `nn.Linear` 调用），然后是 `Q @ K^T` 和 `weights @ V`（2 次 `@`）：每个头 5 次，12 个头共 60 次。批次大小不改变这个次数：一次 `nn.Linear` 或 `@` 调用就能同时处理全部 8 个序列、100 个词元（这正是批量矩阵乘法的含义）。计数器的结果与此一致。


# %%
answer = 12 * (3 + 2)
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(3, 2, 100, 0.0, num_heads=12)
x = torch.rand(8, 100, 3)  # (b, T, d_in)
with mh.CountMatmuls() as counter:
    wrapper(x)
print(counter.counts)
assert sum(counter.counts.values()) == answer

result = mhsa_helpers.exercises.check_matmul_count(answer)
assert result, result
result
