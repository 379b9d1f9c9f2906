"""What the open seats (``spy``, ``civilian``) read with: a vocabulary, the pair prior and the
scoring backend split into a cheap and a costly tier.

**Two tiers.** The calibrated ensemble's statement fit pools co-occurrence, the embedding and
the LLM listener; asking the listener about every word of a shortlist of a hundred per
statement costs tens of seconds a game on a CPU. So the members that load no model
(``WORD_MEMBERS``: co-occurrence counts, the embedding read from the vocabulary index)
re-rank the whole shortlist, and the whole pool (every member with a statement weight) only
the ``fine`` most probable words after each statement; those words' mass is shared out
again by the whole pool, the rest keep theirs, so P stays a distribution over the vocabulary
and ranks stay exact for it (as the shortlist does one stage up, ``leakage.vocab``). A
backend that is not an ensemble, or an ensemble of cheap members only, re-ranks the shortlist
in one tier. The ensemble is always read with its ``statement`` fit (the item type of a
statement against a pair): over a shortlist it would otherwise take the card fit.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leakage.seats._prior import PairPrior, read_pair_prior
from leakage.vocab import (
    DEFAULT_WORDS,
    WORD_MEMBERS,
    IndexEmbedding,
    OpenVocabulary,
    ShortlistPosterior,
)

SEAT_SHORTLIST = 100
"""Words re-ranked per statement by the cheap tier (``benchmarks.studies.seats``)."""
SEAT_FINE = 30
"""Words re-ranked per statement by the whole pool: the fewest that met the spy seat's targets
(top-10 >= 0.50, median rank <= 10) on the CK-Arena dev sample at >= 1 game a second
(``python -m benchmarks seat_speed --paths tiers-30 --fine 30``; 10, 20 did not)."""
SEAT_TAU = 0.25
"""Stage 1's temperature for statements, fitted on the CK-Arena dev games
(``python -m benchmarks.studies.seats``)."""


@dataclass
class SeatReader:
    """A vocabulary, the pair prior, the cheap tier's shortlist search and the whole pool."""

    vocab: OpenVocabulary
    prior: PairPrior
    search: ShortlistPosterior
    """Stage 1 and the cheap tier (``search.backend``)."""
    fine: Any | None
    """The whole pool, re-ranking the ``fine_words`` best words per statement (None: one tier)."""
    fine_words: int
    vocabulary: str

    def info(self) -> dict[str, Any]:
        backend = self.search.backend
        return {
            "seat_vocabulary": self.vocabulary,
            "seat_vocabulary_words": len(self.vocab.index),
            "seat_shortlist": self.search.shortlist,
            "seat_tau": self.search.tau,
            "seat_rerank": _members(backend),
            "seat_fine": None if self.fine is None else _members(self.fine),
            "seat_fine_words": None if self.fine is None else self.fine_words,
            "seat_pair_prior": {"beta": self.prior.beta, "gamma": self.prior.gamma},
        }


def _members(backend: Any) -> str:
    members = getattr(backend, "members", None)
    return ", ".join(members) if members else str(getattr(backend, "name", "backend"))


def tiers(backend: Any, vocab: OpenVocabulary) -> tuple[Any, Any | None]:
    """(the cheap tier, the whole pool or None) of ``backend`` (module docstring)."""
    from leakage.backends.ensemble import EnsembleBackend

    if not isinstance(backend, EnsembleBackend):
        return backend, None
    weights, scales = backend.fit_for("statement")
    used = [n for n in backend.members if weights[n] > 0]
    built: dict[str, Any] = {}
    for n in used:
        member = backend.members[n]
        if n == "embedding":
            tau = float(getattr(member, "tau", None) or member.info().get("tau", vocab.tau))
            built[n] = IndexEmbedding(vocab, tau=tau)
        else:
            built[n] = member
    note = ["statement fit"]

    def pool(names: list[str]) -> EnsembleBackend:
        return EnsembleBackend(
            {n: built[n] for n in names},
            {n: weights[n] for n in names},
            {n: scales[n] for n in names},
            weights_file=backend.weights_file,
            notes=note,
        )

    cheap = [n for n in used if n in WORD_MEMBERS]
    if not cheap or cheap == used:
        return pool(used), None
    return pool(cheap), pool(used)


_VOCABS: dict[str, OpenVocabulary] = {}
_READERS: dict[tuple[int, str, int, int], tuple[Any, SeatReader]] = {}
_LOCK = threading.Lock()


def open_seat_vocabulary(spec: str | None = None) -> OpenVocabulary:
    """The open vocabulary of the seats, once per process: ``spec`` None or ``wordfreq:N``
    the default index in ``LEAKAGE_HOME`` (built with the bundled MiniLM on first use and
    saved), a directory a vocabulary index saved by ``leakage vocab build``, else a word
    file (``leakage.vocab.load_words``), embedded in memory."""
    from leakage.encoders import open_encoder
    from leakage.vocab import VectorIndex, build_vocabulary, default_vocab_dir, load_words
    from leakage.vocab import read_meta as read_vocab_meta

    key = spec or DEFAULT_WORDS
    with _LOCK:
        if key in _VOCABS:
            return _VOCABS[key]
        path = Path(key).expanduser()
        if (path / "meta.json").is_file():
            meta = read_vocab_meta(path)
            encoder = open_encoder(meta.model_ref or meta.model)
            index = VectorIndex.load(path, encoder=encoder)
        else:
            encoder = open_encoder()
            if key == DEFAULT_WORDS:
                home = default_vocab_dir(encoder.name)
                if (home / "meta.json").is_file():
                    index = VectorIndex.load(home, encoder=encoder)
                else:
                    index = build_vocabulary(load_words(key), encoder)
                    index.save(home)
            else:
                index = build_vocabulary(load_words(key), encoder, kind="numpy")
        vocab = OpenVocabulary(index, encoder)
        _VOCABS[key] = vocab
        return vocab


def seat_reader(
    backend: Any,
    *,
    vocabulary: str | None = None,
    shortlist: int = SEAT_SHORTLIST,
    fine_words: int = SEAT_FINE,
    prior: PairPrior | None = None,
    vocab: OpenVocabulary | None = None,
) -> SeatReader:
    """The :class:`SeatReader` of ``backend`` (built once per backend and settings in a
    process; ``vocab`` / ``prior`` given are used as they are, not cached)."""
    key = (id(backend), vocabulary or DEFAULT_WORDS, shortlist, fine_words)
    if vocab is None and prior is None:
        with _LOCK:
            found = _READERS.get(key)
        if found is not None and found[0] is backend:  # the cache keeps it alive: no id reuse
            return found[1]
    words = vocab if vocab is not None else open_seat_vocabulary(vocabulary)
    cheap, whole = tiers(backend, words)
    reader = SeatReader(
        vocab=words,
        prior=prior if prior is not None else read_pair_prior(),
        search=ShortlistPosterior(words, cheap, shortlist=shortlist, tau=SEAT_TAU),
        fine=whole,
        fine_words=fine_words,
        vocabulary=vocabulary or DEFAULT_WORDS,
    )
    if vocab is None and prior is None:
        with _LOCK:
            _READERS[key] = (backend, reader)
    return reader
