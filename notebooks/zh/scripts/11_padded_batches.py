# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="d31848a50cd8"
# # 11 · 真实句子成批处理：填充掩码（padding mask）
#
# 到目前为止，每个例子里的序列都一样长。真实的句子却长短不一，而一个批次（batch）是一个形状为 (b, T, d_in) 的张量，所以短句要用**填充**词元补齐。本课要保证这些填充词元不改变任何结果，也就是说，每个真实词元（token）的输出都必须和它所在的句子单独运行时完全相同。
#
# **学习目标**
# 1. 把长度不同的句子分别用右填充（right padding）和左填充（left padding）组成一个批次，并构造它的**键填充掩码**（key padding mask）。这是一个形状为 (b, T) 的布尔张量，在填充位置为 `True`。
# 2. 看清填充在什么情况下会混入真实词元的计算，以及填充掩码怎样与因果掩码（causal mask）合并。
# 3. 认识 NaN 陷阱及其修复方法。某个查询看不到任何键时，softmax 面对的是全为 `-inf` 的一行。
# 4. 用 `torch.testing.assert_close` 证明“成批计算 == 逐句计算”，并把 d2l 的有效长度（valid length）`valid_lens` 转换成键填充掩码。
# 5. 在学习者会遇到的六种掩码约定之间相互转换，并验证它们给出相同的注意力。这六种约定分别来自第 03 课、本课程、SDPA、`nn.MultiheadAttention`、Hugging Face 和 d2l。
#
# **预备知识：** 第 06 课的 `MultiHeadAttention`，第 10 课的 KV 缓存（KV cache）。**用时：** 约 90 分钟（阅读、运行 20 个代码单元格、1 道练习、2 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 调用 `module(x, key_padding_mask=mask, return_weights=True)` 时，`x` 的形状为 (b, T, d_in)，`mask` 是形状为 (b, T) 的布尔张量。它返回形状为 (b, T, d_out) 的输出和形状为 (b, num_heads, T, T) 的权重，填充键上的权重为零。

# %%
import matplotlib.pyplot as plt
import torch

import mhsa_helpers as mh
from mhsa_helpers.ui.sentences import embed_words

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="33b09c4cb292"
# ## 1. 三个句子，三种长度
#
# 书中那句六个词的句子，再加上两个更短的句子。短句用的是玩具嵌入（embedding），`embed_words` 给每个词一个固定的随机向量，宽度为 3，和书中的一样。

# %%
journey = mh.load_journey()
texts = [journey.words, ["the", "cat", "sat", "down"], ["hello", "world"]]
sequences = [journey.inputs, embed_words(texts[1]), embed_words(texts[2])]  # 每个都是 (L_b, 3)
lengths = torch.tensor([len(words) for words in texts])  # (b,)
for words, seq in zip(texts, sequences, strict=True):
    print(tuple(seq.shape), " ".join(words))
try:
    torch.stack(sequences)
except RuntimeError as error:
    print(mh.say("torch.stack raised:", "torch.stack 报错（各个张量的形状不一样）："), error)

# %% [markdown] en_hash="fcd1f7658333"
# `torch.stack` 拒绝了，因为张量必须是规整的矩形。于是我们用一个填充向量把每个句子都**填充**到最长的长度 T = 6（这里用零向量，它取什么值都不应该有影响），并记下填充在哪些位置。**键填充掩码**在填充位置为 `True`。设序列 b 有 L_b 个真实词元，它的掩码就是
#
# $$m_{bj} = \begin{cases} \text{True} & j \ge L_b \quad \text{（填充）} \\ \text{False} &
# j < L_b \quad \text{（真实词元）} \end{cases}$$
#
# 这是 `torch.nn.MultiheadAttention` 中 `key_padding_mask` 的约定。Hugging Face 的 `attention_mask` 恰好相反，用 1 表示真实词元，只要写 `attention_mask == 0` 就能转换过来。

# %%
T = int(lengths.max())
batch_right = torch.zeros(3, T, 3)  # (b, T, d_in)：先是真实词元，后是填充
for b, seq in enumerate(sequences):
    batch_right[b, : len(seq)] = seq
