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
# # 12 · A tiny model that writes: a character-level Transformer on Tang poems (会写诗的小模型：字符级 Transformer)
#
# Lesson 08 trained one attention layer on toy tasks; lesson 10 built the KV cache. Here the
# course's own `MultiHeadAttention` goes into a small but complete **language model** (语言模型)
# that reads a real text, the **Tang 300** (唐诗三百首), one character at a time, and then writes
# some of its own.
#
# **Learning goals**
# 1. Add the parts a working model needs around attention -- token and position embeddings,
#    **feed-forward network** (前馈网络), **residual connections** (残差连接), **layer norm**
#    (层归一化) -- and know what each one is for.
# 2. Train it and watch the **training loss** and the **validation loss** (验证损失) fall, and
#    see where they part ways.
# 3. Sample text before and after training (**temperature** (温度) and **top-k sampling**,
#    top-k 采样).
# 4. Measure what the trained heads attend to on a real poem: the previous character, the line
#    start, the punctuation.
# 5. Generate with and without the **KV cache** (KV 缓存): same characters, different speed.
#
# **Prerequisites:** lesson 06 (`MultiHeadAttention`), lesson 08 (training, cross-entropy,
# loss curves), lesson 10 (KV cache, autoregressive generation).
# **Time:** about 60 minutes.
#
# **Shape contract:** character ids `(b, T)` (`T <= context_length`) → logits
# `(b, T, vocab_size)`; with `return_weights=True` also weights
# `(b, num_layers, num_heads, T, T)`. Generation keeps one `KVCache` per block, each holding keys
# and values `(b, num_heads, T_cached, head_dim)`.

# %%
import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import lm

mh.setup_lesson()

# %% [markdown]
# ## 1. The text and the tokenizer
#
# `data/tang300.txt` holds the 313 poems of the Tang 300 as shipped by Debian's `fortunes-zh`
# package (the poems are public domain; see `data/SOURCES.md`). The model reads only the poems'
# lines, one poem after another with an empty line between them:

# %%
poems = lm.load_tang300()
night = next(p for p in poems if p.title == "夜思")  # Li Bai's "Quiet Night Thoughts"
print(len(poems), "poems;", night.title, night.author)
print(night.text)
text = lm.poem_text(poems)
print(f"{len(text)} characters, e.g. the start:")
print(text[:40])

# %% [markdown]
# A **character-level tokenizer** (字符级分词器) is the simplest one there is: every distinct
# character (Chinese characters, full-width punctuation such as ，。？！；、 and the newline) is
# one token, and its id is its place in the sorted list of characters. No download, and every token
# is something we can read.

# %%
tokenizer = lm.CharTokenizer(text)
ids = tokenizer.encode("床前明月光，")  # (T,)
print(tokenizer, ids)
print(repr(tokenizer.decode(ids)))
assert tokenizer.decode(tokenizer.encode(text)) == text
rare = sum(text.count(ch) <= 2 for ch in tokenizer.chars)
print(f"{rare} of the {tokenizer.vocab_size} characters occur only once or twice")

# %% [markdown]
# 2,500 distinct characters in 25,000, and about half of them occur only once or twice. That makes this a hard
# text for any model, and it will show in section 5.
#
# We hold back every 20th poem as a **validation set** (验证集): the model never trains on them,
# so its loss there tells us how well it does on poems it has not seen.

# %%
train_poems, val_poems = lm.split_poems(poems)
print(len(train_poems), "training poems,", len(val_poems), "validation poems")

# %% [markdown]
# ## 2. From one attention layer to a Transformer block
#
# Lesson 08's `TinyAttentionLM` was embeddings → attention → LM head. A model that writes needs
# four more ideas, each one sentence:
#
# * **Feed-forward network** (前馈网络): attention only *mixes* the vectors of different
#   positions (a weighted average); a small two-layer network then transforms each position's
#   vector on its own: $\mathrm{FFN}(z) = W_2\,\mathrm{GELU}(W_1 z + b_1) + b_2$, with a hidden
#   width of $4 \times d_{model}$ (GELU is a smooth version of the ReLU **activation function**,
#   激活函数: about 0 for negative inputs, about the input itself for positive ones).
# * **Residual connection** (残差连接): each sub-layer *adds* its output to its input
#   ($x + f(x)$), so it only has to learn a correction, and the signal and the gradient can
#   always flow straight through the block.
# * **Layer norm** (层归一化): before each sub-layer, each position's vector is rescaled to mean 0
#   and variance 1 (then a learned scale and shift), which keeps the numbers in a range where
#   training is stable however many blocks are stacked.
# * **Stacking**: the block is repeated `num_layers` times; later blocks attend over vectors
#   that already carry what earlier blocks gathered.
#
# One **Transformer block** (Transformer 块), in the "pre-norm" form GPT-2 uses:
#
# $$
# h = x + \mathrm{MultiHeadAttention}\big(\mathrm{LN}_1(x)\big), \qquad
# y = h + \mathrm{FFN}\big(\mathrm{LN}_2(h)\big)
# $$
#
# Here it is, with the course's `mh.MultiHeadAttention` inside:


