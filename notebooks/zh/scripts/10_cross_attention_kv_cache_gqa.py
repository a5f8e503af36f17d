# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="8bd12548df27"
# # 10 · 交叉注意力（cross-attention）、KV 缓存（KV cache）与 GQA
#
# 要把第 06、09 课的注意力块用进真实模型，还需要三样东西。一是让解码器读取编码器的输出，这就是**交叉注意力**。二是逐个词元（token）生成时不再重算过去，这就是 **KV 缓存**。三是让多个头共用键和值，从而缩小缓存，这就是**分组查询注意力**（grouped-query attention），它的极端情形是**多查询注意力**（multi-query attention）。
#
# **学习目标**
# 1. 使用 `CrossMultiHeadAttention`，读懂两个不同句子之间“查询对键”的热力图（heatmap）。
# 2. 把一个很小的交叉注意力模型训练一秒钟，测量它学到的对齐，并与随机水平（chance level）比较。
# 3. 分别在使用和不使用 `KVCache` 的情况下逐个词元地生成，即**自回归生成**（autoregressive generation），得到完全相同的输出，并数一数缓存省下了什么。
# 4. 在 GPT-2 和类 Llama 模型的规模下，算出 GQA 与 MQA 在参数量和 KV 缓存上的节省，并用模块核对这些公式。
# 5. 亲手实现一个先追加键和值、再计算注意力的 KV 缓存，以及 GQA 的键/值共享。
#
# **预备知识：** 第 09 课（融合 QKV，`F.scaled_dot_product_attention`）。**用时：** 约 125 分钟（阅读、运行 27 个代码单元格、1 次预测、3 道练习、2 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 交叉注意力为 query (b, n_q, d_q)、key_value (b, n_kv, d_kv) → (b, n_q, d_out)，权重为 (b, h, n_q, n_kv)。带缓存的自注意力（self-attention）为 n 个新词元 (b, n, d_in) → (b, n, d_out)，缓存里存着键和值 (b, h_kv, T_cached, head_dim)。

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="92500f5e52d1"
# ## 1. 交叉注意力：一个序列提问，另一个序列作答
#
# 在自注意力中，查询、键和值都来自同一串词元。在**编码器-解码器**（encoder-decoder）模型（如机器翻译、语音识别）中，解码器的词元 $Y$ 产生**查询**，编码器的输出 $X$ 提供**键和值**。
#
# $$\text{交叉注意力}(Y, X) = \text{softmax}\!\left(\frac{(Y W_q)(X W_k)^\top}{\sqrt{d_k}}\right) X W_v .$$
#
# 由此有两个推论：
#
# * 注意力权重（attention weight）矩阵的形状是 (n_q, n_kv)。它是长方形的，行对应目标词元，列对应源词元。
# * **没有因果掩码**（causal mask）。翻译开始之前，整个源句就已经知道了，所以每个目标词元都可以看每一个源词元。看源句不算作弊，源句本来就是摊在桌上的题目。
#
# 为了不训练翻译模型也能看到有意义的结果，我们构造一组嵌入（embedding），让每个法语词都是对应英语词加了噪声的副本，并把 `W_query = W_key` 设成缩放过的单位矩阵。这样，分数就只表示“这两个嵌入有多相似”。（本节最后，一个小模型会通过训练**学出**对齐。）

# %%
source = ["the", "black", "cat", "sleeps"]  # 编码器一侧（键和值）
target = ["le", "chat", "noir", "dort"]  # 解码器一侧（查询）
aligned = [0, 2, 1, 3]  # 对齐：le → the，chat → cat，noir → black，dort → sleeps

torch.manual_seed(123)
d = 8
source_emb = torch.randn(1, 4, d)  # (b, n_kv, d_kv)
source_emb = source_emb / source_emb.norm(dim=-1, keepdim=True) * d**0.5  # 长度相等
target_emb = source_emb[:, aligned] + 0.3 * torch.randn(1, 4, d)  # (b, n_q, d_q)

cross = mh.CrossMultiHeadAttention(d_q=d, d_kv=d, d_out=d, num_heads=1).eval()
with torch.no_grad():
    cross.W_query.weight.copy_(1.5 * torch.eye(d))
    cross.W_key.weight.copy_(1.5 * torch.eye(d))
