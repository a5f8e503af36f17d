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
# **Exercise 1.** Write down the positions: the keys are positions 2..6 (three cached, two new),
# the queries 5 and 6. A key is hidden when it comes after the query (the causal part) or when it
# is 4 or more positions before it (outside the window of 4). Query 5 sees keys 2..5; query 6
# sees keys 3..6, so it loses key 2, the first column.

# %%
window = 4
key_pos = torch.arange(2, 7)  # (5,): positions of the cached and the new keys
query_pos = torch.arange(5, 7)  # (2,): positions of the new queries
ahead = key_pos[None, :] > query_pos[:, None]  # (2, 5): the future
too_old = key_pos[None, :] <= query_pos[:, None] - window  # (2, 5): outside the window
answer = ahead | too_old  # (2, 5), True = hidden
print(answer.int())
result = mhsa_helpers.exercises.check_chunk_mask(answer)
assert result
result

# %% [markdown]
# The package's classes have no window; a plain causal chunk mask would differ in exactly one
# entry, the one the window adds:

# %%
plain = ahead  # rows 5..6 of a plain causal mask over keys 2..6
print(mh.say("entries the window adds:", "窗口增加的元素："), (answer & ~plain).nonzero().tolist())

# %% [markdown]
# **Exercise 2.** Each K/V group adds, per token, a key and a value (2) in every layer (48), of
# 128 numbers of 2 bytes: 24,576 bytes. For 12 conversations of 6000 tokens that is 1.77 GB
# per group, and 24 GiB (25.8 GB) hold 14.56 groups' worth. But the 40 query heads must split
# into equal groups, so the count must divide 40 (1, 2, 4, 5, 8, 10, 20, 40): the largest that
# fits is 10 groups, 17.7 GB. 20 groups would need 35.4 GB, and plain MHA (40) 70.8 GB.

# %%
layers, q_heads, head_dim, T, conversations, bytes_per_number = 48, 40, 128, 6000, 12, 2
per_group = 2 * layers * head_dim * bytes_per_number * T * conversations  # K and V
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

# %% [markdown]
# **Exercise 3.** Four Linear layers: W_query 3584 x 3584 with a bias of 3584; W_key and W_value
# 3584 x 512 each (4 groups of 128) with biases of 512; the output projection 3584 x 3584 and no
# bias. We count the package's class with `qkv_bias=True` and remove its `out_proj` bias, the one
# part this layer lacks.

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

# %% [markdown]
# **Build it: a KV cache.** Check the limit first, so that a refused chunk changes nothing. The
# new queries sit at positions `offset .. offset + n - 1`, where `offset` is the number of tokens
# cached before this call: their mask is those rows of the full causal mask.


# %%
class MyKVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.keys = None  # (b, h, T_cached, head_dim)
        self.values = None  # (b, h, T_cached, head_dim)

    def append_and_attend(self, q, k, v):  # (b, h, n, head_dim) each
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

# %% [markdown]
# **Build it: the key/value sharing.** Insert a new axis right after the K/V heads, expand it to
# n_rep (a view, no copy), and merge the two axes: K/V head j becomes query heads
# j * n_rep .. j * n_rep + n_rep - 1. Putting the new axis before the heads instead would tile
# them (0, 1, 0, 1, ...), which is `repeat`, not `repeat_interleave`.


# %%
def repeat_kv(x, n_rep):  # (b, g, T, head_dim) -> (b, g * n_rep, T, head_dim)
    b, g, T, head_dim = x.shape
    expanded = x[:, :, None, :, :].expand(b, g, n_rep, T, head_dim)  # a view
    return expanded.reshape(b, g * n_rep, T, head_dim)


x = torch.randn(2, 3, 5, 4)  # (b, g, T, head_dim)
assert torch.equal(repeat_kv(x, 2), x.repeat_interleave(2, dim=1))
answer = repeat_kv
result = mhsa_helpers.exercises.check_repeat_kv(answer)
assert result
result
