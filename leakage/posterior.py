"""The posterior engine: Bayes updates over candidate secrets and the leakage they imply.

Pure numpy and backend-agnostic. Input is a clues x candidates matrix of log-likelihoods
``L[i, j] = log P(r_i | w_j)`` from any backend; rows need not be normalised. Under the
stationary-strategy assumption the posterior after clues 1..m is

    P(w | r_1..r_m)  ∝  P(w) · Π_i P(r_i | w)

computed in log space with a log-sum-exp normalisation, so that no finite input gives NaN.
Non-finite log-likelihoods (``-inf`` from a zero count) are clipped to a floor instead of
vetoing a candidate; backends should smooth, this is the last line of defence.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
from numpy.typing import ArrayLike, NDArray

SPY_ASSIGNMENTS = ("known", "marginalise")
"""SpyGame: whether the adversary is told which word of the pair is the civilians' (``known``)
or averages over both assignments (``marginalise``)."""

LOG_FLOOR = -700.0
"""The smallest log-likelihood used; ``-inf`` and NaN are replaced by it (exp() is still > 0)."""

_TINY = 1e-300


def _clean(loglik: ArrayLike) -> NDArray[np.float64]:
    a = np.asarray(loglik, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        a = np.where(np.isnan(a), LOG_FLOOR, a)
        a = np.clip(a, LOG_FLOOR, -LOG_FLOOR)
    return a


def normalize_log(logp: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """Probabilities from unnormalised log-probabilities along ``axis`` (stable softmax)."""
    shifted = logp - np.max(logp, axis=axis, keepdims=True)
    p = np.exp(shifted)
    p /= p.sum(axis=axis, keepdims=True)
    return p


def entropy_bits(p: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """Shannon entropy in bits; 0·log 0 = 0."""
    p = np.asarray(p, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log2(np.maximum(p, _TINY)), 0.0)
    return np.clip(terms.sum(axis=axis), 0.0, None)


def kl_bits(p: NDArray[np.float64], q: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """KL(p || q) in bits; q is floored so that the result is finite."""
    p = np.asarray(p, dtype=np.float64)
    q = np.maximum(np.asarray(q, dtype=np.float64), _TINY)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * (np.log2(np.maximum(p, _TINY)) - np.log2(q)), 0.0)
    return np.clip(terms.sum(axis=axis), 0.0, None)


def ranks_of(p: NDArray[np.float64], index: int) -> NDArray[np.int64]:
    """Rank (1 = most probable) of candidate ``index`` in every row of ``p``.

    Ties count against the candidate: with a uniform posterior every candidate has rank K,
    so a flat posterior never reads as a hit.
    """
    p = np.atleast_2d(p)
    return (p >= p[:, [index]]).sum(axis=1).astype(np.int64)


@dataclass(frozen=True, slots=True)
class Trace:
    """Per-step leakage figures of one sequence of clues (m steps, K candidates).

    ``posterior[i]`` is the posterior after step i; ``prior`` the one before step 0.
    Steps that were not counted leave the posterior unchanged (gain 0, KL 0).
    """

    prior: NDArray[np.float64]
    posterior: NDArray[np.float64]
    entropy_bits: NDArray[np.float64]
    information_gain_bits: NDArray[np.float64]
    kl_bits: NDArray[np.float64]
    counted: NDArray[np.bool_]
    secret_probability: NDArray[np.float64] | None
    secret_rank: NDArray[np.int64] | None
    prior_entropy_bits: float

    def in_top_k(self, k: int) -> NDArray[np.bool_] | None:
        """Whether the secret is among the k most probable candidates after each step."""
        return None if self.secret_rank is None else self.secret_rank <= k


def posterior_trace(
    loglik: ArrayLike,
    *,
    prior: ArrayLike | None = None,
    counted: ArrayLike | None = None,
    secret_index: int | None = None,
) -> Trace:
    """Run the Bayes update over the rows of ``loglik`` (clues x candidates).

    ``prior`` defaults to uniform; ``counted`` (one bool per clue) says which clues update
    the posterior (default: all); ``secret_index`` enables probability and rank of the secret.
    """
    L = np.asarray(loglik, dtype=np.float64)
    if L.ndim != 2:
        raise ValueError(f"loglik must be 2-D (clues x candidates), got shape {L.shape}")
    if not np.isfinite(L).all():
        L = _clean(L)
    m, k = L.shape
    if k == 0:
        raise ValueError("there must be at least one candidate")
    if prior is None:
        prior_p = np.full(k, 1.0 / k)
    else:
        pr = np.asarray(prior, dtype=np.float64)
        if pr.shape != (k,) or np.any(pr < 0) or not np.isfinite(pr).all() or pr.sum() <= 0:
            raise ValueError("prior must be k non-negative finite numbers with a positive sum")
        prior_p = pr / pr.sum()
    mask = np.ones(m, dtype=bool) if counted is None else np.asarray(counted, dtype=bool)
    if mask.shape != (m,):
        raise ValueError(f"counted must have one entry per clue ({m}), got shape {mask.shape}")
    if secret_index is not None and not 0 <= secret_index < k:
        raise ValueError(f"secret_index {secret_index} out of range for {k} candidates")

    secret = None if secret_index is None else np.array([secret_index])
    return _traces(L[None], mask[None], np.log(np.maximum(prior_p, _TINY)), secret)[0]


def posterior_traces(
    loglik: ArrayLike, counted: ArrayLike, secret_index: ArrayLike | None = None
) -> list[Trace]:
    """:func:`posterior_trace` for G games of the same shape at once, uniform prior.

    ``loglik`` is G x m clues x K candidates, ``counted`` G x m, ``secret_index`` G (or None
    when no game has a secret). The same arithmetic as one game at a time, in one pass of
    whole-array operations instead of G: on 4 x 16 matrices numpy's per-call cost, not the
    arithmetic, is what a game costs.
    """
    L = np.asarray(loglik, dtype=np.float64)
    if L.ndim != 3 or L.shape[2] == 0:
        raise ValueError(f"loglik must be games x clues x candidates, got shape {L.shape}")
    unclean = ~np.isfinite(L).all(axis=(1, 2))
    if unclean.any():  # cleaned game by game, as one game alone would be
        L = L.copy()
        L[unclean] = _clean(L[unclean])
    mask = np.asarray(counted, dtype=bool)
    if mask.shape != L.shape[:2]:
        raise ValueError(f"counted must be games x clues {L.shape[:2]}, got {mask.shape}")
    secret = None if secret_index is None else np.asarray(secret_index, dtype=np.int64)
    if secret is not None and (
        secret.shape != L.shape[:1]
        or secret.min(initial=0) < 0
        or secret.max(initial=0) >= L.shape[2]
    ):
        raise ValueError("secret_index must hold one candidate position per game")
    k = L.shape[2]
    return _traces(L, mask, np.full(k, np.log(1.0 / k)), secret)


def _traces(
    L: NDArray[np.float64],
    mask: NDArray[np.bool_],
    log_prior: NDArray[np.float64],
    secret: NDArray[np.int64] | None,
) -> list[Trace]:
    # Row 0 is the prior, row i + 1 the posterior after clue i, for every game g at once.
    # Small matrices dominate (4 clues x 16 words), so this is a handful of whole-array
    # operations whatever the number of games.
    g, m, k = L.shape
    cumulative = np.empty((g, m + 1, k))
    cumulative[:, 0] = log_prior
    np.cumsum(np.where(mask[..., None], L, 0.0), axis=1, out=cumulative[:, 1:])
    cumulative[:, 1:] += log_prior
    cumulative -= cumulative.max(axis=2, keepdims=True)
    allp = np.exp(cumulative)
    allp /= allp.sum(axis=2, keepdims=True)
    log2p = np.log2(np.maximum(allp, _TINY))
    plogp = np.where(allp > 0, allp * log2p, 0.0)
    h_all = np.maximum(-plogp.sum(axis=2), 0.0)
    post, h = allp[:, 1:], h_all[:, 1:]
    gain = np.where(mask, h_all[:, :-1] - h, 0.0)
    kl = np.where(mask, np.maximum((plogp[:, 1:] - post * log2p[:, :-1]).sum(axis=2), 0.0), 0.0)
    if secret is not None:
        sp = post[np.arange(g), :, secret]
        sr = (post >= sp[..., None]).sum(axis=2).astype(np.int64)
    prior_h = h_all[:, 0].tolist()
    return [
        Trace(
            allp[i, 0],
            post[i],
            h[i],
            gain[i],
            kl[i],
            mask[i],
            None if secret is None else sp[i],
            None if secret is None else sr[i],
            prior_h[i],
        )
        for i in range(g)
    ]


@dataclass(frozen=True, slots=True)
class SpyTrace:
    """Per-statement figures of one SpyGame (m statements, K candidate words, n players).

    Unlike :class:`Trace`, each statement's word posterior is from that statement alone
    (uniform prior): the speakers do not share a word. ``spy_posterior`` accumulates instead,
    over every statement so far.
    """

    posterior: NDArray[np.float64]
    """m x K: the speaker's word posterior from the statement alone."""
    entropy_bits: NDArray[np.float64]
    information_gain_bits: NDArray[np.float64]
    """Entropy drop from the uniform prior."""
    kl_bits: NDArray[np.float64]
    """KL divergence from uniform."""
    secret_probability: NDArray[np.float64]
    """Probability of the speaker's own word."""
    secret_rank: NDArray[np.int64]
    """Rank of the speaker's own word (1 = most probable; ties count against it)."""
    spy_posterior: NDArray[np.float64]
    """m x n: P(player is a spy) given every statement up to and including this one."""
    prior_entropy_bits: float
    outlier_scores: list[dict[str, float]] | None = None
    """Per statement, player id -> outlier score (``leakage.metrics.outlier_trace``), when
    the backend could embed the statements; the engine never sets it."""


