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
# # 06 · Multi-head attention, version 2: one big matrix, split into heads (多头注意力 · 拆分成多个头)
#
# Lesson 05 ran each **attention head** (注意力头) as a separate module: 5 small matrix
# products per head. The book's efficient `MultiHeadAttention` computes the queries, keys and
# values of *all* heads with one big matrix each, cuts the result into heads with `view` and
# `transpose`, and lets a single **batched matrix multiplication** (批量矩阵乘法) handle every
# head at once. An **output projection** (输出投影, `out_proj`) mixes the heads at the end. Then
# we prove that this is the same function as the wrapper.
#
# **Learning goals**
# 1. Split a (b, T, d_out) projection into heads: `view` to (b, T, num_heads, head_dim), then
#    `transpose(1, 2)` to (b, num_heads, T, head_dim), with `head_dim = d_out // num_heads`
#    (每头维度).
# 2. Check that one 4-D matmul equals the per-head loop, and merge the heads back
#    (`contiguous().view` versus `reshape`).
# 3. Build `MultiHeadAttention` with `out_proj` and reproduce the book's numbers.
# 4. Prove wrapper and split version compute the same thing (`mh.multihead_from_wrapper`), and
#    see why "the same" means bit for bit only sometimes.
# 5. Count the parameters at GPT-2 sizes.
#
# **Prerequisites:** lesson 05 (`05_multihead_wrapper`).
# **Time:** about 40 minutes.
#
# **Shape contract:** `MultiHeadAttention`: `(b, T, d_in)` → `(b, T, d_out)`; inside, each of
# Q, K, V is `(b, num_heads, T, head_dim)` and the weights are `(b, num_heads, T, T)`.

# %%
import matplotlib.pyplot as plt
import torch
from torch import nn

import mhsa_helpers as mh

mh.setup_lesson()
journey = mh.load_journey()
words = journey.words
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)
b, T, d_in = batch.shape

# %% [markdown]
# ## 1. One big projection, cut into heads
#
# Take 2 heads of width 2. Instead of two (3 → 2) query matrices we use one (3 → 4) matrix: its
# output columns 0–1 are head 1's queries, columns 2–3 are head 2's.

# %%
num_heads, head_dim = 2, 2
d_out = num_heads * head_dim  # 4
torch.manual_seed(123)
W_query = nn.Linear(d_in, d_out, bias=False)
W_key = nn.Linear(d_in, d_out, bias=False)
W_value = nn.Linear(d_in, d_out, bias=False)
with torch.no_grad():
    queries = W_query(batch)  # (b, T, d_out)
    keys = W_key(batch)  # (b, T, d_out)
    values = W_value(batch)  # (b, T, d_out)
print(queries.shape)

# %% [markdown]
# **Step 1: `view`** splits the last dimension into (num_heads, head_dim). No number moves; the
# same memory is just read with a different shape.

# %%
q = queries.view(b, T, num_heads, head_dim)  # (b, T, h, head_dim)
print(q.shape)
assert torch.equal(q[:, :, 0], queries[..., 0:2])  # head 1 = columns 0:2
assert torch.equal(q[:, :, 1], queries[..., 2:4])  # head 2 = columns 2:4
assert q.data_ptr() == queries.data_ptr()  # a view: same memory

# %% [markdown]
# **Step 2: `transpose(1, 2)`** moves the head dimension in front of the tokens. Now each head
# is a (T, head_dim) matrix, and PyTorch's matmul treats all leading dimensions (batch *and*
# heads) as a batch of independent matrix products.

