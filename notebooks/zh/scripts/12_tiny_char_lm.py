# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="dd8f1274d8b3"
# # 12 · 会写诗的小模型：在唐诗上训练字符级 Transformer
#
# 第 08 课在玩具任务上训练了一个注意力层，第 10 课实现了 KV 缓存（KV cache）。本课把课程自己的 `MultiHeadAttention` 装进一个小而完整的**语言模型**（language model）：它一个字一个字地读一份真实的文本——**《唐诗三百首》**，然后自己写出一些诗句来。
#
# **学习目标**
# 1. 给注意力配齐一个能用的模型所需的其他部件——词元嵌入（token embedding）和位置嵌入（positional embedding）、**前馈网络**（feed-forward network）、**残差连接**（residual connection）、**层归一化**（layer normalization）——并知道每个部件的用处。
# 2. 训练这个模型，看着**训练损失**和**验证损失**（validation loss）下降，并看出两者从哪里开始分道扬镳。
# 3. 在训练前后分别采样生成文本（**温度**（temperature）和 **top-k 采样**（top-k sampling））。
# 4. 在一首真实的诗上测量训练好的头在关注什么：前一个字、行首，还是标点。
# 5. 分别用和不用 **KV 缓存**生成文本：字符相同，速度不同。
#
# **预备知识：** 第 06 课的 `MultiHeadAttention`；第 08 课的训练、交叉熵与损失曲线（loss curve）；第 10 课的 KV 缓存与自回归生成（autoregressive generation）。**用时：** 约 60 分钟。
#
# **形状约定（shape contract）：** 字符 id `(b, T)`（`T <= context_length`）→ logits `(b, T, vocab_size)`；传入 `return_weights=True` 时还会返回权重 `(b, num_layers, num_heads, T, T)`。生成时每个块各有一个 `KVCache`，每个缓存存放形状为 `(b, num_heads, T_cached, head_dim)` 的键和值。

# %%
import math
import time

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import lm

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="a0fde14eccf6"
# ## 1. 文本与分词器
#
# `data/tang300.txt` 收录了《唐诗三百首》的 313 首诗，取自 Debian 的 `fortunes-zh` 软件包（这些诗属于公有领域，见 `data/SOURCES.md`）。模型只读诗句本身，一首接一首，诗与诗之间空一行：

# %%
poems = lm.load_tang300()
night = next(p for p in poems if p.title == "夜思")  # Li Bai's "Quiet Night Thoughts"
print(len(poems), "poems;", night.title, night.author)
print(night.text)
text = lm.poem_text(poems)
print(f"{len(text)} characters, e.g. the start:")
print(text[:40])

# %% [markdown] en_hash="6149bf67e60b"
# **字符级分词器**（character-level tokenizer）是最简单的分词器：每个不同的字符（汉字、“，。？！；、”等全角标点以及换行符）就是一个词元，它的 id 就是它在排好序的字符列表中的位置。不需要下载任何东西，而且每个词元都是我们读得懂的字。

# %%
tokenizer = lm.CharTokenizer(text)
ids = tokenizer.encode("床前明月光，")  # (T,)
print(tokenizer, ids)
print(repr(tokenizer.decode(ids)))
assert tokenizer.decode(tokenizer.encode(text)) == text
rare = sum(text.count(ch) <= 2 for ch in tokenizer.chars)
print(f"{rare} of the {tokenizer.vocab_size} characters occur only once or twice")

# %% [markdown] en_hash="5d9b94991894"
# 25,000 个字符里有 2,500 个不同的字，其中大约一半只出现一两次。这对任何模型来说都是一份很难学的文本，第 5 节会看到这一点。
#
# 我们每隔 20 首诗留出一首，作为**验证集**（validation set）：模型从不在这些诗上训练，因此它在验证集上的损失能告诉我们，它在没见过的诗上表现如何。

# %%
train_poems, val_poems = lm.split_poems(poems)
print(len(train_poems), "training poems,", len(val_poems), "validation poems")

