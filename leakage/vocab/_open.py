"""Open-vocabulary guessing: what would an adversary guess without the candidate list?

The vocabulary (say the 50,000 most frequent English words) takes the place of the game's
candidates. Each word w is scored as in the embedding backend, with a uniform prior:

    log P(w | r_1..r_m) = Σ_i cos(e_{r_i}, e_w) / τ  -  logsumexp over the vocabulary

Σ_i cos(e_{r_i}, e_w) is the inner product of e_w with the sum of the clue vectors, so a
vector index finds the top words; the normaliser is one (V x d) @ d product in numpy.

A clue that is a vocabulary word (exactly, case included) takes its vector from the index:
the vector the encoder gave that word when the index was built. Only other clues (phrases,
words outside the vocabulary) and a secret outside it are embedded, so with a ``LazyEncoder``
the model is opened only then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from leakage.encoders import DEFAULT_TAU, CachedEncoder, Encoder
from leakage.errors import InvalidInput
from leakage.vocab._forms import WordForms
from leakage.vocab._index import DEFAULT_SEED, VectorIndex
from leakage.vocab._texts import VocabTexts, word_texts
from leakage.vocab._words import DEFAULT_WORDS, WORDFREQ_PREFIX, WordList

EMBED_CHUNK = 2048


class Guess(BaseModel):
    """One word of the vocabulary, as an adversary would rank it."""

    model_config = ConfigDict(extra="forbid")

    rank: int
    """1 = most probable; ties count against the word."""
    word: str
    similarity: float
    """Σ_i cos(clue_i, word): the sum over the clues of the cosine similarity."""
    probability: float
    """exp(similarity / τ), normalised over the whole ranked vocabulary."""


class WordRank(Guess):
    """Where a given word (the secret, say) ranks among the vocabulary."""

    of: int
    """How many words were ranked (the vocabulary without the excluded words, plus this
    word when it is not in the vocabulary)."""
    in_vocabulary: bool
    """False when the word is not in the vocabulary: it was embedded and ranked as if it
    were (an adversary limited to the vocabulary could not guess it)."""


class GuessResult(BaseModel):
    """The top guesses of an adversary who knows only the clues and the vocabulary."""

    model_config = ConfigDict(extra="forbid")

    clues: list[str]
    excluded: list[str]
    """Vocabulary words left out of the ranking (by default the clues themselves)."""
    forms: list[str] = []
    """Vocabulary words left out as forms of a clue (plurals, derivations, shared stems,
    compounds; a clue of several words: its words and their inflections:
    ``leakage.vocab.WordForms``), unless ``exclude_forms=False``."""
    tau: float
    ranked: int
    """How many vocabulary words were ranked."""
    guesses: list[Guess]
    secret: WordRank | None = None
    reranked_by: str | None = None
    """The members that re-ranked a shortlist (``leakage.vocab.reranked_guess``); None when
    the probabilities are the embedding scores' softmax over the vocabulary."""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def default_vocab_dir(
    model: str, words: str = DEFAULT_WORDS, *, home: Path | None = None, texts: str = "word"
) -> Path:
    """``<home>/vocab/<model-slug>-<words-slug>/``; ``home`` defaults to the one
    ``LEAKAGE_HOME`` names (:func:`leakage.paths.resolve_home`, default ``~/.cache/leakage``).

    ``words`` is ``wordfreq:N`` (slug ``wordfreq-N``) or a word file (slug: its stem); a
    vocabulary embedded as glosses (``texts="gloss"``) ends in ``-gloss``.
    """
    from leakage.paths import Paths, default_paths

    root = Paths(home).vocab if home is not None else default_paths().vocab
    label = words if words.startswith(WORDFREQ_PREFIX) else Path(words).stem
    suffix = "" if texts == "word" else f"-{_slug(texts)}"
    return root / f"{_slug(model)}-{_slug(label)}{suffix}"


def _raw_encoder(encoder: CachedEncoder | Encoder) -> Encoder:
    # Vocabulary vectors are kept in the index; caching 50,000 of them in the embedding
    # cache as well would only double the disk they take.
    return encoder.encoder if isinstance(encoder, CachedEncoder) else encoder


