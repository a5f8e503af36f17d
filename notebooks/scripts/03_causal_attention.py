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
# # 03 · Causal attention (因果注意力)
#
# A GPT model is trained to predict the next token. If, while computing position $i$, attention
# could look at tokens after $i$, the model would read the answer off the page. **Causal
# attention** (因果注意力 / 掩码注意力, also called masked attention) lets each token attend only
# to itself and the tokens before it. This lesson builds the **causal mask** (因果掩码) twice:
# the book's three-step method that makes the idea plain, and the one-step `-inf` method that
# real code uses.
#
# **Learning goals**
# 1. Mask the future with a **lower-triangular matrix** (下三角矩阵) and **renormalize**
#    (重新归一化) the rows: the three-step method.
# 2. Answer the **information leakage** (信息泄露) question: the softmax of step 1 saw the
#    future scores, yet nothing of them survives. Show it algebraically and numerically.
# 3. Mask with `-inf` before the softmax (the one-step method) and check that both methods agree.
# 4. See the mathematical trick behind it: the masked softmax of zero scores averages each
#    token's past, and with real scores it is causal attention, a weighted average of the past.
#
# **Prerequisites:** lesson 02 (`02_trainable_qkv`): queries, keys, values, scaled softmax,
# `SelfAttentionV2`.
# **Time:** about 85 minutes (reading, running 26 code cells, 1 prediction, 1 exercise, 1 build-it;
# the rule is in lesson 00).
#
# **Shape contract:** scores `(T, T)` → causal weights `(T, T)`, zero above the diagonal, each
# row summing to 1 → context vectors `(T, d_out)`.

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. Where we start: attention that sees everything
#
# We take the `SelfAttentionV2` of lesson 02 with the book's seed 789 and compute its attention
# weights exactly as its `forward` does.

# %%
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
words = journey.words

torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in=3, d_out=2)

with torch.no_grad():
    queries = sa_v2.W_query(inputs)  # (T, d_out)
    keys = sa_v2.W_key(inputs)  # (T, d_out)
    values = sa_v2.W_value(inputs)  # (T, d_out)
attn_scores = queries @ keys.T  # (T, T)
d_k = keys.shape[-1]  # 2
attn_weights = torch.softmax(attn_scores / d_k**0.5, dim=-1)  # (T, T)
print(attn_weights)

# %%
torch.testing.assert_close(
    attn_weights, journey.reference["seed789_attn_weights"], atol=1e-4, rtol=0
)
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown]
# Look at the row of "journey" (row 2): [0.2041, 0.1659, 0.1662, 0.1496, 0.1665, 0.1477]. It
# gives weight to "starts", "with", "one", "step", all of which come *after* "journey". When
# the model generates text, those tokens do not exist yet. Everything above the diagonal of
# this heatmap has to go.

# %%
import matplotlib.pyplot as plt

fig = mh.plot_attention(
    attn_weights,
    words,
    title=mh.tr("Before masking: every token sees all", "掩码之前：每个词元都能看到全部"),
)
plt.show()

# %% [markdown]
# The mask acts on the scores, so here is what it must do to them: every score of a query with a
# *later* key (grey) must be ignored; only the scores on and below the diagonal may count.

# %%
fig = mh.figures.plot_causal_scores(attn_scores / d_k**0.5, words)
plt.show()

# %% [markdown]
# ## 2. The three-step method
#
# 1. softmax as usual (done above);
# 2. multiply by a lower-triangular matrix of ones: entries above the diagonal become 0;
# 3. divide each row by its new sum, so that rows sum to 1 again.
#
# `torch.tril` ("triangle, lower") keeps the diagonal and everything below it:

# %%
context_length = attn_scores.shape[0]  # T = 6
mask_simple = torch.tril(torch.ones(context_length, context_length))  # (T, T)
print(mask_simple)

# %%
masked_simple = attn_weights * mask_simple  # (T, T), zeros above the diagonal
print(masked_simple)

# %% [markdown]
# The rows no longer sum to 1 (row 1 keeps only 0.1921). Step 3 fixes that:

# %%
row_sums = masked_simple.sum(dim=-1, keepdim=True)  # (T, 1)
masked_simple_norm = masked_simple / row_sums  # (T, T)
print(masked_simple_norm)

# %%
torch.testing.assert_close(
    masked_simple_norm, journey.reference["seed789_masked_renormalized"], atol=1e-4, rtol=0
)
torch.testing.assert_close(masked_simple_norm.sum(dim=-1), torch.ones(context_length))
print(
    mh.say(
        "matches the book's printed values; every row sums to 1",
        "与书中印出的数值一致，每一行之和都是 1",
    )
)

