# ---
# jupyter:
#   jupytext:
#     formats: ipynb,scripts//py:percent
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
# ---

# %% [markdown] en_hash="e537cc922330"
# # 00 · 从这里开始 —— 多头自注意力（Multi-Head Self-Attention），一步一步
#
# 英文版（English edition）见 [notebooks/00_start_here.ipynb](../00_start_here.ipynb)，内容和代码与本版完全相同，只是用英文写成。哪一版读着顺手就用哪一版，两版打印出的数字一模一样。
#
# 这门课从最朴素的**点积**（dot product）讲起，每课前进一小步，最后搭出 GPT 模型里真正在用的**多头注意力**（multi-head attention）模块。每一课都是一个从上到下依次运行的 notebook。它打印的每个数字都由 CI 检查，其中大部分与《从零构建大模型》（英文原书《Build a Large Language Model (From Scratch)》）第 3 章印出的数字相同。书中用 `torch.manual_seed(123)` 和 `(789)` 设定随机种子，我们也一样。
#
# **本 notebook 的目标**
# 1. 确认你的环境可用，包括 torch、计算设备、绘图和交互式控件。
# 2. 了解课程地图、每一课共同遵循的约定，以及术语表。
#
# **用时：** 约 20 分钟（阅读、运行 8 个代码单元格，估算规则见下文）。
#
# **用时怎么估算。** 每一课开头都写明了用时，下面的课程地图也一一列出。这些数字都按同一条规则、由每课的英文文本算出。分钟数等于正文的词数（按英文版计）除以 120，再加上每个代码单元格 1.5 分钟、每次预测 3 分钟、每道练习 8 分钟、每个动手实现的练习（亲手写一个类或函数）20 分钟，最后取最接近的 5 的倍数。这条规则假定你认真地读第一遍，运行每个单元格，每道题都动手做。计算由 `tools/lesson_times.py` 完成，它把结果写进每一课、这张地图和 README。遇到新概念时多花些时间，也完全没关系。
#
# **预备知识：** 哪一项还不熟悉，花一个晚上读一读就够了。下面这些内容课程会直接使用，不再讲解：
# * **Python** 的函数、类、循环和列表推导式。
# * **线性代数**中的向量、点积、矩阵乘法和转置（transpose）。
# * **PyTorch 基础**，即张量及其形状、`@`、索引和广播，以及 `nn.Module`、`nn.Parameter` 和 `nn.Linear`（第 02 课以它们为基础）。
# * **自动求导**（autograd），即 `requires_grad=True`、`loss.backward()` 和 `.grad`。第 02 课用它说明分数为什么要缩放，并检查梯度能否传到每一个权重。
# * **训练模型**，包括下一个词元（token）预测的**交叉熵损失**（cross-entropy loss）、**Adam 优化器**（optimizer）和训练循环（`zero_grad`、`backward`、`step`）。第 08 课（训练一个小模型）以及其后需要训练的各课都会用到它们。第 08 课会回顾训练循环，但不讲理论。
#
# PyTorch 官方教程“Learn the Basics”（pytorch.org/tutorials）涵盖了后三项。
#
# **形状约定（shape contract）：** 书中示例 `journey.inputs` 的形状是 `(T, d_in) = (6, 3)`，即 6 个词元，每个词元有 3 个特征。

