"""What the trained heads look at, measured: ``head_focus(weights, text)``.

The metric is the package's one head metric for a set of keys, ``inspection.attention_share``;
this module says which keys each category counts on a poem.

For every head, five shares of attention weight on a real text, each averaged over the queries
where it is defined:

* ``previous`` -- the weight on the character just before the query (key t - 1; queries t >= 1);
* ``line start`` -- the weight on the newline that begins the query's line (the last "\\n" before
  the query; queries that have one);
* ``punctuation`` -- the total weight on punctuation marks (，。？！ ...) at or before the query
  (queries that have at least one);
* ``parallel`` -- for a query in the second half of a couplet line (下句), the weight on the
  character at the same place in the first half (上句): the character it pairs with in a couplet
  (对仗), e.g. 疑 -> 床 in 床前明月光，疑是地上霜。;
* ``parallel next`` -- for the comma and the second half's characters, the weight on the first
  half's character one place further on: the partner of the character being *predicted* (the
  query 疑 predicts 是, whose partner is 前).

The shares may overlap (the previous character can be the newline or a comma). A head that spread
its weight evenly over the past would get the ``baseline`` shares, computed the same way for
uniform causal weights; a head far above the baseline looks there on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..i18n import say
from ..inspection import attention_share
from ..tables import Table
from .model import CharTransformer
from .text import PUNCTUATION
from .tokenizer import CharTokenizer

__all__ = [
    "CATEGORIES",
    "HeadFocus",
    "RhymeFocus",
    "RhymeOdds",
    "attention_on",
    "copied_share",
    "focus_on_texts",
    "head_focus",
    "rhyme_focus",
    "rhyme_odds",
]

CATEGORIES = ("previous", "line start", "punctuation", "parallel", "parallel next")


def _category_name(category: str) -> str:
    """A category's column heading in the lesson language (the key itself stays English)."""
    names = {
        "previous": say("previous", "前一个字符"),
        "line start": say("line start", "行首"),
        "punctuation": say("punctuation", "标点"),
        "parallel": say("parallel", "同位字"),
        "parallel next": say("parallel next", "下一字的同位字"),
    }
    return names.get(category, category)


@dataclass(frozen=True)
class HeadFocus:
    """Shares of attention per head: ``shares`` (num_layers, num_heads, 5), ``baseline`` (5,).

    The last dimension follows ``CATEGORIES``: previous character, line start, punctuation,
    parallel character, the predicted character's parallel.
    """

    shares: torch.Tensor
    baseline: torch.Tensor
    categories: tuple[str, ...] = CATEGORIES

    def __post_init__(self) -> None:
        # Fewer columns than CATEGORIES (a table built by hand): the first ones.
        if self.categories == CATEGORIES and self.shares.shape[-1] < len(CATEGORIES):
            object.__setattr__(self, "categories", CATEGORIES[: self.shares.shape[-1]])

    def strongest(self, category: str) -> tuple[int, int]:
        """(layer, head), 0-based, of the head with the largest share in ``category``."""
        if category not in self.categories:
            raise ValueError(f"category must be one of {self.categories}, got {category!r}")
        column = self.shares[..., self.categories.index(category)]  # (L, h)
        if bool(column.isnan().all()):
            raise ValueError(f"no query of the text had a {category!r} key")
        flat = int(column.nan_to_num(float("-inf")).argmax())
        return divmod(flat, column.shape[1])

    def table(self) -> Table:
        """One row per head (block and head 1-based), then the uniform baseline: a ``Table``
        (``mh.show_table`` shows it; ``str()`` is its text).

        The headings follow the lesson language; the columns line up in both.
        """
        header = [say("block", "块"), say("head", "头"), *map(_category_name, self.categories)]
        num_layers, num_heads, _ = self.shares.shape
        rows: list[list[object]] = [
            [layer + 1, head + 1, *(f"{v:.2f}" for v in self.shares[layer, head].tolist())]
            for layer in range(num_layers)
            for head in range(num_heads)
        ]
        uniform = [f"{v:.2f}" for v in self.baseline.tolist()]
        rows.append([say("uniform", "均匀注意力"), "", *uniform])
        return Table(rows, header, align=">" * (2 + len(self.categories)))

    def strongest_heads(self) -> str:
        """One line per category: the head with the largest share, its share and the uniform one.

        In the lesson language; a category no query of the texts had a key of is left out.
        """
        rows = []
        for index, category in enumerate(self.categories):
            if bool(self.shares[..., index].isnan().all()):
                continue
            layer, head = self.strongest(category)
            share = float(self.shares[layer, head, index])
            uniform = float(self.baseline[index])
            name = f"{_category_name(category):>14}"
            rows.append(
                say(
                    f"{name}: block {layer + 1} head {head + 1}, {share:.2f} "
                    f"(uniform {uniform:.2f})",
                    f"{name}：第 {layer + 1} 块的头 {head + 1}，{share:.2f}"
                    f"（均匀注意力 {uniform:.2f}）",
                )
            )
        return "\n".join(rows)

    def __repr__(self) -> str:
        return str(self.table())