out, weights = cross(target_emb, source_emb, return_weights=True)
# 输出为 (b, n_q, d_out)，权重为 (b, h, n_q, n_kv)
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

# %% [markdown] en_hash="4d1757e007cb"
# 把同样的权重画成“谁在读谁”的图。每个目标词都连到**每一个**源词（4 × 4 条线，没有任何遮挡），线的粗细和深浅对应权重的大小，每一行里最强的那条线画成红色。

# %%
fig = mh.figures.plot_cross_attention(weights[0, 0], target, source)
plt.show()

# %% [markdown] en_hash="6ae90fe8b7ee"
# 每一行对**所有**源词求和都等于 1，因为没有任何遮挡。尽管词序不同，“noir”仍然看向“black”，交叉注意力里没有“之前”这个概念。这个矩阵也不必是方阵。一个 3 个词的问题可以去读一篇 7 个词的文档，得到 3 × 7 个权重。
#
# 换成随机权重、多个头和两种不同的宽度（解码器 d_q = 6，编码器 d_kv = 10），形状照样符合约定。

# %%
torch.manual_seed(123)
cross_mh = mh.CrossMultiHeadAttention(d_q=6, d_kv=10, d_out=8, num_heads=2)
decoder_states = torch.randn(2, 3, 6)  # (b, n_q, d_q)
encoder_states = torch.randn(2, 7, 10)  # (b, n_kv, d_kv)
out, weights = cross_mh(decoder_states, encoder_states, return_weights=True)
print(mh.pad(mh.say("output", "输出"), 7), tuple(out.shape))  # (b, n_q, d_out)
print(mh.pad(mh.say("weights", "权重"), 7), tuple(weights.shape))  # (b, h, n_q, n_kv)
torch.testing.assert_close(weights.sum(dim=-1), torch.ones(2, 2, 3))
assert (weights > 0).all()  # 没有掩码，每个目标词元都能看到每个源词元

# %% [markdown] en_hash="3d8218ae84f8"
# 下面按上面翻译示例的画法，画出第一个序列的头 1。3 个查询、7 个键、21 条线，画出来是长方形，而不是三角形。

# %%
fig = mh.figures.plot_cross_attention(
    weights[0, 0],
    [mh.say(f"dec {i}", f"解码器 {i}") for i in range(3)],
    [mh.say(f"enc {j}", f"编码器 {j}") for j in range(7)],
)
plt.show()

# %% [markdown] en_hash="c0f27ffaace4"
# ### 交叉注意力自己学会对齐
#
# 上面的对齐是手工设定的。一个头能不能**学**出对齐？我们用一个答案已知的玩具任务来试：把 6 个词元的序列**倒过来**，词表（vocabulary）共有 10 个词元。编码器一侧是每个源词元的嵌入加上它的位置嵌入（positional embedding），作为键和值。解码器一侧根本没有词元，只有它要填写的目标位置的嵌入，作为查询。因此，要在目标位置 $i$ 写出正确的词元，唯一的办法是关注源位置 $5 - i$。落在那里的权重份额，就衡量了这个头学到了什么。一个把权重平均分开的头，在那里只有 $1/6 \approx 17\,\%$，这就是随机水平。


# %%
from torch import nn

vocab, length, d_model = 10, 6, 16


class Reverser(nn.Module):
    # 把源序列倒过来写出：只有一层交叉注意力，没有解码器词元

    def __init__(self, vocab, length, d_model):
        super().__init__()
        self.token = nn.Embedding(vocab, d_model)  # 编码器一侧：是哪个词元
        self.source_position = nn.Embedding(length, d_model)  # 编码器一侧：它在哪个位置
        self.target_position = nn.Embedding(length, d_model)  # 解码器一侧：要填写的位置
        self.cross = mh.CrossMultiHeadAttention(d_model, d_model, d_model, num_heads=1)
        self.out = nn.Linear(d_model, vocab)

    def forward(self, source):  # source 是 (b, n) 的词元 id
        b, n = source.shape
        positions = torch.arange(n)  # (n,)
        # (b, n, d)，即编码器的输出（"memory"），用作键和值
        memory = self.token(source) + self.source_position(positions)
        queries = self.target_position(positions).expand(b, n, -1)  # (b, n, d)
        # 上下文为 (b, n, d)，权重为 (b, h=1, n, n)
        context, weights = self.cross(queries, memory, return_weights=True)
        return self.out(context), weights[:, 0]  # logits 为 (b, n, vocab)，权重为 (b, n, n)


