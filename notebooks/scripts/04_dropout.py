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
# # 04 · Dropout on attention weights (随机失活)
#
# A model with many parameters can **overfit** (过拟合): memorize its training text instead of
# learning rules that carry over to new text. **Dropout** (随机失活 / dropout) fights this: during
# training it zeroes a random part of the values that flow through the network, so the model
# cannot lean on any single one of them. In GPT-style models dropout can act on the **attention
# weights** (注意力权重). At the end of this lesson you build the book's `CausalAttention`
# class yourself: it packs the causal mask of lesson 03 and dropout into one module, which takes a
# whole **batch** (批次).
#
# **Learning goals**
# 1. Apply `nn.Dropout` to the book's 6x6 example and explain what happens to the values that
#    survive, and why.
# 2. Switch dropout off with `.eval()` and explain why the average stays the same.
# 3. Know where dropout sits in attention, which rates real models use, and what dropout cannot
#    do (rescue a tiny data set).
# 4. Build `CausalAttention` yourself (a checker runs contract tests on your class), then read
#    the book's, which keeps the mask as a **buffer** (缓冲区, `register_buffer`); run it on a
#    batch (2, 6, 3) and see why a buffer and not a plain attribute.
#
# **Prerequisites:** lesson 03 (`03_causal_attention`): the causal mask and the seed-789 causal
# weights.
# **Time:** about 100 minutes (reading, running 26 code cells, 1 prediction, 3 exercises, 1
# build-it; the rule is in lesson 00).
#
# **Shape contract:** `CausalAttention`: `(b, T, d_in)` → `(b, T, d_out)`; dropout acts on the
# `(b, T, T)` weights, in training mode only.

# %%
import matplotlib.pyplot as plt
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()
journey = mh.load_journey()
words = journey.words

# %% [markdown]
# ## 1. Dropout on a matrix of ones
#
# The book's demonstration: dropout with rate p = 0.5 (half of the entries are dropped on
# average) applied to a 6x6 matrix of ones, right after `torch.manual_seed(123)`.
#
# **Predict, then run.** About half of the 36 ones become 0. What value do you expect the
# entries that *survive* to have? Write your guess in place of `None` and run the cell (the
# checker says whether you were right, without the answer); then run the next cell.

# %%
prediction = None  # YOUR PREDICTION HERE: the value of a surviving entry
mhsa_helpers.exercises.check_survivor_prediction(prediction)

# %%
torch.manual_seed(123)
dropout = nn.Dropout(0.5)  # p = 0.5: each entry is zeroed with probability 0.5
example = torch.ones(6, 6)  # (6, 6)
dropped = dropout(example)  # (6, 6)
print(dropped)

# %% [markdown]
# These match the book's printed values:

# %%
torch.testing.assert_close(dropped, journey.reference["dropout_seed123_ones"], atol=1e-4, rtol=0)
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))
print(mh.say("zeros:", "零的个数："), int((dropped == 0).sum()), mh.say("of", "/"), dropped.numel())
assert int((dropped == 0).sum()) == 15
survivor = dropped[dropped != 0].unique().item()
print(
    mh.say("survivors are all", "保留下来的元素都是"),
    survivor,
    "= 1 / (1 - 0.5)",
    mh.say("| your prediction:", "| 你的预测："),
    prediction,
)

# %% [markdown]
# Fifteen of 36 entries were dropped this time: "p = 0.5" is a probability per entry, not an
# exact count. Every survivor was multiplied by **1 / (1 - p) = 2**.
#
# ## 2. Why scale by 1 / (1 - p)?
#
# After dropout only a fraction 1 - p of the values is left, so the total signal would shrink by
# that factor. Dividing the survivors by 1 - p compensates: *on average* each entry stays what it
# was. With a random keep mask $m_{ij}$ that is 1 with probability $1 - p$ and 0 otherwise,
# dropout and its **expected value** (期望值, written $\mathbb{E}$: the average over many random
# draws) are
#
# $$\operatorname{dropout}(a)_{ij} = \frac{m_{ij}}{1-p}\,a_{ij}, \qquad
# \mathbb{E}\big[\operatorname{dropout}(a)_{ij}\big] = (1-p)\cdot\frac{a_{ij}}{1-p} + p\cdot 0
# = a_{ij}.$$
#
# Averaged over many random draws, the dropped matrix of ones is (close to) a matrix of ones.