# %% [markdown]
# "journey" now attends only to "Your" and itself: [0.5517, 0.4483, 0, 0, 0, 0], as printed in
# the book. The last row ("step" may see everybody) did not change at all.
#
# ## 3. Did the future leak in?
#
# Something should bother you. Step 1's softmax divided by a sum over the *whole* row, future
# scores included. Did the future sneak into the weights through that denominator?
#
# No. Write $s_j$ for the scaled scores of row $i$ and $S = \sum_{k=1}^{T} e^{s_k}$ for the full
# denominator. For a kept position $j \le i$:
#
# $$\text{step 1: } p_j = \frac{e^{s_j}}{S}, \qquad \text{step 3: }
# \frac{p_j}{\sum_{k \le i} p_k} = \frac{e^{s_j} / S}{\sum_{k \le i} e^{s_k} / S}
# = \frac{e^{s_j}}{\sum_{k \le i} e^{s_k}}.$$
#
# $S$, the only place the future appeared, cancels. What remains is **the softmax over the
# unmasked scores only**. Check it row by row:

# %%
scaled_scores = attn_scores / d_k**0.5  # (T, T)
for i in range(context_length):
    only_past = torch.softmax(scaled_scores[i, : i + 1], dim=-1)  # (i + 1,)
    torch.testing.assert_close(masked_simple_norm[i, : i + 1], only_past)
print(
    mh.say(
        "each row of the three-step result == softmax over that row's past and present scores",
        "三步法结果的每一行 == 对该行过去和当前分数做的 softmax",
    )
)

# %% [markdown]
# ## 4. The one-step method: `-inf` before the softmax
#
# If the answer is "softmax over the unmasked scores only", we can compute that directly. Set
# the future scores to $-\infty$ and take the softmax: $e^{-\infty} = 0$, so they get weight 0
# and drop out of the denominator; the rows sum to 1 by construction, no renormalization.
#
# `torch.triu(..., diagonal=1)` ("triangle, upper", starting one above the diagonal) marks the
# positions to hide; `masked_fill` writes `-inf` where the mask is `True`. The offset counts both
# ways: 0 is the diagonal itself, a positive `diagonal` moves the border up, a negative one down
# (`torch.tril(..., diagonal=-1)` keeps only what lies strictly below the diagonal, as printed
# under the mask).

# %%
mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)  # (T, T), 1 = future
print(mask)
print(torch.tril(torch.ones(4, 4), diagonal=-1))  # (4, 4): strictly below the diagonal
masked = attn_scores.masked_fill(mask.bool(), -torch.inf)  # (T, T)
print(masked)

# %%
attn_weights_causal = torch.softmax(masked / d_k**0.5, dim=-1)  # (T, T)
print(attn_weights_causal)

# %% [markdown]
# The same matrix as the three-step method:

# %%
torch.testing.assert_close(attn_weights_causal, masked_simple_norm)
torch.testing.assert_close(
    attn_weights_causal, journey.reference["seed789_masked_renormalized"], atol=1e-4, rtol=0
)
largest_difference = (attn_weights_causal - masked_simple_norm).abs().max()
assert largest_difference < 1e-6
print(
    mh.say("largest difference below 1e-6:", "最大差异小于 1e-6："), bool(largest_difference < 1e-6)
)

# %% [markdown]
# Equal to float precision (the collapsed check cell at the end of the lesson looks at the last
# bits). Both paths side by side, drawn from our scaled scores: the three steps on top, the
# `-inf` fill and one softmax below, ending in the same matrix.

# %%
fig = mh.figures.plot_mask_paths(attn_scores / d_k**0.5, words)
plt.show()

# %% [markdown]
# The one-step method is what every implementation uses: one `masked_fill` instead of a multiply,
# a sum and a divide. The `-inf` trick will come back when a GPT model generates text: **top-k
# sampling** (top-k 采样) sets every score except the k largest to `-inf` before the softmax, so
# only those k tokens can be picked.

# %% [markdown]
# ## 5. The mathematical trick: causal attention is an average of the past
#
# Andrej Karpathy's lecture "Let's build GPT" looks at the causal mask from another side. Take the
# simplest thing a token could do with its past: the plain **average** of itself and every token
# before it. Counting tokens from 1, token $i$ gets
#
# $$\bar{x}^{(i)} = \frac{1}{i} \sum_{j=1}^{i} x^{(j)} .$$
#
# First with a loop over the six embeddings (the code counts from 0: its row `i` is token $i + 1$
# of the formula):

