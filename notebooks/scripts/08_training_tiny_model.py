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
# # 08 · Training a tiny attention model (训练一个小注意力模型)
#
# So far every attention weight came from untrained projections. This lesson puts
# `MultiHeadAttention` into the smallest possible **language model** (语言模型) and trains it on
# two toy tasks: one that only checks that every part of the block learns, and one where a head
# has something definite to find -- and finds it.
#
# **Learning goals**
# 1. Read `TinyAttentionLM`, the complete model the lesson writes out: **token embedding** (词元嵌入) + **positional embedding** (位置嵌入)
#    + causal multi-head attention + a linear **LM head** (语言模型头) that gives **logits**
#    (未归一化得分: one score per possible next token, before the softmax).
# 2. Predict the loss of an untrained model, then train it on the **repeat task** with
#    cross-entropy and watch the loss fall to well below 1.0 in 3 **epochs** (轮次).
# 3. Run the classic experiment: 4 heads → 8 heads at the same width (head_dim 8 → 4), and test
#    with an **ablation** (消融) how much each head matters.
# 4. Train it on the **shift task** (copy the token $k$ places back) and watch a head
#    **specialise** (专门化) on the offset $k$, measured with `mh.offset_attention`.
# 5. Change the number of heads and see what changes (and what does not).
#
# **Prerequisites:** lesson 07 (`07_inspecting_heads`): per-head weights, heatmaps, entropy;
# PyTorch's autograd (`loss.backward()`), an optimizer step, and cross-entropy as a loss (lesson 00
# lists where to read up on them).
# **Time:** about 80 minutes (reading, running 27 code cells, 1 prediction, 3 exercises; the rule
# is in lesson 00).
#
# **Shape contract:** token ids `(b, T)` (integers below `vocab_size`, `T <= context_length`) →
# logits `(b, T, vocab_size)`, and with `return_weights=True` also weights `(b, num_heads, T, T)`;
# targets `(b, T)`, with -100 where a position has no target.

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh

mh.setup_lesson()

# %% [markdown]
# ## 1. The model
#
# Attention mixes vectors; it needs vectors to start with and a way to turn its output into a
# prediction. The model has four layers, created in this order:
#
# * `tok_emb`: an `nn.Embedding(vocab_size, d_model)`, one learned vector per token id;
# * `pos_emb`: an `nn.Embedding(context_length, d_model)`, one learned vector per position. Lesson
#   07 showed that attention alone cannot tell two copies of a word apart; adding a position
#   vector to each token fixes that;
# * `attn`: the `MultiHeadAttention(d_model, d_model, context_length, dropout, num_heads)` of
#   lesson 06, causal, so position $t$ only sees tokens $0..t$;
# * `lm_head`: an `nn.Linear(d_model, vocab_size)`, one score (**logit**) per possible next token.
#
# There is deliberately no feed-forward block, no residual connection and no layer norm (the next
# stage of a transformer adds them): every prediction must flow through the attention heads.


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

# %% [markdown]
# The package's `mh.TinyAttentionLM` is the same model (same layers, same order), with input
# checks (integer ids, below `vocab_size`, at most `context_length` tokens) and a
# `return_weights=True` switch. Same seed, same numbers:

# %%
torch.manual_seed(0)
package_model = mh.TinyAttentionLM(VOCAB, D_MODEL, CONTEXT, HEADS)
logits, weights = package_model(ids, return_weights=True)  # (2, 12, 64), (2, 4, 12, 12)
print("weights:", tuple(weights.shape))
print(package_model)

# %% [markdown]
# **Predict, then run.** We measure the model with the **cross-entropy loss** (交叉熵损失):
# for each position, $-\log p(\text{right token})$, averaged. Before training the model knows
# nothing, so it gives every one of the 64 tokens roughly the same probability. What loss do you
# expect for the untrained model? Write your guess (a number) into `prediction`; the checker
# says whether your reasoning is right, and the next cell measures it.

# %%
import mhsa_helpers.exercises

prediction = None  # YOUR CODE HERE: your guess of the untrained loss, in nats
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

# %% [markdown]
# The loss of a uniform guess is $-\log\frac{1}{64} = \log 64 \approx 4.16$, and the untrained
# model is close to it: that is where every loss curve below starts, and the **chance level**
# (随机水平) that a trained model must beat.