mask_right = torch.arange(T) >= lengths[:, None]  # (b, T)，True 表示填充
print(mask_right)

# %%
fig = mh.figures.padded_batch(texts, mask_right, title=mh.tr("right padding", "右填充"))
plt.show()

# %% [markdown] en_hash="70efb671b9be"
# ## 2. 先预测，再运行：填充会影响真实词元吗？
#
# 取第 06 课的因果 `MultiHeadAttention`，把填充后的批次输入给它，**不**加任何填充掩码。然后把每个句子中真实词元的输出，与这个句子单独运行时的输出相比较。
#
# **先预测。**“hello world”有 2 个真实词元，后面跟着 4 个填充词元。这两个真实词元的输出会因为填充而改变吗？

# %%
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=T, dropout=0.0, num_heads=2).eval()
alone = [mha(seq.unsqueeze(0))[0] for seq in sequences]  # 每个都是 (L_b, d_out)，完全没有填充

out = mha(batch_right)  # (b, T, d_out)，不加填充掩码
for b, length in enumerate(lengths.tolist()):
    same = torch.allclose(out[b, :length], alone[b])
    print(f"{' '.join(texts[b]):<34}", mh.say("real tokens unchanged:", "真实词元不变："), same)

# %% [markdown] en_hash="6700d442933a"
# 输出没有改变。填充都排在每个真实词元**之后**，而**因果掩码**本来就遮住了未来，所以没有哪个真实词元能看到填充。可见对因果层来说，右填充不会影响真实词元。填充位置**上**的输出是无用的垃圾值，损失会忽略它们。
#
# 有两种常见情况会打破这一点：
#
# * **没有**因果掩码的层，例如编码器（BERT 那样的模型）或 `SelfAttentionV2`。这时每个词元都能看到末尾的填充。
# * **左填充**。生成文本时常用左填充，让每个句子的最后一个词元都位于位置 T - 1，这样整个批次的下一个词元都追加在同一个位置。这时填充排在真实词元**之前**，因果掩码反而允许真实词元看到它们。

# %%
batch_left = torch.zeros(3, T, 3)  # (b, T, d_in)：先是填充，后是真实词元
for b, seq in enumerate(sequences):
    batch_left[b, T - len(seq) :] = seq
mask_left = torch.arange(T) < (T - lengths)[:, None]  # (b, T)，True 表示填充
print(mask_left)

out_left = mha(batch_left)  # (b, T, d_out)，仍然不加填充掩码
torch.manual_seed(123)
encoder = mh.SelfAttentionV2(d_in=3, d_out=4)  # 没有因果掩码
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

# %% [markdown] en_hash="53982481bf09"
# 完整的句子（没有填充）不受影响。两个短句的结果都偏了，因为它们的真实词元现在把填充的值也一起平均了进去。
#
# ## 3. 填充掩码与因果掩码合并
#
# 只有当键 j 不在查询的未来，**并且** j 是真实词元时，查询才能关注键 j。两种掩码都在 softmax 之前把分数设为 $-\infty$，于是 softmax 给这些键的权重为 0。
#
# $$s_{ij} = \begin{cases} \dfrac{\mathbf q_i \cdot \mathbf k_j}{\sqrt{d_k}} & j \le i
# \text{ 且 } m_{j} = \text{False} \\ -\infty & \text{其他情况} \end{cases} \qquad
# \alpha_{ij} = \frac{e^{s_{ij}}}{\sum_{j'} e^{s_{ij'}}}$$
#
# 填充掩码的形状是 (b, T)，每个序列一行。它沿查询的各行广播之后，遮住的是整**列**。下图以左填充的“hello world”为例。

# %%
hello = ["<pad>"] * 4 + texts[2]
fig = mh.figures.padding_masks(mask_left[2], hello)
plt.show()

# %% [markdown] en_hash="3c026035cc17"
# 看最右侧子图的前四行。因果掩码遮住了对角线右侧的所有位置，填充掩码遮住了前四列（索引 0–3），两者合起来，把这几行的**每一个**键都遮住了。softmax 遇到全是 $-\infty$ 的一行，会得到什么呢？
#
# ## 4. NaN 陷阱
#
# 由于 $e^{-\infty} = 0$，这样的一行就是 $0 / 0$，结果为 **NaN**（not a number，意为“不是一个数”）。

