# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="977c15da9bef"
# # 09 · 高效注意力
#
# 第 06 课搭好了多头注意力（multi-head attention）类 `MultiHeadAttention`，它包括三个投影（projection）、一个 (b, h, T, T) 的分数矩阵、一个掩码、一次 softmax 和一次加权求和。真实的模型运行的是**同一个函数**，只是做了两处改动，让它跑得更快。一是用一次矩阵乘法代替三次，同时得到 Q、K 和 V。二是用融合的注意力内核，它从不把 T × T 的权重写进内存。本课依次介绍这两处改动，并用 `assert_close` 证明数值没有变。接着看 RoPE、ALiBi 这类位置编码方案插在注意力块的什么地方，再用 bfloat16 运行注意力块。最后，由你亲手写出融合版的类。
#
# **学习目标**
# 1. 理解**融合 QKV 投影**（fused QKV projection），即把三个权重叠成一个。
# 2. 调用缩放点积注意力（scaled dot-product attention）的现成函数 `torch.nn.functional.scaled_dot_product_attention`（简称 SDPA）和 torch 自带的 `nn.MultiheadAttention`。复制权重之后，两者都能复现第 06 课的输出。
# 3. 算出 (b, h, T, T) 的权重占多少内存，以及 **FlashAttention** 分块计算、从不存储这些权重，能省下多少内存。
# 4. 看清两种位置编码作用在哪里。**旋转位置编码**（RoPE）作用于投影之后的 Q 和 K，**线性偏置注意力**（ALiBi）作用于分数。
# 5. 在**自动混合精度**（autocast）下用 **bfloat16**（bf16）运行注意力块，并与 float32 的结果比较。再测量 float16 和 bfloat16 下的 softmax，看掩码填入的哪些值在这两种类型里还能保留，并像生产代码那样把 softmax 升到 float32 计算。
# 6. 动手写一个融合 QKV 的多头注意力类，让它通过契约测试（contract test）。
#
# **预备知识：** 第 06 课（`MultiHeadAttention`，用 `view` + `transpose` 拆成多个头）。**用时：** 约 100 分钟（阅读、运行 27 个代码单元格、1 次预测、2 道练习、1 个动手实现，估算规则见第 00 课）。
#
# **形状约定（shape contract）：** `x` (b, T, d_in) → `qkv` (b, T, 3 * d_out) → Q, K, V (b, h, T, head_dim) → 输出 (b, T, d_out)，其中 `head_dim = d_out // num_heads`。
#
# ```mermaid
# flowchart LR
#   X["x (b, T, d_in)"] --> P["qkv：Linear d_in → 3 d_out"]
#   P --> S["拆分：Q, K, V (b, T, d_out)"]
#   S --> H["view + transpose：(b, h, T, head_dim)"]
#   H --> A["SDPA：掩码，softmax(QK^T / sqrt(head_dim))，@ V"]
#   A --> M["合并各头 (b, T, d_out)"]
#   M --> O["out_proj"]
# ```

# %%
import matplotlib.pyplot as plt
import torch

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="2d7f7351202f"
# ## 1. 一次矩阵乘法代替三次
#
# `W_query`、`W_key` 和 `W_value` 读的是同一个输入 `x`。`nn.Linear` 按 (out_features, in_features) 的形状存放权重，所以把三个 (d_out, d_in) 的权重矩阵（weight matrix）按行叠起来，就得到一个 (3 * d_out, d_in) 的权重 $W_{qkv}$。一次矩阵乘法就能把 Q、K、V 并排算出来。
#
# $$x W_{qkv}^\top = x\,[W_q; W_k; W_v]^\top = [\,x W_q^\top \mid x W_k^\top \mid x W_v^\top\,]
#   = [\,Q \mid K \mid V\,].$$
#
# 再用 `split` 把 (b, T, 3 d_out) 的结果切回三份。我们从书中的例子和第 06 课的类出发。

# %%
journey = mh.load_journey()
x = journey.batch  # (2, 6, 3)
torch.manual_seed(123)
mha = mh.MultiHeadAttention(d_in=3, d_out=4, context_length=6, dropout=0.0, num_heads=2)

three = [mha.W_query(x), mha.W_key(x), mha.W_value(x)]  # 3 次矩阵乘法，每次得到 (2, 6, 4)
W_qkv = torch.cat([mha.W_query.weight, mha.W_key.weight, mha.W_value.weight])  # (12, 3)
fused = x @ W_qkv.T  # 1 次矩阵乘法：(2, 6, 12)
queries, keys, values = fused.split(4, dim=-1)  # 每个都是 (2, 6, 4)
print(
    mh.say("fused weight:", "融合权重："),
    tuple(W_qkv.shape),
    mh.say("-> fused output:", "-> 融合输出："),
    tuple(fused.shape),
)
for name, one, other in zip(["Q", "K", "V"], three, [queries, keys, values]):
    torch.testing.assert_close(one, other)
    print(
        name,
        mh.say(
            "from three matmuls == slice of the fused matmul",
            "由三次乘法得到 == 融合乘法结果的切片",
        ),
    )

# %% [markdown] en_hash="e7dd8b64f59b"
# 把刚才的计算画成图。权重是上下叠放的三块，第一个序列的输出是左右并排的三块。

# %%
fig = mh.figures.plot_fused_qkv(W_qkv.detach(), fused[0].detach())
plt.show()