# %%
torch.manual_seed(123)
draws = torch.stack([dropout(example) for _ in range(2000)])  # (2000, 6, 6)
mean = draws.mean()
print(mh.say("average entry over 2000 draws:", "2000 次抽样中元素的平均值："), f"{mean:.3f}")
print(mh.say("fraction of zeros:", "零所占的比例："), f"{(draws == 0).float().mean():.3f}")
assert abs(mean.item() - 1.0) < 0.02
assert abs((draws == 0).float().mean().item() - 0.5) < 0.01

# %% [markdown]
# The same measurement for other rates. For each p we drop 2000 copies of the 6x6 ones and
# measure three things: the fraction of entries kept, the value of a survivor, and the mean of
# all entries. The grey curves are $1 - p$ and $1/(1-p)$.

# %%
samples = {}
for p in [0.1, 0.3, 0.5, 0.7, 0.9]:
    torch.manual_seed(123)
    samples[p] = nn.Dropout(p)(torch.ones(2000, 6, 6))  # (2000, 6, 6)
    kept = samples[p] != 0
    assert torch.allclose(samples[p][kept], torch.tensor(1 / (1 - p)))  # every survivor
    assert abs(samples[p].mean().item() - 1.0) < 0.02  # the mean stays 1
fig = mh.figures.plot_dropout_scaling(samples)
plt.show()

# %% [markdown]
# The higher p, the fewer survivors and the bigger each one — the product, the mean entry, stays
# at 1 for every rate.
# %% [markdown]
# ## 3. Training mode and evaluation mode
#
# Dropout is only for training. Every `nn.Module` has a `training` flag: `.train()` sets it,
# `.eval()` clears it, and `nn.Dropout` in eval mode returns its input unchanged. Because of the
# 1/(1-p) scaling, nothing else has to change between training and use: the average size of
# every value is the same in both modes.

# %%
dropout.eval()
print(mh.say("training:", "training 标志："), dropout.training)
assert torch.equal(dropout(example), example)  # identical: nothing dropped, nothing scaled
dropout.train()
print(mh.say("training:", "training 标志："), dropout.training)
assert not torch.equal(dropout(example), example)

# %% [markdown]
# Forgetting `model.eval()` before using a model is a classic bug: its outputs would stay
# random. (The same flag switches off dropout inside every submodule of a bigger model.)
#
# ## 4. Where does dropout go in attention?
#
# Two places are common in GPT-style models:
#
# * **after the softmax, on the attention weights** — the book's choice, "the more common
#   variant in practice", and the one in every class of this course;
# * after the weights are applied to the values, on the context vectors.
#
# The book uses p = 0.5 only so that the effect is easy to see. When GPT models are trained, the
# rate is much lower: **0.1 or 0.2** (GPT-2 era); many recent large models (Llama, for example)
# train with no dropout at all.
#
# A note on reproducibility: which entries a seeded dropout drops is decided by torch's random
# number generator. With torch 2.13 on the CPU the course reproduces the book's pattern; other
# torch versions or devices (a GPU, Apple's MPS) may draw a different pattern from the same
# seed. The *rule* — zeros, survivors times 1/(1-p) — is the same everywhere.
#
# First we recompute the seed-789 causal weights of lesson 03 (one-step mask with `-inf`).

# %%
inputs = journey.inputs  # (T, d_in) = (6, 3)
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in=3, d_out=2)
with torch.no_grad():
    queries = sa_v2.W_query(inputs)  # (T, d_out)
    keys = sa_v2.W_key(inputs)  # (T, d_out)
    values = sa_v2.W_value(inputs)  # (T, d_out), for exercise 3
attn_scores = queries @ keys.T  # (T, T)
future = torch.triu(torch.ones(6, 6), diagonal=1).bool()  # (T, T), True above the diagonal
attn_scores = attn_scores.masked_fill(future, -torch.inf)
attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)  # (T, T)
torch.testing.assert_close(
    attn_weights, journey.reference["seed789_masked_renormalized"], atol=1e-4, rtol=0
)
print(attn_weights)

# %% [markdown]
# Now the book's step: dropout with p = 0.5 on these weights, again after seed 123 (the book
# prints this same matrix). Compare with section 1: the *same seed* drops the *same positions*,
# and every survivor is doubled.

# %%
torch.manual_seed(123)
attn_dropped = dropout(attn_weights)  # (T, T)
print(attn_dropped)

