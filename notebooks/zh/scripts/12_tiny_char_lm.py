# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="f85b540bf63d"
# # 12 · 会写诗的小模型：在唐诗上训练字符级 Transformer
#
# 第 08 课在玩具任务上训练了一个注意力层，第 10 课实现了 KV 缓存（KV cache）。本课把课程自己的 `MultiHeadAttention` 装进一个小而完整的**语言模型**（language model）。它逐字读完三万五千首唐诗，然后自己写诗。
#
# **学习目标**
# 1. 先立一根标杆。**计数表**（count table），即 n 元语法模型（n-gram model），根据前面一两个字符预测下一个字符。
# 2. 给注意力配齐一个实用的模型所需的部件，即**前馈网络**（feed-forward network）、**残差连接**（residual connection）、**层归一化**（layer normalization）和多个块，并实际测量每个部件带来多少好处。
# 3. 验证课程自带的模型越过了这根标杆，而且它写出的东西合乎近体诗（regular verse）的句式，又不是照抄。
# 4. 生成任意长度的文本。上下文写满以后，窗口向后滑动。
# 5. 在留出的诗上测量训练好的头在看什么，其中包括上句中与将要预测的字位置相对的那个字。对仗（parallelism）讲究的正是上下句之间这种逐字的对应。
#
# **预备知识：** 第 06 课的 `MultiHeadAttention`，第 08 课的训练、交叉熵与损失曲线（loss curve），第 10 课的 KV 缓存与自回归生成（autoregressive generation）。**用时：** 约 75 分钟（阅读、运行 20 个代码单元格、4 道练习，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 字符 id `(b, T)`（`T <= context_length`）→ logits `(b, T, vocab_size)`。传入 `return_weights=True` 时还会返回权重 `(b, num_layers, num_heads, T, T)`。

# %%
import math
import time

import matplotlib.pyplot as plt
import torch
from torch import nn

import mhsa_helpers as mh
from mhsa_helpers import lm

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="f82291971164"
# ## 1. 文本：唐代近体诗
#
# `data/tang_verse.txt.xz` 收录了《全唐诗》中的**近体诗**，取自 npm 软件包 `chinese-poetry`。这些诗属于公有领域，来源和生成这个文件的命令见 `data/SOURCES.md`。近体诗格律严整，绝句四句，律诗八句，每句（line）五个字或七个字。文件中每一行是一联（couplet），即上句和下句，每首诗之后空一行。每 20 首诗留出一首作验证，而且训练诗与验证诗没有相同的联。单独的一句倒可能重复，例如以“何处春深好”开头的就有一整组诗，33,323 首训练诗中有 108 首与某首验证诗有一句相同。

# %%
verse = lm.load_verse()
print(len(verse.train), "training poems,", len(verse.validation), "validation poems")
print(verse.validation[0].text)
train_text = lm.poem_text(verse.train)
print(f"{len(train_text):,} training characters, {len(set(train_text)):,} different ones")

# %% [markdown] en_hash="ecbbaf43988f"
# 每个字就是一个词元（token），这就是**字符级分词器**（character-level tokenizer）。对小模型来说，六千多个不同的字构成的词表（vocabulary）太大了，最生僻的字只出现一两次。我们只保留最常见的 3,000 个字，它们覆盖了 98.9 % 的文本。其余的字都读作同一个**未知字符**（unknown character）词元 `□`，也就是古籍整理中表示缺字的那个方框。

# %%
data = lm.verse_data()  # 分词器，以及训练集和验证集的 id
tokenizer = data.tokenizer
print(tokenizer, data.train_ids.shape, data.val_ids.shape)  # (N_train,), (N_val,)
print(tokenizer.encode("床前明月光，"), repr(tokenizer.decode(tokenizer.encode("鬭鸡\n"))))
unknown_share = (data.train_ids == tokenizer.encode(lm.UNKNOWN)).float().mean().item()
print(f"unknown characters: {unknown_share:.1%} of the training text")
assert 0.005 < unknown_share < 0.015