# %%
average_loop = torch.zeros(context_length, 3)  # (T, d_in)
for i in range(context_length):
    average_loop[i] = inputs[: i + 1].mean(dim=0)  # (d_in,): the mean of rows 0..i
print(average_loop)

# %% [markdown]
# The loop is one matrix product. Divide each row of `torch.tril(torch.ones(T, T))` (the
# `mask_simple` of section 2) by its sum: row $i$ holds $1/i$ in its first $i$ entries and 0 after
# them, so multiplying it with the inputs averages exactly tokens $1..i$:
#
# $$\bar{X} = W X, \qquad W_{ij} = \begin{cases} 1/i & j \le i \\ 0 & j > i \end{cases}$$

# %%
ones_below = torch.tril(torch.ones(context_length, context_length))  # (T, T)
average_weights = ones_below / ones_below.sum(dim=-1, keepdim=True)  # (T, T), rows sum to 1
average_matmul = average_weights @ inputs  # (T, T) @ (T, d_in) -> (T, d_in)
print(average_weights)
assert torch.equal(ones_below, mask_simple)  # the matrix of the three-step method
torch.testing.assert_close(average_matmul, average_loop)  # loop == matrix product

# %% [markdown]
# And $W$ is a softmax. Start from scores that are all 0 (no token prefers any other), hide the
# future with $-\infty$ as in section 4, and take the softmax of every row: the $i$ visible
# entries become $e^0 = 1$, the hidden ones $e^{-\infty} = 0$, so each row is $1/i$ on the past
# and 0 on the future, the same matrix:
#
# $$W = \operatorname{softmax}\big(\operatorname{mask}(\mathbf{0})\big), \qquad
# \operatorname{mask}(S)_{ij} = \begin{cases} S_{ij} & j \le i \\ -\infty & j > i
# \end{cases}$$

# %%
zero_scores = torch.zeros(context_length, context_length)  # (T, T): no preferences yet
average_softmax = torch.softmax(zero_scores.masked_fill(mask.bool(), -torch.inf), dim=-1)  # (T, T)
print(average_softmax)
assert torch.equal(average_softmax, average_weights)  # softmax over -inf == tril / row sums
torch.testing.assert_close(average_softmax @ inputs, average_loop)  # all three agree

# %% [markdown]
# **Causal attention is that average with learned preferences.** Put the scaled scores
# $q^{(i)} \cdot k^{(j)} / \sqrt{d_k}$ of `sa_v2` where the zeros were, and the same masked
# softmax gives the causal weights of section 4; multiply them with the values instead of the
# inputs, and every token gets a **weighted average** (加权平均) of the values of its past,
# weighted by how well its query matches each key:
#
# $$Z = \operatorname{softmax}\Big(\operatorname{mask}\big(QK^\top / \sqrt{d_k}\big)\Big)\,V .$$

# %%
scored = torch.softmax((attn_scores / d_k**0.5).masked_fill(mask.bool(), -torch.inf), dim=-1)
torch.testing.assert_close(scored, attn_weights_causal)  # (T, T): section 4's weights
context_causal = scored @ values  # (T, T) @ (T, d_out) -> (T, d_out)
print(mh.say("plain average, row 'starts':", "简单平均，“starts”这一行："), average_weights[2])
print(mh.say("causal weights, row 'starts':", "因果权重，“starts”这一行："), scored[2])
print(context_causal)

fig, (ax_average, ax_scored) = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
mh.plot_attention(
    average_weights,
    words,
    ax=ax_average,
    title=mh.tr("Zero scores: the plain average", "分数全为 0：简单平均"),
    vmax=1.0,
    cbar=False,
)
mh.plot_attention(
    scored,
    words,
    ax=ax_scored,
    title=mh.tr("Scores of sa_v2: causal attention", "sa_v2 的分数：因果注意力"),
    vmax=1.0,
)
plt.show()

# %% [markdown]
# Zero scores give the plain average; learned scores let a token choose which part of its past to
# listen to. With `sa_v2`'s untrained weights the causal rows are still close to the plain average
# (row "starts": 0.3800, 0.3097, 0.3103 against 1/3 each), as the two maps show side by side;
# training is what moves them (lesson 08).
#
# ## 6. Proof by experiment: change the future
#
# If nothing leaks, changing the *last* token ("step") must not change any earlier row. We
# replace its embedding by something very different and recompute everything.
#
# **Predict first.** With the one-step causal mask, how many of the 36 attention weights change
# when the embedding of "step" changes? Write a whole number from 0 to 36 in place of `None` and
# run the cell; it only writes your guess down.

# %%
import mhsa_helpers.exercises

my_guess = None  # YOUR PREDICTION: a whole number from 0 to 36
mhsa_helpers.exercises.check_prediction_changed_weights(my_guess)