# %%
q = q.transpose(1, 2)  # (b, h, T, head_dim)
k = keys.view(b, T, num_heads, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
v = values.view(b, T, num_heads, head_dim).transpose(1, 2)  # (b, h, T, head_dim)
print(q.shape)
assert torch.equal(q, mh.split_heads(queries, num_heads))  # the package's helper does the same

# %% [markdown]
# ## 2. One batched matmul for all heads
#
# `q @ k.transpose(2, 3)` multiplies the last two dimensions, (T, head_dim) @ (head_dim, T), for
# every (batch, head) pair at once. The loop version computes each head separately. Same
# numbers, bit for bit:

# %%
scores = q @ k.transpose(2, 3)  # (b, h, T, T): all heads in one call
scores_loop = torch.stack(
    [q[:, h] @ k[:, h].transpose(1, 2) for h in range(num_heads)], dim=1
)  # (b, h, T, T): one head at a time
print(scores.shape)
assert torch.equal(scores, scores_loop)
print("batched matmul == per-head loop (torch.equal)")

# %% [markdown]
# The book shows the same on a small (1, 2, 3, 4) tensor — one sequence, 2 heads, 3 tokens,
# head_dim 4. We use a seeded random one of that shape:

# %%
torch.manual_seed(123)
a = torch.rand(1, 2, 3, 4)  # (b, h, T, head_dim)
all_heads = a @ a.transpose(2, 3)  # (b, h, T, T)
first_head = a[0, 0] @ a[0, 0].T  # (T, T)
second_head = a[0, 1] @ a[0, 1].T  # (T, T)
assert torch.equal(all_heads[0, 0], first_head)
assert torch.equal(all_heads[0, 1], second_head)
print(all_heads)

# %% [markdown]
# The rest of attention works per head unchanged: mask, scale by $\sqrt{\text{head\_dim}}$,
# softmax over the last dimension, multiply by the values.

# %%
future = torch.triu(torch.ones(T, T), diagonal=1).bool()  # (T, T), broadcast over b and h
weights = torch.softmax(scores.masked_fill(future, -torch.inf) / head_dim**0.5, dim=-1)
context = weights @ v  # (b, h, T, head_dim)
print(weights.shape, context.shape)

# %% [markdown]
# ## 3. Merging the heads back: `contiguous().view` or `reshape`
#
# To concatenate the heads we undo the split: `transpose(1, 2)` back to (b, T, h, head_dim),
# then flatten the last two dimensions into d_out. But after a transpose the numbers are no
# longer laid out row by row in memory (the tensor is not *contiguous* / 连续存储), and `view` refuses:

# %%
context_t = context.transpose(1, 2)  # (b, T, h, head_dim)
print("contiguous:", context_t.is_contiguous())
try:
    context_t.view(b, T, d_out)
except RuntimeError as error:
    # torch's message says to use .reshape(...) instead; its exact wording varies by version.
    assert "reshape" in str(error)
    print(type(error).__name__, "-- view() refuses a non-contiguous tensor")

# %% [markdown]
# Two fixes. `contiguous()` copies the data into row-by-row order, after which `view` works (the
# book's way). `reshape` does the same in one call: it returns a view when it can and copies when
# it must — here it must.

# %%
merged_view = context_t.contiguous().view(b, T, d_out)  # (b, T, d_out)
merged_reshape = context_t.reshape(b, T, d_out)  # (b, T, d_out)
assert torch.equal(merged_view, merged_reshape)
print("reshape copied:", merged_reshape.data_ptr() != context_t.data_ptr())
print(
    "reshape of a contiguous tensor is a view:",
    queries.reshape(b, T, 2, 2).data_ptr() == queries.data_ptr(),
)
assert torch.equal(merged_view, mh.merge_heads(context))  # the package's helper

# %% [markdown]
# The merged tensor is exactly the wrapper-style concatenation: head 1's context vectors in
# columns 0–1, head 2's in columns 2–3.

# %%
assert torch.equal(merged_view, torch.cat([context[:, 0], context[:, 1]], dim=-1))
print(merged_view[0])  # (T, d_out)

# %% [markdown]
# ## 4. The class, with `out_proj`
#
# Everything together, as in the book. New at the end: `out_proj`, a (d_out → d_out) linear
# layer applied to the merged heads. The heads never see each other's results; `out_proj` is
# where their outputs get mixed. The book notes it is not strictly necessary but used in most
# LLM architectures.


# %%
class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        assert d_out % num_heads == 0, "d_out must be divisible by num_heads"
        self.d_out = d_out
        self.num_heads = num_heads
        self.head_dim = d_out // num_heads  # each head gets a slice of d_out
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)  # mixes the heads
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )

    def forward(self, x):
        b, num_tokens, _ = x.shape  # (b, T, d_in)
        keys = self.W_key(x)  # (b, T, d_out)
        queries = self.W_query(x)  # (b, T, d_out)
        values = self.W_value(x)  # (b, T, d_out)

        keys = keys.view(b, num_tokens, self.num_heads, self.head_dim)  # (b, T, h, head_dim)
        queries = queries.view(b, num_tokens, self.num_heads, self.head_dim)
        values = values.view(b, num_tokens, self.num_heads, self.head_dim)
        keys = keys.transpose(1, 2)  # (b, h, T, head_dim)
        queries = queries.transpose(1, 2)  # (b, h, T, head_dim)
        values = values.transpose(1, 2)  # (b, h, T, head_dim)

        attn_scores = queries @ keys.transpose(2, 3)  # (b, h, T, T)
        mask_bool = self.mask.bool()[:num_tokens, :num_tokens]  # (T, T)
        attn_scores.masked_fill_(mask_bool, -torch.inf)
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (b, h, T, T)
        attn_weights = self.dropout(attn_weights)

        context_vec = (attn_weights @ values).transpose(1, 2)  # (b, T, h, head_dim)
        context_vec = context_vec.contiguous().view(b, num_tokens, self.d_out)  # (b, T, d_out)
        return self.out_proj(context_vec)  # (b, T, d_out)