keep = journey.reference["dropout_seed123_ones"] != 0  # (T, T) bool, the pattern of section 1
torch.testing.assert_close(attn_dropped, torch.where(keep, 2 * attn_weights, 0.0))
print(mh.say("row sums:", "每行之和："), attn_dropped.sum(dim=-1))  # (T,) no longer 1
assert (attn_dropped[1] == 0).all()  # the row of "journey" lost both of its weights

# %% [markdown]
# Rows no longer sum to 1 — the row of "journey" lost everything this time. That is fine in
# training: the next draw is different, and on average every row still sums to 1. The picture
# shows the three pieces of the computation: the weights, the keep mask the seed drew (the same
# as for the ones), and their product scaled by $1/(1-p) = 2$.

# %%
fig = mh.figures.plot_dropout_mask(attn_weights, keep, 0.5, words)
plt.show()
torch.testing.assert_close(attn_weights * keep / (1 - 0.5), attn_dropped)  # what the figure shows

# %% [markdown]
# ## 5. What dropout cannot do: rescue a tiny data set
#
# Dropout is often said to make memorising harder. Does it stop a network from memorising a
# tiny data set? A small experiment tests it: 8 examples with **random** labels (there is no
# rule to learn, only answers to memorise) and a small network of 2,692 parameters, trained
# 100 steps of plain **gradient descent** (梯度下降) with and without dropout. (Training — the loss, its
# gradients, the update — is the subject of lesson 08; here only the result matters.) We measure
# the training accuracy in eval mode.

# %%
torch.manual_seed(0)
x_tiny = torch.randn(8, 16)  # (n, features): 8 examples
y_tiny = torch.randint(0, 4, (8,))  # (n,) random labels out of 4: nothing to generalise


def train_tiny(p, steps=100, lr=0.5):
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(16, 128), nn.ReLU(), nn.Dropout(p), nn.Linear(128, 4))
    assert sum(param.numel() for param in model.parameters()) == 2692
    for _ in range(steps):  # model is in training mode: dropout is on
        loss = nn.functional.cross_entropy(model(x_tiny), y_tiny)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for param in model.parameters():
                param -= lr * param.grad  # one step of gradient descent
    model.eval()
    with torch.no_grad():
        return (model(x_tiny).argmax(-1) == y_tiny).float().mean().item()


accuracy = {p: train_tiny(p) for p in [0.0, 0.5]}
for p, acc in accuracy.items():
    print(
        mh.say(
            f"dropout p={p}: training accuracy {acc:.0%} on 8 random labels",
            f"dropout p={p}：在 8 个随机标签上的训练准确率为 {acc:.0%}",
        )
    )
assert accuracy[0.5] == 1.0  # memorised, dropout or not

# %% [markdown]
# With p = 0.5 the network learns all 8 random labels by heart, exactly as it does without
# dropout (guessing would get 25 % right): here dropout did not make memorising measurably
# harder. The labels are random, so there is nothing general to learn: 100 % on them is pure
# memorisation, and dropout did not prevent it. Dropout cannot add the information that 8
# examples lack; only more data can.

# %% [markdown]
# ## 6. Explore: slide the dropout rate
#
# Move the **dropout** slider: the higher p, the fewer weights survive and the more they are
# scaled up (x1.11 at p = 0.1, x10 at p = 0.9). Move the **seed** slider for another random
# draw. (Slide it in JupyterLab; CI runs the cell but does not compare its output.)

# %%
# NBVAL_IGNORE_OUTPUT
explorer = mh.dropout_explorer(attn_weights, words)
explorer

# %% [markdown]
# Moving a slider re-runs the function behind the widget; its result is the dropped matrix.
# Here is what p = 0.1 (a realistic training rate) does:

# %%
# NBVAL_IGNORE_OUTPUT
explorer.kwargs_widgets[0].value = 0.1  # the "dropout" slider
dropped_01 = explorer.result  # (T, T)
kept = dropped_01 != 0
torch.testing.assert_close(dropped_01[kept], attn_weights[kept] / 0.9)  # survivors x1.11
assert not kept[future].any()  # the masked future stays masked

# %%
survived, total = int(kept.sum()), int((attn_weights != 0).sum())
print(
    mh.say(
        f"p=0.1: {survived} of {total} weights survive, x1.11",
        f"p=0.1：{total} 个权重中保留了 {survived} 个，乘以 1.11",
    )
)

