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
# # 07 · Inspecting attention heads (检查注意力头)
#
# Lesson 06 built `MultiHeadAttention`: one big projection, split into heads. Each **attention
# head** (注意力头) computes its own (T, T) matrix of **attention weights** (注意力权重). This
# lesson opens the block up and looks at those matrices, one per head, and asks what they can and
# cannot tell us.
#
# **Learning goals**
# 1. Get the per-head weights with `return_weights=True` and draw them as **heatmaps** (热力图),
#    one per head.
# 2. Summarise each head by its **entropy** (熵): 0 for a head that looks at one token, and at most
#    $\frac{1}{T}\sum_i \log(i+1)$ for a causal head that spreads evenly.
# 3. Move the number of heads, the dropout rate and the seed with an interactive explorer.
# 4. Know the limits: attention weights are not explanations, and heads can be **redundant**
#    (冗余). (Lesson 08 trains models and tests this with an experiment.)
#
# **Prerequisites:** lesson 06 (`06_multihead_split`): `MultiHeadAttention`, `num_heads`,
# `head_dim = d_out // num_heads`.
# **Time:** about 60 minutes (reading, running 17 code cells, 3 exercises; the rule is in lesson
# 00).
#
# **Shape contract:** `mha(x, return_weights=True)` with `x` `(b, T, d_in)` returns
# `(out, weights)`: `out` `(b, T, d_out)`, `weights` `(b, num_heads, T, T)`;
# `mh.head_entropy(weights)` → `(num_heads,)`.

# %%
import matplotlib.pyplot as plt
import torch

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. One map per head: `return_weights=True`
#
# `MultiHeadAttention.forward` has a debugging switch: with `return_weights=True` it also returns
# the softmax weights of every head, shape `(b, num_heads, T, T)`. We use the book's setting from
# lesson 06 (seed 123, `d_in=3`, `d_out=2`, 2 heads, so `head_dim=1`) on the book's batch.

# %%
journey = mh.load_journey()
words = journey.words
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)

torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.0, num_heads=2)
with torch.no_grad():
    out, weights = mha(batch, return_weights=True)  # (2, 6, 2), (2, 2, 6, 6)
print("out:    ", tuple(out.shape))
print("weights:", tuple(weights.shape), "= (b, num_heads, T, T)")
print(weights[0])  # (num_heads, T, T): the two heads of the first sequence

# %% [markdown]
# The outputs match the book's printed values (lesson 06), so these are the weights of the very
# block the book builds. Each row is a query (the token that looks), each column a key (the token
# looked at); rows sum to 1 and the causal mask zeroes everything above the diagonal.

# %%
torch.testing.assert_close(
    out[0], journey.reference["multihead_seed123_d_out2_heads2"], atol=1e-4, rtol=0
)
torch.testing.assert_close(weights.sum(dim=-1), torch.ones(2, 2, 6))
assert torch.equal(weights.triu(diagonal=1), torch.zeros(2, 2, 6, 6))
print(
    mh.say(
        "matches the book; rows sum to 1; nothing above the diagonal",
        "与书中一致，每行之和为 1，对角线以上全为 0",
    )
)

# %%
fig = mh.plot_attention_heads(
    weights,
    words,
    suptitle=mh.tr("Book sentence, 2 heads (seed 123)", "书中的句子，2 个头（种子 123）"),
)
plt.show()

# %% [markdown]
# The returned weights are taken **before dropout** (随机失活). Dropout only changes what is
# multiplied with the values, so the weights you inspect are the same in `train()` and `eval()`
# mode; lesson 04 showed what dropout does to them.

# %%
dropping = mh.MultiHeadAttention(d_in=3, d_out=2, context_length=6, dropout=0.5, num_heads=2)
dropping.load_state_dict(mha.state_dict())
dropping.train()
with torch.no_grad():
    _, weights_train = dropping(batch, return_weights=True)  # (2, 2, 6, 6)
assert torch.equal(weights_train, weights)
print(
    mh.say("same weights in train mode with dropout 0.5:", "train 模式、dropout 0.5 时权重不变："),
    torch.equal(weights_train, weights),
)

