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
# # 12 · A tiny model that writes verse: a character-level Transformer on Tang poems (会写诗的小模型：字符级 Transformer)
#
# Lesson 08 trained one attention layer on toy tasks; lesson 10 built the KV cache. Here the
# course's own `MultiHeadAttention` goes into a small but complete **language model** (语言模型)
# that reads 35,000 Tang poems one character at a time and then writes verse of its own.
#
# **Learning goals**
# 1. Set the bar first: **count tables** (n-gram models, n 元语法模型) that predict the next
#    character from the one or two before it.
# 2. Add the parts a working model needs around attention -- **feed-forward network** (前馈网络),
#    **residual connections** (残差连接), **layer norm** (层归一化), several blocks -- and see,
#    measured, what each one earns.
# 3. Check that the shipped model clears the bar, and that what it writes has the shape of
#    regular verse without copying it.
# 4. Generate text of any length: when the context is full, the window slides.
# 5. Measure what the trained heads look at on held-out poems, including, in a couplet's first
#    half, the partner of the character being predicted (对仗).
#
# **Prerequisites:** lesson 06 (`MultiHeadAttention`), lesson 08 (training, cross-entropy,
# loss curves), lesson 10 (KV cache, autoregressive generation).
# **Time:** about 75 minutes (reading, running 20 code cells, 4 exercises; the rule is in lesson
# 00).
#
# **Shape contract:** character ids `(b, T)` (`T <= context_length`) → logits
# `(b, T, vocab_size)`; with `return_weights=True` also weights
# `(b, num_layers, num_heads, T, T)`.

# %%
import math
import time

import matplotlib.pyplot as plt
import torch
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import lm

mh.setup_lesson()

# %% [markdown]
# ## 1. The text: Tang regular verse
#
# `data/tang_verse.txt.xz` holds the **regular verse** (近体诗) of the Complete Tang Poems
# (全唐诗), from the npm package `chinese-poetry` (the poems are public domain; see
# `data/SOURCES.md` for the source and the command that built the file). Regular verse is strict:
# a quatrain (绝句) has 4 lines, a regulated poem (律诗) 8, and every line has 5 or 7 characters.
# The file has one couplet per line (two lines of the poem, 上句 and 下句), an empty line after
# each poem. Every 20th poem is held out for validation, and no training poem shares a couplet
# with a validation poem. (A single line may recur: 何处春深好 opens a whole series of poems, and
# 108 of the 33,323 training poems share one line with a validation poem.)

# %%
verse = lm.load_verse()
print(len(verse.train), "training poems,", len(verse.validation), "validation poems")
print(verse.validation[0].text)
train_text = lm.poem_text(verse.train)
print(f"{len(train_text):,} training characters, {len(set(train_text)):,} different ones")

# %% [markdown]
# One token per character (a **character-level tokenizer**, 字符级分词器). 6,000 different
# characters is a large vocabulary for a small model, and the rarest ones occur once or twice. We
# keep the 3,000 most frequent (they cover 98.9 % of the text) and read every other character as
# one **unknown token**, `□` (the mark Chinese editions print for a lost character).

# %%
data = lm.verse_data()  # tokenizer + train / validation ids
tokenizer = data.tokenizer
print(tokenizer, data.train_ids.shape, data.val_ids.shape)  # (N_train,), (N_val,)
print(tokenizer.encode("床前明月光，"), repr(tokenizer.decode(tokenizer.encode("鬭鸡\n"))))
unknown_share = (data.train_ids == tokenizer.encode(lm.UNKNOWN)).float().mean().item()
print(f"unknown characters: {unknown_share:.1%} of the training text")
assert 0.005 < unknown_share < 0.015

# %% [markdown]
# ## 2. The bar: count tables
#
# Before any network, the simplest models. A **unigram** table predicts each character by how often
# it occurs; a **bigram** table by how often it followed the previous character; a **trigram**
# table uses the two before it. A pair never seen would get probability 0 (an infinite loss), so
# each table mixes in the smaller ones (interpolation, 插值平滑) with weights fitted on a slice of
# the training text. The validation loss is the same cross-entropy a network reports:
# $-\frac{1}{N}\sum_t \log p(c_t \mid \text{what came before})$, in nats.