# %% [markdown]
# ## 2. The repeat task
#
# A language model predicts the **next token**: the target at position $t$ is the input at
# position $t + 1$, so the targets are the inputs **shifted left by one**. On a real sentence
# (the book's sentence, with token ids from a toy vocabulary of its six words):

# %%
sentence = mh.load_journey().words  # the book's six words
vocab = {word: i for i, word in enumerate(sorted(set(sentence)))}
token_ids = torch.tensor([vocab[word] for word in sentence])  # (T + 1,) = (6,)
inputs_s, targets_s = token_ids[:-1], token_ids[1:]  # (T,) each: targets shifted left by one
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
assert torch.equal(targets_s[:-1], inputs_s[1:])  # each target is the next position's input

# %% [markdown]
# The first task, the **repeat task**, does the same with rows of **one random token repeated**
# over the whole context: a row of 13 copies gives 12 inputs and 12 targets. Shifted left by one,
# a row of equal tokens looks exactly like itself, so the model must learn "the next token is the
# same as the ones before". It is easy on purpose: the point is to see that gradients reach
# every layer and the loss really falls.

# %%
from mhsa_helpers.training import make_repeat_batch, make_shift_batch

example_ids, example_targets = make_repeat_batch(
    3, CONTEXT, VOCAB, torch.Generator().manual_seed(0)
)
print(mh.say("inputs: ", "输入："), example_ids, sep="\n")  # (3, 12)
print(
    mh.say("targets:", "目标："), example_targets, sep="\n"
)  # (3, 12): the inputs shifted left by one
assert torch.equal(example_targets[:, :-1], example_ids[:, 1:])

# %% [markdown]
# The training loop is the standard one: a fresh batch, logits, cross-entropy, `backward`, an
# **optimizer** (优化器) step. We use Adam with **learning rate** (学习率) 0.003, batches of 32,
# and call 40 steps an epoch (there is no fixed dataset: every step draws a fresh random batch,
# so an "epoch" here is just a unit of 40 steps). Two generators keep it reproducible: the global seed fixes the
# initial weights, a separate one draws the batches.


# %%
def train_repeat(num_heads, seed=0, epochs=3, steps_per_epoch=40, batch_size=32, lr=3e-3):
    torch.manual_seed(seed)  # initial weights
    model = mh.TinyAttentionLM(VOCAB, D_MODEL, CONTEXT, num_heads)
    data = torch.Generator().manual_seed(seed)  # batches
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
assert abs(losses[0] - math.log(64)) < 0.3  # about log(64) = 4.16
assert epoch_losses[-1] < 1.0  # well below 1.0 after 3 epochs

# %% [markdown]
# `mh.train_repeat_task` runs exactly this loop (with one CPU thread inside and an optional
# `tqdm` progress bar, off here) and returns a `TrainingResult` with `.model`, `.losses` (one per
# step) and `.epoch_losses`. It gives the same losses, step for step:

# %%
result = mh.train_repeat_task(num_heads=HEADS, seed=0, progress=False)
print(result)

# %% [markdown]
# The claim holds for other seeds too, not just a lucky one (the course's tests check several):

# %%
run = mh.train_repeat_task(seed=1, progress=False)
print(
    mh.say(
        f"seed 1: first loss {run.first_loss:.2f}, last epoch {run.final_loss:.2f}",
        f"种子 1：第一步损失 {run.first_loss:.2f}，最后一轮 {run.final_loss:.2f}",
    )
)
assert abs(run.first_loss - math.log(64)) < 0.3 and run.final_loss < 1.0

# %% [markdown]
# The **loss curve** (损失曲线), one point per step, with the uniform-guess level:

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

# %% [markdown]
# ## 3. The heads after training on the repeat task
#
# What did the heads learn? Here are their weights on one repeated row. A question to keep in mind
# while you look: does this task *need* any particular pattern of attention?

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

# %% [markdown]
# ### The experiment: 4 heads → 8 heads at the same width
#
# A classic experiment: change `num_heads` from 4 to 8 while keeping `d_model = 32`, so each head
# gets `head_dim = 32 // 8 = 4` instead of 8 (the parameter count does not change), train the
# same way, and see how the heatmaps change.

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

