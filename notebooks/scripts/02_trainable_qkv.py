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
# # 02 · Trainable queries, keys and values (查询、键、值)
#
# Lesson 01 computed attention from the raw embeddings, so nothing could be learned. Now each
# token is projected three times, by three **trainable weight matrices** (权重矩阵 / 可训练权重)
# `W_query`, `W_key`, `W_value`. This is **scaled dot-product attention** (缩放点积注意力), the
# kind GPT models use, and we reproduce the book's numbers with `torch.manual_seed(123)`.
#
# **Learning goals**
# 1. Compute a **query, key and value** (查询、键、值) for every token and the context vector of
#    "journey" step by step.
# 2. Understand **why** the scores are divided by $\sqrt{d_k}$: without it the softmax **saturates**
#    (softmax 饱和) and its gradient **vanishes** (梯度消失).
# 3. Package the computation as `SelfAttentionV1` (`nn.Parameter`), see how an `nn.Linear` stores
#    the same matrix (`linear.weight == W.T`), and build `SelfAttentionV2` (`nn.Linear`) yourself.
#
# **Prerequisites:** lesson 01 (`01_simplified_self_attention`): scores, softmax, context vectors.
# A little PyTorch: `nn.Module`, `nn.Parameter`, `nn.Linear`; and what **autograd** (自动求导)
# does: `requires_grad=True` makes torch record the computation so that `.backward()` can fill in
# the gradients (lesson 00 lists where to read up).
# **Time:** about 90 minutes (reading, running 26 code cells, 1 prediction, 2 exercises, 1
# build-it; the rule is in lesson 00).
#
# **Shape contract:** inputs `(T, d_in) = (6, 3)` → queries/keys/values `(T, d_out) = (6, 2)` →
# weights `(T, T)` → context vectors `(T, d_out) = (6, 2)`.

# %%
import torch
from torch import nn

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. Three weight matrices
#
# Lesson 01 ended with three limits of raw dot products: a long vector wins scores whatever it
# means (only 2 of the 6 tokens scored highest with themselves), the score matrix was symmetric,
# and nothing could be learned. The cure is to let every token play two different roles, each
# with its own learned vector: a **query** to ask with and a **key** to be found by (and a third,
# the **value**, for what it hands over).
#
# We keep the book's sizes: embeddings of size `d_in = 3` are projected to `d_out = 2` (GPT
# models use `d_in == d_out`; different sizes just make the shapes easier to follow). The seed
# and the order query, key, value fix the random numbers, so yours are the book's.

# %%
journey = mh.load_journey()
inputs = journey.inputs  # (T, d_in) = (6, 3)
x_2 = inputs[1]  # (d_in,) -- "journey"
d_in = inputs.shape[1]  # 3
d_out = 2

torch.manual_seed(123)
W_query = nn.Parameter(torch.rand(d_in, d_out), requires_grad=True)  # (d_in, d_out)
W_key = nn.Parameter(torch.rand(d_in, d_out), requires_grad=True)  # (d_in, d_out)
W_value = nn.Parameter(torch.rand(d_in, d_out), requires_grad=True)  # (d_in, d_out)
print(f"{W_query=}\n\n{W_key=}\n\n{W_value=}")

# %% [markdown]
# `nn.Parameter` with `requires_grad=True` means: training updates these numbers by
# backpropagation. Mind the two meanings of "weight": the *weight matrices* here are learned
# parameters; the *attention weights* (注意力权重) are the softmax outputs, recomputed for every
# input.
#
# What do the three matrices learn? A common reading:
# * `W_query` turns a token into a question, "what am I looking for?"
# * `W_key` turns a token into a label, "what can I be matched with?"
# * `W_value` turns a token into content, "what do I hand over if I am chosen?"
#
# ## 2. Query, key and value of "journey"
#
# Each is a vector-matrix product `(d_in,) @ (d_in, d_out) -> (d_out,)`: a **projection**
# (投影) from 3 dimensions to 2.

# %%
query_2 = x_2 @ W_query  # (d_out,)
key_2 = x_2 @ W_key  # (d_out,)
value_2 = x_2 @ W_value  # (d_out,)
print(f"{query_2=}\n{key_2=}\n{value_2=}")