# %%
vocab = tokenizer.vocab_size
tables = {order: lm.CountTable(data.train_ids, order, vocab) for order in (1, 2, 3)}
baseline = {"uniform guess": math.log(vocab)}
baseline.update(
    {
        name: tables[order].loss(data.val_ids)
        for order, name in ((1, "unigram"), (2, "bigram"), (3, "trigram"))
    }
)
for name, loss in baseline.items():
    print(f"{name:>13}: {loss:.3f} nats")
best_table = min(baseline["unigram"], baseline["bigram"], baseline["trigram"])
assert baseline["trigram"] < baseline["bigram"] < baseline["unigram"] < baseline["uniform guess"]

# %% [markdown]
# What does a bigram table write? It knows which character tends to follow which, and nothing about
# lines:

# %%
sample = tables[2].sample(tokenizer.encode("床前"), 60, seed=0)
print(tokenizer.decode(sample))

# %% [markdown]
# Words appear (pairs it has seen), but the lines have any length: a bigram table cannot count to
# five. That is the bar: a model worth its parameters must score well below the best table, and
# write lines of 5 or 7 characters.
#
# ## 3. The Transformer block
#
# Lesson 08's `TinyAttentionLM` was embeddings → attention → LM head. A model that writes adds:
#
# * **Feed-forward network** (前馈网络): attention only *mixes* the vectors of different
#   positions; a two-layer network then transforms each position's vector on its own:
#   $\mathrm{FFN}(z) = W_2\,\mathrm{GELU}(W_1 z + b_1) + b_2$, hidden width $4 \times d_{model}$.
# * **Residual connection** (残差连接): each sub-layer *adds* its output to its input
#   ($x + f(x)$): it only learns a correction, and the gradient flows straight through.
# * **Layer norm** (层归一化): before each sub-layer, each position's vector is rescaled to mean 0
#   and variance 1 (then a learned scale and shift), which keeps deep stacks trainable.
# * **Several blocks**, one after another.
#
# One **Transformer block** (Transformer 块), in GPT-2's "pre-norm" form:
#
# $$
# h = x + \mathrm{MultiHeadAttention}\big(\mathrm{LN}_1(x)\big), \qquad
# y = h + \mathrm{FFN}\big(\mathrm{LN}_2(h)\big)
# $$


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


shipped = lm.load_checkpoint()  # data/char_lm.pt
config = shipped.config
torch.manual_seed(0)
block = Block(config.d_model, config.context_length, config.num_heads)
x = torch.randn(2, config.context_length, config.d_model)  # (b, T, d_model)
print("block output:", tuple(block(x).shape))  # (b, T, d_model)
for name, part in block.named_children():
    print(f"  {name:>4}: {sum(p.numel() for p in part.parameters()):>7,} parameters")

# %% [markdown]
# The shipped model, `lm.CharTransformer`: token embedding $E$ (one learned vector per
# character) plus a learned position embedding $P$, `num_layers` blocks, a last layer norm, and
# the LM head, which reuses $E$ (**weight tying**, 权重绑定, as in GPT-2):
#
# $$
# x_0 = E[\text{ids}] + P[0..T-1], \qquad x_\ell = \mathrm{Block}_\ell(x_{\ell-1}), \qquad
# \text{logits} = \mathrm{LN}_f(x_L)\, E^\top
# $$

# %%
model = shipped.model
print(config)
print(model)
print(f"{model.num_parameters():,} parameters")

# %% [markdown]
# The same model as a picture, every size read from the loaded model: the path from the ids to
# the logits, with one block drawn in full (the dashed frame), which the model stacks
# `num_layers` times.

# %%
fig = mh.figures.plot_transformer_block(model)  # every size read from the model itself
plt.show()

# %% [markdown]
# ## 4. One part at a time, measured
#
# Which part earns what? `tools/ablation_char_lm.py` trains one model per row from the same seed
# with the same budget (400 steps of 16 windows, `d_model` 128, one block) and removes parts:
# first attention alone with one head, then four heads, then feed-forward, residual connections
# and layer norm are added back. The last row is the shipped model (4 blocks, its own longer
# budget). The records are in `data/char_lm_ablation.json`; `python tools/ablation_char_lm.py
# --row "+ residual"` re-runs one row (about a minute on an idle core).

