# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="5c8c1b288122"
# # 12 · 会写诗的小模型 · 参考答案
#
# `12_tiny_char_lm.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并断言检查器判定通过。

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers import lm

mh.setup_lesson(lang="zh")
shipped = lm.load_checkpoint()
model, tokenizer = shipped.model, shipped.tokenizer

# %% [markdown] en_hash="82c323fffe82"
# **练习 1。** 每个块都有自己的注意力，因此也有自己的缓存；每个缓存为每个头、每个词元（token）保存一个键向量和一个值向量，各含 `head_dim` 个数：2（K 和 V）× 3 个块 × 4 个头 × 100 个词元 × 32。我们用真实的缓存来核对这个公式。

# %%
answer = 2 * 3 * 4 * 100 * 32
caches = model.new_caches()
with torch.no_grad():
    model(tokenizer.encode("月" * 100)[None], caches=caches)  # 100 tokens, batch 1
print(caches[0])
assert answer == sum(c.keys.numel() + c.values.numel() for c in caches)
print(answer)
result = mhsa_helpers.exercises.check_cache_numbers(answer)
assert result, result
result

# %% [markdown] en_hash="43c43bd98f13"
# **练习 2。** 先除以温度（temperature），再找出每一行第 k 大的值（`torch.topk`），把所有比它小的值设为 -inf，最后做 softmax：-inf 的位置恰好得到 0。

# %%
with torch.no_grad():
    logits_ex = model(tokenizer.encode("\n床前明月光，")[None])[0, -2:]  # (2, vocab_size)

scaled = logits_ex / 0.7  # (2, vocab_size)
kth = torch.topk(scaled, 3, dim=-1).values[:, -1:]  # (2, 1)
answer = torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)  # (2, vocab)
print("non-zero per row:", (answer > 0).sum(dim=-1).tolist())
for row in answer:
    top = row.topk(3)
    print(
        [
            (tokenizer.decode([i]), round(p, 3))
            for i, p in zip(top.indices.tolist(), top.values.tolist())
        ]
    )
result = mhsa_helpers.exercises.check_top_k_probs(answer, logits_ex, 3, 0.7)
assert result, result
result

# %% [markdown] en_hash="a3778a81aaef"
# **练习 3。** 先构造一个形状为 (T,) 的标点键掩码；把每个查询行在这些键上的权重加起来；然后在“自身或之前有标点”的查询上取平均（在这些位置上，标点的累计计数 > 0）。

# %%
night = next(p for p in lm.load_tang300() if p.title == "夜思")
line = "\n" + night.text
weights_ex = lm.attention_on(model, tokenizer, line)[1]  # (num_heads, T, T), block 2

is_punct = torch.tensor([ch in lm.PUNCTUATION for ch in line])  # (T,)
per_query = (weights_ex * is_punct).sum(dim=-1)  # (num_heads, T)
has_mark = is_punct.cumsum(dim=0) > 0  # (T,)
answer = per_query[:, has_mark].mean(dim=-1)  # (num_heads,)
print(answer)
result = mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, line)
assert result, result
result