def _parallel_keys(text: str) -> tuple[list[int], list[int]]:
    """Per query, the key of its parallel character and of the predicted one's (-1: none)."""
    same, following = [-1] * len(text), [-1] * len(text)
    start = 0
    for line in text.split("\n"):
        comma = line.find("，")
        half = comma
        if comma > 0 and len(line) >= 2 * half + 1:
            for j in range(-1, half):  # -1: the comma itself
                query = start + comma + 1 + j
                if j >= 0:
                    same[query] = start + j
                if j + 1 < half:
                    following[query] = start + j + 1
        start += len(line) + 1
    return same, following


def _category_masks(text: str) -> tuple[torch.Tensor, ...]:
    """Five (T, T) bool masks over (query, key): the keys each category counts, per query."""
    num = len(text)
    query = torch.arange(num)[:, None]  # (T, 1)
    key = torch.arange(num)[None, :]  # (1, T)
    previous = key == query - 1  # (T, T)
    last_newline = []
    seen = -1
    for t in range(num):
        last_newline.append(seen)  # the last "\n" strictly before t
        if text[t] == "\n":
            seen = t
    line_start = key == torch.tensor(last_newline)[:, None]  # (T, T); -1 matches nothing
    is_punct = torch.tensor([ch in PUNCTUATION for ch in text])  # (T,)
    punctuation = is_punct[None, :] & (key <= query)  # (T, T)
    same, following = _parallel_keys(text)
    parallel = key == torch.tensor(same)[:, None]  # (T, T)
    parallel_next = key == torch.tensor(following)[:, None]  # (T, T)
    return previous, line_start, punctuation, parallel, parallel_next


def head_focus(weights: torch.Tensor, text: str) -> HeadFocus:
    """Measure the five shares (``CATEGORIES``) of ``weights`` on ``text``.

    Args:
        weights: attention weights of one sequence, (num_heads, T, T) or
            (num_layers, num_heads, T, T) (e.g. ``weights[0]`` of ``model(ids,
            return_weights=True)``).
        text: the T characters the weights were computed on.

    A category that no query of ``text`` has (``parallel`` in a text without a couplet line)
    gets NaN shares; ``focus_on_texts`` averages over the texts where it is defined.
    """
    if not isinstance(weights, torch.Tensor) or not weights.is_floating_point():
        raise TypeError("weights must be a floating-point torch.Tensor")
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if weights.dim() == 3:
        weights = weights.unsqueeze(0)  # (1, h, T, T)
    if weights.dim() != 4 or weights.shape[-1] != weights.shape[-2]:
        raise ValueError(
            "weights must have shape (num_heads, T, T) or (num_layers, num_heads, T, T), "
            f"got weights.shape={tuple(weights.shape)}"
        )
    if weights.shape[0] < 1 or weights.shape[1] < 1 or weights.shape[-1] < 1:
        raise ValueError(
            "weights must hold at least one layer, one head and one token, got "
            f"weights.shape={tuple(weights.shape)} (text={text!r})"
        )
    if len(text) != weights.shape[-1]:
        raise ValueError(
            f"text must have one character per position: len(text)={len(text)}, "
            f"T={weights.shape[-1]}"
        )
    weights = weights.detach().float()
    num = len(text)
    uniform = torch.ones(num, num).tril() / torch.arange(1, num + 1)[:, None]  # (T, T)
    masks = _category_masks(text)  # NaN shares where a category is absent (no couplet line)
    shares = [attention_share(weights, mask) for mask in masks]  # (L, h) each
    baseline = [attention_share(uniform, mask) for mask in masks]  # () each
    return HeadFocus(torch.stack(shares, dim=-1), torch.stack(baseline))  # (L, h, 5), (5,)


