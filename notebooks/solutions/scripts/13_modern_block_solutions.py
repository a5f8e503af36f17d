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
# # 13 · The modern block — solutions (现代解码器块 · 参考答案)
#
# Worked answers to the exercises of `13_modern_block.ipynb`. Try them yourself first.
# Each cell computes the answer and asserts that the checker passes.

# %%
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson()

# %% [markdown]
# **Build it: `apply_rope`.** The tokens sit at positions `offset .. offset + T - 1`: those
# positions give the tables, `x * cos + rotate_half(x) * sin` turns every pair at once (the
# formula's two rows, with the halves as the pairs), and v is returned as it came.


# %%
def apply_rope(q, k, v, offset=0):  # q: (b, h, T, head_dim); k, v: (b, g, T, head_dim)
    positions = torch.arange(offset, offset + q.shape[-2])  # (T,): the true positions
    cos, sin = mh.rope_cos_sin(positions, q.shape[-1])  # (T, head_dim), float32
    cos, sin = cos.to(q.dtype), sin.to(q.dtype)
    q_rot = q * cos + mh.rotate_half(q) * sin  # (b, h, T, head_dim)
    k_rot = k * cos + mh.rotate_half(k) * sin  # (b, g, T, head_dim)
    return q_rot, k_rot, v  # v is never rotated


result = mhsa_helpers.exercises.check_apply_rope(apply_rope)
assert result, result
result

# %% [markdown]
# **Build it: RMSNorm.** The mean of the squares over the last dimension, eps inside the square
# root, then the learned scale; no mean subtracted, no bias.


# %%
class MyRMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))  # (d,)
        self.eps = eps

    def forward(self, x):  # (..., d) -> (..., d)
        mean_square = x.pow(2).mean(-1, keepdim=True)  # (..., 1)
        return x * torch.rsqrt(mean_square + self.eps) * self.weight


result = mhsa_helpers.exercises.check_rms_norm(MyRMSNorm)
assert result, result
result

# %% [markdown]
# **Build it: SwiGLU.** Three linear maps without biases; SiLU on the gate only, which then
# multiplies the up projection element by element.


# %%
class MySwiGLU(nn.Module):
    def __init__(self, d_model, hidden_dim=None):
        super().__init__()
        if hidden_dim is None:
            hidden_dim = int(2 * 4 * d_model / 3)  # keeps GPT-2's 8 d^2 weights
        self.gate_proj = nn.Linear(d_model, hidden_dim, bias=False)
        self.up_proj = nn.Linear(d_model, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, d_model, bias=False)

    def forward(self, x):  # (..., d_model) -> (..., d_model)
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


result = mhsa_helpers.exercises.check_swiglu(MySwiGLU)
assert result, result
result

# %% [markdown]
# **Exercise 1.** The lesson's toy model again (the same seeds, so the same weights). The
# positions enter the attention in one place only, the cos and sin tables: take them at `far`
# (40..55) and repeat the module's other steps (QK-norm before RoPE, RoPE on q and k, the scaled
# scores, the causal softmax). The keys at `far` are the answer; the weights they give, with the
# queries turned to `far` as well, settle the prediction: the diagonal two below the main one
# (query $t$, key $t - 2$) against the same diagonal at 0..15.

# %%
# NBVAL_IGNORE_OUTPUT
# Trained at lr 0.2, as in the lesson: the last digits differ from processor to processor.
import math

vocab, T_toy, d_toy, heads_toy = 16, 16, 32, 4


class TinyModern(nn.Module):
    def __init__(self, qk_norm):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_toy)
        self.block = mh.ModernDecoderLayer(d_toy, T_toy, heads_toy, heads_toy, qk_norm=qk_norm)
        self.norm = mh.RMSNorm(d_toy)
        self.head = nn.Linear(d_toy, vocab, bias=False)

    def forward(self, ids):  # (b, T) -> logits (b, T, vocab)
        return self.head(self.norm(self.block(self.emb(ids))))


gen = torch.Generator().manual_seed(0)
pool = torch.randint(vocab, (512, T_toy + 2), generator=gen)  # random token rows
torch.manual_seed(123)
gen.manual_seed(1)
toy = TinyModern(qk_norm=True)
optimizer = torch.optim.AdamW(toy.parameters(), lr=0.2)
for _ in range(60):
    rows = pool[torch.randint(len(pool), (32,), generator=gen)]  # (32, T + 2)
    inputs, targets = rows[:, 2:], rows[:, :-2]  # target: the token two places back
    loss = F.cross_entropy(toy(inputs).reshape(-1, vocab), targets.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
final, chance = round(loss.item(), 4), round(math.log(vocab), 4)
print(mh.tr(f"final loss {final}, chance {chance}", f"最终损失：{final}，随机水平：{chance}"))

toy.eval()
row = torch.randint(vocab, (1, T_toy), generator=torch.Generator().manual_seed(5))  # (1, T)
with torch.no_grad():
    h_ex = toy.block.input_layernorm(toy.emb(row))  # (1, T, d_model)
    _, weights_ex = toy.block.self_attn(h_ex, return_weights=True)  # (1, heads, T, T)
weights_ex = weights_ex[0]  # (heads, T, T)

far = torch.arange(40, 40 + T_toy)  # (T,): the positions after 40 cached tokens

attn = toy.block.self_attn
with torch.no_grad():
    q = attn.q_proj(h_ex).view(1, T_toy, heads_toy, attn.head_dim)  # (1, T, h, head_dim)
    k = attn.k_proj(h_ex).view(1, T_toy, heads_toy, attn.head_dim)  # (1, T, h, head_dim)
    q, k = attn.q_norm(q).transpose(1, 2), attn.k_norm(k).transpose(1, 2)  # (1, h, T, hd)
    cos, sin = mh.rope_cos_sin(far, attn.head_dim)  # (T, head_dim): the new positions
    q, k = mh.apply_rotary_pos_emb(q, k, cos, sin)  # (1, h, T, head_dim) each
    scores = q @ k.transpose(-2, -1) / math.sqrt(attn.head_dim)  # (1, h, T, T)
    causal = torch.ones(T_toy, T_toy).triu(1).bool()
    weights_far = torch.softmax(scores.masked_fill(causal, -torch.inf), -1)[0]  # (h, T, T)

answer = k  # (1, heads, T, head_dim): the keys at far
two_back = torch.diagonal(weights_far, offset=-2, dim1=-2, dim2=-1).mean(dim=-1)  # (heads,)
near = torch.diagonal(weights_ex, offset=-2, dim1=-2, dim2=-1).mean(dim=-1)  # (heads,)
print(mh.say("weight two back at 40..55:", "40..55 上往前两个位置的权重："), two_back)
print(mh.say("weight two back at 0..15: ", "0..15 上往前两个位置的权重： "), near)
print(
    mh.say("the same weights as at 0..15:", "与位置 0..15 上的权重相同："),
    torch.allclose(weights_far, weights_ex, atol=1e-5),
)
result = mhsa_helpers.exercises.check_far_keys(answer, attn, h_ex, far)
assert result, result
assert torch.allclose(weights_far, weights_ex, atol=1e-5) and (two_back > 0.9).sum() == 3
result

# %% [markdown]
# The same numbers as at positions 0..15, to float rounding: every score depends only on the
# offset between query and key, and the offsets inside the row do not change when the row moves.
# So the model, trained at positions 0..15 only, looks two back at 40..55 as well: three of its
# four heads put about 95 % of their weight or more on the token two places back. With GPT-2's
# learned position vectors (lesson 12), positions 40..55 would be vectors it never trained.