# %% [markdown]
# ## 2. Entropy (熵): one number per head
#
# A heatmap per head is fine for 2 heads; GPT-2 small has 12 heads in each of 12 layers. A common
# summary, often used as a rough measure of head importance, is the **entropy** of each row of
# weights, in nats (natural log):
#
# $$H(\text{row}) = -\sum_j w_j \log w_j, \qquad 0 \log 0 = 0.$$
#
# * A row that puts all its weight on one key (one-hot) has $H = 0$: a sharp, focused head.
# * A row spread evenly over $n$ keys has $H = \log n$, the most possible for $n$ keys.
# * In a **causal** head, row $i$ (counting from 0) can only see $i + 1$ keys, so its maximum is
#   $\log(i + 1)$, and a head's mean over $T$ rows is at most $\frac{1}{T}\sum_{i<T} \log(i+1)$
#   (1.0965 for $T = 6$), not $\log T$.
#
# `mh.head_entropy(weights)` returns the mean row entropy of each head, `(num_heads,)`. It uses
# `torch.special.xlogy(w, w)`, which is exactly 0 where `w = 0`, instead of the common
# `log(w + 1e-9)` fudge. First, the two extremes:

# %%
from mhsa_helpers.inspection import uniform_causal_entropy

one_hot = torch.eye(6).unsqueeze(0)  # (1, T, T): every token looks only at itself
lower = torch.tril(torch.ones(6, 6))
uniform_causal = (lower / lower.sum(dim=-1, keepdim=True)).unsqueeze(0)  # (1, T, T)
mh.show_table(
    [
        (mh.say("one-hot head", "独热的头"), mh.head_entropy(one_hot)),
        (mh.say("uniform causal head", "均匀的因果头"), mh.head_entropy(uniform_causal)),
        (
            mh.say("mean of log(i+1), T=6", "log(i+1) 的平均值，T=6"),
            f"{uniform_causal_entropy(6):.4f}",
        ),
    ]
)
assert torch.equal(mh.head_entropy(one_hot), torch.zeros(1))
torch.testing.assert_close(
    mh.head_entropy(uniform_causal), torch.tensor([1.0965]), atol=1e-4, rtol=0
)

# %% [markdown]
# Now the book's two heads (the mean over both sequences of the batch and all rows):

# %%
entropy_book = mh.head_entropy(weights)  # (num_heads,)
print(mh.say("entropy per head:", "每个头的熵："), entropy_book)
print(mh.say("maximum for T=6:", "T=6 时的最大值："), f"{uniform_causal_entropy(6):.4f}")
assert (entropy_book <= uniform_causal_entropy(6) + 1e-6).all()

# %%
fig = mh.figures.plot_head_entropy(
    entropy_book,
    uniform_causal_entropy(6),
    title=mh.tr("Book sentence, 2 heads", "书中的句子，2 个头"),
)
plt.show()

# %% [markdown]
# Both heads sit right at the maximum: they spread their attention almost evenly. That is not a
# property of attention, it is a property of *this* block: the weights are untrained, and the book's
# embeddings are small (entries below 1), so every score $q \cdot k / \sqrt{d_k}$ is close to 0
# and the softmax of near-equal scores is near-uniform.

# %% [markdown]
# ## 3. A longer sentence
#
# The book gives embeddings for only six words. For a longer sentence we make toy embeddings
# deterministically: `mh.ui.sentences.embed_words` gives every distinct word one fixed random vector in
# $[0, 1)^3$ (the same on every machine, and the same for a word each time it appears). We
# multiply them by 3 so that the scores are less tiny. Four heads, width `d_out = 24`
# (`head_dim = 6`); for comparison the cell also runs the same block on the embeddings without
# the factor 3:

# %%
from mhsa_helpers.ui.sentences import LONGER_SENTENCE, embed_words

long_words = LONGER_SENTENCE.split()
long_inputs = 3.0 * embed_words(long_words)  # (T, d_in) = (11, 3)
print(LONGER_SENTENCE, "->", tuple(long_inputs.shape))

torch.manual_seed(123)
mha_long = mh.MultiHeadAttention(d_in=3, d_out=24, context_length=11, dropout=0.0, num_heads=4)
with torch.no_grad():
    _, weights_long = mha_long(long_inputs.unsqueeze(0), return_weights=True)  # (1, 4, 11, 11)
    _, weights_x1 = mha_long(embed_words(long_words).unsqueeze(0), return_weights=True)
entropy_long = mh.head_entropy(weights_long)  # (4,)
entropy_x1 = mh.head_entropy(weights_x1)  # (4,): the same heads, embeddings not scaled
mh.show_table(
    [
        (mh.say("entropy per head, x3", "每个头的熵，×3"), entropy_long),
        (mh.say("entropy per head, x1", "每个头的熵，x1"), entropy_x1),
        (mh.say("maximum for T=11", "T=11 时的最大值"), f"{uniform_causal_entropy(11):.4f}"),
    ]
)
assert (entropy_long < entropy_x1).all()  # the factor 3 sharpens every head a little
assert (entropy_long > 0.9 * uniform_causal_entropy(11)).all()  # all stay close to even

