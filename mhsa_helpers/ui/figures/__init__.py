"""Conceptual figures drawn from a lesson's own tensors, so a picture never disagrees with the code.

* ``basics`` -- lessons 01-03: dot products, softmax, Q/K/V projections, the causal mask;
* ``heads`` -- lessons 04-06: dropout, heads side by side, one matrix split into heads;
* ``production`` -- lessons 09-10: fused QKV, GQA's shared K/V heads, the KV cache;
* ``padding`` -- lesson 11: a padded batch, the key padding mask joined with the causal mask;
* ``char_lm`` -- lesson 12: the character model's Transformer block, drawn with its real sizes.

Every function returns a matplotlib ``Figure`` (show it with ``plt.show()``) with titled, labelled
axes; ``tests/`` checks that each figure has the axes and labels it promises.
"""

from . import basics, char_lm, heads, padding, production
from .basics import *  # noqa: F403
from .char_lm import *  # noqa: F403
from .heads import *  # noqa: F403
from .padding import *  # noqa: F403
from .production import *  # noqa: F403

__all__ = [
    *basics.__all__,
    *heads.__all__,
    *padding.__all__,
    *production.__all__,
    *char_lm.__all__,
]
