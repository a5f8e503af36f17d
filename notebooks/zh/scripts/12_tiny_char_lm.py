# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="4b53afcd9f58"
# # 12 · 会写诗的小模型：在唐诗上训练字符级 Transformer
#
# 第 08 课在玩具任务上训练了一个注意力层，第 10 课实现了 KV 缓存（KV cache）。本课把课程自己的 `MultiHeadAttention` 装进一个小而完整的**语言模型**（language model）。它逐字读完三万五千首形式上像近体诗（regular verse）的唐诗（五言或七言，四句或八句），然后自己写出整首的诗。这些诗在该结束的地方结束，各联末字也押韵（rhyme）。
#
# **学习目标**
# 1. 先定一条基线。**计数表**（count table），即 n 元语法模型（n-gram model），根据前面一两个字预测下一个字。
# 2. 给注意力配齐一个实用的模型所需的部件，即**前馈网络**（feed-forward network）、**残差连接**（residual connection）、**层归一化**（layer normalization）和多个块，并实际测量每个部件带来多少好处。
# 3. 验证课程自带的模型超过了这条基线，再像熟读唐诗的人那样读它写的诗，看它是否成篇、是否押韵、是否照抄。每一项都与真实的诗、三元计数表写的诗和随机水平（chance level）对照测量。
# 4. 生成任意长度的文本。上下文写满以后，窗口向后滑动。
# 5. 找出让诗押韵的那个头。在留出的诗上，在预测句末那个字的位置，测量有多少注意力落在上一联的韵脚上。那个韵脚在 12 或 16 个字符（含标点和换行）之前，远远超出任何计数表的视野。
#
# **预备知识：** 第 06 课的 `MultiHeadAttention`，第 08 课的训练、交叉熵与损失曲线（loss curve），第 10 课的 KV 缓存与自回归生成（autoregressive generation）。**用时：** 约 175 分钟（阅读、运行 31 个代码单元格、4 道练习、3 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 字符 id `(b, T)`（`T <= context_length`）→ logits `(b, T, vocab_size)`。传入 `return_weights=True` 时还会返回权重 `(b, num_layers, num_heads, T, T)`。

# %%
import math
import time

import matplotlib.pyplot as plt
import torch
from torch import nn
from torch.nn import functional as F

import mhsa_helpers as mh
import mhsa_helpers.exercises
from mhsa_helpers import lm

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="70607ba0db39"
# ## 1. 文本：唐代近体诗
#
# `data/tang_verse.txt.xz` 收录了《全唐诗》中在形式上属于**近体诗**的作品，取自 npm 软件包 `chinese-poetry`。这些诗属于公有领域，来源和生成这个文件的命令见 `data/SOURCES.md`。所谓形式，就是绝句（quatrain）四句、律诗（regulated poem）八句，每句五个字或七个字。筛选只看形式，所以文件里也有不守近体诗平仄的古体诗：既有古绝（old-style quatrain），也有像下面打印的第一首那样的八句古诗。文件中每一行是一联（couplet），即上句和下句，每首诗之后空一行。每 20 首诗留出一首作验证，而且训练诗与验证诗没有相同的联。单独的一句倒可能重复，例如以“何处春深好”开头的就有一整组诗，33,323 首训练诗中有 108 首与某首验证诗有一句相同。

# %%
verse = lm.load_verse()
print(
    mh.tr(
        f"{len(verse.train)} training poems, {len(verse.validation)} validation poems",
        f"训练诗 {len(verse.train)} 首，验证诗 {len(verse.validation)} 首",
    )
)
print(verse.validation[0].text)
train_text = lm.poem_text(verse.train)
print(
    mh.tr(
        f"{len(train_text):,} training characters, {len(set(train_text)):,} different ones",
        f"训练文本共 {len(train_text):,} 个字符，其中不同的有 {len(set(train_text)):,} 个",
    )
)

# %% [markdown] en_hash="897f13338be2"
# **绝句的格律**，这里简要回顾一下（律诗的要求大体相同，篇幅加倍，中间两联还要上下句逐词相对，见下文）：
#
# * **篇幅。** 四句，每句五字或每句七字，全篇一致。在本课的文件里，就是两联 `5，5。` 或两联 `7，7。`。
# * **押韵。** 偶数句的末字押韵，在这里就是每一联的最后一个字，即韵脚（首句也可入韵）。李白《静夜思》的“霜 shuāng……乡 xiāng”就是一例，它的首句也入韵（光 guāng）。严格说，《静夜思》是一首古绝。
# * **平仄**（tones）。近体诗中平声（level tone）与仄声（oblique tone）按固定的格式交替。一句之内平仄交替，一联的上下句之间平仄相对，韵脚落在平声上。
# * **对仗**（parallelism）。律诗中间的两联（颔联、颈联）上下句要逐词相对，词性、意义相当，平仄相反，如王维“明月松间照，清泉石上流”，“明月”对“清泉”。绝句则不必对仗。
#
# 为了让程序判断押韵，我们用**拼音**（pinyin），即现代普通话的读音，由 `pypinyin` 库依据它自带的字典给出。`lm.rhyme_class` 给出一个字所属的韵辙（rhyme group）。做法是取它拼音的韵母，去掉介音，再按现代韵文常用的十三辙归类，比如 ang、iang、uang 同属江阳辙，彼此押韵。要注意，这依据的是现代普通话，不是唐代的读音。唐人用韵依据的韵书（切韵一系，后世归并为平水韵）把有些字归在别处，例如“斜”与“花”押韵，“回”与“来”押韵，所以真实的唐诗在这里也得不到 100%。`lm.rhyme_share` 统计每首诗中相邻两联的韵脚同属一辙的比例。随机水平则把两首不同的诗的韵脚随机配对来算。

# %%
for pair in lm.rhyme_pairs(verse.validation[0].text):
    print(lm.describe_pair(pair))  # 上面那首诗每联的末字，附拼音
real_rhyme = lm.rhyme_share(lm.poem_text(verse.validation))
chance_rhyme = lm.chance_rhyme_share([p.text for p in verse.validation], seed=0)
print(
    mh.tr(
        f"adjacent couplet ends that rhyme: {real_rhyme:.0%} in the validation poems, "
        f"{chance_rhyme:.0%} for ends of two poems paired at random",
        f"相邻两联的韵脚押韵：验证诗中占 {real_rhyme:.0%}，随机配对两首诗的韵脚占 {chance_rhyme:.0%}",
    )
)
assert real_rhyme > 0.75 and chance_rhyme < 0.15

# %% [markdown] en_hash="ecbbaf43988f"
# 每个字就是一个词元（token），这就是**字符级分词器**（character-level tokenizer）。对小模型来说，六千个不同的字构成的词表（vocabulary）太大了，最生僻的字只出现一两次。我们只保留最常见的 3,000 个字，它们覆盖了 98.9% 的文本。其余的字都读作同一个**未知字符**（unknown token）词元 `□`，也就是古籍整理中表示缺字的那个方框。