# %%
print(torch.softmax(torch.tensor([-torch.inf, -torch.inf, -torch.inf]), dim=0))

# %% [markdown] en_hash="d7afbdf9db2d"
# 在实际的层中，出现这种情况的恰好是那几个填充行。下面把“hello world”的计算完整写出来。这里只用一个头，它直接使用该层全宽的投影（projection），head_dim 为 4，所以缩放因子是 $\sqrt{4}$。这个头的权重与 `mha` 中两个宽度为 2 的头并不相同，但规律是一样的。

# %%
x = batch_left[2:3]  # (1, T, d_in)：4 个填充，然后是 "hello world"
causal = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T)，True 表示未来
hidden = causal | mask_left[2]  # (T, T)：即上图最右侧的子图
queries, keys, values = mha.W_query(x), mha.W_key(x), mha.W_value(x)  # 每个都是 (1, T, 4)
scores = queries @ keys.transpose(1, 2)  # (1, T, T)
naive_weights = torch.softmax(scores.masked_fill(hidden, -torch.inf) / 4**0.5, dim=-1)
print(naive_weights[0].detach())  # (T, T)

# %% [markdown] en_hash="49324f47df81"
# 只有填充行是 NaN，只在真实词元上计算的损失仍是有限值。这样就无害了吗？并非如此。反向传播会把 NaN 权重乘以这些行的梯度（梯度为零），而 $\text{NaN} \times 0 = \text{NaN}$。只要训练一步，权重就全毁了。

# %%
naive_context = naive_weights @ values  # (1, T, 4)：填充行是 NaN
loss = naive_context[0, 4:].sum()  # 只取真实词元
mha.zero_grad()
loss.backward()
print(mh.say("loss:", "损失："), round(loss.item(), 4))
print(
    mh.say("NaN in W_value's gradient:", "W_value 的梯度中有 NaN："),
    mha.W_value.weight.grad.isnan().any().item(),
)

# %% [markdown] en_hash="e74b65a43c0f"
# **修复方法**是本课程的一条规则，`mhsa_helpers` 中的每个类都遵守它。如果一个查询行看不到任何键，它的权重全部为 0，上下文向量（context vector）也为零，即
#
# $$\alpha_{ij} = 0 \ \text{（对所有 } j \text{）}\quad \text{若第 } i \text{ 行的所有键都被遮住，}$$
#
# 而且整个计算过程**从不**产生 NaN。做法是先不对这些行加掩码（这样 softmax 的结果是有限值），事后再把它们的权重置零。`mh.masked_attention` 通过参数 `key_padding_mask` 接收填充掩码。

# %%
queries, keys, values = mha.W_query(x), mha.W_key(x), mha.W_value(x)  # (1, T, 4)，重新建一张计算图
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
torch.testing.assert_close(context[0, 4:], naive_context[0, 4:].detach())  # 真实行：结果相同
assert torch.equal(context[0, :4], torch.zeros(4, 4))  # 空行：上下文为零

# %% [markdown] en_hash="295d7a9961db"
# 真实行的数值和之前完全相同，空行则变成了零，而不是 NaN。（在带有 `out_proj` 的模块中，零上下文向量经过投影后得到的是 `out_proj.bias`。填充位置上的输出没有意义，损失必须跳过它们。）
#
# ## 5. 成批计算 == 逐句计算
#
# `mhsa_helpers` 中的每个注意力类都接受关键字参数 `key_padding_mask=`。它们保证，在每个真实词元上，填充后的批次给出的输出与这个句子单独运行时相同。无论右填充还是左填充，有没有因果掩码，走显式计算路径还是 PyTorch 的融合内核（fused kernel），都是如此（`SDPAMultiHeadAttention` 会把掩码转换成 SDPA 的布尔 `attn_mask`）。

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

