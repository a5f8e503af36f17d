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
# # 10 · Cross-attention, the KV cache and GQA (交叉注意力、KV 缓存与分组查询注意力)
#
# Three ideas that take the attention block of lessons 06 and 09 into real models:
# a decoder that reads an encoder's output (**cross-attention**, 交叉注意力), generation one token
# at a time without recomputing the past (**KV cache**, KV 缓存), and a smaller cache by sharing
# keys and values between heads (**grouped-query attention**, 分组查询注意力, and its extreme,
# **multi-query attention**, 多查询注意力).
#
# **Learning goals**
# 1. Use `CrossMultiHeadAttention` and read a query-vs-key heatmap of two different sentences.
# 2. Train a tiny cross-attention model for a second and measure the alignment it learned
#    against the chance level.
# 3. Generate token by token (**autoregressive generation**, 自回归生成) with and without a
#    `KVCache`, get identical outputs, and count what the cache saves.
# 4. Compute the parameter and KV-cache savings of GQA and MQA at GPT-2 and Llama-like sizes,
#    and check the formulas against the modules.
# 5. Build a KV cache that appends and attends, and GQA's key/value sharing, yourself.
#
# **Prerequisites:** lesson 09 (fused QKV, `F.scaled_dot_product_attention`).
# **Time:** about 125 minutes (reading, running 27 code cells, 1 prediction, 3 exercises, 2
# build-its; the rule is in lesson 00).
#
# **Shape contract:** cross-attention: query (b, n_q, d_q), key_value (b, n_kv, d_kv) ->
# (b, n_q, d_out), weights (b, h, n_q, n_kv). Cached self-attention: n new tokens (b, n, d_in) ->
# (b, n, d_out); the cache holds keys and values (b, h_kv, T_cached, head_dim).

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. Cross-attention: one sequence asks, another answers
#
# In self-attention, queries, keys and values all come from the same tokens. In an
# **encoder-decoder** (编码器-解码器) model (machine translation, speech recognition), the
# decoder's tokens $Y$ make the **queries** and the encoder's output $X$ provides the **keys and
# values**:
#
# $$\text{CrossAttention}(Y, X) = \text{softmax}\!\left(\frac{(Y W_q)(X W_k)^\top}{\sqrt{d_k}}\right) X W_v .$$
#
# Two consequences:
#
# * the weight matrix is (n_q, n_kv) — rectangular, target tokens x source tokens;
# * there is **no causal mask**: the whole source sentence is known before the translation
#   starts, so every target token may look at every source token.
#
# To see something meaningful without training a translator, we build embeddings in which each
# French word is a noisy copy of its English counterpart, and set `W_query = W_key` to a scaled
# identity, so that a score is simply "how similar are these two embeddings". (At the end of
# this section a small model *learns* an alignment by training.)

# %%
source = ["the", "black", "cat", "sleeps"]  # encoder side (keys, values)
target = ["le", "chat", "noir", "dort"]  # decoder side (queries)
aligned = [0, 2, 1, 3]  # le->the, chat->cat, noir->black, dort->sleeps

torch.manual_seed(123)
d = 8
source_emb = torch.randn(1, 4, d)  # (b, n_kv, d_kv)
source_emb = source_emb / source_emb.norm(dim=-1, keepdim=True) * d**0.5  # equal lengths
target_emb = source_emb[:, aligned] + 0.3 * torch.randn(1, 4, d)  # (b, n_q, d_q)

cross = mh.CrossMultiHeadAttention(d_q=d, d_kv=d, d_out=d, num_heads=1).eval()
with torch.no_grad():
    cross.W_query.weight.copy_(1.5 * torch.eye(d))
    cross.W_key.weight.copy_(1.5 * torch.eye(d))
out, weights = cross(target_emb, source_emb, return_weights=True)
# output (b, n_q, d_out), weights (b, h, n_q, n_kv)
print(mh.say("output", "输出"), tuple(out.shape), mh.say("weights", "权重"), tuple(weights.shape))
print(weights[0, 0].detach())
assert weights[0, 0].argmax(dim=-1).tolist() == aligned

# %%
import matplotlib.pyplot as plt

