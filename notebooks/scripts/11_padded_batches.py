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
# # 11 · Batches of real sentences: padding masks (填充掩码)
#
# Every example so far had sequences of one length. Real sentences differ in length, but a batch
# is one tensor (b, T, d_in), so the short ones are filled up with **padding** (填充) tokens. This
# lesson makes sure those fillers change nothing: each real token must get exactly the output it
# gets when its sentence runs alone.
#
# **Learning goals**
# 1. Build a padded batch from sentences of different lengths, with right and left padding, and
#    its **key padding mask** (键填充掩码): bool (b, T), `True` at padding positions.
# 2. See when padding leaks into real tokens, and how the padding mask joins the causal mask.
# 3. Recognise the NaN trap (a query with no visible key: softmax of all `-inf`) and its fix.
# 4. Prove "batched == one at a time" with `torch.testing.assert_close`, and translate d2l's
#    `valid_lens` into a key padding mask.
# 5. Convert between the six mask conventions a learner meets (lesson 03, this course, SDPA,
#    `nn.MultiheadAttention`, Hugging Face, d2l) and check that they give the same attention.
#
# **Prerequisites:** lessons 06 (`MultiHeadAttention`) and 10 (the KV cache).
# **Time:** about 90 minutes (reading, running 20 code cells, 1 exercise, 2 build-its; the rule is
# in lesson 00).
#
# **Shape contract:** `module(x, key_padding_mask=mask, return_weights=True)` with `x`
# (b, T, d_in) and `mask` bool (b, T) returns (b, T, d_out) and weights (b, num_heads, T, T);
# the weights are zero on padded keys.

# %%
import matplotlib.pyplot as plt
import torch

import mhsa_helpers as mh
from mhsa_helpers.ui.sentences import embed_words

mh.setup_lesson()

# %% [markdown]
# ## 1. Three sentences, three lengths
#
# The book's six words, plus two shorter sentences with toy embeddings (`embed_words` gives each
# word a fixed random vector of width 3, like the book's):

# %%
journey = mh.load_journey()
texts = [journey.words, ["the", "cat", "sat", "down"], ["hello", "world"]]
sequences = [journey.inputs, embed_words(texts[1]), embed_words(texts[2])]  # (L_b, 3) each
lengths = torch.tensor([len(words) for words in texts])  # (b,)
for words, seq in zip(texts, sequences, strict=True):
    print(tuple(seq.shape), " ".join(words))
try:
    torch.stack(sequences)
except RuntimeError as error:
    print(mh.say("torch.stack raised:", "torch.stack 报错（各个张量的形状不一样）："), error)

# %% [markdown]
# `torch.stack` refuses: a tensor is a rectangle. So we **pad** every sentence to the longest
# length T = 6 with a filler vector (zeros here; its value must not matter) and remember where
# the fillers are. The **key padding mask** is `True` at padding positions, for sequence b with
# L_b real tokens:
#
# $$m_{bj} = \begin{cases} \text{True} & j \ge L_b \quad \text{(padding)} \\ \text{False} &
# j < L_b \quad \text{(a real token)} \end{cases}$$
#
# This is `torch.nn.MultiheadAttention`'s `key_padding_mask` convention. (A Hugging Face
# `attention_mask` says the opposite, 1 = real token; convert it with `attention_mask == 0`.)

# %%
T = int(lengths.max())
batch_right = torch.zeros(3, T, 3)  # (b, T, d_in): real tokens first, then padding
for b, seq in enumerate(sequences):
    batch_right[b, : len(seq)] = seq
mask_right = torch.arange(T) >= lengths[:, None]  # (b, T), True = padding
print(mask_right)

# %%
fig = mh.figures.padded_batch(texts, mask_right, title=mh.tr("right padding", "右填充"))
plt.show()

# %% [markdown]
# ## 2. Predict, then run: does the padding leak?
#
# Take the causal `MultiHeadAttention` of lesson 06 and feed it the padded batch **without** any
# padding mask. Compare each sentence's real tokens with the output of that sentence alone.
#
# *Predict first:* for "hello world" (2 real tokens, then 4 pads), do the two real outputs
# change because of the pads?

