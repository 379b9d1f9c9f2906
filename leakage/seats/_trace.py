"""A seat's figures per turn, on plain values: what scoring (``leakage.scoring``) turns into a
report's steps when a seat is asked for (``ScoreOptions.seat``).

Every seat has *holders*, the players who sit there (the spies for ``spy``, the civilians for
``civilian``, the non-chameleons for ``non-chameleon``). Each holder has its own figures per
turn (``SeatTrace.views``); the step's own fields (posterior, entropy, gain, KL, the
probability and rank of what the seat is after) are the first holder's in seat order, and a
turn counts when it is another player's (a player learns nothing from its own turn).

- ``spy``: P(civilians' word | statements, own word) over an open vocabulary
  (:func:`spy_steps`; the step's ``posterior`` gives the game's candidates' probabilities,
  a view the seat's top words).
- ``civilian``: P(player j is a spy | statements, own word), the other word marginalised and
  the own role unknown (:func:`voter_posterior`); the "secret" is the true set of spies,
  entropy and ranks are over the hypotheses (who the spies are, the holder among them or not).
- ``non-chameleon``: P(player j is the chameleon | clues, the card, the secret): a
  non-chameleon's clue is drawn given the secret, the chameleon's given a candidate it does
  not know (uniform over the card), so a clue of player j weighs j's chance of being the
  chameleon by (1/K) Σ_w P(r | w) / P(r | secret) (as MAgIC's PGM agent for The Chameleon,
  docs/games.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from math import comb, log
from typing import Any

import numpy as np
from numpy.typing import NDArray

LOG2 = log(2.0)


@dataclass
class SeatTrace:
    """Per-turn figures of one game from one seat (m turns, L labels)."""

    seat: str
    holders: tuple[str, ...]
    """The players who sit in the seat, in seat order; the step fields are the first's."""
    labels: tuple[str, ...]
    """What ``posterior``'s columns are: the game's candidates (``spy``) or its players."""
    posterior: NDArray[np.float64]
    entropy_bits: NDArray[np.float64]
    information_gain_bits: NDArray[np.float64]
    kl_bits: NDArray[np.float64]
    counted: NDArray[np.bool_]
    secret_probability: NDArray[np.float64] | None
    secret_rank: NDArray[np.int64] | None
    prior_entropy_bits: float
    views: list[dict[str, dict[str, Any]]] = field(default_factory=list)
    """Per turn, holder -> its figures after the turn."""
    info: dict[str, Any] = field(default_factory=dict)
    """How the seat was read (vocabulary, shortlist, prior), recorded in the settings."""
    reveal_bits: NDArray[np.float64] | None = None
    """``spy``: every turn's value to the civilians, log2 P(statement | civilians' word) /
    P(statement | spies' word) by the seat's reader (:func:`leakage.seats.pair_reveal_bits`):
    the reveal-vs-conceal plane's y beside the spy's gain as x. None for the other seats."""


def entropy_bits(p: NDArray[np.float64]) -> float:
    q = p[p > 0]
    return float(-(q * np.log2(q)).sum())


def kl_bits(p: NDArray[np.float64], q: NDArray[np.float64]) -> float:
    keep = p > 0
    return float((p[keep] * (np.log2(p[keep]) - np.log2(np.maximum(q[keep], 1e-300)))).sum())


def rank_of(values: NDArray[np.float64], at: int) -> int:
    """1 + the number of other entries at least as large (ties count against it)."""
    return int((values >= values[at]).sum())


@dataclass
class HolderSteps:
    """One holder's figures after each turn (carried over a turn it does not count)."""

    counted: list[bool]
    entropy: list[float]
    gain: list[float]
    kl: list[float]
    probability: list[float | None]
    rank: list[int | None]
    columns: list[NDArray[np.float64]]
    """Per turn, the posterior over the trace's labels."""
    extra: list[dict[str, Any]]
    prior_entropy: float