# %%
class FeedForward(nn.Module):
    def __init__(self, d_model, hidden, dropout=0.0):
        super().__init__()
        self.fc_in = nn.Linear(d_model, hidden)
        self.act = nn.GELU()
        self.fc_out = nn.Linear(hidden, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):  # (b, T, d_model) -> (b, T, d_model), each position alone
        return self.dropout(self.fc_out(self.act(self.fc_in(x))))


class Block(nn.Module):
    def __init__(self, d_model, context_length, num_heads, dropout=0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = mh.MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.ff = FeedForward(d_model, 4 * d_model, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))  # (b, T, d_model)
        x = x + self.ff(self.ln_2(x))  # (b, T, d_model)
        return x


torch.manual_seed(0)
block = Block(d_model=16, context_length=8, num_heads=4, dropout=0.1)
torch.manual_seed(0)
package_block = lm.TransformerBlock(d_model=16, context_length=8, num_heads=4, dropout=0.1)
x = torch.randn(2, 8, 16)  # (b, T, d_model)
print("block output:", tuple(block(x).shape))
print(mh.assert_same_module(block, package_block, x))

# %% [markdown]
# The whole model, `lm.CharTransformer`, puts the pieces in this order:
#
# $$
# x_0 = E[\text{ids}] + P[0..T-1], \qquad x_\ell = \mathrm{Block}_\ell(x_{\ell-1}), \qquad
# \text{logits} = \mathrm{LN}_f(x_L)\, E^\top
# $$
#
# * `tok_emb` ($E$, vocab_size × d_model): the **token embedding** (词元嵌入), one learned vector
#   per character;
# * `pos_emb` ($P$, context_length × d_model): a learned **positional embedding** (位置嵌入) per
#   position, added because attention by itself does not know the order of its inputs;
# * `blocks`: `num_layers` Transformer blocks; `ln_f`: a last layer norm;
# * `lm_head`: one score (**logit**) per character of the vocabulary. It reuses $E$ (**weight
#   tying**, 权重绑定, as in GPT-2): the same vectors read and write a character, which saves
#   vocab_size × d_model parameters.
#
# The course ships a trained one (section 5). Its sizes, and an untrained model of the same sizes:

# %%
shipped = lm.load_checkpoint()  # data/char_lm.pt
config = shipped.config
print(config)
torch.manual_seed(0)
untrained = lm.CharTransformer(
    tokenizer.vocab_size,
    config.d_model,
    config.context_length,
    config.num_heads,
    config.num_layers,
).eval()
print(untrained)
print(f"{untrained.num_parameters():,} parameters")

# %% [markdown]
# Its weights start small (normal, standard deviation 0.02, as in GPT-2), so before training it
# guesses almost uniformly over the 2,500 characters: the loss is close to
# $\log(\text{vocab\_size})$ (lesson 08).

# %%
sample_ids = tokenizer.encode(night.text)[None]  # (1, T)
with torch.no_grad():
    logits, weights = untrained(sample_ids, return_weights=True)
print("logits ", tuple(logits.shape))  # (b, T, vocab_size)
print("weights", tuple(weights.shape))  # (b, num_layers, num_heads, T, T)
loss = F.cross_entropy(logits[0, :-1], sample_ids[0, 1:])
print(f"untrained loss {loss.item():.2f}, log(vocab_size) = {math.log(tokenizer.vocab_size):.2f}")
assert abs(loss.item() - math.log(tokenizer.vocab_size)) < 0.2

# %% [markdown]
# ## 3. Writing before learning
#
# `lm.generate(model, prompt, max_new_tokens, temperature=..., top_k=..., seed=...)` is lesson
# 10's loop with a real model: take the logits of the last position, divide them by the
# **temperature** (below 1: sharper, the likely characters get likelier), keep the `top_k` largest
# (the others get probability 0), softmax, draw one character from a generator seeded with
# `seed`, append it, repeat. The same seed gives the same text on every run.

