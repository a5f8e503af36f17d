"""Lesson 08's training explorer: press "Train", watch the shift task's heads specialise."""

from __future__ import annotations

import ipywidgets as widgets
import torch

from ...i18n import say
from ...training import offset_attention, train_shift_task
from ...validation import check_int_in_range, check_positive_int
from ..fonts import figure_text
from ..plotting import plot_attention_grid
from ..widgets import drawable_labels, interactive_with, picture, show_figure

__all__ = ["training_explorer"]


def training_explorer(*, heads: int = 4, k: int = 2, seed: int = 0, d_model: int = 32):
    """Train the shift task at the press of a button: an ``ipywidgets.interactive`` (manual).

    Controls: ``heads`` (IntSlider 1..8; values that do not divide ``d_model`` show a message),
    ``k`` (IntSlider 1..5, the offset to copy from), ``seed``. Pressing "Train" runs
    ``train_shift_task`` (about a second) and shows each head's attention on one sequence;
    ``.result`` is a dict with ``result`` (the ``TrainingResult``, or None) and ``offset``
    (``offset_attention(model, k)``, (num_heads,)). Like ``attention_explorer`` it prints nothing:
    the text and the picture are widgets under the controls.

    Starting values outside a slider's range raise ``ValueError`` naming the argument and the
    range (a slider would silently clamp them). Training leaves the global RNG state untouched.
    """
    heads = check_int_in_range("heads", heads, 1, 8)
    k = check_int_in_range("k", k, 1, 5)
    seed = check_int_in_range("seed", seed, 0, 99)
    d_model = check_positive_int("d_model", d_model)
    style = {"description_width": "70px"}
    controls = {
        "heads": widgets.IntSlider(
            value=heads, min=1, max=8, description=say("heads", "头数"), style=style
        ),
        "k": widgets.IntSlider(value=k, min=1, max=5, description="k", style=style),
        "seed": widgets.IntSlider(
            value=seed, min=0, max=99, description=say("seed", "随机种子"), style=style
        ),
    }
    message = widgets.HTML(layout=widgets.Layout(min_height="44px"))
    image = picture()
    image.layout.display = "none"

    def train(heads, k, seed):
        if d_model % heads:
            message.value = (
                "<b style='color:#b00'>"
                + say(
                    f"{heads} heads do not divide d_model = {d_model}.",
                    f"头数 {heads} 不能整除 d_model = {d_model}。",
                )
                + "</b>"
            )
            image.layout.display = "none"
            return {"result": None, "offset": None, "message": message.value}
        result = train_shift_task(k=k, num_heads=heads, d_model=d_model, seed=seed, progress=False)
        offset = offset_attention(result.model, k)  # (num_heads,)
        ids = torch.randint(0, 64, (1, 12), generator=torch.Generator().manual_seed(seed))
        with torch.no_grad():
            _, weights = result.model(ids, return_weights=True)  # (1, h, T, T)
        labels = drawable_labels([f"t{i}" for i in range(ids.shape[1])])  # readies the CJK font
        if heads > 1:
            title = figure_text(
                f"Shift task k={k}, {heads} heads after training",
                f"平移任务 k={k}，{heads} 个头，训练之后",
            )
        else:
            title = figure_text(
                f"Shift task k={k}, {heads} head after training",
                f"平移任务 k={k}，{heads} 个头，训练之后",
            )
        show_figure(image, plot_attention_grid(weights[0], labels, title=title))
        shares = ", ".join(f"{x:.2f}" for x in offset.tolist())
        first, final = result.first_loss, result.final_loss
        message.value = say(
            f"loss {first:.2f} -> last epoch {final:.2f}; "
            f"weight on the token {k} back, per head: {shares}",
            f"损失从 {first:.2f} 降到最后一轮的 {final:.2f}。"
            f"每个头对往前第 {k} 个词元的权重：{shares}",
        )
        return {"result": result, "offset": offset, "message": message.value}

    explorer = interactive_with(
        train,
        controls,
        message,
        image,
        options={"manual": True, "manual_name": say("Train", "训练")},
    )
    explorer.message = message
    explorer.image = image
    return explorer