gen = torch.Generator().manual_seed(123)
pool = torch.unique(torch.randint(vocab, (3000, length), generator=gen), dim=0)  # 各行互不相同
order = torch.randperm(len(pool), generator=gen)
train_set, held_out = pool[order[:2000]], pool[order[2000:2500]]  # (2000, 6) 和 (500, 6)，互不相交
expected = torch.arange(length - 1, -1, -1)  # 目标位置 i 读取源位置 5 - i


def alignment(model, sequences):
    # 落在预期源位置上的权重占比、预测正确的词元占比，以及平均权重
    with torch.no_grad():
        logits, weights = model(sequences)  # (b, n, vocab), (b, n, n)
    on_expected = weights[:, torch.arange(length), expected].mean().item()
    right = (logits.argmax(dim=-1) == sequences.flip(-1)).float().mean().item()
    return on_expected, right, weights.mean(dim=0)  # 平均权重 (n, n)


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

# %% [markdown] en_hash="56f158bcb8fd"
# 训练前，头的权重接近平均，与随机水平相近。训练 100 步（每步 64 个序列）之后，每个查询几乎全部的权重都落在反对角线上，也就是预期的源位置。这是在模型从没见过的序列上测得的，而且每个词元都写对了。没有人告诉这个头该看哪里。损失只要求写出正确的词元，而关注镜像位置正是写出它们的办法。翻译模型的对齐图也是这样从损失中学出来的，只是数据难得多。

# %% [markdown] en_hash="49db66110c5b"
# ## 2. 用 KV 缓存生成
#
# 解码器每生成一个词元，就把它接到序列末尾，然后再运行一遍。没有缓存时，每一步都要把到目前为止的整个序列送进这一层，包括提示词（prompt）和已经生成的每个词元，并重新计算每一个键和值。可是有因果掩码在，旧词元的键和值**从不改变**。**KV 缓存**就把它们留下来。每一步只对新词元做投影（projection），把它的键和值追加进缓存，再让它的查询关注缓存里的所有内容。
#
# $$K_{\le t} = \begin{bmatrix} K_{\le t-1} \\ x_t W_k \end{bmatrix},\quad
#   V_{\le t} = \begin{bmatrix} V_{\le t-1} \\ x_t W_v \end{bmatrix},\quad
#   \text{输出}_t = \text{softmax}\!\left(\frac{q_t K_{\le t}^\top}{\sqrt{d_k}}\right) V_{\le t}.$$
#
# 真实的模型会把最后的输出变成一个词元：先由一层给词表里的每个词元打分，再按分数抽出一个（第 12 课会把这两步都写出来），然后把这个词元重新嵌入。我们的玩具“模型”只有一层 `SDPAMultiHeadAttention`，它最后一个输出向量**就是**下一个输入。这样循环就没法作弊，缓存里哪怕有一点错误，也会改变之后的每一步。
#
# **先预测，再运行。** 下一个单元格在 4 个词元的提示词之后生成 12 个词元，一次不用缓存（每一步都送入到目前为止的整个序列），一次使用缓存。一个前向钩子（forward hook）统计经过 Q/K/V 投影的词元行数。不用缓存时，12 步加起来一共投影了多少行？把你的猜测写进 `prediction`。

# %%
import mhsa_helpers.exercises

prediction = None  # 在这里写代码：不用缓存时一共投影的词元行数
mhsa_helpers.exercises.check_projected_tokens(prediction)

# %% [markdown] en_hash="3ed68cd02046"
# 下面是生成循环，分别不用缓存和使用缓存。

