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
# # 01 · Simplified self-attention (简化的自注意力)
#
# **Self-attention** (自注意力) lets every token of a sentence look at every other token and pull
# in what it needs. In this lesson there are no trainable weights yet: we compute attention from
# the raw embeddings alone, exactly as chapter 3 of *Build a Large Language Model (From Scratch)*
# starts, and we check every number against the ones the book prints.
#
# **Learning goals**
# 1. Compute **attention scores** (注意力分数) as **dot products** (点积), first one by one, then
#    all at once with a matrix product.
# 2. Turn scores into **attention weights** (注意力权重) by **normalization** (归一化): the sum
#    version, the **softmax** (softmax 函数) version, and why a naive softmax **overflows**
#    (溢出) while `torch.softmax` is **numerically stable** (数值稳定).
# 3. Compute **context vectors** (上下文向量) as weighted sums of the inputs, with a loop and with
#    three lines of matrix code, and check that both agree.
# 4. Predict, then see, whether every token is most similar to itself, and why raw dot products
#    are not enough (the reason for lesson 02's queries and keys).
#
# **Prerequisites:** lesson 00 (`00_start_here`); Python, and what a matrix product is.
# **Time:** about 95 minutes (reading, running 29 code cells, 1 prediction, 2 exercises, 1
# build-it; the rule is in lesson 00).
#
# **Shape contract:** inputs `(T, d_in) = (6, 3)` → scores and weights `(T, T) = (6, 6)` →
# context vectors `(T, d_in) = (6, 3)`.

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. The six tokens
#
# The book's sentence "Your journey starts with one step" is split into six **tokens** (词元 /
# token), and each token has a 3-dimensional **embedding** (嵌入向量). We load them instead of
# retyping them. Row `i` of `inputs` is the book's $x^{(i+1)}$: Python counts from 0, the book
# from 1, so `inputs[1]` is $x^{(2)}$, "journey".

# %%
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
for word, x in zip(journey.words, inputs):
    print(f"{word:>8}  {x}")

# %% [markdown]
# ## 2. Attention scores for one query, one dot product at a time
#
# We pick "journey" as the **query** (查询: the token that asks) and compare it with every
# token, itself included; in this role the tokens it is compared with are called **keys** (键).
# Here a query and its keys are just the embeddings themselves (lesson 02 gives them their own
# learned vectors). The comparison is a dot product: multiply position by position and add up.
# For "Your" and "journey" that is
#
# $$x^{(1)} \cdot x^{(2)} = 0.43 \cdot 0.55 + 0.15 \cdot 0.87 + 0.89 \cdot 0.66 = 0.9544.$$
#
# Let Python do the same arithmetic by hand first:

# %%
x_1, x_2 = inputs[0], inputs[1]  # (3,) each
by_hand = 0.43 * 0.55 + 0.15 * 0.87 + 0.89 * 0.66
print(round(by_hand, 4), torch.dot(x_1, x_2))

# %% [markdown]
# In general, for a query $q$ and a key $k$ with $d$ features,
#
# $$\text{score}(q, k) = q \cdot k = \sum_{f=1}^{d} q_f \, k_f .$$
#
# Now the loop over all six tokens. Watch the second entry: the query compared with itself.

# %%
query = inputs[1]  # (3,) -- x(2), "journey"
attn_scores_2 = torch.empty(inputs.shape[0])  # (T,)
for i, x_i in enumerate(inputs):
    attn_scores_2[i] = torch.dot(x_i, query)
print(attn_scores_2)

# %%
torch.testing.assert_close(
    attn_scores_2, journey.reference["simplified_scores_2"], atol=1e-4, rtol=0
)
assert attn_scores_2.argmax() == 1

# %% [markdown]
# These match the book's printed values. Here is what each of the six numbers is made of: every
# bar stacks the three products $q_f k_f$, one colour per feature, and its height is the score.
# The dashed bar is the query scored against itself.

# %%
import matplotlib.pyplot as plt