# %%
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=T, dropout=0.0, num_heads=2).eval()
alone = [mha(seq.unsqueeze(0))[0] for seq in sequences]  # (L_b, d_out) each, no padding at all

out = mha(batch_right)  # (b, T, d_out), no padding mask
for b, length in enumerate(lengths.tolist()):
    same = torch.allclose(out[b, :length], alone[b])
    print(f"{' '.join(texts[b]):<34}", mh.say("real tokens unchanged:", "真实词元不变："), same)

# %% [markdown]
# They don't change. The pads come *after* every real token, and the **causal mask** already
# hides the future, so no real token ever sees a pad. Right padding is harmless for the real
# tokens of a causal layer (the outputs *at* the pad positions are junk, and a loss ignores them).
#
# Two common situations break this:
#
# * a layer **without** causal mask (an encoder, BERT-style, or `SelfAttentionV2`): every token
#   sees the pads at the end;
# * **left padding** (左填充), which generation uses so that every sentence's last token sits at
#   position T - 1 and the next token is appended at the same place for the whole batch: now the
#   pads come *before* the real tokens, and the causal mask lets the real tokens see them.

# %%
batch_left = torch.zeros(3, T, 3)  # (b, T, d_in): padding first, then the real tokens
for b, seq in enumerate(sequences):
    batch_left[b, T - len(seq) :] = seq
mask_left = torch.arange(T) < (T - lengths)[:, None]  # (b, T), True = padding
print(mask_left)

out_left = mha(batch_left)  # (b, T, d_out), still no padding mask
torch.manual_seed(123)
encoder = mh.SelfAttentionV2(d_in=3, d_out=4)  # no causal mask
out_encoder = encoder(batch_right)  # (b, T, d_out)
for b, length in enumerate(lengths.tolist()):
    gap_left = (out_left[b, T - length :] - alone[b]).abs().max()
    gap_encoder = (out_encoder[b, :length] - encoder(sequences[b])).abs().max()
    print(
        f"{texts[b][0]:<8}",
        mh.say(
            f"left padding: {gap_left:.4f}   no causal mask: {gap_encoder:.4f}",
            f"左填充：{gap_left:.4f}   不加因果掩码：{gap_encoder:.4f}",
        ),
    )

# %% [markdown]
# The full sentence (no pads) is untouched; the two short ones are off, because their real
# tokens now average over the pads' values too.
#
# ## 3. The padding mask joins the causal mask
#
# A query may look at key j only if j is not in its future **and** j is a real token. Both masks
# set the score to $-\infty$ before the softmax, so the softmax gives those keys weight 0:
#
# $$s_{ij} = \begin{cases} \dfrac{\mathbf q_i \cdot \mathbf k_j}{\sqrt{d_k}} & j \le i
# \text{ and } m_{j} = \text{False} \\ -\infty & \text{otherwise} \end{cases} \qquad
# \alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}$$
#
# The padding mask is one row (b, T) per sequence; broadcast over the query rows it hides whole
# **columns**. For "hello world" with left padding:

# %%
hello = ["<pad>"] * 4 + texts[2]
fig = mh.figures.padding_masks(mask_left[2], hello)
plt.show()

# %% [markdown]
# Look at the top four rows of the right panel: the causal mask hides everything right of the
# diagonal, the padding mask hides columns 0-3, and together they hide **every** key of those
# rows. What does softmax do with a row of $-\infty$?
#
# ## 4. The NaN trap
#
# $e^{-\infty} = 0$, so such a row is $0 / 0$ — **NaN** (not a number):

# %%
print(torch.softmax(torch.tensor([-torch.inf, -torch.inf, -torch.inf]), dim=0))

# %% [markdown]
# In a layer, that happens on exactly those pad rows. Written out for "hello world", with one
# head that uses the layer's full-width projections (head_dim 4, so the scale is $\sqrt{4}$;
# its weights are not those of `mha`'s two heads of width 2, but the pattern is the same):

