"""SpyGame / Undercover from a player's own seat: what the spy learns of the civilians' word,
and whom a voter who knows only its own word suspects.

**The spy's seat** (it knows its own word s, hears every other player; it does not know who
is a civilian). Over an open vocabulary V (``ShortlistPosterior``), after each statement of
another player::

    P(c | statements so far, s)  ∝  π(c | s) · Π_i [(1 − ρ) e^{L[i, c]} + ρ e^{L[i, s]}]

π is the pair prior (``PairPrior``: pairs are chosen related); L the backend's row for
statement i (a calibrated ensemble's, re-ranking the shortlist); ρ = (k − 1)/(n − 1), the
chance that another speaker is the other spy, who describes s (k spies of n players, known
from the rules). The mixture is what the spy can do without knowing the speakers' roles. The
words outside the shortlist keep their stage-1 mass (the prior and the statements' cosines),
so P is a distribution over V. Figures per statement: the rank of the civilians' word, its
probability, the entropy over V, the gain in bits (entropy drop; the first from the prior's
entropy).

**A voter's seat** (it knows its own word w, not the other word, not its own role). Each
other player j's statements give A_j(x) = Σ_{i ∈ j} L[i, x] for any word x. With spies a set
S of k players, either I am a civilian (w is the civilians' word; the spies share an unknown
x) or I am a spy (w is the spies' word; the civilians share an unknown c)::

    P(civilian, S) ∝ (n−k)/n / C(n−1, k)   · Σ_x π(x | w) e^{Σ_{j∈S} A_j(x)} · e^{Σ_{j∉S} A_j(w)}
    P(spy, S ∪ me) ∝ k/n / C(n−1, k−1)     · Σ_c π(c | w) e^{Σ_{j∉S} A_j(c)} · e^{Σ_{j∈S} A_j(w)}

The unknown word is marginalised over a shortlist of V (the union of the stage-1 shortlists
after each statement, under the prior π(· | w)), with π renormalised over it: the mass of
the words left out of that shortlist is not in the sum (an approximation the docs state).
P(j is a spy) sums the hypotheses where j is in S. Every statement appears once in every
hypothesis, so a backend's per-row constants cancel.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from math import comb, log
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.errors import InvalidInput
from leakage.seats._prior import PairPrior
from leakage.seats._reader import SEAT_FINE
from leakage.transcripts import SpyGameTranscript
from leakage.vocab import OpenPosterior, ShortlistPosterior

LOG2 = log(2.0)


@dataclass
class SpySeatStep:
    """The spy's posterior over the civilians' word after one statement of another player."""

    turn: int
    """Position of the statement in the transcript's turns."""
    player: str
    round: int | None
    rank: int | None
    """Rank of the civilians' word among the words ranked (None: outside the vocabulary)."""
    probability: float
    entropy_bits: float
    gain_bits: float
    shortlist_mass: float
    top: list[tuple[str, float]] = field(default_factory=list)


@dataclass
class SpySeat:
    """The spy's seat through one game."""

    game: str
    spy: str
    own_word: str
    civilian_word: str
    prior_rank: int | None
    prior_entropy_bits: float
    steps: list[SpySeatStep]


def _entropy_bits(log_p: NDArray[np.float64]) -> float:
    lp = log_p[np.isfinite(log_p)]
    return float(-(np.exp(lp) * lp).sum() / LOG2)


def _normalise(x: NDArray[np.float64]) -> NDArray[np.float64]:
    finite = np.isfinite(x)
    m = float(x[finite].max())
    return x - (m + float(np.log(np.exp(x[finite] - m).sum())))


def _rank(log_p: NDArray[np.float64], row: int | None) -> int | None:
    if row is None or not np.isfinite(log_p[row]):
        return None
    return int((log_p >= log_p[row]).sum())


def _statements(game: SpyGameTranscript, seat: str, rounds: int | None) -> list[tuple[int, Any]]:
    first = min((t.round for t in game.turns if t.round is not None), default=None)
    out = []
    for i, t in enumerate(game.turns):
        if t.player == seat:
            continue
        late = rounds is not None and first is not None and t.round is not None
        if late and t.round >= first + rounds:  # type: ignore[operator]
            continue
        out.append((i, t))
    return out