# %% [markdown] en_hash="6e7043a5c365"
# ## 课程地图
#
# | # | notebook | 你要构建的 | 核心思想 | 用时 |
# |---|---|---|---|---|
# | 01 | [`01_simplified_self_attention`](01_simplified_self_attention.ipynb) | 你自己算的分数、softmax 和上下文向量（context vector）；你自己的逐行稳定 softmax | 注意力 = 加权平均 | 95 分钟 |
# | 02 | [`02_trainable_qkv`](02_trainable_qkv.ipynb) | 你自己的 `SelfAttentionV2`（书中的 `SelfAttentionV1` 直接给出） | 查询、键、值（query, key, value） | 90 分钟 |
# | 03 | [`03_causal_attention`](03_causal_attention.ipynb) | 你自己的因果权重，也支持滑动窗口 | 不许偷看未来：因果注意力（causal attention）；对过去的加权平均 | 85 分钟 |
# | 04 | [`04_dropout`](04_dropout.ipynb) | 你自己的 `CausalAttention`；亲手对上下文向量做 dropout | 对注意力权重（attention weight）做 dropout（随机失活） | 100 分钟 |
# | 05 | [`05_multihead_wrapper`](05_multihead_wrapper.ipynb) | 你自己的 `MultiHeadAttentionWrapper`；数一数 12 个头的乘加次数 | 几个头并排工作 | 90 分钟 |
# | 06 | [`06_multihead_split`](06_multihead_split.ipynb) | 你自己的 `MultiHeadAttention`；不带批次（batch）维的序列怎样切成头 | 一个大矩阵，切成几个头 | 110 分钟 |
# | 07 | [`07_inspecting_heads`](07_inspecting_heads.ipynb) | 亲手算头的熵；找出最集中的头 | 各个头在看什么？ | 60 分钟 |
# | 08 | [`08_training_tiny_model`](08_training_tiny_model.ipynb) | 未训练时的损失；平移任务的目标；亲手算各头的偏移份额 | 看着头学会东西 | 80 分钟 |
# | 09 | [`09_efficient_attention`](09_efficient_attention.ipynb) | 你自己的融合 QKV `MultiHeadAttention`；能放下的最长上下文 | 同一个模块，变快；RoPE/ALiBi；bf16 | 100 分钟 |
# | 10 | [`10_cross_attention_kv_cache_gqa`](10_cross_attention_kv_cache_gqa.ipynb) | 你自己的 KV 缓存（KV cache，`append_and_attend`）和 GQA 的 `repeat_kv`；滑动窗口下一段词元的掩码；缓存与参数的大小 | 生成文本，并让模型更省 | 125 分钟 |
# | 11 | [`11_padded_batches`](11_padded_batches.ipynb) | 因果加填充（padding）的掩码；你自己的掩码 softmax；把 Hugging Face 的掩码换成 SDPA 的加性掩码（任意 dtype） | 长短不一的句子（填充掩码） | 90 分钟 |
# | 12 | [`12_tiny_char_lm`](12_tiny_char_lm.ipynb) | 前置归一化（pre-normalization）的 `Block`、`get_batch` 和一步训练（损失、AdamW）；采样概率；用宋词或你自己的文本训练的模型 | 围绕注意力搭起 Transformer 块（Transformer block）；KV 缓存的实战 | 175 分钟 |
# | 13 | [`13_modern_block`](13_modern_block.ipynb) | `apply_rope`、RMSNorm 和 SwiGLU；各头往前看两个词元的注意力 | 今天的模型用的块：RoPE、RMSNorm、SwiGLU、QK 归一化（QK-norm） | 120 分钟 |
#
# 合计约 22 小时，相当于一个周末，或者两周的晚上。
#
# 练习的参考答案放在 `solutions/` 里。请先自己做，再去对照。
#
# **约定。** 形状写作 `(b, T, d)`，三个维度依次是批次、词元和特征。代码沿用书中的变量名，如 `W_query`、`W_key`、`W_value`、`out_proj`、`d_in`、`d_out`、`context_length`、`num_heads`、`head_dim`。每一课先在 notebook 里讲解并写出一个类，再检查它的计算结果与课程包 `mhsa_helpers` 中对应的类完全一致。关键术语第一次出现时，括号里会注明英文原名，本 notebook 末尾的术语表列出了全部术语。代码里的图标题写成 `mh.tr("English", "中文")`。两个版本运行同一份代码，而中文版（`mh.setup_lesson(lang="zh")`）画出的是中文标题。

# %% [markdown] en_hash="999386ccfdc5"
# ## 检查环境
#
# `setup_lesson()` 是每一课的第一个调用。它为随机数生成器设定种子，让 torch 打印 4 位小数，并只用一个 CPU 线程，这样你打印出的数字就和保存下来的一致。只用一个线程，求和就不会被拆到多个线程上，由此带来的逐次运行差异也就消失了。不同的 CPU 之间仍可能有差异，但远小于打印的精度。

# %%
import torch

import mhsa_helpers as mh

mh.setup_lesson(lang="zh")

# %% [markdown] en_hash="26d058663ce5"
# 版本号和计算设备因机器而异，所以 CI 不比较这个单元格的输出（`NBVAL_IGNORE_OUTPUT`）。它下面的断言在任何机器上都照常运行。输出的最后一行告诉你系统里有没有带中文字符的字体（课程里的中文术语和术语表都要用到，图里的中文则自带字体）。如果没有，它会给出安装字体的那一条命令。

# %%
# NBVAL_IGNORE_OUTPUT
import platform
from importlib.metadata import version

from mhsa_helpers.system_fonts import missing_cjk_font

if torch.cuda.is_available():
    device = "cuda"
elif torch.backends.mps.is_available():
    device = "mps"
else:
    device = "cpu"
