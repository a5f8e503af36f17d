# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="409ee1a0adc1"
# # 08 · 训练一个小模型
#
# 到目前为止，每一个注意力权重（attention weight）都来自未经训练的投影（projection）。本课把 `MultiHeadAttention` 放进一个最小的**语言模型**（language model），在两个玩具任务上训练它。第一个任务只用来确认模块的每个部分都在学习。第二个任务中，头必须找到一个确定的位置，训练结束时它果然找到了。
#
# **学习目标**
# 1. 读懂 `TinyAttentionLM`，本课会把这个完整的模型写出来。它由**词元嵌入**（token embedding）、**位置嵌入**（positional embedding）、因果多头注意力（multi-head attention）和一个线性的**语言模型头**（LM head）依次组成。语言模型头输出 **logits**，即 softmax 之前的分数，每个可能的下一个词元（token）各有一个。
# 2. 先预测未经训练的模型的损失，再用交叉熵在**重复任务**上训练它，看着损失在 3 个**轮次**（epoch）内降到远低于 1.0。
# 3. 做一个经典实验，在宽度不变的情况下把 4 个头换成 8 个头（head_dim 从 8 变为 4），并用**消融**（ablation）检验每个头有多重要。
# 4. 在**平移任务**上训练它（抄写 $k$ 个位置之前的词元），看一个头怎样**专门化**（specialise），学会只看 $k$ 个位置之前的词元，并用 `mh.offset_attention` 度量这一点。
# 5. 改变头数，看看什么变了、什么没变。
#
# **预备知识：** 第 07 课（`07_inspecting_heads`）讲的每个头的权重、热力图（heatmap）和熵。还要了解 PyTorch 的自动求导（autograd），也就是 `loss.backward()`，以及优化器（optimizer）的一步更新和怎样把交叉熵用作损失。第 00 课列出了可以去哪里补这些知识。**用时：** 约 80 分钟（阅读、运行 27 个代码单元格、1 次预测、3 道练习，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** 词元 id `(b, T)`（小于 `vocab_size` 的整数，`T <= context_length`）→ logits `(b, T, vocab_size)`，传入 `return_weights=True` 时还返回权重 `(b, num_heads, T, T)`。目标为 `(b, T)`，没有目标的位置取 -100。

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="058397cd5960"
# ## 1. 模型
#
# 注意力负责混合向量。它先要有向量可混，还要有办法把自己的输出变成预测。模型有四层，按下面的顺序创建：
#
# * `tok_emb` 是一个 `nn.Embedding(vocab_size, d_model)`，为每个词元 id 提供一个可学习的向量。
# * `pos_emb` 是一个 `nn.Embedding(context_length, d_model)`，为每个位置提供一个可学习的向量。第 07 课说过，单靠注意力分不清同一个词的两个副本，给每个词元加上一个位置向量就能解决这个问题。
# * `attn` 是第 06 课的 `MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)`。它是因果的，所以位置 $t$ 只能看到词元 $0..t$。
# * `lm_head` 是一个 `nn.Linear(d_model, vocab_size)`，为每个可能的下一个词元给出一个分数（**logit**）。
#
# 这里故意没有前馈网络（feed-forward network）、残差连接（residual connection）和层归一化（layer normalization），Transformer 的下一阶段才会加上它们。因此，每一个预测都必须经过注意力头（attention head）。


# %%
class TinyLM(nn.Module):
    def __init__(self, vocab_size, d_model, context_length, num_heads, dropout=0.0):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(context_length, d_model)
        self.attn = mh.MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)
        self.lm_head = nn.Linear(d_model, vocab_size)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1])  # (T,)
        x = self.tok_emb(ids) + self.pos_emb(positions)  # (b, T, d_model)
        return self.lm_head(self.attn(x))  # (b, T, vocab_size)


VOCAB, D_MODEL, CONTEXT, HEADS = 64, 32, 12, 4  # head_dim = 32 // 4 = 8
torch.manual_seed(0)
tiny = TinyLM(VOCAB, D_MODEL, CONTEXT, HEADS)
ids = torch.randint(0, VOCAB, (2, CONTEXT))  # (b, T)
print("logits:", tuple(tiny(ids).shape))
print(mh.say("parameters:", "参数个数："), sum(p.numel() for p in tiny.parameters()))