# %% [markdown] en_hash="d1bb158f2c2e"
# **为什么一次矩阵乘法胜过三次。** 两种做法的计算量完全相同，都是 3 × b·T·d_in·d_out 次乘加。但计算机的速度很少只受算术本身限制，一次乘法赢在别处：
#
# * `x` 只从内存读**一次**，而不是三次。一个大矩阵也比三个瘦长的矩阵更能让乘法单元保持忙碌，也就是说**算术强度**（arithmetic intensity）更高。
# * 只需一次内核启动（kernel launch），而不是三次。每次启动都有固定开销，模型每处理一个词元（token）就要启动成千上万次，这笔开销会累积起来。本课不测量它。
# * 三个权重放在同一个张量里，初始化、保存和分片（sharding，把张量切开放到多块 GPU 上，每块存一片）都一起完成。
#
# 本包的 `mh.FusedQKVMultiHeadAttention` 就是第 06 课的类，只改了这一处，用单个 `qkv = nn.Linear(d_in, 3 * d_out)` 代替 `W_query`、`W_key` 和 `W_value`。`from_multihead(mha)` 把 `mha` 的权重叠进它的 `qkv`，并复制 `out_proj`，所以它算出的正是第 06 课的结果。（本课最后，你会自己写出这个类。）

# %%
from torch import nn

fused_mha = mh.FusedQKVMultiHeadAttention.from_multihead(mha)  # 复制 W_query/W_key/W_value
print(fused_mha)
out_06 = mha(x)  # (2, 6, 4)，第 06 课
out_fused = fused_mha(x)  # (2, 6, 4)，投影只做一次矩阵乘法
torch.testing.assert_close(out_fused, out_06)
print(out_fused[0].detach())  # 第一个序列，(6, 4)
print(
    mh.say(
        "FusedQKVMultiHeadAttention == lesson 06 MultiHeadAttention",
        "FusedQKVMultiHeadAttention == 第 06 课的 MultiHeadAttention",
    )
)

# %% [markdown] en_hash="10e0e1964aec"
# ## 2. SDPA：融合的注意力内核
#
# 投影之后，从 `Q @ K.T` 到 `weights @ V` 的所有步骤合起来是一个标准运算，PyTorch 把它做成了单个函数 `F.scaled_dot_product_attention`。`is_causal=True` 施加因果掩码（causal mask），缩放系数默认是 `1 / sqrt(head_dim)`，`dropout_p` 对权重做 dropout（随机失活）。这个函数并不看 `.training`，所以评估时要传入 0.0。

# %%
import torch.nn.functional as F

q, k, v = fused_mha.project(x)  # 每个都是 (2, 2, 6, 2)，即 (b, h, T, head_dim)
context_sdpa = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (b, h, T, head_dim)
context_explicit, weights = mh.masked_attention(q, k, v, mha.causal_mask(6))  # + (b, h, T, T)
torch.testing.assert_close(context_sdpa, context_explicit)
print(
    mh.say(
        "SDPA context == explicit mask + softmax + weighted sum:",
        "SDPA 的上下文 == 显式掩码 + softmax + 加权和：",
    ),
    tuple(context_sdpa.shape),
)

sdpa_mha = mh.SDPAMultiHeadAttention.from_multihead(mha)
torch.testing.assert_close(sdpa_mha(x), out_06)
print(
    mh.say(
        "SDPAMultiHeadAttention == lesson 06 MultiHeadAttention",
        "SDPAMultiHeadAttention == 第 06 课的 MultiHeadAttention",
    )
)

# %% [markdown] en_hash="fb482d161a72"
# ### 头的两种布局
#
# 很多代码库（例如 timm 的 `Attention`）只用一行代码就把融合的输出切成多个头，即 `qkv.view(b, T, 3, h, head_dim).permute(2, 0, 3, 1, 4)`。这里能用 `view`，是因为融合权重按行依次叠放了 W_query、W_key 和 W_value。3 * d_out 个输出特征分成 3 块（Q、K、V），每块有 h 个头，每个头有 head_dim 个特征。接着由 `permute` 调换这些轴：
#
# | view 的轴 | 0 | 1 | 2 | 3 | 4 |
# |---|---|---|---|---|---|
# | `view(b, T, 3, h, head_dim)` | b | T | 3（Q、K 或 V） | h | head_dim |
# | `permute(2, 0, 3, 1, 4)` | 3 | b | h | T | head_dim |
#
# 这样 `unbind(0)` 就返回 Q、K、V，形状都是 (b, h, T, head_dim)，正是 SDPA 接受的布局。**flash-attn** 包的 `flash_attn_func` 接受的则是 (b, T, h, head_dim)，也就是 permute 之前的 view，所以输入和输出时都不用转置（transpose）。

# %%
b, T = x.shape[:2]  # 2, 6
h, hd = fused_mha.num_heads, fused_mha.head_dim  # 2, 2
with torch.no_grad():
    qkv_5d = fused_mha.qkv(x).view(b, T, 3, h, hd)  # (b, T, 3, h, head_dim)
    q5, k5, v5 = qkv_5d.permute(2, 0, 3, 1, 4).unbind(0)  # 每个都是 (b, h, T, head_dim)
    for ours, permuted in zip(fused_mha.project(x), (q5, k5, v5)):
        assert torch.equal(ours, permuted)
    print("permute(2, 0, 3, 1, 4) ->", tuple(q5.shape), "== fused_mha.project(x)")

    q_flash, k_flash, v_flash = qkv_5d.unbind(2)  # 各为 (b, T, h, head_dim)，flash-attn 的布局
    assert torch.equal(q_flash.transpose(1, 2), q5)  # 再做一次 transpose 就是 SDPA 的布局
    context = F.scaled_dot_product_attention(q5, k5, v5, is_causal=True)  # (b, h, T, head_dim)
    merged = context.transpose(1, 2).reshape(b, T, h * hd)  # (b, T, d_out)
print(
    mh.say("flash-attn layout", "flash-attn 的布局"),
    tuple(q_flash.shape),
    mh.say("| SDPA layout", "| SDPA 的布局"),
    tuple(q5.shape),
)
print(mh.say("merged heads", "合并后的头"), tuple(merged.shape))
torch.testing.assert_close(fused_mha.out_proj(merged), out_fused)