# %%
x = batch_left[2:3]  # (1, T, d_in): 4 pads, then "hello world"
causal = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T), True = future
hidden = causal | mask_left[2]  # (T, T): the right panel above
queries, keys, values = mha.W_query(x), mha.W_key(x), mha.W_value(x)  # (1, T, 4) each
scores = queries @ keys.transpose(1, 2)  # (1, T, T)
naive_weights = torch.softmax(scores.masked_fill(hidden, -torch.inf) / 4**0.5, dim=-1)
print(naive_weights[0].detach())  # (T, T)

# %% [markdown]
# Only the pad rows are NaN, and a loss computed on the real tokens only is finite. Harmless?
# No: backpropagation multiplies the NaN weights by the (zero) gradient of those rows, and
# $\text{NaN} \times 0 = \text{NaN}$. One training step and the weights are ruined:

# %%
naive_context = naive_weights @ values  # (1, T, 4): NaN in the pad rows
loss = naive_context[0, 4:].sum()  # the real tokens only
mha.zero_grad()
loss.backward()
print(mh.say("loss:", "损失："), round(loss.item(), 4))
print(
    mh.say("NaN in W_value's gradient:", "W_value 的梯度中有 NaN："),
    mha.W_value.weight.grad.isnan().any().item(),
)

# %% [markdown]
# **The fix** (this course's rule, used by every class in `mhsa_helpers`): a query row with no
# visible key gets weights 0 and a zero context vector,
#
# $$\alpha_{ij} = 0 \ \text{ for all } j \quad \text{if every key of row } i \text{ is hidden},$$
#
# computed *without* ever producing a NaN: those rows are left unmasked (a finite softmax), and
# their weights are set to zero afterwards. `mh.masked_attention` takes the padding mask as
# `key_padding_mask`:

# %%
queries, keys, values = mha.W_query(x), mha.W_key(x), mha.W_value(x)  # (1, T, 4), a fresh graph
context, weights = mh.masked_attention(
    queries, keys, values, causal, key_padding_mask=mask_left[2:3]
)  # (1, T, 4), (1, T, T)
print(weights[0].detach())
mha.zero_grad()
context[0, 4:].sum().backward()
print(
    mh.say("NaN in W_value's gradient:", "W_value 的梯度中有 NaN："),
    mha.W_value.weight.grad.isnan().any().item(),
)
torch.testing.assert_close(context[0, 4:], naive_context[0, 4:].detach())  # real rows: same
assert torch.equal(context[0, :4], torch.zeros(4, 4))  # empty rows: zero context

# %% [markdown]
# The real rows are the same numbers as before; the empty rows are zeros instead of NaN. (In a
# module with `out_proj`, a zero context vector comes out as `out_proj.bias`. Outputs at padding
# positions mean nothing; a loss must skip them.)
#
# ## 5. Batched == one at a time
#
# Every attention class in `mhsa_helpers` takes `key_padding_mask=` as a keyword. The promise:
# at every real token, the padded batch gives the output of the sentence run alone — for right
# and left padding, with or without a causal mask, on the explicit path and on PyTorch's fused
# kernel (`SDPAMultiHeadAttention` turns the mask into SDPA's boolean `attn_mask`).

# %%
sdpa = mh.SDPAMultiHeadAttention.from_multihead(mha).eval()
for name, module in [("MultiHeadAttention", mha), ("SDPAMultiHeadAttention", sdpa)]:
    for side, batch, mask in [("right", batch_right, mask_right), ("left", batch_left, mask_left)]:
        out = module(batch, key_padding_mask=mask)  # (b, T, d_out)
        assert torch.isfinite(out).all()
        for b in range(3):
            torch.testing.assert_close(out[b, ~mask[b]], alone[b])
        side_zh = "右" if side == "right" else "左"
        print(
            f"{name:<23}",
            mh.say(
                f"{side:<5} padding: batched == one at a time",
                f"{side_zh}填充：成批计算 == 逐句计算",
            ),
        )

out = encoder(batch_right, key_padding_mask=mask_right)  # (b, T, d_out), no causal mask
for b in range(3):
    torch.testing.assert_close(out[b, ~mask_right[b]], encoder(sequences[b]))
print(
    mh.say(
        "SelfAttentionV2         right padding: batched == one at a time",
        "SelfAttentionV2         右填充：成批计算 == 逐句计算",
    )
)