# %%
rows = lm.load_ablation()  # data/char_lm_ablation.json
for row in rows:
    params = f"{row['parameters']:>10,}" if "parameters" in row else " " * 10
    print(f"{row['name']:>15} {params}  val loss {row['val_loss']:.3f}")

fig, ax = plt.subplots(figsize=(8, 3.6))
label = {
    "bigram table": mh.tr("bigram table", "二元计数表"),
    "one head": mh.tr("one head", "单头"),
    "several heads": mh.tr("several heads", "多头"),
    "+ feed-forward": mh.tr("+ feed-forward", "+ 前馈网络"),
    "+ residual": mh.tr("+ residual", "+ 残差连接"),
    "+ layer norm": mh.tr("+ layer norm", "+ 层归一化"),
    "several blocks": mh.tr("several blocks", "多个块"),
}
names = [str(label.get(row["name"], row["name"])) for row in rows]
losses = [row["val_loss"] for row in rows]
ax.barh(names[::-1], losses[::-1], color="tab:blue")
ax.axvline(
    baseline["trigram"], color="tab:red", linestyle="--", label=mh.tr("trigram table", "三元计数表")
)
ax.set_xlim(4.0, max(losses) + 0.3)
ax.set_xlabel(mh.tr("validation loss (nats)", "验证损失（奈特）"))
ax.set_title(mh.tr("Adding one part at a time", "一次加一个部件"))
ax.tick_params(labelsize=10)
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# Read the table from the top. With this short budget every one-block row stays above the bigram
# table: in 400 steps a single block has not yet learned what the table simply counts. Four heads
# instead of one, and the feed-forward network, change the loss by about 0.01 each; the residual
# connections by 0.08. Layer norm is the largest step of the one-block rows (0.28 nats). The last
# row differs in several ways at once: 4 blocks instead of 1, `d_model` 192 instead of 128,
# dropout 0.1, and 7.5 times as many training windows (1,500 steps of 32 instead of 400 of 16). So
# it does not isolate what the extra blocks earn; it is the one that goes well below every count
# table.
#
# ## 5. The shipped model clears the bar
#
# `tools/train_char_lm.py` trained it with a fixed seed on one CPU thread and wrote
# `data/char_lm.pt`: the weights (in float16, to stay under 5 MB), the tokenizer and the loss of
# every step. `make train-demo` trains it again: it first times a few steps on your machine and
# prints how many minutes the run will take, then trains with the `"sdpa"` backend of the course's
# attention core. That is the same model, and on the CPU the same losses to float32 rounding
# (tested); `benchmarks/char_lm_training.py` measures how much faster it is.

# %%
print(shipped)
model_loss = shipped.val_losses[-1][1]
for name, loss in baseline.items():
    print(f"{name:>13}: {loss:.3f}")
print(
    f"{'the model':>13}: {model_loss:.3f}  ({best_table - model_loss:.2f} nats below the best table)"
)
assert model_loss <= best_table - 0.25