out = encoder(batch_right, key_padding_mask=mask_right)  # (b, T, d_out)，没有因果掩码
for b in range(3):
    torch.testing.assert_close(out[b, ~mask_right[b]], encoder(sequences[b]))
print(
    mh.say(
        "SelfAttentionV2         right padding: batched == one at a time",
        "SelfAttentionV2         右填充：成批计算 == 逐句计算",
    )
)

# %% [markdown] en_hash="64e6e4df6a63"
# 从权重可以看出每个词元在看哪里。填充列上的权重为零，每一行在真实键上的权重之和为 1，而什么都看不到的填充行全为零。下面打印的是“hello world”在头 1 上的权重。

# %%
_, weights = mha(batch_left, key_padding_mask=mask_left, return_weights=True)  # (b, h, T, T)
print(weights[2, 0].detach())  # 头 1（索引 0），"hello world"
print(mh.say("row sums:", "各行之和："), weights[2, 0].sum(dim=-1).detach())
fig = mh.plot_attention(
    weights[2, 0],
    hello,
    title=mh.tr("head 1, left padding + causal mask", "头 1，左填充 + 因果掩码"),
)
plt.show()

# %% [markdown] en_hash="36ebdb33cfb8"
# ## 6. `valid_lens`：和长度是同一种信息
#
# 《动手学深度学习》（d2l）用 `valid_lens` 描述填充。它记录每个序列开头有多少个真实词元，因此只适用于右填充。d2l 的 `masked_softmax` 把被遮住的分数设为 $-10^6$，而不是 $-\infty$。在右填充的情况下，两种描述得到的是同一个掩码。

# %%
valid_lens = lengths  # (b,)：d2l 对这个右填充批次的描述
from_lens = torch.arange(T)[None, :] >= valid_lens[:, None]  # (b, T)
assert torch.equal(from_lens, mask_right)
assert torch.equal((~mask_right).sum(dim=-1), valid_lens)  # 再转换回来


def d2l_masked_softmax(scores, valid_lens):
    # d2l 的掩码 softmax：分数形状为 (b, T_q, T_k)，位置 >= valid_lens 的键填 -1e6
    hidden = torch.arange(scores.shape[-1])[None, None, :] >= valid_lens[:, None, None]
    return torch.softmax(scores.masked_fill(hidden, -1e6), dim=-1)


scores_right = torch.randn(3, T, T)  # (b, T_q, T_k)，任意分数
identity = torch.eye(T).expand(3, T, T)  # 键取单位矩阵 I，所以 queries @ keys.T = scores_right
_, ours = mh.masked_attention(scores_right, identity, identity, key_padding_mask=mask_right)
theirs = d2l_masked_softmax(scores_right / T**0.5, valid_lens)  # (b, T_q, T_k)
torch.testing.assert_close(ours, theirs)
print(
    mh.say(
        "d2l's valid_lens and our key_padding_mask give the same weights",
        "d2l 的 valid_lens 和我们的 key_padding_mask 给出相同的权重",
    )
)

# %% [markdown] en_hash="eeff8acfc2bd"
# 有限的 $-10^6$ 永远不会产生 NaN，但如果一行的键全被遮住，这一行就会变成对填充的**均匀**平均，而不是零。此外，`valid_lens` 只能表达“前 L 个词元是真实的”。左填充，或者打包序列（把几条短序列首尾相接写进同一行，以少用填充）中间的填充，都需要用掩码来描述。
#
# ## 7. 六种掩码约定，同一个注意力
#
# 掩码写错是注意力中最常见的错误，因为每个库都说“掩码”，意思却各不相同。对同一个带因果掩码的右填充批次，你会遇到下面六种约定：
#
# | 出处 | 掩码 | dtype 和形状 | 键可见时，该位置的值是 |
# |---|---|---|---|
# | 第 03 课 | `torch.tril(torch.ones(T, T))` | 浮点 (T, T) | 1（保留） |
# | 本课程 | `triu(diagonal=1)`、`key_padding_mask` | 布尔 (T, T)、(b, T) | `False`（`True` 表示遮住） |
# | SDPA | 布尔 `attn_mask` | 布尔，广播成 (b, h, T_q, T_k) | `True`（可以关注） |
# | `nn.MultiheadAttention` | `key_padding_mask`（以及布尔 `attn_mask`） | 布尔 (b, T_k) | `False`（`True` 表示忽略） |
# | Hugging Face | `attention_mask` | 整数 (b, T) | 1（真实词元） |
# | d2l | `valid_lens`，被遮住的分数填 $-10^6$ | 整数 (b,) 或 (b, T_q) | 位置 < `valid_lens` |
#
# 其中两种都写 `True`，意思却相反。SDPA 的 `True` 表示“可以关注”，`nn.MultiheadAttention` 的 `True` 表示“忽略”。还有两种根本不是布尔值。SDPA 会把浮点掩码**加**到分数上（0 表示保留，$-\infty$ 表示遮住），所以 0/1 的浮点掩码什么也遮不住。Hugging Face 自己也会把 0/1 掩码变成这样的加性浮点掩码，只是用该 dtype 能表示的最小数代替 $-\infty$。
#
# 下一个单元格从这个右填充批次的 Hugging Face 掩码出发，构造出另外五种掩码。