# %% [markdown]
# The factor 3 moves the entropies from 1.5899–1.5909, all within 0.1 % of the maximum 1.5911, to
# 1.47–1.58, 92–99 % of it: the heads get a little sharper and a little different from each
# other, but all four stay close to even, and their maps below look much alike. Untrained heads
# do not yet differ in any interesting way; lesson 08 trains them.
#
# For bigger grids we draw with `mh.plot_attention_grid`: the same panels as
# `plot_attention_heads` (one per head, one colour scale), without the numbers in the cells, and
# fast enough for the explorer below to re-draw on every slider move.

# %%
fig = mh.plot_attention_grid(
    weights_long[0], long_words, title=mh.tr("Longer sentence, 4 heads", "更长的句子，4 个头")
)
plt.show()

# %% [markdown]
# Look at the columns of the repeated words "the" (positions 0, 4, 7 — "The" is lowercased for
# the embedding) and "mat" (5 and 8). A query gives the same weight to every copy of a word:
# their keys are equal because the embeddings are equal, and nothing in this block says *where*
# a token is. Among the keys a query may see, attention
# ignores their order: equal tokens get equal weight. The causal mask is the only order signal,
# so GPT models add a **positional embedding** (位置嵌入) to the tokens (lesson 08 does).

# %%
the_0 = weights_long[0, :, 7:, 0]  # (h, 4): key "The", queries 7..10
the_4, the_7 = weights_long[0, :, 7:, 4], weights_long[0, :, 7:, 7]  # (h, 4) each
torch.testing.assert_close(the_0, the_7, atol=1e-6, rtol=0)
torch.testing.assert_close(the_4, the_7, atol=1e-6, rtol=0)
torch.testing.assert_close(weights_long[0, :, 8:, 5], weights_long[0, :, 8:, 8], atol=1e-6, rtol=0)
print(
    mh.say(
        "head 1: key 'the' at positions 0, 4, 7 (rows), seen by queries 7..10 (columns):",
        "头 1：位置 0、4、7 上的键“the”（行），被查询 7..10 看到的权重（列）：",
    )
)
print(torch.stack([the_0[0], the_4[0], the_7[0]]))  # (3, 4)

# %% [markdown]
# ## 4. The explorer
#
# Move the sliders. `heads` changes `num_heads` of a fresh `MultiHeadAttention(3, 24, ...)` with
# the same seed, so the weight matrices stay the same and only the way their 24 columns are split
# into heads changes. 5 and 7 heads do not divide 24: the explorer says so instead of plotting
# (that is the block's one hard constraint, `d_out % num_heads == 0`). `dropout` acts only in
# `train` mode: the plot then shows the weights *after* dropout, what the values are multiplied by
# (zeros, and survivors scaled by $1/(1-p)$). `scale` multiplies the embeddings; `seed` draws other
# weights; `sentence` switches to the longer sentence.
#
# (The widget needs a live kernel. The course website shows a version without one: its heads
# and dropout sliders swap pictures drawn when the site was built.)

# %%
# NBVAL_IGNORE_OUTPUT
explorer = mh.attention_explorer(heads=2, scale=3.0)
explorer

# %% [markdown]
# What a slider move does, done from code (this is also how the tests drive the widget). The
# explorer's `.result` holds the last view: the weights, what is shown, the entropies and the
# message.

# %%
explorer.controls["heads"].value = 4  # the same as dragging the "heads" slider to 4
view = explorer.result
print(view.message)
print(
    mh.say("weights:", "权重："),
    tuple(view.weights.shape),
    mh.say(" entropy:", " 熵："),
    view.entropy,
)
assert view.weights.shape == (4, 6, 6) and view.head_dim == 6

explorer.controls["heads"].value = 5  # does not divide d_out = 24
print(explorer.result.message)
assert not explorer.result.ok

explorer.controls["heads"].value = 2
explorer.controls["mode"].value = "train"
explorer.controls["dropout"].value = 0.5
view = explorer.result
kept = view.shown != 0
torch.testing.assert_close(view.shown[kept], 2 * view.weights[kept])  # survivors x 1/(1-0.5)
print(view.message)
visible = ~torch.ones(6, 6).triu(1).bool()  # the 21 positions the causal mask lets through
dropped = 1 - kept[:, visible].float().mean().item()
print(mh.say("share of visible weights dropped:", "可见权重中被丢弃的比例："), f"{dropped:.2f}")