# %% [markdown] en_hash="f2c38aa1cd6a"
# ## 2. 标杆：计数表
#
# 先不用任何网络，看看最简单的模型。**一元**（unigram）计数表只按每个字出现的频率来预测。**二元**（bigram）计数表按一个字跟在前一个字符后面的频率来预测。**三元**（trigram）计数表则看前两个字符。没见过的字对会得到概率 0，损失就成了无穷大。所以每张表都按一定权重混入更小的表，这叫插值平滑（interpolation smoothing），权重在训练文本的一小段上拟合。验证损失（validation loss）和网络报告的是同一种交叉熵（cross-entropy），即 $-\frac{1}{N}\sum_t \log p(c_t \mid \text{之前的文字})$，单位是奈特（nat）。

# %%
vocab = tokenizer.vocab_size
tables = {order: lm.CountTable(data.train_ids, order, vocab) for order in (1, 2, 3)}
baseline = {"uniform guess": math.log(vocab)}
baseline.update(
    {
        name: tables[order].loss(data.val_ids)
        for order, name in ((1, "unigram"), (2, "bigram"), (3, "trigram"))
    }
)
for name, loss in baseline.items():
    print(f"{name:>13}: {loss:.3f} nats")
best_table = min(baseline["unigram"], baseline["bigram"], baseline["trigram"])
assert baseline["trigram"] < baseline["bigram"] < baseline["unigram"] < baseline["uniform guess"]

# %% [markdown] en_hash="9d7ed8f44b69"
# 二元计数表写出来的是什么样子？它知道哪个字常跟在哪个字后面，对诗句却一无所知。

# %%
sample = tables[2].sample(tokenizer.encode("床前"), 60, seed=0)
print(tokenizer.decode(sample))

# %% [markdown] en_hash="8e9524612955"
# 词语出现了，因为它见过这些相邻的字对。可是句子长短不一，二元计数表只记得前一个字符，数不到五。这就是标杆。一个模型要对得起这么多参数，损失就要明显低于最好的计数表，而且要写出五字或七字的句子。
#
# ## 3. Transformer 块
#
# 第 08 课的 `TinyAttentionLM` 是嵌入（embedding）→ 注意力 → 语言模型头（LM head）。一个会写诗的模型还要加上下面这些部件。
#
# * **前馈网络**（feed-forward network）。注意力只是把不同位置的向量*混合*起来，随后由一个两层的网络单独变换每个位置的向量，即 $\mathrm{FFN}(z) = W_2\,\mathrm{GELU}(W_1 z + b_1) + b_2$，隐藏层宽度是 $4 \times d_{model}$。
# * **残差连接**（residual connection）。每个子层把输出*加*到输入上（$x + f(x)$），这样它只需学一个修正量，梯度也能直接流过。
# * **层归一化**（layer normalization）。在每个子层之前，把每个位置的向量缩放到均值为 0、方差为 1，再乘上学到的缩放系数、加上学到的平移量。这样即使堆得很深也能训练。
# * **多个块**，一个接一个。
#
# 下面是一个 **Transformer 块**（Transformer block），采用 GPT-2 的“前置归一化”（pre-norm）形式。
#
# $$
# h = x + \mathrm{MultiHeadAttention}\big(\mathrm{LN}_1(x)\big), \qquad
# y = h + \mathrm{FFN}\big(\mathrm{LN}_2(h)\big)
# $$


# %%
class FeedForward(nn.Module):
    def __init__(self, d_model, hidden, dropout=0.0):
        super().__init__()
        self.fc_in = nn.Linear(d_model, hidden)
        self.act = nn.GELU()
        self.fc_out = nn.Linear(hidden, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):  # (b, T, d_model) → (b, T, d_model)，每个位置单独计算
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


shipped = lm.load_checkpoint()  # 读取 data/char_lm.pt
config = shipped.config
torch.manual_seed(0)
block = Block(config.d_model, config.context_length, config.num_heads)
x = torch.randn(2, config.context_length, config.d_model)  # (b, T, d_model)
print("block output:", tuple(block(x).shape))  # (b, T, d_model)
for name, part in block.named_children():
    print(f"  {name:>4}: {sum(p.numel() for p in part.parameters()):>7,} parameters")