# %% [markdown] en_hash="4cf0f56e1352"
# 包里的 `mh.TinyAttentionLM` 是同一个模型，层相同，顺序也相同。它另外做了输入检查（id 必须是整数、小于 `vocab_size`、最多 `context_length` 个词元），还多了一个 `return_weights=True` 开关。种子相同，得到的数字也相同。

# %%
torch.manual_seed(0)
package_model = mh.TinyAttentionLM(VOCAB, D_MODEL, CONTEXT, HEADS)
logits, weights = package_model(ids, return_weights=True)  # (2, 12, 64), (2, 4, 12, 12)
print("weights:", tuple(weights.shape))
print(package_model)

# %% [markdown] en_hash="a681a2a1b49a"
# **先预测，再运行。** 我们用**交叉熵损失**（cross-entropy loss）来衡量模型，即对每个位置取 $-\log p(\text{正确词元})$，再求平均。训练之前模型一无所知，所以它给 64 个词元中每一个的概率都差不多。你预计未经训练的模型损失是多少？把你的猜测（一个数）写进 `prediction`。检查器会告诉你推理是否正确，下一个单元格会实际测量它。

# %%
import mhsa_helpers.exercises

prediction = None  # 在这里写代码：你猜的未训练模型的损失，单位为奈特
mhsa_helpers.exercises.check_initial_loss(prediction)

# %%
targets = torch.randint(0, VOCAB, (2, CONTEXT))  # (b, T)
loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
print(
    mh.say(f"untrained loss: {loss.item():.2f}", f"未训练时的损失：{loss.item():.2f}"),
    f"  log(64) = {math.log(64):.2f}",
)
if prediction is not None:
    print(mh.say(f"your prediction: {prediction:.2f}", f"你的预测：{prediction:.2f}"))
assert abs(loss.item() - math.log(64)) < 0.3

# %% [markdown] en_hash="c2a3acdbe0fc"
# 均匀猜测的损失是 $-\log\frac{1}{64} = \log 64 \approx 4.16$，未经训练的模型很接近这个值。下面每一条损失曲线（loss curve）都从这里出发，训练好的模型的损失也必须低于这个**随机水平**（chance level）。

# %% [markdown] en_hash="a3dd62e47cce"
# ## 2. 重复任务
#
# 语言模型预测的是**下一个词元**。位置 $t$ 的目标是位置 $t + 1$ 的输入，所以目标就是把输入**向左平移一位**。下面在一个真实的句子上看看。句子取自书中，词元 id 来自由这 6 个词构成的玩具词表（vocabulary）。

# %%
sentence = mh.load_journey().words  # 书中的六个词
vocab = {word: i for i, word in enumerate(sorted(set(sentence)))}
token_ids = torch.tensor([vocab[word] for word in sentence])  # (T + 1,) = (6,)
inputs_s, targets_s = token_ids[:-1], token_ids[1:]  # 各为 (T,)：目标是左移一位的输入
for t in range(len(inputs_s)):
    given = f"{sentence[t]:>8} ({inputs_s[t]})"
    wanted = f"{sentence[t + 1]:>8} ({targets_s[t]})"
    print(
        mh.say(
            f"position {t}: input {given}  ->  target {wanted}",
            f"位置 {t}：输入 {given}  ->  目标 {wanted}",
        )
    )
print(mh.say("inputs: ", "输入："), inputs_s)
print(mh.say("targets:", "目标："), targets_s)
assert torch.equal(targets_s[:-1], inputs_s[1:])  # 每个目标都是下一个位置的输入

# %% [markdown] en_hash="b377d3cc9f96"
# 第一个任务是**重复任务**，做法一样，只是每一行都由**同一个随机词元重复**而成，铺满整个上下文。一行 13 个相同的词元给出 12 个输入和 12 个目标。一行相同的词元向左平移一位后和自己一模一样，所以模型要学的就是“下一个词元和前面的相同”。这个任务故意出得很简单，目的不是得到一个有用的模型，而是确认梯度能传到每一层，损失也确实在下降。

# %%
from mhsa_helpers.training import make_repeat_batch, make_shift_batch