# %%
torch.manual_seed(123)
layer = mh.SDPAMultiHeadAttention(d_in=16, d_out=16, context_length=32, dropout=0.0, num_heads=4)
layer.eval()

projected = []  # 每次调用有多少词元行经过融合的 Q/K/V 投影
hook = layer.qkv.register_forward_hook(lambda mod, inp, out: projected.append(inp[0].shape[1]))

prompt = torch.randn(1, 4, 16)  # (b, T_prompt, d_in)
new_tokens = 12

with torch.no_grad():
    # 不用缓存：每一步都送入整个序列。
    seq = prompt
    for _ in range(new_tokens):
        next_vec = layer(seq)[:, -1:]  # (1, 1, 16)，最后一个位置的输出
        seq = torch.cat([seq, next_vec], dim=1)
    rows_without = projected.copy()

    # 使用缓存：提示词送入一次，之后每步送入一个词元。
    projected.clear()
    cache = mh.KVCache(context_length=32)
    next_vec = layer(prompt, cache=cache)[:, -1:]  # (1, 1, 16)
    generated, cache_lengths = [next_vec], [len(cache)]
    for _ in range(new_tokens - 1):
        next_vec = layer(next_vec, cache=cache)  # (1, 1, 16)，关注所有已缓存的词元
        generated.append(next_vec)
        cache_lengths.append(len(cache))  # 每一步之后多一个词元
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

# %% [markdown] en_hash="76e0858b5490"
# 投影上的钩子数出了每生成一个词元的开销。这个结果是确定的，不依赖时钟。

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

# %% [markdown] en_hash="8f15acba883e"
# 左图是这次运行中缓存逐步增长的情况，右图是钩子数出的工作量。

# %%
fig = mh.figures.plot_kv_cache_growth(cache_lengths, rows_without, rows_with)
plt.show()

# %% [markdown] en_hash="3c1045162ccf"
# 没有缓存时，第 t 步要重新投影 t 个词元，重新算一个 t × t 的分数矩阵，所以生成 T 个词元总共要 O(T²) 次投影和 O(T³) 个分数项。有了缓存，只要 O(T) 次投影和 O(T²) 个分数项。代价是内存，每层要存 2 × b × h_kv × T × head_dim 个数，第 3 节要缩小的正是这一项。
#
# 下面在更长的生成（240 个词元）上给两种循环计时。你得到的数值会不同，CI 也不比较它们。

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

# %% [markdown] en_hash="b6a888e9e399"
# 每一步还有缓存去不掉的固定开销（Python 本身、几次小的内核调用）。缓存省掉的是重新投影每个旧词元，这部分随序列长度增长。所以上面打印的倍数只适用于这 240 个词元和这台机器。

# %% [markdown] en_hash="95fdebb81632"
# ### 分块送入：掩码必须平移
#
# 缓存也可以一次接收好几个词元，比如一段提示词或其中的一块。这 n 个新查询位于位置 `offset .. offset + n - 1`，能看到键 `0 .. offset + n - 1`，所以它们的掩码是**完整因果掩码的第 `offset:offset + n` 行（Python 切片）**，而不是 `is_causal=True` 会构造的左上角 (n, n + offset) 块。

# %%
offset, n = 2, 3
full_mask = torch.ones(offset + n, offset + n).triu(1).bool()  # True 表示遮住
print(mh.say("correct mask for the chunk (full_mask[2:]):", "这一块的正确掩码（full_mask[2:]）："))
print(full_mask[offset:].int())
print(
    mh.say("is_causal's top-left alignment (wrong here):", "is_causal 的左上角对齐（这里是错的）：")
)
print(torch.ones(n, offset + n).triu(1).bool().int())

# %% [markdown] en_hash="09432828a7fe"
# 本包的类就是这样对 `mask` 缓冲区（buffer）切片的。把一个序列逐个词元地送入，或者分成大小不等的块经同一个缓存送入，结果都与一次完整的前向传播相同。

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