# %%
attention_mask = (~mask_right).long()  # (b, T) Hugging Face：1 表示真实词元
key_padding_mask = attention_mask == 0  # (b, T) 本课程与 nn.MultiheadAttention：True 表示填充
causal_hidden = torch.ones(T, T, dtype=torch.bool).triu(diagonal=1)  # (T, T) True 表示遮住
tril_keep = torch.tril(torch.ones(T, T))  # (T, T) 第 03 课：1 表示保留
keep = tril_keep * attention_mask[:, None, None, :]  # (b, 1, T, T) 浮点，1 表示保留
sdpa_allowed = ~causal_hidden & ~key_padding_mask[:, None, None, :]  # (b, 1, T, T) True 表示可关注
hf_additive = (1.0 - keep) * torch.finfo(torch.float32).min  # (b, 1, T, T)，加到分数上
steps = torch.arange(1, T + 1)  # (T_q,)：不计填充时，查询 i 看得到 i + 1 个键
valid_lens_2d = torch.minimum(steps, attention_mask.sum(dim=-1, keepdim=True))  # (b, T_q) d2l
print(mh.say("Hugging Face attention_mask:", "Hugging Face 的 attention_mask："))
print(attention_mask)
print(mh.say("d2l's valid_lens, one per query:", "d2l 的 valid_lens，每个查询一个："))
print(valid_lens_2d)

# %% [markdown] en_hash="d90fd4537ee2"
# 现在让一个头（使用 `mha` 投影的全部宽度 4）依次按每种约定计算注意力。以本课程的 `masked_attention` 为参照，其他约定都必须给出相同的权重。SDPA 不返回权重，它必须给出相同的上下文向量。

# %%
import torch.nn.functional as F
from torch import nn

with torch.no_grad():
    q = mha.W_query(batch_right)[:, None]  # (b, 1, T, 4)：一个宽度为 4 的头
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
    torch_mha.in_proj_weight.copy_(torch.eye(4).repeat(3, 1))  # (12, 4)：q、k、v 原样通过
    torch_mha.out_proj.weight.copy_(torch.eye(4))  # (4, 4)：也没有输出投影
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

# %% [markdown] en_hash="c893d941de0b"
# 六次得到的都是同一个注意力。每次转换只需一次比较或一个 `~`。实践中容易出错的有三处：`True` 的含义，把浮点掩码误当成布尔掩码，以及形状。SDPA 从右边开始把掩码与 (b, h, T_q, T_k) 对齐并广播，所以填充掩码要带上大小为 1 的头轴和查询轴，就像 `sdpa_allowed` 那样。
#
# ## 8. 填充与 KV 缓存
#
# 生成时，提示词（prompt）在左侧填充，之后整个批次一起追加新词元。缓存必须记住哪些缓存的键是填充。`KVCache` 保存了这些键的掩码，即形状为 (b, T_cached) 的 `cache.key_padding_mask`，所以每次调用只需传入新词元的填充掩码。