# %%
for name, tensor in [("query_2", query_2), ("key_2", key_2), ("value_2", value_2)]:
    torch.testing.assert_close(
        tensor.detach(), journey.reference[f"seed123_{name}"], atol=1e-4, rtol=0
    )
print(
    mh.say(
        "query_2, key_2, value_2 match the book's printed values",
        "query_2、key_2、value_2 与书中印出的数值一致",
    )
)

# %% [markdown]
# To compute $z^{(2)}$ we still need the key and value of *every* token. One matrix product each:

# %%
keys = inputs @ W_key  # (T, d_out)
values = inputs @ W_value  # (T, d_out)
print(f"{keys.shape=}, {values.shape=}")

# %% [markdown]
# All three projections of all six tokens, as matrices with their shapes: the same `inputs`
# (6, 3), three different matrices (3, 2), three different results (6, 2). Row "journey" of
# `queries` is `query_2`.

# %%
import matplotlib.pyplot as plt

fig = mh.figures.plot_qkv_projections(inputs, W_query, W_key, W_value, journey.words)
plt.show()

# %% [markdown]
# ## 3. Attention scores
#
# Same as lesson 01, but now the query is `query_2` and the keys are the projected `keys`. The
# score of "journey" with itself is one dot product; all six at once are `query_2 @ keys.T`.

# %%
attn_score_22 = query_2.dot(key_2)  # ()
print(attn_score_22)
attn_scores_2 = query_2 @ keys.T  # (d_out,) @ (d_out, T) -> (T,)
print(attn_scores_2)

# %%
torch.testing.assert_close(
    attn_score_22.detach(), journey.reference["seed123_attn_score_22"], atol=1e-4, rtol=0
)
torch.testing.assert_close(
    attn_scores_2.detach(), journey.reference["seed123_attn_scores_2"], atol=1e-4, rtol=0
)
assert torch.equal(attn_scores_2[1], attn_score_22)

# %% [markdown]
# Both match the book's printed values; the second entry of the vector is the single score above.
#
# Now the scores of *every* query against every key. Two things from lesson 01 no longer hold:
# the matrix is not symmetric (how much "with" looks at "journey" is not how much "journey"
# looks at "with"), and the diagonal is not special.

# %%
queries = inputs @ W_query  # (T, d_out)
all_scores = (queries @ keys.T).detach()  # (T, T)
print(mh.say("'with' looks at 'journey':", "“with”对“journey”的分数："), f"{all_scores[3, 1]:.4f}")
print(mh.say("'journey' looks at 'with':", "“journey”对“with”的分数："), f"{all_scores[1, 3]:.4f}")
print(mh.say("symmetric:", "对称："), torch.equal(all_scores, all_scores.T))
for i, word in enumerate(journey.words):
    print(
        f"{word:>8}",
        mh.say("scores highest with", "得分最高的是"),
        journey.words[all_scores[i].argmax()],
    )

# %% [markdown]
# With these random, untrained matrices every query happens to look hardest at "journey" (so only
# the row of "journey" has its largest score on the diagonal). Which tokens match is now decided
# by `W_query` and `W_key`, not by the embeddings' lengths alone, and training will change them.
#
# ## 4. Scaled softmax
#
# Before the softmax, the scores are divided by $\sqrt{d_k}$, the square root of the key size
# (`d_k = 2` here). That is the "scaled" in scaled dot-product attention. For all tokens at once,
# with the inputs stacked as rows of $X$ (T, d_in) and the queries $Q = XW^Q$, keys
# $K = XW^K$ and values $V = XW^V$ (in the code `W_query`, `W_key`, `W_value`), this lesson
# computes
#
# $$\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right) V,$$
#
# the formula of *Attention Is All You Need*: scores $QK^\top$ (T, T), scaled, softmax over each
# row, then a weighted sum of the values (T, d_out).

# %%
d_k = keys.shape[-1]  # 2
attn_weights_2 = torch.softmax(attn_scores_2 / d_k**0.5, dim=-1)  # (T,)
print(attn_weights_2)
torch.testing.assert_close(
    attn_weights_2.detach(), journey.reference["seed123_attn_weights_2"], atol=1e-4, rtol=0
)