# %% [markdown] en_hash="67e9bce8d23b"
# 课程自带的模型是 `lm.CharTransformer`。它先把词元嵌入（token embedding）$E$（每个字符一个学到的向量）与学到的位置嵌入（positional embedding）$P$ 相加，再经过 `num_layers` 个块和最后一个层归一化，最后由语言模型头输出。语言模型头重用 $E$，这叫**权重绑定**（weight tying），GPT-2 也是这样做的。
#
# $$
# x_0 = E[\text{ids}] + P[0..T-1], \qquad x_\ell = \mathrm{Block}_\ell(x_{\ell-1}), \qquad
# \text{logits} = \mathrm{LN}_f(x_L)\, E^\top
# $$

# %%
model = shipped.model
print(config)
print(model)
print(f"{model.num_parameters():,} parameters")

# %% [markdown] en_hash="10e4f92e2eb5"
# 下图画的是同一个模型，图中的每个尺寸都从载入的模型中读出。它画出了从字符 id 到 logits 的整条路径。虚线框里是一个完整的块，模型把它叠了 `num_layers` 次。

# %%
fig = mh.figures.plot_transformer_block(model)  # 每个尺寸都从模型本身读出
plt.show()

# %% [markdown] en_hash="c25fe23db6af"
# ## 4. 一次加一个部件，逐一测量
#
# 每个部件各带来多少好处？`tools/ablation_char_lm.py` 为表中的每一行训练一个模型。各行用同一个种子和同样的训练量（400 步，每步 16 个窗口，`d_model` 为 128，一个块），只是去掉了某些部件。第一行是只有一个头的注意力，然后换成四个头，再依次加回前馈网络、残差连接和层归一化。最后一行是课程自带的模型，它有 4 个块，训练量也更大。记录保存在 `data/char_lm_ablation.json` 中。运行 `python tools/ablation_char_lm.py --row "+ residual"` 可以重跑其中一行，在空闲的 CPU 核上约需一分钟。

# %%
rows = lm.load_ablation()  # 读取 data/char_lm_ablation.json
for row in rows:
    params = f"{row['parameters']:>10,}" if "parameters" in row else " " * 10
    print(f"{row['name']:>15} {params}  val loss {row['val_loss']:.3f}")

fig, ax = plt.subplots(figsize=(8, 3.6))
label = {
    "bigram table": mh.tr("bigram table", "二元计数表"),
    "one head": mh.tr("one head", "单头"),
    "several heads": mh.tr("several heads", "多头"),
    "+ feed-forward": mh.tr("+ feed-forward", "+ 前馈网络"),
    "+ residual": mh.tr("+ residual", "+ 残差连接"),
    "+ layer norm": mh.tr("+ layer norm", "+ 层归一化"),
    "several blocks": mh.tr("several blocks", "多个块"),
}
names = [str(label.get(row["name"], row["name"])) for row in rows]
losses = [row["val_loss"] for row in rows]
ax.barh(names[::-1], losses[::-1], color="tab:blue")
ax.axvline(
    baseline["trigram"], color="tab:red", linestyle="--", label=mh.tr("trigram table", "三元计数表")
)
ax.set_xlim(4.0, max(losses) + 0.3)
ax.set_xlabel(mh.tr("validation loss (nats)", "验证损失（奈特）"))
ax.set_title(mh.tr("Adding one part at a time", "一次加一个部件"))
ax.tick_params(labelsize=10)
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown] en_hash="b7364abd926f"
# 从上往下读这张表。训练量这么小，所有只有一个块的模型都还不如二元计数表。400 步里，一个块还没学会计数表直接数出来的东西。把一个头换成四个头，或者加上前馈网络，损失各只变化约 0.01。加上残差连接，损失降低 0.08。层归一化是单块模型中最大的一步，降低了 0.28 奈特。最后一行同时改了好几处：4 个块而不是 1 个，`d_model` 为 192 而不是 128，dropout 为 0.1，训练窗口数是 7.5 倍（1,500 步、每步 32 个，而不是 400 步、每步 16 个）。所以它不能单独说明多出的几个块带来了多少好处，只能说明它是唯一一个损失明显低于所有计数表的模型。
#
# ## 5. 课程自带的模型越过了标杆
#
# `tools/train_char_lm.py` 用固定的种子在一个 CPU 线程上训练了它，并写出 `data/char_lm.pt`。文件里有权重（以 float16 保存，使文件小于 5 MB）、分词器和每一步的损失。`make train-demo` 会重新训练它，先在你的机器上计时跑几步，打印整个训练大约需要几分钟，然后用课程注意力核心的 `"sdpa"` 后端来训练。这还是同一个模型，在 CPU 上损失也相同，只差 float32 的舍入误差（有测试验证）。`benchmarks/char_lm_training.py` 测量它快了多少。