# %% [markdown]
# The weights show where each token looks: zero on the padded columns, rows summing to 1 over the
# real keys, and all-zero rows for the pads that see nothing.

# %%
_, weights = mha(batch_left, key_padding_mask=mask_left, return_weights=True)  # (b, h, T, T)
print(weights[2, 0].detach())  # head 1 (index 0), "hello world"
print(mh.say("row sums:", "各行之和："), weights[2, 0].sum(dim=-1).detach())
fig = mh.plot_attention(
    weights[2, 0],
    hello,
    title=mh.tr("head 1, left padding + causal mask", "头 1，左填充 + 因果掩码"),
)
plt.show()

# %% [markdown]
# ## 6. `valid_lens`: the same information as lengths
#
# *Dive into Deep Learning* (d2l) describes padding by `valid_lens`: for each sequence, the
# number of real tokens at the start (right padding only). Its `masked_softmax` fills the hidden
# scores with $-10^6$ instead of $-\infty$. With right padding the two descriptions are the same
# mask:

# %%
valid_lens = lengths  # (b,): d2l's description of the right-padded batch
from_lens = torch.arange(T)[None, :] >= valid_lens[:, None]  # (b, T)
assert torch.equal(from_lens, mask_right)
assert torch.equal((~mask_right).sum(dim=-1), valid_lens)  # and back


def d2l_masked_softmax(scores, valid_lens):
    # d2l's masked softmax: scores (b, T_q, T_k); keys at positions >= valid_lens get -1e6
    hidden = torch.arange(scores.shape[-1])[None, None, :] >= valid_lens[:, None, None]
    return torch.softmax(scores.masked_fill(hidden, -1e6), dim=-1)


scores_right = torch.randn(3, T, T)  # (b, T_q, T_k), any scores
identity = torch.eye(T).expand(3, T, T)  # keys = I, so queries @ keys.T = scores_right
_, ours = mh.masked_attention(scores_right, identity, identity, key_padding_mask=mask_right)
theirs = d2l_masked_softmax(scores_right / T**0.5, valid_lens)  # (b, T_q, T_k)
torch.testing.assert_close(ours, theirs)
print(
    mh.say(
        "d2l's valid_lens and our key_padding_mask give the same weights",
        "d2l 的 valid_lens 和我们的 key_padding_mask 给出相同的权重",
    )
)

# %% [markdown]
# A finite $-10^6$ never produces NaN, but a row whose keys are all hidden then becomes a
# *uniform* average over the pads instead of zeros. And `valid_lens` can only say "the first L
# tokens are real": left padding, or pads in the middle of packed sequences (several short
# sequences written one after another into one row, to waste fewer pads), need a mask.
#
# ## 7. Six mask conventions, one attention
#
# Mask mistakes are the commonest attention bug, because every library says "mask" and means
# something else by it. The six conventions you will meet, for the same right-padded, causal
# batch:
#
# | where | the mask | dtype, shape | a key is visible where the entry is |
# |---|---|---|---|
# | lesson 03 | `torch.tril(torch.ones(T, T))` | float (T, T) | 1 (keep) |
# | this course | `triu(diagonal=1)`, `key_padding_mask` | bool (T, T), (b, T) | `False` (`True` = hidden) |
# | SDPA | bool `attn_mask` | bool, broadcast to (b, h, T_q, T_k) | `True` (may attend) |
# | `nn.MultiheadAttention` | `key_padding_mask` (and a bool `attn_mask`) | bool (b, T_k) | `False` (`True` = ignore) |
# | Hugging Face | `attention_mask` | int (b, T) | 1 (a real token) |
# | d2l | `valid_lens`, hidden scores filled with $-10^6$ | int (b,) or (b, T_q) | position < `valid_lens` |
#
# Two of them say `True` and mean the opposite (SDPA's "may attend", `nn.MultiheadAttention`'s
# "ignore"), and two are not bool at all: a float mask is *added* to the scores by SDPA (0 keeps,
# $-\infty$ hides), so a float 0/1 mask hides nothing. Hugging Face itself turns its 0/1 mask into
# such an additive float mask, with the dtype's lowest number in place of $-\infty$.
#
# The next cell starts from the Hugging Face mask of our right-padded batch and builds the other
# five from it:

# %%
attention_mask = (~mask_right).long()  # (b, T) Hugging Face: 1 = a real token
key_padding_mask = attention_mask == 0  # (b, T) this course, nn.MultiheadAttention: True = pad
causal_hidden = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T) True = hidden
tril_keep = torch.tril(torch.ones(T, T))  # (T, T) lesson 03: 1 = keep
keep = tril_keep * attention_mask[:, None, None, :]  # (b, 1, T, T) float, 1 = keep
sdpa_allowed = ~causal_hidden & ~key_padding_mask[:, None, None, :]  # (b, 1, T, T) True = may
hf_additive = (1.0 - keep) * torch.finfo(torch.float32).min  # (b, 1, T, T), added to the scores
steps = torch.arange(1, T + 1)  # (T_q,): query i sees i + 1 keys without padding
valid_lens_2d = torch.minimum(steps, attention_mask.sum(dim=-1, keepdim=True))  # (b, T_q) d2l
print(mh.say("Hugging Face attention_mask:", "Hugging Face 的 attention_mask："))
print(attention_mask)
print(mh.say("d2l's valid_lens, one per query:", "d2l 的 valid_lens，每个查询一个："))
print(valid_lens_2d)

# %% [markdown]
# Now one head (the full width 4 of `mha`'s projections) attends with each of them. The course's
# `masked_attention` is the reference; every other convention must give the same weights, and
# SDPA, which returns no weights, the same context vectors:

# %%
import torch.nn.functional as F
from torch import nn

with torch.no_grad():
    q = mha.W_query(batch_right)[:, None]  # (b, 1, T, 4): one head of width 4
    k = mha.W_key(batch_right)[:, None]  # (b, 1, T, 4)
    v = mha.W_value(batch_right)[:, None]  # (b, 1, T, 4)
    scores = q @ k.transpose(-2, -1) / 4**0.5  # (b, 1, T, T)
    context, reference = mh.masked_attention(
        q, k, v, causal_hidden, key_padding_mask=key_padding_mask
    )  # (b, 1, T, 4), (b, 1, T, T)

    d2l_hidden = torch.arange(T) >= valid_lens_2d[:, None, :, None]  # (b, 1, T_q, T_k)
    weights_by = {
        mh.say("lesson 03 tril ones", "第 03 课的 tril 全 1 矩阵"): torch.softmax(
            scores.masked_fill(keep == 0, -torch.inf), dim=-1
        ),
        mh.say("Hugging Face additive", "Hugging Face 加性掩码"): torch.softmax(
            scores + hf_additive, dim=-1
        ),
        mh.say("d2l valid_lens, -1e6", "d2l 的 valid_lens（-1e6）"): torch.softmax(
            scores.masked_fill(d2l_hidden, -1e6), dim=-1
        ),
    }
    torch_mha = nn.MultiheadAttention(embed_dim=4, num_heads=1, bias=False, batch_first=True)
    torch_mha.in_proj_weight.copy_(torch.eye(4).repeat(3, 1))  # (12, 4): q, k, v pass through
    torch_mha.out_proj.weight.copy_(torch.eye(4))  # (4, 4): no output projection either
    context_torch, weights_torch = torch_mha(
        q[:, 0], k[:, 0], v[:, 0], attn_mask=causal_hidden, key_padding_mask=key_padding_mask
    )  # (b, T, 4), (b, T, T)
    weights_by["nn.MultiheadAttention"] = weights_torch[:, None]  # (b, 1, T, T)
    context_sdpa = F.scaled_dot_product_attention(q, k, v, attn_mask=sdpa_allowed)

same_rows = []
for name, weights_other in weights_by.items():
    torch.testing.assert_close(weights_other, reference)
    same_rows.append((name, mh.say("weights == this course's", "权重 == 本课程的")))
torch.testing.assert_close(context_torch[:, None], context)
torch.testing.assert_close(context_sdpa, context)
sdpa_name = mh.say("SDPA bool attn_mask", "SDPA 布尔 attn_mask")
same_rows.append((sdpa_name, mh.say("context == this course's", "上下文 == 本课程的")))
mh.show_table(same_rows)