example_ids, example_targets = make_repeat_batch(
    3, CONTEXT, VOCAB, torch.Generator().manual_seed(0)
)
print(mh.say("inputs: ", "输入："), example_ids, sep="\n")  # (3, 12)
print(mh.say("targets:", "目标："), example_targets, sep="\n")  # (3, 12)：输入左移一位
assert torch.equal(example_targets[:, :-1], example_ids[:, 1:])

# %% [markdown] en_hash="0b2d5dbc0bc5"
# 训练循环是常规写法。每一步取一个新批次（batch），算出 logits 和交叉熵，调用 `backward`，再让**优化器**走一步。我们用 Adam，**学习率**（learning rate）为 0.003，批次大小为 32，并把 40 步称为一个轮次。这里没有固定的数据集，每一步都抽取一个新的随机批次，所以这里的“轮次”只是 40 步的计量单位。两个随机数生成器保证结果可以复现，全局种子决定初始权重，另一个单独的生成器负责抽取批次。


# %%
def train_repeat(num_heads, seed=0, epochs=3, steps_per_epoch=40, batch_size=32, lr=3e-3):
    torch.manual_seed(seed)  # 初始权重
    model = mh.TinyAttentionLM(VOCAB, D_MODEL, CONTEXT, num_heads)
    data = torch.Generator().manual_seed(seed)  # 批次
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _step in range(epochs * steps_per_epoch):
        batch_ids, batch_targets = make_repeat_batch(batch_size, CONTEXT, VOCAB, data)  # (b, T)
        logits = model(batch_ids)  # (b, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), batch_targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return model, losses


model, losses = train_repeat(HEADS)
epoch_losses = [sum(losses[i : i + 40]) / 40 for i in range(0, len(losses), 40)]
print(
    mh.say(
        f"first loss {losses[0]:.2f}, epoch means:", f"第一步损失 {losses[0]:.2f}，各轮次均值："
    ),
    [round(x, 2) for x in epoch_losses],
)
assert abs(losses[0] - math.log(64)) < 0.3  # 约为 log(64) = 4.16
assert epoch_losses[-1] < 1.0  # 3 个轮次后远低于 1.0

# %% [markdown] en_hash="b1bbdbb63ece"
# `mh.train_repeat_task` 运行的正是这个循环（内部只用一个 CPU 线程，可选的 `tqdm` 进度条在这里关掉了），并返回一个 `TrainingResult`，其中有 `.model`、`.losses`（每步一个）和 `.epoch_losses`。它每一步的损失都与上面相同。

# %%
result = mh.train_repeat_task(num_heads=HEADS, seed=0, progress=False)
print(result)

# %% [markdown] en_hash="ee8aae152f0d"
# 换了种子，这个结论也成立，并不是碰巧选中了一个幸运的种子（课程的测试检查了好几个种子）。

# %%
run = mh.train_repeat_task(seed=1, progress=False)
print(
    mh.say(
        f"seed 1: first loss {run.first_loss:.2f}, last epoch {run.final_loss:.2f}",
        f"种子 1：第一步损失 {run.first_loss:.2f}，最后一轮 {run.final_loss:.2f}",
    )
)
assert abs(run.first_loss - math.log(64)) < 0.3 and run.final_loss < 1.0

# %% [markdown] en_hash="ea0e7dd8f6b1"
# 下面是**损失曲线**，每步一个点，虚线是均匀猜测的水平。

# %%
fig, ax = plt.subplots(figsize=(8, 3.6), layout="constrained")
ax.plot(result.losses, label=mh.tr("training loss", "训练损失"))
ax.axhline(
    math.log(64),
    color="gray",
    linestyle="--",
    label=mh.tr("log(64) = 4.16, uniform guess", "log(64) = 4.16，均匀猜测"),
)
for epoch in (1, 2):
    ax.axvline(epoch * 40, color="gray", linestyle=":", linewidth=1)