# %% [markdown]
# **Watch the width convention.** Here `d_out` is the *total* width, split over the heads
# (head_dim = d_out // num_heads); in lesson 05's wrapper it was the width of each head. The
# book's example uses `d_out = 2` and 2 heads, so each head is 1 wide and the output is (2, 6, 2):

# %%
torch.manual_seed(123)
mha = MultiHeadAttention(d_in, d_out=2, context_length=T, dropout=0.0, num_heads=2)
context_vecs = mha(batch)  # (b, T, d_out)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)

# %% [markdown]
# These match the book's printed values:

# %%
for sequence in context_vecs:  # (T, d_out) each
    torch.testing.assert_close(
        sequence, journey.reference["multihead_seed123_d_out2_heads2"], atol=1e-4, rtol=0
    )
print("matches the book's printed values")

# %% [markdown]
# These are different numbers from lesson 05's wrapper — a different width convention and an
# `out_proj` with its own random weights. Section 6 shows how to make the two agree exactly.
#
# The cost: 4 `nn.Linear` calls and 2 `@` **whatever the number of heads** (lesson 05's wrapper:
# 5 per head). We count with `mh.CountMatmuls`, as in lesson 05:

# %%
for heads in [1, 2, 4, 12]:
    module = MultiHeadAttention(d_in, 12 * 2, T, 0.0, num_heads=heads)
    with mh.CountMatmuls() as counter:
        module(batch)
    print(f"{heads:>2} heads: {counter.counts}")
    assert counter.counts == {"linear": 4, "matmul": 2}

# %% [markdown]
# ## 5. Looking inside: `return_weights=True`
#
# `mh.MultiHeadAttention` has a debug switch: `return_weights=True` also returns the attention
# weights, (b, num_heads, T, T), taken after the softmax and before dropout. With the same seed
# it holds the same weights as our class. (In the book's example each head is only 1 wide, so a
# head has little to work with: head 2 is almost uniform.)

# %%
torch.manual_seed(123)
mha_pkg = mh.MultiHeadAttention(d_in, 2, T, 0.0, num_heads=2)
out, attn = mha_pkg(batch, return_weights=True)  # (b, T, d_out), (b, h, T, T)
print(out.shape, attn.shape)
assert attn.shape == (2, 2, 6, 6)
assert torch.allclose(attn.sum(-1), torch.ones(2, 2, 6))  # each row sums to 1
assert (attn.triu(diagonal=1) == 0).all()  # causal
fig = mh.plot_attention_heads(attn.detach(), words, suptitle="MultiHeadAttention, seed 123")
plt.show()

