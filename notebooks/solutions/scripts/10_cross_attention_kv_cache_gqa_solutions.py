# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 10 · Cross-attention, KV cache and GQA — solutions (交叉注意力、KV 缓存与分组查询注意力：参考答案)
#
# Worked answers to the exercises of `10_cross_attention_kv_cache_gqa.ipynb`. Try them first.

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Exercise 1.** The new queries are positions 3 and 4, so their rows are rows 3..4 of the full
# 5 x 5 causal mask (True above the diagonal): position 3 may not see key 4; position 4 sees all.

# %%
cached, new = 3, 2
full_mask = torch.ones(cached + new, cached + new).triu(diagonal=1).bool()  # (5, 5)
answer = full_mask[cached:]  # (2, 5)
print(answer)
result = mhsa_helpers.exercises.check_chunk_mask(answer)
assert result
result

# %% [markdown]
# The package slices its `mask` buffer the same way; with the explicit path we can see it:

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

# %% [markdown]
# **Exercise 2.** Keys and values (2), for every layer, K/V head, head dimension and token,
# 2 bytes each: 2 x 80 x 8 x 128 x 4096 x 2 = 1.25 GiB. With 64 K/V heads (plain MHA) it would
# be 8 times as much, 10 GiB.

# %%
layers, kv_heads, head_dim, T, bytes_per_number = 80, 8, 128, 4096, 2
answer = 2 * layers * kv_heads * head_dim * T * bytes_per_number
print(f"{answer:,} bytes = {answer / 2**30:.2f} GiB")
result = mhsa_helpers.exercises.check_kv_cache_bytes(answer)
assert result
result

# %% [markdown]
# **Exercise 3.** W_query d x d, W_key and W_value d x (g · head_dim) each, out_proj d x d plus a
# bias of d. We check the formula on a module with the same proportions (64 heads, 8 groups) but
# d = 128, then apply it to d = 8192.


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
