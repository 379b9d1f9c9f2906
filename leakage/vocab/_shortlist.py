"""A posterior over an open vocabulary: a shortlist from the index, re-ranked by the members.

Two stages, so that the members (co-occurrence counts, an LLM listener, ...) are asked about
a few hundred words rather than 48,000, while the probabilities stay those of a distribution
over the whole vocabulary (DESIGN.md, "Where the next capabilities belong"):

1. **Retrieve.** Every word w of the vocabulary gets the embedding score of the open
   vocabulary plus a log-prior (uniform unless given)::

       log q(w) = log π(w) + Σ_i cos(e_{r_i}, e_w) / τ  −  logsumexp over the words ranked

   The ``shortlist`` most probable words under q form the shortlist S.
2. **Re-rank.** A likelihood backend (the calibrated ensemble, a subset of its members, any
   backend) scores every clue against S ∪ ``also`` in one call, and the mass that q gives S
   is shared out again over S by the backend's posterior::

       P(w) = q(S) · π(w) Π_i exp L[i, w] / Σ_{v ∈ S} π(v) Π_i exp L[i, v]    (w ∈ S)
       P(w) = q(w)                                                          (w ∉ S)

   The words left out of the shortlist keep their stage-1 mass q(V \\ S): the posterior is
   a distribution over the whole vocabulary (it sums to 1), its entropy is over the whole
   vocabulary, and a word's rank is exact *for this posterior*: the number of words ranked
   whose probability is at least the word's (ties count against the word), every word's
   probability being computed. A re-ranked word can therefore fall below a word outside S.

The clue rows are computed once per call of :meth:`ShortlistPosterior.steps` over the union
of every step's shortlist (one candidate set, so a backend's per-row constants, which a
posterior ignores, are the same for every step).

Words left out of the ranking (the clues, their forms, words the caller names) have
probability 0 and no rank; a word asked about that is outside the vocabulary has none
either (add it with ``OpenVocabulary.add_candidates`` first).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.errors import InvalidInput
from leakage.vocab._open import GuessResult, OpenVocabulary

DEFAULT_SHORTLIST = 200
"""Words re-ranked per step by default."""

LOG2 = float(np.log(2.0))


@dataclass
class OpenPosterior:
    """A posterior over the words of an open vocabulary (index order), after some clues."""

    words: list[str]
    """The vocabulary's words (the index's list, shared, not copied)."""
    log_p: NDArray[np.float64]
    """log P(w) for every word; ``-inf`` for a word left out of the ranking."""
    shortlist: NDArray[np.int64]
    """Rows re-ranked by the backend (stage 2), most probable under stage 1 first."""
    shortlist_mass: float
    """q(S): the stage-1 mass of the shortlist, shared out again by the backend."""
    clues: list[str] = field(default_factory=list)

    @property
    def ranked(self) -> int:
        """How many words are ranked (not left out)."""
        return int(np.isfinite(self.log_p).sum())

    def probability(self, row: int) -> float:
        return float(np.exp(self.log_p[row]))

    def rank(self, row: int) -> int | None:
        """1 + the number of other ranked words at least as probable (ties count against
        the word); None for a word left out."""
        own = self.log_p[row]
        if not np.isfinite(own):
            return None
        return int((self.log_p >= own).sum())

    def entropy_bits(self) -> float:
        """Entropy of the posterior over the whole vocabulary, in bits."""
        lp = self.log_p[np.isfinite(self.log_p)]
        return float(-(np.exp(lp) * lp).sum() / LOG2)

    def top(self, k: int) -> list[tuple[str, float]]:
        """The ``k`` most probable words with their probabilities."""
        k = min(k, self.ranked)
        rows = np.argpartition(-self.log_p, k - 1)[:k]
        rows = rows[np.argsort(-self.log_p[rows], kind="stable")]
        return [(self.words[r], float(np.exp(self.log_p[r]))) for r in rows]


def _log_normalise(x: NDArray[np.float64]) -> NDArray[np.float64]:
    finite = np.isfinite(x)
    m = float(x[finite].max())
    return x - (m + float(np.log(np.exp(x[finite] - m).sum())))


class ShortlistPosterior:
    """Posteriors over an open vocabulary by shortlist and re-rank (module docstring).

    ``backend``: any likelihood backend (``loglik(clues, candidates)``); None keeps stage 1
    (the embedding scores alone). ``shortlist``: how many words each step re-ranks. ``tau``:
    stage 1's temperature (default the vocabulary's; a sentence against a word needs a
    higher one than a word does, see the seats). ``stage1_weight``: a weight λ for stage 1's
    own evidence (Σ cos / τ) in the re-rank, beside the backend's rows (0: the backend's
    rows alone; a log-linear pool of the two readers when fitted).
    """

    def __init__(
        self,
        vocab: OpenVocabulary,
        backend: Any | None = None,
        *,
        shortlist: int = DEFAULT_SHORTLIST,
        tau: float | None = None,
        stage1_weight: float = 0.0,
    ) -> None:
        if shortlist < 1:
            raise InvalidInput("the shortlist must hold at least one word")
        if tau is not None and tau <= 0:
            raise InvalidInput("tau must be positive")
        self.vocab = vocab
        self.backend = backend
        self.shortlist = shortlist
        self.tau = vocab.tau if tau is None else tau
        self.stage1_weight = stage1_weight

    @property
    def words(self) -> list[str]:
        return self.vocab.index.words

    def clue_scores(self, clues: Sequence[str]) -> NDArray[np.float64]:
        """cos(e_{r_i}, e_w) for every clue (rows) and word (columns)."""
        return (
            np.stack([self.vocab.similarities([c]) for c in clues])
            if clues
            else np.zeros((0, len(self.vocab.index)))
        )

    def mask(
        self,
        clues: Sequence[str],
        *,
        exclude: Iterable[str] = (),
        exclude_clues: bool = True,
        exclude_forms: bool = True,
    ) -> NDArray[np.bool_]:
        """The words ranked: all but the clue words, their forms and ``exclude``."""
        mask, _, _ = self.vocab._ranked_mask(clues, exclude, exclude_clues, exclude_forms)
        return mask

    def steps(
        self,
        clues: Sequence[str],
        *,
        log_prior: NDArray[np.float64] | None = None,
        mask: NDArray[np.bool_] | None = None,
        also: Sequence[int] = (),
        category: str | None = None,
        scores: NDArray[np.float64] | None = None,
        rows: NDArray[np.float64] | None = None,
        row_words: Sequence[int] | None = None,
    ) -> list[OpenPosterior]:
        """The posterior after each of ``clues`` (one per clue; none for no clue).

        ``log_prior``: log π over the vocabulary (unnormalised; default uniform). ``mask``:
        the words ranked (default: every word). ``also``: rows the backend scores besides the
        shortlists (a word whose likelihood the caller wants, e.g. the truth's). ``scores``:
        the clues' cosines (:meth:`clue_scores`) when already computed. ``rows`` /
        ``row_words``: the backend's rows for every clue over the vocabulary rows
        ``row_words`` when already computed (see :meth:`union`).
        """
        n = len(self.vocab.index)
        prior = np.zeros(n) if log_prior is None else np.asarray(log_prior, dtype=np.float64)
        ranked = np.ones(n, dtype=bool) if mask is None else mask
        sims = self.clue_scores(clues) if scores is None else scores
        stage1 = self.stage1(sims, prior, ranked)
        if self.backend is not None and rows is None:
            row_words = self.union(stage1, also)
            rows = self.backend.loglik(
                list(clues), [self.words[r] for r in row_words], category=category
            )
        out = []
        for t, log_q in enumerate(stage1):
            short = self._top(log_q, self.shortlist)
            log_p = log_q.copy()
            mass = float(np.exp(log_q[short]).sum())
            if rows is not None and row_words is not None:
                col = {r: j for j, r in enumerate(row_words)}
                cols = np.array([col[int(r)] for r in short])
                inside = prior[short] + np.asarray(rows)[: t + 1, cols].sum(axis=0)
                if self.stage1_weight:
                    inside = inside + self.stage1_weight * (log_q[short] - prior[short])
                inside = inside - inside.max()
                inside = inside - np.log(np.exp(inside).sum())
                log_p[short] = np.log(mass) + inside
            out.append(OpenPosterior(self.words, log_p, short, mass, list(clues[: t + 1])))
        return out

    def union(self, stage1: Sequence[NDArray[np.float64]], also: Sequence[int] = ()) -> list[int]:
        """Every step's shortlist and ``also``, each row once, in first-seen order."""
        seen = dict.fromkeys(int(r) for r in also)
        for log_q in stage1:
            seen.update(dict.fromkeys(int(r) for r in self._top(log_q, self.shortlist)))
        return list(seen)

    def stage1(
        self, sims: NDArray[np.float64], prior: NDArray[np.float64], ranked: NDArray[np.bool_]
    ) -> list[NDArray[np.float64]]:
        """log q after each clue (``-inf`` outside ``ranked``): ``sims`` the clues' cosines
        (:meth:`clue_scores`), ``prior`` an unnormalised log-prior over the vocabulary."""
        base = np.where(ranked, prior, -np.inf)
        cumulative = np.cumsum(sims, axis=0) / self.tau
        return [_log_normalise(base + cumulative[t]) for t in range(sims.shape[0])]

    @staticmethod
    def _top(log_q: NDArray[np.float64], k: int) -> NDArray[np.int64]:
        finite = int(np.isfinite(log_q).sum())
        k = min(k, finite)
        rows = np.argpartition(-log_q, k - 1)[:k]
        return rows[np.argsort(-log_q[rows], kind="stable")].astype(np.int64)


class IndexEmbedding:
    """The embedding member read from a vocabulary index: the same rows as the embedding
    backend (``cos(e_r, e_w) / τ`` normalised over the candidates), with each vocabulary
    word's vector taken from the index and a clue that is a vocabulary word not embedded
    (``OpenVocabulary``'s rule), so a pool over the vocabulary opens no model for them.
    """

    name = "embedding"

    def __init__(self, vocab: OpenVocabulary, *, tau: float) -> None:
        if tau <= 0:
            raise InvalidInput("tau must be positive")
        self.vocab = vocab
        self.tau = tau

    def info(self) -> dict[str, Any]:
        return {
            "backend": self.name,
            "model": self.vocab.index.model,
            "tau": self.tau,
            "vectors": "the vocabulary index's",
        }

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        index = self.vocab.index
        rows = [index.position(c) for c in candidates]
        vecs = np.empty((len(candidates), index.dimension), dtype=np.float32)
        known = [(i, r) for i, r in enumerate(rows) if r is not None]
        if known:
            vecs[[i for i, _ in known]] = index.vectors[[r for _, r in known]]
        missing = [i for i, r in enumerate(rows) if r is None]
        if missing:
            fresh = self.vocab.encoder.encode([candidates[i] for i in missing]).astype(np.float32)
            vecs[missing] = fresh / np.linalg.norm(fresh, axis=1, keepdims=True)
        out = np.empty((len(clues), len(candidates)))
        for i, clue in enumerate(clues):
            _, query = self.vocab._clue_vector([clue])
            logits = (vecs @ query).astype(np.float64) / self.tau
            out[i] = _log_normalise(logits)
        return out


WORD_MEMBERS = ("cooccurrence", "embedding")
"""Members that re-rank ``leakage guess`` by default: neither loads a model (the embedding
member reads the index, co-occurrence counts a SQLite index)."""


def vocabulary_pool(
    vocab: OpenVocabulary,
    members: Sequence[str] = WORD_MEMBERS,
    *,
    kind: str = "word",
    weights_path: str | None = None,
    **member_options: Any,
) -> Any:
    """The calibrated ensemble's pool over ``members`` for items of type ``kind``, its
    embedding member served by the vocabulary index (:class:`IndexEmbedding`, at the
    member's fitted τ); the other members are built by their factories.

    The weights and scales are the fit's (default: the shipped file) for the members kept,
    not refitted, as ``--members`` does for ``-b ensemble``.
    """
    from leakage.backends import create_backend
    from leakage.backends.ensemble import EnsembleBackend, default_weights_path, read_weights

    path = weights_path or default_weights_path()
    fitted = read_weights(path)
    unknown = [m for m in members if m not in fitted.members]
    if unknown or not members:
        raise InvalidInput(
            f"re-rank members {', '.join(unknown) or '(none)'}: choose from the fit's "
            f"{', '.join(fitted.members)}"
        )
    weights, scales = fitted.weights, fitted.scales
    if kind in fitted.item_types:
        weights, scales = fitted.item_types[kind].weights, fitted.item_types[kind].scales
    built: dict[str, Any] = {}
    for name in members:
        if name == "embedding":
            tau = float(fitted.member_info.get("embedding", {}).get("tau", vocab.tau))
            built[name] = IndexEmbedding(vocab, tau=tau)
        else:
            built[name] = create_backend(name, **member_options.get(name, {}))
    return EnsembleBackend(
        built,
        {n: weights[n] for n in members},
        {n: scales[n] for n in members},
        weights_file=str(path),
        notes=[f"{kind} fit of {', '.join(fitted.members)}, members {', '.join(members)} kept"],
    )


def reranked_guess(
    search: ShortlistPosterior,
    clues: Sequence[str],
    *,
    top: int = 10,
    exclude: Iterable[str] = (),
    exclude_clues: bool = True,
    exclude_forms: bool = True,
    secret: str | None = None,
) -> GuessResult:
    """``OpenVocabulary.guess`` with the shortlist re-ranked by ``search``'s backend.

    The same words are left out; ``probability`` and ``rank`` are the re-ranked posterior's
    (exact over the words ranked, see the module docstring), ``similarity`` still Σ cos. A
    secret outside the vocabulary is added to it in memory (``in_vocabulary`` False), so it
    is ranked among V + 1 words, as ``rank_of`` ranks it.
    """
    from leakage.vocab._open import Guess, WordRank

    if top < 1:
        raise InvalidInput("top must be at least 1")
    vocab = search.vocab
    texts, _ = vocab._clue_vector(clues)
    in_vocabulary = True
    if secret is not None:
        secret = secret.strip()
        if not secret:
            raise InvalidInput("the word to rank is empty")
        in_vocabulary = vocab.index.position(secret) is not None
        if not in_vocabulary:
            vocab.add_candidates([secret])
    mask, excluded, forms = vocab._ranked_mask(texts, exclude, exclude_clues, exclude_forms)
    secret_row = vocab.index.position(secret) if secret is not None else None
    if secret_row is not None:
        mask[secret_row] = True  # the word ranked is never excluded (``rank_of``)
    sims = search.clue_scores(texts)
    post = search.steps(texts, mask=mask, scores=sims)[-1]
    total = sims.sum(axis=0)

    def word(row: int, cls: Any = Guess, **extra: Any) -> Any:
        return cls(
            rank=post.rank(row),
            word=vocab.index.words[row],
            similarity=float(total[row]),
            probability=post.probability(row),
            **extra,
        )

    k = min(top, post.ranked)
    best = np.argpartition(-post.log_p, k - 1)[:k]
    best = best[np.argsort(-post.log_p[best], kind="stable")]
    result = GuessResult(
        clues=texts,
        excluded=excluded,
        forms=forms,
        tau=vocab.tau,
        ranked=post.ranked,
        guesses=[word(int(r)) for r in best],
        reranked_by=_describe(search),
    )
    if secret_row is not None:
        result.secret = word(secret_row, WordRank, of=post.ranked, in_vocabulary=in_vocabulary)
    return result


def _describe(search: ShortlistPosterior) -> str | None:
    backend = search.backend
    if backend is None:
        return None
    members = getattr(backend, "members", None)
    names = ", ".join(members) if members else getattr(backend, "name", "backend")
    return f"{names} (shortlist of {search.shortlist})"
