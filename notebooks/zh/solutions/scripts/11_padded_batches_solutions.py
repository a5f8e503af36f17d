# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="e61d0358c497"
# # 11 · 真实句子成批处理：填充掩码 · 参考答案
#
# `11_padded_batches.ipynb` 中各道练习的详解。请先自己动手做一遍。

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="780a796a9198"
# **练习 1。** 因果的查询 i 看得到键 0 .. i。左填充（left padding）时，序列 b 的前 T - L_b 个位置是填充，所以只要查询本身是填充，它看得到的键就全是填充，这一行就什么也看不到。每个填充对应这样一行，而真实词元的查询至少看得到它自己。所以答案是 (5 - 3) + (5 - 1) + (5 - 4) = 7。（右填充时没有这样的行，因为填充在真实词元之后，而每个查询都看得到真实词元。）把两部分合成掩码，可以验证这一点。

# %%
lengths, T = torch.tensor([3, 1, 4]), 5
answer = int((T - lengths).sum())  # 每个填充一行：2 + 4 + 1
pads = torch.arange(T) < (T - lengths)[:, None]  # (b, T_k)，True 表示填充的键
future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T_q, T_k)，True 表示未来的键
hidden = future | pads[:, None, :]  # (b, T_q, T_k)：填充沿查询轴广播
assert int(hidden.all(dim=-1).sum()) == answer
print(answer)
result = mhsa_helpers.exercises.check_blind_rows(answer)
assert result
result

# %% [markdown] en_hash="55baf31026ba"
# **练习 2。** 先找出所有位置都被遮住的行，写入 `-inf` 时跳过这些行，事后再把它们的权重置零。这样这些行的 softmax 是有限值，无论前向计算还是反向传播，都不会出现 NaN。`mh.masked_attention` 就是这样做的。


# %%
def masked_softmax(scores, hidden):
    empty = hidden.all(dim=-1, keepdim=True)  # (..., T_q, 1)：什么都看不到的行
    weights = torch.softmax(scores.masked_fill(hidden & ~empty, -torch.inf), dim=-1)
    return weights.masked_fill(empty, 0.0)  # (..., T_q, T_k)


answer = masked_softmax
result = mhsa_helpers.exercises.check_masked_softmax(answer)
assert result
result

# %% [markdown] en_hash="2fe6c8c1dd75"
# 在一个左填充的因果示例上，这个函数与包的核心实现结果一致。这里的键取单位矩阵，所以核心实现算出的分数就是查询除以 sqrt(T)。

# %%
T = 4
scores = torch.randn(2, T, T)  # (b, T_q, T_k)
pad = torch.tensor([[True, True, False, False], [False, False, False, False]])  # (b, T)
causal = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T)
identity = torch.eye(T).expand(2, T, T)
_, weights = mh.masked_attention(scores, identity, identity, causal, key_padding_mask=pad)
torch.testing.assert_close(masked_softmax(scores / T**0.5, causal | pad[:, None, :]), weights)
print(weights[0])

# %% [markdown] en_hash="ac166637d9dd"
# **练习 3。** 第 7 节乘的是 `torch.finfo(torch.float32).min`，约为 -3.4e38。这个数和 -1e9 一样，比 float16 最小的有限数 -65504 还小，在 float16 中会变成 -inf（在 bfloat16 中也会舍入成 -inf）。一行没有真实键时，-inf 会让这一行变成 NaN。所以填充值要取所要求的 dtype 自己最小的数，即 `torch.finfo(dtype).min`，掩码也要用这个 dtype 构造。填充遮住的是键，所以掩码沿头和查询广播，形状为 (b, 1, 1, T)。


# %%
def hf_to_additive(attention_mask, dtype):
    lowest = torch.finfo(dtype).min  # 该 dtype 自己最小的有限数，float16 中为 -65504
    pads = (attention_mask == 0)[:, None, None, :]  # (b, 1, 1, T)：填充键处为 True
    zeros = torch.zeros(pads.shape, dtype=dtype)  # (b, 1, 1, T)：真实键上加的值
    return zeros.masked_fill(pads, lowest)  # (b, 1, 1, T)：真实键处为 0，填充处为最小值


answer = hf_to_additive
result = mhsa_helpers.exercises.check_hf_to_additive_mask(answer)
assert result
result

# %% [markdown] en_hash="fd40737d05e3"
# 这两个常数在 float32 中放得下，在低精度下却变成了 -inf，而 dtype 自己最小的数不会这样。在每种 dtype 下，SDPA 算出的结果都与去掉填充后的同一批序列相同。

# %%
import torch.nn.functional as F

print(mh.say("-1e9 in float16:", "-1e9 在 float16 中："), torch.tensor(-1e9).half().item())
print(
    mh.say("float32's lowest in bfloat16:", "float32 的最小值在 bfloat16 中："),
    torch.tensor(torch.finfo(torch.float32).min).bfloat16().item(),
)
attention_mask = torch.tensor([[0, 0, 1, 1, 1], [1, 1, 1, 0, 0]])  # (b, T)：左填充、右填充
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    q, k, v = (torch.randn(2, 3, 5, 4).to(dtype) for _ in range(3))  # (b, h, T, head_dim)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=hf_to_additive(attention_mask, dtype))
    for b in range(2):
        real = attention_mask[b] == 1  # (T,)
        alone = F.scaled_dot_product_attention(q[b], k[b][:, real], v[b][:, real])  # 去掉填充
        torch.testing.assert_close(out[b].float(), alone.float(), atol=1e-2, rtol=1e-2)
    print(
        f"{dtype!s:<15}",
        mh.say(
            "SDPA with the additive mask == the sequences with their pads removed",
            "带加性掩码的 SDPA == 去掉填充后的序列",
        ),
    )