# %% [markdown] en_hash="73e1bd8a6aa1"
# ## 2. 从一个注意力层到 Transformer 块
#
# 第 08 课的 `TinyAttentionLM` 是“嵌入 → 注意力 → 语言模型头（LM head）”。一个会写作的模型还需要另外四个想法，每个一句话就能说清：
#
# * **前馈网络**：注意力只是把不同位置的向量*混合*起来（一个加权平均）；随后一个小小的两层网络再对每个位置的向量单独做变换：$\mathrm{FFN}(z) = W_2\,\mathrm{GELU}(W_1 z + b_1) + b_2$，隐藏层宽度为 $4 \times d_{model}$（GELU 是 ReLU 这个**激活函数**（activation function）的平滑版本：输入为负时约为 0，输入为正时约等于输入本身）。
# * **残差连接**：每个子层把自己的输出*加*到输入上（$x + f(x)$），所以它只需要学习一个修正量，信号和梯度也总能直接穿过整个块。
# * **层归一化**：在每个子层之前，把每个位置的向量重新缩放到均值为 0、方差为 1（再做一次可学习的缩放和平移），这样无论堆叠多少个块，数值都保持在训练稳定的范围内。
# * **堆叠**：这个块重复 `num_layers` 次；后面的块所关注的向量，已经带上了前面的块收集到的信息。
#
# 一个 **Transformer 块**（Transformer block），采用 GPT-2 所用的“前置归一化”（pre-norm）形式：
#
# $$
# h = x + \mathrm{MultiHeadAttention}\big(\mathrm{LN}_1(x)\big), \qquad
# y = h + \mathrm{FFN}\big(\mathrm{LN}_2(h)\big)
# $$
#
# 下面就是它的代码，里面用的是课程的 `mh.MultiHeadAttention`：


# %%
class FeedForward(nn.Module):
    def __init__(self, d_model, hidden, dropout=0.0):
        super().__init__()
        self.fc_in = nn.Linear(d_model, hidden)
        self.act = nn.GELU()
        self.fc_out = nn.Linear(hidden, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):  # (b, T, d_model) -> (b, T, d_model), each position alone
        return self.dropout(self.fc_out(self.act(self.fc_in(x))))


class Block(nn.Module):
    def __init__(self, d_model, context_length, num_heads, dropout=0.0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d_model)
        self.attn = mh.MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.ln_2 = nn.LayerNorm(d_model)
        self.ff = FeedForward(d_model, 4 * d_model, dropout)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))  # (b, T, d_model)
        x = x + self.ff(self.ln_2(x))  # (b, T, d_model)
        return x


torch.manual_seed(0)
block = Block(d_model=16, context_length=8, num_heads=4, dropout=0.1)
torch.manual_seed(0)
package_block = lm.TransformerBlock(d_model=16, context_length=8, num_heads=4, dropout=0.1)
x = torch.randn(2, 8, 16)  # (b, T, d_model)
print("block output:", tuple(block(x).shape))
print(mh.assert_same_module(block, package_block, x))

# %% [markdown] en_hash="8940634793e0"
# 整个模型 `lm.CharTransformer` 按下面的顺序把这些部件组装起来：
#
# $$
# x_0 = E[\text{ids}] + P[0..T-1], \qquad x_\ell = \mathrm{Block}_\ell(x_{\ell-1}), \qquad
# \text{logits} = \mathrm{LN}_f(x_L)\, E^\top
# $$
#
# * `tok_emb`（$E$，vocab_size × d_model）：**词元嵌入**，每个字符一个可学习的向量；
# * `pos_emb`（$P$，context_length × d_model）：每个位置一个可学习的**位置嵌入**。之所以要加上它，是因为注意力本身并不知道输入的先后顺序；
# * `blocks`：`num_layers` 个 Transformer 块；`ln_f`：最后一个层归一化；
# * `lm_head`：为词表（vocabulary）中的每个字符给出一个分数（**logit**）。它复用 $E$（**权重绑定**（weight tying），和 GPT-2 一样）：读入一个字符和写出一个字符用的是同一组向量，这样就省下了 vocab_size × d_model 个参数。
#
# 课程附带了一个训练好的模型（第 5 节）。下面打印它的规模，以及一个规模相同、尚未训练的模型：

# %%
shipped = lm.load_checkpoint()  # data/char_lm.pt
config = shipped.config
print(config)
torch.manual_seed(0)
untrained = lm.CharTransformer(
    tokenizer.vocab_size,
    config.d_model,
    config.context_length,
    config.num_heads,
    config.num_layers,
).eval()
print(untrained)
print(f"{untrained.num_parameters():,} parameters")