def spy_seat(
    search: ShortlistPosterior,
    game: SpyGameTranscript,
    spy: str,
    prior: PairPrior,
    *,
    rounds: int | None = None,
    top: int = 5,
    fine: Any | None = None,
    fine_words: int = SEAT_FINE,
) -> SpySeat:
    """The posterior over the civilians' word from ``spy``'s seat after every statement of
    another player (of the first ``rounds`` rounds; default all). See the module docstring.
    ``fine``: a costlier backend that re-ranks the ``fine_words`` best words of each step
    again (``leakage.seats._reader``, two tiers)."""
    if spy not in game.spies():
        raise InvalidInput(f"game {game.id}: player {spy!r} is not a spy")
    vocab = search.vocab
    own = game.word_of(spy)
    truth = game.words.civilian
    log_prior = prior.log_prior(vocab, own)
    mask = np.isfinite(log_prior)  # the own word and its forms are out
    truth_row = vocab.index.position(truth)
    prior_lp = _normalise(np.where(mask, log_prior, -np.inf))
    said = _statements(game, spy, rounds)
    texts = [t.text for _, t in said]
    seat = SpySeat(
        game=game.id,
        spy=spy,
        own_word=own,
        civilian_word=truth,
        prior_rank=_rank(prior_lp, truth_row),
        prior_entropy_bits=_entropy_bits(prior_lp),
        steps=[],
    )
    if not texts:
        return seat
    posts = _posteriors(
        search, texts, log_prior, mask, own, rho=_rho(game), fine=fine, fine_words=fine_words
    )
    before = seat.prior_entropy_bits
    for (i, turn), post in zip(said, posts, strict=True):
        h = post.entropy_bits()
        seat.steps.append(
            SpySeatStep(
                turn=i,
                player=turn.player,
                round=turn.round,
                rank=post.rank(truth_row) if truth_row is not None else None,
                probability=post.probability(truth_row) if truth_row is not None else 0.0,
                entropy_bits=h,
                gain_bits=before - h,
                shortlist_mass=post.shortlist_mass,
                top=post.top(top),
            )
        )
        before = h
    return seat


def _rho(game: SpyGameTranscript) -> float:
    n, k = len(game.players), len(game.spies())
    return (k - 1) / (n - 1) if n > 1 else 0.0


def _posteriors(
    search: ShortlistPosterior,
    texts: Sequence[str],
    log_prior: NDArray[np.float64],
    mask: NDArray[np.bool_],
    own: str,
    *,
    rho: float,
    fine: Any | None = None,
    fine_words: int = SEAT_FINE,
) -> list[OpenPosterior]:
    """The posteriors after each statement: stage 1, the shortlist re-ranked by
    ``search.backend`` and, with ``fine``, the ``fine_words`` most probable words of each
    step re-ranked again by ``fine`` (their mass shared out again, ``leakage.seats._reader``)."""
    sims = search.clue_scores(texts)
    if search.backend is None:
        return search.steps(texts, log_prior=log_prior, mask=mask, scores=sims)
    stage1 = search.stage1(sims, log_prior, mask)
    union = search.union(stage1)
    rows = _mixed_rows(search.backend, texts, [search.words[r] for r in union], own, rho)
    posts = search.steps(
        texts, log_prior=log_prior, mask=mask, scores=sims, rows=rows, row_words=union
    )
    if fine is None or fine_words < 1:
        return posts
    tops = [top_rows(p, fine_words) for p in posts]
    fine_union = list(dict.fromkeys(int(r) for top in tops for r in top))
    col = {r: j for j, r in enumerate(fine_union)}
    fine_rows = _mixed_rows(fine, texts, [search.words[r] for r in fine_union], own, rho)
    refine(posts, tops, log_prior, fine_rows, col)
    return posts


def refine(
    posts: Sequence[OpenPosterior],
    tops: Sequence[NDArray[np.int64]],
    log_prior: NDArray[np.float64],
    rows: NDArray[np.float64],
    col: dict[int, int],
) -> None:
    """Re-rank each step's ``tops`` words by the whole pool's ``rows`` (one per statement
    heard, columns the vocabulary rows ``col`` maps), their mass kept (in place): within
    the top words P ∝ π(w) Π_i exp rows[i, w], as the shortlist's re-rank one stage up."""
    for t, (post, top) in enumerate(zip(posts, tops, strict=True)):
        mass = float(np.logaddexp.reduce(post.log_p[top]))
        cols = np.array([col[int(r)] for r in top])
        inside = log_prior[top] + rows[: t + 1, cols].sum(axis=0)
        post.log_p[top] = mass + inside - float(np.logaddexp.reduce(inside))