# %% [markdown]
# ### Why divide by $\sqrt{d_k}$?
#
# **Step 1: dot products grow with the size.** If the entries of $q$ and $k$ are independent
# with mean 0 and variance 1, then $q \cdot k = \sum_{i=1}^{d_k} q_i k_i$ is a sum of $d_k$
# terms of variance 1: its variance is $d_k$. Dividing by $\sqrt{d_k}$ brings it back to 1.
# Let's measure it on 10,000 random pairs:

# %%
_ = torch.manual_seed(123)
for size in (2, 8, 64, 512):
    q = torch.randn(10_000, size)  # (N, d_k)
    k = torch.randn(10_000, size)  # (N, d_k)
    dots = (q * k).sum(dim=-1)  # (N,)
    scaled = dots / size**0.5  # (N,)
    print(
        f"d_k = {size:3d}   var(q.k) = {dots.var():6.1f}   var(q.k / sqrt(d_k)) = {scaled.var():.2f}"
    )

# %% [markdown]
# **Step 2: large scores saturate the softmax.** GPT-2 uses $d_k = 64$ (per attention head,
# lesson 06); let's take 512 to see it clearly: one random query against six random keys, with entries of variance 1.
#
# **Predict first.** Without the scaling, what will the *largest* of the six softmax weights be?
# (Six equal scores would give 1/6 = 0.17 each; one weight can be at most 1.) Write a number
# between 0 and 1 in place of `None` and run the cell; it only writes your guess down.

# %%
import mhsa_helpers.exercises

my_guess = None  # YOUR PREDICTION: a number between 0 and 1
mhsa_helpers.exercises.check_prediction_saturation(my_guess)

# %%
_ = torch.manual_seed(123)
size = 512
q = torch.randn(size)  # (d_k,)
k = torch.randn(6, size)  # (T, d_k)
scores_big = k @ q  # (T,)
weights_raw = torch.softmax(scores_big, dim=-1)  # (T,)
weights_scaled = torch.softmax(scores_big / size**0.5, dim=-1)  # (T,)
mh.show_table(
    [
        (mh.say("scores", "分数"), scores_big),
        ("softmax", weights_raw),
        (mh.say("scaled softmax", "缩放后的 softmax"), weights_scaled),
    ]
)
fig = mh.figures.plot_scaling_effect(scores_big, size)
plt.show()
mhsa_helpers.exercises.check_prediction_saturation(my_guess, reveal=True)

# %% [markdown]
# Without scaling, the scores are spread over tens of units and softmax puts (almost) all the
# weight on one token: it has become a hard "pick the max". With scaling the weights stay
# graded.
#
# **Step 3: a saturated softmax has (almost) no gradient.** Write $s$ for the scores and $p$ for
# the softmax weights. How much weight $p_i$ moves when score $s_j$ moves is the derivative
# $\partial p_i / \partial s_j = p_i(\delta_{ij} - p_j)$, where $\delta_{ij}$ is 1 if $i = j$
# and 0 otherwise. All $T \times T$ of these derivatives together form the **Jacobian**
# (雅可比矩阵). When one $p_i \approx 1$ and the rest $\approx 0$, every entry is $\approx 0$, so
# training gets almost no signal through the attention weights. Here is the Jacobian from the
# formula, checked against autograd:


# %%
def softmax_jacobian(p):
    # (..., T) probabilities -> (..., T, T) matrix of d p_i / d s_j.
    # diag_embed(p): p on the diagonal of a (T, T) matrix (the delta_ij p_i term);
    # p.unsqueeze(-1) * p.unsqueeze(-2): a column (T, 1) times a row (1, T), all p_i p_j.
    return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)


jac_autograd = torch.autograd.functional.jacobian(
    lambda s: torch.softmax(s, dim=-1), scores_big / size**0.5
)  # (T, T)
torch.testing.assert_close(softmax_jacobian(weights_scaled), jac_autograd)
print(
    mh.say("largest |gradient entry|, unscaled:", "未缩放时，梯度元素的最大绝对值："),
    softmax_jacobian(weights_raw).abs().max(),
)
print(
    mh.say("largest |gradient entry|, scaled  :", "缩放之后，梯度元素的最大绝对值："),
    softmax_jacobian(weights_scaled).abs().max(),
)

# %% [markdown]
# One example can be lucky, so here is the average over 1,000 random queries (six keys each):
# the mean of the largest weight, and the mean size of the softmax Jacobian (its Frobenius norm:
# the square root of the sum of the squares of all its entries).