# %%
data = lm.verse_data()  # 分词器，以及训练集和验证集的 id
tokenizer = data.tokenizer
print(tokenizer, data.train_ids.shape, data.val_ids.shape)  # (N_train,), (N_val,)
print(tokenizer.encode("床前明月光，"), repr(tokenizer.decode(tokenizer.encode("鬭鸡\n"))))
unknown_share = (data.train_ids == tokenizer.encode(lm.UNKNOWN)).float().mean().item()
print(
    mh.tr(
        f"unknown characters: {unknown_share:.1%} of the training text",
        f"未知字符占训练文本的 {unknown_share:.1%}",
    )
)
assert 0.005 < unknown_share < 0.015

# %% [markdown] en_hash="f2c38aa1cd6a"
# ## 2. 基线：计数表
#
# 先不用任何网络，看看最简单的模型。**一元**（unigram）计数表只按每个字出现的频率来预测。**二元**（bigram）计数表按一个字跟在前一个字后面的频率来预测。**三元**（trigram）计数表则看前两个字。没见过的字对会得到概率 0，损失就成了无穷大。所以每张表都按一定权重混入更小的表，这叫插值平滑（interpolation smoothing），权重在训练文本的一小段上拟合。验证损失（validation loss）和网络报告的是同一种交叉熵（cross-entropy），即 $-\frac{1}{N}\sum_t \log p(c_t \mid \text{之前的文字})$，单位是奈特（nat）。

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
TABLE_NAMES_ZH = {
    "uniform guess": "均匀猜测",
    "unigram": "一元计数表",
    "bigram": "二元计数表",
    "trigram": "三元计数表",
    "the model": "模型",
}
mh.show_table(
    [(mh.say(name, TABLE_NAMES_ZH[name]), f"{loss:.3f}") for name, loss in baseline.items()],
    header=("", mh.say("loss (nats)", "损失（奈特）")),
)
best_table = min(baseline["unigram"], baseline["bigram"], baseline["trigram"])
assert baseline["trigram"] < baseline["bigram"] < baseline["unigram"] < baseline["uniform guess"]

# %% [markdown] en_hash="9d7ed8f44b69"
# 二元计数表写出来的是什么样子？它知道哪个字常跟在哪个字后面，对诗句却一无所知。

# %%
sample = tables[2].sample(tokenizer.encode("\n床"), 60, seed=0)  # 一首以“床”开头的新诗
print(tokenizer.decode(sample))

# %% [markdown] en_hash="6e8f0a353222"
# 词语出现了，因为它见过这些相邻的字对。可是句子长短不一。二元计数表数不清一句有五个字，12 个字符（含标点和换行）之前的韵脚更在它的视野之外。这就是基线。一个模型要对得起这么多参数，损失就要明显低于最好的计数表，还要写出完整的诗，并且押韵。
#
# ## 3. Transformer 块
#
# 第 08 课的 `TinyAttentionLM` 是嵌入（embedding）→ 注意力 → 语言模型头（LM head）。一个会写诗的模型还要加上下面这些部件：
#
# * **前馈网络。** 注意力只是把不同位置的向量混合起来，随后由一个两层的网络单独变换每个位置的向量，即 $\mathrm{FFN}(z) = W_2\,\mathrm{GELU}(W_1 z + b_1) + b_2$，隐藏层宽度是 $4 \times d_{model}$。**GELU**（Gaussian Error Linear Unit）是 GPT-2 用的激活函数（activation function），定义为 $\mathrm{GELU}(u) = u\,\Phi(u)$，其中 $\Phi$ 是标准正态分布的累积概率。它和 ReLU（$\max(0, u)$）一样保留大的正输入、压掉大的负输入，但在 0 附近是平滑弯过去的，没有折角。所以小的负输入还能漏过一点（GELU(-0.5) ≈ -0.15），也还有梯度。
# * **残差连接。** 每个子层把输出加到输入上（$x + f(x)$），这样它只需学一个修正量，梯度也能直接流过。
# * **层归一化。** 在每个子层之前，把每个位置的向量平移、缩放到均值为 0、方差为 1，再乘上学到的缩放系数、加上学到的平移量。这样即使堆得很深也能训练。
# * **多个块**，一个接一个。
#
# 下面是一个 **Transformer 块**（Transformer block），采用 GPT-2 的前置归一化（pre-normalization）形式。
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


# %% [markdown] en_hash="7377ff85323c"
# 在几个输入上比较 GELU 和 ReLU：

# %%
u = torch.tensor([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 3.0])
print("u:      ", u)
print("GELU(u):", F.gelu(u))  # 平滑：小的负输入还能漏过一点
print("ReLU(u):", F.relu(u))  # 在 0 处有折角：所有负输入都变成 0

# %% [markdown] en_hash="2e04cf01b49b"
# ### 动手实现：前置归一化的块
#
# 写出 `MyBlock(d_model, context_length, num_heads, dropout=0.0)`，也就是上面公式里的那个块。请用包里 `lm.TransformerBlock` 的名字，这样检查器才能把它的权重复制到你的块里：`ln_1` 和 `ln_2`（`nn.LayerNorm(d_model)`）、`attn`（`mh.MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)`）和 `ff`（`FeedForward(d_model, 4 * d_model, dropout)`，即上面的类）。`forward(x)` 把 (b, T, d_model) 映射到 (b, T, d_model)。注意层归一化的位置：放在各自的分支里、子层之前（前置归一化），残差则把分支的输出加回到这个分支的输入 x 上。
#
# 检查器在两种尺寸下把你的块和 `lm.TransformerBlock` 比较，检查因果性和每个权重的梯度，并指出常见的错误：《Attention Is All You Need》（Vaswani 等，2017）那种后置归一化的块、两个分支共用一个层归一化、少了残差。


# %%
class MyBlock(nn.Module):
    def __init__(self, d_model, context_length, num_heads, dropout=0.0):
        super().__init__()
        # 在这里写代码：ln_1、attn、ln_2、ff

    def forward(self, x):  # x: (b, T, d_model)
        # 在这里写代码：两个带残差的分支（先归一化，再做注意力 / 前馈网络）
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_block(MyBlock)


# %% [markdown] en_hash="c717024c60c4"
# 包里的块 `lm.TransformerBlock` 有同样的部件和名字。按自带模型的尺寸：

# %%
shipped = lm.load_checkpoint()  # 读取 data/char_lm.pt
config = shipped.config
torch.manual_seed(0)
block = lm.TransformerBlock(config.d_model, config.context_length, config.num_heads)
x = torch.randn(2, config.context_length, config.d_model)  # (b, T, d_model)
print(mh.say("block output:", "块的输出："), tuple(block(x).shape))  # (b, T, d_model)
for name, part in block.named_children():
    print(
        f"  {name:>4}: {sum(p.numel() for p in part.parameters()):>7,}",
        mh.say("parameters", "个参数"),
    )

