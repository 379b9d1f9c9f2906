"""A clue's own forms in a vocabulary: the words an open-vocabulary guess leaves out with it.

An embedding model puts a word next to its plural, its derivations and the words that share
its letters ("racket" -> "rackets", "racketeering", "rack"; "net" -> "nets", "netting",
"network"): for ``racket`` + ``net``, those filled the top nine guesses and "tennis" ranked
23rd of 48,030 (issue 39). An adversary does not guess the clue back in another form, so
these words are left out of the ranking with the clue itself.

A vocabulary word ``w`` is a *form* of a one-word clue ``c`` (both compared case-folded;
clues and words that are not alphabetic single words have no forms) when one of:

1. **same stem**: the Snowball English stemmer (Porter 2; ``snowballstemmer``) gives both
   the same stem: plurals, inflections, most derivations (``nets``, ``netting``,
   ``racketeering``);
2. **a stem that begins the other word**: the stem of one, at least ``MIN_PREFIX`` letters
   long, begins the other (``rack`` and ``racking`` for ``racket``; ``waveform`` for
   ``wave``);
3. **a compound**: one word is the other (at least ``MIN_CLUE`` letters) followed or
   preceded by a vocabulary word of at least ``MIN_PART`` letters (``network`` = net +
   work, ``ethernet`` = ether + net, ``streetcar``).

Rules 2 and 3 also leave out some words that only share letters by chance ("carp" for
"carpet", "cartoon" for "car": car + toon, "justice" for "ice": just + ice). They are left
out on purpose: a model that reads words as sub-word pieces scores them high for the shared
letters, not for their meaning.

A clue of several words ("A piece of furniture with doors and shelves.") has as forms each
of its alphabetic words and their inflections (rule 1 only: rules 2 and 3 over every word of
a sentence would leave out too many words by chance). A player who describes a secret does
not say it (in Taboo the rules forbid it, and in the Chameleon or Undercover a player who did
would give the game away), so a word the clue already says is not the secret; left in, such
words fill the top guesses ("A measure of the value or worth of something." -> worth, value,
valuation, price; the target, rate, 261st). On clembench's Taboo first clues this raised
``leakage guess``'s top-1 from 0.032 to 0.116 and its top-10 from 0.265 to 0.342
(docs/benchmarks.md, "Taboo first clues over the open vocabulary").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cached_property

MIN_PREFIX = 4
"""Rule 2: the shortest stem that counts as beginning another word."""
MIN_CLUE = 3
"""Rule 3: the shortest word that a compound is made of with another."""
MIN_PART = 4
"""Rule 3: the shortest vocabulary word joined to it (3 letters left out too many words by
chance: "carpet" = car + pet, "bonnet" = bon + net)."""


_WORD = re.compile(r"[^\W\d_]+")
"""An alphabetic word of a clue of several words."""


def _stemmer() -> object:
    try:
        import snowballstemmer
    except ImportError as err:  # pragma: no cover - a dependency of the embedding extra
        from leakage.errors import BackendUnavailable

        raise BackendUnavailable(
            "leaving out a clue's forms needs snowballstemmer: pip install 'leakage[embedding]'"
        ) from err
    return snowballstemmer.stemmer("english")


class WordForms:
    """The forms of clues among the words of one vocabulary (see the module docstring).

    Built once per vocabulary (its words' stems: about 0.3 s for 48,032 words); ``of(clue)``
    then returns the rows of the clue's forms, the clue's own rows not included.
    """

    def __init__(self, words: Sequence[str]) -> None:
        self.words = list(words)
        self._folded = [w.casefold() for w in self.words]

    @cached_property
    def _stem(self) -> object:
        return _stemmer()

    @cached_property
    def _stems(self) -> list[str]:
        return list(self._stem.stemWords(self._folded))  # type: ignore[attr-defined]

    @cached_property
    def _by_word(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for i, w in enumerate(self._folded):
            out.setdefault(w, []).append(i)
        return out

    @cached_property
    def _by_stem(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for i, s in enumerate(self._stems):
            out.setdefault(s, []).append(i)
        return out

    def stem(self, word: str) -> str:
        """The Snowball English stem of ``word`` (case-folded)."""
        return str(self._stem.stemWord(word.casefold()))  # type: ignore[attr-defined]

    def _is_word(self, text: str) -> bool:
        return len(text) >= MIN_PART and text in self._by_word

    def inflections(self, word: str) -> list[int]:
        """Rows of the words with the same Snowball stem as ``word`` (rule 1 only: plurals,
        inflections, most derivations), the word itself not included."""
        w = word.strip().casefold()
        if not w.isalpha():
            return []
        own = set(self._by_word.get(w, []))
        return [r for r in self._by_stem.get(self.stem(w), []) if r not in own]

    def of(self, clue: str) -> list[int]:
        """Rows of the vocabulary words that are forms of ``clue`` (not the clue itself), in
        index order. A clue of several words: each of its alphabetic words and their
        inflections (``words_of``); none for a clue that is neither."""
        c = clue.strip().casefold()
        if not c.isalpha():
            return self.words_of(c)
        sc = self.stem(c)
        rows = set(self._by_stem.get(sc, []))
        for i, (w, sw) in enumerate(zip(self._folded, self._stems, strict=True)):
            if i in rows or w == c:
                continue
            begins = (len(sw) >= MIN_PREFIX and c.startswith(sw)) or (
                len(sc) >= MIN_PREFIX and w.startswith(sc)
            )
            if begins or (len(c) >= MIN_CLUE and len(w) >= MIN_CLUE and self._compound(w, c)):
                rows.add(i)
        rows.difference_update(self._by_word.get(c, []))
        return sorted(rows)

    def words_of(self, clue: str) -> list[int]:
        """Rows of each alphabetic word of a clue of several words and of their inflections
        (rule 1), in index order; none for a clue of fewer than two words."""
        tokens = _WORD.findall(clue)
        if len(tokens) < 2:
            return []
        rows: set[int] = set()
        for t in {t.casefold() for t in tokens}:
            rows.update(self._by_word.get(t, []))
            rows.update(self._by_stem.get(self.stem(t), []))
        return sorted(rows)

    def _compound(self, w: str, c: str) -> bool:
        """Whether one of ``w``, ``c`` is the other joined to a vocabulary word (rule 3)."""
        long, short = (w, c) if len(w) > len(c) else (c, w)
        if long.startswith(short) and self._is_word(long[len(short) :]):
            return True
        return long.endswith(short) and self._is_word(long[: -len(short)])