# %% [markdown] en_hash="f2c02a002a2a"
# SDPA 只返回上下文向量（context vector），从不返回权重，这正是它的用意。想要**看一看**权重时（第 07 课），可以用 `SDPAMultiHeadAttention(..., return_weights=True)`。它会退回显式计算的路径，这条路径会把权重存下来。

# %%
out, w = sdpa_mha(x, return_weights=True)
torch.testing.assert_close(out, out_06)
print(tuple(w.shape), mh.say("weights of head 1, first sequence:", "头 1 在第一个序列上的权重："))
print(w[0, 0].detach())

# %% [markdown] en_hash="b4832df4778f"
# ## 3. torch 自带的 `nn.MultiheadAttention`
#
# PyTorch 内置的这一层同样是融合 QKV 的注意力，它的 `in_proj_weight` 正是我们叠好的 (3 d_out, d_in) 权重。用于自注意力（self-attention）时，它的输入宽度必须等于 `embed_dim`，即 d_in == d_out，这也是 Transformer 内部的常见情形。使用时有三点要留意：
#
# * `bias=True` 会给 Q/K/V 投影和 `out_proj` 都加上偏置。我们的 `qkv_bias=False` 对应全零的 `in_proj_bias`。
# * `batch_first=True` 让它和我们的类一样接收 (b, T, d)。
# * 掩码有**两种约定**。对 `nn.MultiheadAttention`（以及本课程）来说，`True` 表示**遮住**，而对 `F.scaled_dot_product_attention` 来说，`True` 表示**可以关注**。

# %%
torch.manual_seed(123)
mha_4 = mh.MultiHeadAttention(d_in=4, d_out=4, context_length=6, dropout=0.0, num_heads=2)
x4 = torch.randn(2, 6, 4)  # (b, T, d_in)，其中 d_in == d_out
torch_mha = nn.MultiheadAttention(embed_dim=4, num_heads=2, bias=True, batch_first=True)
with torch.no_grad():
    torch_mha.in_proj_weight.copy_(
        torch.cat([mha_4.W_query.weight, mha_4.W_key.weight, mha_4.W_value.weight])
    )  # (12, 4)
    torch_mha.in_proj_bias.zero_()
    torch_mha.out_proj.load_state_dict(mha_4.out_proj.state_dict())
torch_mha.eval()

hidden = mha_4.causal_mask(6)  # 布尔型 (6, 6)，对角线以上为 True，表示遮住
out_torch, w_torch = torch_mha(
    x4, x4, x4, attn_mask=hidden, need_weights=True, average_attn_weights=False
)
out_ours, w_ours = mha_4(x4, return_weights=True)
torch.testing.assert_close(out_torch, out_ours)
torch.testing.assert_close(w_torch, w_ours)
out_fast, _ = torch_mha(x4, x4, x4, attn_mask=hidden, is_causal=True, need_weights=False)
torch.testing.assert_close(out_fast, out_ours)
print(
    mh.say(
        "nn.MultiheadAttention == lesson 06 MultiHeadAttention (outputs and per-head weights)",
        "nn.MultiheadAttention == 第 06 课的 MultiHeadAttention（输出和每个头的权重）",
    )
)

# %% [markdown] en_hash="eb2fca6a53a6"
# ## 4. FlashAttention 省掉了哪些存储
#
# 显式路径会把 (b, h, T, T) 的权重实实在在地存下来。其实这样的张量还不止一个，分数、加了掩码的分数、softmax 的输出（反向传播要用，得留着）和 dropout 掩码都是。
#
# **先预测，再运行。** 下一个单元格测量一个小注意力块（b = 4，4 个头）的权重在 T = 64 和 T = 512 时各占多少内存。词元数变成 8 倍，权重占的字节数会变成几倍？把你的猜测写进 `prediction`。

# %%
import mhsa_helpers.exercises

prediction = None  # 在这里写代码：T=512 时的字节数除以 T=64 时的字节数
mhsa_helpers.exercises.check_memory_growth(prediction)

# %% [markdown] en_hash="d1025fa73bc1"
# 下面是实测结果。测的是 `SDPAMultiHeadAttention` 的显式路径返回的权重，旁边是 flash 内核改为保存的东西。flash 内核每行只存一个数，即这一行的 log-sum-exp：对这一行的分数 $s_j$ 求 $\log \sum_j e^{s_j}$，也就是 softmax 分母的对数形式，反向传播时用它重新算出权重。形状为 (b, h, T)。

# %%
torch.manual_seed(0)
small = mh.SDPAMultiHeadAttention(d_in=64, d_out=64, context_length=512, dropout=0.0, num_heads=4)
lengths = [64, 128, 256, 512]
weights_bytes, row_stat_bytes = [], []
with torch.no_grad():
    for T in lengths:
        xt = torch.randn(4, T, 64)  # (b, T, d_in)
        _, w = small(xt, return_weights=True)  # (4, 4, T, T)，显式路径会存下它
        weights_bytes.append(w.numel() * w.element_size())
        row_stat_bytes.append(w.shape[0] * w.shape[1] * T * w.element_size())  # (b, h, T)
        size = f"{tuple(w.shape)} = {weights_bytes[-1] / 2**20:6.2f} MiB"
        print(mh.say(f"T={T:>4}: weights {size}", f"T={T:>4}：权重 {size}"))
growth = weights_bytes[-1] / weights_bytes[0]
print(
    mh.say(f"8 x the tokens -> {growth:.0f} x the bytes", f"词元数 8 倍 -> 字节数 {growth:.0f} 倍"),
    end="",
)
print(
    ""
    if prediction is None
    else mh.say(f"  (you predicted {prediction})", f"  （你的预测是 {prediction}）")
)
assert growth == 64