def assemble(
    seat: str,
    holders: Sequence[str],
    labels: Sequence[str],
    per_holder: Sequence[HolderSteps],
    *,
    has_secret: bool = True,
    info: dict[str, Any] | None = None,
    reveal_bits: NDArray[np.float64] | None = None,
) -> SeatTrace:
    """The :class:`SeatTrace` of holders' steps (the first holder's are the step fields)."""
    first = per_holder[0]
    m = len(first.counted)
    views: list[dict[str, dict[str, Any]]] = []
    for t in range(m):
        view = {}
        for h, s in zip(holders, per_holder, strict=True):
            view[h] = {
                "counted": s.counted[t],
                "entropy_bits": s.entropy[t],
                "information_gain_bits": s.gain[t],
                "secret_probability": s.probability[t],
                "secret_rank": s.rank[t],
                **s.extra[t],
            }
        views.append(view)
    posterior = np.stack(first.columns) if m else np.zeros((0, len(labels)), dtype=np.float64)
    return SeatTrace(
        seat=seat,
        holders=tuple(holders),
        labels=tuple(labels),
        posterior=posterior,
        entropy_bits=np.asarray(first.entropy, dtype=np.float64),
        information_gain_bits=np.asarray(first.gain, dtype=np.float64),
        kl_bits=np.asarray(first.kl, dtype=np.float64),
        counted=np.asarray(first.counted, dtype=bool),
        secret_probability=(
            np.asarray([p or 0.0 for p in first.probability]) if has_secret else None
        ),
        secret_rank=np.asarray([r or 0 for r in first.rank], dtype=np.int64)
        if has_secret
        else None,
        prior_entropy_bits=first.prior_entropy,
        views=views,
        info=dict(info or {}),
        reveal_bits=reveal_bits,
    )


# -- hypotheses over who is who ------------------------------------------------------------


@dataclass
class Hypotheses:
    """A posterior over hypotheses (a set of players, and whether the holder is among them)."""

    sets: list[frozenset[str]]
    holder_in: list[bool]
    log_prior: NDArray[np.float64]

    def posterior(self, log_lik: NDArray[np.float64]) -> NDArray[np.float64]:
        z = self.log_prior + log_lik
        z = z - z.max()
        p = np.exp(z)
        return p / p.sum()

    def marginals(
        self, p: NDArray[np.float64], players: Sequence[str], holder: str
    ) -> NDArray[np.float64]:
        """P(player is in the set) for every player (the holder: P(it is among them))."""
        out = np.zeros(len(players))
        for q, s, mine in zip(p, self.sets, self.holder_in, strict=True):
            for j, pid in enumerate(players):
                if pid in s or (pid == holder and mine):
                    out[j] += q
        return out


def figures(
    hyp: Hypotheses,
    per_turn_loglik: Sequence[NDArray[np.float64] | None],
    players: Sequence[str],
    holder: str,
    truth: int | None,
) -> HolderSteps:
    """A holder's steps from the hypotheses' cumulative log-likelihoods after each turn
    (None: the turn does not count for this holder)."""
    prior = hyp.posterior(np.zeros(len(hyp.sets)))
    out = HolderSteps([], [], [], [], [], [], [], [], entropy_bits(prior))
    before = prior
    for ll in per_turn_loglik:
        p = before if ll is None else hyp.posterior(ll)
        out.counted.append(ll is not None)
        h = entropy_bits(p)
        out.gain.append(0.0 if ll is None else entropy_bits(before) - h)
        out.kl.append(0.0 if ll is None else kl_bits(p, before))
        out.entropy.append(h)
        out.probability.append(None if truth is None else float(p[truth]))
        out.rank.append(None if truth is None else rank_of(p, truth))
        marg = hyp.marginals(p, players, holder)
        out.columns.append(marg)
        out.extra.append(
            {"p_odd_one_out": {pid: float(x) for pid, x in zip(players, marg, strict=True)}}
        )
        before = p
    return out


def chameleon_hypotheses(players: Sequence[str], holder: str, k: int) -> Hypotheses:
    """A non-chameleon's hypotheses: the k chameleons among the other players, uniform."""
    others = [p for p in players if p != holder]
    sets = [frozenset(c) for c in combinations(others, k)]
    return Hypotheses(sets, [False] * len(sets), np.zeros(len(sets)))


