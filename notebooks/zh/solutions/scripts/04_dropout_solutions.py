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
# **第 1 节的预测。** 保留下来的元素等于 2。每个元素以 1 - 0.5 的概率保留下来，把保留的元素除以 1 - p，矩阵的均值就保持为 1。

# %%
prediction = 2.0
result = mhsa_helpers.exercises.check_survivor_prediction(prediction)
assert result, result
result

# %% [markdown] en_hash="b4c3477493ff"
# **亲手实现 `CausalAttention`（第 7 节）。** 这就是书中的类。它有三个投影，掩码作为缓冲区保存，用时切成 (T, T)。注意力分数按 $\sqrt{d_k}$ 缩放，未来位置设为 `-inf`，softmax 之后再对注意力权重做 dropout。检查器对它做了契约测试（contract test）。


# %%
class MyCausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )  # (context_length, context_length)，1 = 未来

    def forward(self, x):
        num_tokens = x.shape[1]  # x: (b, T, d_in)
        queries = self.W_query(x)  # (b, T, d_out)
        keys = self.W_key(x)  # (b, T, d_out)
        values = self.W_value(x)  # (b, T, d_out)
        scores = queries @ keys.transpose(1, 2)  # (b, T, T)
        future = self.mask.bool()[:num_tokens, :num_tokens]  # (T, T)
        scores = scores.masked_fill(future, -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)  # (b, T, T)
        weights = self.dropout(weights)  # 只在训练时生效
        return weights @ values  # (b, T, d_out)


result = mhsa_helpers.exercises.check_causal_attention_class(MyCausalAttention)
assert result, result
result

# %% [markdown] en_hash="94f72ffefe72"
# 它和课程包里的类是同一个函数。种子相同，各层又按相同顺序创建，所以权重相同。无论关闭还是打开 dropout，输出都逐位相等。

# %%
torch.manual_seed(123)
ours = MyCausalAttention(3, 2, 6, dropout=0.5)
torch.manual_seed(123)
theirs = mh.CausalAttention(3, 2, 6, dropout=0.5)
print(mh.assert_same_module(ours, theirs, journey.batch))  # 评估模式和设了种子的训练模式

# %% [markdown] en_hash="ca9a745950ef"
# **练习 1。** 保留下来的比例是 1 - p = 0.8，所以保留的元素要除以 0.8，即乘以 1 / (1 - 0.2) = 1.25。下面在全 1 矩阵上用 `nn.Dropout(0.2)` 验证一下。

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
# **练习 2。** 对角线以上的 15 个元素在 dropout 之前就是 0，之后仍是 0。其余 21 个元素中，dropout 平均清零一半，即 10.5 个。所以预计 36 个元素中有 15 + 10.5 = 25.5 个是 0。

# %%
answer = (15 + 21 * 0.5) / 36
print(f"{answer:.4f}")

# 模拟的结果也一致：2000 次抽取中 0 所占比例的平均值。
weights = journey.reference["seed789_masked_renormalized"]  # (6, 6)
dropout = nn.Dropout(0.5)
torch.manual_seed(123)
simulated = torch.stack([(dropout(weights) == 0).float().mean() for _ in range(2000)]).mean()
print(mh.say("simulated:", "模拟值："), f"{simulated:.3f}")
assert abs(simulated.item() - answer) < 0.01

result = mhsa_helpers.exercises.check_zero_fraction(answer)
assert result, result
result

# %% [markdown] en_hash="7fa01fad8b1f"
# **练习 3。** 先算 dropout 之前的上下文向量 `attn_weights @ values` (6, 2)，其中的值来自同一个种子 789 的 `sa_v2`。`ctx_dropped` 中每个保留下来的元素，都是原来的元素乘以 1 / (1 - p)。这里的倍数是 1.4286，所以 1 - p = 0.7，p = 0.3。这一次 12 个元素中只有 3 个是零（25%）。p 是每个元素被丢弃的概率，不是个数，所以零的个数只能粗略估计它。

# %%
inputs = journey.inputs  # (T, d_in)
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in=3, d_out=2)
with torch.no_grad():
    scores = sa_v2.W_query(inputs) @ sa_v2.W_key(inputs).T  # (T, T)
    values = sa_v2.W_value(inputs)  # (T, d_out)
future = torch.triu(torch.ones(6, 6), diagonal=1).bool()  # (T, T)
attn_weights = torch.softmax(scores.masked_fill(future, -torch.inf) / 2**0.5, dim=-1)  # (T, T)
context = attn_weights @ values  # (T, d_out)：dropout 之前

ctx_dropped = mhsa_helpers.exercises.lesson04.exercise_dropped_context()  # (T, d_out)
kept = ctx_dropped != 0  # (T, d_out) 布尔张量
factors = ctx_dropped[kept] / context[kept]  # 每个保留下来的元素：1 / (1 - p)
print(factors)
print(mh.say("zeros:", "零的个数："), int((~kept).sum()), "/", kept.numel())
answer = 1 - 1 / factors[0].item()  # p
print(f"p = {answer:.4f}")

result = mhsa_helpers.exercises.check_dropout_rate(answer)
assert result, result
result
