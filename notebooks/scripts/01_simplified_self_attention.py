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
#    (数值稳定性 / 溢出) while `torch.softmax` does not.
# 3. Compute **context vectors** (上下文向量) as weighted sums of the inputs, with a loop and with
#    three lines of matrix code, and check that both agree.
#
# **Prerequisites:** lesson 00 (`00_start_here`); Python, and what a matrix product is.
# **Time:** about 30 minutes.
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
# We pick "journey" as the **query** (the token that asks) and compare it with every token,
# itself included. The comparison is a dot product: multiply position by position and add up.
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
# Now the loop over all six tokens. Watch the second entry: the query compared with itself.

# %%
query = inputs[1]  # (3,) -- x(2), "journey"
attn_scores_2 = torch.empty(inputs.shape[0])  # (T,)
for i, x_i in enumerate(inputs):
    attn_scores_2[i] = torch.dot(x_i, query)
print(attn_scores_2)

# %% [markdown]
# These match the book's printed values. The largest score, 1.4950, is "journey" with itself:
# a vector is usually most similar to itself (large dot product = similar direction and long
# vectors). "starts" is a close second, because its embedding is almost the same as "journey"'s.

# %%
torch.testing.assert_close(
    attn_scores_2, journey.reference["simplified_scores_2"], atol=1e-4, rtol=0
)
assert attn_scores_2.argmax() == 1

# %% [markdown]
# ## 3. From scores to weights: normalization
#
# Scores can be any size. To use them as mixing proportions we want non-negative numbers that
# sum to 1. The simplest way is to divide by the sum (6 apples and 4 apples → 0.6 and 0.4):

# %%
attn_weights_2_tmp = attn_scores_2 / attn_scores_2.sum()  # (T,)
print("Attention weights:", attn_weights_2_tmp)
print("Sum:", attn_weights_2_tmp.sum())

# %% [markdown]
# In practice attention uses **softmax** instead: $\mathrm{softmax}(x)_i = e^{x_i} / \sum_j
# e^{x_j}$. The exponential makes every value positive (even negative scores) and stretches the
# differences, so the biggest scores win more clearly; its gradients are also better behaved in
# training. Compare the two rows: softmax gives "journey" 0.2379 instead of 0.2278.

# %%
attn_weights_2 = torch.softmax(attn_scores_2, dim=0)  # (T,)
print("Attention weights:", attn_weights_2)
print("Sum:", attn_weights_2.sum())

# %%
torch.testing.assert_close(
    attn_weights_2_tmp, journey.reference["simplified_sum_normalized_2"], atol=1e-4, rtol=0
)
torch.testing.assert_close(
    attn_weights_2, journey.reference["simplified_softmax_2"], atol=1e-4, rtol=0
)
print("both match the book's printed values")

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
print("scores * 100, naive :", softmax_naive(attn_scores_2 * 100))
print("scores * 100, torch :", torch.softmax(attn_scores_2 * 100, dim=0))

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
# This matches the book's printed value $z^{(2)}$ = [0.4419, 0.6515, 0.5683].
#
# ## 5. All tokens at once: three lines
#
# Every token can be the query. Stacking all queries turns the dot products into one matrix
# product: entry `[i, j]` of `inputs @ inputs.T` is $x^{(i+1)} \cdot x^{(j+1)}$. (`inputs.T` is
# the **transpose** (转置), shape (3, 6); `@` needs the inner sizes to match: (6, **3**) @
# (**3**, 6).) Softmax then works on each row (`dim=-1`, the last dimension), and one more
# product mixes the inputs.

# %%
attn_scores = inputs @ inputs.T  # (T, T)
attn_weights = torch.softmax(attn_scores, dim=-1)  # (T, T), each row sums to 1
all_context_vecs = attn_weights @ inputs  # (T, d_in)
print(f"attention scores:\n{attn_scores}\n")
print(f"attention weights:\n{attn_weights}\n")
print(f"all_context_vecs:\n{all_context_vecs}")

# %% [markdown]
# Look at row 2 (index 1) of each matrix: it is exactly what we computed for "journey" by hand.
# The context matrix matches the book's printed values.

# %%
torch.testing.assert_close(attn_scores[1], attn_scores_2)
torch.testing.assert_close(attn_weights[1], attn_weights_2)
torch.testing.assert_close(all_context_vecs[1], context_vec_2)
torch.testing.assert_close(
    all_context_vecs, journey.reference["simplified_all_context"], atol=1e-4, rtol=0
)
torch.testing.assert_close(attn_weights.sum(dim=-1), torch.ones(6))

# %% [markdown]
# ### The double loop says the same
#
# If the matrix product feels like magic, here it is unrolled into two loops over the pairs
# $(i, j)$. The results agree (to float rounding: the two ways may add in a different order).

# %%
attn_scores_loop = torch.empty(inputs.shape[0], inputs.shape[0])  # (T, T)
for i, x_i in enumerate(inputs):
    for j, x_j in enumerate(inputs):
        attn_scores_loop[i, j] = torch.dot(x_i, x_j)
torch.testing.assert_close(attn_scores_loop, attn_scores)
print("double loop == inputs @ inputs.T")

# %% [markdown]
# ## 6. Looking at the weights
#
# A heatmap shows the (6, 6) weight matrix: row = the query (who looks), column = the key (who
# is looked at). Each row sums to 1. Without trainable weights the picture is bland: every
# token spreads its attention over everybody, with "journey" and "starts" a little favoured
# because their embeddings are the longest.

# %%
import matplotlib.pyplot as plt

fig = mh.plot_attention(attn_weights, journey.words, title="Simplified self-attention weights")
plt.show()

# %% [markdown]
# ## Summary
#
# * An **attention score** is a dot product of a query with a key: `inputs @ inputs.T` gives all
#   of them, shape (T, T).
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
# **Exercise 1.** Compute the context vector $z^{(5)}$ of the token "one" (shape (3,)), from
# `inputs` only: scores, softmax, weighted sum.

# %%
import mhsa_helpers.exercises

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_context_vector_5(answer)

# %% [markdown]
# **Exercise 2.** Write `softmax_stable(x)` for a 1-D tensor `x`: softmax computed as
# `exp(x) / exp(x).sum()` but safe on inputs like `[1000., 1001.]`. Set `answer = softmax_stable`
# (the function itself). The checker runs it on small, huge and very negative inputs.

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_stable_softmax(answer)

# %% [markdown]
# **Exercise 3.** Compute the sum of each row of `attn_weights` (a tensor of shape (6,)). Which
# `dim` do you sum over, and what do you expect to see?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_row_sums(answer)