# %% [markdown]
# Three functions of `sa_v2`'s weights for any inputs `x`: the one-step and three-step causal
# weights, and no mask at all.


# %%
def causal_weights_one_step(x):
    # one-step causal attention weights of sa_v2 for inputs x: (T, d_in) -> (T, T)
    with torch.no_grad():
        scores = sa_v2.W_query(x) @ sa_v2.W_key(x).T  # (T, T)
    future = torch.triu(torch.ones(len(x), len(x), dtype=torch.bool), diagonal=1)  # (T, T)
    return torch.softmax(scores.masked_fill(future, -torch.inf) / d_k**0.5, dim=-1)


def causal_weights_three_step(x):
    # three-step causal attention weights of sa_v2 for inputs x: (T, d_in) -> (T, T)
    with torch.no_grad():
        scores = sa_v2.W_query(x) @ sa_v2.W_key(x).T  # (T, T)
    weights = torch.softmax(scores / d_k**0.5, dim=-1) * torch.tril(torch.ones(len(x), len(x)))
    return weights / weights.sum(dim=-1, keepdim=True)


def full_weights(x):
    # no mask at all, for comparison
    with torch.no_grad():
        scores = sa_v2.W_query(x) @ sa_v2.W_key(x).T  # (T, T)
    return torch.softmax(scores / d_k**0.5, dim=-1)


changed = inputs.clone()  # (T, d_in)
changed[5] = torch.tensor([5.0, -3.0, 2.0])  # a very different "step"
print(
    mh.say("no mask: largest change in rows 1-5 =", "不加掩码：第 1-5 行的最大变化 ="),
    (full_weights(changed) - full_weights(inputs))[:5].abs().max(),
)

# %% [markdown]
# Without a mask the future visibly changes the earlier rows. With the one-step mask the first
# five rows are **identical, bit for bit**: the future scores were overwritten with `-inf`
# before the softmax ever saw them.

# %%
before, after = causal_weights_one_step(inputs), causal_weights_one_step(changed)
assert torch.equal(before[:5], after[:5])
print(
    mh.say("one-step: rows 1-5 unchanged (torch.equal):", "一步法：第 1-5 行不变（torch.equal）："),
    torch.equal(before[:5], after[:5]),
)
print(mh.say("only the last row moved:\n", "只有最后一行变了：\n"), after[5])
print(
    mh.say("weights that changed, with the mask:", "加掩码时变化的权重："),
    int((before != after).sum()),
    mh.say("of 36", "/ 36"),
)
unmasked_changes = int((full_weights(changed) != full_weights(inputs)).sum())
print(
    mh.say("weights that changed, without a mask:", "不加掩码时变化的权重："),
    unmasked_changes,
    mh.say("of 36", "/ 36"),
)
mhsa_helpers.exercises.check_prediction_changed_weights(my_guess, reveal=True)

# %% [markdown]
# The last row is the only one allowed to look at "step", and it looks at every token, so all six
# of its weights move; the other 30 stay exactly as they were. Without the mask all 36 move.

# %% [markdown]
# With the three-step method the earlier rows are unchanged up to the last bit of rounding:
# the future did enter $S$ (so the rounding of step 1 differs), but cancelled in step 3.

# %%
before3, after3 = causal_weights_three_step(inputs), causal_weights_three_step(changed)
torch.testing.assert_close(after3[:5], before3[:5], atol=1e-6, rtol=0)
torch.testing.assert_close(after3, after)
print(
    mh.say(
        "three-step: rows 1-5 unchanged to 1e-6, and equal to the one-step result",
        "三步法：第 1-5 行在 1e-6 内不变，并且等于一步法的结果",
    )
)

# %% [markdown]
# ## 7. Before and after
#
# The same weights before and after masking, on one colour scale from 0 to 1. Below the
# diagonal each row has been stretched so that it sums to 1 again; above it, nothing. The
# earlier a token, the fewer tokens share its attention ("Your" keeps all of it for itself).

# %%
fig, (ax_before, ax_after) = plt.subplots(1, 2, figsize=(10, 4.2), layout="constrained")
mh.plot_attention(
    attn_weights,
    words,
    ax=ax_before,
    title=mh.tr("Before: full attention", "掩码前：完整的注意力"),
    vmax=1.0,
    cbar=False,
)
mh.plot_attention(
    attn_weights_causal,
    words,
    ax=ax_after,
    title=mh.tr("After: causal mask", "掩码后：因果掩码"),
    vmax=1.0,
)
plt.show()

