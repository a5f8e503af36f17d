# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="f1f104cb218f"
# # 02 · 可训练的查询、键、值 · 参考答案
#
# 这里详细解答 `02_trainable_qkv.ipynb` 中的各道练习。请先自己动手做一遍。每个单元格都会算出答案，并用断言确认检查器判定通过。

# %%
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
d_in, d_out = 3, 2

# %% [markdown] en_hash="a20e4069ac83"
# **练习 1（动手实现 `SelfAttentionV2`）。** 按书中的顺序（查询、键、值）创建三个 `nn.Linear` 层。前向传播就是公式 $\mathrm{softmax}(QK^\top / \sqrt{d_k})\,V$，其中 $d_k$ = `keys.shape[-1]`。


# %%
class MySelfAttentionV2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)

    def forward(self, x):  # x: (T, d_in)
        keys = self.W_key(x)  # (T, d_out)
        queries = self.W_query(x)  # (T, d_out)
        values = self.W_value(x)  # (T, d_out)
        attn_scores = queries @ keys.T  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
        return attn_weights @ values  # (T, d_out)


torch.manual_seed(789)
mine = MySelfAttentionV2(d_in, d_out)
print(mine(inputs))  # (T, d_out)，书中种子 789 的数字
torch.testing.assert_close(
    mine(inputs).detach(), journey.reference["self_attention_v2_seed789"], atol=1e-4, rtol=0
)

answer = MySelfAttentionV2
result = mhsa_helpers.exercises.check_build_self_attention(answer)
assert result, result
result

# %% [markdown] en_hash="5931cfee36db"
# **练习 2（权重迁移）。** `nn.Linear` 把 `weight` 存成 `(d_out, d_in)`，计算的是 `x @ weight.T`。`SelfAttentionV1` 计算的是 `x @ W`，其中 `W` 的形状是 `(d_in, d_out)`。所以三个投影都满足 `weight = W.T`。

# %%
torch.manual_seed(123)
sa_v1 = mh.SelfAttentionV1(d_in, d_out)  # （即课上的 sa_v1）

sa_v2 = mh.SelfAttentionV2(d_in, d_out)
sa_v2.W_query.weight = nn.Parameter(sa_v1.W_query.T)  # (d_out, d_in)
sa_v2.W_key.weight = nn.Parameter(sa_v1.W_key.T)  # (d_out, d_in)
sa_v2.W_value.weight = nn.Parameter(sa_v1.W_value.T)  # (d_out, d_in)

assert torch.equal(sa_v2(inputs), sa_v1(inputs))
print(sa_v2(inputs))  # (T, d_out)，书中种子 123 的数字，现在由 V2 算出

answer = sa_v2
result = mhsa_helpers.exercises.check_v1_to_v2(answer, sa_v1, inputs)
assert result, result
result

# %% [markdown] en_hash="7e42350c1052"
# **练习 3。** 步骤与“journey”的相同，只是改用 `inputs[2]`（“starts”）作查询，并且只用前三个键和前三个值。softmax 只在这三个分数上做，所以权重之和是 1。上下文向量就是用这三个权重对三个值求的加权和。（如果先算出六个权重再截取前三个，它们的和会小于 1。看不到的词元根本不能进入 softmax。第 03 课用掩码做到这一点。）

# %%
torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
W_key = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
W_value = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)

query_3 = inputs[2] @ W_query  # (d_out,)
keys = inputs[:3] @ W_key  # (3, d_out): "Your", "journey", "starts"
values = inputs[:3] @ W_value  # (3, d_out)
attn_scores_3 = query_3 @ keys.T  # (3,)
d_k = keys.shape[-1]
attn_weights_3 = torch.softmax(attn_scores_3 / d_k**0.5, dim=-1)  # (3,)
print(attn_weights_3, attn_weights_3.sum())
answer = attn_weights_3 @ values  # (d_out,)
print(answer)

result = mhsa_helpers.exercises.check_context_vector_3(answer)
assert result, result
result
