# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="7e5e0b20c96f"
# # 13 · 现代解码器块 · 参考答案
#
# 本课 `13_modern_block.ipynb` 各道练习的参考解答。请先自己试一试。每个单元格都算出答案，并断言检查器通过。

# %%
import torch
import torch.nn.functional as F
from torch import nn

import mhsa_helpers as mh
import mhsa_helpers.exercises

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="2907175d347e"
# **动手实现：`apply_rope`。** 词元位于位置 `offset .. offset + T - 1`，由这些位置得到表。`x * cos + rotate_half(x) * sin` 一次转动所有的对（即公式的两行，以两半作为配对），v 原样返回。


# %%
def apply_rope(q, k, v, offset=0):  # q: (b, h, T, head_dim); k, v: (b, g, T, head_dim)
    positions = torch.arange(offset, offset + q.shape[-2])  # (T,)：真实的位置
    cos, sin = mh.rope_cos_sin(positions, q.shape[-1])  # (T, head_dim), float32
    cos, sin = cos.to(q.dtype), sin.to(q.dtype)
    q_rot = q * cos + mh.rotate_half(q) * sin  # (b, h, T, head_dim)
    k_rot = k * cos + mh.rotate_half(k) * sin  # (b, g, T, head_dim)
    return q_rot, k_rot, v  # v 从不旋转


result = mhsa_helpers.exercises.check_apply_rope(apply_rope)
assert result, result
result

# %% [markdown] en_hash="d2a1501e0ca7"
# **动手实现：RMSNorm。** 在最后一维上取平方的均值，eps 加在平方根里面，再乘以学到的缩放。不减均值，也没有偏置。


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

# %% [markdown] en_hash="64899cbec4bd"
# **动手实现：SwiGLU。** 三个不带偏置的线性映射。只有门控一路经过 SiLU，再与 `up_proj` 的输出逐元素相乘。


# %%
class MySwiGLU(nn.Module):
    def __init__(self, d_model, hidden_dim=None):
        super().__init__()
        if hidden_dim is None:
            hidden_dim = int(2 * 4 * d_model / 3)  # 保持 GPT-2 的 8 d^2 个权重
        self.gate_proj = nn.Linear(d_model, hidden_dim, bias=False)
        self.up_proj = nn.Linear(d_model, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, d_model, bias=False)

    def forward(self, x):  # (..., d_model) -> (..., d_model)
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


result = mhsa_helpers.exercises.check_swiglu(MySwiGLU)
assert result, result
result

# %% [markdown] en_hash="38fd0d75868d"
# **练习 1。** 再次构造本课的玩具模型（种子相同，所以权重相同）。位置只在一个地方进入注意力，就是 cos 表和 sin 表。在 `far`（40..55）上取这两张表，再重复模块的其余步骤（在 RoPE 之前做 QK 归一化、对 q 和 k 做 RoPE、缩放后的分数、因果 softmax）。`far` 上的键就是答案。再把查询也转到 `far` 上，由它们得到的权重来检验预测：取主对角线下方的第二条对角线（查询 $t$ 与键 $t - 2$），与 0..15 上的同一条对角线比较。

# %%
# NBVAL_IGNORE_OUTPUT
# 与课上一样用学习率 0.2 训练：处理器不同，最后几位数字就不同。
import math

vocab, T_toy, d_toy, heads_toy = 16, 16, 32, 4


class TinyModern(nn.Module):
    def __init__(self, qk_norm):
        super().__init__()
        self.emb = nn.Embedding(vocab, d_toy)
        self.block = mh.ModernDecoderLayer(d_toy, T_toy, heads_toy, heads_toy, qk_norm=qk_norm)
        self.norm = mh.RMSNorm(d_toy)
        self.head = nn.Linear(d_toy, vocab, bias=False)

    def forward(self, ids):  # 输入 (b, T)，输出 logits (b, T, vocab)
        return self.head(self.norm(self.block(self.emb(ids))))


gen = torch.Generator().manual_seed(0)
pool = torch.randint(vocab, (512, T_toy + 2), generator=gen)  # 随机的词元行
torch.manual_seed(123)
gen.manual_seed(1)
toy = TinyModern(qk_norm=True)
optimizer = torch.optim.AdamW(toy.parameters(), lr=0.2)
for _ in range(60):
    rows = pool[torch.randint(len(pool), (32,), generator=gen)]  # (32, T + 2)
    inputs, targets = rows[:, 2:], rows[:, :-2]  # 目标：往前第二个位置上的词元
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

far = torch.arange(40, 40 + T_toy)  # (T,)：缓存了 40 个词元之后的位置

attn = toy.block.self_attn
with torch.no_grad():
    q = attn.q_proj(h_ex).view(1, T_toy, heads_toy, attn.head_dim)  # (1, T, h, head_dim)
    k = attn.k_proj(h_ex).view(1, T_toy, heads_toy, attn.head_dim)  # (1, T, h, head_dim)
    q, k = attn.q_norm(q).transpose(1, 2), attn.k_norm(k).transpose(1, 2)  # (1, h, T, hd)
    cos, sin = mh.rope_cos_sin(far, attn.head_dim)  # (T, head_dim)：新的位置
    q, k = mh.apply_rotary_pos_emb(q, k, cos, sin)  # 各为 (1, h, T, head_dim)
    scores = q @ k.transpose(-2, -1) / math.sqrt(attn.head_dim)  # (1, h, T, T)
    causal = torch.ones(T_toy, T_toy).triu(1).bool()
    weights_far = torch.softmax(scores.masked_fill(causal, -torch.inf), -1)[0]  # (h, T, T)

answer = k  # (1, heads, T, head_dim)：far 上的键
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

# %% [markdown] en_hash="b9969988daec"
# 结果与位置 0..15 上的数相同，只差浮点舍入。每个分数只取决于查询与键之间的偏移，整行移动时，行内的偏移不变。所以这个只在位置 0..15 上训练过的模型，在 40..55 上同样会往前看两个位置，四个头中有三个把约 95% 或更多的权重放在往前两个位置的词元上。如果用 GPT-2 学到的位置向量（第 12 课），位置 40..55 的向量是模型从没训练过的。