# %% [markdown]
# ### Check (for CI; collapsed)
#
# The next cell is hidden in JupyterLab (click it to open). It checks two things the lesson
# relies on:
# * the course package does the same: `mh.causal_mask` builds our mask and `mh.masked_attention`
#   (the function every causal class of the next lessons calls) gives our one-step weights bit
#   for bit, and the context vectors are the masked weights times the values;
# * the two methods agree to float precision but not necessarily bit for bit: the three-step
#   method rounds twice (divide by the full sum $S$, then by the partial sum) and subtracts the
#   maximum of the *whole* row inside its softmax, the one-step method divides once. On this
#   course's CI machine several of the 21 entries on and below the diagonal differ in the last
#   bits (how many depends on the CPU, so the cell does not print the count); that is why the
#   lesson compares them with `assert_close`.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
assert torch.equal(mh.causal_mask(context_length), mask)
context_vecs, weights_pkg = mh.masked_attention(
    queries, keys, values, mh.causal_mask(context_length).bool()
)
assert torch.equal(weights_pkg, attn_weights_causal)
assert torch.equal(context_vecs, attn_weights_causal @ values)
torch.testing.assert_close(context_vecs[0], values[0])  # "Your" can only see itself
print(
    mh.say(
        "mh.causal_mask and mh.masked_attention == the one-step method, bit for bit",
        "mh.causal_mask 和 mh.masked_attention == 一步法，逐位相同",
    )
)

kept = ~mask.bool()  # (T, T): the 21 entries on and below the diagonal
assert (attn_weights_causal - masked_simple_norm)[kept].abs().max() < 1e-6
print(
    mh.say(
        "three-step vs one-step: every kept entry agrees to within 1e-6",
        "三步法与一步法：保留的每个元素相差都在 1e-6 以内",
    )
)

# %% [markdown]
# ## Summary
#
# * **Causal attention**: token $i$ attends only to tokens $1..i$. Everything above the diagonal
#   of the (T, T) weight matrix must be 0.
# * Three-step method: softmax, multiply by `torch.tril(torch.ones(T, T))`, divide each row by
#   its sum. The book's "journey" row becomes [0.5517, 0.4483, 0, 0, 0, 0].
# * No **information leakage**: the full-row denominator cancels in the renormalization; the
#   result is the softmax over the unmasked scores only. Changing a future token leaves earlier
#   rows unchanged.
# * One-step method (the one to use): `scores.masked_fill(torch.triu(ones, diagonal=1).bool(),
#   -torch.inf)`, then softmax. Same weights (to float precision), fewer operations.
# * The mathematical trick: `tril(ones) / row sums`, the softmax of zero scores masked with
#   `-inf`, and a loop all average each token's past; with the scores $QK^\top / \sqrt{d_k}$
#   instead of zeros the same softmax is causal attention, a weighted average of the past values.
# * Next: lesson 04 adds **dropout** (随机失活 / dropout) and wraps all this into a batched
#   `CausalAttention` class with the mask as a buffer.
#
# ## Exercises
#
# Solutions: `solutions/03_causal_attention_solutions.ipynb`.
#
# **Exercise 1 (a local window).** Some models let each token see only a few recent tokens
# (**local** or **sliding-window attention**, 局部注意力 / 滑动窗口注意力). For `T = 5`, build the
# boolean (5, 5) mask that is `True` where a token must *not* look when it may see only **itself
# and the one token just before it**
# (the kind of mask `masked_fill` takes).

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_local_mask(answer)

# %% [markdown]
# **Exercise 2 (build it: causal weights, with a window).** Write
# `causal_weights(attn_scores, window=None)`: it takes scores that are *already scaled* by
# $\sqrt{d_k}$, of shape (T, T) or with any leading dimensions (..., T, T) such as (b, T, T) or
# (b, num_heads, T, T), and returns attention weights of the same shape. With `window=None` they
# are the causal weights of this lesson. With `window=w` (an int ≥ 1) they are **local**: each
# token sees only itself and the `w - 1` tokens just before it, as in exercise 1 (which was
# `w = 2`) but for any T, any w and any leading dimensions. Then set `answer = causal_weights`
# (the function itself). The checker runs it on several sizes, batch shapes and windows (also
# one wider than T), checks zeros where a token must not look, rows summing to 1, that changing
# a future score changes nothing and that gradients reach the past scores only, and names the
# usual mistakes.


# %%
def causal_weights(attn_scores, window=None):
    # (..., T, T) scaled attention scores -> (..., T, T) causal attention weights.
    # window=None: plain causal attention; window=w: each token sees itself and the w - 1 before it.
    # YOUR CODE HERE
    raise NotImplementedError


answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_build_causal_weights(answer)