# %% [markdown]
# ## 5. What heads can and cannot tell us
#
# "Different heads learn different aspects of the input" is a widely repeated claim, and the book
# says so too; but the book gives no evidence for what any particular head learns, and
# **interpretability** (可解释性) research still argues about it. Treat the pictures with care:
#
# * **Weights are not explanations.** A head can attend strongly to a token whose value vector is
#   tiny, or whose output `out_proj` mostly ignores. The weights say where a head looks, not what
#   it passes on or whether the prediction depends on it.
# * **Entropy is not importance.** Low entropy means focused, not useful.
# * **Heads can be redundant** (冗余): several heads may carry the same information, so that the
#   model barely notices when one is gone.
#
# The heads in this lesson are untrained, so there is nothing yet to explain. Lesson 08 trains a
# tiny model, and then tests these claims with an **ablation** (消融): switch one head off and
# measure how much worse the model gets.

# %% [markdown]
# ## Summary
#
# * `mha(x, return_weights=True)` returns `(out, weights)` with `weights` `(b, num_heads, T, T)`,
#   taken after the softmax and before dropout; `mh.plot_attention_heads(weights, words)` draws
#   one heatmap (热力图) per head.
# * **Entropy** (熵) of a row, $-\sum_j w_j \log w_j$ with $0 \log 0 = 0$ (`torch.special.xlogy`):
#   0 for one-hot rows, $\log(i+1)$ for a uniform causal row $i$; `mh.head_entropy` averages it
#   per head.
# * Untrained heads on small embeddings are nearly uniform; without positional information, equal
#   tokens get equal weight wherever they are.
# * Attention weights are not explanations; low entropy is not importance; heads can be
#   redundant. Ablations (lesson 08) test what pictures only suggest.

# %% [markdown]
# ## Exercises
#
# Solutions: `solutions/07_inspecting_heads_solutions.ipynb`.
#
# **Exercise 1.** A query may see 6 keys. Its row of weights puts the same weight on some of
# them and 0 on the others, and its entropy is 1.3863 nats. On how many keys does it put its
# weight? (A number. Write the entropy of n equal weights first.)

# %%
import mhsa_helpers.exercises

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_keys_from_entropy(answer)

# %% [markdown]
# **Exercise 2.** `mh.head_entropy` gives one number per head, a mean over the rows. Compute the
# numbers it averages: the entropy of every row of every head of `weights_ex` (a new block with 3
# heads, `head_dim = 8`, and other weights, seed 7, on the longer sentence), shape `(3, 11)`.
# Mind the zeros above the diagonal: `0 * log(0)` must count as 0.

# %%
torch.manual_seed(7)
mha_ex = mh.MultiHeadAttention(d_in=3, d_out=24, context_length=11, dropout=0.0, num_heads=3)
with torch.no_grad():
    _, weights_ex = mha_ex(long_inputs.unsqueeze(0), return_weights=True)  # (1, 3, 11, 11)
weights_ex = weights_ex[0]  # (num_heads, T, T) = (3, 11, 11)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_head_entropy(answer, weights_ex)

# %% [markdown]
# **Exercise 3.** Which head of `weights_ex` is the sharpest (lowest mean row entropy)? Give its
# 0-based index as an int. Then draw its heatmaps with `mh.plot_attention_grid(weights_ex, long_words)`:
# do you agree?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_sharpest_head(answer, weights_ex)

# %% [markdown]
# ### Check (for CI; collapsed)
#
# This cell proves what the lesson relies on, so that a change to the package cannot silently
# break the story. It comes after the exercises because it computes an entropy by hand (exercise
# 2): try the exercises first. Open it if you are curious; you can skip it.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# mh.head_entropy is the formula of section 2.
by_hand = -torch.special.xlogy(weights_long, weights_long).sum(dim=-1).mean(dim=(0, 2))  # (4,)
torch.testing.assert_close(mh.head_entropy(weights_long), by_hand)
# "Equal weight to every copy of a word" holds to float rounding (1e-6), not bit for bit: the
# two keys are equal, but the softmax sums its row in one order.
print(
    mh.say("the two 'the' columns differ by less than 1e-6:", "两个“the”列的差异小于 1e-6："),
    (the_4 - the_7).abs().max().item() < 1e-6,
)