@torch.no_grad()
def attention_on(model: CharTransformer, tokenizer: CharTokenizer, text: str) -> torch.Tensor:
    """Every head's weights on ``text``: (num_layers, num_heads, T, T), model in eval mode."""
    if not isinstance(model, CharTransformer):
        raise TypeError(f"model must be a CharTransformer, got {type(model).__name__}")
    ids = tokenizer.encode(text)[None]  # (1, T)
    was_training = model.training
    model.eval()
    try:
        _, weights = model(ids, return_weights=True)  # (1, L, h, T, T)
    finally:
        model.train(was_training)
    return weights[0]  # (L, h, T, T)


def focus_on_texts(model: CharTransformer, tokenizer: CharTokenizer, texts: list[str]) -> HeadFocus:
    """``head_focus`` on each text, averaged: shares and baseline are means over the texts."""
    if isinstance(texts, str) or not texts:
        raise TypeError("texts must be a non-empty list of str")
    measured = [head_focus(attention_on(model, tokenizer, text), text) for text in texts]
    return HeadFocus(
        torch.stack([m.shares for m in measured]).mean(dim=0),  # (L, h, 3)
        torch.stack([m.baseline for m in measured]).mean(dim=0),  # (3,)
    )


def copied_share(generated: str, reference: str, n: int = 4) -> float:
    """Share of the ``n``-character pieces of ``generated`` that occur somewhere in ``reference``.

    Pieces that contain a newline are skipped (they say little about copying). A model that
    memorised its training text scores near 1 on it; one that only learned which characters
    follow which scores much lower for n >= 4.
    """
    if not isinstance(generated, str) or not isinstance(reference, str):
        raise TypeError("generated and reference must be str")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be an int >= 1, got n={n!r}")
    pieces = [generated[i : i + n] for i in range(len(generated) - n + 1)]
    pieces = [p for p in pieces if "\n" not in p]
    if not pieces:
        raise ValueError(f"generated has no {n}-character piece without a newline")
    if len(pieces) < 2000:  # a few pieces: a substring search each is faster than a set
        return sum(p in reference for p in pieces) / len(pieces)
    known = {reference[i : i + n] for i in range(len(reference) - n + 1)}
    return sum(p in known for p in pieces) / len(pieces)


@dataclass(frozen=True)
class RhymeFocus:
    """Per head, the attention on the line above, at the rhyme and elsewhere (``rhyme_focus``).

    ``rhyme`` (L, h): at the query that predicts a couplet-line's last character (the rhyme),
    the weight on the previous couplet-line's last character (the rhyme it must match).
    ``control`` (L, h): at the queries that predict any other character of a couplet-line, the
    weight on the character one line above the predicted one (the same distance back).
    ``uniform``: what evenly spread causal weights would give at the rhyme queries.
    """

    rhyme: torch.Tensor  # (L, h)
    control: torch.Tensor  # (L, h)
    uniform: float
    num_queries: int

    def strongest(self) -> tuple[int, int]:
        """(block, head), 0-based, of the head with the largest rhyme share."""
        flat = int(self.rhyme.argmax())
        return divmod(flat, self.rhyme.shape[1])

    def table(self) -> Table:
        """One row per head: rhyme share, control share; then the uniform share. A ``Table``
        (``mh.show_table`` shows it; ``str()`` is its text)."""
        head = say("head", "头")
        rows: list[list[object]] = [
            [
                say(f"block {layer + 1} {head} {h + 1}", f"块 {layer + 1} {head} {h + 1}"),
                f"{self.rhyme[layer, h]:.2f}",
                f"{self.control[layer, h]:.2f}",
            ]
            for layer in range(self.rhyme.shape[0])
            for h in range(self.rhyme.shape[1])
        ]
        rows.append([say("uniform", "均匀"), f"{self.uniform:.2f}", ""])
        header = ["", say("at the rhyme", "押韵处"), say("elsewhere", "其他位置")]
        return Table(rows, header, align="<>>")

    def __repr__(self) -> str:
        return str(self.table())