fig = mh.plot_attention(
    weights[0, 0],
    source,
    query_tokens=target,
    title=mh.tr("Cross-attention: target → source", "交叉注意力：目标 → 源"),
)
plt.show()

# %% [markdown]
# The same weights as a picture of who reads whom: every target word is joined to **every**
# source word (4 x 4 lines, nothing masked), each line as strong as its weight; the strongest
# line of each row is red.

# %%
fig = mh.figures.plot_cross_attention(weights[0, 0], target, source)
plt.show()

# %% [markdown]
# Each row sums to 1 over *all* source words (nothing is masked), and "noir" looks at "black"
# although the word order differs — cross-attention has no notion of "before". The matrix need
# not be square either: a 3-word question can read a 7-word document, giving 3 x 7 weights.
#
# With random weights, several heads and two different widths (decoder d_q = 6, encoder
# d_kv = 10), the shapes follow the contract:

# %%
torch.manual_seed(123)
cross_mh = mh.CrossMultiHeadAttention(d_q=6, d_kv=10, d_out=8, num_heads=2)
decoder_states = torch.randn(2, 3, 6)  # (b, n_q, d_q)
encoder_states = torch.randn(2, 7, 10)  # (b, n_kv, d_kv)
out, weights = cross_mh(decoder_states, encoder_states, return_weights=True)
print(mh.pad(mh.say("output", "输出"), 7), tuple(out.shape))  # (b, n_q, d_out)
print(mh.pad(mh.say("weights", "权重"), 7), tuple(weights.shape))  # (b, h, n_q, n_kv)
torch.testing.assert_close(weights.sum(dim=-1), torch.ones(2, 2, 3))
assert (weights > 0).all()  # no mask: every target token sees every source token

# %% [markdown]
# Head 1 of the first sequence, drawn like the translation above: 3 queries, 7 keys, 21 lines —
# a rectangle, not a triangle.

# %%
fig = mh.figures.plot_cross_attention(
    weights[0, 0],
    [mh.say(f"dec {i}", f"解码器 {i}") for i in range(3)],
    [mh.say(f"enc {j}", f"编码器 {j}") for j in range(7)],
)
plt.show()

# %% [markdown]
# ### A cross-attention head that learns its alignment
#
# The alignment above was set by hand. Can a head *learn* one? A toy task with a known answer:
# **reverse** a sequence of 6 tokens (a vocabulary of 10). The encoder side is each source
# token's embedding plus an embedding of its position: the keys and values. The decoder side
# holds no tokens at all, only an embedding of the target position it must fill: the queries.
# So the only way to write the right token at target position $i$ is to attend to source
# position $5 - i$, and the share of weight there measures what the head learned. A head that
# spreads its weight evenly puts $1/6 \approx 17\,\%$ there: the chance level.


# %%
from torch import nn

vocab, length, d_model = 10, 6, 16


class Reverser(nn.Module):
    # writes its source sequence reversed: one cross-attention layer, no decoder tokens

    def __init__(self, vocab, length, d_model):
        super().__init__()
        self.token = nn.Embedding(vocab, d_model)  # encoder side: which token
        self.source_position = nn.Embedding(length, d_model)  # encoder side: where it sits
        self.target_position = nn.Embedding(length, d_model)  # decoder side: the slot to fill
        self.cross = mh.CrossMultiHeadAttention(d_model, d_model, d_model, num_heads=1)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, source):  # source: (b, n) token ids
        b, n = source.shape
        positions = torch.arange(n)  # (n,)
        # (b, n, d): the encoder output ("memory"), used as keys and values
        memory = self.token(source) + self.source_position(positions)
        queries = self.target_position(positions).expand(b, n, -1)  # (b, n, d)
        # context (b, n, d); weights (b, h=1, n, n)
        context, weights = self.cross(queries, memory, return_weights=True)
        return self.out(context), weights[:, 0]  # logits (b, n, vocab), weights (b, n, n)


gen = torch.Generator().manual_seed(123)
pool = torch.unique(torch.randint(vocab, (3000, length), generator=gen), dim=0)  # distinct rows
order = torch.randperm(len(pool), generator=gen)
train_set, held_out = pool[order[:2000]], pool[order[2000:2500]]  # (2000, 6), (500, 6): disjoint
expected = torch.arange(length - 1, -1, -1)  # target position i reads source position 5 - i