fig, ax = plt.subplots(figsize=(8, 3.6))
ax.plot(
    range(1, len(shipped.losses) + 1),
    shipped.losses,
    alpha=0.6,
    label=mh.tr("training loss", "训练损失"),
)
steps, val = zip(*shipped.val_losses)
ax.plot(steps, val, "o-", label=mh.tr("validation loss", "验证损失"))
ax.axhline(
    baseline["trigram"], color="tab:red", linestyle="--", label=mh.tr("trigram table", "三元计数表")
)
ax.set_ylim(4.0, 8.2)
ax.set_xlabel(mh.tr("step", "步数"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("The shipped model (make train-demo)", "课程自带的模型（make train-demo）"))
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# ## 6. It writes verse
#
# We give the model the first couplet of eight validation poems (poems it never saw) and let it
# continue, with temperature 0.8 and top-k 20, never drawing the unknown token. Then
# `lm.verse_shape` counts, on what the model wrote: the share of half-lines with 5 or 7
# characters, the share of lines that are two equal halves (`XXXXX，XXXXX。`), and the share of its
# 8-character pieces that occur verbatim in the training text (copying).

# %%
banned = tokenizer.encode(lm.UNKNOWN)  # (1,): the unknown token is never drawn
settings = {"temperature": 0.8, "top_k": 20, "banned": banned}
firsts = [poem.lines[0] + "\n" for poem in verse.validation[:8]]
written = []
for seed, first in enumerate(firsts):
    prompt = tokenizer.encode(first)  # (T,): the first couplet and its newline
    new = config.context_length - len(first)  # fill the window: T + new = 64
    out = lm.generate(model, prompt, new, seed=seed, **settings)  # (T + new,)
    poem_ids = out[len(first) :]  # (new,): what the model wrote
    written.append(tokenizer.decode(poem_ids).split("\n\n")[0] + "\n")  # up to the poem's end
print(first + written[-1])
shape = lm.verse_shape("".join(written), train_text)
print(shape)
assert shape.half_lines >= 0.85 and shape.couplets >= 0.80 and shape.copied <= 0.10

# %% [markdown]
# Now a line of your own. Li Bai's 床前明月光 starts it; change `first_line` and run the cell again.

# %%
first_line = "床前明月光，"
out = lm.generate(model, tokenizer.encode(first_line), 40, seed=1, **settings)  # (6 + 40,)
print(tokenizer.decode(out).split("\n\n")[0])

# %% [markdown]
# ## 7. Generation of any length
#
# The model has learned positions $0 \ldots$ `context_length` $- 1$ only. To write more,
# `lm.generate` slides the window, as nanoGPT crops its input: each step reads the last
# `context_length` characters at positions $0 \ldots 63$. With the KV cache, the first window is
# written one token per step; once the window slides, every token moves to a new position, so
# its cached keys (made with the old position embedding) no longer hold, and each step re-reads
# the window -- exactly what the uncached path does. Same seed, same characters:

# %%
prompt = tokenizer.encode(first_line)  # (6,)
long_cached = lm.generate(model, prompt, 150, seed=2, use_cache=True, **settings)  # (156,)
long_plain = lm.generate(model, prompt, 150, seed=2, use_cache=False, **settings)  # (156,)
assert long_cached.shape == (len(first_line) + 150,) and torch.equal(long_cached, long_plain)
print(tokenizer.decode(long_cached))

# %% [markdown]
# Within the first window the cache saves the re-computation. Both speeds are measured here, in
# this one run, writing 16 poems at once (your numbers will differ; CI only checks that the cache
# is faster):


# %%
# NBVAL_IGNORE_OUTPUT
def tokens_per_second(use_cache, batch=16, new_tokens=56, repeats=3):
    prompts = prompt.expand(batch, -1)  # (batch, T): 16 poems at once
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        lm.generate(model, prompts, new_tokens, seed=0, use_cache=use_cache)  # (batch, T + new)
        times.append(time.perf_counter() - start)
    return batch * new_tokens / sorted(times)[len(times) // 2]  # median run


# One run without the cache is long enough to time; the fast path takes the median of three.
speed_without, speed_with = tokens_per_second(False, repeats=1), tokens_per_second(True)
print(f"without cache: {speed_without:6.0f} tokens/s")
print(f"with cache:    {speed_with:6.0f} tokens/s   ({speed_with / speed_without:.1f}x)")
assert speed_with > speed_without

# %% [markdown]
# ## 8. What the heads look at, on held-out poems
#
# `lm.focus_on_texts` measures, for every head, the average share of attention on five kinds of
# key, over 200 validation poems: the **previous** character (key $t-1$), the **line start** (the
# newline before the query's line), the **punctuation**, the **parallel** character (for a query in
# the second half of a couplet, the character at the same place in the first half: 疑 → 床 in
# 床前明月光，疑是地上霜), and **parallel next** (the first half's character one place further on:
# the partner of the character being *predicted*). The last row is what spreading the weight
# evenly over the past would give.

# %%
held_out = ["\n" + p.text[: config.context_length - 1] for p in verse.validation[:200]]
focus = lm.focus_on_texts(model, tokenizer, held_out)
print(focus.table())
print(focus.strongest_heads())  # per category: the head with the largest share
shares, base = focus.shares, focus.baseline  # (num_layers, num_heads, 5), (5,)
assert focus.strongest("parallel next") == (3, 2) and shares[3, 2, 4] > 10 * base[4]
assert shares[..., 3].max() < 2 * base[3]  # no head on the partner of the query's own character
assert focus.strongest("previous") == (0, 1) and shares[0, 1, 0] > 5 * base[0]
assert focus.strongest("line start") == (1, 0) and shares[1, 0, 1] > 5 * base[1]
assert focus.strongest("punctuation") == (2, 3) and shares[2, 3, 2] > 4 * base[2]

# %% [markdown]
# The numbers, against the uniform row:
#
# * **Parallel next:** block 4 head 3 gives 0.64 of its weight to the character of the first half
#   that pairs with the one about to be predicted, ten times the uniform 0.06. In 床前明月光，
#   疑是地上霜, when the model is about to write 是, this head looks at 前. A head has found the
#   couplet's parallelism (对仗), measured on poems the model never saw.
# * **Parallel** (the partner of the query's own character): no head; the largest share is 0.08,
#   close to the uniform 0.05. The head looks one place further on, at the partner of what comes
#   next, which is the one that helps to predict it.
# * **Previous character:** block 1 heads 1 and 2 (0.41 and 0.46; uniform 0.08).
# * **Line start:** block 2 head 1 gives 0.50 to the newline that began the line (uniform 0.08).
# * **Punctuation:** block 3 head 4 gives 0.56 (uniform 0.12): a comma or a full stop tells where
#   in the line the next character falls.
#
# The heatmap shows the couplet head on one held-out poem; the table under it gives the character
# at each position (the axes show the characters when a Chinese font is installed, positions
# otherwise).

# %%
poem = "\n" + verse.validation[3].text
layer, head = focus.strongest("parallel next")
weights = lm.attention_on(model, tokenizer, poem)  # (num_layers, num_heads, T, T)
axis = lm.char_axis(poem)
with plt.rc_context(axis.rc):
    fig = mh.plot_attention(
        weights[layer, head],
        axis.labels,
        title=mh.tr(f"Block {layer + 1}, head {head + 1}", f"第 {layer + 1} 块的头 {head + 1}"),
    )
    plt.show()
print(lm.char_table(poem))

# %% [markdown]
# ## Summary
#
# * Count tables set the bar: unigram, bigram and trigram tables on the same split.
# * A Transformer block: layer norm → `MultiHeadAttention` → residual, layer norm → feed-forward →
#   residual. Measured one part at a time at a short budget, layer norm earns the most; only
#   several blocks trained longer beat the count tables.
# * The shipped model scores well below the best count table, writes lines of two equal halves,
#   and copies almost none of its 8-character pieces.
# * Past `context_length` the window slides; the cached and the uncached paths give the same text.
# * Measured on held-out poems, heads look at the previous character, the line start, the
#   punctuation and, in the couplet's first half, the partner of the character about to be
#   written; no head looks at the partner of its own character (the table in section 8).
#
# ## Exercises
#
# Solutions: `solutions/12_tiny_char_lm_solutions.ipynb`.
#
# **Exercise 1.** A smaller model than ours has 3 blocks with 4 heads of `head_dim` 32. After it
# has processed 100 tokens (batch 1), how many numbers do its KV caches hold in total?

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
# shipped model on `poem`) the punctuation share: for each query, the total weight on keys that
# are in `lm.PUNCTUATION`; then the mean over the queries that have at least one punctuation mark
# at or before them. Shape `(num_heads,)`.

# %%
weights_ex = weights[1]  # (num_heads, T, T)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, poem)

# %% [markdown]
# **Exercise 4 (your own text).** `lm.text_data(text)` builds a tokenizer and a train /
# validation split from any string (at least 1,000 characters). Train a model on the Song ci
# (宋词) of the same package with `lm.train_char_lm(config, data=own)`, where `config` is an
# `lm.CharLMConfig` small enough for about a minute on one core (for example `d_model=128`,
# `num_layers=2`, `steps=300`), and pass the run to the checker: its validation loss must beat the
# unigram count table of that text. Replace `song_ci` by a text of your own if you like.

# %%
song_ci = lm.load_song_ci()
own = lm.text_data(song_ci[:200_000])
print(own.tokenizer, own.train_ids.shape, own.val_ids.shape)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_own_text(answer, own)