# %%
_ = torch.manual_seed(123)
scaling_rows = []
for size in (2, 64, 512):
    q = torch.randn(1000, 1, size)  # (N, 1, d_k)
    k = torch.randn(1000, 6, size)  # (N, T, d_k)
    s = (q * k).sum(dim=-1)  # (N, T)
    p_raw = torch.softmax(s, dim=-1)  # (N, T)
    p_scaled = torch.softmax(s / size**0.5, dim=-1)  # (N, T)
    max_raw, max_scaled = p_raw.max(dim=-1).values.mean(), p_scaled.max(dim=-1).values.mean()
    g_raw = softmax_jacobian(p_raw).norm(dim=(-2, -1)).mean()
    g_scaled = softmax_jacobian(p_scaled).norm(dim=(-2, -1)).mean()
    scaling_rows.append(
        (size, f"{max_raw:.2f}", f"{max_scaled:.2f}", f"{g_raw:.2f}", f"{g_scaled:.2f}")
    )
mh.show_table(
    scaling_rows,
    header=(
        "d_k",
        mh.say("max weight: raw", "最大权重：未缩放"),
        mh.say("scaled", "缩放后"),
        mh.say("gradient size: raw", "梯度大小：未缩放"),
        mh.say("scaled", "缩放后"),
    ),
)

# %% [markdown]
# The unscaled column drifts towards weight 1 and gradient 0 as $d_k$ grows; the scaled column
# stays put. That is the whole reason for the $\sqrt{d_k}$.
#
# ## 5. The context vector of "journey"
#
# The last step is lesson 01's weighted sum, but over the **values** instead of the raw inputs:

# %%
context_vector_2 = attn_weights_2 @ values  # (T,) @ (T, d_out) -> (d_out,)
print(context_vector_2)
torch.testing.assert_close(
    context_vector_2.detach(), journey.reference["seed123_context_vector_2"], atol=1e-4, rtol=0
)
fig = mh.figures.plot_weighted_sum(
    attn_weights_2,
    values,
    journey.words,
    title=mh.tr("context_vector_2 = weighted sum of the values", "context_vector_2 = 值的加权和"),
)
plt.show()

# %% [markdown]
# This matches the book's printed value [0.3061, 0.8210]. The recipe, per token:
# 1. keys and values of all tokens (`W_key`, `W_value`), the query of this token (`W_query`);
# 2. scores = query · keys;
# 3. weights = softmax(scores / $\sqrt{d_k}$);
# 4. context vector = weights · values.
#
# As a flow, for all tokens at once (the shapes are this lesson's):
#
# ```mermaid
# flowchart LR
#     X["inputs X (T, d_in)"] --> Q["queries = X W_query (T, d_out)"]
#     X --> K["keys = X W_key (T, d_out)"]
#     X --> V["values = X W_value (T, d_out)"]
#     Q --> S["scores = Q K^T (T, T)"]
#     K --> S
#     S --> W["weights = softmax(scores / sqrt(d_k)) (T, T)"]
#     W --> Z["context = weights V (T, d_out)"]
#     V --> Z
# ```
#
# A side remark you will meet again in lesson 10: when a model generates text token by token,
# the keys and values of earlier tokens never change, so they are stored instead of recomputed.
# That store is the **KV cache** (KV 缓存).
#
# ## 6. `SelfAttentionV1`: the same steps as a module
#
# All queries at once turn steps 1–4 into matrix products. We follow the book's code.


# %%
class SelfAttentionV1(nn.Module):
    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
        self.W_key = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)
        self.W_value = nn.Parameter(torch.rand(d_in, d_out))  # (d_in, d_out)

    def forward(self, x):  # x: (T, d_in)
        keys = x @ self.W_key  # (T, d_out)
        queries = x @ self.W_query  # (T, d_out)
        values = x @ self.W_value  # (T, d_out)
        attn_scores = queries @ keys.T  # (T, T)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
        context_vec = attn_weights @ values  # (T, d_out)
        return context_vec


torch.manual_seed(123)
sa_v1 = SelfAttentionV1(d_in, d_out)
print(sa_v1(inputs))