def alignment(model, sequences):
    # share of weight on the expected source position, share of right tokens, mean weights
    with torch.no_grad():
        logits, weights = model(sequences)  # (b, n, vocab), (b, n, n)
    on_expected = weights[:, torch.arange(length), expected].mean().item()
    right = (logits.argmax(dim=-1) == sequences.flip(-1)).float().mean().item()
    return on_expected, right, weights.mean(dim=0)  # mean weights (n, n)


torch.manual_seed(123)
reverser = Reverser(vocab, length, d_model)
share_before, right_before, map_before = alignment(reverser, held_out)
optimizer = torch.optim.Adam(reverser.parameters(), lr=1e-2)
losses = []
for _ in range(100):
    batch = train_set[torch.randint(len(train_set), (64,), generator=gen)]  # (64, 6)
    logits, _ = reverser(batch)  # (64, 6, vocab)
    loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), batch.flip(-1).reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
share_after, right_after, map_after = alignment(reverser, held_out)
print(
    mh.say(
        f"training loss: {losses[0]:.2f} at step 1, {losses[-1]:.4f} at step 100",
        f"训练损失：第 1 步 {losses[0]:.2f}，第 100 步 {losses[-1]:.4f}",
    )
)
print(
    mh.say(
        "on 500 held-out sequences (none of them trained on):",
        "在 500 个留出的序列上（都没有参与训练）：",
    )
)
mh.show_table(
    [
        (
            mh.say("weight on the expected source position", "预期源位置上的权重"),
            f"{share_before:.1%}",
            f"{share_after:.1%}",
            f"{1 / length:.1%}",
        ),
        (
            mh.say("tokens reversed right", "正确反转的词元"),
            f"{right_before:.1%}",
            f"{right_after:.1%}",
        ),
    ],
    header=(
        "",
        mh.say("before", "训练前"),
        mh.say("after", "训练后"),
        mh.say("chance", "随机水平"),
    ),
)
assert share_before < 0.3 < 0.9 < share_after and right_after > 0.99

# %%
fig = mh.figures.plot_learned_alignment(map_before, map_after, expected)
plt.show()

# %% [markdown]
# Before training the head's weights are close to even, near the chance level. After 100 steps
# of 64 sequences, almost all of each query's weight sits on the anti-diagonal, the expected
# source position, on sequences the model never saw, and every token comes out right. Nobody told the head where to
# look: the loss only asked for the right tokens, and attending to the mirrored position was the
# way to produce them. Translation models learn their alignment maps the same way, from the
# loss, on much harder data.

# %% [markdown]
# ## 2. Generating with a KV cache
#
# A decoder generates one token, appends it, and runs again. Without a cache, every step feeds
# the whole sequence so far (the prompt and every token generated) through the layer and
# recomputes every key and value — although, thanks to the causal
# mask, the keys and values of old tokens **never change**. A **KV cache** keeps them: each step
# projects only the new token, appends its key and value, and lets its query attend to
# everything cached:
#
# $$K_{\le t} = \begin{bmatrix} K_{\le t-1} \\ x_t W_k \end{bmatrix},\quad
#   V_{\le t} = \begin{bmatrix} V_{\le t-1} \\ x_t W_v \end{bmatrix},\quad
#   \text{out}_t = \text{softmax}\!\left(\frac{q_t K_{\le t}^\top}{\sqrt{d_k}}\right) V_{\le t}.$$
#
# A real model turns the last output into a token (a layer scores every token of the vocabulary,
# and one is drawn from those scores: lesson 12 builds both) and embeds it again. Our
# toy "model" is one `SDPAMultiHeadAttention` layer whose last output vector *is* the next input,
# which keeps the loop honest: any error in the cache would change every later step.
#
# **Predict, then run.** The next cell generates 12 tokens after a 4-token prompt, once without a
# cache (every step feeds the whole sequence so far) and once with one, and a hook counts the
# token rows that go through the Q/K/V projection. Without the cache, how many rows in total over
# the 12 steps? Write your guess into `prediction`.

# %%
import mhsa_helpers.exercises

prediction = None  # YOUR CODE HERE: total token rows projected without a cache
mhsa_helpers.exercises.check_projected_tokens(prediction)