# %% [markdown]
# Both models solve the task equally well, yet their heads look nothing alike, and the 8 maps are
# not "the 4 maps, twice". Why? In this task every position holds the *same* token, so every
# value vector carries the same information and **any** attention pattern gives the right answer.
# Nothing pushes a head towards one pattern, and what you see is mostly what the random start and
# the position embeddings happened to produce. A heatmap shows where the weight goes, not whether
# it matters.
#
# ### Does each head matter? An ablation
#
# Lesson 07 warned that heads can be **redundant**. To test it, switch one head off and measure
# the loss: zero the head's columns of `out_proj` (its share of the concatenated output), on 256
# fresh sequences, for both models.

# %%
import copy

ids_eval, targets_eval = make_repeat_batch(256, CONTEXT, VOCAB, torch.Generator().manual_seed(1))


def repeat_loss(model):
    with torch.no_grad():
        logits = model(ids_eval)  # (256, 12, 64)
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets_eval.reshape(-1)).item()


def ablation(model):
    # the loss with each head switched off in turn (its out_proj columns set to 0)
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
assert min(ratios[4]) > 7.5 and max(ratios[4]) < 15  # "8 to 14 times"
assert min(ratios[8]) > 2 and max(ratios[8]) < 5  # "2.7 to 4.6 times"
assert max(ablated[4]) < math.log(64) / 10  # below a tenth of the chance level

# %% [markdown]
# Read the numbers with care. Removing any one of the 4 heads makes the loss **8 to 14 times
# larger** — far from free — and yet it stays below a tenth of the chance level $\log 64 = 4.16$:
# even the worst loss, 0.288, means the right token still gets about $e^{-0.288} \approx 0.75$ of
# the probability on average (a geometric mean: $e^{-\text{mean loss}}$ is the product of the
# positions' probabilities, taken to the power 1/number of positions), because the other three heads carry much of the same information. With 8 heads each one matters
# less (the loss grows only 2.7 to 4.6 times). So the heads are partly **redundant**, and the head the model needs most is not
# the sharpest one. Use heatmaps and entropies to form questions, and experiments like this
# ablation to answer them.

# %% [markdown]
# ## 4. A task with something to find: copy the token $k$ places back
#
# In the **shift task** the inputs are random tokens and the target at position $t$ is the token
# at $t - k$: `target[t] = ids[t - k]`. The first $k$ positions have nothing $k$ places back; their
# target is -100, which `F.cross_entropy` ignores (`ignore_index=-100`). The only way to solve it
# is to look exactly $k$ positions back, so we know what a useful head must do.

# %%
K = 2
shift_ids, shift_targets = make_shift_batch(2, CONTEXT, VOCAB, K, torch.Generator().manual_seed(0))
print(mh.say("inputs: ", "输入："), shift_ids, sep="\n")  # (2, 12)
print(
    mh.say("targets:", "目标："), shift_targets, sep="\n"
)  # (2, 12): the inputs moved 2 places right

# %% [markdown]
# `mh.offset_attention(model, k)` measures what we expect: for each head, the mean weight that a
# query at $t$ puts on position $t - k$ (over 256 random sequences and all $t \ge k$). Before
# training it is small, about the average of $1/(t+1)$. Then `mh.train_shift_task` trains the
# model for 3 epochs of 50 steps (the repeat task's were 40), as the loss plot's axis shows:

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
assert after.max() > 0.8  # at least one head looks exactly K places back

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

# %% [markdown]
# Every head now draws one bright diagonal, $k = 2$ cells left of the main diagonal: query $t$
# looks at key $t - 2$, and its value carries the token to copy. Two things to notice:
#
# * The heads did **specialise** on the offset: the task needs it, and the weights show it
#   (`offset_attention` close to 1). This is the case where a heatmap *does* tell the story,
#   because we built the task so that there is exactly one story to tell.
# * They all specialised on the *same* offset: with one thing to find, the heads are **redundant**
#   (section 3). Nothing in multi-head attention makes heads divide the work; only the task and
#   the training can.

# %% [markdown]
# ## 5. Your turn: the number of heads
#
# Change `HEADS` in the first code cell of section 1 (try 1, 2 or 8; it must divide
# `D_MODEL = 32`) and re-run the notebook, or use the widget below: set `heads`, `k` and the seed
# and press **Train** (about a second per run). With 1 head, the single head must do the job
# alone; with 8 heads (`head_dim = 4`) there are more copies of the same solution.