# %%
prompt, prompt_mask = batch_left[:, :5], mask_left[:, :5]  # (b, 5, d_in), (b, 5)
cache = mh.KVCache(T)
mha(prompt, key_padding_mask=prompt_mask, cache=cache)  # (b, 5, d_out)
step = mha(batch_left[:, 5:], cache=cache)  # (b, 1, d_out)：每个序列中都是真实词元
print(cache)
print(cache.key_padding_mask)
for b in range(3):
    torch.testing.assert_close(step[b, 0], alone[b][-1])  # 最后一个词元，和单独运行时一样

# %% [markdown] en_hash="17b1bed0dc38"
# “其中 6 个是填充”说的是缓存中整个批次的填充位置数（2 + 4）。新词元在每个序列中都是真实词元，所以缓存的掩码多了一列 `False`。每个句子最后一个词元的输出，也正是这个句子单独运行时得到的输出。
#
# ## 小结
#
# * 一个批次只能有一个长度 T，所以短句需要**填充**，再用**键填充掩码**标明填充在哪里。键填充掩码是形状为 (b, T) 的布尔张量，`True` 表示填充，这是 `torch.nn.MultiheadAttention` 的约定。
# * 有因果掩码时，右填充永远影响不到真实词元。左填充和没有因果掩码的层则会受到影响，所以要用掩码对每个查询遮住填充的键。
# * 如果一个查询的所有键都被遮住（左填充 + 因果掩码），对全是 $-\infty$ 的一行做 softmax 会得到 NaN。即使损失跳过了这一行，NaN 也会污染梯度。在本课程中，这样的行得到零权重和零上下文向量，整个过程从不计算出 NaN。
# * 有了掩码，每个真实词元上都满足“成批计算 == 逐句计算”。包中的每个类都是如此，SDPA 路径和 KV 缓存也不例外。d2l 的 `valid_lens` 是右填充下的特例。
# * 六种掩码约定，同一个注意力。对每种约定，都要弄清 `True`（或 1）的含义、掩码是布尔值还是加到分数上的数，以及它怎样广播。
# * 下一课，第 12 课在唐诗上训练一个小型字符级语言模型（character-level language model），然后让它自己写诗。
#
# ## 练习
#
# 参考答案见 `solutions/11_padded_batches_solutions.ipynb`。
#
# **练习 1。** 三个长度分别为 3、1、4 的序列被**左**填充到 T = 5，再送进一个**因果**层。整个批次中，有多少个查询行一个键也看不到（也就是不做第 4 节的处理就会变成 NaN 的那些行）？答案是一个整数。先推算出来，愿意的话再用掩码验证。

# %%
import mhsa_helpers.exercises

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_blind_rows(answer)

# %% [markdown] en_hash="9efc6aec248c"
# **练习 2。** 编写 `masked_softmax(scores, hidden)`。其中 `scores` 是形状为 (..., T_q, T_k) 的浮点张量，`hidden` 是形状相同的布尔张量，禁止关注的位置为 `True`。函数返回每一行在可见位置上的 softmax，被遮住的位置恰好为 0。如果一行的所有位置都被遮住，就返回全零的一行。输出和梯度中都不能有 NaN。令 `answer = masked_softmax`（函数本身）。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_masked_softmax(answer)

# %% [markdown] en_hash="8dcfaae9827b"
# **练习 3。** 一个 BERT 式的编码器（没有因果掩码）以低精度运行，它的批次来自 Hugging Face 的分词器。`attention_mask` 是形状为 (b, T) 的整数张量，1 表示真实词元，0 表示填充。编写 `hf_to_additive(attention_mask, dtype)`，返回一个**浮点**掩码，供 `F.scaled_dot_product_attention(q, k, v, attn_mask=...)` 加到分数上。掩码的数据类型为 `dtype`，q、k、v 的形状为 (b, h, T, head_dim)。掩码在真实词元的键处为 0，在填充的键处取 Hugging Face 所用的那个值（第 7 节只为 float32 构造过它）。检查器会用 float32、float16、bfloat16 以及本课以外的掩码来测试。令 `answer = hf_to_additive`（函数本身）。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_hf_to_additive_mask(answer)