def non_chameleon_steps(
    loglik: NDArray[np.float64],
    speakers: Sequence[str],
    players: Sequence[str],
    holder: str,
    secret_index: int,
    chameleons: Sequence[str],
) -> HolderSteps:
    """A non-chameleon holder's P(player is the chameleon) after each turn (module
    docstring): ``loglik`` holds every turn's row over the card."""
    hyp = chameleon_hypotheses(players, holder, len(chameleons))
    k = loglik.shape[1]
    # log of (1/K) Σ_w P(r|w) / P(r|secret): per-row constants cancel in the ratio
    ratio = np.logaddexp.reduce(loglik, axis=1) - np.log(k) - loglik[:, secret_index]
    truth_set = frozenset(chameleons)
    truth = hyp.sets.index(truth_set) if truth_set in hyp.sets else None
    member = np.array([[p in s for s in hyp.sets] for p in speakers], dtype=np.float64).reshape(
        len(speakers), len(hyp.sets)
    )
    cumulative = np.zeros(len(hyp.sets))
    per_turn: list[NDArray[np.float64] | None] = []
    for t, who in enumerate(speakers):
        if who == holder:
            per_turn.append(None)
            continue
        cumulative = cumulative + member[t] * ratio[t]
        per_turn.append(cumulative.copy())
    return figures(hyp, per_turn, players, holder, truth)


def voter_hypotheses(players: Sequence[str], holder: str, k: int) -> Hypotheses:
    """A voter's hypotheses (its role unknown): it is a civilian and a set S of k others are
    the spies, or it is a spy with k - 1 other spies S; each weighted by its share of the
    deal. ``sets`` holds the others who are spies."""
    n = len(players)
    others = [p for p in players if p != holder]
    sets: list[frozenset[str]] = []
    mine: list[bool] = []
    logs: list[float] = []
    if n - k >= 1 and len(others) >= k:
        base = log((n - k) / n) - log(comb(len(others), k))
        for spies in combinations(others, k):
            sets.append(frozenset(spies))
            mine.append(False)
            logs.append(base)
    if k >= 1 and len(others) >= k - 1:
        base = log(k / n) - log(comb(len(others), k - 1))
        for partners in combinations(others, k - 1):
            sets.append(frozenset(partners))
            mine.append(True)
            logs.append(base)
    return Hypotheses(sets, mine, np.asarray(logs, dtype=np.float64))


def voter_loglik(
    hyp: Hypotheses,
    others: Sequence[str],
    a: dict[str, NDArray[np.float64]],
    b: dict[str, float],
    log_px: NDArray[np.float64],
) -> NDArray[np.float64]:
    """Each voter hypothesis's log-likelihood: A_j(x) summed over the speakers who hold the
    unknown word x, marginalised under log π(x) (``log_px``, normalised), plus A_j(w) of
    those who hold the voter's own word (``leakage.seats`` module docstring)."""
    zero = np.zeros(len(log_px))
    out = np.empty(len(hyp.sets))
    for h, (s, mine) in enumerate(zip(hyp.sets, hyp.holder_in, strict=True)):
        unknown = [j for j in others if (j not in s) == mine]  # civilians if I am a spy
        known = [j for j in others if j not in unknown]
        ax = log_px + sum((a[j] for j in unknown), zero)
        out[h] = float(np.logaddexp.reduce(ax)) + sum(b[j] for j in known)
    return out


def civilian_steps(
    table_x: NDArray[np.float64],
    table_w: NDArray[np.float64],
    log_px: NDArray[np.float64],
    speakers: Sequence[str],
    players: Sequence[str],
    holder: str,
    spies: Sequence[str],
) -> HolderSteps:
    """A voter holder's P(player is a spy) after each turn: ``table_x`` every statement's row
    over the marginal words, ``table_w`` over the holder's own word."""
    k = len(spies)
    hyp = voter_hypotheses(players, holder, k)
    others = [p for p in players if p != holder]
    truth_set = frozenset(s for s in spies if s != holder)
    truth_key = (truth_set, holder in spies)
    keys = list(zip(hyp.sets, hyp.holder_in, strict=True))
    truth = keys.index(truth_key) if truth_key in keys else None
    a = {j: np.zeros(len(log_px)) for j in others}
    b = dict.fromkeys(others, 0.0)
    per_turn: list[NDArray[np.float64] | None] = []
    for t, who in enumerate(speakers):
        if who == holder:
            per_turn.append(None)
            continue
        a[who] = a[who] + table_x[t]
        b[who] += float(table_w[t])
        per_turn.append(voter_loglik(hyp, others, a, b, log_px))
    return figures(hyp, per_turn, players, holder, truth)
