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
# # 04 · Dropout — solutions (随机失活 · 参考答案)
#
# Worked answers to the exercises of `04_dropout.ipynb`. Try them yourself first. Each cell
# computes the answer and asserts that the checker passes.


# %%
import torch
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()
journey = mh.load_journey()

# %% [markdown]
# **The prediction of section 1.** The survivors equal 2: each entry survives with probability
# 1 - 0.5, and dividing survivors by 1 - p keeps the mean of the matrix at 1.

# %%
prediction = 2.0
result = mhsa_helpers.exercises.check_survivor_prediction(prediction)
assert result, result
result

# %% [markdown]
# **Section 7: build `CausalAttention` yourself.** The book's class: three projections, the
# mask as a buffer sliced to (T, T), scores scaled by $\sqrt{d_k}$ with the future set to
# `-inf`, dropout on the weights after the softmax. The checker runs its contract tests on it.


# %%
class MyCausalAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, qkv_bias=False):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.dropout = nn.Dropout(dropout)
        self.register_buffer(
            "mask", torch.triu(torch.ones(context_length, context_length), diagonal=1)
        )  # (context_length, context_length), 1 = future

    def forward(self, x):
        num_tokens = x.shape[1]  # x: (b, T, d_in)
        queries = self.W_query(x)  # (b, T, d_out)
        keys = self.W_key(x)  # (b, T, d_out)
        values = self.W_value(x)  # (b, T, d_out)
        scores = queries @ keys.transpose(1, 2)  # (b, T, T)
        future = self.mask.bool()[:num_tokens, :num_tokens]  # (T, T)
        scores = scores.masked_fill(future, -torch.inf)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)  # (b, T, T)
        weights = self.dropout(weights)  # training only
        return weights @ values  # (b, T, d_out)


result = mhsa_helpers.exercises.check_causal_attention_class(MyCausalAttention)
assert result, result
result

# %% [markdown]
# The same function as the package's class: same seed, the layers created in the same order,
# so the same weights, and outputs equal bit for bit with dropout off and on.

# %%
torch.manual_seed(123)
ours = MyCausalAttention(3, 2, 6, dropout=0.5)
torch.manual_seed(123)
theirs = mh.CausalAttention(3, 2, 6, dropout=0.5)
print(mh.assert_same_module(ours, theirs, journey.batch))  # eval mode and seeded train mode

# %% [markdown]
# **Exercise 1.** A fraction 1 - p = 0.8 survives, so survivors are divided by 0.8: the factor is
# 1 / (1 - 0.2) = 1.25. We confirm it with `nn.Dropout(0.2)` on a matrix of ones.

# %%
p = 0.2
answer = 1 / (1 - p)
print(answer)

torch.manual_seed(123)
survivors = nn.Dropout(p)(torch.ones(6, 6))  # (6, 6)
assert torch.allclose(survivors[survivors != 0], torch.tensor(answer))

result = mhsa_helpers.exercises.check_dropout_scale(answer)
assert result, result
result

# %% [markdown]
# **Exercise 2.** The 15 entries above the diagonal are 0 before dropout and stay 0. Of the 21
# others, dropout zeroes half on average: 10.5. Expected zeros: 15 + 10.5 = 25.5 of 36.

# %%
answer = (15 + 21 * 0.5) / 36
print(f"{answer:.4f}")

# A simulation agrees: the average fraction of zeros over 2000 draws.
weights = journey.reference["seed789_masked_renormalized"]  # (6, 6)
dropout = nn.Dropout(0.5)
torch.manual_seed(123)
simulated = torch.stack([(dropout(weights) == 0).float().mean() for _ in range(2000)]).mean()
print(mh.say("simulated:", "模拟值："), f"{simulated:.3f}")
assert abs(simulated.item() - answer) < 0.01

result = mhsa_helpers.exercises.check_zero_fraction(answer)
assert result, result
result

# %% [markdown]
# **Exercise 3.** First the context vectors before dropout, `attn_weights @ values` (6, 2), with
# the values of the same seed-789 `sa_v2`. Each survivor in `ctx_dropped` is its entry times
# 1 / (1 - p): here 1.4286, so 1 - p = 0.7 and p = 0.3. Only 3 of the 12 entries (25%) are zero
# this time; p is a probability per entry, not a count, so the zeros only estimate it.

# %%
inputs = journey.inputs  # (T, d_in)
torch.manual_seed(789)
sa_v2 = mh.SelfAttentionV2(d_in=3, d_out=2)
with torch.no_grad():
    scores = sa_v2.W_query(inputs) @ sa_v2.W_key(inputs).T  # (T, T)
    values = sa_v2.W_value(inputs)  # (T, d_out)
future = torch.triu(torch.ones(6, 6), diagonal=1).bool()  # (T, T)
attn_weights = torch.softmax(scores.masked_fill(future, -torch.inf) / 2**0.5, dim=-1)  # (T, T)
context = attn_weights @ values  # (T, d_out): before dropout

ctx_dropped = mhsa_helpers.exercises.lesson04.exercise_dropped_context()  # (T, d_out)
kept = ctx_dropped != 0  # (T, d_out) bool
factors = ctx_dropped[kept] / context[kept]  # every survivor: 1 / (1 - p)
print(factors)
print(mh.say("zeros:", "零的个数："), int((~kept).sum()), "/", kept.numel())
answer = 1 - 1 / factors[0].item()  # p
print(f"p = {answer:.4f}")

result = mhsa_helpers.exercises.check_dropout_rate(answer)
assert result, result
result