# %% [markdown] en_hash="67e9bce8d23b"
# 课程自带的模型是 `lm.CharTransformer`。它先把词元嵌入（token embedding）$E$（每个字一个学到的向量）与学到的位置嵌入（positional embedding）$P$ 相加，再经过 `num_layers` 个块和最后一个层归一化，最后由语言模型头输出。语言模型头重用 $E$，这叫**权重绑定**（weight tying），GPT-2 也是这样做的。
#
# $$
# x_0 = E[\text{ids}] + P[0..T-1], \qquad x_\ell = \mathrm{Block}_\ell(x_{\ell-1}), \qquad
# \text{logits} = \mathrm{LN}_f(x_L)\, E^\top
# $$

# %%
model = shipped.model
print(config)
print(model)
print(f"{model.num_parameters():,}", mh.say("parameters", "个参数"))

# %% [markdown] en_hash="10e4f92e2eb5"
# 下图画的是同一个模型，图中的每个尺寸都从载入的模型中读出。它画出了从字符 id 到 logits 的整条路径。虚线框里是一个完整的块，模型把它叠了 `num_layers` 次。

# %%
fig = mh.figures.plot_transformer_block(model)  # 每个尺寸都从模型本身读出
plt.show()

# %% [markdown] en_hash="12683e7e396f"
# ## 4. 一次加一个部件，逐一测量
#
# 每个部件各带来多少好处？`tools/ablation_char_lm.py` 为表中的每一行训练一个模型，各行用同一个种子，在同一批验证诗上测量。表是这样安排的：
#
# * **测量什么。** 既看损失，也像读者那样看写出的诗。从同样的首字起笔，每首都作为一首新诗来写，共写 60 首。然后统计**完整**的诗所占的比例（写满 2 联或 4 联、每句字数相同，最后以表示一首诗结束的空行收尾），以及**押韵**的比例（相邻两联的韵脚押韵的比例）。
# * **前几行。** 训练量很小（400 步，每步 16 个窗口，`d_model` 为 128，一个块；**窗口**是从文本中截取的一段连续字符，用来训练，怎样截取见下面的“它怎样学习”），每次加一个部件。先是只有一个头的注意力，然后换成四个头，再依次加上前馈网络、残差连接和层归一化。
# * **后几行。** 逐一检验自带模型的几项关键改动：
#   1. 换成更大的模型、训练更久（4 个块，`d_model` 为 192，dropout 为 0.1，每步 32 个窗口，1,500 步，在一行里同时改动）。
#   2. 让每个训练窗口都从**一首诗的开头**开始。这样一个位置就代表诗中的一个固定地方，位置 1 总是诗的第一个字。
#   3. 把学到的位置向量换成旋转位置编码（rotary position embedding，RoPE）。第 13 课会细讲它。每个头的查询和键按各自的位置转过一个角度，角度随位置增大，不再给每个字加上一个学到的位置向量。
#   4. 课程自带的模型。它用学到的位置向量，设置与“+ 从诗首开始的窗口”一行相同，训练步数增至三倍。
#
# 记录保存在 `data/char_lm_ablation.json` 中。运行 `python tools/ablation_char_lm.py --row "+ residual"` 可以重跑其中一行（在空闲的 CPU 核上需要一两分钟，后面几项改动每行约需 20 分钟）。

# %%
rows = lm.load_ablation()  # 读取 data/char_lm_ablation.json
label = {
    "bigram table": mh.tr("bigram table", "二元计数表"),
    "one head": mh.tr("one head", "单头"),
    "several heads": mh.tr("several heads", "多头"),
    "+ feed-forward": mh.tr("+ feed-forward", "+ 前馈网络"),
    "+ residual": mh.tr("+ residual", "+ 残差连接"),
    "+ layer norm": mh.tr("+ layer norm", "+ 层归一化"),
    "several blocks": mh.tr("several blocks, longer", "多个块，训练更久"),
    "+ poem windows": mh.tr("+ poem windows", "+ 从诗首开始的窗口"),
    "+ rotary positions": mh.tr("+ rotary positions", "+ 旋转位置编码"),
    "shipped model": mh.tr("shipped: 3x the steps", "自带模型：步数三倍"),
}
names = [str(label.get(row["name"], row["name"])) for row in rows]
ablation_rows = []
for name, row in zip(names, rows):
    poems = (f"{row['complete']:.0%}", f"{row['rhyme']:.0%}") if "rhyme" in row else ()
    ablation_rows.append((name, f"{row['val_loss']:.2f}", *poems))
mh.show_table(
    ablation_rows,
    header=("", mh.say("loss", "损失"), mh.say("complete", "完整的诗"), mh.say("rhyme", "押韵")),
)

fig, (ax_loss, ax_rhyme) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
ax_loss.barh(names[::-1], [row["val_loss"] for row in rows][::-1], color="tab:blue")
ax_loss.axvline(
    baseline["trigram"], color="tab:red", linestyle="--", label=mh.tr("trigram table", "三元计数表")
)
ax_loss.set_xlim(3.5, max(row["val_loss"] for row in rows) + 0.2)
ax_loss.set_xlabel(mh.tr("validation loss (nats)", "验证损失（奈特）"))
ax_loss.legend(loc="lower right")
trained = [(name, row) for name, row in zip(names, rows) if "rhyme" in row]
ax_rhyme.barh(
    [name for name, _ in trained][::-1],
    [row["complete"] for _, row in trained][::-1],
    height=0.4,
    align="edge",
    color="tab:gray",
    label=mh.tr("complete poems", "完整的诗"),
)
ax_rhyme.barh(
    [name for name, _ in trained][::-1],
    [row["rhyme"] for _, row in trained][::-1],
    height=-0.4,
    align="edge",
    color="tab:orange",
    label=mh.tr("rhyming couplet ends", "韵脚押韵的联"),
)
ax_rhyme.axvline(chance_rhyme, color="tab:orange", linestyle=":", label=mh.tr("chance", "随机水平"))
ax_rhyme.axvline(real_rhyme, color="black", linestyle=":", label=mh.tr("real poems", "真实的诗"))
ax_rhyme.set_xlim(0, 1)
ax_rhyme.set_xlabel(mh.tr("share of 60 poems written", "所写 60 首诗中的比例"))
ax_rhyme.legend(loc="upper center", fontsize=9)  # 放在前几行的短柱子上方
fig.suptitle(mh.tr("Adding one part at a time", "一次加一个部件"))
fig.tight_layout()
plt.show()

