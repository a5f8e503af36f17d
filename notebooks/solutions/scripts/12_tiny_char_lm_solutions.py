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
# # 12 · A tiny model that writes — solutions (会写诗的小模型 · 参考答案)
#
# Worked answers to the exercises of `12_tiny_char_lm.ipynb`. Try them yourself first.
# Each cell computes the answer and asserts that the checker passes.

# %%
import torch

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers import lm

mh.setup_lesson()
shipped = lm.load_checkpoint()
model, tokenizer = shipped.model, shipped.tokenizer

# %% [markdown]
# **Exercise 1.** Every block has its own attention and so its own cache; each cache keeps one key
# and one value vector of `head_dim` numbers per head and per token:
# 2 (K and V) × 3 blocks × 4 heads × 100 tokens × 32. We check the formula against real caches.

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

# %% [markdown]
# **Exercise 2.** Divide by the temperature, find the k-th largest value of each row
# (`torch.topk`), set everything smaller to -inf, then softmax: the -inf entries get exactly 0.

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

# %% [markdown]
# **Exercise 3.** A (T,) mask of the punctuation keys; each query row's weights summed over
# those keys; then the mean over the queries that have a punctuation mark at or before them
# (a running count of the marks is > 0 there).

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