# %% [markdown]
# ## 6. The proof: the wrapper and the split version are the same function
#
# The book states that both classes compute multi-head attention. We can make that exact. Take
# a wrapper, and build a `MultiHeadAttention` whose big matrices are the heads' matrices stacked
# on top of each other (head i's weights become rows i·head_dim … (i+1)·head_dim), with an
# identity `out_proj` (weight = identity matrix, bias = 0) so the concatenation passes through
# unchanged. `mh.multihead_from_wrapper` does exactly that.

# %%
torch.manual_seed(123)
wrapper = mh.MultiHeadAttentionWrapper(d_in, 2, T, 0.0, num_heads=2)  # d_out=2 PER HEAD
split = mh.multihead_from_wrapper(wrapper)  # d_out = 2 * 2 = 4 in total
print(split)

assert torch.equal(
    split.W_query.weight, torch.cat([head.W_query.weight for head in wrapper.heads])
)  # (h * head_dim, d_in)
assert torch.equal(split.out_proj.weight, torch.eye(4))
assert torch.equal(split(batch), wrapper(batch))
torch.testing.assert_close(
    split(batch)[0], journey.reference["wrapper_seed123_d_out2_heads2"], atol=1e-4, rtol=0
)
print("split(batch) == wrapper(batch), bit for bit (torch.equal)")

# %% [markdown]
# Bit for bit on the book's example. Now GPT-2 small's shape: 12 heads × 64 = 768 wide, context
# length 1024, on a random input of 64 tokens. Here we only promise agreement to float32
# rounding:

# %%
torch.manual_seed(123)
wrapper_big = mh.MultiHeadAttentionWrapper(768, 64, 1024, 0.0, num_heads=12)
split_big = mh.multihead_from_wrapper(wrapper_big)
x = torch.randn(1, 64, 768)  # (b, T, d_in)
with torch.no_grad():
    out_wrapper = wrapper_big(x)  # (b, T, 12 * 64)
    out_split = split_big(x)  # (b, T, 768)
print(out_split.shape)
torch.testing.assert_close(out_split, out_wrapper, rtol=1e-5, atol=1e-6)
print("equal to float32 rounding (rtol=1e-5, atol=1e-6)")

# %% [markdown]
# Whether the two are also bit-identical here depends on your CPU, your BLAS library and the
# thread count, so CI does not compare the next cell's output:

# %%
# NBVAL_IGNORE_OUTPUT
difference = (out_split - out_wrapper).abs().max().item()
print("bit-identical:", torch.equal(out_split, out_wrapper), "| largest difference:", difference)
assert difference < 1e-5

# %% [markdown]
# Why is bitwise equality not promised for every size? The wrapper computes 12 products of shape
# (64, 768) @ (768, 64); the split version one product (64, 768) @ (768, 768). Mathematically each
# output entry is the same sum of 768 products. But a matrix multiplication routine picks its
# blocking, vectorization and threading from the shapes it gets, so the partial sums may be added
# in a different *order* — and floating-point addition is not associative:

# %%
a, b_, c = torch.tensor(0.1), torch.tensor(0.3), torch.tensor(0.4)  # float32
left = (a + b_) + c
right = a + (b_ + c)
print(f"(0.1 + 0.3) + 0.4 = {left.item():.10f}")
print(f"0.1 + (0.3 + 0.4) = {right.item():.10f}")
assert not torch.equal(left, right)
torch.testing.assert_close(left, right)  # equal up to rounding

# %% [markdown]
# A difference in the last bit (about 1e-7 relative in float32) is rounding, not a bug. That is
# why the course checks "same function" with `torch.testing.assert_close` in general and keeps
# `torch.equal` for the small examples where the computations line up exactly.
#
# ## 7. GPT-2 sizes
#
# The book's example uses 2 heads and d_out = 2. The smallest GPT-2 (124 million parameters, first reported as 117 million) has
# 12 heads with head_dim 64 (12 × 64 = 768) and a context length of 1024; the largest (1.5
# billion) has 25 heads, d = 1600. In GPT, d_in = d_out. Building such modules on the `meta`
# device creates only shapes (no memory, no random numbers), which is all we need to count
# parameters. Without `qkv_bias` there are three d×d matrices plus `out_proj` (d×d + d bias):
# 4·d² + d.

