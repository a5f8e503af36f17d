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

# %% [markdown] en_hash="ac49a8f04628"
# **练习 1。** 新的查询位于位置 3 和 4，所以它们的行就是完整的 5 × 5 因果掩码（对角线以上为 True）的第 3..4 行：位置 3 不能看到键 4；位置 4 能看到全部。

# %%
cached, new = 3, 2
full_mask = torch.ones(cached + new, cached + new).triu(diagonal=1).bool()  # (5, 5)
answer = full_mask[cached:]  # (2, 5)
print(answer)
result = mhsa_helpers.exercises.check_chunk_mask(answer)
assert result
result

# %% [markdown] en_hash="62cf7779fa2d"
# 本包对它的 `mask` 缓冲区也是这样切片的；走显式路径，就能亲眼看到：

# %%
torch.manual_seed(0)
layer = mh.SDPAMultiHeadAttention(4, 4, 8, 0.0, num_heads=1).eval()
cache = mh.KVCache(8)
x = torch.randn(1, 5, 4)
with torch.no_grad():
    layer(x[:, :cached], cache=cache)
    _, weights = layer(x[:, cached:], cache=cache, return_weights=True)  # (1, 1, 2, 5)
assert torch.equal(weights[0, 0] == 0, answer)
print("zeros of the chunk's weights are exactly the hidden entries")

# %% [markdown] en_hash="b4510333fc70"
# **练习 2。** 键和值（2），每一层、每个 K/V 头、每个头维度、每个词元各一份，每个数 2 字节：2 × 80 × 8 × 128 × 4096 × 2 = 1.25 GiB。如果是 64 个 K/V 头（普通的 MHA），就要 8 倍，即 10 GiB。

# %%
layers, kv_heads, head_dim, T, bytes_per_number = 80, 8, 128, 4096, 2
answer = 2 * layers * kv_heads * head_dim * T * bytes_per_number
print(f"{answer:,} bytes = {answer / 2**30:.2f} GiB")
result = mhsa_helpers.exercises.check_kv_cache_bytes(answer)
assert result
result

# %% [markdown] en_hash="5a6517aebb96"
# **练习 3。** W_query 是 d × d，W_key 和 W_value 各是 d × (g · head_dim)，out_proj 是 d × d 再加 d 个偏置。我们先在比例相同（64 个头、8 组）但 d = 128 的模块上检验公式，再把它用到 d = 8192 上。


# %%
def gqa_params(d, num_heads, num_kv_groups):
    head_dim = d // num_heads
    return d * d + 2 * d * num_kv_groups * head_dim + d * d + d


small = mh.GroupedQueryAttention(128, 128, 4, 0.0, num_heads=64, num_kv_groups=8)
assert sum(p.numel() for p in small.parameters()) == gqa_params(128, 64, 8)

answer = gqa_params(8192, 64, 8)
print(f"{answer:,} parameters")
result = mhsa_helpers.exercises.check_gqa_parameter_count(answer)
assert result
result