def embed_words(
    words: Sequence[str],
    encoder: CachedEncoder | Encoder,
    *,
    progress: Callable[[int], None] | None = None,
    chunk_size: int = EMBED_CHUNK,
) -> NDArray[np.float32]:
    """Unit vectors of ``words`` in chunks, calling ``progress(n)`` after each chunk."""
    raw = _raw_encoder(encoder)
    out = np.empty((len(words), encoder.dimension), dtype=np.float32)
    for start in range(0, len(words), chunk_size):
        chunk = list(words[start : start + chunk_size])
        out[start : start + len(chunk)] = raw.encode_batch(chunk)
        if progress is not None:
            progress(len(chunk))
    return out


def build_vocabulary(
    words: WordList | Sequence[str],
    encoder: CachedEncoder | Encoder,
    *,
    kind: str = "auto",
    model_ref: str | None = None,
    seed: int = DEFAULT_SEED,
    progress: Callable[[int], None] | None = None,
    texts: VocabTexts = "word",
) -> VectorIndex:
    """Embed ``words`` with ``encoder`` and index them (``progress(n)`` per chunk embedded).

    ``texts``: what each word is embedded as, ``word`` (itself) or ``gloss`` (``"word: its
    first WordNet gloss"``, :func:`leakage.vocab.gloss_text`); the index keeps the words.
    """
    if isinstance(words, WordList):
        items, source = words.words, words.source
    else:
        items, source = list(words), "words"
    vectors = embed_words(word_texts(items, texts), encoder, progress=progress)
    return VectorIndex.build(
        items,
        vectors,
        model=encoder.name,
        kind=kind,
        source=source,
        model_ref=model_ref,
        seed=seed,
        texts=texts,
    )


class LazyEncoder:
    """An ``Encoder`` that opens its model on the first batch it has to embed.

    ``name`` and ``dimension`` are known beforehand (an index's); the encoder that
    ``open_model`` returns must have the same, or ``InvalidInput`` says so. Wrapped in a
    ``CachedEncoder``, texts already in the embedding cache are answered without the model:
    ``leakage guess`` imports torch only for a clue that is neither in the vocabulary nor in
    the cache.
    """

    def __init__(
        self, name: str, dimension: int, open_model: Callable[[], CachedEncoder | Encoder]
    ) -> None:
        self.name = name
        self.dimension = dimension
        self._open_model = open_model
        self._model: CachedEncoder | Encoder | None = None

    @property
    def opened(self) -> bool:
        """Whether the model has been opened."""
        return self._model is not None

    def open(self) -> CachedEncoder | Encoder:
        """The model, opened on the first call and checked against ``name`` and ``dimension``."""
        if self._model is None:
            model = self._open_model()
            _check_model(model, self.name, self.dimension)
            self._model = model
        return self._model

    def encode_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        return self.open().encode_batch(texts)

    def info(self) -> dict[str, Any]:
        """The model's once it is open; before, its name and dimension (asking the model
        for more would load it)."""
        if self._model is None:
            return {"model": self.name, "dimension": self.dimension}
        return self._model.info()


def _check_model(encoder: CachedEncoder | Encoder, model: str, dimension: int) -> None:
    if encoder.name != model or encoder.dimension != dimension:
        raise InvalidInput(
            f"the vocabulary index was built with {model!r} ({dimension} "
            f"dimensions) but the encoder is {encoder.name!r} ({encoder.dimension}); "
            "rebuild the index with this model or use that model"
        )


def _logsumexp(x: NDArray[np.float64]) -> float:
    m = float(x.max())
    return m + float(np.log(np.exp(x - m).sum()))