# %% [markdown]
# ## 7. Build `CausalAttention` yourself
#
# Now we put together everything since lesson 02 in one module, as the book does:
# trainable projections, the causal mask, scaling by $\sqrt{d_k}$, dropout on the weights. Two
# things are new:
#
# * it takes a **batch**: `x` has shape (b, T, d_in), so the key transpose swaps dimensions 1
#   and 2, not 0 and 1;
# * the mask is created once for the longest input, `context_length` (上下文长度), registered
#   with `register_buffer`, and sliced to (T, T) in `forward`, so shorter inputs work too.
#
# Before you read the book's class, write it: fill in `MyCausalAttention` below. The constructor
# takes the book's arguments, `(d_in, d_out, context_length, dropout, qkv_bias=False)`; use the
# book's names `W_query`, `W_key`, `W_value` (each an `nn.Linear(d_in, d_out, bias=qkv_bias)`)
# and `dropout`, and register the causal mask as a buffer named `mask`. `forward(x)` takes x
# (b, T, d_in) and returns the context vectors (b, T, d_out), with dropout on the weights.
#
# The checker copies the weights of `mh.CausalAttention` into your module (by those names) and
# runs contract tests: equal outputs at several sizes, causality (changing a later token changes
# nothing earlier), dropout in training mode only, and a gradient for every weight. If something
# is off, its hint names the likely mistake.


# %%
# The two new tools on toy tensors. A batch: transpose(1, 2) swaps the last two dimensions.
toy_x = torch.zeros(2, 3, 4)  # (b, T, d)
print(toy_x.transpose(1, 2).shape)  # (b, d, T): the batch dimension stays first
# A buffer: a tensor the module keeps (and moves with .to(device)) that is no parameter.
toy = nn.Module()
toy.register_buffer("mask", torch.triu(torch.ones(4, 4), diagonal=1).bool())  # (4, 4)
print(toy.mask[:3, :3])  # sliced to (T, T) = (3, 3), as forward does
print(dict(toy.named_buffers()).keys(), list(toy.parameters()))


# %%
class MyCausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        # YOUR CODE HERE: W_query, W_key, W_value, dropout, the mask buffer

    def forward(self, x):  # x: (b, T, d_in)
        # YOUR CODE HERE: queries, keys, values, masked scores, softmax, dropout, weighted sum
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_causal_attention_class(MyCausalAttention)

# %% [markdown]
# ## 8. The book's class
#
# The book's `CausalAttention` is not printed here, so that it does not give the build-it away:
# it is the solution of section 7 in `solutions/04_dropout_solutions.ipynb`, which also checks,
# bit for bit, that it is the same function as the package's `mh.CausalAttention`. Once your
# class passes, compare the two line by line. The rest of the lesson runs the package's class.

# %%
CausalAttention = mh.CausalAttention  # the book's class, as the package ships it

# %% [markdown]
# The book's batch is the sentence twice, shape (2, 6, 3). With seed 123, d_out = 2 and dropout
# 0.0 we get the book's context vectors:

# %%
batch = journey.batch  # (b, T, d_in) = (2, 6, 3)
torch.manual_seed(123)
ca = CausalAttention(d_in=3, d_out=2, context_length=batch.shape[1], dropout=0.0)
context_vecs = ca(batch)  # (b, T, d_out)
print(context_vecs)
print("context_vecs.shape:", context_vecs.shape)

# %% [markdown]
# These match the book's printed values (both sequences of the batch are the same sentence, so
# both halves equal the book's matrix):

# %%
for sequence in context_vecs:  # (T, d_out) each
    torch.testing.assert_close(
        sequence, journey.reference["causal_attention_seed123"], atol=1e-4, rtol=0
    )
print(mh.say("matches the book's printed values", "与书中印出的数值一致"))

# %% [markdown]
# ## 9. Why `register_buffer`?
#
# The mask is not learned, so it must not be a **parameter** (no gradient, not touched by the
# optimizer). But it is part of the module's state: it must be saved with the model and must move
# with it to the GPU. A buffer is exactly that. Look at what the module holds:

# %%
print("state_dict:      ", list(ca.state_dict()))
print("named_parameters:", [name for name, _ in ca.named_parameters()])
print(mh.pad(mh.say("buffers:", "缓冲区："), 17), [name for name, _ in ca.named_buffers()])
assert "mask" in ca.state_dict() and "mask" not in dict(ca.named_parameters())

# %% [markdown]
# `mask` is saved in the `state_dict` but is not a parameter. And it follows the module: `.to()`
# converts buffers along with parameters. Here we convert to float64 (with a GPU,
# `ca.to("cuda")` would move the mask to the GPU the same way). A mask kept as a plain attribute
# would be left behind, and `forward` would mix a float32 CPU tensor into float64 (or GPU)
# arithmetic.