def top_rows(post: OpenPosterior, k: int) -> NDArray[np.int64]:
    k = min(k, post.ranked)
    rows = np.argpartition(-post.log_p, k - 1)[:k]
    return rows[np.argsort(-post.log_p[rows], kind="stable")].astype(np.int64)


def mix_own(
    rows: NDArray[np.float64], own_col: NDArray[np.float64], rho: float
) -> NDArray[np.float64]:
    """Each row a mixture with the own word's (``own_col``) by ρ: the speaker may be the
    other spy, who describes the own word."""
    if rho <= 0:
        return rows
    return np.logaddexp(log(1 - rho) + rows, log(rho) + own_col[:, None])


def _mixed_rows(
    backend: Any, texts: Sequence[str], words: Sequence[str], own: str, rho: float
) -> NDArray[np.float64]:
    """``backend``'s rows over ``words``, each a mixture with the own word's by ρ (the
    speaker may be the other spy, who describes the own word)."""
    rows = np.asarray(backend.loglik(list(texts), [*words, own]), dtype=np.float64)
    return mix_own(rows[:, : len(words)], rows[:, len(words)], rho)


# -- a voter's seat ------------------------------------------------------------------------


@dataclass
class VoterSeat:
    """P(player is a spy) from one player's seat after the statements it has heard."""

    game: str
    seat: str
    own_word: str
    p_spy: dict[str, float]
    """Every other player's probability of being a spy."""
    p_self_spy: float
    """The seat's probability that it is a spy itself."""
    statements: int
    marginal_words: int
    """How many words the unknown other word was marginalised over."""


@dataclass
class GameRows:
    """A backend's rows for a game's statements over one set of words (one call, so that
    per-row constants are the same for every seat that reads them)."""

    texts: list[str]
    words: list[str]
    values: NDArray[np.float64]
    """(statements, words)."""

    def table(self, texts: Sequence[str], words: Sequence[str]) -> NDArray[np.float64]:
        row = {t: i for i, t in enumerate(self.texts)}
        col = {w: j for j, w in enumerate(self.words)}
        return self.values[np.ix_([row[t] for t in texts], [col[w] for w in words])]


def game_rows(
    search: ShortlistPosterior,
    game: SpyGameTranscript,
    prior: PairPrior,
    *,
    seats: Sequence[str] | None = None,
    rounds: int | None = 1,
) -> GameRows:
    """The backend's rows for every statement of the first ``rounds`` rounds over the words
    every seat of ``seats`` (default: every player) needs: its own word and its shortlist."""
    if search.backend is None:
        raise InvalidInput("a voter's seat needs a backend to score the statements")
    vocab = search.vocab
    texts = list(dict.fromkeys(t.text for _, t in _statements(game, "", rounds)))
    words: dict[str, None] = {}
    for seat in seats if seats is not None else [p.id for p in game.players]:
        own = game.word_of(seat)
        heard = [t.text for _, t in _statements(game, seat, rounds)]
        log_prior = prior.log_prior(vocab, own)
        short = seat_shortlist(search, heard, log_prior, np.isfinite(log_prior))
        words.update(dict.fromkeys([own, *(vocab.index.words[r] for r in short)]))
    listed = list(words)
    values = np.asarray(search.backend.loglik(texts, listed), dtype=np.float64)
    return GameRows(texts, listed, values)


