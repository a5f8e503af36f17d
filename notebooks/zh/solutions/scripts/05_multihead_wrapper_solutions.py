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
# # 05 · 多头注意力：多个头并排拼接 · 参考答案
#
# `05_multihead_wrapper.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")
batch = mh.load_journey().batch  # (b, T, d_in) = (2, 6, 3)

# %% [markdown] en_hash="1942fad3b9c7"
# **第 6 节的预测。** 每个头调用 `W_query`、`W_key`、`W_value`（3 次 `nn.Linear` 调用）以及 `Q @ K^T`、`weights @ V`（2 次 `@`），共 5 次，2 个头就是 10 次。

# %%
prediction = 2 * (3 + 2)
result = mhsa_helpers.exercises.check_matmul_prediction(prediction)
assert result, result
result

# %% [markdown] en_hash="b1d32ad7656d"
# **第 1 节的动手实现。** 各个头放在 `nn.ModuleList` 里，这样它们的参数才会被注册。如果放在普通列表里，`parameters()` 和 `.to()` 都看不到它们。`forward` 在同一个 x 上运行每个头，再沿最后一维拼接。检查器对它做了契约测试（contract test）。


# %%
class MyMultiHeadAttentionWrapper(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        self.heads = nn.ModuleList(
            [
                mh.CausalAttention(d_in, d_out, context_length, dropout, qkv_bias)
                for _ in range(num_heads)
            ]
        )

    def forward(self, x):  # x: (b, T, d_in)
        outputs = [head(x) for head in self.heads]  # num_heads 个 (b, T, d_out) 张量
        return torch.cat(outputs, dim=-1)  # (b, T, num_heads * d_out)


result = mhsa_helpers.exercises.check_wrapper_class(MyMultiHeadAttentionWrapper)
assert result, result
result

# %% [markdown] en_hash="1bcd39678143"
# 它和课程包里的包装器是同一个函数。种子相同，参数相同且顺序相同，所以无论关闭还是打开 dropout，输出都逐位相等。

# %%
torch.manual_seed(123)
ours = MyMultiHeadAttentionWrapper(3, 2, 6, 0.5, num_heads=3)
torch.manual_seed(123)
theirs = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.5, num_heads=3)
print(mh.assert_same_module(ours, theirs, mh.load_journey().batch))  # 评估模式和设了种子的训练模式

# %% [markdown] en_hash="4e2c1f62f2cc"
# **练习 1。** 每个头是一个 `CausalAttention`，含有三个 `nn.Linear(768, 64, bias=False)` 层，即 `W_query`、`W_key` 和 `W_value`，共 3 × 768 × 64 = 147,456 个数。包装器有 12 个这样的头，此外什么也没有（没有输出投影），所以共 12 × 147,456 = 1,769,472 个参数，正好是三个 768 × 768 矩阵的大小。各个头分的是同一个宽度，所以头数不改变参数量。

# %%
per_head = 3 * 768 * 64  # W_query、W_key、W_value：各为 (768, 64)，没有偏置
answer = 12 * per_head
with torch.device("meta"):
    wrapper = mh.MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
assert sum(p.numel() for p in wrapper.parameters()) == answer
print(f"{answer:,}")

result = mhsa_helpers.exercises.check_wrapper_parameters(answer)
assert result, result
result

# %% [markdown] en_hash="76cd96ce5c05"
# **练习 2。** 包装器依次创建各个头。所以在 `torch.manual_seed(123)` 之后，它的三个头拿走前三组权重，紧接着建的 `CausalAttention` 拿到第四组，也就是同一种子之后 4 个头的包装器中头 4 的权重。它的输出就是那个包装器输出的第 `6:8` 列。

# %%
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=3)
extra = mh.CausalAttention(3, 2, 6, 0.0)  # 不再设种子：随机数生成器接着往下抽
answer = extra(batch)  # (b, T, d_out) = (2, 6, 2)

torch.manual_seed(123)
wrapper_4 = mh.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=4)
assert torch.equal(answer, wrapper_4(batch)[..., 6:8])  # 与 4 个头的包装器的头 4 相同
print(answer[0])

result = mhsa_helpers.exercises.check_head_output(answer)
assert result, result
result

# %% [markdown] en_hash="c3a6f2ac8db2"
# **练习 3。** 一个 (b, T, n) @ (n, m) 乘积要做 b · T · n · m 次乘加。对每个头来说，每次投影是 (8, 100, 768) @ (768, 64)。Q @ K^T 是 (8, 100, 64) @ (8, 64, 100)，weights @ V 是 (8, 100, 100) @ (8, 100, 64)，各要 8 · 100 · 100 · 64 次乘加。和第 6 节数的调用次数不同，工作量随批次大小和序列长度增长。`FlopCounterMode` 把一次乘加算作 2 个 FLOP，它的结果与我们算的一致。

# %%
b, T, d_in, head_dim, num_heads = 8, 100, 768, 64, 12
projections = 3 * num_heads * b * T * d_in * head_dim  # W_query, W_key, W_value
attention = 2 * num_heads * b * T * T * head_dim  # Q @ K^T 和 weights @ V
answer = projections + attention
print(f"{projections:,} + {attention:,} = {answer:,}")

torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(d_in, head_dim, T, 0.0, num_heads=num_heads)
with FlopCounterMode(display=False) as flops, torch.no_grad():
    wrapper(torch.randn(b, T, d_in))  # (b, T, num_heads * head_dim)
print(f"FlopCounterMode: {flops.get_total_flops():,} FLOPs = 2 x {answer:,}")
assert flops.get_total_flops() == 2 * answer

result = mhsa_helpers.exercises.check_matmul_count(answer)
assert result, result
result