# %% [markdown]
# The generation loop, with and without the cache:

# %%
torch.manual_seed(123)
layer = mh.SDPAMultiHeadAttention(d_in=16, d_out=16, context_length=32, dropout=0.0, num_heads=4)
layer.eval()

projected = []  # how many token rows go through the fused Q/K/V projection, per call
hook = layer.qkv.register_forward_hook(lambda mod, inp, out: projected.append(inp[0].shape[1]))

prompt = torch.randn(1, 4, 16)  # (b, T_prompt, d_in)
new_tokens = 12

with torch.no_grad():
    # Without a cache: feed the whole sequence every step.
    seq = prompt
    for _ in range(new_tokens):
        next_vec = layer(seq)[:, -1:]  # (1, 1, 16): output of the last position
        seq = torch.cat([seq, next_vec], dim=1)
    rows_without = projected.copy()

    # With a cache: the prompt once, then one token per step.
    projected.clear()
    cache = mh.KVCache(context_length=32)
    next_vec = layer(prompt, cache=cache)[:, -1:]  # (1, 1, 16)
    generated, cache_lengths = [next_vec], [len(cache)]
    for _ in range(new_tokens - 1):
        next_vec = layer(next_vec, cache=cache)  # (1, 1, 16), attends to all cached tokens
        generated.append(next_vec)
        cache_lengths.append(len(cache))  # one token longer after every step
    seq_cached = torch.cat([prompt, *generated], dim=1)  # (1, 16, 16)
    rows_with = projected.copy()
hook.remove()

torch.testing.assert_close(seq_cached, seq)
print(
    mh.say(
        f"same 12 generated vectors with and without the cache; {cache!r}",
        f"用不用缓存，生成的 12 个向量都相同。缓存：{cache!r}",
    )
)

# %% [markdown]
# The cost per generated token, counted by a hook on the projection (deterministic, no clock):

# %%
mh.show_table(
    [(step, a, b) for step, (a, b) in enumerate(zip(rows_without, rows_with), start=1)],
    header=(
        mh.say("step", "步"),
        mh.say("tokens projected without cache", "不用缓存时投影的词元数"),
        mh.say("with cache", "用缓存时"),
    ),
)
print(
    mh.say(
        f"total: {sum(rows_without)} vs {sum(rows_with)}",
        f"合计：{sum(rows_without)} 对 {sum(rows_with)}",
    )
)
if prediction is not None:
    print(
        mh.say(f"you predicted {prediction} without the cache", f"你预测不用缓存时是 {prediction}")
    )
assert rows_with == [4] + [1] * (new_tokens - 1)
assert sum(rows_without) == sum(range(4, 4 + new_tokens))
assert cache_lengths == list(range(4, 4 + new_tokens))

# %% [markdown]
# The cache of this very run, step by step (left), and the work the hook counted (right):

# %%
fig = mh.figures.plot_kv_cache_growth(cache_lengths, rows_without, rows_with)
plt.show()

# %% [markdown]
# Without the cache, step t re-projects t tokens and recomputes a t x t score matrix, so
# generating T tokens costs O(T²) projections and O(T³) score entries in total; with it, O(T)
# projections and O(T²) scores. The price is memory: 2 x b x h_kv x T x head_dim numbers per
# layer — section 3 shrinks exactly that.
#
# Timing the two loops on a longer generation, 240 tokens (your numbers will differ; CI does not
# compare them):

# %%
# NBVAL_IGNORE_OUTPUT
import math
import time

torch.manual_seed(0)
big = mh.SDPAMultiHeadAttention(d_in=64, d_out=64, context_length=256, dropout=0.0, num_heads=4)
big.eval()
start_seq = torch.randn(1, 8, 64)  # (b, T_prompt, d_in)
with torch.no_grad():
    t0 = time.perf_counter()
    seq = start_seq
    for _ in range(240):
        seq = torch.cat([seq, big(seq)[:, -1:]], dim=1)  # (1, T + 1, 64)
    t_without = time.perf_counter() - t0

    t0 = time.perf_counter()
    cache = mh.KVCache(256)
    last = big(start_seq, cache=cache)[:, -1:]  # (1, 1, 64)
    for _ in range(239):
        last = big(last, cache=cache)  # (1, 1, 64)
    t_with = time.perf_counter() - t0