# %% [markdown]
# Same seed, same order of `torch.rand` calls, so the module holds the very matrices of
# section 1, and its second row is our `context_vector_2`. The whole matrix matches the book's
# printed values.
#
# Note the call: `sa_v1(inputs)`, not `sa_v1.forward(inputs)`. Calling a module runs
# `nn.Module.__call__`, which runs `forward` and, around it, any **hooks** registered on the
# module (lesson 06 uses them to trace shapes). Both give the same (T, d_out) tensor, as the next
# cell checks; call the module itself, so that hooks run.

# %%
assert torch.equal(sa_v1.W_query, W_query) and torch.equal(sa_v1.W_value, W_value)
out_v1 = sa_v1(inputs).detach()  # (T, d_out)
assert torch.equal(out_v1, sa_v1.forward(inputs).detach())  # (T, d_out): module(x) runs forward
torch.testing.assert_close(out_v1[1], context_vector_2.detach())
torch.testing.assert_close(
    out_v1, journey.reference["self_attention_v1_seed123"], atol=1e-4, rtol=0
)

# %% [markdown]
# Here are the attention weights inside `sa_v1`, one row per query, for every query except
# "starts": exercise 3 works with that row. The projections now decide who looks at
# whom; with these random (untrained) matrices the rows are still nearly flat, with "journey"
# and "starts" a little favoured in every row.

# %%
shown = [0, 1, 3, 4, 5]  # every query except "starts" (index 2)
with torch.no_grad():
    queries_shown = inputs[shown] @ sa_v1.W_query  # (5, d_out)
    keys_v1 = inputs @ sa_v1.W_key  # (T, d_out)
    attn_weights_v1 = torch.softmax(queries_shown @ keys_v1.T / d_k**0.5, dim=-1)  # (5, T)
torch.testing.assert_close(attn_weights_v1[1], attn_weights_2.detach())  # row of "journey"
fig = mh.plot_attention(
    attn_weights_v1,
    journey.words,
    query_tokens=[journey.words[i] for i in shown],
    title=mh.tr("SelfAttentionV1 weights (seed 123)", "SelfAttentionV1 的权重（种子 123）"),
)
plt.show()

# %% [markdown]
# ## 7. `SelfAttentionV2`: `nn.Linear` layers
#
# The book's second version replaces the three raw matrices by three layers
# `nn.Linear(d_in, d_out, bias=qkv_bias)` named `W_query`, `W_key`, `W_value`: a linear layer does
# the matrix product for us, can add a bias, and starts from a better random initialization. The
# forward pass is otherwise the same recipe. You will write this class yourself in exercise 1;
# here we use the course's copy, `mh.SelfAttentionV2`, to see what it computes.

# %%
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in, d_out)
print(sa_v2(inputs))
torch.testing.assert_close(
    sa_v2(inputs).detach(), journey.reference["self_attention_v2_seed789"], atol=1e-4, rtol=0
)

# %% [markdown]
# With the book's seed 789 this matches the book's printed values. The numbers differ from V1
# (and can be negative) because the initialization differs, not the computation.
#
# **`nn.Linear` stores the transpose.** A linear layer keeps `weight` with shape
# `(d_out, d_in)` and computes `x @ weight.T`. So the V1-style matrix `W` of shape
# `(d_in, d_out)` is `linear.weight.T`:

# %%
print(sa_v2.W_query.weight.shape)  # (d_out, d_in) = (2, 3)
torch.testing.assert_close(sa_v2.W_query(inputs), inputs @ sa_v2.W_query.weight.T)

# %% [markdown]
# **Why the initialization is better.** `torch.rand` draws from $[0, 1)$: every weight is
# positive, and a product with a wide input grows with `d_in`. `nn.Linear` draws from
# $[-1/\sqrt{d_{in}}, 1/\sqrt{d_{in}})$: centred on 0 and shrinking with the width, so the
# projections keep a similar size whatever `d_in` is. Compare at GPT-2's width 768:

# %%
_ = torch.manual_seed(123)
x_wide = torch.randn(6, 768)  # (T, 768)
W_rand = torch.rand(768, 64)  # V1 style: (d_in, d_out)
linear = nn.Linear(768, 64, bias=False)  # V2 style: weight (d_out, d_in)
with torch.no_grad():
    weight_range = f"[{linear.weight.min():.4f}, {linear.weight.max():.4f}]"
    mh.show_table(
        [
            (mh.say("std of x @ W_rand", "x @ W_rand 的标准差"), f"{(x_wide @ W_rand).std():.2f}"),
            (mh.say("std of linear(x)", "linear(x) 的标准差"), f"{linear(x_wide).std():.2f}"),
            (mh.say("linear.weight range", "linear.weight 的范围"), weight_range),
            ("1 / sqrt(768)", f"{1 / 768**0.5:.4f}"),
        ]
    )