# %%
fig = mh.figures.plot_attention_memory(
    lengths,
    weights_bytes,
    row_stat_bytes,
    title=mh.tr(
        "Extra memory of attention (b=4, h=4, float32)", "注意力的额外内存（b=4，h=4，float32）"
    ),
)
plt.show()

# %% [markdown] en_hash="a092870a99a9"
# 权重随 **T²** 增长，因为 T 在它的形状里出现了两次。FlashAttention（以及 SDPA 在 CPU 上的“flash”内核）把 Q、K、V 切成小块（tile），为每一行的 softmax 维护一个随计算推进而更新的最大值和总和，从不把整个矩阵写出去。除了随 **T** 增长的 Q、K、V 和输出，它只存 (b, h, T) 的行统计量。在双对数坐标下，幂律是一条直线。权重那条线的斜率是 2，行统计量那条线的斜率是 1，前者陡了一倍。下面按 GPT-2 small 的宽度（12 个头，d = 768）、float32、批次（batch）大小为 1，计算**一层**里**一个** (b, h, T, T) 张量的大小。GPT-2 small 本身最多只处理 T = 1024，这里取 T = 4096 是为了展示开销如何增长。


# %%
def attention_matrix_bytes(batch, heads, num_tokens, bytes_per_number=4):
    return batch * heads * num_tokens * num_tokens * bytes_per_number


def qkvo_bytes(batch, d_model, num_tokens, bytes_per_number=4):
    return 4 * batch * num_tokens * d_model * bytes_per_number  # Q、K、V 和输出


MiB = 2**20
for T in [1024, 4096]:
    weights_big = attention_matrix_bytes(1, 12, T)
    linear_bytes = qkvo_bytes(1, 768, T)
    print(
        mh.say(
            f"T={T:>5}: (1, 12, T, T) weights = {weights_big:>11,} bytes = "
            f"{weights_big / MiB:5.0f} MiB   |   Q, K, V, out = {linear_bytes / MiB:3.0f} MiB",
            f"T={T:>5}：(1, 12, T, T) 的权重 = {weights_big:>11,} 字节 = "
            f"{weights_big / MiB:5.0f} MiB   |   Q、K、V 和输出 = {linear_bytes / MiB:3.0f} MiB",
        )
    )
assert attention_matrix_bytes(1, 12, 4096) == 16 * attention_matrix_bytes(1, 12, 1024)
assert qkvo_bytes(1, 768, 4096) == 4 * qkvo_bytes(1, 768, 1024)

# %% [markdown] en_hash="129935aba896"
# 词元数变成 4 倍，权重的内存就变成 16 倍（T = 4096 时单个张量就要 768 MiB，这还没算反向传播保留的副本），而 Q、K、V 和输出只变成 4 倍。正因为如此，长上下文模型在实践中离不开融合的、省内存的内核。
#
# ## 5. 位置从哪里进来：RoPE 与 ALiBi
#
# 第 07 课说明过，注意力本身不理会键的顺序。第 08 课的模型在输入上加了一个可学习的**位置嵌入**（positional embedding）。如今的大多数模型则把位置放进注意力块**内部**。本节只说明放在哪里，不实现完整的模型。放法有两种：
#
# * **RoPE**（rotary position embedding，旋转位置编码）作用于**投影之后的 Q 和 K**。它把位置 $p$ 上查询和键的每一对特征旋转一个角度 $p\,\theta_i$。第 $i$ 对（特征 $2i$ 和 $2i+1$）按自己的速度 $\theta_i = 10000^{-2i/\text{head\_dim}}$ 转动，第一对转得快，最后几对转得慢。V 不受影响。
# * **ALiBi**（attention with linear biases，线性偏置注意力）作用于**分数**。它给查询 $i$ 与键 $j$ 的分数加上 $-m_h\,(i - j)$。这个惩罚随距离增大而增大，每个头有自己的斜率 $m_h$。
#
# ```mermaid
# flowchart LR
#   X["x"] --> P["qkv 投影"] --> S["Q, K, V (b, h, T, head_dim)"]
#   S -->|"Q, K"| R["RoPE：按位置旋转"]
#   R --> SC["分数 QK^T / sqrt(head_dim)"]
#   SC --> AB["ALiBi：+ (-m_h (i - j))"]
#   AB --> MS["因果掩码，softmax"]
#   S -->|"V 不变"| WV["weights @ V"]
#   MS --> WV
# ```
#
# **几行代码实现 RoPE。** 位置 $p$ 上的一对特征 $(x_1, x_2)$ 旋转后变成 $(x_1 \cos p\theta - x_2 \sin p\theta,\; x_1 \sin p\theta + x_2 \cos p\theta)$。把查询旋转 $i\theta$、把键旋转 $j\theta$ 之后，它们的点积只取决于 $i - j$。这是因为先旋转 $i\theta$、再做旋转 $j\theta$ 的逆变换，合起来就是旋转 $(i - j)\theta$。


# %%
def rope(t, base=10000.0):
    # 把 t (b, h, T, head_dim) 的特征对 (0, 1)、(2, 3)……各转过 position * theta_i 的角度
    head_dim, num_tokens = t.shape[-1], t.shape[-2]
    theta = base ** (-torch.arange(0, head_dim, 2) / head_dim)  # (head_dim / 2,)
    angles = torch.arange(num_tokens)[:, None] * theta  # (T, head_dim / 2)
    cos, sin = angles.cos(), angles.sin()
    first, second = t[..., 0::2], t[..., 1::2]  # 每个都是 (b, h, T, head_dim / 2)
    rotated = torch.stack([first * cos - second * sin, first * sin + second * cos], dim=-1)
    return rotated.flatten(-2)  # (b, h, T, head_dim)