fig = mh.figures.plot_dot_products(query, inputs, journey.words, query_index=1)
plt.show()

# %% [markdown]
# For "journey" the largest score, 1.4950, is the one with itself, and "starts" is a close second
# (1.4754): its embedding is almost the same as "journey"'s. A dot product is large when two
# vectors point the same way *and* when they are long. Is every token most similar to itself,
# then? Keep the question: section 5 computes all the scores, and you will predict the answer
# before you see them.

# %% [markdown]
# ## 3. From scores to weights: normalization
#
# Scores can be any size. To use them as mixing proportions we want non-negative numbers that
# sum to 1. The simplest way is to divide by the sum (6 apples and 4 apples → 0.6 and 0.4):

# %%
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()  # (T,)
print(mh.say("Attention weights:", "注意力权重："), attn_weights_2_tmp)
print(mh.say("Sum:", "总和："), attn_weights_2_tmp.sum())

# %% [markdown]
# In practice attention uses **softmax** instead: $\mathrm{softmax}(x)_i = e^{x_i} / \sum_j
# e^{x_j}$. The exponential makes every value positive (even negative scores) and stretches the
# differences, so the biggest scores win more clearly; its gradients are also better behaved in
# training. Compare the two rows: softmax gives "journey" 0.2379 instead of 0.2278.

# %%
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)  # (T,)
print(mh.say("Attention weights:", "注意力权重："), attn_weights_2)
print(mh.say("Sum:", "总和："), attn_weights_2.sum())

# %% [markdown]
# Side by side: the scores on the left, the weights softmax makes of them on the right (bars),
# with the plain sum-normalized weights as dots. The order is kept, and softmax moves weight
# towards the highest scores: the two largest weights grow ("journey" 0.2278 → 0.2379), three of
# the others shrink. Not every gap widens, though: with scores this close together, $e^x$ is
# nearly a straight line, and the smallest weight even grows a little (0.1077 → 0.1082).

# %%
fig = mh.figures.plot_softmax_steps(attn_scores_2, journey.words)
plt.show()

# %%
torch.testing.assert_close(
    attn_weights_2_tmp, journey.reference["simplified_sum_normalized_2"], atol=1e-4, rtol=0
)
torch.testing.assert_close(
    attn_weights_2, journey.reference["simplified_softmax_2"], atol=1e-4, rtol=0
)
print(mh.say("both match the book's printed values", "两者都与书中印出的数值一致"))

# %% [markdown]
# ### A naive softmax, and why it breaks
#
# Softmax is one line if we write the formula directly:


# %%
def softmax_naive(x):
    return torch.exp(x) / torch.exp(x).sum(dim=0)


print(softmax_naive(attn_scores_2))
torch.testing.assert_close(softmax_naive(attn_scores_2), attn_weights_2)

# %% [markdown]
# On our small scores it agrees with `torch.softmax`. Now make the scores large, the way
# unscaled scores of long vectors can become (lesson 02). In `float32` the largest number is
# about $3.4 \times 10^{38}$, so $e^{x}$ is `inf` for any $x > 88.7$, and `inf / inf` is `nan`:

# %%
big = torch.tensor([1000.0, 1001.0])  # float32
print("exp(big)            :", torch.exp(big))
print("softmax_naive(big)  :", softmax_naive(big))
print("torch.softmax(big)  :", torch.softmax(big, dim=0))
print(mh.say("scores * 100, naive :", "分数 × 100，朴素公式："), softmax_naive(attn_scores_2 * 100))
print(
    mh.say("scores * 100, torch :", "分数 × 100，torch   ："),
    torch.softmax(attn_scores_2 * 100, dim=0),
)

# %%
assert torch.isnan(softmax_naive(big)).all()
assert torch.isfinite(torch.softmax(big, dim=0)).all()