# %% [markdown] en_hash="acfe6d01de8f"
# ### 动手实现：先追加、再算注意力的 KV 缓存
#
# 现在自己来写这个缓存。层已经把新词元投影好了，`q`、`k`、`v` 传进来时已经拆成了多个头，形状都是 (b, h, n, head_dim)。你的类把缓存的内容存在 `self.keys` 和 `self.values` 里，形状是 (b, h, T_cached, head_dim)。它的 `append_and_attend(q, k, v)` 要做三件事：
#
# 1. 如果新词元会让缓存超过 `max_len`，就抛出 `ValueError`，而且在改动任何东西之前抛出。
# 2. 把 `k` 和 `v` 追加到缓存里。
# 3. 返回新查询对所有已缓存键的注意力输出 (b, h, n, head_dim)。因果掩码要与新词元所在的位置对应。
#
# 检查器把随机的查询、键和值分成长短不一的块送进来，尺寸与本课不同。它把你的输出与对整个序列做一次因果注意力（causal attention）的结果比较，还会检查你缓存了什么、`q`、`k`、`v` 是否保持原样，以及长度上限。


# %%
class MyKVCache:
    def __init__(self, max_len):
        self.max_len = max_len
        self.keys = None  # (b, h, T_cached, head_dim)
        self.values = None  # (b, h, T_cached, head_dim)

    def append_and_attend(self, q, k, v):  # 每个都是 (b, h, n, head_dim)
        # 在这里写代码：检查上限，追加 k 和 v，计算注意力 (b, h, n, head_dim)
        raise NotImplementedError


answer = None  # 在这里写代码：写好之后令 answer = MyKVCache
mhsa_helpers.exercises.check_kv_cache_step(answer)

# %% [markdown] en_hash="6d0662d3ad4d"
# ## 3. 分组查询注意力：更少的键和值
#
# KV 缓存为每一层、每个词元、每个头各存一个键向量和一个值向量。**GQA** 保留全部 `num_heads` 个查询头，但只计算 `num_kv_groups` 个键/值头。每个 K/V 头由 `num_heads / num_kv_groups` 个相邻的查询头共用，`repeat_interleave` 在注意力计算之前把它们复制出来。`num_kv_groups == num_heads` 就是普通的多头注意力（multi-head attention），`num_kv_groups == 1` 就是 **MQA**。
#
# 设 $h$ 个查询头分成 $g$ 组，查询头 $i$ 使用第 $\lfloor i / (h/g) \rfloor$ 个 K/V 头，即
#
# $$\text{头}_i = \text{注意力}\big(Q_i,\; K_{\lfloor i g / h \rfloor},\; V_{\lfloor i g / h \rfloor}\big).$$

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

# %% [markdown] en_hash="8e205ef93745"
# 在代码里，共用只是对键/值头做一次 `repeat_interleave`。(b, g, T, head_dim) 的键张量变成 (b, num_heads, T, head_dim)，查询头 $i$ 配上的是 K/V 头 `kv_head_of[i]`。真正计算并缓存的只有这 g 个头，副本只在注意力计算期间存在。

# %%
torch.manual_seed(0)
keys_g = torch.randn(1, num_kv_groups, 5, 4)  # (b, g, T, head_dim)，即缓存里存的内容
keys_h = keys_g.repeat_interleave(group_size, dim=1)  # (b, num_heads, T, head_dim)
print(tuple(keys_g.shape), "->", tuple(keys_h.shape))
for head in range(num_heads):
    assert torch.equal(keys_h[:, head], keys_g[:, kv_head_of[head]])

# %% [markdown] en_hash="e0818aa88ab8"
# ### 动手实现：键/值共享
#
# 写出 `repeat_kv(x, n_rep)`，也就是 GQA 中共享键和值的那一步。x 里有 g 个 K/V 头，形状是 (b, g, T, head_dim)。结果要有 g * n_rep 个头，形状是 (b, g * n_rep, T, head_dim)，其中查询头 i 对应 K/V 头 i // n_rep，与上面的单元格完全一样。这一次不用 `repeat_interleave`（检查器会拒绝它）。Hugging Face 的 Llama 代码用的是 `expand` 和 `reshape`（`expand` 只生成视图，reshape 之前不复制数据），别的写法也可以。注意新轴放在哪里，也别忘了 n_rep = 1 的情形。
#
# 检查器在三种尺寸下调用你的函数（其中一种 n_rep = 1），并与 `mh.GroupedQueryAttention` 的共享方式比较。