q, k, v = fused_mha.project(x)  # 每个都是 (2, 2, 6, 2)，即 (b, h, T, head_dim)
q_rot, k_rot = rope(q), rope(k)  # 形状不变，只有 Q 和 K 改变
print("Q", tuple(q.shape), "-> RoPE ->", tuple(q_rot.shape))
context_rope = F.scaled_dot_product_attention(q_rot, k_rot, v, is_causal=True)  # (b, h, T, hd)
print(mh.say("context with RoPE:", "加了 RoPE 的上下文："), tuple(context_rope.shape))

# %% [markdown] en_hash="1e02c6dc7353"
# 为了看清“只取决于相对位置”这个性质，我们把**同一个**词元放到每个位置上，即取“journey”的查询和键（头 1），重复 6 次。没有 RoPE 时，36 个分数会全都相等。有了 RoPE，查询 $i$ 与键 $j$ 的分数只取决于偏移 $i - j$。

# %%
q_same = q[0, 0, 1].expand(6, -1).reshape(1, 1, 6, 2)  # 每个位置上都是 "journey" 的查询
k_same = k[0, 0, 1].expand(6, -1).reshape(1, 1, 6, 2)  # 以及它的键
scores_rope = (rope(q_same) @ rope(k_same).transpose(-2, -1))[0, 0]  # (T, T)
for offset in range(6):
    diagonal = torch.diagonal(scores_rope, offset=-offset)  # i - j = offset 的那些分数
    torch.testing.assert_close(diagonal, diagonal[:1].expand_as(diagonal))
fig = mh.figures.plot_relative_position_scores(
    scores_rope, title=mh.tr("RoPE: same token everywhere", "RoPE：处处是同一个词元")
)
plt.show()

# %% [markdown] en_hash="d79e4f9f5282"
# **ALiBi** 完全不需要改动 Q 或 K。浮点型的 `attn_mask` 会在 SDPA 内部**加**到分数上，所以偏置和因果掩码可以合成一个 (h, T, T) 张量一起传进去（对角线以上是 `-inf`）。斜率取 $m_h = 2^{-8(h+1)/H}$，这是 ALiBi 论文（Press 等，2022）对 $H$ 个头的取法。

# %%
import math

H, T = 2, 6
slopes = torch.tensor([2 ** (-8 * (h + 1) / H) for h in range(H)])  # (h,)
distance = torch.arange(T)[:, None] - torch.arange(T)[None, :]  # (T, T): i - j
future = distance < 0  # 对角线以上为 True，表示遮住
alibi = -slopes[:, None, None] * distance  # (h, T, T)
bias = alibi.masked_fill(future, -torch.inf)  # (h, T, T)
context_alibi = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # (b, h, T, head_dim)
explicit = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(2) + bias, dim=-1) @ v
torch.testing.assert_close(context_alibi, explicit)
print(mh.say("ALiBi slopes per head:", "每个头的 ALiBi 斜率："), slopes)
print(
    mh.say(
        "SDPA with the ALiBi bias == explicit softmax(scores + bias) @ V:",
        "带 ALiBi 偏置的 SDPA == 显式的 softmax(scores + bias) @ V：",
    ),
    tuple(explicit.shape),
)

# %%
fig = mh.figures.plot_relative_position_scores(
    alibi[0].masked_fill(future, 0.0),
    title=mh.tr("ALiBi bias of head 1: -m (i - j)", "头 1 的 ALiBi 偏置：-m (i - j)"),
)
plt.show()

# %% [markdown] en_hash="48d0b5356901"
# 两幅图的结构相同，沿每条对角线取值都不变，但来由不同。RoPE 的结构来自对 Q 和 K 的旋转，ALiBi 则直接加在分数上。无论哪种，注意力块的其余部分（SDPA、掩码、`out_proj`）都不用改，所以两者都能嵌进本课程的类，而不改变它们的形状约定。另外，使用 KV 缓存（KV cache，见第 10 课）时，RoPE 在每个键存入缓存之前按它自己的位置旋转一次。
#
# ## 6. 自动混合精度下的 bfloat16
#
# **bfloat16** 的数只占 float32 一半的字节。在带有 bfloat16 矩阵单元的硬件上（较新的 GPU 和部分 CPU），它们的乘法也更快，但本课不测量这一点。bfloat16 保留了 float32 的数值范围（8 位指数），但只有 8 位有效位，所以每个数的舍入误差约为它自身大小的 $2^{-8} \approx 0.4\%$。**自动混合精度**让一个模块里的矩阵乘法以 bfloat16 运行，而参数仍保持 float32，类本身一点都不用改。

# %%
torch.manual_seed(0)
block = mh.SDPAMultiHeadAttention(d_in=64, d_out=64, context_length=32, dropout=0.0, num_heads=4)
block.eval()
xb = torch.randn(2, 32, 64)  # (b, T, d_in), float32
with torch.no_grad():
    out32 = block(xb)  # (2, 32, 64) float32
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out16 = block(xb)  # (2, 32, 64) bfloat16
print(
    mh.say("parameters:", "参数："),
    block.qkv.weight.dtype,
    mh.say("| input:", "| 输入："),
    xb.dtype,
)
print(
    mh.say("output without autocast:", "不用 autocast 的输出："),
    out32.dtype,
    mh.say("| with autocast:", "| 用 autocast："),
    out16.dtype,
)
error = (out16.float() - out32).abs()  # (2, 32, 64)
relative = (error.max() / out32.abs().max()).item()
print(
    mh.say("largest error below 1% of the largest output:", "最大误差低于最大输出的 1%："),
    relative < 0.01,
)
below_step = (error / out32.abs().max() < 2**-8).float().mean().item()
assert relative < 0.01 and below_step > 0.95  # 几乎全部低于 bfloat16 的步长
assert out16.dtype == torch.bfloat16 and block.qkv.weight.dtype == torch.float32
torch.testing.assert_close(out16.float(), out32, atol=2e-2, rtol=2e-2)