# %%
class PlainAttributeMask(nn.Module):
    def __init__(self, context_length):
        super().__init__()
        self.W_query = nn.Linear(3, 2)
        self.mask = torch.triu(torch.ones(context_length, context_length), diagonal=1)


plain = PlainAttributeMask(6).to(torch.float64)
ca64 = CausalAttention(3, 2, 6, 0.0).to(torch.float64)
mh.show_table(
    [
        (mh.say("plain attribute", "普通属性"), plain.mask.dtype, "mask" in plain.state_dict()),
        (mh.say("buffer", "缓冲区"), ca64.mask.dtype, "mask" in ca64.state_dict()),
    ],
    header=("", "mask.dtype", mh.say("in state_dict", "在 state_dict 中")),
)
assert ca64.mask.dtype == torch.float64 and plain.mask.dtype == torch.float32

# %% [markdown]
# Because the mask is built for `context_length` tokens and sliced in `forward`, any shorter
# input works. The first 4 tokens give the first 4 rows of the output above: causal attention never looks
# ahead, so the missing tokens change nothing.

# %%
short = ca(batch[:, :4])  # (b, 4, d_out)
print(short.shape)
torch.testing.assert_close(short, context_vecs[:, :4])

# %% [markdown]
# With dropout switched on, the output is random in training mode and deterministic in eval mode:

# %%
torch.manual_seed(123)
ca_drop = CausalAttention(3, 2, 6, dropout=0.5)
out_train_1, out_train_2 = ca_drop(batch), ca_drop(batch)  # (b, T, d_out) each
assert not torch.equal(out_train_1, out_train_2)  # two different dropout draws
ca_drop.eval()
assert torch.equal(ca_drop(batch), ca_drop(batch))  # eval: no dropout
torch.testing.assert_close(ca_drop(batch), context_vecs)  # same weights as ca (seed 123)
print(
    mh.say(
        "train: random, eval: deterministic and equal to the dropout-free module",
        "train 模式随机，eval 模式确定，并且等于不带 dropout 的模块",
    )
)

# %% [markdown]
# ## Summary
#
# * **Dropout** (随机失活) zeroes each value with probability p during training and multiplies
#   the survivors by $1/(1-p)$, so the expected value of every entry is unchanged. The book's 6x6
#   ones with seed 123 and p = 0.5: 15 zeros, survivors equal 2.
# * Dropout does not stop a network from memorising a tiny data set: with 2,692 parameters for
#   8 examples, it learned 8 random labels by heart with p = 0.5 as well as without dropout.
# * `.eval()` switches dropout off (output identical to the input); `.train()` switches it on.
# * In attention, dropout acts on the weights after the softmax (the book's choice); rows then
#   no longer sum to 1, but do on average. GPT training uses p = 0.1–0.2.
# * `CausalAttention` takes a batch (b, T, d_in) → (b, T, d_out). Its mask is a **buffer**
#   (缓冲区): in the `state_dict`, moved by `.to()`, but not a parameter.
# * Next: lesson 05 runs several `CausalAttention` heads side by side: **multi-head attention**
#   (多头注意力).
#
# ## Exercises
#
# Solutions: `solutions/04_dropout_solutions.ipynb`.
#
# **Exercise 1 (warm-up).** GPT training often uses p = 0.2. By which factor does `nn.Dropout(0.2)`
# multiply the values that survive? (A number.)

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_dropout_scale(answer)

# %% [markdown]
# **Exercise 2.** Take a 6x6 matrix of causal attention weights (15 entries above the diagonal
# are 0, the 21 others are positive) and apply dropout with p = 0.5. What fraction of the 36
# entries do you *expect* to be zero afterwards? (A number between 0 and 1.)

# %%
answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_zero_fraction(answer)

# %% [markdown]
# **Exercise 3.** Dropout in its other place (section 4): on the context vectors instead of the
# weights. A dropout layer placed after the weighted sum acted, in training mode, on the context
# vectors `attn_weights @ values` (6, 2) of section 4 (the causal weights and the `values` of the
# same `sa_v2`), and returned `ctx_dropped` below. With which rate p was the layer built?
# (A number. Count the zeros if you like, but read p from the survivors.)

# %%
ctx_dropped = mhsa_helpers.exercises.lesson04.exercise_dropped_context()  # (T, d_out)
print(ctx_dropped)

answer = None  # YOUR CODE HERE
mhsa_helpers.exercises.check_dropout_rate(answer)