# %% [markdown] en_hash="9537d9deb971"
# 它的权重初始值很小（正态分布，标准差 0.02，和 GPT-2 一样），所以训练之前，它在 2,500 个字符上的猜测几乎是均匀的：损失接近 $\log(\text{vocab\_size})$（第 08 课）。

# %%
sample_ids = tokenizer.encode(night.text)[None]  # (1, T)
with torch.no_grad():
    logits, weights = untrained(sample_ids, return_weights=True)
print("logits ", tuple(logits.shape))  # (b, T, vocab_size)
print("weights", tuple(weights.shape))  # (b, num_layers, num_heads, T, T)
loss = F.cross_entropy(logits[0, :-1], sample_ids[0, 1:])
print(f"untrained loss {loss.item():.2f}, log(vocab_size) = {math.log(tokenizer.vocab_size):.2f}")
assert abs(loss.item() - math.log(tokenizer.vocab_size)) < 0.2

# %% [markdown] en_hash="7804d2011c51"
# ## 3. 还没学，先写写看
#
# `lm.generate(model, prompt, max_new_tokens, temperature=..., top_k=..., seed=...)` 就是第 10 课的生成循环，只是换成了一个真正的模型：取最后一个位置的 logits，除以**温度**（小于 1 时分布更尖锐，可能性大的字符变得更加可能），只保留最大的 `top_k` 个（其余的概率为 0），做 softmax，用以 `seed` 为种子的随机数生成器抽出一个字符，把它接到末尾，如此反复。同一个种子每次运行都给出相同的文本。

# %%
prompt = tokenizer.encode("\n")  # start of a new poem
out = lm.generate(untrained, prompt, 48, temperature=0.8, top_k=20, seed=0)
print(tokenizer.decode(out))

# %% [markdown] en_hash="571110ff2390"
# 全是随机的字：不分行，诗里该有标点的地方也没有标点。
#
# ## 4. 简短的训练
#
# `lm.train_char_lm(config)` 运行的是常规的训练循环：从训练诗中随机截取长为 `context_length + 1` 个字符的窗口，模型预测每一个下一个字符，计算交叉熵，用 AdamW（带**权重衰减**（weight decay）的 Adam）更新参数，学习率（learning rate）先预热、再衰减。训练固定了随机种子，并且只在一个 CPU 线程上运行，所以重新运行会得到相同的数字。为了让这个 notebook 跑得快，我们训练一个小得多的模型（1 个块，d_model 为 32，窗口长 32 个字符），只训练 100 步：

# %%
# NBVAL_IGNORE_OUTPUT
quick_config = lm.CharLMConfig(
    d_model=32,
    num_heads=4,
    num_layers=1,
    context_length=32,
    batch_size=16,
    steps=100,
    lr=1e-2,
    min_lr=1e-3,
    warmup_steps=10,
    eval_every=25,
    seed=0,
)
quick = lm.train_char_lm(quick_config)  # a tqdm progress bar while it runs