def spy_trace(
    loglik: ArrayLike,
    speakers: ArrayLike,
    word_index: ArrayLike,
    n_players: int,
    n_spies: int = 1,
    *,
    assignment: str = "known",
) -> SpyTrace:
    """The :class:`SpyTrace` of one SpyGame from its statements x candidates log-likelihoods.

    Columns 0 and 1 of ``loglik`` are the civilians' word and the spy's; ``speakers`` gives
    each statement's speaker as a seat (0 .. ``n_players`` - 1), ``word_index`` the position
    of that speaker's word among the candidates. The spy posterior after statement i is
    :func:`spy_posterior` of every player's evidence so far, ``loglik[., 0] - loglik[., 1]``
    summed over their statements.
    """
    L = np.asarray(loglik, dtype=np.float64)
    if L.ndim != 2 or L.shape[1] < 2:
        raise ValueError(f"loglik must be statements x candidates (2 or more), got {L.shape}")
    m, k = L.shape
    seat = np.asarray(speakers, dtype=np.intp).reshape(-1)
    own = np.asarray(word_index, dtype=np.intp).reshape(-1)
    if seat.shape != (m,) or own.shape != (m,):
        raise ValueError(f"speakers and word_index must have one entry per statement ({m})")
    if m and (seat.min() < 0 or seat.max() >= n_players or own.min() < 0 or own.max() >= k):
        raise ValueError("a speaker or word index is out of range")
    post = normalize_log(L) if m else np.zeros((0, k))
    h = entropy_bits(post)
    prior_h = float(np.log2(k))
    # Player p's evidence after statement i: its own statements' differences summed in order.
    steps = np.zeros((m, n_players))
    steps[np.arange(m), seat] = L[:, 0] - L[:, 1]
    evidence = np.cumsum(steps, axis=0)
    spy = _spy_posteriors(_clean(evidence), n_spies, assignment) if m else np.zeros((m, n_players))
    probability = post[np.arange(m), own]
    return SpyTrace(
        posterior=post,
        entropy_bits=h,
        information_gain_bits=prior_h - h,
        kl_bits=kl_bits(post, np.full(k, 1.0 / k)),
        secret_probability=probability,
        secret_rank=(post >= probability[:, None]).sum(axis=1).astype(np.int64),
        spy_posterior=spy,
        prior_entropy_bits=prior_h,
    )