without_ms, with_ms = 1e3 * t_without, 1e3 * t_with
print(
    mh.say(
        f"240 tokens: without cache {without_ms:.1f} ms, with cache {with_ms:.1f} ms",
        f"240 个词元：不用缓存 {without_ms:.1f} ms，用缓存 {with_ms:.1f} ms",
    )
)
print(
    mh.say(
        f"the cache is {t_without / t_with:.1f}x faster",
        f"用缓存的速度是不用缓存的 {t_without / t_with:.1f} 倍",
    )
)
assert all(0 < t < 30 and math.isfinite(t) for t in (t_without, t_with))

# %% [markdown]
# Each step also has a fixed cost that the cache does not remove (Python, a few small kernel
# calls). What the cache removes, the re-projection of every past token, grows with the length
# of the sequence, so the ratio printed above holds for these 240 tokens and this machine only.

# %% [markdown]
# ### Feeding a chunk: the mask must be shifted
#
# A cache can also take several tokens at once (a prompt, or a chunk of it). The n new queries
# sit at positions `offset .. offset + n - 1` and see keys `0 .. offset + n - 1`, so their mask is
# **rows `offset:offset + n` (Python slice) of the full causal mask** — not the top-left (n, n + offset) block
# that `is_causal=True` would build:

# %%
offset, n = 2, 3
full_mask = torch.ones(offset + n, offset + n).triu(1).bool()  # True = hidden
print(mh.say("correct mask for the chunk (full_mask[2:]):", "这一块的正确掩码（full_mask[2:]）："))
print(full_mask[offset:].int())
print(
    mh.say("is_causal's top-left alignment (wrong here):", "is_causal 的左上角对齐（这里是错的）：")
)
print(torch.ones(n, offset + n).triu(1).bool().int())

# %% [markdown]
# The package's classes slice their `mask` buffer this way. Feeding a sequence token by token,
# or in uneven chunks, through one cache gives what one full forward pass gives:

# %%
torch.manual_seed(1)
x = torch.randn(2, 10, 16)  # (b, T, d_in)
with torch.no_grad():
    full = layer(x)  # (2, 10, 16)
    cache = mh.KVCache(32)
    chunks = [layer(x[:, a:b], cache=cache) for a, b in [(0, 3), (3, 4), (4, 9), (9, 10)]]
torch.testing.assert_close(torch.cat(chunks, dim=1), full)
print(
    mh.say(
        f"chunks 3 + 1 + 5 + 1 through the cache == one full forward; {len(cache)} tokens cached",
        f"经过缓存的 3 + 1 + 5 + 1 块 == 一次完整的前向传播，缓存了 {len(cache)} 个词元",
    )
)

# %% [markdown]
# ### Build it: a KV cache that appends and attends
#
# Now write the cache yourself. The layer has already projected the new tokens: `q`, `k` and `v`
# arrive split into heads, (b, h, n, head_dim) each. Your class keeps what it has cached in
# `self.keys` and `self.values`, (b, h, T_cached, head_dim), and its `append_and_attend(q, k, v)`
#
# 1. refuses, with a `ValueError`, new tokens that would take the cache past `max_len`
#    (before changing anything);
# 2. appends `k` and `v` to the cache;
# 3. returns the attention of the new queries over every cached key, (b, h, n, head_dim), with
#    the causal mask that fits where the new tokens sit.
#
# The checker feeds random queries, keys and values in uneven chunks at sizes other than this
# lesson's, and compares your outputs with one causal attention over the whole sequence. It
# also checks what you cached, that `q`, `k` and `v` are left as they were, and the limit.


# %%
class MyKVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.keys = None  # (b, h, T_cached, head_dim)
        self.values = None  # (b, h, T_cached, head_dim)

    def append_and_attend(self, q, k, v):  # (b, h, n, head_dim) each
        # YOUR CODE HERE: check the limit, append k and v, attend (b, h, n, head_dim)
        raise NotImplementedError


answer = None  # YOUR CODE HERE: answer = MyKVCache once it is written
mhsa_helpers.exercises.check_kv_cache_step(answer)