ax.set_xlabel(mh.tr("step (40 steps = 1 epoch)", "步数（40 步 = 1 轮）"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr("Repeat task, 4 heads", "重复任务，4 个头"))
ax.legend()
plt.show()

# %% [markdown] en_hash="9a3e70169f2c"
# ## 3. 在重复任务上训练之后的头
#
# 这些头学到了什么？下面是它们在一行重复词元上的权重。看图时请想一想，这个任务**需要**某种特定的注意力模式吗？

# %%
labels = [f"t{i}" for i in range(CONTEXT)]
with torch.no_grad():
    _, repeat_weights = result.model(torch.full((1, CONTEXT), 7), return_weights=True)
fig = mh.plot_attention_grid(
    repeat_weights[0],
    labels,
    title=mh.tr("Repeat task: 4 heads after training", "重复任务：训练后的 4 个头"),
)
plt.show()
print(mh.say("entropy per head:", "每个头的熵："), mh.head_entropy(repeat_weights))

# %% [markdown] en_hash="8402afd7a662"
# ### 实验：宽度不变，4 个头 → 8 个头
#
# 这是一个经典实验。把 `num_heads` 从 4 改成 8，同时保持 `d_model = 32`，每个头分到的 `head_dim` 就从 8 变成 `32 // 8 = 4`，参数量不变。用同样的方式训练，看看热力图有什么变化。

# %%
runs = {4: result, 8: mh.train_repeat_task(num_heads=8, seed=0, progress=False)}
repeat_weights_by_heads = {}
for heads, run in runs.items():
    n_params = sum(p.numel() for p in run.model.parameters())
    with torch.no_grad():
        _, repeat_weights_by_heads[heads] = run.model(
            torch.full((1, CONTEXT), 7), return_weights=True
        )  # (1, heads, 12, 12)
    print(
        mh.say(
            f"{heads} heads, head_dim {run.model.head_dim}, {n_params} parameters: "
            f"loss {run.first_loss:.2f} -> last epoch {run.final_loss:.2f}",
            f"{heads} 个头，head_dim {run.model.head_dim}，{n_params} 个参数："
            f"损失 {run.first_loss:.2f} -> 最后一轮 {run.final_loss:.2f}",
        )
    )
    assert run.final_loss < 1.0

# %%
fig = mh.plot_attention_grid(
    repeat_weights_by_heads[8][0],
    labels,
    title=mh.tr("Repeat task: 8 heads after training", "重复任务：训练后的 8 个头"),
)
plt.show()

# %% [markdown] en_hash="8b10702a3486"
# 两个模型都同样好地解决了任务，可它们的头看上去毫无相似之处，8 张图也不是把 4 张图各画两遍。为什么会这样？在这个任务里，每个位置上都是**同一个**词元，每个值向量携带的信息都相同，所以**任何**注意力模式都能给出正确答案。没有什么力量把某个头推向某种特定的模式，你看到的主要是随机初始化和位置嵌入碰巧造成的结果。热力图显示的是权重流向哪里，而不是它重不重要。
#
# ### 每个头都重要吗？做一次消融
#
# 第 07 课提醒过，头之间可能存在**冗余**（redundancy）。为了检验这一点，我们关掉一个头，再测量损失。具体做法是把这个头在 `out_proj` 中对应的列（即它在拼接输出中所占的那一份）置零，然后在 256 个新序列上测量。两个模型都这样做一遍。

# %%
import copy

ids_eval, targets_eval = make_repeat_batch(256, CONTEXT, VOCAB, torch.Generator().manual_seed(1))


def repeat_loss(model):
    with torch.no_grad():
        logits = model(ids_eval)  # (256, 12, 64)
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets_eval.reshape(-1)).item()


def ablation(model):
    # 依次关掉每个头（把它在 out_proj 中对应的列置 0）后的损失
    losses = []
    for head in range(model.num_heads):
        without = copy.deepcopy(model)
        columns = slice(head * model.head_dim, (head + 1) * model.head_dim)
        with torch.no_grad():
            without.attn.out_proj.weight[:, columns] = 0.0
        losses.append(repeat_loss(without))
    return losses


