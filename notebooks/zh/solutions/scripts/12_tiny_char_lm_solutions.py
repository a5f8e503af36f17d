# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="5c8c1b288122"
# # 12 · 会写诗的小模型 · 参考答案
#
# `12_tiny_char_lm.ipynb` 中各道练习的详解。请先自己动手做一遍。每个单元格都会算出答案，并断言检查器判定通过。

# %%
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers import lm

mh.setup_lesson(lang="zh")
shipped = lm.load_checkpoint()
model, tokenizer = shipped.model, shipped.tokenizer

# %% [markdown] en_hash="dfcd51e81c98"
# **动手实现：前置归一化的块。** 每个分支先把自己的输入归一化（注意力之前是 `ln_1`，前馈网络之前是 `ln_2`），残差再把分支的输出加回到输入上。


# %%
class Block(nn.Module):
    def __init__(self, d_model, context_length, num_heads, dropout=0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = mh.MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.ff = lm.FeedForward(d_model, 4 * d_model, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))  # (b, T, d_model)
        x = x + self.ff(self.ln_2(x))  # (b, T, d_model)
        return x


result = mhsa_helpers.exercises.check_block(Block)
assert result, result
result

# %% [markdown] en_hash="37712c7194eb"
# **动手实现：一批数据。** 一共有 `len(ids) - T` 个可能的起点（0 到 `len(ids) - T - 1`）。用一个下标网格 `starts[:, None] + torch.arange(T + 1)`，一次就切出每个窗口和它的目标。


# %%
def get_batch(ids, batch_size, T):  # ids 形状 (N,)，返回 inputs、targets，形状都是 (batch_size, T)
    starts = torch.randint(0, len(ids) - T, (batch_size,))  # (batch_size,)
    windows = ids[starts[:, None] + torch.arange(T + 1)]  # (batch_size, T + 1)
    return windows[:, :-1], windows[:, 1:]


result = mhsa_helpers.exercises.check_get_batch(get_batch)
assert result, result
result

# %% [markdown] en_hash="48917a495fc9"
# **动手实现：一步训练。** 先把 logits 展平成每个位置一行，交给 `F.cross_entropy`，再依次 zero_grad、backward、step。


# %%
def train_step(model, optimizer, inputs, targets):  # inputs、targets 形状都是 (b, T)
    logits = model(inputs)  # (b, T, vocab)
    loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


result = mhsa_helpers.exercises.check_train_step(train_step)
assert result, result
result

# %%
data = lm.verse_data()  # 两者合起来：在诗上训练几步
torch.manual_seed(0)
tiny = lm.CharTransformer(
    data.tokenizer.vocab_size, d_model=32, context_length=32, num_heads=2, num_layers=1
)
optimizer = torch.optim.AdamW(tiny.parameters(), lr=3e-3, weight_decay=0.1)
for step in range(5):
    inputs, targets = get_batch(data.train_ids, 8, 32)  # 各为 (8, 32)
    loss = train_step(tiny, optimizer, inputs, targets)
    print(mh.say(f"step {step}: loss {loss:.3f}", f"第 {step} 步：损失 {loss:.3f}"))

# %% [markdown] en_hash="812f22fa7e6d"
# **练习 1。** 每个块都有自己的注意力，因此也有自己的缓存。每个缓存为每个头、每个词元（token）保存一个键向量和一个值向量，各含 `head_dim` 个数。所以一共是 2（K 和 V）× 3 个块 × 4 个头 × 100 个词元 × 32。我们用一个同样大小的模型（`d_model` = 4 × 32 = 128）的真实缓存来核对这个公式。

# %%
answer = 2 * 3 * 4 * 100 * 32
smaller = lm.CharTransformer(
    tokenizer.vocab_size, d_model=128, context_length=128, num_heads=4, num_layers=3
)
caches = smaller.new_caches()
with torch.no_grad():
    smaller(tokenizer.encode("月" * 100)[None], caches=caches)  # 100 个词元，批大小为 1
print(caches[0])
assert answer == sum(c.keys.numel() + c.values.numel() for c in caches)
print(answer)
result = mhsa_helpers.exercises.check_cache_numbers(answer)
assert result, result
result

# %% [markdown] en_hash="43c43bd98f13"
# **练习 2。** 先除以温度（temperature），再找出每一行第 k 大的值（`torch.topk`），把所有比它小的值设为 -inf，最后做 softmax。-inf 的位置恰好得到 0。

# %%
with torch.no_grad():
    logits_ex = model(tokenizer.encode("\n床前明月光，")[None])[0, -2:]  # (2, vocab_size)

scaled = logits_ex / 0.7  # (2, vocab_size)
kth = torch.topk(scaled, 3, dim=-1).values[:, -1:]  # (2, 1)
answer = torch.softmax(scaled.masked_fill(scaled < kth, float("-inf")), dim=-1)  # (2, vocab)
print(mh.say("non-zero per row:", "每行的非零个数："), (answer > 0).sum(dim=-1).tolist())
for row in answer:
    top = row.topk(3)
    print(
        [
            (tokenizer.decode([i]), round(p, 3))
            for i, p in zip(top.indices.tolist(), top.values.tolist())
        ]
    )
result = mhsa_helpers.exercises.check_top_k_probs(answer, logits_ex, 3, 0.7)
assert result, result
result

# %% [markdown] en_hash="a3778a81aaef"
# **练习 3。** 先构造一个形状为 (T,) 的标点键掩码，再把每个查询行在这些键上的权重加起来，然后对自身或之前有标点的查询取平均。在这些位置上，标点的累计计数大于 0。

# %%
poem = "\n" + lm.load_verse().validation[3].text
weights_ex = lm.attention_on(model, tokenizer, poem)[1]  # (num_heads, T, T)，第 2 块

is_punct = torch.tensor([ch in lm.PUNCTUATION for ch in poem])  # (T,)
per_query = (weights_ex * is_punct).sum(dim=-1)  # (num_heads, T)
has_mark = is_punct.cumsum(dim=0) > 0  # (T,)
answer = per_query[:, has_mark].mean(dim=-1)  # (num_heads,)
print(answer)
result = mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, poem)
assert result, result
result

# %% [markdown] en_hash="f974219cdf5f"
# **练习 4。** 用 `lm.train_char_lm(config, data=own)`，`config` 是一个 `lm.CharLMConfig`。`lm.text_data` 把文本的最后十分之一留作验证。一个小模型只要短短训练一下，损失就能从一元计数表（count table）往二元计数表降过一半，因为它学会了哪些字常跟在哪些字后面。这里的训练故意很短（一个块，400 步），好让笔记本运行得快。训练一分钟左右（更多步数，或者 `d_model` 取 128）损失会更低。

# %%
own = lm.text_data(lm.load_song_ci()[:200_000])
own_config = lm.CharLMConfig(
    d_model=64,
    num_heads=4,
    num_layers=1,
    context_length=32,
    dropout=0.0,
    batch_size=16,
    steps=400,
    lr=3e-3,
    min_lr=3e-4,
    warmup_steps=40,
    eval_every=200,
    seed=0,
)
answer = lm.train_char_lm(own_config, data=own, progress=False)
print(answer)
result = mhsa_helpers.exercises.check_own_text(answer, own)
assert result, result
result