# %% [markdown] en_hash="80743a90183c"
# 从上往下读这张表。训练量很小时，只有注意力的模型还不如二元计数表（5.93 对 5.17 奈特）。残差连接和层归一化这两个让深层网络能训练起来的部件，把损失降了将近半个奈特。不过这些模型几乎都写不出一首完整的诗（至多 2%）。换成更大的模型、训练更久之后（4 个块，`d_model` 为 192，dropout 为 0.1，每步 32 个窗口，1,500 步，这一行同时改了这几项），损失比三元计数表低 0.65 奈特，可完整的诗只占 15%。从诗首开始的窗口改变了这一点：同样的模型、同样的训练量，100% 的诗都能正常收尾。原因是一个位置现在就代表诗中的一个地方，比如五言诗里，位置 13 总是第一联之后的换行。押韵来得最晚，要靠更多的训练：1,500 步后是 16%（随机为 11%），4,500 步后是 74%。每一行只是一个种子的一次训练，所以前几行里几个百分点的差别说明不了什么（那里押韵一栏在 4% 到 24% 之间，是在没写完的诗上算的，噪声很大）。从诗首开始的窗口（完整的诗从 15% 到 100%）和更久的训练（押韵从 16% 到 74%）带来的跳跃，则远大于这个幅度。把学到的位置换成旋转位置编码，在这里没有带来好处：训练量和上一行相同，损失是 4.29 对 4.23 奈特，完整的诗同为 100%，押韵是 17% 对 16%。所以自带模型保留了学到的位置向量。旋转位置编码做的是什么，第 13 课再讲。

# %% [markdown] en_hash="b574f19c0e45"
# ### 它怎样学习：一批数据、损失和 AdamW
#
# 训练就是把同一**步**重复几千次（`lm.train_char_lm` 替我们做了这件事）：
#
# 1. **一批数据**（`get_batch`）：`batch_size` 个窗口，每个窗口是训练文本中连续的 `T` 个字符，起点随机；还有它们的**目标**，即同样的窗口右移一个字符。模型在每个位置都要预测下一个字符。（自带模型的训练让每个窗口从一首诗的开头开始，其余相同。）
# 2. **损失**：logits (b, T, vocab) 对目标 (b, T) 的交叉熵，在每个窗口的每个位置上取平均（`F.cross_entropy` 要求每个位置一行：(b * T, vocab) 对 (b * T,)）。
# 3. **更新**：先清掉旧的梯度（`optimizer.zero_grad()`），再算出新的梯度（`loss.backward()`），最后让优化器（optimizer）移动权重（`optimizer.step()`）。
#
# 优化器是 **AdamW**（`torch.optim.AdamW`）。它就是 Adam（每个权重根据自己梯度及其平方的滑动平均，得到自己的步长），再单独加上**权重衰减**（weight decay）：每一步都把权重矩阵（weight matrix）往 0 收缩一点（`weight_decay=0.1`：收缩其值的 `lr * 0.1`）。这样权重保持较小，模型也不容易死记硬背。偏置和层归一化的缩放不做衰减。
#
# **学习率**（learning rate）按预设的调度（schedule）变化（`lm.learning_rate`）。在前 `warmup_steps` 步里，它从接近 0 线性升到 `lr`，这叫**预热**（warm-up）：Adam 早期的估计噪声很大，所以开头几步要小一些。之后它沿余弦曲线降到最后一步的 `min_lr`。不指定时，`warmup_steps` 取 `steps` 的十分之一。

# %%
schedule = lm.CharLMConfig()  # 演示用的设置：400 步，lr 从 2e-3 降到 min_lr 2e-4
print("warmup_steps:", schedule.warmup_steps, "| weight_decay:", schedule.weight_decay)
for step in (0, 19, 39, 40, 200, 399):
    rate = lm.learning_rate(step, schedule)
    print(mh.say(f"step {step:>3}: lr = {rate:.6f}", f"第 {step:>3} 步：lr = {rate:.6f}"))

# %% [markdown] en_hash="7e1516d56c24"
# ### 动手实现：一批数据
#
# 写出 `get_batch(ids, batch_size, T)`。`ids` 是编码后的训练文本（一个由字符编号组成的一维张量）。返回 `(inputs, targets)`，形状都是 (batch_size, T)：`batch_size` 个各含 `T` 个连续编号的窗口，每一行各自从一个随机位置（`torch.randint`）开始，以及右移一位的同样窗口。一个窗口连同它的目标要占 `T + 1` 个编号，所以最后一个放得下的起点是 `len(ids) - T - 1`。检查器用一段能看出起点的文本调用它，其中一次 `T = len(ids) - 1`（只放得下一个起点），还会调用三次，看窗口在行与行之间、调用与调用之间是否都不同。


# %%
def get_batch(ids, batch_size, T):  # ids 形状 (N,)，返回 inputs、targets，形状都是 (batch_size, T)
    # 在这里写代码
    raise NotImplementedError


answer = None  # 在这里写代码：写好之后 answer = get_batch
mhsa_helpers.exercises.check_get_batch(answer)


# %% [markdown] en_hash="87e7e378b6b8"
# ### 动手实现：一步训练
#
# 写出 `train_step(model, optimizer, inputs, targets)`：在一批数据上做上面列出的一步，并把更新之前算出的损失作为一个数返回（`.item()`）。模型返回的 logits 形状是 (b, T, vocab)。检查器给它一个小的 `lm.CharTransformer` 和 `torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)`，运行两步，再把权重和参考实现的两步结果比较。**梯度裁剪**（gradient clipping）可以用，但不是必须的。在 `backward()` 和 `step()` 之间调用 `torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)`，它把所有梯度看成一个长向量，长度超过 1 时就把它缩到长度 1，这样一批运气不好的数据也不会把权重推得太远。`lm.train_char_lm` 就这样做。


# %%
def train_step(model, optimizer, inputs, targets):  # inputs、targets 形状都是 (b, T)
    # 在这里写代码：损失、zero_grad、backward、step，返回损失的数值
    raise NotImplementedError


answer = None  # 在这里写代码：写好之后 answer = train_step
mhsa_helpers.exercises.check_train_step(answer)


# %% [markdown] en_hash="1b79adde4b45"
# ## 5. 课程自带的模型超过了基线
#
# `tools/train_char_lm.py --full` 用固定的种子在两个 CPU 线程上训练了它，并写出 `data/char_lm.pt`。文件里有权重（以 float16 保存，让文件小一些）、分词器和每一步的损失。`make train-full` 会重新训练它（在两个空闲的 CPU 核上需要约 35 分钟，它会先在你的机器上计时跑几步，再打印自己的估算）。`make train-demo` 训练的是上表中“+ 从诗首开始的窗口”那一行，约需 20 分钟。这个模型已经能写出完整的诗，只是还不押韵。两者都使用课程注意力代码里的 `"sdpa"` 后端。这还是同一个模型，在 CPU 上损失也相同，只差 float32 的舍入误差（有测试验证）。`benchmarks/char_lm_training.py` 测量它快了多少。这里的验证损失把每首留出的诗从开头读起，和模型写诗时一样。计数表则只看每个字之前的一两个字。