# %% [markdown]
# ### Check (for CI; collapsed)
#
# The next cell is hidden in JupyterLab (click it to open). It checks that the inline
# `SelfAttentionV1` is the course's `mh.SelfAttentionV1`: same seed, same parameters, the same
# output bit for bit (the package's class adds only input checks).

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
torch.manual_seed(123)
inline_v1 = SelfAttentionV1(d_in, d_out)
torch.manual_seed(123)
package_v1 = mh.SelfAttentionV1(d_in, d_out)
print(mh.assert_same_module(inline_v1, package_v1, inputs))

# %% [markdown]
# ## Summary
#
# * Three **trainable weight matrices** project every token to a **query**, a **key** and a
#   **value** (shape `(T, d_out)` each).
# * Scores `queries @ keys.T` are divided by $\sqrt{d_k}$ before the softmax: dot products have
#   variance $d_k$, and unscaled they saturate the softmax (weights near 0/1) and kill its
#   gradient.
# * The context vectors are `attn_weights @ values`, shape `(T, d_out)`; with seed 123 row 2 is
#   the book's [0.3061, 0.8210].
# * `SelfAttentionV1` uses raw `nn.Parameter` matrices `(d_in, d_out)`; `SelfAttentionV2` uses
#   `nn.Linear`, whose `weight` is the transpose `(d_out, d_in)` and whose initialization keeps
#   projections well-sized.
# * Next: lesson 03 stops tokens from looking at the future (因果注意力).
#
# ## Exercises
#
# Solutions: `solutions/02_trainable_qkv_solutions.ipynb`.
#
# **Exercise 1 (build it: `SelfAttentionV2`).** Write the book's `SelfAttentionV2` into the
# scaffold: `__init__(self, d_in, d_out, qkv_bias=False)` creates three layers
# `nn.Linear(d_in, d_out, bias=qkv_bias)` named `W_query`, `W_key`, `W_value`; `forward(self, x)`
# takes `x` of shape (T, d_in) and returns the context vectors (T, d_out), following
# $\mathrm{softmax}(QK^\top / \sqrt{d_k})\,V$. Then set `answer = MySelfAttentionV2` (the class
# itself). The checker builds it for several sizes, copies its weights into `mh.SelfAttentionV2`
# and compares the outputs, checks that the weights of every row sum to 1 and that gradients
# reach all three layers, and names the usual mistakes.


# %%
class MySelfAttentionV2(nn.Module):
    def __init__(self, d_in, d_out, qkv_bias=False):
        super().__init__()
        # YOUR CODE HERE: self.W_query, self.W_key, self.W_value
        raise NotImplementedError

    def forward(self, x):  # x: (T, d_in)
        # YOUR CODE HERE: keys, queries, values -> scores -> scaled softmax -> context vectors
        raise NotImplementedError


answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_build_self_attention(answer)

# %% [markdown]
# **Exercise 2 (weight transfer).** `sa_v1` (seed 123, raw matrices) and a `SelfAttentionV2`
# compute the same function with differently stored weights. Make an `mh.SelfAttentionV2(d_in,
# d_out)` that gives *identical* outputs to `sa_v1` by copying `sa_v1`'s three matrices into its
# layers (section 7 shows how an `nn.Linear` stores its matrix; a layer's `weight` takes an
# `nn.Parameter(...)`). Set `answer` to that object.

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_v1_to_v2(answer, sa_v1, inputs)

# %% [markdown]
# **Exercise 3.** A model that writes text one token at a time cannot look ahead: when it
# reads "starts", the tokens after it are not there yet. With the seed-123 matrices of section
# 1, compute the **context vector** of "starts" ($x^{(3)}$) using only the tokens it has read,
# "Your", "journey" and "starts": the whole recipe of section 5, for this query and these three
# tokens (shape (2,)). Do its attention weights still sum to 1, and how do you make sure?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_context_vector_3(answer)