# %%
# NBVAL_IGNORE_OUTPUT
trainer = mh.training_explorer(heads=HEADS, k=K)
trainer

# %% [markdown]
# The same, from code: one head, offset 3.

# %%
trainer.controls["heads"].value = 1
trainer.controls["k"].value = 3
trainer.update()  # what pressing "Train" does
one_head = trainer.result
print(one_head["message"])
assert one_head["offset"].shape == (1,) and one_head["offset"].max() > 0.8

# %% [markdown]
# ## Summary
#
# * `TinyAttentionLM` = token embedding + positional embedding → causal `MultiHeadAttention` →
#   linear LM head; ids `(b, T)` → logits `(b, T, vocab_size)`.
# * An untrained model's loss is about $\log(\text{vocab\_size})$, the loss of a uniform guess:
#   4.16 for 64 tokens.
# * On the repeat task the loss falls to well below 1.0 in 3 epochs: every part of the block
#   learns. The heads' maps are arbitrary there, since any pattern works, and 4 → 8 heads at the
#   same width gives completely different maps.
# * Ablation: without one of 4 heads the loss grows 8–14×, yet stays far below the chance level;
#   with 8 heads each matters less. Heads are partly redundant.
# * On the shift task (`target[t] = ids[t - k]`, -100 where there is none) the heads learn to look
#   exactly $k$ places back: `offset_attention` goes from below 0.2 to above 0.95. All heads learn
#   the same thing: specialisation comes from the task, not from having several heads.
# * Training here is seeded and runs on one CPU thread, so the printed numbers are the same on
#   every machine to the printed precision (different CPUs may differ far below it).

# %% [markdown]
# ### Check (for CI; collapsed)
#
# This cell proves what the lesson relies on, so that a change to the package cannot silently
# break the story. Open it if you are curious; you can skip it.

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# The inline TinyLM is the package's TinyAttentionLM (same layers, same order, same seed), and
# mh.train_repeat_task runs exactly the loop of section 2 (the same losses, step for step).
assert torch.equal(package_model(ids), tiny(ids))
assert [name for name, _ in package_model.named_children()] == [
    name for name, _ in tiny.named_children()
]
assert result.losses == losses
assert runs[4] is result and sum(p.numel() for p in runs[8].model.parameters()) == sum(
    p.numel() for p in result.model.parameters()
)
# The summary's numbers: offset_attention from below 0.2 (untrained) to above 0.95 (trained).
assert before.max() < 0.2 and after.min() > 0.95
print("TinyLM == mh.TinyAttentionLM; train_repeat == mh.train_repeat_task")

# %% [markdown]
# ## Exercises
#
# Solutions: `solutions/08_training_tiny_model_solutions.ipynb`.
#
# **Exercise 1.** In section 2 the repeat task's mean loss was 0.63 nats in epoch 2. How many
# times larger is the probability the model then gives the right token than the uniform guess's
# (every one of the 64 tokens equally likely)? (Treat the loss as if every position had the same
# probability. A number.)

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_probability_gain(answer)

# %% [markdown]
# **Exercise 2.** Build the shift-task targets for `ids_ex` with $k = 3$: a tensor like `ids_ex`
# whose position $t$ holds `ids_ex[:, t - 3]`, and -100 where $t < 3$.

# %%
ids_ex = torch.randint(0, VOCAB, (2, 8), generator=torch.Generator().manual_seed(3))  # (b, T)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_shift_targets(answer, ids_ex, 3)

# %% [markdown]
# **Exercise 3.** `mh.offset_attention` measures a model; here you have only weights. Compute for
# each head of `weights_ex` (the trained shift model's weights on one sequence) the mean weight
# on the token 2 places back: the mean of
# `weights_ex[h, t, t - 2]` over $t \ge 2$. Shape `(num_heads,)`. Hint: `torch.diagonal` (new
# here): its `offset` picks a diagonal above (> 0) or below (< 0) the main one, and `dim1`, `dim2`
# say which two dimensions hold the matrix; a loop over $t$ works too.

# %%
weights_ex = shift_weights[0]  # (num_heads, T, T) = (4, 12, 12)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_offset_attention(answer, weights_ex, 2)
