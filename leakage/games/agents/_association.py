"""Association tables: how strongly each word of a clue vocabulary points to each candidate.

Scripted agents must decide in microseconds (the engine runs hundreds of games a second),
so they never call a backend per move: a card's table is computed once, by any likelihood
backend (the co-occurrence backend by default), and cached.

The clue vocabulary of a card is drawn from WordNet 3.0, the same files the default corpus
indexes: for each candidate, the content words of the synsets that mention it (lemmas,
glosses, related lemmas), the ``per_candidate`` most frequent. Words that give a candidate
away (the same first four letters as one of its words, ``swimmer`` for ``Swimming``) are
left out, as a player would leave them out.
"""

from __future__ import annotations

import hashlib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from leakage.backends.base import LikelihoodBackend
from leakage.corpus import STOPWORDS
from leakage.posterior import normalize_log

_ALPHA = re.compile(r"[a-z]+")


def fold(text: str) -> str:
    """Lower case ASCII words joined by single spaces (diacritics and apostrophes dropped)."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return " ".join(_ALPHA.findall(plain.casefold().replace("'", "")))


def gives_away(clue: str, word: str) -> bool:
    """True when ``clue`` shares a four-letter start with one of ``word``'s words."""
    c = fold(clue)
    return any(c[:4] == w[:4] for w in fold(word).split() if len(w) >= 3) or c in fold(word)


@lru_cache(maxsize=1)
def _wordnet_docs() -> tuple[str, ...]:
    from leakage.corpus import wordnet_documents

    return tuple(f" {fold(d)} " for d in wordnet_documents())


def clue_vocabulary(candidates: Sequence[str], *, per_candidate: int = 25) -> list[str]:
    """The clue words scripted agents choose from for these candidates (see module doc)."""
    docs = _wordnet_docs()
    vocab: dict[str, None] = {}
    for cand in candidates:
        phrase = fold(cand)
        keys = [phrase] + ([phrase.rsplit(" ", 1)[-1]] if " " in phrase else [])
        counts: Counter[str] = Counter()
        for key in keys:
            needle = f" {key} "
            for d in docs:
                if needle in d:
                    counts.update(w for w in d.split() if len(w) >= 3 and w not in STOPWORDS)
            if counts:
                break
        kept = [w for w, _ in counts.most_common() if not any(gives_away(w, c) for c in candidates)]
        vocab.update(dict.fromkeys(kept[:per_candidate]))
    return sorted(vocab)


@dataclass
class AssociationTable:
    """``loglik[i, j] = log P(clue_i | candidate_j)`` and the posterior it implies per clue."""

    candidates: tuple[str, ...]
    clues: tuple[str, ...]
    loglik: NDArray[np.float64]
    backend: LikelihoodBackend | None = None
    category: str | None = None
    posterior: NDArray[np.float64] = field(init=False)
    """``P(candidate_j | clue_i)`` under a uniform prior (each row sums to 1)."""
    _row: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.loglik = np.asarray(self.loglik, dtype=np.float64)
        if self.loglik.shape != (len(self.clues), len(self.candidates)):
            raise ValueError("loglik must be clues x candidates")
        self.posterior = normalize_log(self.loglik) if len(self.clues) else self.loglik
        self._row = {fold(c): i for i, c in enumerate(self.clues)}
        self._extra: dict[str, NDArray[np.float64]] = {}

    def column(self, word: str) -> int:
        return self.candidates.index(word)

    def rows(self, clues: Sequence[str]) -> NDArray[np.float64]:
        """log P(clue | candidate) of any clues; clues outside the vocabulary are scored
        by the backend once and remembered (zeros, i.e. no evidence, without a backend)."""
        out = np.zeros((len(clues), len(self.candidates)))
        todo = []
        for i, c in enumerate(clues):
            key = fold(c)
            j = self._row.get(key)
            if j is not None:
                out[i] = self.loglik[j]
            elif key in self._extra:
                out[i] = self._extra[key]
            else:
                todo.append(i)
        if todo and self.backend is not None:
            fresh = self.backend.loglik(
                [clues[i] for i in todo], list(self.candidates), category=self.category
            )
            for i, row in zip(todo, fresh, strict=True):
                self._extra[fold(clues[i])] = row
                out[i] = row
        return out


def build_table(
    candidates: Sequence[str],
    backend: LikelihoodBackend,
    *,
    category: str | None = None,
    vocabulary: Sequence[str] | None = None,
    per_candidate: int = 25,
) -> AssociationTable:
    """Score a clue vocabulary (default: :func:`clue_vocabulary`) against the candidates."""
    clues = (
        list(vocabulary)
        if vocabulary is not None
        else clue_vocabulary(candidates, per_candidate=per_candidate)
    )
    loglik = (
        backend.loglik(clues, list(candidates), category=category)
        if clues
        else np.zeros((0, len(candidates)))
    )
    return AssociationTable(tuple(candidates), tuple(clues), loglik, backend, category)


class AssociationTables:
    """Tables per candidate list, built on first use with one backend and kept in memory,
    and in ``cache_dir`` (one ``.npz`` per card, keyed by the backend's settings, the
    candidates and the vocabulary size) when one is given."""

    def __init__(
        self,
        backend: LikelihoodBackend,
        *,
        per_candidate: int = 25,
        cache_dir: str | Path | None = None,
    ) -> None:
        self.backend = backend
        self.per_candidate = per_candidate
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self._tables: dict[tuple[str, ...], AssociationTable] = {}

    def _path(self, key: tuple[str, ...], category: str | None) -> Path | None:
        if self.cache_dir is None:
            return None
        ident = json.dumps(
            [self.backend.info(), key, category, self.per_candidate], sort_keys=True, default=str
        )
        return self.cache_dir / f"table-{hashlib.sha256(ident.encode()).hexdigest()[:24]}.npz"

    def get(self, candidates: Sequence[str], category: str | None = None) -> AssociationTable:
        key = tuple(candidates)
        table = self._tables.get(key)
        if table is not None:
            return table
        path = self._path(key, category)
        if path is not None and path.exists():
            with np.load(path, allow_pickle=False) as z:
                table = AssociationTable(
                    key, tuple(str(c) for c in z["clues"]), z["loglik"], self.backend, category
                )
        else:
            table = build_table(
                key, self.backend, category=category, per_candidate=self.per_candidate
            )
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp.npz")
                np.savez(tmp, clues=np.array(table.clues, dtype=str), loglik=table.loglik)
                tmp.replace(path)
        self._tables[key] = table
        return table

    def for_word(self, word: str, category: str | None = None) -> AssociationTable:
        """The table of a built card that holds ``word`` (SpyGame agents know only theirs)."""
        for key, table in self._tables.items():
            if word in key and (category is None or table.category == category):
                return table
        from leakage.games._cards import load_cards

        for card in load_cards():
            if word in card.words and (category is None or card.category == category):
                return self.get(card.words, card.category)
        return self.get((word,), category)