# %% [markdown]
# ## 3. Grouped-query attention: fewer keys and values
#
# The KV cache stores one key and one value vector per head, per token, per layer. **GQA** keeps
# all `num_heads` query heads but computes only `num_kv_groups` key/value heads; each K/V head is
# shared by `num_heads / num_kv_groups` consecutive query heads (`repeat_interleave` copies them
# before the attention). `num_kv_groups == num_heads` is plain multi-head attention;
# `num_kv_groups == 1` is **MQA**.
#
# With $h$ query heads in $g$ groups, query head $i$ uses K/V head $\lfloor i / (h/g) \rfloor$:
#
# $$\text{head}_i = \text{Attention}\big(Q_i,\; K_{\lfloor i g / h \rfloor},\; V_{\lfloor i g / h \rfloor}\big).$$

# %%
num_heads, num_kv_groups = 8, 2
group_size = num_heads // num_kv_groups
kv_head_of = torch.arange(num_kv_groups).repeat_interleave(group_size)  # (num_heads,)
for kv in range(num_kv_groups):
    heads = (kv_head_of == kv).nonzero().flatten().tolist()
    print(mh.say(f"K/V head {kv} serves query heads {heads}", f"K/V 头 {kv} 服务于查询头 {heads}"))

# %%
fig = mh.figures.plot_gqa_sharing(kv_head_of)
plt.show()

# %% [markdown]
# In code, the sharing is one `repeat_interleave` on the key/value heads: a (b, g, T, head_dim)
# key tensor becomes (b, num_heads, T, head_dim), and query head $i$ meets K/V head
# `kv_head_of[i]`. Only the g heads are computed and cached; the copies exist only during the
# attention:

# %%
torch.manual_seed(0)
keys_g = torch.randn(1, num_kv_groups, 5, 4)  # (b, g, T, head_dim): what the cache stores
keys_h = keys_g.repeat_interleave(group_size, dim=1)  # (b, num_heads, T, head_dim)
print(tuple(keys_g.shape), "->", tuple(keys_h.shape))
for head in range(num_heads):
    assert torch.equal(keys_h[:, head], keys_g[:, kv_head_of[head]])

# %% [markdown]
# ### Build it: the key/value sharing
#
# Write `repeat_kv(x, n_rep)`, the sharing step of GQA: x holds g K/V heads, (b, g, T, head_dim),
# and the result must hold g * n_rep heads, (b, g * n_rep, T, head_dim), in which query head i
# meets K/V head i // n_rep, exactly as the cell above. This time without `repeat_interleave`
# (the checker refuses it). Hugging Face's Llama code uses `expand` and `reshape` (`expand` makes
# a view, so no copy is made before the reshape); any other way is fine too. Mind where the new
# axis goes, and n_rep = 1.
#
# The checker calls your function at three sizes (n_rep = 1 among them) and compares with the
# sharing that `mh.GroupedQueryAttention` does.


# %%
def repeat_kv(x, n_rep):  # (b, g, T, head_dim) -> (b, g * n_rep, T, head_dim)
    # YOUR CODE HERE
    raise NotImplementedError


answer = None  # YOUR CODE HERE: answer = repeat_kv once it is written
mhsa_helpers.exercises.check_repeat_kv(answer)

# %% [markdown]
# First the sanity check: with one group per head, GQA *is* lesson 06's multi-head attention
# (same parameter names and shapes, so `load_state_dict` copies them):

# %%
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=16, d_out=16, context_length=32, dropout=0.0, num_heads=4)
gqa_as_mha = mh.GroupedQueryAttention(16, 16, 32, 0.0, num_heads=4, num_kv_groups=4)
gqa_as_mha.load_state_dict(mha.state_dict())
x = torch.randn(2, 10, 16)  # (b, T, d_in)
torch.testing.assert_close(gqa_as_mha(x), mha(x))
print("GroupedQueryAttention(num_kv_groups=num_heads) == MultiHeadAttention")

