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
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers import lm

mh.setup_lesson()
shipped = lm.load_checkpoint()
model, tokenizer = shipped.model, shipped.tokenizer

# %% [markdown]
# **Build it: the pre-norm block.** Each branch normalises its own input (`ln_1` before the
# attention, `ln_2` before the feed-forward) and the residual adds the branch's output to what
# went in.


# %%
class Block(nn.Module):
    def __init__(self, d_model, context_length, num_heads, dropout=0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = mh.MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.ff = lm.FeedForward(d_model, 4 * d_model, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))  # (b, T, d_model)
        x = x + self.ff(self.ln_2(x))  # (b, T, d_model)
        return x


result = mhsa_helpers.exercises.check_block(Block)
assert result, result
result

# %% [markdown]
# **Build it: a batch.** `len(ids) - T` possible starts (0 to `len(ids) - T - 1`); one index
# grid `starts[:, None] + torch.arange(T + 1)` cuts every window with its target at once.


# %%
def get_batch(ids, batch_size, T):  # ids: (N,) -> inputs, targets: (batch_size, T)
    starts = torch.randint(0, len(ids) - T, (batch_size,))  # (batch_size,)
    windows = ids[starts[:, None] + torch.arange(T + 1)]  # (batch_size, T + 1)
    return windows[:, :-1], windows[:, 1:]


result = mhsa_helpers.exercises.check_get_batch(get_batch)
assert result, result
result

# %% [markdown]
# **Build it: one training step.** Flatten the logits to one row per position for
# `F.cross_entropy`, then zero_grad, backward, step.


# %%
def train_step(model, optimizer, inputs, targets):  # inputs, targets: (b, T)
    logits = model(inputs)  # (b, T, vocab)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


result = mhsa_helpers.exercises.check_train_step(train_step)
assert result, result
result

# %%
data = lm.verse_data()  # the two together: a few steps on the verse
torch.manual_seed(0)
tiny = lm.CharTransformer(
    data.tokenizer.vocab_size, d_model=32, context_length=32, num_heads=2, num_layers=1
)
optimizer = torch.optim.AdamW(tiny.parameters(), lr=3e-3, weight_decay=0.1)
for step in range(5):
    inputs, targets = get_batch(data.train_ids, 8, 32)  # (8, 32) each
    loss = train_step(tiny, optimizer, inputs, targets)
    print(mh.say(f"step {step}: loss {loss:.3f}", f"第 {step} 步：损失 {loss:.3f}"))

# %% [markdown]
# **Exercise 1.** Every block has its own attention and so its own cache; each cache keeps one key
# and one value vector of `head_dim` numbers per head and per token:
# 2 (K and V) × 3 blocks × 4 heads × 100 tokens × 32. We check the formula against the real caches
# of a model of those sizes (`d_model` = 4 × 32 = 128).

# %%
answer = 2 * 3 * 4 * 100 * 32
smaller = lm.CharTransformer(
    tokenizer.vocab_size, d_model=128, context_length=128, num_heads=4, num_layers=3
)
caches = smaller.new_caches()
with torch.no_grad():
    smaller(tokenizer.encode("月" * 100)[None], caches=caches)  # 100 tokens, batch 1
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
print(mh.say("non-zero per row:", "每行的非零个数："), (answer > 0).sum(dim=-1).tolist())
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
poem = "\n" + lm.load_verse().validation[3].text
weights_ex = lm.attention_on(model, tokenizer, poem)[1]  # (num_heads, T, T), block 2

is_punct = torch.tensor([ch in lm.PUNCTUATION for ch in poem])  # (T,)
per_query = (weights_ex * is_punct).sum(dim=-1)  # (num_heads, T)
has_mark = is_punct.cumsum(dim=0) > 0  # (T,)
answer = per_query[:, has_mark].mean(dim=-1)  # (num_heads,)
print(answer)
result = mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, poem)
assert result, result
result

# %% [markdown]
# **Exercise 4.** `lm.train_char_lm(config, data=own)` with an `lm.CharLMConfig`. `lm.text_data`
# holds out the last tenth of the text; a small model trained briefly comes down more than
# halfway from the unigram table to the bigram table, because it learns which characters follow
# which. This run is kept short (one block, 400 steps) so that the notebook stays fast; about a
# minute of training (more steps, or `d_model` 128) goes lower.

# %%
own = lm.text_data(lm.load_song_ci()[:200_000])
own_config = lm.CharLMConfig(
    d_model=64,
    num_heads=4,
    num_layers=1,
    context_length=32,
    dropout=0.0,
    batch_size=16,
    steps=400,
    lr=3e-3,
    min_lr=3e-4,
    warmup_steps=40,
    eval_every=200,
    seed=0,
)
answer = lm.train_char_lm(own_config, data=own, progress=False)
print(answer)
result = mhsa_helpers.exercises.check_own_text(answer, own)
assert result, result
result