# %%
gpt2 = {"small": (768, 12), "medium": (1024, 16), "large": (1280, 20), "xl": (1600, 25)}
for name, (d, heads) in gpt2.items():
    with torch.device("meta"):
        module = mh.MultiHeadAttention(d, d, 1024, 0.0, num_heads=heads)
    count = sum(p.numel() for p in module.parameters())
    assert count == 4 * d * d + d
    assert module.head_dim == 64
    print(
        f"GPT-2 {name:<6}: d={d:>4}, {heads:>2} heads x {module.head_dim} -> {count:>10,} parameters"
    )

# %% [markdown]
# Every GPT-2 size keeps head_dim = 64 and adds heads as it grows. One attention block of the
# smallest GPT-2 has about 2.4 million parameters; the model has 12 such blocks (plus the
# feed-forward layers and embeddings, which are bigger). The `mask` buffer (1024 × 1024) is not a
# parameter and is not counted.
#
# ## 8. Check: our class equals `mh.MultiHeadAttention`
#
# Same seed, same layers in the same order: the same weights and bit-identical outputs, in eval
# mode and in training mode with seeded dropout.

# %%
torch.manual_seed(123)
ours = MultiHeadAttention(d_in, 4, T, 0.5, num_heads=2)
torch.manual_seed(123)
theirs = mh.MultiHeadAttention(d_in, 4, T, 0.5, num_heads=2)

print(mh.assert_same_module(ours, theirs, batch))

# %% [markdown]
# ## Summary
#
# * Split heads: `view(b, T, num_heads, head_dim)` then `transpose(1, 2)` → (b, h, T, head_dim),
#   with `head_dim = d_out // num_heads`. Head i = columns i·head_dim … (i+1)·head_dim.
# * One **batched matrix multiplication** (批量矩阵乘法) `q @ k.transpose(2, 3)` computes every
#   head; it equals the per-head loop bit for bit.
# * Merge back: `transpose(1, 2)` then `contiguous().view(b, T, d_out)` (or `reshape`, which
#   copies when it must). `view` alone fails on the transposed tensor.
# * `out_proj` (输出投影) mixes the heads. Cost: 4 linear layers + 2 matmuls for any number of
#   heads. Parameters: 4·d² + d without qkv bias.
# * Width conventions: wrapper `d_out` per head; `MultiHeadAttention` `d_out` total.
# * `mh.multihead_from_wrapper` turns a wrapper into the split version: bit-identical on the
#   book's example, equal to float32 rounding at GPT-2 size (float addition is not associative).
# * Next: lesson 07 looks inside the heads: heatmaps, entropy, and an interactive explorer.
#
# ## Exercises
#
# Solutions: `solutions/06_multihead_split_solutions.ipynb`.
#
# **Exercise 1.** The largest GPT-2 has d_out = 1600 and 25 heads. What is `head_dim`?

# %%
import mhsa_helpers.exercises

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_head_dim(answer)

# %% [markdown]
# **Exercise 2.** GPT-2 medium: d_in = d_out = 1024, 16 heads, and — like the real GPT-2 —
# `qkv_bias=True`. How many parameters does its `MultiHeadAttention` have? Compute it with the
# formula first, then check by building the module on the `meta` device.

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_mha_parameter_count(answer)

# %% [markdown]
# **Exercise 3.** Split `x_ex` (b=2, T=3, d_out=8) into 4 heads the way `forward` does: the
# answer has shape (b, num_heads, T, head_dim) = (2, 4, 3, 2). (Try `x_ex.view(2, 4, 3, 2)`
# first and see what the checker says.)

# %%
x_ex = torch.arange(2 * 3 * 8, dtype=torch.float32).view(2, 3, 8)  # (b, T, d_out)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_split_into_heads(answer, x_ex)