# %%
print(shipped)
model_loss = shipped.val_losses[-1][1]
for name, loss in baseline.items():
    print(f"{name:>13}: {loss:.3f}")
print(
    f"{'the model':>13}: {model_loss:.3f}  ({best_table - model_loss:.2f} nats below the best table)"
)
assert model_loss <= best_table - 0.25

fig, ax = plt.subplots(figsize=(8, 3.6))
ax.plot(
    range(1, len(shipped.losses) + 1),
    shipped.losses,
    alpha=0.6,
    label=mh.tr("training loss", "训练损失"),
)
steps, val = zip(*shipped.val_losses)
ax.plot(steps, val, "o-", label=mh.tr("validation loss", "验证损失"))
ax.axhline(
    baseline["trigram"], color="tab:red", linestyle="--", label=mh.tr("trigram table", "三元计数表")
)
ax.set_ylim(4.0, 8.2)
ax.set_xlabel(mh.tr("step", "步数"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("The shipped model (make train-demo)", "课程自带的模型（make train-demo）"))
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown] en_hash="d926757b3e73"
# ## 6. 它会写诗
#
# 我们把八首验证诗的第一联交给模型（这些诗它从没见过），让它接着写下去。温度取 0.8，top-k 取 20，并且从不抽取未知字符。然后由 `lm.verse_shape` 只统计模型写出的部分，算出三个比例：五字或七字的句子所占的比例，上下句等长的联（`XXXXX，XXXXX。`）所占的比例，以及 8 字片段中在训练文本里原样出现过的比例，也就是照抄的程度。

# %%
banned = tokenizer.encode(lm.UNKNOWN)  # (1,)：从不抽取未知字符
settings = {"temperature": 0.8, "top_k": 20, "banned": banned}
firsts = [poem.lines[0] + "\n" for poem in verse.validation[:8]]
written = []
for seed, first in enumerate(firsts):
    prompt = tokenizer.encode(first)  # (T,)：第一联及其换行符
    new = config.context_length - len(first)  # 写满窗口：T + new = 64
    out = lm.generate(model, prompt, new, seed=seed, **settings)  # (T + new,)
    poem_ids = out[len(first) :]  # (new,)：模型写出的部分
    written.append(tokenizer.decode(poem_ids).split("\n\n")[0] + "\n")  # 截到这首诗的结尾
print(first + written[-1])
shape = lm.verse_shape("".join(written), train_text)
print(shape)
assert shape.half_lines >= 0.85 and shape.couplets >= 0.80 and shape.copied <= 0.10

# %% [markdown] en_hash="d8660c2cf127"
# 现在换成你自己的句子，先用李白的“床前明月光”起头。改一改 `first_line`，再运行一次这个单元格。

# %%
first_line = "床前明月光，"
out = lm.generate(model, tokenizer.encode(first_line), 40, seed=1, **settings)  # (6 + 40,)
print(tokenizer.decode(out).split("\n\n")[0])

# %% [markdown] en_hash="3a67bbba927c"
# ## 7. 任意长度的生成
#
# 模型只学过 $0 \ldots$ `context_length` $- 1$ 这些位置。要写得更长，`lm.generate` 就让窗口滑动，和 nanoGPT 截取输入的做法一样。每一步只读最后 `context_length` 个字符，放在位置 $0 \ldots 63$ 上。用 KV 缓存时，第一个窗口里每步只算一个新词元。窗口一旦滑动，每个词元都换到了新的位置，而缓存里的键是按旧位置的嵌入算出来的，不能再用了。所以从这时起，每一步都重读整个窗口，和不用缓存时完全一样。种子相同，写出的字也相同。

