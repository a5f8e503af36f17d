"""The course's shared example data, loaded from ``data/`` instead of retyped in every notebook.

* ``load_journey()`` -- the book's six tokens "Your journey starts with one step" embedded in 3-D,
  as a ``Journey`` with ``.words``, ``.inputs`` (6, 3), ``.batch`` (2, 6, 3) and ``.reference`` (the
  numbers the book prints, as tensors).
* ``load_glossary()`` -- key terms in English and Chinese (术语表).

The files live in the repository's top-level ``data/`` folder, which the build installs as the
package ``mhsa_helpers.course_data`` (``pyproject.toml`` maps one onto the other), so they are found
with ``importlib.resources`` in a checkout, an editable install, a wheel or a zip alike.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable

import torch

__all__ = [
    "Journey",
    "book_inputs",
    "book_words",
    "data_file",
    "load_glossary",
    "load_journey",
    "reference",
]

DATA_PACKAGE = "mhsa_helpers.course_data"


def data_file(name: str) -> Traversable:
    """The course data file ``name`` (e.g. "journey.json"), wherever the package is installed."""
    return resources.files(DATA_PACKAGE).joinpath(name)


@dataclass(frozen=True)
class Journey:
    """The book's running example."""

    sentence: str
    words: list[str]
    inputs: torch.Tensor  # (6, 3)
    reference: dict[str, torch.Tensor] = field(repr=False)

    @property
    def batch(self) -> torch.Tensor:
        """The book's batch: the sentence twice, (2, 6, 3)."""
        return torch.stack((self.inputs, self.inputs), dim=0)


def _read_json(name: str) -> dict:
    path = data_file(name)
    if not path.is_file():
        raise FileNotFoundError(
            f"course data file {name!r} is missing from {DATA_PACKAGE}: reinstall the package "
            "(pip install .) from the repository root"
        )
    return json.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _journey_raw() -> dict:
    return _read_json("journey.json")


def load_journey() -> Journey:
    """Return a fresh ``Journey`` (new tensors each call, so lessons may modify them)."""
    raw = _journey_raw()
    return Journey(
        sentence=raw["sentence"],
        words=list(raw["words"]),
        inputs=torch.tensor(raw["embeddings"], dtype=torch.float32),
        reference={k: torch.tensor(v, dtype=torch.float32) for k, v in raw["reference"].items()},
    )


def book_inputs() -> torch.Tensor:
    """The (6, 3) embeddings of "Your journey starts with one step"."""
    return load_journey().inputs


def book_words() -> list[str]:
    """["Your", "journey", "starts", "with", "one", "step"]."""
    return load_journey().words


def reference(name: str) -> torch.Tensor:
    """One of the book's printed results (rounded to 4 decimals), by name; see data/journey.json."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got name={name!r} ({type(name).__name__})")
    refs = _journey_raw()["reference"]
    if name not in refs:
        raise KeyError(f"no reference named {name!r}; known: {', '.join(sorted(refs))}")
    return torch.tensor(refs[name], dtype=torch.float32)


def load_glossary() -> list[dict[str, str]]:
    """Key terms as dicts with 'en', 'zh' and 'note'."""
    return list(_read_json("glossary.json")["terms"])
