"""A tiny character-level language model (字符级语言模型) that writes Tang poems (lesson 12).

* ``text`` -- Tang regular verse shipped in data/: ``load_verse``, ``poem_text``, ``load_song_ci``;
* ``baselines`` -- ``CountTable``: unigram, bigram and trigram count tables, the bar to clear;
* ``tokenizer`` -- ``CharTokenizer``: one token per character;
* ``model`` -- ``CharTransformer`` (embeddings, ``TransformerBlock`` s around the course's
  ``MultiHeadAttention``, ``FeedForward``, layer norms, LM head);
* ``training`` -- ``CharLMConfig``, ``train_char_lm`` (seeded, one thread, tqdm; ``backend="sdpa"``
  for the fast path of ``make train-demo``);
* ``generation`` -- ``generate`` with or without one ``KVCache`` per block, ``next_token_probs``;
* ``device`` -- ``check_device``: CPU by default, CUDA or Apple MPS when present (training and
  generation);
* ``checkpoint`` -- ``save_checkpoint``, ``load_checkpoint`` (the shipped data/char_lm.pt);
* ``analysis`` -- ``attention_on``, ``head_focus``, ``focus_on_texts``: which heads look at the
  previous character, the line start, the punctuation -- measured; ``rhyme_focus``: which heads,
  about to write a rhyme, look at the rhyme of the line above; ``copied_share``: how much of a
  generated text is copied from the training text;
* ``verse`` -- ``verse_shape``: half-lines of 5 or 7 characters, lines of two equal halves, and
  8-character pieces copied from the training text, measured on a generated text;
  ``write_poems`` (each started as a new poem; ``fresh_rhymes``: the sampling rule of
  ``fresh_rhyme_bans``, no rhyme character twice in a poem; ``fresh_chars``: the stricter rule of
  ``fresh_char_bans``, no character twice), ``poem_form``, ``score_poems``: complete poems, rhyme
  and copied lines, measured; ``repeated_rhyme_share``: poems that end two couplet-lines with one
  character; ``repeated_char_share``: poems that write a character twice;
* ``rhyme`` -- ``rhyme_class`` (a character's rhyme group from its modern pinyin final, via
  ``pypinyin``), ``rhyme_share`` (adjacent couplet-line ends that rhyme), ``chance_rhyme_share``,
  ``tone_class`` and ``tone_opposition_share`` (平仄, modern tones);
* ``char_axis``, ``char_table``, ``CharAxis``, ``find_cjk_font``: heatmap labels with or without a
  Chinese font; they live with the other font code in ``mhsa_helpers.ui.fonts`` and are loaded
  from there on first use.

Only torch is imported here; the label names import the UI and ``training`` tqdm when used.
"""

from .analysis import (
    CATEGORIES,
    HeadFocus,
    RhymeFocus,
    RhymeOdds,
    attention_on,
    copied_share,
    focus_on_texts,
    head_focus,
    rhyme_focus,
    rhyme_odds,
)
from .baselines import CountTable
from .checkpoint import DEMO_CHECKPOINT, CharLMCheckpoint, load_checkpoint, save_checkpoint
from .generation import generate, next_token_probs
from .model import BlockParts, CharTransformer, FeedForward, TransformerBlock
from .rhyme import (
    RHYME_GROUPS,
    RhymePair,
    chance_rhyme_share,
    describe_pair,
    line_end,
    rhyme_class,
    rhyme_pairs,
    rhyme_share,
    tone_class,
    tone_opposition_share,
)
from .text import PUNCTUATION, Poem, Verse, load_ablation, load_song_ci, load_verse, poem_text
from .tokenizer import UNKNOWN, CharTokenizer
from .training import (
    CharLMConfig,
    CharLMRun,
    TextData,
    learning_rate,
    poem_starts,
    text_data,
    train_char_lm,
    training_attention,
    validation_loss,
    verse_data,
)
from .verse import (
    PoemScore,
    VerseShape,
    WrittenPoem,
    copied_lines,
    fresh_char_bans,
    fresh_char_rule,
    fresh_rhyme_bans,
    fresh_rhyme_rule,
    poem_form,
    repeated_char_share,
    repeated_rhyme_share,
    score_poems,
    score_table,
    verse_lines,
    verse_shape,
    write_poems,
)

__all__ = [
    "CATEGORIES",
    "DEMO_CHECKPOINT",
    "PUNCTUATION",
    "RHYME_GROUPS",
    "UNKNOWN",
    "BlockParts",
    "CharAxis",
    "CharLMCheckpoint",
    "CharLMConfig",
    "CharLMRun",
    "CharTokenizer",
    "CharTransformer",
    "CountTable",
    "FeedForward",
    "HeadFocus",
    "Poem",
    "PoemScore",
    "RhymeFocus",
    "RhymeOdds",
    "RhymePair",
    "TextData",
    "TransformerBlock",
    "Verse",
    "VerseShape",
    "WrittenPoem",
    "attention_on",
    "chance_rhyme_share",
    "char_axis",
    "char_table",
    "copied_lines",
    "copied_share",
    "describe_pair",
    "find_cjk_font",
    "focus_on_texts",
    "fresh_char_bans",
    "fresh_char_rule",
    "fresh_rhyme_bans",
    "fresh_rhyme_rule",
    "generate",
    "head_focus",
    "learning_rate",
    "line_end",
    "load_ablation",
    "load_checkpoint",
    "load_song_ci",
    "load_verse",
    "next_token_probs",
    "poem_form",
    "poem_starts",
    "poem_text",
    "repeated_char_share",
    "repeated_rhyme_share",
    "rhyme_class",
    "rhyme_focus",
    "rhyme_odds",
    "rhyme_pairs",
    "rhyme_share",
    "save_checkpoint",
    "score_poems",
    "score_table",
    "text_data",
    "tone_class",
    "tone_opposition_share",
    "train_char_lm",
    "training_attention",
    "validation_loss",
    "verse_data",
    "verse_lines",
    "verse_shape",
    "write_poems",
]

# Heatmap labels are UI code (mhsa_helpers.ui.fonts); importing it here would load matplotlib
# with the model, so these names are loaded on first use.
_FROM_UI_FONTS = ("CharAxis", "char_axis", "char_table", "find_cjk_font")


def __getattr__(name: str) -> object:
    """``lm.char_axis`` and the other label names, from ``mhsa_helpers.ui.fonts`` on first use."""
    if name in _FROM_UI_FONTS:
        from ..ui import fonts

        value = getattr(fonts, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM_UI_FONTS})