def spy_posterior(
    civilian_minus_spy: ArrayLike,
    n_spies: int = 1,
    *,
    assignment: str = "known",
) -> NDArray[np.float64]:
    """P(player is a spy) for each player, from per-player evidence.

    ``civilian_minus_spy[p]`` is Σ over player p's statements so far of
    log P(statement | civilian word) - log P(statement | spy word). Every set S of
    ``n_spies`` players is a hypothesis with P(S) ∝ exp(-Σ_{p∈S} d_p) (uniform prior over
    sets); the result is the marginal P(p ∈ S). With ``assignment="marginalise"`` which word
    of the pair belongs to the civilians is unknown and both assignments are averaged.
    """
    return _spy_posteriors(_clean(civilian_minus_spy).reshape(1, -1), n_spies, assignment)[0]


def _spy_posteriors(d: NDArray[np.float64], n_spies: int, assignment: str) -> NDArray[np.float64]:
    """:func:`spy_posterior` of every row of ``d`` (rows x players) at once: the spy sets
    and their membership are built once, every row's set scores in one array operation (a
    game's statements are its rows, so a SpyGame trace costs one call, not one per
    statement)."""
    n = d.shape[1]
    if not 1 <= n_spies < max(n, 2):
        raise ValueError(f"n_spies must be between 1 and {n - 1} for {n} players")
    sets = np.array(list(combinations(range(n), n_spies)), dtype=np.int64)
    member = np.zeros((len(sets), n), dtype=bool)
    member[np.arange(len(sets))[:, None], sets] = True
    score = -(member[None, :, :] * d[:, None, :]).sum(axis=2)  # rows x sets
    if assignment == "known":
        weights = normalize_log(score)
    elif assignment == "marginalise":
        # The other assignment: S holds the civilians' word and everyone else the spy's.
        # Relative to the same baseline (everyone holding the civilians' word) its score is
        # Σ_{p∈S} d_p - Σ_all d_p.
        both = np.logaddexp(score, -score - d.sum(axis=1, keepdims=True))
        weights = normalize_log(both)
    else:
        raise ValueError(f"assignment must be 'known' or 'marginalise', not {assignment!r}")
    return weights @ member.astype(np.float64)