def _line_above_queries(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(query, key) pairs: at the rhyme, and elsewhere in the line (the control)."""
    rhyme: list[tuple[int, int]] = []
    control: list[tuple[int, int]] = []
    starts: list[int] = []
    lines: list[str] = []
    position = 0
    for line in text.split("\n"):
        starts.append(position)
        lines.append(line)
        position += len(line) + 1
    for i in range(1, len(lines)):
        above, line = lines[i - 1], lines[i]
        if len(line) < 3 or len(line) != len(above):
            continue  # an empty line, or lines of other lengths: no place-for-place match
        end = starts[i] + len(line) - 2  # the last character before 。
        for predicted in range(starts[i] + 1, end + 1):
            if line[predicted - starts[i]] in PUNCTUATION:
                continue
            pair = (predicted - 1, predicted - len(line) - 1)  # (query, key one line above)
            (rhyme if predicted == end else control).append(pair)
    return rhyme, control


@torch.no_grad()
def rhyme_focus(model: CharTransformer, tokenizer: CharTokenizer, poems: list[str]) -> RhymeFocus:
    """Measure, per head, how much the query that predicts a rhyme looks at the rhyme above.

    ``poems``: whole poems, each read from its start as the model writes one (``"\\n" +
    poem.text``). Averaged over every rhyme query of every poem; the control over every other
    predicted character of the couplet-lines, at the same distance back (one line).
    """
    if isinstance(poems, str) or not poems or not all(isinstance(p, str) for p in poems):
        raise TypeError("poems must be a non-empty list of str")
    rhyme_sum = control_sum = None
    uniform, num_rhyme, num_control = 0.0, 0, 0
    for text in poems:
        rhyme, control = _line_above_queries(text)
        if not rhyme:
            continue
        weights = attention_on(model, tokenizer, text).float()  # (L, h, T, T)
        r = torch.stack([weights[..., q, k] for q, k in rhyme], dim=-1)  # (L, h, n_rhyme)
        c = torch.stack([weights[..., q, k] for q, k in control], dim=-1)  # (L, h, n_control)
        rhyme_sum = r.sum(-1) if rhyme_sum is None else rhyme_sum + r.sum(-1)
        control_sum = c.sum(-1) if control_sum is None else control_sum + c.sum(-1)
        uniform += sum(1 / (q + 1) for q, _ in rhyme)
        num_rhyme += len(rhyme)
        num_control += len(control)
    if rhyme_sum is None or control_sum is None:
        raise ValueError("poems must hold at least one poem of two couplet-lines of one length")
    return RhymeFocus(
        rhyme_sum / num_rhyme, control_sum / num_control, uniform / num_rhyme, num_rhyme
    )


@dataclass(frozen=True)
class RhymeOdds:
    """How much probability the model puts on a rhyming character where a rhyme is due.

    ``model``: at each query that predicts a couplet's last character, the model's total
    probability on the characters of the rhyme group of the couplet end above, averaged.
    ``base``: the same for a writer who knows how often each rhyme group ends a couplet in the
    training poems, but not the line above (the group's share of the training poems' couplet ends).
    """

    model: float
    base: float
    num_queries: int

    def __repr__(self) -> str:
        return say(
            f"probability on a rhyming character where a rhyme is due: model {self.model:.2f}, "
            f"knowing only how often each rhyme group ends a couplet {self.base:.2f} "
            f"({self.num_queries} rhymes)",
            f"该押韵处落在同韵字上的概率：模型 {self.model:.2f}，"
            f"只知道各韵辙收尾频率时 {self.base:.2f}（共 {self.num_queries} 处韵脚）",
        )


@torch.no_grad()
def rhyme_odds(
    model: CharTransformer, tokenizer: CharTokenizer, poems: list[str], training_text: str
) -> RhymeOdds:
    """Measure ``RhymeOdds`` on ``poems`` (each read from its start, ``"\\n" + poem.text``)."""
    from .rhyme import line_end, rhyme_class

    if isinstance(poems, str) or not poems or not all(isinstance(p, str) for p in poems):
        raise TypeError("poems must be a non-empty list of str")
    if not isinstance(training_text, str):
        raise TypeError(f"training_text must be a str, got {type(training_text).__name__}")
    groups = [rhyme_class(ch) if len(ch) == 1 else None for ch in tokenizer.chars]
    ends = [rhyme_class(e) for e in map(line_end, training_text.split("\n")) if e is not None]
    known = [g for g in ends if g is not None]
    share = {g: known.count(g) / len(known) for g in set(known)}
    members = {
        g: torch.tensor([i for i, c in enumerate(groups) if c == g]) for g in share
    }  # group -> ids
    was_training = model.training
    model.eval()
    total = base = 0.0
    count = 0
    try:
        for text in poems:
            rhyme, _ = _line_above_queries(text)
            if not rhyme:
                continue
            probs = model(tokenizer.encode(text)[None])[0].softmax(dim=-1)  # (T, vocab)
            for query, key in rhyme:
                group = rhyme_class(text[key])
                if group not in members:
                    continue
                total += float(probs[query, members[group]].sum())
                base += share[group]
                count += 1
    finally:
        model.train(was_training)
    if not count:
        raise ValueError("poems must hold at least one rhyme of two couplet-lines of one length")
    return RhymeOdds(total / count, base / count, count)