# %%
first, last = quick.losses[0], sum(quick.losses[-10:]) / 10
print(f"step 1: {first:.2f}; mean of the last 10 steps: {last:.2f}")
print("validation:", [(step, round(loss, 2)) for step, loss in quick.val_losses])
assert last < first - 1.0

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(
    range(1, len(quick.losses) + 1),
    quick.losses,
    label=mh.tr("training loss (one batch)", "训练损失（单个批次）"),
)
steps, val = zip(*quick.val_losses)
ax.plot(steps, val, "o-", label=mh.tr("validation loss (unseen poems)", "验证损失（没见过的诗）"))
ax.axhline(math.log(tokenizer.vocab_size), color="gray", linestyle="--", label="log(vocab_size)")
ax.set_xlabel(mh.tr("step", "步数"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("100 steps of a small model", "小模型训练 100 步"))
ax.legend()
plt.show()

# %% [markdown] en_hash="8d5213904551"
# 训练损失在 100 步内从 $\log 2500 \approx 7.8$ 降到 6 左右。验证损失（每 25 步测一次，用的是模型从没见过的诗）始终更高，而且只下降了一点点，从 6.54 降到 6.43。这么小的模型学到了什么？主要是哪些字常见——而最常见的就是“，”和“。”：

# %%
out = lm.generate(quick.model, prompt, 31, temperature=0.8, top_k=20, seed=0)  # 32 = its context
print(tokenizer.decode(out))

# %% [markdown] en_hash="e7aec8420b4e"
# ## 5. 课程附带的模型
#
# `make train-demo`（`tools/train_char_lm.py`）用固定的随机种子训练第 2 节打印出的那个完整规模的模型，并写出 `data/char_lm.pt`（其中有权重、分词器的字符表，以及每一步的损失）。课程的测试会重新运行它最初的几步，并与记录下来的损失相比较。

# %%
print(shipped)
print("validation:", [(step, round(loss, 2)) for step, loss in shipped.val_losses])

fig, ax = plt.subplots(figsize=(6, 3))
ax.plot(
    range(1, len(shipped.losses) + 1),
    shipped.losses,
    label=mh.tr("training loss", "训练损失"),
    alpha=0.7,
)
steps, val = zip(*shipped.val_losses)
ax.plot(steps, val, "o-", label=mh.tr("validation loss", "验证损失"))
ax.axhline(math.log(tokenizer.vocab_size), color="gray", linestyle="--", label="log(vocab_size)")
ax.set_xlabel(mh.tr("step", "步数"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("The shipped model (make train-demo)", "随课程提供的模型（make train-demo）"))
ax.legend()
plt.show()

# %% [markdown] en_hash="6e41722f0a1d"
# 两条曲线，两个故事。训练损失一直降到最后。验证损失在早期最低，之后慢慢回升：从那以后，模型从训练诗中学到的东西对新诗不再有帮助——它开始**过拟合**（overfitting）了。25,000 个字符的文本实在太少，而且很多字都很罕见：验证诗中有些字在训练诗里根本没有出现过（任何模型都没法把它们预测好）。训练得更久只会拉大两条曲线之间的差距；最有帮助的是更多的文本。

# %%
best_step, best_val = min(shipped.val_losses, key=lambda pair: pair[1])
print(f"lowest validation loss {best_val:.2f} at step {best_step}")
val_text, seen = lm.poem_text(val_poems), set(lm.poem_text(train_poems))
unseen = sum(ch not in seen for ch in val_text)
print(f"{unseen} of the {len(val_text)} validation characters never occur in training")
print(f"training loss, mean of the last 50 steps: {sum(shipped.losses[-50:]) / 50:.2f}")
assert best_step < config.steps and shipped.val_losses[-1][1] > best_val
assert sum(shipped.losses[-50:]) / 50 < best_val - 1.0

# %% [markdown] en_hash="2b1fcb862c57"
# 现在让它来写：提示词（prompt）都用一个换行符，意思是“新的一行从这里开始”；温度 0.8，top-k 20，随机种子分别为 0、1、2，写出三首诗。`lm.copied_share` 检查其中有多少是抄来的：在它写出的所有 4 字片段中，在训练诗里出现过的片段所占的比例。

# %%
model = shipped.model
train_text = lm.poem_text(train_poems)
for seed in (0, 1, 2):
    out = tokenizer.decode(lm.generate(model, prompt, 60, temperature=0.8, top_k=20, seed=seed))
    print(out.strip("\n"))
    copied = lm.copied_share(out, train_text)
    print(f"--- (seed {seed}: {copied:.0%} of its 4-character pieces occur in the training poems)")
    assert copied < 0.25

# %% [markdown] en_hash="dcbb129fd520"
# 这当然不是李白。但和未训练的模型相比：句子以“，”和“。”结尾，“。”之后会换行，出现了真正的词语（青山、何处、日暮、不见、长安、白日），而且几乎没有照抄训练诗。它的毛病也一目了然：句子有长有短，凑不成整齐的五言或七言，更谈不上对仗和押韵；有时连着好几个空行；一个字反复出现（萧萧萧……）。这就是 930,000 个参数、25,000 个字符和一个 CPU 核心几分钟的训练所能做到的。
#
# ## 6. 训练好的头在看什么
#
# 第 07 课提醒过我们，单看热力图（heatmap）可能会被误导；第 08 课则改为做测量。这里两件事都做。先看图：第 2 个块的每个头在李白《夜思》（即《静夜思》）上的注意力权重（attention weight）。诗前加上换行符，就像模型读诗时那样。Matplotlib 的默认字体里没有汉字，所以 `lm.char_axis` 在装有中文字体时用汉字标注坐标轴，否则用位置编号标注（标点显示为 `,` `.`，换行符显示为 `\n`，这些每种字体都有）；无论哪种情况，下面的表都列出了每个位置上的字符。

# %%
line = "\n" + night.text  # (T,) characters
print(lm.char_table(line))
weights = lm.attention_on(model, tokenizer, line)  # (num_layers, num_heads, T, T)
axis = lm.char_axis(line)
with plt.rc_context(axis.rc):
    fig = mh.plot_attention_grid(
        weights[1], axis.labels, title=mh.tr("Block 2, every head", "第 2 块的每个头"), max_cols=2
    )
    plt.show()

# %% [markdown] en_hash="4c2771f66d79"
# 第 4 个头的列最亮，而且都落在标点上：最亮的是位置 6（第一个“，”），其次是 12 和 19。不管查询是哪个字，它都有相当一部分权重给了自己前面的标点。第 1、2 个头在同样的位置上也有几列，只是淡一些；第 3 个头的权重则分布得几乎均匀。只看一首诗的图可能会误导人，所以接下来看数字。`lm.head_focus(weights, text)` 为每个头测量它平均分给三类键的权重比例：**前一个字**（键 $t-1$）、**行首**（查询所在这一行开头的换行符）和**标点**（，。？！…）。最后一行是把权重均匀分给过去所有位置的头会得到的值。我们在 15 首验证诗（训练时没见过）上取平均，每首都截到模型 128 个字符的窗口长度：

# %%
val_texts = ["\n" + p.text[: config.context_length - 1] for p in val_poems]
focus = lm.focus_on_texts(model, tokenizer, val_texts)
print(focus.table())

# %% [markdown] en_hash="3f1054bc3a8a"
# 对照最后的“均匀注意力”那一行，逐个头看这张表：
#
# * **标点：** 第 2 个块的第 4 个头把 0.39 的权重放在标点上，是均匀分配时（0.12）的三倍多；第 2、3 个块中还有几个头达到 0.2–0.25。唐诗的一句大多是 5 个字或 7 个字（五言、七言），后面跟着“，”或“。”：看一看标点在哪里，头就知道下一个字落在这一句的什么位置。
# * **行首：** 第 3 个块的第 4 个头给这一行开头的换行符 0.16 的权重，是均匀值 0.07 的两倍多；第 2、3 个块的其他头给它 0.09–0.12，而第 1 个块的头都停留在均匀水平。
# * **前一个字：** 没有这样的头。每个头给键 $t-1$ 的权重都是 0.07–0.09，和均匀注意力差不多。注意，键 $t-1$ 是查询自己那个字*之前*的字。查询自己的字（也就是紧挨在待预测的字前面的那个字）根本不需要注意力：它通过残差连接直接进入下一个块。
#
# 下面用代码把同样的结论挑出来（同时加以检验，保证上面的文字始终属实）：

# %%
for category in lm.CATEGORIES:
    layer, head = focus.strongest(category)
    share = focus.shares[layer, head, lm.CATEGORIES.index(category)].item()
    uniform = focus.baseline[lm.CATEGORIES.index(category)].item()
    print(f"{category:>11}: block {layer + 1} head {head + 1}, {share:.2f} (uniform {uniform:.2f})")
shares, baseline = focus.shares, focus.baseline  # (num_layers, num_heads, 3), (3,)
assert focus.strongest("punctuation") == (1, 3) and shares[1, 3, 2] > 3 * baseline[2]
assert focus.strongest("line start") == (2, 3) and shares[2, 3, 1] > 2 * baseline[1]
assert shares[..., 0].max() < 1.5 * baseline[0]  # no previous-character head
assert (shares[0, :, 1] - baseline[1]).abs().max() < 0.015  # block 1: the uniform line-start share

# %% [markdown] en_hash="2f9150af796d"
# ## 7. 用与不用 KV 缓存生成
#
# `lm.generate(..., use_cache=True)`（默认）给每个块配一个自己的 `KVCache`（第 10 课）：提示词只通过模型一次，之后每一步只输入最新的那个字符。`use_cache=False` 则在每一步都把整个序列重新算一遍。模型相同、种子相同，所以生成的字符也相同：

# %%
with_cache = lm.generate(model, prompt, 100, temperature=0.8, top_k=20, seed=3, use_cache=True)
without = lm.generate(model, prompt, 100, temperature=0.8, top_k=20, seed=3, use_cache=False)
assert torch.equal(with_cache, without)
print(tokenizer.decode(with_cache))

# %% [markdown] en_hash="b83354cee965"
# 再看速度，两种方式都在这同一次运行中测量（你的数字会不一样；CI 不比较具体数值，只检查用缓存是否更快）：


# %%
# NBVAL_IGNORE_OUTPUT
def tokens_per_second(use_cache, new_tokens=100, repeats=3):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        lm.generate(model, prompt, new_tokens, seed=0, use_cache=use_cache)
        times.append(time.perf_counter() - start)
    return new_tokens / sorted(times)[len(times) // 2]  # median run


speed_without = tokens_per_second(use_cache=False)
speed_with = tokens_per_second(use_cache=True)
ratio = speed_with / speed_without
print(f"without cache: {speed_without:7.0f} tokens/s")
print(f"with cache:    {speed_with:7.0f} tokens/s   ({ratio:.1f}x faster)")
assert ratio > 1

# %% [markdown] en_hash="ea1e4f218579"
# 不用缓存时，第 $t$ 步要把全部 $t$ 个字符重新送过全部 3 个块和语言模型头；用缓存时只需送一个字符。实际的加速比这个计数所暗示的要小，因为在这种规模下，每一步的很大一部分是固定开销（Python 本身、许多小的矩阵乘法），缓存省不掉它们；`benchmarks/generation.py` 在更大的模型和更长的文本上做了测量。
#
# ## 小结
#
# * 一个能用的语言模型把注意力包在 **Transformer 块**里：层归一化 → `MultiHeadAttention` → 残差，层归一化 → 前馈网络 → 残差；前面是词元嵌入和位置嵌入，后面是最后一个层归一化和语言模型头（与嵌入矩阵权重绑定）。
# * 字符级分词器：一个字符一个词元，《唐诗三百首》共有 2,500 个。
# * 训练：损失从 $\log(\text{vocab\_size})$ 开始下降；没见过的诗上的验证损失告诉我们，什么时候继续训练已不再有帮助（过拟合，这里大约在 100 步之后）。
# * 采样：温度和 top-k 决定下一个字符的分布形状；同一个种子给出相同的文本。课程附带的模型能写出带逗号、句号和真实词语的诗句，而且几乎不照抄。
# * 靠测量而不是猜测：一个头把 0.39 的权重给了标点（均匀值：0.12），一个头给行首的权重是均匀值的两倍多，而没有一个头专门关注前一个字。
# * 每个块一个 `KVCache`：生成的字符与每步全部重算时完全相同，但更快（加速比见第 7 节的测量）。
#
# ## 练习
#
# 参考答案：`solutions/12_tiny_char_lm_solutions.ipynb`。
#
# **练习 1。** 课程附带的模型有 3 个块，每个块 4 个头，`head_dim` 为 32。它以批次大小（batch size）1 处理完 100 个词元之后，所有 KV 缓存中一共存放了多少个数？

# %%
import mhsa_helpers.exercises

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_cache_numbers(answer)

# %% [markdown] en_hash="9a5774d62ab6"
# **练习 2。** 像 `lm.generate` 那样（但不调用 `lm` 的函数），用温度 0.7 和 top-k 3，把 `logits_ex`（两行下一个字符的 logits）变成采样概率：结果是一个 `(2, vocab_size)` 的张量，每行之和为 1，且有 3 个非零元素。

# %%
with torch.no_grad():
    logits_ex = model(tokenizer.encode("\n床前明月光，")[None])[0, -2:]  # (2, vocab_size)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_top_k_probs(answer, logits_ex, 3, 0.7)

# %% [markdown] en_hash="2aafb0391654"
# **练习 3。** 不用 `lm.head_focus`，为 `weights_ex`（课程附带模型的第 2 个块在 `line` 上的注意力权重）的每个头计算标点权重比例：对每个查询，求它在属于 `lm.PUNCTUATION` 的键上的权重之和；然后在“自身或之前至少有一个标点”的查询上取平均。结果的形状为 `(num_heads,)`。

# %%
weights_ex = weights[1]  # (num_heads, T, T)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, line)