# %%
fig = mh.figures.plot_precision_error(out32, out16)
plt.show()

# %% [markdown] en_hash="96bb7db12efc"
# 点都落在对角线上，说明这是同一个函数。以最大的输出为基准衡量，误差几乎全部低于 bfloat16 的步长 $2^{-8}$，没有一个达到 1%。这是舍入误差，不是程序错误。输出小，误差并不跟着变小，因为一个小的输出是若干较大乘积之和，而每个乘积都经过了舍入。“bfloat16 对注意力来说足够好”在实践中就是这个意思，即同一个函数，算得没那么精确，内存只要一半。用 bfloat16 训练时，通常会保留一份 float32 的主权重（master weights，优化器（optimizer）自己保存的全精度权重副本，每一步更新的就是它），以免微小的更新被舍入掉，这里的自动混合精度正是这样做的。具体的误差取决于你的 CPU 的 bfloat16 内核，所以本课只打印比较的结论，不打印数值。

# %% [markdown] en_hash="f14fa7380d86"
# ## 7. 低精度下的 softmax 与掩码
#
# 自动混合精度特意让 softmax 保持 float32。如果 softmax 本身用 float16 或 bfloat16 计算，会怎样？分数取自第 6 节的模块，用它自己的 Q 和 K 作用于 `xb`，再加上因果掩码，并以 float32 的结果为参照。`torch.finfo(dtype).eps` 是该 dtype 在 1 附近的步长。

# %%
with torch.no_grad():
    q32, k32, _ = block.project(xb)  # 每个都是 (2, 4, 32, 16)，即 (b, h, T, head_dim)
future32 = torch.ones(32, 32, dtype=torch.bool).triu(diagonal=1)  # (T, T)，True 表示遮住
scores32 = (q32 @ k32.transpose(-2, -1) / math.sqrt(16)).masked_fill(future32, -torch.inf)
reference = torch.softmax(scores32, dim=-1)  # (2, 4, 32, 32), float32
low_rows = []
for dtype in (torch.float16, torch.bfloat16):
    weights_low = torch.softmax(scores32.to(dtype), dim=-1)  # (2, 4, 32, 32)，类型为 dtype
    error = (weights_low.float() - reference).abs().max().item()
    off = (weights_low.float().sum(dim=-1) - 1).abs().max().item()
    low_rows.append((dtype, f"{torch.finfo(dtype).eps:.0e}", f"{error:.0e}", f"{off:.0e}"))
mh.show_table(
    low_rows,
    header=(
        "dtype",
        "eps",
        mh.say("largest error", "最大误差"),
        mh.say("row sums off by", "行和的偏差"),
    ),
)

# %% [markdown] en_hash="7ed21b836103"
# bfloat16 的误差大约是 float16 的十倍，因为它的有效位少 3 位。无论哪种类型，一行权重之和都不再恰好是 1。这是舍入造成的，模型能够容忍。掩码就是另一回事了。在 float32 里没问题的填入值，在更小的类型里可能根本表示不了。

# %%
for dtype in (torch.float16, torch.bfloat16, torch.float32):
    lowest = torch.finfo(dtype).min
    as_dtype = torch.tensor(-1e9).to(dtype).item()
    print(
        f"{dtype!s:<16}",
        mh.say(
            f"lowest number {lowest:>10.3g}   -1e9 becomes {as_dtype:.4g}",
            f"最小的数 {lowest:>10.3g}   -1e9 变成 {as_dtype:.4g}",
        ),
    )
try:
    scores32.half().masked_fill(future32, -1e9)
except RuntimeError as error:
    print(
        mh.say(
            "float16 masked_fill(-1e9) raised:",
            "float16 的 masked_fill(-1e9) 报错（-1e9 超出了 float16 的范围）：",
        ),
        error,
    )
lowest16 = torch.finfo(torch.float16).min
print(
    mh.say("float16: -30 + lowest =", "float16：-30 + 最小的数 ="),
    (torch.tensor(-30.0).half() + lowest16).item(),
)

# %% [markdown] en_hash="d6de4648301f"
# float16 能表示的最大数是 65504，所以 $-10^9$ 会变成 $-\infty$（`masked_fill` 干脆拒绝写入）。即使是最小的数，再加上 -30 的分数，也会溢出（overflow）成 $-\infty$。bfloat16 的范围和 float32 一样，所以 $-10^9$ 能保留下来，只是被舍入了。正因为如此，Hugging Face 填入的是 `torch.finfo(dtype).min` 而不是某个常数，本课程则填入 `-inf`，并单独处理没有可见键的行（第 11 课）。填入的值必须低于所有分数，而没有哪个有限的数在每种 dtype 里都安全。
#
# **生产代码的修复办法是把 softmax 升到 float32 计算。** Hugging Face 的 Llama 写的是 `softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)`。分数可以是低精度的，softmax 则在 float32 中计算并返回 float32。下面在同样的分数上测量。

# %%
upcast_rows = []
for dtype in (torch.float16, torch.bfloat16):
    upcast = torch.softmax(scores32.to(dtype), dim=-1, dtype=torch.float32)  # float32
    error = (upcast - reference).abs().max().item()
    off = (upcast.sum(dim=-1) - 1).abs().max().item()
    assert off < 1e-6, off
    back = (upcast.to(dtype).float() - reference).abs().max().item()  # .to(query.dtype)
    upcast_rows.append((dtype, f"{error:.0e}", "< 1e-06", f"{back:.0e}"))