# %%
print(shipped)
model_loss = shipped.val_losses[-1][1]
loss_rows = [(mh.say(name, TABLE_NAMES_ZH[name]), f"{loss:.3f}") for name, loss in baseline.items()]
loss_rows.append((mh.say("the model", "模型"), f"{model_loss:.3f}"))
mh.show_table(loss_rows, header=("", mh.say("loss (nats)", "损失（奈特）")))
print(
    mh.say(
        f"the model: {best_table - model_loss:.2f} nats below the best table",
        f"模型比最好的计数表低 {best_table - model_loss:.2f} 奈特",
    )
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
ax.set_ylim(3.5, 8.2)
ax.set_xlabel(mh.tr("step", "步数"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("The shipped model (make train-full)", "课程自带的模型（make train-full）"))
ax.legend()
fig.tight_layout()
plt.show()

# %% [markdown] en_hash="a66c005fd46f"
# ## 6. 它写出整首的诗，而且押韵
#
# 写诗时，模型把最后一个位置的 logits 变成概率，再从中抽取下一个字。有两个设置决定怎样抽取。logits 在 softmax 之前先除以**温度**（temperature）$\tau$，即 $p_i = e^{z_i/\tau} / \sum_j e^{z_j/\tau}$。温度低于 1 时分布变得更尖锐，概率大的字概率更大。温度高于 1 时分布变得更平。**top-k 采样**（top-k sampling）只保留最可能的 $k$ 个字，在其中抽取。写成代码：`torch.topk(z, k)` 给出每行最大的 $k$ 个 logits。每行中比第 $k$ 大的值还小的 logits，在 softmax 之前都设为 `-inf`，它们的概率就成了 0。我们取 $\tau = 0.5$、$k = 20$，并且从不抽取未知字符。表中也列出 $\tau = 0.8$ 的结果。为什么选 0.5，第 9 节会说明。
#
# 我们还加了一条**采样规则**，即**一首诗里不重复用字**。这条规则属于采样器，不是模型学到的。近体诗忌重字，除非诗人有意为之。诗人也极少两次用同一个字作韵脚（真实的诗里占 2%，见第 9 节）。模型自己写的诗，十首里有九首有重字（第 9 节会统计）。所以，这首诗里已经用过的字都不能再抽（`fresh_chars=True`，禁哪些字见 `lm.fresh_char_bans`）。这条规则比诗人还严。诗人有意的重复也被禁了，比如通行本《静夜思》两次用“明月”和“头”（这首诗是古绝）。宽一些的规则是**韵脚不重复**（`fresh_rhymes=True`，见 `lm.fresh_rhyme_bans`），它只在写韵脚时，禁用这首诗里已经作过韵脚的字。下表列出加这条规则和不加规则的模型。
#
# 每首诗都作为一首**新诗**起笔，就像训练时模型看到的每首诗的开头。先是一个空行（一个换行符），再是一个首字。这里用的是 60 首验证诗的首字。`lm.write_poems` 成批地一次写完这些诗，并把每首诗截到表示结束的那个空行。然后我们像读者初读时那样给它们打分，并与三个参照对照。三个参照是真实的验证诗，三元计数表从同样的首字写出的 60 首诗，以及随机水平。表中各列的意思如下：
#
# * **完整的诗。** 由模型自己结束，写满 2 联或 4 联，全是 `5，5。` 或全是 `7，7。`。
# * **押韵。** 相邻两联的韵脚押韵的比例（`lm.rhyme_share`）。
# * **照抄。** 在训练诗中原样出现过的联所占的比例。
# * **韵脚对数。** 计算押韵比例时用到的相邻韵脚对的个数。

# %%
settings = {"temperature": 0.5, "top_k": 20}
firsts = "".join(p.lines[0][0] for p in verse.validation if p.lines[0][0] in tokenizer.chars)
firsts = firsts[:60]  # 60 首留出诗的首字
written = lm.write_poems(model, tokenizer, firsts, seed=0, fresh_chars=True, **settings)
alone = lm.write_poems(model, tokenizer, firsts, seed=0, **settings)  # 同样的诗，不加规则
warm = lm.write_poems(  # 加规则，温度用以前的 0.8
    model, tokenizer, firsts, seed=0, fresh_chars=True, temperature=0.8, top_k=20
)
trigram_poems = [
    lm.WrittenPoem.from_text(
        tokenizer.decode(tables[3].sample(tokenizer.encode("\n" + char), 50, seed=i)[1:])
    )
    for i, char in enumerate(firsts)
]
real_poems = [lm.WrittenPoem(p.text, True, lm.poem_form(p.text)) for p in verse.validation[:60]]
scores = [
    lm.score_poems(mh.say("real validation poems", "真实的验证诗"), real_poems, train_text),
    lm.score_poems(mh.say("the model + rule", "模型 + 规则"), written, train_text),
    lm.score_poems(mh.say("the model alone", "模型（不加规则）"), alone, train_text),
    lm.score_poems(mh.say("the model + rule, τ = 0.8", "模型 + 规则，τ = 0.8"), warm, train_text),
    lm.score_poems(mh.say("trigram table", "三元计数表"), trigram_poems, train_text),
]
mh.show_table(lm.score_table(scores, chance=chance_rhyme))
model_score = scores[1]
assert model_score.complete >= 0.9 and model_score.rhyme >= 0.6  # 随机约为 0.11
assert model_score.copied <= 0.02 and scores[4].complete == 0
for name, poems in ((scores[1].name, written), (scores[2].name, alone)):
    pairs = lm.rhyme_pairs("\n".join(poem.text for poem in poems))  # 相邻两联的韵脚
    same = sum(pair.first == pair.second for pair in pairs) / len(pairs)
    other = sum(pair.rhymes and pair.first != pair.second for pair in pairs) / len(pairs)
    print(
        mh.tr(
            f"{name}: a character rhymed with itself {same:.0%}, "
            f"with another character {other:.0%}",
            f"{name}：字与自身押韵 {same:.0%}，与另一个字押韵 {other:.0%}",
        )
    )

# %% [markdown] en_hash="4939caf9163f"
# 下面是其中六首，每首附上它的体式（每句字数 × 联数）和每联末字的拼音。韵母同属一辙就算押韵，对照拼音即可核对。要注意多音字只取最常见的读音，比如“行”一律读 xing，诗里读 hang（行列）、与 shang 押韵的地方也算作不押韵。

# %%
for poem in written[:6]:
    print(poem.text, end="")
    print(f"  [{poem.form}]", " | ".join(lm.describe_pair(p) for p in lm.rhyme_pairs(poem.text)))
    print()

# %% [markdown] en_hash="afd39ea3bb95"
# 每首诗都在该结束的地方结束：写满 2 联或 4 联，每句字数相同。相邻两联的韵脚有 84% 押韵，三元计数表的诗和随机配对都只有一成左右。按这个现代标准，表中那 60 首真实的诗也只有 88%（第 1 节算的是全部验证集的诗，为 84%）。第二段输出把押韵一栏拆开来看：不加规则时，模型有 6% 的相邻韵脚是一个字和自己押韵。这个标准把它算作押韵，唐代的读者却不会这样算。加了规则，这一项是 0%。在这 60 首上，两个不同的字之间的押韵从 75% 升到 84%。这两个比例（75% 和 84%）都带着一次抽样的偶然性。押韵比例只在九十来对韵脚上计算，换一批 60 首，就会差 5 到 10 个百分点。取四批各 60 首（这一批，再加种子 1 到 3、换了首字的三批），两个不同的字之间的押韵，不加规则为 72%，加规则为 74%。可见规则只禁字，从不替模型挑韵脚。同一个模型、同一条规则，在 $\tau = 0.8$ 时，这 60 首有 65% 押韵，四批合起来为 73%，而 $\tau = 0.5$ 时为 74%。温度改变的是读者读到的诗（第 9 节），对押韵几乎没有影响。第 4 节的表是在 0.8、不加规则时抽样的，所以那里的 74% 也算进了字与自身押韵（在 0.8 时约占一成），规则把这些去掉了。上面六首都只有 2 联。在 $\tau = 0.5$ 时，约五首里只有一首写满 4 联（第 9 节会统计）。现代的标准也会漏掉唐人听得出的韵。上面判为“不押韵”的“余”（yu）和“如”（ru），同属唐代韵书的鱼韵（平水韵上平六鱼）。那首诗首句末尾的“疎”（疏）也属鱼韵，七绝的首句本来就常常入韵。
#
# 现在换成你自己的句子。下面先用李白的“床前明月光”作为一首新诗的首句。改一改 `first_line`，再运行一次这个单元格（句子要有五个字或七个字，后面加一个逗号）。

# %%
first_line = "床前明月光，"
prompt = tokenizer.encode("\n" + first_line)  # (7,)：一个换行符开始新诗，然后是它的上句
unknown, rule = tokenizer.encode(lm.UNKNOWN), lm.fresh_char_rule(tokenizer)  # 同样的规则
out = lm.generate(model, prompt, 60, seed=1, banned=unknown, step_banned=rule, **settings)
mine = lm.WrittenPoem.from_text(tokenizer.decode(out))  # 截到这首诗的结尾
print(mine.text, end="")
print(f"[{mine.form}]", " | ".join(lm.describe_pair(p) for p in lm.rhyme_pairs(mine.text)))

# %% [markdown] en_hash="957605675190"
# ## 7. 任意长度的生成
#
# 模型只学过 $0 \ldots$ `context_length` $- 1$ 这些位置。要写得更长，`lm.generate` 就让窗口滑动，和 nanoGPT（Karpathy 为教学写的小型 GPT）截取输入的做法一样。每一步只读最后 `context_length` 个字，放在位置 $0 \ldots 79$ 上。用 KV 缓存时，第一个窗口里每步只算一个新词元。窗口一旦滑动，每个词元都换到了新的位置，而缓存里的键是按旧位置的嵌入算出来的，不能再用了。所以从这时起，每一步都重读整个窗口，和不用缓存时完全一样。种子相同，写出的字也相同。

# %%
banned = tokenizer.encode(lm.UNKNOWN)  # (1,)：从不抽取未知字符
kwargs = {"banned": banned, "step_banned": rule, **settings}  # 第 6 节的采样设置和规则
long_cached = lm.generate(model, prompt, 150, seed=2, use_cache=True, **kwargs)
long_plain = lm.generate(model, prompt, 150, seed=2, use_cache=False, **kwargs)
assert long_cached.shape == (prompt.numel() + 150,) and torch.equal(long_cached, long_plain)
print(tokenizer.decode(long_cached))  # (157,)：几首诗，一首接一首

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
mh.show_table(
    [
        (mh.say("without cache", "不用缓存"), f"{speed_without:.0f}", ""),
        (
            mh.say("with cache", "用缓存"),
            f"{speed_with:.0f}",
            mh.say(f"{speed_with / speed_without:.1f}x", f"{speed_with / speed_without:.1f} 倍"),
        ),
    ],
    header=("", mh.say("tokens/s", "词元/秒"), mh.say("speed-up", "加速")),
)
assert speed_with > speed_without

# %% [markdown] en_hash="f9319382fee6"
# ## 8. 在留出的诗上看各个头关注什么
#
# `lm.focus_on_texts` 在 200 首验证诗上（每首都从开头读起），为每个头测量五类键平均分到的注意力份额：
#
# * **前一个字符**，即键 $t-1$。
# * **行首**，即查询所在那一行（一联）之前的换行符。
# * **标点**。
# * **同位字**，只对下句中的查询有定义，指上句中同一位置上的字。比如在“床前明月光，疑是地上霜”中，“疑”对着“床”。
# * **下一字的同位字**，指上句中再往后一位的字，也就是将要**预测**的那个字在上句中的对应字。
#
# 最后一行是把权重平均分给之前所有位置时得到的值。

# %%
held_out = ["\n" + p.text for p in verse.validation[:200]]  # 每首诗都从开头读起
focus = lm.focus_on_texts(model, tokenizer, held_out)
mh.show_table(focus.table())
print(focus.strongest_heads())  # 每一类中份额最大的头
shares, base = focus.shares, focus.baseline  # (num_layers, num_heads, 5), (5,)
assert shares.shape == (4, 4, 5)
assert (shares.max(dim=1).values.max(dim=0).values > 1.5 * base).all()  # 每一类都有一个头

# %% [markdown] en_hash="64f63864a3f1"
# 多数类别的键都有一个头对它的关注远高于均匀分配：块 1 的头 4 把三分之一以上的权重放在前一个字上（0.36，均匀分配为 0.08），块 4 的头 3 看本行的开头（0.31），块 1 的头 1 把将近一半的权重（0.49）放在“下一字的同位字”上，也就是上句中与将要写出的字同位的那个字。对最后这一项要小心：看同位字的头能告诉模型自己在句中的位置，以及那里原来的声调。这对字数和平仄同样有用，并不只服务于对仗，所以它证明不了模型会对仗。
#
# ### 押韵的那个头
#
# 押韵是在一个位置上决定的。一联最后一个字之前的那个查询要预测这个字，而这个字必须与上一联的最后一个字押韵。上一联的那个字在五言诗中位于 12 个字符之前，在七言诗中位于 16 个字符之前。`lm.rhyme_focus` 为每个头测量这个查询分给那个键的权重（**押韵处**），并与对照（**其他位置**）比较。对照是一联中其他每个查询分给同样距离上那个键的权重，那个键就是它要预测的字在上一联中的同一位置。一个头如果只在该押韵时才去看上一联的韵脚，它做的就是押韵。如果它在每个位置都看上一联，它做的只是把前后两联对齐。

# %%
rhyme_heads = lm.rhyme_focus(model, tokenizer, held_out)
mh.show_table(rhyme_heads.table())
layer, head = rhyme_heads.strongest()  # 从 0 开始编号
print(
    mh.tr(f"strongest: block {layer + 1}, head {head + 1}", f"最强：块 {layer + 1} 的头 {head + 1}")
)
assert rhyme_heads.rhyme.shape == (4, 4)
assert rhyme_heads.rhyme[layer, head] > 10 * rhyme_heads.control[layer, head]
assert rhyme_heads.rhyme[layer, head] > 10 * rhyme_heads.uniform

# %% [markdown] en_hash="bb142cfa6192"
# 押韵主要靠一个头。在该押韵的地方，块 4 的头 3 把一半以上的权重（0.56）放在上一联的韵脚上；在其他地方，它给同样距离的键只有 0.01，均匀分配也只有 0.03。另一个头，块 3 的头 3，也这样做，只是弱一些（0.14）。其余的头都不看韵脚。注意力的长处就在这一个数字里：它读到的键在 12 或 16 个字符之前，而三元计数表只能看到前两个字。
#
# 热力图（heatmap）画的是这个头在一首留出的律诗上的权重，行是查询，列是键。每联的末字标有拼音，押韵的末字标成红色。最后一个韵脚“斜”（xie）是灰色的：按现代读音，它和“霞”（xia）不同辙，而唐代的韵书把“斜”和“花”“霞”归在同一韵（见第 1 节）。在每个预测韵脚的行里，红框标出上一联的韵脚。

# %%
poem = "\n" + verse.validation[3].text  # 一首律诗：4 联，每联 5 + 5 字
weights = lm.attention_on(model, tokenizer, poem)  # (num_layers, num_heads, T, T)
fig = mh.figures.plot_rhyme_attention(
    weights[layer, head],
    poem,
    title=mh.tr(
        f"Block {layer + 1}, head {head + 1}: red boxes mark the rhyme one line above",
        f"第 {layer + 1} 块的头 {head + 1}：红框是上一联的韵脚",
    ),
)
plt.show()
mh.show_table(lm.char_table(poem))

# %% [markdown] en_hash="dcabd5a815fd"
# 这个头找到了韵脚在**哪里**。那么模型知不知道**哪些**字和它押韵呢？`lm.rhyme_odds` 在每一处该押韵的位置，把模型给予同一韵辙各字的概率加起来，再和一个只知道训练诗中各韵辙收尾频率的写作者相比。

# %%
odds = lm.rhyme_odds(model, tokenizer, held_out, train_text)  # 这 200 首诗里的每一处韵脚
print(odds)

# %% [markdown] en_hash="177d97e77dcc"
# 只知道韵脚在哪里还不够，模型还得把概率放在和它押韵的字上。它做到了：在该押韵的地方，它有 0.71 的概率落在韵辙正确的字上；一个只知道各韵辙收尾频率的写作者，只有 0.11。注意力头（attention head）取来上一联的韵脚。它在最后一个块里，所以把“与霜押韵”变成“乡”“光”“长”等具体的字的，是这个块的前馈网络、最后的层归一化和语言模型头（前面还有块 3 里那个较弱的押韵头，各自占多少，我们没有测量）。

# %% [markdown] en_hash="0fbadf0d5a70"
# ## 9. 它还做不到的，实测
#
# 押韵和体式已经有了。熟读唐诗的人接下来要看的五样东西，它还没有做到，或者只做到一部分：
#
# * **平仄。** `lm.tone_opposition_share` 检查律诗的一条规则：一联上下句平仄相对（对），在第二个字上检查，因为按“二四六分明”，这个字的平仄不能通融。也就是说，一联上下句的第二个字平仄相反，平对仄。判断依据是现代声调。普通话已经没有入声，古入声字有的今读平声，所以这一项也只是近似。随机水平约为一半。
# * **律诗的篇幅。** 统计 4 联的诗（律诗的篇幅；语料中的八句诗也包括古体）而不是 2 联的绝句所占的比例。
# * **对仗。** 律诗中间两联的对仗，本课没有测量。第 8 节的“下一字的同位字”头看的位置是对的，但看同位位置的头同样可以用来安排平仄相对、数清位置，所以它证明不了模型懂对仗。
# * **韵脚不重复。** 诗人极少两次用同一个字作韵脚（下表真实的诗占 2%）。`lm.repeated_rhyme_share` 统计这样做的诗占多少，加第 6 节的规则和不加规则的都统计。
# * **不用重字。** `lm.repeated_char_share` 统计有重字的诗占多少，也就是第 6 节的规则所禁止的。

# %%
form_rows = []
for name, poems in (
    (mh.say("real poems", "真实的诗"), [p.text for p in real_poems]),
    (mh.say("model + rule", "模型 + 规则"), [p.text for p in written if p.complete]),
    (mh.say("model alone", "模型（不加规则）"), [p.text for p in alone if p.complete]),
    (mh.say("model + rule, τ = 0.8", "模型 + 规则，τ = 0.8"), [p.text for p in warm if p.complete]),
):
    text = "".join(poem + "\n" for poem in poems)
    tones = lm.tone_opposition_share(text)
    regulated = sum(poem.count("\n") >= 4 for poem in poems) / len(poems)
    repeated = lm.repeated_rhyme_share(poems)  # 一首诗里同一个字两次作韵脚
    twice = lm.repeated_char_share(poems)  # 有字写了两次
    form_rows.append((name, f"{tones:.0%}", f"{regulated:.0%}", f"{repeated:.0%}", f"{twice:.0%}"))
mh.show_table(
    form_rows,
    header=(
        "",
        mh.say("second characters opposed in tone", "上下句第二字平仄相对"),
        mh.say("poems of 4 couplets", "四联的诗"),
        mh.say("a rhyme character used twice", "同一个字两次作韵脚"),
        mh.say("a character written twice", "有重字"),
    ),
)

# %% [markdown] en_hash="7fededd71a71"
# 按这项检查，模型有 88% 的联上下句第二字平仄相对，比真实的诗（73%）还高。这是因为语料里也有不讲平仄的古体诗，而且现代声调会读错一些唐代的字。所以这只能说明看不出问题，不能说明它比诗人做得好。另外，温度低于 1 的抽样，本来就偏向语料中占多数的合律格式。篇幅才是真正的差距：模型写的诗只有 22% 是四联的律诗（$\tau = 0.8$ 时为 30%），真实的诗是 63%。后两栏是读者很早就会注意到的毛病，而且是模型本身的毛病：不加规则时，模型有 12% 的诗同一个字两次作韵脚，真实的诗几乎不会这样（2%）。它有 93% 的诗有重字，诗人是 40%（常常是有意的）。加了第 6 节的规则，两项都是 0%，这是规则本身保证的：是采样器禁止了重复，不是模型学会了不重复。
#
# 读者最先注意到的是诗句连不连得成意思，这一点上面的数字都没有测量。所以我们请审读者像熟悉唐诗的母语读者那样盲读。审读者是一个语言模型，不是一组真人读者。所有的诗、答案和每一条评语都在 `data/verse_blind_review.json` 里。每次把模型的 30 首诗和 30 首真实的诗混在一起，事先不说哪首是谁写的，每组换一位新的审读者。模型的 30 首里“过得去”及以上的首数：
#
# | 采样方式 | 过得去及以上 | 较差 |
# |---|---|---|
# | $\tau = 0.8$，韵脚不重复（本课以前的设置） | 12（换一位审读者重读：15） | 18（重读：15） |
# | $\tau = 0.6$，不重复用字 | 16（一首“好”） | 14 |
# | $\tau = 0.5$，韵脚不重复 | 13 | 17 |
# | $\tau = 0.5$，不重复用字（第 6 节） | **22**（换一位审读者重读：19） | 8（重读：11） |
# | 同上，每个首字写 4 首，取模型自己认为最可能的一首 | 20 | 10 |
# | $\tau = 0.4$，不重复用字 | 21 | 9 |
#
# 同样的 30 首读两次，一次 12 首，一次 15 首。第 6 节的诗读两次，一次 22 首，一次 19 首。可见一次审读的误差约有三首。只降温度、用宽一些的规则（13 首），帮助不大。用严的规则、温度 0.6（16 首），帮助也不大。两样一起用，帮助最大，为 19 到 22 首。每个首字写 4 首，留下模型自己认为最可能的一首，并没有更好（20 首）。$\tau = 0.4$ 读起来并不更好（21 首），四联的诗却更少（加规则的四批样本中，0.4 为 11%，0.5 为 19%，0.8 约为 29%），所以第 6 节取 0.5。表中各次审读里，模型的诗只有一首被当成诗人写的，就是 $\tau = 0.6$ 时那首“好”。每一次审读，真实的 30 首都是“好”（28 或 29 首）或“过得去”。在 $\tau = 0.5$ 时，审读者指出最多的毛病是：生造的词语不知所云（云雨共相楼、神乐起昭秦），意象互相矛盾（第 6 节第二首的“照晓”与“半夜”），套话（无人……有鸟），诗句连不成一个完整的意思。温度越低，用字越稳妥、越常见，代价是四联的诗更少。另外，超出一个窗口之后（第 7 节），文字就散乱了。模型学到的位置是诗中的地方，而滑动的窗口把每个字都挪到了别的地方。相对位置（比如如今许多模型都在用的旋转位置编码，rotary position embedding）不会把诗中的位置和窗口中的位置绑在一起。
#
# ## 小结
#
# * 计数表给出基线。一元、二元、三元计数表用的是同一种训练集与验证集的划分。它们都看不到 12 个字符之前的韵脚。
# * Transformer 块的结构是层归一化 → `MultiHeadAttention` → 残差，层归一化 → 前馈网络 → 残差。一次加一个部件来测量，训练量很小时，残差连接和层归一化带来的好处最大；多个块、训练更久带来的好处更大（损失降到 4.42 奈特）。
# * 从诗首开始的窗口把“第几个位置”变成了“诗中的哪个地方”：完整的诗从 15% 升到 100%。
# * 课程自带的模型损失低于所有计数表，能写出完整的诗（100%），没有照抄任何一联。用 $\tau = 0.5$ 抽样，再加一条属于采样器、不属于模型的规则（一首诗里不重复用字），本课的 60 首押韵占 84%（四批样本合计 74%，真实的诗 88%，三元计数表和随机约 10%），其中没有一个字和自己押韵。盲读时，它的 30 首里有 19 到 22 首过得去（本课以前的设置，即 $\tau = 0.8$、韵脚不重复，为 12 到 15 首），没有一首算好。
# * 超过 `context_length` 以后窗口滑动，用不用缓存写出的文本都一样。
# * 头各有分工：前一个字、行首、下一字的同位字；有一个头（块 4 的头 3）恰好在该押韵时看上一联的韵脚。
# * 仍然欠缺的几项：已实测的有四联的诗（22% 对 63%），盲读时 30 首里仍有 8 到 11 首算差，以及模型本身仍会重复用字（93% 的诗有重字，采样规则把这一点掩盖了）。看得出、但没有测量的有贯穿全诗的意思，以及超出一个窗口的文字。
#
# ## 练习
#
# 参考答案见 `solutions/12_tiny_char_lm_solutions.ipynb`。
#
# **练习 1。** 有一个比我们小的模型，3 个块，每块 4 个头，`head_dim` 为 32，`context_length` 为 128。它处理完 100 个词元（批大小为 1）之后，所有 KV 缓存里一共存了多少个数？

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_cache_numbers(answer)

# %% [markdown] en_hash="e56de0cc7c59"
# **练习 2。** 按第 6 节的步骤，把 `logits_ex`（两行预测下一个字的 logits）变成采样概率，温度为 0.7，top-k 为 3。结果应是一个 `(2, vocab_size)` 的张量，每行之和为 1，且恰有 3 个非零元素。这里只做温度和 top-k，未知字符 `□` 不必排除（排除它是采样函数另加的一步）。

# %%
with torch.no_grad():
    logits_ex = model(tokenizer.encode("\n床前明月光，")[None])[0, -2:]  # (2, vocab_size)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_top_k_probs(answer, logits_ex, 3, 0.7)

# %% [markdown] en_hash="8c993043c0f4"
# **练习 3。** 直接从权重出发，为 `weights_ex`（课程自带的模型第 2 块在 `poem` 上的权重）的每个头计算第 8 节表中的标点份额。先对每个查询，把落在 `lm.PUNCTUATION` 中的键上的权重加起来，再对自身或之前至少有一个标点的查询求平均。结果的形状为 `(num_heads,)`。

# %%
weights_ex = weights[1]  # (num_heads, T, T)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_punctuation_share(answer, weights_ex, poem)

# %% [markdown] en_hash="6d4c1ff09290"
# **练习 4（你自己的文本）。** `lm.text_data(text)` 可以从任意字符串（至少 1,000 个字符）构建分词器，并划分训练集和验证集。在 `own`（同一个软件包里的宋词）上训练一个模型：用“它怎样学习”里替我们重复训练步骤的那个函数，把 `own` 作为它的数据，配置由你自己定，小到单核训练约一分钟即可（各项设置及其作用也在那里）。然后把它返回的训练记录交给检查函数。验证损失要低于这段文本的一元、二元计数表（第 2 节）两个损失的中点，也就是说，模型学到的要比每个字符出现的频率更多。你也可以把 `song_ci` 换成自己的文本。

# %%
song_ci = lm.load_song_ci()
own = lm.text_data(song_ci[:200_000])
print(own.tokenizer, own.train_ids.shape, own.val_ids.shape)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_own_text(answer, own)