# %% [markdown]
# Very negative scores fail the other way: **underflow** (下溢), $e^{-1000}$ rounds to 0, and
# `0 / 0` is `nan` too. Why is `torch.softmax` fine? Softmax does not change when you subtract the
# same number $c$ from every score, because $e^{c}$ cancels:
#
# $$\frac{e^{x_i - c}}{\sum_j e^{x_j - c}} = \frac{e^{x_i} e^{-c}}{\sum_j e^{x_j} e^{-c}} =
# \frac{e^{x_i}}{\sum_j e^{x_j}}.$$
#
# With $c = \max_j x_j$ the largest exponent is $e^0 = 1$, so nothing overflows, and at least one
# term of the sum is 1, so the sum is never 0. That is the trick inside `torch.softmax`.

# %%
shifted = attn_scores_2 - attn_scores_2.max()  # (T,), all <= 0
print(shifted)
assert torch.equal(torch.softmax(attn_scores_2, dim=0), torch.softmax(shifted, dim=0))
print(softmax_naive(big - big.max()))  # the naive formula, made safe by the shift

# %% [markdown]
# ## 4. The context vector of "journey"
#
# The **context vector** $z^{(2)}$ is the weighted sum of *all* input vectors, with the attention
# weights of "journey" as the weights. It has the same size as an embedding (3 here), and it
# mixes in a bit of every token, most of all "journey" and "starts".

# %%
context_vec_2 = torch.zeros(inputs.shape[1])  # (d_in,) = (3,)
for i, x_i in enumerate(inputs):
    context_vec_2 += attn_weights_2[i] * x_i
print(context_vec_2)

# %%
torch.testing.assert_close(
    context_vec_2, journey.reference["simplified_context_2"], atol=1e-4, rtol=0
)
# The loop is a vector-matrix product: (T,) @ (T, d_in) -> (d_in,)
torch.testing.assert_close(attn_weights_2 @ inputs, context_vec_2)

# %% [markdown]
# This matches the book's printed value $z^{(2)}$ = [0.4419, 0.6515, 0.5683]. In symbols,
#
# $$z^{(2)} = \sum_{j=1}^{T} \alpha_{2j} \, x^{(j)}, \qquad \alpha_{2j} =
# \mathrm{softmax}_j\big(x^{(2)} \cdot x^{(j)}\big).$$
#
# The picture: each token's embedding, shrunk by its weight, stacked feature by feature. The black
# bars are the totals, the three entries of $z^{(2)}$.

# %%
fig = mh.figures.plot_weighted_sum(
    attn_weights_2,
    inputs,
    journey.words,
    title=mh.tr("z(2): the context vector of 'journey'", "z(2)：“journey”的上下文向量"),
)
plt.show()

# %% [markdown]
#
# ## 5. All tokens at once: three lines
#
# Every token can be the query. Stacking all queries turns the dot products into one matrix
# product: entry `[i, j]` of `inputs @ inputs.T` is $x^{(i+1)} \cdot x^{(j+1)}$. (`inputs.T` is
# the **transpose** (转置), shape (3, 6); `@` needs the inner sizes to match: (6, **3**) @
# (**3**, 6).) Softmax then works on each row (`dim=-1`, the last dimension), and one more
# product mixes the inputs:
#
# $$Z = \mathrm{softmax}\big(X X^\top\big) \, X, \qquad X \in \mathbb{R}^{T \times d_{in}},$$
#
# with the softmax taken over each row. Lesson 02 turns this into the formula of real attention.
#
# **Predict first.** Before the next cell prints all 36 scores: for how many of the six tokens is
# the largest score in its row the one with *itself* (the diagonal)? Write a whole number from 0
# to 6 in place of `None` and run the cell; it only writes your guess down.

# %%
import mhsa_helpers.exercises

my_guess = None  # YOUR PREDICTION: a whole number from 0 to 6
mhsa_helpers.exercises.check_prediction_self_match(my_guess)