mh.show_table(
    upcast_rows,
    header=(
        "dtype",
        mh.say("upcast error", "升精度误差"),
        mh.say("row sums off by", "行和的偏差"),
        mh.say("cast back: error", "转回后的误差"),
    ),
)
hand = torch.exp(20 * scores32.half())  # 在 float16 中手写的 softmax，没有减去最大值
print(
    mh.say("largest score x 20:", "最大分数 × 20："),
    round(20 * scores32.max().item(), 1),
    mh.say("| exp in float16:", "| 在 float16 中取 exp："),
    hand.max(),
)

# %% [markdown] en_hash="8248e778ea31"
# 升到 float32 之后，权重只剩下分数本身的舍入误差。float16 中的误差是 8e-05 而不是 2e-04，bfloat16 中是 5e-04 而不是 2e-03。每一行的和与 1 相差不到 $10^{-6}$，只有几个 float32 步长。具体差几步，取决于你的 CPU 按什么顺序把一行加起来，所以表里只打印这个上界，不打印步数。下一次矩阵乘法需要把权重转回低精度类型，转回之后，误差又回到第一张表的数值。原因是在这台 CPU 上，torch 自己的 softmax 内核本来就在 float32 中计算，只对结果做舍入。所以升精度防的是另外几种情况，比如在低精度类型中累加的内核，以及手写的 softmax。最后一行展示的就是最糟的情况。只要 $x > 11.1$，$e^{x}$ 在 float16 中就会溢出，所以不减去行最大值的手写 softmax 会先得到 inf，再得到 NaN。
#
# ## 8. 在你的机器上做个小基准测试
#
# 对几种序列长度，分别给第 06 课的类和 SDPA 类（权重相同）的一次前向传播计时。为了让 notebook 跑得快，这里的尺寸都很小。GPT-2 规模上的真正测量由 `benchmarks/attention.py`（`make bench`）完成。耗时取决于你的机器，所以 CI 不比较下一个单元格的输出（`NBVAL_IGNORE_OUTPUT`），但这个单元格仍会检查每个耗时都是正数，而且在合理范围内。

# %%
# NBVAL_IGNORE_OUTPUT
import itertools
import time

from tqdm import tqdm

lengths = [32, 64, 128, 256]
torch.manual_seed(0)
teach = mh.MultiHeadAttention(d_in=64, d_out=64, context_length=256, dropout=0.0, num_heads=4)
teach.eval()
fast = mh.SDPAMultiHeadAttention.from_multihead(teach)


def best_time(module, x, repeats=5):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        module(x)
        times.append(time.perf_counter() - start)
    return min(times)  # 受干扰最少的一次运行


ms = {"MultiHeadAttention": [], "SDPAMultiHeadAttention": []}
with torch.no_grad():
    for T in tqdm(lengths, desc=mh.say("sequence length", "序列长度")):
        xb = torch.randn(4, T, 64)  # (b, T, d_in)
        torch.testing.assert_close(fast(xb), teach(xb))
        ms["MultiHeadAttention"].append(1e3 * best_time(teach, xb))
        ms["SDPAMultiHeadAttention"].append(1e3 * best_time(fast, xb))
for T, slow_ms, fast_ms in zip(lengths, *ms.values()):
    print(
        mh.say(
            f"T={T:>4}: teaching {slow_ms:7.3f} ms   SDPA {fast_ms:7.3f} ms   "
            f"ratio {slow_ms / fast_ms:4.1f}x",
            f"T={T:>4}：教学版 {slow_ms:7.3f} ms   SDPA {fast_ms:7.3f} ms   "
            f"倍数 {slow_ms / fast_ms:4.1f}x",
        )
    )
ratios = [slow / quick for slow, quick in zip(*ms.values())]
faster = sum(ratio > 1 for ratio in ratios)
print(
    mh.say(
        f"SDPA faster at {faster} of {len(ratios)} lengths; ratios {min(ratios):.1f}x to "
        f"{max(ratios):.1f}x",
        f"SDPA 在 {len(ratios)} 个长度中的 {faster} 个上更快，倍数从 {min(ratios):.1f} 到 "
        f"{max(ratios):.1f}",
    )
)
grew = all(b > a for a, b in itertools.pairwise(ratios))
print(mh.say("the ratio grew at every longer T:", "倍数随 T 每一步都在增大："), grew)
for series in ms.values():
    assert all(0 < t < 2000 and math.isfinite(t) for t in series), series

# %%
fig = mh.figures.plot_forward_times(
    lengths, ms, title=mh.tr("Measured on this machine", "在本机上实测")
)
plt.show()