full_loss, ablated = {}, {}
for heads, run in runs.items():
    full_loss[heads], ablated[heads] = repeat_loss(run.model), ablation(run.model)
    ratios = [loss / full_loss[heads] for loss in ablated[heads]]
    print(
        mh.say(
            f"{heads} heads: loss with all heads {full_loss[heads]:.4f}",
            f"{heads} 个头：所有头都在时的损失 {full_loss[heads]:.4f}",
        )
    )
    low, high = min(ablated[heads]), max(ablated[heads])
    print(mh.say("  without one head:", "  去掉一个头："), f"{low:.3f} .. {high:.3f}", end="")
    print(
        mh.say(
            f"  ({min(ratios):.1f}x .. {max(ratios):.1f}x),  chance level",
            f"（{min(ratios):.1f}–{max(ratios):.1f} 倍），随机水平",
        ),
        f"log(64) = {math.log(64):.2f}",
    )

# %%
entropy4 = mh.head_entropy(repeat_weights_by_heads[4])
for head in range(4):
    print(
        mh.say(
            f"4 heads, Head {head + 1}: entropy {entropy4[head]:.2f}, "
            f"loss without it {ablated[4][head]:.3f}",
            f"4 个头，头 {head + 1}：熵 {entropy4[head]:.2f}，去掉它后的损失 {ablated[4][head]:.3f}",
        )
    )
sharpest = int(entropy4.argmin())
most_needed = max(range(4), key=ablated[4].__getitem__)
print(
    mh.say(
        f"sharpest head: Head {sharpest + 1}; the head the model needs most: Head {most_needed + 1}",
        f"最集中的头：头 {sharpest + 1}；模型最需要的头：头 {most_needed + 1}",
    )
)
assert sharpest != most_needed
ratios = {heads: [loss / full_loss[heads] for loss in ablated[heads]] for heads in runs}
assert min(ratios[4]) > 7.5 and max(ratios[4]) < 15  # 正文说“8 到 14 倍”
assert min(ratios[8]) > 2 and max(ratios[8]) < 5  # 正文说“2.7 到 4.6 倍”
assert max(ablated[4]) < math.log(64) / 10  # 低于随机水平的十分之一

# %% [markdown] en_hash="6a152310176e"
# 仔细读这些数字。去掉 4 个头中的任何一个，损失都会变成原来的 **8 到 14 倍**，代价并不小。但它仍然低于随机水平 $\log 64 = 4.16$ 的十分之一。即使是最差的损失 0.288，也意味着正确词元平均仍能得到约 $e^{-0.288} \approx 0.75$ 的概率（几何平均：$e^{-\text{平均损失}}$ 等于各个位置概率的乘积再开“位置个数”次方），因为其余三个头携带了大量相同的信息。有 8 个头时，每个头的分量更小，去掉一个只让损失变为原来的 2.7 到 4.6 倍。可见这些头部分**冗余**，而模型最需要的那个头并不是最集中（熵最低）的那个。热力图和熵用来提出问题，像这次消融这样的实验才能回答问题。

# %% [markdown] en_hash="ddbff0388126"
# ## 4. 一个有东西可找的任务：抄写 $k$ 个位置之前的词元
#
# 在**平移任务**中，输入是随机词元，位置 $t$ 的目标是位置 $t - k$ 上的词元，即 `target[t] = ids[t - k]`。前 $k$ 个位置往回数 $k$ 步没有词元可抄，把它们的目标设为 -100，`F.cross_entropy` 会忽略这些位置（`ignore_index=-100`）。要完成这个任务，唯一的办法是恰好往前看 $k$ 个位置，所以我们事先就知道一个有用的头必须做什么。

# %%
K = 2
shift_ids, shift_targets = make_shift_batch(2, CONTEXT, VOCAB, K, torch.Generator().manual_seed(0))
print(mh.say("inputs: ", "输入："), shift_ids, sep="\n")  # (2, 12)
print(mh.say("targets:", "目标："), shift_targets, sep="\n")  # (2, 12)：输入右移 2 位

# %% [markdown] en_hash="5a9cfde801a2"
# `mh.offset_attention(model, k)` 测量的正是我们预期的行为。对每个头，它计算位置 $t$ 上的查询放在位置 $t - k$ 上的平均权重（在 256 个随机序列和所有 $t \ge k$ 上取平均）。训练之前这个值很小，大约是 $1/(t+1)$ 的平均值。然后 `mh.train_shift_task` 训练模型 3 个轮次，每个轮次 50 步（重复任务是 40 步），损失曲线的横轴就是这样标的。