# %% [markdown]
# Same attention six times. The conversions are one comparison or one `~` each; what goes wrong
# in practice is the meaning of `True`, a float mask where a bool one was meant, and the shape:
# SDPA broadcasts the mask against (b, h, T_q, T_k) from the right, so a padding mask needs its
# head and query axes as size-1 axes, as `sdpa_allowed` has.
#
# ## 8. Padding and the KV cache
#
# Generation pads prompts on the left, then appends new tokens for the whole batch. The cache
# must remember which cached keys are pads: `KVCache` stores their mask
# (`cache.key_padding_mask`, (b, T_cached)), and each call passes the padding of its new tokens
# only.

# %%
prompt, prompt_mask = batch_left[:, :5], mask_left[:, :5]  # (b, 5, d_in), (b, 5)
cache = mh.KVCache(T)
mha(prompt, key_padding_mask=prompt_mask, cache=cache)  # (b, 5, d_out)
step = mha(batch_left[:, 5:], cache=cache)  # (b, 1, d_out): a real token in every sequence
print(cache)
print(cache.key_padding_mask)
for b in range(3):
    torch.testing.assert_close(step[b, 0], alone[b][-1])  # the last token, as if alone

# %% [markdown]
# `6 padded` counts the cached pad positions of the whole batch (2 + 4). The new token is real in
# every sequence, so the cache's mask gains a column of `False`, and each sentence's last output
# is the one it gets when it runs alone.
#
# ## Summary
#
# * A batch needs one length T: short sentences get **padding**; a **key padding mask** (bool
#   (b, T), `True` = padding, `torch.nn.MultiheadAttention`'s convention) says where.
# * Right padding with a causal mask never reaches the real tokens; left padding and layers
#   without a causal mask do — the mask hides padded keys from every query.
# * A query whose keys are all hidden (left padding + causal mask) would get softmax of all
#   $-\infty$ = NaN, which poisons the gradients even if the loss skips it. Here such a row gets
#   zero weights and a zero context vector, without ever computing the NaN.
# * With the mask, batched == one at a time at every real token, for every class in the package,
#   the SDPA path and the KV cache included. d2l's `valid_lens` is the right-padding special case.
# * Six mask conventions, one attention: know what `True` (or 1) means in each,
#   whether the mask is bool or added to the scores, and how it broadcasts.
# * Next: lesson 12 trains a small character-level model on Tang poems and lets it write.
#
# ## Exercises
#
# Solutions: `solutions/11_padded_batches_solutions.ipynb`.
#
# **Exercise 1.** Three sequences of lengths 3, 1 and 4 are **left**-padded to T = 5 and go
# through a **causal** layer. Over the whole batch, how many query rows have no visible key at
# all (the rows that would be NaN without the fix of section 4)? A whole number; work it out
# first, then check it with a mask if you like.

# %%
import mhsa_helpers.exercises

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_blind_rows(answer)

# %% [markdown]
# **Exercise 2.** Write `masked_softmax(scores, hidden)`: `scores` is a float tensor
# (..., T_q, T_k), `hidden` a bool tensor of the same shape, `True` where attention is forbidden.
# Return the softmax over the visible positions of each row, exactly 0 at hidden positions, and
# a row of zeros when every position of a row is hidden — no NaN in the output or in the
# gradient. Set `answer = masked_softmax` (the function itself).

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_masked_softmax(answer)

# %% [markdown]
# **Exercise 3.** A BERT-style encoder (no causal mask) runs in low precision and gets its batch
# from a Hugging Face tokenizer: `attention_mask` is an int tensor (b, T), 1 = a real token,
# 0 = a pad. Write `hf_to_additive(attention_mask, dtype)`, returning the **float** mask in
# `dtype` that `F.scaled_dot_product_attention(q, k, v, attn_mask=...)` adds to the scores, for
# q, k, v of shape (b, h, T, head_dim): 0 at real keys, and at padded keys the fill Hugging Face
# uses (section 7 built it for float32 only). The checker tries float32, float16 and bfloat16,
# and masks other than this lesson's. Set `answer = hf_to_additive` (the function itself).

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_hf_to_additive_mask(answer)