# %%
prompt = tokenizer.encode("\n")  # start of a new poem
out = lm.generate(untrained, prompt, 48, temperature=0.8, top_k=20, seed=0)
print(tokenizer.decode(out))

# %% [markdown]
# Random characters: no lines, no punctuation where a poem has it.
#
# ## 4. Training, briefly
#
# `lm.train_char_lm(config)` runs the usual loop: random windows of `context_length + 1`
# characters from the training poems, the model predicts each next character, cross-entropy,
# AdamW (Adam with **weight decay**, 权重衰减), a learning rate that warms up and then decays.
# It is seeded and runs on one CPU thread, so a rerun gives the same numbers. To keep this
# notebook fast we train a much smaller model (1 block, d_model 32, windows of 32 characters)
# for 100 steps:

# %%
# NBVAL_IGNORE_OUTPUT
quick_config = lm.CharLMConfig(
    d_model=32,
    num_heads=4,
    num_layers=1,
    context_length=32,
    batch_size=16,
    steps=100,
    lr=1e-2,
    min_lr=1e-3,
    warmup_steps=10,
    eval_every=25,
    seed=0,
)
quick = lm.train_char_lm(quick_config)  # a tqdm progress bar while it runs

# %%
first, last = quick.losses[0], sum(quick.losses[-10:]) / 10
print(f"step 1: {first:.2f}; mean of the last 10 steps: {last:.2f}")
print("validation:", [(step, round(loss, 2)) for step, loss in quick.val_losses])
assert last < first - 1.0

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(
    range(1, len(quick.losses) + 1),
    quick.losses,
    label=mh.tr("training loss (one batch)", "训练损失（单个批次）"),
)
steps, val = zip(*quick.val_losses)
ax.plot(steps, val, "o-", label=mh.tr("validation loss (unseen poems)", "验证损失（没见过的诗）"))
ax.axhline(math.log(tokenizer.vocab_size), color="gray", linestyle="--", label="log(vocab_size)")
ax.set_xlabel(mh.tr("step", "步数"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("100 steps of a small model", "小模型训练 100 步"))
ax.legend()
plt.show()

# %% [markdown]
# The training loss falls from $\log 2500 \approx 7.8$ to about 6 in 100 steps. The validation
# loss (measured every 25 steps, on poems the model never sees) stays higher and falls only a
# little, from 6.54 to 6.43. What has such a small model
# learned? Mostly which characters are frequent -- and the most frequent ones are "，" and "。":

# %%
out = lm.generate(quick.model, prompt, 31, temperature=0.8, top_k=20, seed=0)  # 32 = its context
print(tokenizer.decode(out))

# %% [markdown]
# ## 5. The shipped model
#
# `make train-demo` (`tools/train_char_lm.py`) trains the full-size model printed in section 2
# with a fixed seed and writes `data/char_lm.pt` (the weights, the tokenizer's characters, and
# the loss of every step). The course's tests re-run its first steps and compare them with the
# recorded losses.

# %%
print(shipped)
print("validation:", [(step, round(loss, 2)) for step, loss in shipped.val_losses])

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(
    range(1, len(shipped.losses) + 1),
    shipped.losses,
    label=mh.tr("training loss", "训练损失"),
    alpha=0.7,
)
steps, val = zip(*shipped.val_losses)
ax.plot(steps, val, "o-", label=mh.tr("validation loss", "验证损失"))
ax.axhline(math.log(tokenizer.vocab_size), color="gray", linestyle="--", label="log(vocab_size)")
ax.set_xlabel(mh.tr("step", "步数"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("The shipped model (make train-demo)", "随课程提供的模型（make train-demo）"))
ax.legend()
plt.show()

# %% [markdown]
# Two curves, two stories. The training loss keeps falling to the end. The validation loss is
# lowest early and then creeps up: after that, what the model learns about the training poems no
# longer helps on new ones -- it starts to **overfit** (过拟合). 25,000 characters is very little
# text, and many characters are rare: some characters of the validation poems never occur in the
# training poems at all (no model can predict those well). Training longer only widens the gap
# between the two curves; more text is what would help most.

# %%
best_step, best_val = min(shipped.val_losses, key=lambda pair: pair[1])
print(f"lowest validation loss {best_val:.2f} at step {best_step}")
val_text, seen = lm.poem_text(val_poems), set(lm.poem_text(train_poems))
unseen = sum(ch not in seen for ch in val_text)
print(f"{unseen} of the {len(val_text)} validation characters never occur in training")
print(f"training loss, mean of the last 50 steps: {sum(shipped.losses[-50:]) / 50:.2f}")
assert best_step < config.steps and shipped.val_losses[-1][1] > best_val
assert sum(shipped.losses[-50:]) / 50 < best_val - 1.0

# %% [markdown]
# Now let it write: three poems from the same prompt (a newline: "a new line starts here"),
# temperature 0.8, top-k 20, seeds 0, 1, 2. `lm.copied_share` checks how much is copied: the share
# of its 4-character pieces that occur anywhere in the training poems.

# %%
model = shipped.model
train_text = lm.poem_text(train_poems)
for seed in (0, 1, 2):
    out = tokenizer.decode(lm.generate(model, prompt, 60, temperature=0.8, top_k=20, seed=seed))
    print(out.strip("\n"))
    copied = lm.copied_share(out, train_text)
    print(f"--- (seed {seed}: {copied:.0%} of its 4-character pieces occur in the training poems)")
    assert copied < 0.25

# %% [markdown]
# Not Li Bai. But compared with the untrained model: the lines end in "，" and "。", a newline
# follows a "。", real words appear (青山, 何处, 日暮, 不见, 长安, 白日), and almost none of it is
# copied. What it gets wrong is visible too: lines of every length, runs of empty lines, a
# character repeated (萧萧萧...). This is what 930,000 parameters, 25,000 characters and a few
# minutes of one CPU core can do.
#
# ## 6. What the trained heads look at
#
# Lesson 07 warned that a heatmap alone can fool us; lesson 08 measured instead. We do both.
# First the pictures: every head of the second block on Li Bai's "夜思" (with the newline
# before it, as the model reads a poem). Matplotlib's
# default font has no Chinese characters, so `lm.char_axis` labels the axes with the characters
# when a Chinese font is installed and otherwise with their positions (punctuation as `,` `.`
# and the newline as `\n`, which every font has); the table below gives the
# characters at each position either way.

# %%
line = "\n" + night.text  # (T,) characters
print(lm.char_table(line))
weights = lm.attention_on(model, tokenizer, line)  # (num_layers, num_heads, T, T)
axis = lm.char_axis(line)
with plt.rc_context(axis.rc):
    fig = mh.plot_attention_grid(
        weights[1], axis.labels, title=mh.tr("Block 2, every head", "第 2 块的每个头"), max_cols=2
    )
    plt.show()

# %% [markdown]
# Head 4 has the brightest columns, and they sit on the punctuation: position 6 (the first "，")
# most of all, then 12 and 19. Whatever the query, a good part of its weight goes to the marks
# before it. Heads 1 and 2 show fainter columns in the same places; head 3 is spread almost
# evenly. Pictures of one poem can mislead, so now the numbers. `lm.head_focus(weights, text)`
# measures, for every head, the average share of weight on three kinds of key: the **previous character** (key $t-1$), the **line start** (the
# newline that begins the query's line) and the **punctuation** (，。？！…). The last row is what
# a head that spread its weight evenly over the past would get. We average over the 15
# validation poems (unseen in training), each cut to the model's 128-character window:

# %%
val_texts = ["\n" + p.text[: config.context_length - 1] for p in val_poems]
focus = lm.focus_on_texts(model, tokenizer, val_texts)
print(focus.table())

# %% [markdown]
# What the table says, head by head against the "uniform" row:
#
# * **Punctuation:** block 2 head 4 puts 0.39 of its weight on punctuation marks, more than three
#   times what spreading evenly would give (0.12); several heads in blocks 2 and 3 reach 0.2 --
#   0.25. Most lines of these poems are 5 or 7 characters, then "，" or "。": looking at the marks
#   tells a head
#   where in the line the next character falls.
# * **Line start:** block 3 head 4 gives 0.16 to the newline that began the line, twice the
#   uniform 0.07; the other heads of blocks 2 and 3 give it 0.09 -- 0.12, and block 1's heads
#   stay at the uniform level.
# * **Previous character:** no head. Every head gives key $t-1$ 0.07 -- 0.09, what uniform
#   attention gives. Note that key $t-1$ is the character *before* the query's own. The query's
#   own character (the one just before the character to predict) needs no attention at all: it
#   reaches the next block through the residual connection.
#
# The same, picked out by code (and checked, so that the text above stays true):

# %%
for category in lm.CATEGORIES:
    layer, head = focus.strongest(category)
    share = focus.shares[layer, head, lm.CATEGORIES.index(category)].item()
    uniform = focus.baseline[lm.CATEGORIES.index(category)].item()
    print(f"{category:>11}: block {layer + 1} head {head + 1}, {share:.2f} (uniform {uniform:.2f})")
shares, baseline = focus.shares, focus.baseline  # (num_layers, num_heads, 3), (3,)
assert focus.strongest("punctuation") == (1, 3) and shares[1, 3, 2] > 3 * baseline[2]
assert focus.strongest("line start") == (2, 3) and shares[2, 3, 1] > 2 * baseline[1]
assert shares[..., 0].max() < 1.5 * baseline[0]  # no previous-character head
assert (shares[0, :, 1] - baseline[1]).abs().max() < 0.015  # block 1: the uniform line-start share

# %% [markdown]
# ## 7. Generating with and without the KV cache
#
# `lm.generate(..., use_cache=True)` (the default) gives each block its own `KVCache` (lesson
# 10): the prompt goes through once, then each step feeds only the newest character.
# `use_cache=False` runs the whole sequence again at every step. Same model, same seed, so the
# same characters:

# %%
with_cache = lm.generate(model, prompt, 100, temperature=0.8, top_k=20, seed=3, use_cache=True)
without = lm.generate(model, prompt, 100, temperature=0.8, top_k=20, seed=3, use_cache=False)
assert torch.equal(with_cache, without)
print(tokenizer.decode(with_cache))

# %% [markdown]
# And the speed, both measured in this one run (your numbers will differ; CI does not compare
# them, it only checks that the cache is faster):


# %%
# NBVAL_IGNORE_OUTPUT
def tokens_per_second(use_cache, new_tokens=100, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        lm.generate(model, prompt, new_tokens, seed=0, use_cache=use_cache)
        times.append(time.perf_counter() - start)
    return new_tokens / sorted(times)[len(times) // 2]  # median run


speed_without = tokens_per_second(use_cache=False)
speed_with = tokens_per_second(use_cache=True)
ratio = speed_with / speed_without
print(f"without cache: {speed_without:7.0f} tokens/s")
print(f"with cache:    {speed_with:7.0f} tokens/s   ({ratio:.1f}x faster)")
assert ratio > 1

# %% [markdown]
# Without the cache, step $t$ pushes all $t$ characters through all 3 blocks and the LM head
# again; with it, one character. The gain is smaller than that count suggests because at this
# size much of a step is fixed cost (Python, many small matrix products) that the cache does not
# remove; `benchmarks/generation.py` measures a larger model over longer texts.
#
# ## Summary
#
# * A working language model wraps attention in a **Transformer block**: layer norm →
#   `MultiHeadAttention` → residual, layer norm → feed-forward → residual; token and position
#   embeddings in front, a final layer norm and an LM head (tied to the embedding) behind.
# * Character-level tokenizer: one token per character, 2,500 of them for the Tang 300.
# * Training: loss from $\log(\text{vocab\_size})$ down; the validation loss on unseen poems
#   shows when more training stops helping (overfitting, here after about 100 steps).
# * Sampling: temperature and top-k shape the next-character distribution; the same seed gives
#   the same text. The shipped model writes lines with commas and full stops and real words,
#   and copies almost nothing.
# * Measured, not guessed: one head gives 0.39 of its weight to punctuation (uniform: 0.12), one
#   twice the uniform share to the line start, and none looks at the previous character.
# * One `KVCache` per block: the same characters as recomputing everything, faster (the ratio
#   measured in section 7).
#
# ## Exercises
#
# Solutions: `solutions/12_tiny_char_lm_solutions.ipynb`.
#
# **Exercise 1.** The shipped model has 3 blocks with 4 heads of `head_dim` 32. After it has
# processed 100 tokens (batch 1), how many numbers do its KV caches hold in total?

# %%
import mhsa_helpers.exercises

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_cache_numbers(answer)

# %% [markdown]
# **Exercise 2.** Turn `logits_ex` (2 rows of next-character logits) into sampling probabilities
# with temperature 0.7 and top-k 3, the way `lm.generate` does (without calling `lm`'s
# functions): a `(2, vocab_size)` tensor whose rows sum to 1 and have 3 non-zero entries.

# %%
with torch.no_grad():
    logits_ex = model(tokenizer.encode("\n床前明月光，")[None])[0, -2:]  # (2, vocab_size)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_top_k_probs(answer, logits_ex, 3, 0.7)

# %% [markdown]
# **Exercise 3.** Without `lm.head_focus`, compute for each head of `weights_ex` (block 2 of the
# shipped model on `line`) the punctuation share: for each query, the total weight on keys that
# are in `lm.PUNCTUATION`; then the mean over the queries that have at least one punctuation mark
# at or before them. Shape `(num_heads,)`.

# %%
weights_ex = weights[1]  # (num_heads, T, T)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, line)