# %%
torch.manual_seed(0)
untrained = mh.TinyAttentionLM(VOCAB, D_MODEL, CONTEXT, HEADS)
before = mh.offset_attention(untrained, K)  # (num_heads,)
print(
    mh.say(
        f"weight on the token {K} back, per head, untrained:",
        f"每个头放在 {K} 个位置之前词元上的权重，训练前：",
    ),
    before,
)
assert before.max() < 0.5

# %%
shift = mh.train_shift_task(k=K, num_heads=HEADS, seed=0, progress=False)
after = mh.offset_attention(shift.model, K)  # (num_heads,)
print(shift)
print(
    mh.say(
        f"weight on the token {K} back, per head, trained:  ",
        f"每个头放在 {K} 个位置之前词元上的权重，训练后：",
    ),
    after,
)
print(
    mh.say(
        "weight on the token 1 back, for comparison:       ",
        "作为对照，放在前 1 个词元上的权重：    ",
    ),
    mh.offset_attention(shift.model, 1),
)
assert shift.final_loss < 0.5
assert after.max() > 0.8  # 至少有一个头恰好往前看 K 个位置

# %%
with torch.no_grad():
    _, shift_weights = shift.model(shift_ids[:1], return_weights=True)  # (1, h, T, T)
fig = mh.plot_attention_grid(
    shift_weights[0],
    labels,
    title=mh.tr(f"Shift task (k={K}): heads after training", f"平移任务（k={K}）：训练后的各个头"),
)
plt.show()

# %%
fig, ax = plt.subplots(figsize=(8, 3.6), layout="constrained")
ax.plot(shift.losses, label=mh.tr("training loss", "训练损失"))
ax.axhline(math.log(64), color="gray", linestyle="--", label="log(64) = 4.16")
ax.set_xlabel(mh.tr("step (50 steps = 1 epoch)", "步数（50 步 = 1 轮）"))
ax.set_ylabel(mh.tr("cross-entropy (nats)", "交叉熵（奈特）"))
ax.set_title(mh.tr(f"Shift task, k={K}, {HEADS} heads", f"平移任务，k={K}，{HEADS} 个头"))
ax.legend()
plt.show()

# %% [markdown] en_hash="48ffed423b49"
# 现在每个头都画出了一条明亮的对角线，位于主对角线左侧 $k = 2$ 格处。也就是说，查询 $t$ 关注键 $t - 2$，而这个位置的值携带着要抄写的词元。有两点值得注意：
#
# * 这些头确实**专门化**了，都只看这个偏移量。任务需要这样，权重也显示了这一点（`offset_attention` 接近 1）。这正是热力图**确实**能说明问题的情形，因为我们构造任务时就让它只有一种解释。
# * 它们看的全是**同一个**偏移量。只有一样东西可找时，这些头是**冗余**的（见第 3 节）。多头注意力本身并不会让各个头分工，只有任务和训练才能做到。

# %% [markdown] en_hash="5e5a90c198d2"
# ## 5. 轮到你了：头数
#
# 修改第 1 节第一个代码单元格里的 `HEADS`（可以试试 1、2 或 8，它必须能整除 `D_MODEL = 32`），然后重新运行整个 notebook。也可以用下面的控件，设置“头数”“k”和“随机种子”，再点击**训练**（每次大约一秒）。只有 1 个头时，这一个头必须独自完成任务。有 8 个头（`head_dim = 4`）时，同一个解法会有更多副本。

# %%
# NBVAL_IGNORE_OUTPUT
trainer = mh.training_explorer(heads=HEADS, k=K)
trainer

# %% [markdown] en_hash="78b1cea2838a"
# 下面用代码做同样的事，设为 1 个头、偏移量 3。

# %%
trainer.controls["heads"].value = 1
trainer.controls["k"].value = 3
trainer.update()  # 相当于点击“训练”
one_head = trainer.result
print(one_head["message"])
assert one_head["offset"].shape == (1,) and one_head["offset"].max() > 0.8

