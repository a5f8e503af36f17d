# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="4d71f93a7450"
# # 10 · 交叉注意力、KV 缓存与 GQA · 参考答案
#
# `10_cross_attention_kv_cache_gqa.ipynb` 中各道练习的详解。请先自己动手做一遍。

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="f1226a1766da"
# **练习 1。** 先写出位置。键是位置 2..6（3 个已缓存，2 个新的），查询是位置 5 和 6。键在查询之后（因果的部分），或者在查询之前 4 个位置及更早（窗口大小 4 之外），就要遮住。查询 5 能看到键 2..5。查询 6 能看到键 3..6，所以它看不到键 2，也就是第一列。

# %%
window = 4
key_pos = torch.arange(2, 7)  # (5,)，已缓存的键和新键的位置
query_pos = torch.arange(5, 7)  # (2,)，新查询的位置
ahead = key_pos[None, :] > query_pos[:, None]  # (2, 5)，未来的位置
too_old = key_pos[None, :] <= query_pos[:, None] - window  # (2, 5)，窗口之外的位置
answer = ahead | too_old  # (2, 5)，True 表示遮住
print(answer.int())
result = mhsa_helpers.exercises.check_chunk_mask(answer)
assert result
result

# %% [markdown] en_hash="456e5bc0ffcf"
# 包里的类没有窗口。普通的因果掩码与这个答案只差一个位置，正是窗口多遮住的那一个。

# %%
plain = ahead  # 普通因果掩码中位置 5..6 的两行，只取键 2..6
print(mh.say("entries the window adds:", "窗口增加的元素："), (answer & ~plain).nonzero().tolist())

# %% [markdown] en_hash="46e9fcb1d41d"
# **练习 2。** 每个 K/V 组在每一层（48 层）为每个词元各存一个键和一个值（乘 2），每个有 128 个数，每个数 2 字节，共 24,576 字节。12 个 6000 词元的对话，每组就要 1.77 GB。24 GiB 是 25.8 GB，够放 14.56 组。但 40 个查询头要分成一样大的组，组数必须整除 40（1、2、4、5、8、10、20、40）。放得下的最大组数是 10，占 17.7 GB。20 组要 35.4 GB，普通 MHA（40 组）要 70.8 GB。

# %%
layers, q_heads, head_dim, T, conversations, bytes_per_number = 48, 40, 128, 6000, 12, 2
per_group = 2 * layers * head_dim * bytes_per_number * T * conversations  # K 和 V
budget = 24 * 2**30
divisors = [g for g in range(1, q_heads + 1) if q_heads % g == 0]
answer = max(g for g in divisors if g * per_group <= budget)
print(
    mh.say(
        f"{per_group / 1e9:.2f} GB per group: {budget / per_group:.2f} groups' worth fit",
        f"每组 {per_group / 1e9:.2f} GB：放得下 {budget / per_group:.2f} 组",
    )
)
print(
    mh.say(
        f"divisors of 40: {divisors} -> {answer} groups, {answer * per_group / 1e9:.1f} GB",
        f"40 的因数：{divisors} -> {answer} 组，{answer * per_group / 1e9:.1f} GB",
    )
)
result = mhsa_helpers.exercises.check_kv_cache_bytes(answer)
assert result
result

# %% [markdown] en_hash="70da1279f9e0"
# **练习 3。** 一共四个 Linear 层。W_query 是 3584 × 3584，偏置 3584 个。W_key 和 W_value 各是 3584 × 512（4 组，每组 128），偏置各 512 个。输出投影是 3584 × 3584，没有偏置。我们数一数包里 `qkv_bias=True` 的类，再减去它 `out_proj` 的偏置，这正是这一层没有的部分。

# %%
d, heads, groups = 3584, 28, 4
kv_width = groups * (d // heads)  # 512
answer = (d * d + d) + 2 * (d * kv_width + kv_width) + d * d
like = mh.GroupedQueryAttention(d, d, 4, 0.0, num_heads=heads, num_kv_groups=groups, qkv_bias=True)
assert sum(p.numel() for p in like.parameters()) - like.out_proj.bias.numel() == answer
print(mh.say(f"{answer:,} parameters", f"{answer:,} 个参数"))
result = mhsa_helpers.exercises.check_gqa_parameter_count(answer)
assert result
result

# %% [markdown] en_hash="2476cb631070"
# **动手实现：KV 缓存。** 先检查长度上限，这样被拒绝的块不会改动任何东西。新查询位于 `offset .. offset + n - 1`，其中 `offset` 是这次调用之前已缓存的词元数。它们的掩码就是完整因果掩码的这几行。


# %%
class MyKVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.keys = None  # (b, h, T_cached, head_dim)
        self.values = None  # (b, h, T_cached, head_dim)

    def append_and_attend(self, q, k, v):  # 每个都是 (b, h, n, head_dim)
        offset = 0 if self.keys is None else self.keys.shape[-2]
        n = k.shape[-2]
        if offset + n > self.max_len:
            raise ValueError(f"{offset} cached + {n} new tokens exceed max_len={self.max_len}")
        self.keys = k if self.keys is None else torch.cat([self.keys, k], dim=-2)
        self.values = v if self.values is None else torch.cat([self.values, v], dim=-2)
        T = offset + n
        future = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)[offset:]  # (n, T)
        scores = q @ self.keys.transpose(-2, -1) / q.shape[-1] ** 0.5  # (b, h, n, T)
        weights = torch.softmax(scores.masked_fill(future, -torch.inf), dim=-1)
        return weights @ self.values  # (b, h, n, head_dim)


answer = MyKVCache
result = mhsa_helpers.exercises.check_kv_cache_step(answer)
assert result
result

# %% [markdown] en_hash="25ac79fcc1a4"
# **动手实现：键/值共享。** 紧跟在 K/V 头之后插入一个新轴，把它 expand 到 n_rep（只是视图，不复制），再把这两个轴合并。K/V 头 j 就变成查询头 j * n_rep .. j * n_rep + n_rep - 1。如果把新轴放在头之前，头就会被整体平铺（0、1、0、1……），那是 `repeat`，不是 `repeat_interleave`。


# %%
def repeat_kv(x, n_rep):  # (b, g, T, head_dim) -> (b, g * n_rep, T, head_dim)
    b, g, T, head_dim = x.shape
    expanded = x[:, :, None, :, :].expand(b, g, n_rep, T, head_dim)  # 只是视图
    return expanded.reshape(b, g * n_rep, T, head_dim)


x = torch.randn(2, 3, 5, 4)  # (b, g, T, head_dim)
assert torch.equal(repeat_kv(x, 2), x.repeat_interleave(2, dim=1))
answer = repeat_kv
result = mhsa_helpers.exercises.check_repeat_kv(answer)
assert result
result