# %%
attn_scores = inputs @ inputs.T  # (T, T)
attn_weights = torch.softmax(attn_scores, dim=-1)  # (T, T), each row sums to 1
all_context_vecs = attn_weights @ inputs  # (T, d_in)
print(mh.say("attention scores:", "注意力分数：") + f"\n{attn_scores}\n")
print(mh.say("attention weights:", "注意力权重：") + f"\n{attn_weights}\n")
print(f"all_context_vecs:\n{all_context_vecs}")

# %% [markdown]
# Now the answer to the prediction. For every row, which key gets the largest score?

# %%
best_key = attn_scores.argmax(dim=-1)  # (T,)
for i, word in enumerate(journey.words):
    print(f"{word:>8}", mh.say("scores highest with", "得分最高的是"), journey.words[best_key[i]])
fig = mh.figures.plot_self_similarity(attn_scores, journey.words)
plt.show()
mhsa_helpers.exercises.check_prediction_self_match(my_guess, reveal=True)

# %% [markdown]
# Only "Your" and "journey" score highest with themselves; for the other **four** tokens another
# token wins. The reason is in the formula $x \cdot y = \lVert x \rVert \, \lVert y \rVert \cos
# \theta$: a dot product grows with the lengths of the vectors, not only with how well they point
# the same way. Compare the lengths (the **norm** (范数) $\lVert x \rVert$):

# %%
print(inputs.norm(dim=-1))  # (T,): the length of each embedding
assert (best_key == torch.arange(6)).sum() == 2

# %% [markdown]
# "with" (length 0.70) is beaten by the long "journey" (1.22), although "with" points exactly
# like itself. Two more limits of raw dot products: the score matrix is **symmetric** (对称)
# (`attn_scores[i, j] == attn_scores[j, i]`), so "how much *with* looks at *journey*" must equal
# "how much *journey* looks at *with*"; and nothing here can be learned. Lesson 02 removes the
# last two by giving every token two different learned vectors: a **query** (查询) to ask with
# and a **key** (键) to be found by. The first stays in part: queries and keys are still
# projections of these vectors, so their lengths still feed into the scores.
#
# Back to the three matrices: row 2 (index 1) of each is exactly what we computed for "journey" by
# hand, and the context matrix matches the book's printed values.

# %%
torch.testing.assert_close(attn_scores[1], attn_scores_2)
torch.testing.assert_close(attn_weights[1], attn_weights_2)
torch.testing.assert_close(all_context_vecs[1], context_vec_2)
torch.testing.assert_close(
    all_context_vecs, journey.reference["simplified_all_context"], atol=1e-4, rtol=0
)
assert torch.equal(attn_scores, attn_scores.T)  # symmetric, as said above

# %% [markdown]
# ### The double loop says the same
#
# If the matrix product feels like magic, here it is unrolled into two loops over the pairs
# $(i, j)$: entry `[i, j]` is one dot product.

# %%
attn_scores_loop = torch.empty(inputs.shape[0], inputs.shape[0])  # (T, T)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores_loop[i, j] = torch.dot(x_i, x_j)
print(attn_scores_loop)

# %% [markdown]
# ## 6. Looking at the weights
#
# A heatmap shows the (6, 6) weight matrix: row = the query (who looks), column = the key (who
# is looked at). Each row sums to 1. Without trainable weights the picture is bland: every
# token spreads its attention over everybody, with "journey" and "starts" a little favoured
# because their embeddings are the longest.

# %%
fig = mh.plot_attention(
    attn_weights,
    journey.words,
    title=mh.tr("Simplified self-attention weights", "简化自注意力的权重"),
)
plt.show()

# %% [markdown]
# ### Check (for CI; collapsed)
#
# The next cell is hidden in JupyterLab (click it to open). It checks what the lesson claims in
# passing: the double loop equals the matrix product (to float rounding: the two may add in a
# different order, so `assert_close`, not `torch.equal`), and every row of weights sums to 1.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
torch.testing.assert_close(attn_scores_loop, attn_scores)
torch.testing.assert_close(attn_weights.sum(dim=-1), torch.ones(6))
print(
    mh.say(
        "double loop == inputs @ inputs.T (to float rounding); every row of weights sums to 1",
        "双重循环 == inputs @ inputs.T（在浮点舍入误差内），权重的每一行之和都是 1",
    )
)