def voter_seat(
    search: ShortlistPosterior,
    game: SpyGameTranscript,
    seat: str,
    prior: PairPrior,
    *,
    rounds: int | None = 1,
    rows: GameRows | None = None,
) -> VoterSeat:
    """``seat``'s P(j is a spy) for every other player j after the statements of the first
    ``rounds`` rounds (module docstring). ``rows``: the game's rows when already computed
    (:func:`game_rows`, with this seat among its seats)."""
    vocab = search.vocab
    own = game.word_of(seat)
    others = [p.id for p in game.players if p.id != seat]
    n, k = len(game.players), len(game.spies())
    said = _statements(game, seat, rounds)
    texts = [t.text for _, t in said]
    speakers = [t.player for _, t in said]
    log_prior = prior.log_prior(vocab, own)
    shortlist = seat_shortlist(search, texts, log_prior, np.isfinite(log_prior))
    words = [vocab.index.words[r] for r in shortlist]
    if rows is None:
        rows = game_rows(search, game, prior, seats=[seat], rounds=rounds)
    table = rows.table(texts, [*words, own]) if texts else np.zeros((0, len(words) + 1))
    rows_x, rows_w = table[:, :-1], table[:, -1]
    px = np.array([log_prior[r] for r in shortlist])
    px = px - np.logaddexp.reduce(px)
    a = {j: np.zeros(len(words)) for j in others}  # A_j(x)
    b = dict.fromkeys(others, 0.0)  # A_j(w)
    for s, rx, rw in zip(speakers, rows_x, rows_w, strict=True):
        a[s] = a[s] + rx
        b[s] += float(rw)
    hyps: list[tuple[float, set[str], bool]] = []
    if n - k >= 1 and len(others) >= k:
        base = log((n - k) / n) - log(comb(len(others), k))
        for spies in combinations(others, k):
            ax = px + sum((a[j] for j in spies), np.zeros(len(words)))
            ll = float(np.logaddexp.reduce(ax)) + sum(b[j] for j in others if j not in spies)
            hyps.append((base + ll, set(spies), False))
    if k >= 1 and len(others) >= k - 1:
        base = log(k / n) - log(comb(len(others), k - 1))
        for partners in combinations(others, k - 1):
            civ = [j for j in others if j not in partners]
            ac = px + sum((a[j] for j in civ), np.zeros(len(words)))
            ll = float(np.logaddexp.reduce(ac)) + sum(b[j] for j in partners)
            hyps.append((base + ll, set(partners), True))
    logs = np.array([h[0] for h in hyps])
    post = np.exp(logs - np.logaddexp.reduce(logs))
    p_spy = {j: float(sum(p for p, h in zip(post, hyps, strict=True) if j in h[1])) for j in others}
    p_self = float(sum(p for p, h in zip(post, hyps, strict=True) if h[2]))
    return VoterSeat(
        game=game.id,
        seat=seat,
        own_word=own,
        p_spy=p_spy,
        p_self_spy=p_self,
        statements=len(texts),
        marginal_words=len(words),
    )


def seat_shortlist(
    search: ShortlistPosterior,
    texts: Sequence[str],
    log_prior: NDArray[np.float64],
    mask: NDArray[np.bool_],
) -> list[int]:
    """The words an unknown other word is marginalised over from a seat: the prior's
    shortlist and every step's stage-1 shortlist (``ShortlistPosterior.union``)."""
    sims = search.clue_scores(texts) if texts else np.zeros((0, len(search.vocab.index)))
    stage = [_normalise(np.where(mask, log_prior, -np.inf))]
    if len(texts):
        stage += search.stage1(sims, log_prior, mask)
    return search.union(stage)


def game_texts(game: SpyGameTranscript, rounds: int | None) -> list[str]:
    """The statements of the first ``rounds`` rounds, in order."""
    return [t.text for _, t in _statements(game, "", rounds)]


def spy_cheap_posteriors(
    reader: Any, texts: Sequence[str], speakers: Sequence[str], holder: str, own: str, rho: float
) -> tuple[list[int], NDArray[np.float64], list[OpenPosterior]]:
    """(the turns a spy holder hears, its log-prior, its posteriors after each of them by
    stage 1 and the cheap tier): the first part of :func:`spy_seat_steps`' figures."""
    log_prior = reader.prior.log_prior(reader.vocab, own)
    mask = np.isfinite(log_prior)
    heard = [i for i, who in enumerate(speakers) if who != holder]
    posts = (
        _posteriors(reader.search, [texts[i] for i in heard], log_prior, mask, own, rho=rho)
        if heard
        else []
    )
    return heard, log_prior, posts