# %% [markdown] en_hash="fe79c9be070e"
# ## 小结
#
# * `TinyAttentionLM` = 词元嵌入 + 位置嵌入 → 因果 `MultiHeadAttention` → 线性的语言模型头。输入 id `(b, T)`，输出 logits `(b, T, vocab_size)`。
# * 未经训练的模型，损失约为 $\log(\text{词表大小})$，即均匀猜测的损失，64 个词元时为 4.16。
# * 在重复任务上，损失在 3 个轮次内降到远低于 1.0，说明模块的每个部分都在学习。那里各个头的注意力图是任意的，因为任何模式都行。宽度不变时从 4 个头换成 8 个头，得到的图完全不同。
# * 消融实验中，去掉 4 个头中的一个，损失变为原来的 8–14 倍，却仍远低于随机水平。有 8 个头时，每个头的分量更小。可见头之间部分冗余。
# * 在平移任务上（`target[t] = ids[t - k]`，没有目标处为 -100），头学会了恰好往前看 $k$ 个位置，`offset_attention` 从低于 0.2 升到高于 0.95。所有头学到的是同一件事。专门化来自任务，而不是因为有多个头。
# * 这里的训练设定了种子，并且只在一个 CPU 线程上运行，所以打印出的数字在打印精度内与机器无关。不同的 CPU 之间可能有差异，但远小于这个精度。

# %% [markdown] en_hash="b41459b40b9e"
# ### 检查（供 CI 使用，已折叠）
#
# 这个单元格验证本课所依赖的事实。这样一来，包里的代码即使有改动，也不会悄无声息地破坏课文的讲述。好奇的话可以展开看看，跳过也没关系。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# 课中写出的 TinyLM 就是包里的 TinyAttentionLM（层相同、顺序相同、种子相同），
# mh.train_repeat_task 运行的正是第 2 节的循环（损失逐步相同）。
assert torch.equal(package_model(ids), tiny(ids))
assert [name for name, _ in package_model.named_children()] == [
    name for name, _ in tiny.named_children()
]
assert result.losses == losses
assert runs[4] is result and sum(p.numel() for p in runs[8].model.parameters()) == sum(
    p.numel() for p in result.model.parameters()
)
# 小结里的数字：offset_attention 从低于 0.2（未训练）升到高于 0.95（训练后）。
assert before.max() < 0.2 and after.min() > 0.95
print("TinyLM == mh.TinyAttentionLM; train_repeat == mh.train_repeat_task")

# %% [markdown] en_hash="115bdc04198c"
# ## 练习
#
# 参考答案见 `solutions/08_training_tiny_model_solutions.ipynb`。
#
# **练习 1。** 第 2 节的重复任务中，第 2 轮的平均损失是 0.63 奈特（nat）。这时模型给正确词元的概率，是均匀猜测（64 个词元的可能性都一样）的多少倍？（假设每个位置上正确词元的概率都一样，由平均损失反推出这个概率。给出一个数。）

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_probability_gain(answer)

# %% [markdown] en_hash="6c2eb85c68a1"
# **练习 2。** 为 `ids_ex` 构造 $k = 3$ 的平移任务目标。它是一个与 `ids_ex` 形状相同的张量，位置 $t$ 上是 `ids_ex[:, t - 3]`，$t < 3$ 处为 -100。

# %%
ids_ex = torch.randint(0, VOCAB, (2, 8), generator=torch.Generator().manual_seed(3))  # (b, T)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_shift_targets(answer, ids_ex, 3)

# %% [markdown] en_hash="ca1f0ac512d1"
# **练习 3。** `mh.offset_attention` 测量的是模型，这里只有权重。对 `weights_ex`（训练好的平移模型在一个序列上的权重）中的每个头，计算落在往前第 2 个词元上的平均权重，也就是 `weights_ex[h, t, t - 2]` 在 $t \ge 2$ 上的平均值。结果的形状为 `(num_heads,)`。提示：可以用 `torch.diagonal`（本课第一次用到）。它的参数 `offset` 选主对角线之上（> 0）或之下（< 0）的对角线，`dim1`、`dim2` 指定矩阵所在的两个维度。对 $t$ 写循环也可以。

# %%
weights_ex = shift_weights[0]  # (num_heads, T, T) = (4, 12, 12)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_offset_attention(answer, weights_ex, 2)