# %%
def repeat_kv(x, n_rep):  # (b, g, T, head_dim) -> (b, g * n_rep, T, head_dim)
    # 在这里写代码
    raise NotImplementedError


answer = None  # 在这里写代码：写好之后令 answer = repeat_kv
mhsa_helpers.exercises.check_repeat_kv(answer)

# %% [markdown] en_hash="fd1f872eea90"
# 先做个合理性检查。每个头自成一组时，GQA **就是**第 06 课的多头注意力。两者的参数名称和形状都相同，所以 `load_state_dict` 能把参数复制过去。

# %%
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=16, d_out=16, context_length=32, dropout=0.0, num_heads=4)
gqa_as_mha = mh.GroupedQueryAttention(16, 16, 32, 0.0, num_heads=4, num_kv_groups=4)
gqa_as_mha.load_state_dict(mha.state_dict())
x = torch.randn(2, 10, 16)  # (b, T, d_in)
torch.testing.assert_close(gqa_as_mha(x), mha(x))
print("GroupedQueryAttention(num_kv_groups=num_heads) == MultiHeadAttention")

# %% [markdown] en_hash="d8e3ac735e63"
# **参数量。** 设 `head_dim = d / h`，共有 `g` 个 K/V 组，Q/K/V 不带偏置，`out_proj` 带偏置，则
#
# $$\text{参数量} = \underbrace{d^2}_{W_\text{query}} + \underbrace{2\,d\,g\,\text{head\_dim}}_{W_\text{key},\ W_\text{value}} + \underbrace{d^2 + d}_{\text{out\_proj}}$$
#
# 每个序列的 **KV 缓存**为
#
# $$\text{字节数} = 2\,(K \text{ 和 } V) \times \text{层数} \times g \times \text{head\_dim} \times T \times \text{每个数的字节数}.$$
#
# 在大规模上信任这两个公式之前，我们先在小规模上拿模块核对一下。


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

# %% [markdown] en_hash="2ec951703af1"
# 再把同样的公式用到真实规模上。一个是 GPT-2 small（d = 768，12 个头，12 层，上下文长度（context length）为 1024），一个是类 Llama 模型（d = 4096，32 个查询头，32 层，上下文长度为 8192，Llama 3 8B 使用 8 个 K/V 组）。缓存都用 2 字节的数（float16 / bfloat16），批次（batch）大小为 1。

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
assert kv_cache_bytes(32, 32, 8, 128, 8192) == 2**30  # 类 Llama 模型用 GQA：每个序列 1 GiB
assert kv_cache_bytes(32, 32, 32, 128, 8192) == 4 * 2**30  # 同一个模型用 MHA：4 GiB
assert abs(param_saving[llama, 8] - 0.375) < 1e-4
assert abs(param_saving[llama, 1] - 0.484) < 1e-3

# %% [markdown] en_hash="0108d11fe35e"
# 只有 W_key 和 W_value 变小了，所以注意力的参数量缩减不到一半。8 组的类 Llama 模型减少 37.5%，用 MQA 则减少 48.4%。37.5% 就是表中“参数减少”一列的数值。W_key 和 W_value 各自从 $d^2$ 变成 $d^2/4$，在大约 $4\,d^2$ 中省下 $1.5\,d^2$，这一行还算上了 Llama 并没有的 `out_proj` 偏置。**KV 缓存则缩小到原来的 num_kv_groups / num_heads**。对类 Llama 模型，每个 8192 词元的序列从 4 GiB 降到 1 GiB，同一台服务器因此能同时服务四倍数量的对话。MQA 压得最狠（128 MiB），但往往会损失质量，8 组的 GQA 是常用的折中。
#
# ## 小结
#
# * **交叉注意力**的查询来自解码器，键和值来自编码器。它没有因果掩码，权重的形状为 (b, h, n_q, n_kv)。
# * 交叉注意力的一个头训练 100 步学习倒序之后，在留出的序列上把 99.7% 的权重放在预期的源位置上（随机水平为 16.7%，训练前为 20.8%）。对齐完全是从损失中学出来的。
# * 过去词元的键和值从不改变，**KV 缓存**就把它们留着，每个新词元只需投影一次，而不是 t 次。在已缓存的 `offset` 个词元之后送入 n 个词元的块，要用因果掩码的第 `offset:offset + n` 行。输出与完整的前向传播相同。
# * **GQA / MQA** 让所有查询头共用 `num_kv_groups` 个 K/V 头，缓存除以 `num_heads / num_kv_groups`。`num_kv_groups == num_heads` 就是普通的多头注意力。参数量缩减得少一些，8 组的类 Llama 模型减少 37.5%。