# %% [markdown]
# ### Two tools for the exercises
#
# The exercises below use two tools this lesson has not needed yet, shown here on a small
# tensor: `torch.cat` joins tensors along an existing dimension (rows, with the default
# `dim=0`), and `keepdim=True` keeps the dimension a reduction such as `max`, `sum` or `mean`
# removes, so that the result still lines up with the rows it came from (one value per row,
# shape (rows, 1)) and broadcasts against them. One reduction is different: `max(dim=...)`
# returns a pair, the largest values and where they are (their indices); `.values` is the tensor.

# %%
a = torch.tensor([[1.0, 2.0], [3.0, 5.0]])  # (2, 2)
row = torch.tensor([[7.0, 8.0]])  # (1, 2)
print(torch.cat([a, row]))  # (3, 2): the rows of a, then row
print(a.mean(dim=-1))  # (2,): one mean per row, the row dimension is gone
print(a.mean(dim=-1, keepdim=True))  # (2, 1): kept
print(a - a.mean(dim=-1, keepdim=True))  # (2, 2): each row minus its own mean
print(a.max(dim=-1, keepdim=True).values)  # (2, 1): each row's largest value

# %% [markdown]
# ## Summary
#
# * An **attention score** is a dot product of a query with a key: `inputs @ inputs.T` gives all
#   of them, shape (T, T). A raw dot product also rewards long vectors: only 2 of the 6 tokens
#   score highest with themselves.
# * **Softmax** over each row (`dim=-1`) turns scores into **attention weights**: positive,
#   summing to 1. A naive `exp(x) / exp(x).sum()` overflows to `nan` on large scores;
#   `torch.softmax` subtracts the row's maximum first, which changes nothing mathematically.
# * A **context vector** is the weighted sum of the inputs: `attn_weights @ inputs`, shape
#   (T, d_in). The loop and the matrix version agree, and match the book's printed values.
# * What is missing: the model cannot *learn* anything here. Lesson 02 adds trainable
#   query, key and value matrices (查询、键、值).
#
# ## Exercises
#
# Write your answer in place of `None`, run the cell, and read the line the checker prints.
# Solutions: `solutions/01_simplified_self_attention_solutions.ipynb`.
#
# **Exercise 1 (a seventh token).** The sentence goes on: "Your journey starts with one step
# forward". The new token "forward" has the made-up embedding
# `mhsa_helpers.exercises.NEW_TOKEN_EMBEDDING` = (0.60, 0.40, 0.20). Compute the context vector
# of "forward" (shape (3,)) when it attends to all **seven** tokens, itself included.

# %%
new_embedding = torch.tensor(mhsa_helpers.exercises.NEW_TOKEN_EMBEDDING)  # (d_in,) = (3,)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_context_vector_new_token(answer)

# %% [markdown]
# **Exercise 2 (build it: a stable softmax for every row).** Section 3 made a softmax safe for
# *one* vector. Write `softmax_rows(x)` for a 2-D tensor `x` of shape (rows, cols) that returns
# the softmax of every row, stays finite on any scale, and never calls `torch.softmax`. Set
# `answer = softmax_rows` (the function itself). The checker also tries a matrix whose rows are
# very far apart, `[[1000., 1001.], [-1000., -1001.]]`: is one maximum for the whole matrix
# enough?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_softmax_rows(answer)

# %% [markdown]
# **Exercise 3 (warm-up: attention received).** Each row of `attn_weights` is what one token *gives* out,
# and sums to 1. How much attention does each token *receive* in total, from all six queries?
# Compute it as a tensor of shape (6,). Which token receives the most, and does the heatmap of
# section 6 agree?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_attention_received(answer)