# %% [markdown]
# **Parameters.** With `head_dim = d / h` and `g` K/V groups (no Q/K/V bias, `out_proj` with bias):
#
# $$\text{params} = \underbrace{d^2}_{W_\text{query}} + \underbrace{2\,d\,g\,\text{head\_dim}}_{W_\text{key},\ W_\text{value}} + \underbrace{d^2 + d}_{\text{out\_proj}}$$
#
# **KV cache** per sequence:
#
# $$\text{bytes} = 2\,(K \text{ and } V) \times \text{layers} \times g \times \text{head\_dim} \times T \times \text{bytes per number}.$$
#
# We check both formulas against the modules at a small size before trusting them at a big one:


# %%
def attention_params(d, num_heads, num_kv_groups):
    head_dim = d // num_heads
    return d * d + 2 * d * num_kv_groups * head_dim + d * d + d


def kv_cache_bytes(layers, num_heads, num_kv_groups, head_dim, T, batch=1, bytes_per_number=2):
    return 2 * layers * batch * num_kv_groups * head_dim * T * bytes_per_number


d_small, h_small, T_small = 48, 8, 16
for g in [8, 2, 1]:
    module = mh.GroupedQueryAttention(d_small, d_small, T_small, 0.0, h_small, g).eval()
    n_params = sum(p.numel() for p in module.parameters())
    cache = mh.KVCache(T_small)
    with torch.no_grad():
        module(torch.randn(1, T_small, d_small), cache=cache)
    formula_cache = kv_cache_bytes(1, h_small, g, d_small // h_small, T_small, bytes_per_number=4)
    print(
        mh.say(
            f"g={g}: {n_params:>5} parameters, cache {tuple(cache.keys.shape)} = {cache.nbytes} bytes",
            f"g={g}：{n_params:>5} 个参数，缓存 {tuple(cache.keys.shape)} = {cache.nbytes} 字节",
        )
    )
    assert n_params == attention_params(d_small, h_small, g)
    assert cache.nbytes == formula_cache

# %% [markdown]
# The same formulas at real sizes: GPT-2 small (d = 768, 12 heads, 12 layers, context 1024) and a
# Llama-like model (d = 4096, 32 query heads, 32 layers, context 8192; Llama 3 8B uses 8 K/V
# groups), both with 2-byte (float16 / bfloat16) caches, batch 1:

# %%
llama = mh.say("Llama-like", "类 Llama")
configs = [
    ("GPT-2 small", 768, 12, 12, 1024, [12, 4, 1]),
    (llama, 4096, 32, 32, 8192, [32, 8, 1]),
]
MiB = 2**20
gqa_rows = []
param_saving = {}
for name, d_model, heads, layers, T, groups in configs:
    mha_params = attention_params(d_model, heads, heads)
    for g in groups:
        params = attention_params(d_model, heads, g)
        param_saving[name, g] = 1 - params / mha_params
        cache_mib = kv_cache_bytes(layers, heads, g, d_model // heads, T) / MiB
        kind = "MHA" if g == heads else ("MQA" if g == 1 else "GQA")
        gqa_rows.append(
            (
                name,
                g,
                kind,
                f"{params:,}",
                f"{param_saving[name, g]:.1%}",
                f"{cache_mib:,.0f} MiB",
                f"{heads // g}x",
            )
        )
mh.show_table(
    gqa_rows,
    header=(
        mh.say("model", "模型"),
        mh.say("K/V heads", "K/V 头数"),
        "",
        mh.say("params/layer", "每层参数"),
        mh.say("fewer params", "参数减少"),
        mh.say("KV cache/seq", "KV 缓存/序列"),
        mh.say("cache", "缩小"),
    ),
)
assert kv_cache_bytes(32, 32, 8, 128, 8192) == 2**30  # Llama-like GQA: 1 GiB per sequence
assert kv_cache_bytes(32, 32, 32, 128, 8192) == 4 * 2**30  # the same model with MHA: 4 GiB
assert abs(param_saving[llama, 8] - 0.375) < 1e-4
assert abs(param_saving[llama, 1] - 0.484) < 1e-3

# %% [markdown]
# Only W_key and W_value get smaller, so the attention parameters shrink by less than half:
# by 37.5 % for the Llama-like model with 8 groups (the "fewer params" column: W_key and W_value
# go from $d^2$ to $d^2/4$ each, saving $1.5\,d^2$ of about $4\,d^2$; the row also counts an
# `out_proj` bias that Llama omits), and by 48.4 % with MQA. The
# **KV cache shrinks by num_heads / num_kv_groups**: 4 GiB -> 1 GiB per 8192-token sequence for
# the Llama-like model, which is what lets a server hold four times as many conversations. MQA
# goes furthest (128 MiB) but tends to lose quality; GQA with 8 groups is the usual compromise.
#
# ## Summary
#
# * **Cross-attention**: queries from the decoder, keys and values from the encoder; no causal
#   mask; weights (b, h, n_q, n_kv).
# * A cross-attention head trained for 100 steps to reverse sequences put 99.7 % of its weight
#   on the expected source position of held-out sequences (chance 16.7 %, 20.8 % before
#   training): the alignment is learned from the loss alone.
# * **KV cache**: keys and values of past tokens never change, so keep them; each new token costs
#   one projection instead of t. A chunk of n tokens after `offset` cached ones needs rows
#   `offset:offset + n` of the causal mask. Same outputs as a full forward pass.
# * **GQA / MQA**: `num_kv_groups` K/V heads shared by all query heads; the cache shrinks by
#   `num_heads / num_kv_groups`; `num_kv_groups == num_heads` is plain multi-head attention.
#   The parameters shrink less: 37.5 % for the Llama-like model with 8 groups.

# %% [markdown]
# ### Check (for CI; collapsed)
#
# This cell proves what the lesson relies on, so that a change to the package cannot silently
# break the story. Open it if you are curious; you can skip it.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# The teaching class MultiHeadAttention takes the same KVCache: token by token == one full pass.
# assert_close, not torch.equal: a (1, T) score row and a (T, T) matrix may sum in another order.
torch.manual_seed(2)
teaching = mh.MultiHeadAttention(d_in=16, d_out=16, context_length=32, dropout=0.0, num_heads=4)
x_check = torch.randn(2, 7, 16)  # (b, T, d_in)
with torch.no_grad():
    full_check = teaching(x_check)  # (2, 7, 16)
    cache_check = mh.KVCache(32)
    steps = [teaching(x_check[:, t : t + 1], cache=cache_check) for t in range(7)]
torch.testing.assert_close(torch.cat(steps, dim=1), full_check)
# The figures show this lesson's own numbers.
assert cache_lengths == [len(prompt[0])] + [len(prompt[0]) + i for i in range(1, new_tokens)]
assert weights.shape == (2, 2, 3, 7) and kv_head_of.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
print(
    mh.say(
        "MultiHeadAttention with a KVCache == one full pass;",
        "带 KVCache 的 MultiHeadAttention == 一次完整的前向传播；",
    ),
    mh.say(f"{len(cache_check)} tokens cached", f"缓存了 {len(cache_check)} 个词元"),
)

# %% [markdown]
# ## Exercises
#
# Solutions: `solutions/10_cross_attention_kv_cache_gqa_solutions.ipynb`.
#
# **Exercise 1.** Some models (Mistral 7B among them) attend over a **sliding window**: a query
# sees itself and the 3 positions before it (a window of 4), so the cache only keeps the last 3
# positions. The cache holds positions 2, 3 and 4, and you feed a chunk of 2 more (positions 5
# and 6). Build their bool mask of shape (2, 5) over the keys at positions 2..6, with `True` =
# hidden (this course's convention).

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_chunk_mask(answer)

# %% [markdown]
# **Exercise 2.** A server keeps 24 GiB of GPU memory for KV caches and must hold 12
# conversations of 6000 tokens at once. Its model has 48 layers and 40 query heads of size 128,
# and stores the cache in float16. What is the largest number of K/V groups (a divisor of 40)
# it can use?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_kv_cache_bytes(answer)

# %% [markdown]
# **Exercise 3.** A Qwen2-7B-like attention layer has d_in = d_out = 3584, 28 query heads of size
# 128 in 4 K/V groups, a bias on W_query, W_key and W_value, and **no** bias on the output
# projection (the package's class always gives `out_proj` one). How many parameters does it
# have?

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_gqa_parameter_count(answer)

# %% [markdown]
# This completes the attention block itself: from a dot product (lesson 01) to the layer that
# production models run. The solutions are in `solutions/`. Next, lesson 11 batches sentences of
# different lengths (padding masks), and lesson 12 builds a small model that writes Tang poems.