# %% [markdown] en_hash="ffcc467c9099"
# 速度差距有多大，取决于机器，甚至每次运行都不一样。倒数第二行输出告诉你，在你的机器上 SDPA 在几个长度上更快、快多少。这个 notebook 每次构建得到的倍数都不同，而且倍数**并没有**随 T 稳定增大。在这么小的尺寸下，每次调用的固定开销和 T² 的计算量一样重要，所以这个基准测试说明不了差距怎样随 T 变化。最后一行输出告诉你，在你的机器上倍数是否每一步都在增大。在任何尺寸下都成立的是内存，SDPA 的额外内存随 T 线性增长（第 4 节）。
#
# ## 小结
#
# * **融合 QKV 投影**就是把三个投影叠成一个 `nn.Linear(d_in, 3 d_out)`。数值不变，只做一次矩阵乘法，`x` 只读一次。
# * `F.scaled_dot_product_attention(q, k, v, is_causal=True)` 在一个内核里完成掩码、缩放 softmax 和加权求和。它不返回权重，所以要查看权重就得走显式路径。
# * `nn.MultiheadAttention` 也是同一个函数，它的 `in_proj_weight` 就是我们叠好的权重。要留意掩码约定，在它那里 True 表示遮住，在 SDPA 里 True 表示允许关注。
# * 显式路径要存 (b, h, T, T) 张量，内存随 T² 增长。FlashAttention 分块计算，只存 O(T) 的数据。
# * RoPE 在投影之后旋转 Q 和 K，ALiBi 给分数加上距离惩罚（在 SDPA 里就是一个浮点型的 `attn_mask`）。两者都让分数依赖于偏移 $i - j$。
# * 在 `torch.autocast("cpu", dtype=torch.bfloat16)` 下，同一个模块以 bfloat16 运行，参数仍为 float32。几乎所有误差都低于最大输出的 $2^{-8}$。
# * 用 float16 或 bfloat16 计算 softmax，误差是该 dtype 步长的几分之一（float16 中 2e-04，bfloat16 中 2e-03），每行之和也不再是 1。把 softmax 升到 float32（`softmax(..., dtype=torch.float32)`），就只剩分数本身的舍入误差。$-10^9$ 在 float16 中就是 $-\infty$，所以请填入 `-inf` 或 `torch.finfo(dtype).min`，不要用为 float32 挑的常数。
# * `view(b, T, 3, h, head_dim).permute(2, 0, 3, 1, 4)` 把融合的输出切成 Q、K、V，得到 SDPA 的 (b, h, T, head_dim) 布局。flash-attn 则直接接受 (b, T, h, head_dim) 的 view。
#
# 第 10 课会用这些部件，借助 KV 缓存逐个词元地生成文本，让解码器通过交叉注意力（cross-attention）关注编码器的输出，并用分组查询注意力（grouped-query attention，GQA）缩小缓存。

# %% [markdown] en_hash="b41459b40b9e"
# ### 检查（供 CI 使用，已折叠）
#
# 这个单元格验证本课所依赖的事实，免得包的某处改动悄无声息地破坏了课程内容。好奇的话可以展开看看，也可以直接跳过。

# %% jupyter={"source_hidden": true, "outputs_hidden": true}
# 融合版的类与第 06 课的类只在浮点舍入的范围内相等，并非逐位相同。
# 一次 (3 d_out x d_in) 的矩阵乘法累加乘积的顺序，可能与三次分开的乘法不同，
# 所以浮点数的最后一位可能不同（在 float32 中相对误差约为 1e-7）。
torch.testing.assert_close(fused_mha(x), mha(x))
torch.testing.assert_close(sdpa_mha(x), mha(x))
assert torch.equal(fused_mha.qkv.weight, W_qkv)
assert sorted(fused_mha.state_dict()) == ["mask", "out_proj.bias", "out_proj.weight", "qkv.weight"]
largest_gap = (fused_mha(x) - mha(x)).abs().max().item()
print(
    mh.say(
        "fused == lesson 06 to float rounding:", "融合版 == 第 06 课的类，误差在浮点舍入范围内："
    ),
    largest_gap < 1e-6,
)

# %% [markdown] en_hash="7dec0447ff68"
# ## 练习
#
# 参考答案见 `solutions/09_efficient_attention_solutions.ipynb`。
#
# **练习 1。** 这次反过来做。下面的 `fused_ex` 是一个融合模块（比如是从检查点加载的）。请从 `fused_ex.qkv.weight` 中切出它的 **W_key** 权重，形状为 (d_out, d_in)。

# %%
torch.manual_seed(7)
fused_ex = mh.FusedQKVMultiHeadAttention(
    d_in=5, d_out=6, context_length=8, dropout=0.0, num_heads=3
)

answer = None  # 在这里写代码
mhsa_helpers.exercises.check_key_block(answer, fused_ex)

# %% [markdown] en_hash="511a28bf252e"
# **练习 2。** GPT-2 XL 有 25 个头，上下文长度（context length）为 1024 个词元。假设对一个序列（批次大小为 1）而言，一层的 float32 注意力权重（attention weight）张量 (b, h, T, T) 最多只能占 1 GiB（$2^{30}$ 字节）。权重还放得下的最长上下文 T 是多少？请给出一个整数。上面的内存函数由 T 算出字节数，这里要反过来求。

# %%
answer = None  # 在这里写代码
mhsa_helpers.exercises.check_longest_context(answer)

# %% [markdown] en_hash="b35af26b4ee3"
# **练习 3（动手实现）。** 自己写出融合 QKV 的多头注意力类。构造函数与第 06 课的 `MultiHeadAttention` 相同，即 `(d_in, d_out, context_length, dropout, num_heads, qkv_bias=False)`。类里有**一个** `self.qkv = nn.Linear(d_in, 3 * d_out, bias=qkv_bias)`，还有 `self.out_proj`、`self.dropout` 和一个因果 `mask` 缓冲区（buffer）。`forward(x)` 把 (b, T, d_in) 映射为 (b, T, d_out)。请照着开头的流程图做，依次是投影，拆出 Q、K、V，view 成 (b, T, h, head_dim) 再转置，计算缩放后的分数，加掩码，softmax，dropout，weights @ V，合并各头，最后是 `out_proj`。
#
# 检查器会用三种尺寸构造你的类，把包里的权重复制进 `qkv` 和 `out_proj`，再与 `mh.FusedQKVMultiHeadAttention` 的输出比较。它还会测试因果性、每行之和是否为 1、dropout 是否只在训练模式下生效以及梯度能否传回，并指出常见的错误。


# %%
class MyFusedAttention(nn.Module):
    def __init__(self, d_in, d_out, context_length, dropout, num_heads, qkv_bias=False):
        super().__init__()
        # 在这里写代码：self.qkv、self.out_proj、self.dropout 和掩码缓冲区

    def forward(self, x):
        # 在这里写代码：(b, T, d_in) → (b, T, d_out)
        raise NotImplementedError("write forward")


mhsa_helpers.exercises.check_build_fused_multihead(MyFusedAttention)