def spy_seat_steps(
    reader: Any,
    texts: Sequence[str],
    heard: Sequence[int],
    posts: Sequence[OpenPosterior],
    log_prior: NDArray[np.float64],
    own: str,
    truth: str,
    labels: Sequence[str],
    *,
    top: int = 5,
) -> Any:
    """A spy holder's figures after every turn of a game, on plain values (``HolderSteps``),
    from its posteriors after each turn it ``heard`` (:func:`spy_cheap_posteriors`, then
    :func:`refine` by the whole pool): a turn of its own does not count. ``labels``: the
    words whose probabilities are the step's posterior columns."""
    from leakage.seats._trace import HolderSteps, kl_bits

    vocab = reader.vocab
    mask = np.isfinite(log_prior)
    prior_lp = _normalise(np.where(mask, log_prior, -np.inf))
    truth_row = vocab.index.position(truth)
    rows = [vocab.index.position(w) for w in labels]
    by_turn = dict(zip(heard, posts, strict=True))
    out = HolderSteps([], [], [], [], [], [], [], [], _entropy_bits(prior_lp))
    before_lp, before_h = prior_lp, out.prior_entropy
    rank: int | None = _rank(prior_lp, truth_row)
    prob = float(np.exp(prior_lp[truth_row])) if truth_row is not None else 0.0
    best: list[tuple[str, float]] = []
    for t in range(len(texts)):
        post = by_turn.get(t)
        if post is None:
            out.counted.append(False)
            out.gain.append(0.0)
            out.kl.append(0.0)
            out.entropy.append(before_h)
        else:
            h = post.entropy_bits()
            p_now, p_before = np.exp(post.log_p), np.exp(before_lp)
            out.counted.append(True)
            out.gain.append(before_h - h)
            out.kl.append(kl_bits(p_now, p_before))
            out.entropy.append(h)
            before_lp, before_h = post.log_p, h
            rank = post.rank(truth_row) if truth_row is not None else None
            prob = post.probability(truth_row) if truth_row is not None else 0.0
            best = post.top(top)
        out.probability.append(prob)
        out.rank.append(rank)
        out.columns.append(
            np.array([0.0 if r is None else float(np.exp(before_lp[r])) for r in rows])
        )
        out.extra.append({"own_word": own, "top": dict(best)})
    return out


def reveal_bits(civilian: NDArray[np.float64], spy: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each statement's value to the civilians, in bits, from a reader's log-likelihoods of
    the statements under the civilians' word (``civilian``) and the spies' (``spy``), read in
    one call so that a backend's per-row constants cancel::

        y = log2 [ P(statement | civilians' word) / P(statement | spies' word) ]

    the evidence a listener who holds the civilians' word gets that the speaker shares it,
    against the alternative a civilian must rule out: that the speaker is a spy describing
    the spies' word. It is the per-statement evidence ``d`` that the outside observer's spy
    posterior sums per player (:func:`leakage.posterior.spy_posterior`) and the SpyGame
    form of the reveal value of Karabag & Topcu's section 4 (a clue must tell the allies
    that its speaker knows the secret), the plane's y from every seat
    (:mod:`leakage.curves._plane`). Why not the civilian voter's own seat (its word only,
    the other word marginalised over the vocabulary): that seat's reader picks the spy
    barely above chance on the CK-Arena dev logs (0.52; the players 0.70, docs/games.md),
    so a change in its figure would mostly measure the reader's noise; the pair's ratio is
    what a civilian would learn were it told the other word, an upper reference for it."""
    return np.asarray((civilian - spy) / LOG2, dtype=np.float64)


def pair_reveal_bits(
    backend: Any, texts: Sequence[str], civilian_word: str, spy_word: str
) -> NDArray[np.float64]:
    """:func:`reveal_bits` of ``texts`` by ``backend``, asked once about the pair."""
    if not texts:
        return np.zeros(0)
    rows = np.asarray(backend.loglik(list(texts), [civilian_word, spy_word]), dtype=np.float64)
    return reveal_bits(rows[:, 0], rows[:, 1])


def spy_rho(players: int, spies: int) -> float:
    """ρ = (k − 1)/(n − 1): the chance that another speaker is the other spy."""
    return (spies - 1) / (players - 1) if players > 1 else 0.0