# %%
prompt = tokenizer.encode(first_line)  # (6,)
long_cached = lm.generate(model, prompt, 150, seed=2, use_cache=True, **settings)  # (156,)
long_plain = lm.generate(model, prompt, 150, seed=2, use_cache=False, **settings)  # (156,)
assert long_cached.shape == (len(first_line) + 150,) and torch.equal(long_cached, long_plain)
print(tokenizer.decode(long_cached))

# %% [markdown] en_hash="b88bdc6d579c"
# 在第一个窗口之内，缓存省去了重复计算。下面在同一次运行中测出两种速度，每次同时写 16 首诗。你得到的数字会不同，CI 只检查用缓存时更快。


# %%
# NBVAL_IGNORE_OUTPUT
def tokens_per_second(use_cache, batch=16, new_tokens=56, repeats=3):
    prompts = prompt.expand(batch, -1)  # (batch, T)：同时写 16 首诗
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        lm.generate(model, prompts, new_tokens, seed=0, use_cache=use_cache)  # (batch, T + new)
        times.append(time.perf_counter() - start)
    return batch * new_tokens / sorted(times)[len(times) // 2]  # 取中位数的那次运行


# 不用缓存时跑一次就足以计时，快的路径取三次运行的中位数。
speed_without, speed_with = tokens_per_second(False, repeats=1), tokens_per_second(True)
print(f"without cache: {speed_without:6.0f} tokens/s")
print(f"with cache:    {speed_with:6.0f} tokens/s   ({speed_with / speed_without:.1f}x)")
assert speed_with > speed_without

# %% [markdown] en_hash="e061bbb5b8a5"
# ## 8. 在留出的诗上看各个头关注什么
#
# `lm.focus_on_texts` 在 200 首验证诗上，为每个头测量五类键平均分到的注意力份额。这五类键如下。
#
# * **前一个字符**，即键 $t-1$。
# * **行首**，即查询所在行之前的换行符。
# * **标点**，即逗号、句号等标点（`lm.PUNCTUATION`）。
# * **同位字**，只对下句中的查询有定义，指上句中同一位置上的字。比如在“床前明月光，疑是地上霜”中，“疑”对着“床”。（这一联其实不讲对仗，这里只借它说明位置。）
# * **下一字的同位字**，指上句中再往后一位的字，也就是*将要预测*的那个字在上句中的对应字。
#
# 最后一行是把权重平均分给之前所有位置时得到的值。

# %%
held_out = ["\n" + p.text[: config.context_length - 1] for p in verse.validation[:200]]
focus = lm.focus_on_texts(model, tokenizer, held_out)
print(focus.table())
print(focus.strongest_heads())  # 每一类中份额最大的头
shares, base = focus.shares, focus.baseline  # (num_layers, num_heads, 5), (5,)
assert focus.strongest("parallel next") == (3, 2) and shares[3, 2, 4] > 10 * base[4]
assert shares[..., 3].max() < 2 * base[3]  # 没有哪个头看与查询自身那个字相对的字
assert focus.strongest("previous") == (0, 1) and shares[0, 1, 0] > 5 * base[0]
assert focus.strongest("line start") == (1, 0) and shares[1, 0, 1] > 5 * base[1]
assert focus.strongest("punctuation") == (2, 3) and shares[2, 3, 2] > 4 * base[2]

# %% [markdown] en_hash="7b498933e636"
# 下面把各个头的数值与“均匀注意力”那一行对比来看。
#
# * **下一字的同位字。** 第 4 块的头 3 把 0.64 的权重放在上句中与将要预测的字相对的那个字上，是均匀值 0.06 的十倍。在“床前明月光，疑是地上霜”中，模型将要写“是”时，这个头看的是“前”。可见有一个头学会了利用上下句之间逐字的对应，也就是对仗所依赖的位置关系，而且这是在模型没见过的诗上测出来的。
# * **同位字**（与查询自身那个字相对的字）。没有哪个头专门看它，最大的份额只有 0.08，接近均匀值 0.05。第 4 块的头 3 看的是再往后一位的字，即下一个字的对应字，这样才有助于预测下一个字。
# * **前一个字符。** 第 1 块的头 1 和头 2 主要看它（0.41 和 0.46，均匀值 0.08）。
# * **行首。** 第 2 块的头 1 把 0.50 的权重放在本行开头的换行符上（均匀值 0.08）。
# * **标点。** 第 3 块的头 4 给标点 0.56 的权重（均匀值 0.12）。逗号或句号告诉模型，下一个字落在这一联的什么位置。
#
# 热力图（heatmap）画的是第 4 块的头 3 在一首留出的诗上的权重，图下的表给出每个位置上的字。装有中文字体时，坐标轴直接显示汉字，否则显示位置编号。

# %%
poem = "\n" + verse.validation[3].text
layer, head = focus.strongest("parallel next")
weights = lm.attention_on(model, tokenizer, poem)  # (num_layers, num_heads, T, T)
axis = lm.char_axis(poem)
with plt.rc_context(axis.rc):
    fig = mh.plot_attention(
        weights[layer, head],
        axis.labels,
        title=mh.tr(f"Block {layer + 1}, head {head + 1}", f"第 {layer + 1} 块的头 {head + 1}"),
    )
    plt.show()
print(lm.char_table(poem))

# %% [markdown] en_hash="6f6159095245"
# ## 小结
#
# * 计数表立下标杆。一元、二元、三元计数表用的是同一种训练集与验证集的划分。
# * Transformer 块的结构是层归一化 → `MultiHeadAttention` → 残差，层归一化 → 前馈网络 → 残差。在很小的训练量下一次加一个部件来测量，层归一化带来的好处最大。只有多个块并训练得更久，才能胜过计数表。
# * 课程自带的模型损失明显低于最好的计数表，写出的联上下句等长，8 字片段几乎没有照抄。
# * 超过 `context_length` 以后窗口滑动，用不用缓存写出的文本都一样。
# * 在留出的诗上测量，有的头看前一个字符，有的看行首或标点，还有一个头看上句中与将要写出的字相对的那个字。没有哪个头看与查询自身那个字相对的字（见第 8 节的表）。
#
# ## 练习
#
# 参考答案见 `solutions/12_tiny_char_lm_solutions.ipynb`。
#
# **练习 1。** 有一个比我们小的模型，3 个块，每块 4 个头，`head_dim` 为 32。它处理完 100 个词元（批大小为 1）之后，所有 KV 缓存里一共存了多少个数？

# %%
import mhsa_helpers.exercises

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_cache_numbers(answer)

# %% [markdown] en_hash="9a5774d62ab6"
# **练习 2。** 按 `lm.generate` 的做法，把 `logits_ex`（两行预测下一个字符的 logits）变成采样概率，温度为 0.7，top-k 为 3，但不要调用 `lm` 中的函数。结果应是一个 `(2, vocab_size)` 的张量，每行之和为 1，且恰有 3 个非零元素。

# %%
with torch.no_grad():
    logits_ex = model(tokenizer.encode("\n床前明月光，")[None])[0, -2:]  # (2, vocab_size)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_top_k_probs(answer, logits_ex, 3, 0.7)

# %% [markdown] en_hash="1b7f8bfd64ce"
# **练习 3。** 不用 `lm.head_focus`，为 `weights_ex`（课程自带的模型第 2 块在 `poem` 上的权重）的每个头计算标点份额。先对每个查询，把落在 `lm.PUNCTUATION` 中的键上的权重加起来，再对自身或之前至少有一个标点的查询求平均。结果的形状为 `(num_heads,)`。

# %%
weights_ex = weights[1]  # (num_heads, T, T)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, poem)

# %% [markdown] en_hash="99dc06d13613"
# **练习 4（你自己的文本）。** `lm.text_data(text)` 可以从任意字符串（至少 1,000 个字符）构建分词器，并划分训练集和验证集。用 `lm.train_char_lm(config, data=own)` 在同一个软件包的宋词上训练一个模型，其中 `config` 是一个足够小的 `lm.CharLMConfig`，单核训练约一分钟即可，例如 `d_model=128`、`num_layers=2`、`steps=300`。然后把训练记录交给检查函数，它的验证损失必须低于这段文本的一元计数表。你也可以把 `song_ci` 换成自己的文本。

# %%
song_ci = lm.load_song_ci()
own = lm.text_data(song_ci[:200_000])
print(own.tokenizer, own.train_ids.shape, own.val_ids.shape)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_own_text(answer, own)
