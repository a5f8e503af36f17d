"""The package's Chinese strings use the glossary's terms, Chinese words and few colons.

Every Chinese text of a ``tr``/``say``/``Text``/``figure_text`` call in ``mhsa_helpers/`` (read
from the source with the AST reading of ``test_i18n_messages``) is checked for

* (a) a known wrong variant of a term: each ``"avoid"`` list of ``data/glossary.json`` (on a term,
  or in its top-level ``"avoid"`` list), an ASCII ``->`` (Chinese uses ``→``), a head numbered
  from 0 (the lessons count heads from 1: 头 1 is index 0), emphasis in quotation marks
  (“之前”: plain text has no bold, so the sentence says it), 一个 int (一个整数), the
  English exercise marker ``# YOUR CODE HERE`` (the Chinese lessons write ``# 在这里写代码``);
* (b) an English word that is neither a glossary English term, code (inside backticks, a dotted
  name, snake_case, a ``{placeholder}``, a name the package's own code uses, a Python keyword or
  builtin) nor in ``ALLOWED`` below. ``int`` and ``float`` are not allowed: 整数, 浮点数;
* (c) full-width colons: at most one per message on average, and no message with three or more.

Each report names the offending string by its module and function (no line numbers).
"""

from __future__ import annotations

import ast
import builtins
import json
import keyword
import re

from test_i18n_messages import BILINGUAL_CALLS, PACKAGE, SOURCES, _literal

GLOSSARY = json.loads((PACKAGE.parent / "data" / "glossary.json").read_text(encoding="utf-8"))

#: English words a Chinese sentence may use as they are, each for a reason.
ALLOWED = {
    # names of things that have no Chinese name in the course
    "PyTorch",
    "Hugging",
    "Face",
    "GPT",
    "XL",  # GPT-2 XL
    "GELU",
    "Transformer",
    # the open models and the parts lesson 13 names as they are written
    "Llama",
    "Qwen",
    "RoPE",
    "RMSNorm",
    "LayerNorm",
    "SwiGLU",
    "SiLU",
    "ReLU",
    # abbreviations the lessons use in both editions
    "SDPA",
    "GQA",
    "MQA",
    "MHA",
    "KV",
    "QKV",
    "FLOP",
    # units and the values a tensor prints
    "GiB",
    "GB",
    "NaN",
    "nan",
    "inf",
    # the words of the book's sentence "Your journey starts with one step", named as tokens
    "Your",
    "journey",
    "starts",
    "with",
    "one",
    "step",
}

#: Code words that are English words a Chinese sentence must translate.
NOT_CODE = {"int", "float"}


def _package_names() -> set[str]:
    names: set[str] = set()
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.arg):
                names.add(node.arg)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    return names


CODE_WORDS = (_package_names() | set(dir(builtins)) | set(keyword.kwlist)) - NOT_CODE
GLOSSARY_WORDS = {w for t in GLOSSARY["terms"] for w in re.findall(r"[A-Za-z]+", t["en"])}

#: (wrong, right) pairs: every "avoid" of the glossary, on a term or in the top-level list.
AVOID = [(bad, t["zh"]) for t in GLOSSARY["terms"] for bad in t.get("avoid", [])] + [
    (bad, entry["use"]) for entry in GLOSSARY.get("avoid", []) for bad in entry["avoid"]
]
RULES = {
    "ASCII -> (write →)": re.compile(r"->"),
    "a head numbered from 0 (头 1 is index 0)": re.compile(r"第\s*0\s*个头|头\s*0(?![\d.])"),
    "emphasis in quotation marks (rephrase)": re.compile(r"“[\u4e00-\u9fff]{1,4}”"),
    "int or float for 整数 or 浮点数": re.compile(r"一个 ?(?:int|float)\b"),
    "the English exercise marker (the Chinese lessons write # 在这里写代码)": re.compile(
        r"YOUR CODE HERE"
    ),
}

CJK = re.compile(r"[\u3400-\u9fff]")
CODE_SPANS = [
    re.compile(r"`[^`]*`"),  # code in backticks
    re.compile(r"\{[^}]*\}"),  # placeholders
    re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+"),  # dotted names
    re.compile(r"[A-Za-z0-9]*_[A-Za-z0-9_]*"),  # snake_case
    re.compile(r"[A-Za-z]+[0-9][A-Za-z0-9]*"),  # float32, V2, d_k-like names with digits
    re.compile(r"[A-Za-z_][A-Za-z0-9_]*\("),  # a call: sqrt(d_k), check_wrapper_class(
    re.compile(r"\b[A-Z][a-z]+[A-Z][A-Za-z0-9]*"),  # a CamelCase class name: MyWrapper
    re.compile(r"https?://\S+"),
]


def _chinese_texts() -> list[tuple[str, str]]:
    """(module::function, the Chinese text) of every bilingual call with a literal Chinese text."""
    found = []
    for where, call in BILINGUAL_CALLS:
        zh = _literal(call.args[1]) if len(call.args) >= 2 else None
        if zh is not None and CJK.search(zh):
            found.append((where, zh))
    return found


TEXTS = _chinese_texts()


def english_words(zh: str) -> list[str]:
    """The English words of a Chinese text that are not code, glossary terms or allowed."""
    for span in CODE_SPANS:
        zh = span.sub(" ", zh)
    words = re.findall(r"[A-Za-z]{2,}", zh)
    return [w for w in words if w not in CODE_WORDS | GLOSSARY_WORDS | ALLOWED]


def wrong_variants(zh: str) -> list[str]:
    found = [f"{bad} (write {right})" for bad, right in AVOID if bad in zh]
    return found + [what for what, rule in RULES.items() if rule.search(zh)]


def test_there_are_chinese_texts_to_check():
    assert len(TEXTS) > 500
    assert ("信息泄漏", "信息泄露") in AVOID and ("约定测试", "契约测试") in AVOID


def test_no_wrong_variant_of_a_term():
    bad = [f"{where}: {found}: {zh}" for where, zh in TEXTS for found in wrong_variants(zh)]
    assert bad == [], "\n".join(["wrong variants of terms:", *bad])


def test_no_english_word_in_the_chinese_texts():
    bad = [f"{where}: {words}: {zh}" for where, zh in TEXTS if (words := english_words(zh))]
    assert bad == [], "\n".join(["English words in Chinese texts:", *bad])


def test_few_full_width_colons():
    counts = [(where, zh, zh.count("：")) for where, zh in TEXTS]
    many = [f"{where}: {n} colons: {zh}" for where, zh, n in counts if n >= 3]
    assert many == [], "\n".join(["messages with 3 or more colons:", *many])
    assert sum(n for *_, n in counts) <= len(counts), "more than one colon per message"


def test_the_checks_find_what_they_look_for():
    assert english_words("这是一个 bug，用 `x.view(1)`、self.W_query 和 {kind}") == ["bug"]
    assert english_words("需要一个 int") == ["int"]
    assert english_words("softmax 与 dropout 的 forward") == []
    assert wrong_variants("未来的信息泄漏进来了：目标 -> 源，第 0 个头，“之前”") == [
        "信息泄漏 (write 信息泄露)",
        "ASCII -> (write →)",
        "a head numbered from 0 (头 1 is index 0)",
        "emphasis in quotation marks (rephrase)",
    ]
    assert wrong_variants("图中的“头 2”") == []