# %% [markdown] en_hash="b41459b40b9e"
# ### 检查（供 CI 使用，已折叠）
#
# 这个单元格验证本课所依赖的事实，免得包的某处改动悄无声息地破坏了课程内容。好奇的话可以展开看看，也可以直接跳过。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# 教学用的 MultiHeadAttention 类也接受同样的 KVCache，逐个词元送入 == 一次完整的前向传播。
# 用 assert_close 而不是 torch.equal，因为 (1, T) 的分数行和 (T, T) 的矩阵求和顺序可能不同。
torch.manual_seed(2)
teaching = mh.MultiHeadAttention(d_in=16, d_out=16, context_length=32, dropout=0.0, num_heads=4)
x_check = torch.randn(2, 7, 16)  # (b, T, d_in)
with torch.no_grad():
    full_check = teaching(x_check)  # (2, 7, 16)
    cache_check = mh.KVCache(32)
    steps = [teaching(x_check[:, t : t + 1], cache=cache_check) for t in range(7)]
torch.testing.assert_close(torch.cat(steps, dim=1), full_check)
# 图中画的是本课自己的数值。
assert cache_lengths == [len(prompt[0])] + [len(prompt[0]) + i for i in range(1, new_tokens)]
assert weights.shape == (2, 2, 3, 7) and kv_head_of.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
print(
    mh.say(
        "MultiHeadAttention with a KVCache == one full pass;",
        "带 KVCache 的 MultiHeadAttention == 一次完整的前向传播；",
    ),
    mh.say(f"{len(cache_check)} tokens cached", f"缓存了 {len(cache_check)} 个词元"),
)

# %% [markdown] en_hash="c7b23b702af1"
# ## 练习
#
# 参考答案见 `solutions/10_cross_attention_kv_cache_gqa_solutions.ipynb`。
#
# **练习 1。** 有些模型（例如 Mistral 7B）只在一个**滑动窗口**内做注意力。查询能看到自己和它之前的 3 个位置（窗口大小为 4），所以缓存只保留最后 3 个位置。现在缓存里是位置 2、3、4，你再送入 2 个词元的块（位置 5 和 6）。请为它们构造形状为 (2, 5) 的布尔掩码，列依次对应位置 2..6 的键。按本课程的约定，`True` 表示遮住。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_chunk_mask(answer)

# %% [markdown] en_hash="52a80cb65d96"
# **练习 2。** 一台服务器留出 24 GiB 显存给 KV 缓存，要同时容纳 12 个长度为 6000 个词元的对话。它的模型有 48 层、40 个大小为 128 的查询头，缓存用 float16 存储。它最多能用多少个 K/V 组（组数要能整除 40）？

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_kv_cache_bytes(answer)

# %% [markdown] en_hash="581d6b4dd338"
# **练习 3。** 一个类似 Qwen2-7B 的注意力层，d_in = d_out = 3584，28 个大小为 128 的查询头分成 4 个 K/V 组。W_query、W_key 和 W_value 都带偏置，输出投影**不带**偏置（包里的类总给 `out_proj` 一个偏置）。这一层有多少个参数？

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_gqa_parameter_count(answer)

# %% [markdown] en_hash="15e37114f27b"
# 到这里，注意力块本身就讲完了。我们从一个点积（dot product，第 01 课）出发，一直讲到生产环境中的模型真正运行的那一层。参考答案在 `solutions/` 里。接下来，第 11 课用填充掩码（padding mask）把长度不同的句子组成批次，第 12 课搭一个会写唐诗的小模型。