print("python     ", platform.python_version())
print("torch      ", torch.__version__)
print("device     ", device)
for package in ["matplotlib", "seaborn", "ipywidgets", "jupyterlab", "mhsa_helpers"]:
    print(f"{package:<11}", version(package))
font_hint = missing_cjk_font()
print(
    mh.pad(mh.say("CJK font", "中文字体"), 11),
    mh.say("found", "已找到") if font_hint is None else font_hint,
)

# %%
assert tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 4), torch.__version__
assert device in {"cpu", "cuda", "mps"}
x = torch.ones(2, 3, device=device)
assert (x @ x.T).sum().item() == 12.0
print(mh.say("torch works; every lesson runs on the CPU", "torch 可以用，每一课都在 CPU 上运行"))

# %% [markdown] en_hash="e04e492920e8"
# ## 书中的示例
#
# 每一课都使用同样的 6 个词元，由 `mhsa_helpers` 从 `data/journey.json` 读入。

# %%
journey = mh.load_journey()
print(journey.sentence)
print(journey.inputs)  # (6, 3)，每个词一个 3 维嵌入
assert journey.inputs.shape == (6, 3)

# %% [markdown] en_hash="04d82bafba15"
# ## 绘图可用
#
# 各课会把张量画成热力图（heatmap）。这是最简单的一张，画的是 6 个嵌入（embedding）本身，每个词元一行，每个特征一列。第 01 课就从这些数字出发。

# %%
import matplotlib.pyplot as plt
import seaborn as sns

fig, ax = plt.subplots(figsize=(7.8, 4.2), layout="constrained")
sns.heatmap(
    journey.inputs.numpy(),
    annot=True,
    fmt=".2f",
    cmap="Blues",
    xticklabels=[mh.say(f"feature {i}", f"特征 {i}") for i in (1, 2, 3)],
    yticklabels=journey.words,
    ax=ax,
)
ax.set_title(mh.tr("The six embeddings (6, 3)", "六个嵌入向量 (6, 3)"))
ax.tick_params(axis="y", rotation=0)  # 词横着写，从左往右读
plt.show()

# %% [markdown] en_hash="2296c2b08a11"
# ## 控件可用
#
# 后面的课会让你拖动滑块，改变头数和 dropout 的丢弃率（dropout rate）。拖一拖这个滑块，它下方的文字应当跟着变化。看得到滑块，就说明 JupyterLab 里的控件工作正常。（CI 不比较控件的输出，后面的断言会检查回调函数本身。）

# %%
# NBVAL_IGNORE_OUTPUT
import ipywidgets as widgets


def describe(heads=12):
    head_dim = 768 // heads
    return mh.say(
        f"GPT-2 small width 768 with {heads} heads → head_dim = {head_dim}",
        f"GPT-2 small 的宽度 768，{heads} 个头 → head_dim = {head_dim}",
    )


demo = widgets.interactive(
    describe,
    heads=widgets.SelectionSlider(
        options=[1, 2, 3, 4, 6, 8, 12], value=12, description=mh.say("heads", "头数")
    ),
)
demo

# %%
demo.kwargs_widgets[0].value = 12  # 相当于拖动滑块
assert demo.result.endswith("head_dim = 64"), demo.result  # 768 // 12
print(demo.result)
assert version("ipywidgets").startswith("8.")

# %% [markdown] en_hash="833707056b3f"
# ## 术语表
#
# 整门课使用同一套中英文术语，收在术语表 `data/glossary.json` 里，README 里也印了一份。`mh.glossary_table()` 把全部术语显示在一张表里（可以在表内滚动查看），每个术语附一句说明，说明用的是本课的语言。`mh.load_glossary()` 以字典列表的形式给出同样的术语，每一项包含 `en`、`zh`、`note`（英文说明）和 `note_zh`（中文说明）。

# %%
mh.glossary_table()

# %% [markdown] en_hash="24de5008e215"
# ## 小结
#
# * torch、绘图和控件在这个环境里都能正常工作，每一课都在 CPU 上运行。
# * 课程的示例是 6 个词元，每个词元是一个 3 维嵌入，用 `mh.load_journey()` 读入。
# * 每一课先在 notebook 里写出一个类，再与 `mhsa_helpers` 对照检查。练习配有检查器和完整的参考答案。
# * `mh.glossary_table()` 列出了课程中每个术语的英文和中文。
#
# 如果每个单元格都运行无误，你就准备好了。打开 [`01_simplified_self_attention.ipynb`](01_simplified_self_attention.ipynb)，开始第一课吧。