class OpenVocabulary:
    """Rank a whole vocabulary by how well each word explains the clues.

    A clue that is a word of the index (exactly, case included) is not embedded: its vector
    is the index's, which the same model gave that word when the index was built (equal to
    embedding it again up to rounding). ``from_index=False`` embeds every clue instead.
    """

    def __init__(
        self,
        index: VectorIndex,
        encoder: CachedEncoder | Encoder,
        *,
        tau: float = DEFAULT_TAU,
        from_index: bool = True,
    ) -> None:
        if tau <= 0:
            raise InvalidInput("tau must be positive")
        _check_model(encoder, index.model, index.dimension)
        self.index = index
        self.encoder = encoder if isinstance(encoder, CachedEncoder) else CachedEncoder(encoder)
        self.tau = tau
        # a glossed index holds the vectors of glosses, not of the words a clue may be
        self.from_index = from_index and index.meta.texts == "word"
        self._forms: WordForms | None = None

    @property
    def forms(self) -> WordForms:
        """The clue-forms finder of this vocabulary (its stems computed on first use)."""
        if self._forms is None or len(self._forms.words) != len(self.index):
            self._forms = WordForms(self.index.words)
        return self._forms

    def _clue_vector(self, clues: Sequence[str]) -> tuple[list[str], NDArray[np.float32]]:
        texts = [c.strip() for c in clues]
        if not texts or not all(texts):
            raise InvalidInput("give at least one clue, and no empty ones")
        vecs = np.empty((len(texts), self.index.dimension), dtype=np.float32)
        embed: list[int] = []
        for i, text in enumerate(texts):
            row = self.index.position(text) if self.from_index else None
            if row is not None and self.index.words[row] == text:
                # Built as below: the encoder's vector, renormalised in float32.
                vecs[i] = self.index.vectors[row]
            else:
                embed.append(i)
        if embed:
            fresh = self.encoder.encode([texts[i] for i in embed]).astype(np.float32)
            fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)  # exact unit length
            vecs[embed] = fresh
        return texts, vecs.sum(axis=0)

    def similarities(self, clues: Sequence[str]) -> NDArray[np.float64]:
        """Σ_i cos(clue_i, w) for every vocabulary word w, in index order."""
        _, query = self._clue_vector(clues)
        return (self.index.vectors @ query).astype(np.float64)

    def _ranked_mask(
        self,
        clues: Sequence[str],
        exclude: Iterable[str],
        exclude_clues: bool,
        exclude_forms: bool = False,
    ) -> tuple[NDArray[np.bool_], list[str], list[str]]:
        """(rows ranked, words excluded by name, words excluded as forms of a clue)."""
        mask = np.ones(len(self.index), dtype=bool)
        names = [*(clues if exclude_clues else ()), *exclude]
        excluded: list[str] = []
        for name in names:
            for row in self.index.positions(name.strip()):
                if mask[row]:
                    mask[row] = False
                    excluded.append(self.index.words[row])
        forms: list[str] = []
        if exclude_forms:
            for clue in clues:
                for row in self.forms.of(clue):
                    if mask[row]:
                        mask[row] = False
                        forms.append(self.index.words[row])
        if not mask.any():
            raise InvalidInput("every vocabulary word is excluded; nothing left to rank")
        return mask, excluded, forms

    def ranked(
        self,
        clues: Sequence[str],
        *,
        exclude: Iterable[str] = (),
        exclude_clues: bool = True,
        exclude_forms: bool = True,
    ) -> NDArray[np.bool_]:
        """Which vocabulary words (in index order) ``guess`` ranks given ``clues``: all but
        the clues, their forms and ``exclude`` (the options as in ``guess``)."""
        texts = [c.strip() for c in clues]
        return self._ranked_mask(texts, exclude, exclude_clues, exclude_forms)[0]

    def guess(
        self,
        clues: Sequence[str],
        *,
        top: int = 10,
        exclude: Iterable[str] = (),
        exclude_clues: bool = True,
        exclude_forms: bool = True,
        secret: str | None = None,
    ) -> GuessResult:
        """The ``top`` most probable vocabulary words given ``clues``.

        The clue words themselves are left out unless ``exclude_clues=False`` (a clue is its
        own nearest neighbour), and so are their forms (``WordForms``: plurals, derivations,
        shared stems, compounds) unless ``exclude_forms=False``; ``exclude`` leaves out more.
        Matching ignores case. With ``secret``, also where that word ranks (see ``rank_of``).
        Ranks are exact among the words ranked: every word's score is computed.
        """
        if top < 1:
            raise InvalidInput("top must be at least 1")
        texts, query = self._clue_vector(clues)
        mask, excluded, forms = self._ranked_mask(texts, exclude, exclude_clues, exclude_forms)
        sims = (self.index.vectors @ query).astype(np.float64)
        ranked = sims[mask]
        log_z = _logsumexp(ranked / self.tau)

        if self.index.kind == "numpy":
            # A numpy index is this very product: take its top rows, not a second product.
            rows = np.flatnonzero(mask)
            k = min(top, rows.size)
            found = [int(r) for r in rows[np.argpartition(-sims[rows], k - 1)[:k]]]
        else:
            # Fetch twice as many as shown: an approximate index (hnsw, ivf) that misses one
            # of the true top words then rarely changes what is shown.
            norm = float(np.linalg.norm(query))
            want = min(len(self.index), 2 * top + len(excluded) + len(forms))
            _, found_rows = self.index.search(query / (norm or 1.0), want)
            found = [int(r) for r in found_rows[0] if r >= 0 and mask[r]]
        found.sort(key=lambda r: -sims[r])
        guesses = [
            Guess(
                rank=int((ranked >= sims[r]).sum()),
                word=self.index.words[r],
                similarity=float(sims[r]),
                probability=float(np.exp(sims[r] / self.tau - log_z)),
            )
            for r in found[:top]
        ]
        result = GuessResult(
            clues=texts,
            excluded=excluded,
            forms=forms,
            tau=self.tau,
            ranked=int(mask.sum()),
            guesses=guesses,
        )
        if secret is not None:
            result.secret = self._rank(secret, query, sims, mask)
        return result

    def rank_of(
        self,
        word: str,
        clues: Sequence[str],
        *,
        exclude: Iterable[str] = (),
        exclude_clues: bool = True,
        exclude_forms: bool = True,
    ) -> WordRank:
        """Where ``word`` ranks among the vocabulary given ``clues`` (1 = the top guess).

        How far an adversary without the candidate list is from the secret. A word outside
        the vocabulary is embedded and ranked as if it were in it (``in_vocabulary`` False).
        The word itself is never excluded, even when it is a clue or a clue's form: its rank
        counts it and the words ranked (those not excluded), and no other.
        """
        texts, query = self._clue_vector(clues)
        mask, _, _ = self._ranked_mask(texts, exclude, exclude_clues, exclude_forms)
        sims = (self.index.vectors @ query).astype(np.float64)
        return self._rank(word, query, sims, mask)

    def _rank(
        self, word: str, query: NDArray[np.float32], sims: NDArray[np.float64], mask: Any
    ) -> WordRank:
        word = word.strip()
        if not word:
            raise InvalidInput("the word to rank is empty")
        row = self.index.position(word)
        if row is not None:
            mask = mask.copy()
            mask[row] = True
            ranked = sims[mask]
            own = float(sims[row])
            name = self.index.words[row]
        else:
            vec = self.encoder.encode(word_texts([word], self.index.meta.texts))[0]
            own = float(vec @ query / np.linalg.norm(vec))
            ranked = np.append(sims[mask], own)
            name = word
        return WordRank(
            rank=int((ranked >= own).sum()),
            word=name,
            similarity=own,
            probability=float(np.exp(own / self.tau - _logsumexp(ranked / self.tau))),
            of=int(ranked.size),
            in_vocabulary=row is not None,
        )

    def add_candidates(self, candidates: Iterable[str]) -> int:
        """Add a game's candidates to the vocabulary (those not already in it, ignoring case).

        Returns how many were added. Save the index to keep them.
        """
        new = list(dict.fromkeys(c.strip() for c in candidates if c.strip()))
        new = [w for w in new if self.index.position(w) is None]
        if not new:
            return 0
        return self.index.add(new, self.encoder.encode(word_texts(new, self.index.meta.texts)))
