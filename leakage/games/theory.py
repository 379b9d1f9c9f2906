"""Propositions 1-3 of Karabag & Topcu and a Monte-Carlo simulator that checks them.

The abstract game. N players, one chameleon in a uniformly random speaking position; K
candidates, a uniform secret w. A non-chameleon's response r is drawn from a *stationary*
strategy π(r | w) (a K x A matrix over an abstract response alphabet) or, for π_amb, from a
history-dependent rule. The chameleon plays well: it answers with the posterior predictive
of the responses before it (the marginal when it speaks first), votes for a random player,
and when caught guesses the maximum-posterior candidate. Each non-chameleon votes for the
player whose response is least likely under π(· | w); a tie in the tally is broken by a
randomly drawn player, as in the engine. The non-chameleons win when the chameleon is caught
and guesses wrong.

The paper's exact definitions of α and φ are not reproduced here; we use these, under which
the stated bounds hold (checked by :func:`check`, and Proposition 2 by a short proof):

- **Trivial** strategy: every response the same. The chameleon is accused with probability
  1/N and guesses with probability 1/K: a win rate of (1/N)(1 - 1/K) (23.4% for N = 4,
  K = 16).
- **Concealing** (Proposition 1): α is the mutual information I(W; R) in nats of one
  response; bound 1/N + (N-1)/N² · sqrt((K-1)α/K). Family: with probability ε the response
  is the secret's own associate, else the associate of a uniformly drawn candidate.
- **Revealing** (Proposition 2): with probability φ a response is revealing, drawn from
  ρ(· | w), else a generic response that is the same for every secret; α is twice the
  smallest squared Hellinger distance between ρ(· | w) and ρ(· | w'). The chameleon's MAP
  guess after N-1 responses errs with probability at most
  Σ_{w'≠w} BC(π_w, π_w')^(N-1) ≤ (K-1) exp(-(N-1)αφ/2) (Bhattacharyya bound), below the
  paper's 6(K-1) exp(-(N-1)αφ/2).
- **π_amb** (Proposition 3): K = l(N+1) candidates in N+1 groups of l. In speaking order
  each non-chameleon names ("eliminates") a uniformly drawn group not yet named that does not
  hold the secret; the chameleon, not knowing the secret, names a group not yet named. A
  chameleon that named the secret's group is voted out by every non-chameleon; otherwise
  every non-chameleon votes for the first speaker (the second speaker if it is the first).
  The chameleon in position j ≥ 2 is caught with probability 1/(N+2-j), in position 1
  always, so P(caught) = H_N / N, and a caught chameleon guesses within one group:
  win = (H_N / N)(l-1)/l ≥ (log(N+1) + 0.4)/N · (l-1)/l for N ≥ 2.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

# -- the bounds ---------------------------------------------------------------------


def trivial_win_rate(n: int, k: int) -> float:
    """Exact non-chameleon win rate of the trivial strategy: (1/N)(1 - 1/K)."""
    return (1 / n) * (1 - 1 / k)


def concealing_bound(n: int, k: int, alpha: float) -> float:
    """Proposition 1: win rate ≤ 1/N + (N-1)/N² · sqrt((K-1)α/K)."""
    return 1 / n + (n - 1) / n**2 * math.sqrt((k - 1) * alpha / k)


def revealing_bound(n: int, k: int, alpha: float, phi: float) -> float:
    """Proposition 2: win rate ≤ 6(K-1) exp(-(N-1)αφ/2)."""
    return 6 * (k - 1) * math.exp(-(n - 1) * alpha * phi / 2)


def amb_bound(n: int, l: int) -> float:  # noqa: E741 (the paper's l)
    """Proposition 3: π_amb's win rate ≥ (log(N+1) + 0.4)/N · (l-1)/l (K = l(N+1))."""
    return (math.log(n + 1) + 0.4) / n * (l - 1) / l


# -- abstract strategies ------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    """A stationary strategy: ``pi[w, r]`` = P(response r | secret w), and its parameters."""

    name: str
    pi: NDArray[np.float64]
    alpha: float
    phi: float = 1.0


def mutual_information(pi: NDArray[np.float64]) -> float:
    """I(W; R) in nats for a uniform secret."""
    q = pi.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(pi > 0, pi * np.log(pi / q), 0.0)
    return float(terms.sum() / pi.shape[0])


def trivial(k: int) -> Strategy:
    return Strategy("trivial", np.ones((k, 1)), 0.0)


def concealing(k: int, eps: float) -> Strategy:
    """With probability ``eps`` the secret's own associate, else a random candidate's."""
    pi = np.full((k, k), (1 - eps) / k) + eps * np.eye(k)
    return Strategy(f"concealing(eps={eps:g})", pi, mutual_information(pi))


def revealing(k: int, phi: float, kappa: float) -> Strategy:
    """With probability ``phi`` a revealing response (the secret's associate with
    probability ``kappa``, else a random candidate's), otherwise one generic response."""
    rho = np.full((k, k), (1 - kappa) / k) + kappa * np.eye(k)
    bc = np.sqrt(rho) @ np.sqrt(rho).T
    off = ~np.eye(k, dtype=bool)
    alpha = float(2 * (1 - bc[off]).min())
    pi = np.hstack([np.full((k, 1), 1 - phi), phi * rho])
    return Strategy(f"revealing(phi={phi:g},kappa={kappa:g})", pi, alpha, phi)


# -- the simulator ------------------------------------------------------------------


@dataclass(frozen=True)
class SimResult:
    win_rate: float
    stderr: float
    caught_rate: float
    guess_rate: float
    """P(a caught chameleon guesses right)."""
    games: int


def _random_argmax(mask: NDArray[np.bool_], rng: np.random.Generator) -> NDArray[np.int64]:
    """Per row, a uniformly drawn column among the True ones."""
    return np.argmax(mask * rng.random(mask.shape), axis=1)


def tally_many(votes: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.int64]:
    """The accused of each game (rows: games, columns: each voter's target)."""
    m, n = votes.shape
    counts = np.zeros((m, n), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(m), n), votes.ravel()), 1)
    tied = counts == counts.max(axis=1, keepdims=True)
    breaker_vote = votes[np.arange(m), rng.integers(n, size=m)]
    keeps = tied[np.arange(m), breaker_vote]
    return np.where(keeps, breaker_vote, _random_argmax(tied, rng))


def _sample(cdf: NDArray[np.float64], rng: np.random.Generator) -> NDArray[np.int64]:
    u = rng.random(cdf.shape[:-1])
    return np.minimum((u[..., None] > cdf).sum(axis=-1), cdf.shape[-1] - 1)


def _result(
    win: NDArray[np.bool_], caught: NDArray[np.bool_], right: NDArray[np.bool_]
) -> SimResult:
    m = win.size
    p = float(win.mean())
    return SimResult(
        win_rate=p,
        stderr=math.sqrt(max(p * (1 - p), 1e-12) / m),
        caught_rate=float(caught.mean()),
        guess_rate=float(right[caught].mean()) if caught.any() else 0.0,
        games=m,
    )


def simulate(strategy: Strategy, n: int, games: int = 20_000, seed: int = 0) -> SimResult:
    """Monte-Carlo win rate of a stationary strategy against the chameleon described above."""
    rng = np.random.default_rng(seed)
    pi = strategy.pi
    k = pi.shape[0]
    rows = np.arange(games)
    w = rng.integers(k, size=games)
    c = rng.integers(n, size=games)
    cdf = np.cumsum(pi, axis=1)
    resp = _sample(np.broadcast_to(cdf[w][:, None, :], (games, n, cdf.shape[1])), rng)
    logpi = np.log(np.maximum(pi, 1e-300))
    contrib = logpi[:, resp].transpose(1, 2, 0)  # games x seats x K
    seats = np.arange(n)
    before = seats[None, :] < c[:, None]
    logpost = np.where(before[..., None], contrib, 0.0).sum(axis=1)
    post = np.exp(logpost - logpost.max(axis=1, keepdims=True))
    post /= post.sum(axis=1, keepdims=True)
    resp[rows, c] = _sample(np.cumsum(post @ pi, axis=1), rng)

    lik = pi[w[:, None], resp]  # games x seats
    votes = np.empty((games, n), dtype=np.int64)
    for v in range(n):
        masked = np.where(seats[None, :] == v, np.inf, lik)
        least = masked == masked.min(axis=1, keepdims=True)
        votes[:, v] = _random_argmax(least, rng)
    cham_vote = (c + 1 + rng.integers(n - 1, size=games)) % n
    votes[rows, c] = cham_vote
    caught = tally_many(votes, rng) == c

    contrib = logpi[:, resp].transpose(1, 2, 0)
    others = seats[None, :] != c[:, None]
    logpost = np.where(others[..., None], contrib, 0.0).sum(axis=1)
    top = np.isclose(logpost, logpost.max(axis=1, keepdims=True), rtol=0, atol=1e-9)
    right = _random_argmax(top, rng) == w
    return _result(caught & ~right, caught, right)


def simulate_amb(n: int, l: int, games: int = 20_000, seed: int = 0) -> SimResult:  # noqa: E741
    """Monte-Carlo win rate of π_amb (K = l(N+1)); see the module doc."""
    rng = np.random.default_rng(seed)
    groups = n + 1
    rows = np.arange(games)
    g = rng.integers(groups, size=games)
    c = rng.integers(n, size=games)
    remaining = np.ones((games, groups), dtype=bool)
    named = np.empty((games, n), dtype=np.int64)
    secret_group = np.arange(groups)[None, :] == g[:, None]
    for i in range(n):
        honest = (c != i)[:, None]
        allowed = remaining & ~(honest & secret_group)
        named[:, i] = _random_argmax(allowed, rng)
        remaining[rows, named[:, i]] = False
    inconsistent = named[rows, c] == g
    seats = np.arange(n)
    first = np.where(seats == 0, 1, 0)  # whom each seat votes for when no one is exposed
    votes = np.where(inconsistent[:, None], c[:, None], first[None, :])
    votes[rows, c] = first[c]
    caught = tally_many(votes, rng) == c
    # The chameleon's guess: first speaker -> the group nobody named; later -> its own
    # named group (being caught there means it named the secret's group).
    leftover = np.argmax(remaining, axis=1)
    guessed_group = np.where(c == 0, leftover, named[rows, c])
    right = (guessed_group == g) & (rng.integers(l, size=games) == 0)
    return _result(caught & ~right, caught, right)


# -- the check ----------------------------------------------------------------------


@dataclass(frozen=True)
class CheckRow:
    strategy: str
    n: int
    k: int
    simulated: float
    stderr: float
    bound: float
    kind: str
    """``upper`` (simulated must not exceed the bound), ``lower`` or ``exact``."""

    @property
    def respected(self) -> bool:
        slack = 4 * self.stderr
        if self.kind == "upper":
            return self.simulated <= self.bound + slack
        if self.kind == "lower":
            return self.simulated >= self.bound - slack
        return abs(self.simulated - self.bound) <= slack


def check(
    ns: Iterable[int] = range(4, 13),
    *,
    l: int = 3,  # noqa: E741
    games: int = 20_000,
    seed: int = 0,
    eps: float = 0.3,
    phi: float = 0.9,
    kappa: float = 0.9,
) -> list[CheckRow]:
    """Simulated win rates against the bounds for N in ``ns`` with K = l(N+1)."""
    out = []
    for n in ns:
        k = l * (n + 1)
        s = seed + 1000 * n
        r = simulate(trivial(k), n, games, s)
        out.append(CheckRow("trivial", n, k, r.win_rate, r.stderr, trivial_win_rate(n, k), "exact"))
        st = concealing(k, eps)
        r = simulate(st, n, games, s + 1)
        bound = concealing_bound(n, k, st.alpha)
        out.append(CheckRow(st.name, n, k, r.win_rate, r.stderr, bound, "upper"))
        st = revealing(k, phi, kappa)
        r = simulate(st, n, games, s + 2)
        bound = revealing_bound(n, k, st.alpha, st.phi)
        out.append(CheckRow(st.name, n, k, r.win_rate, r.stderr, bound, "upper"))
        r = simulate_amb(n, l, games, s + 3)
        out.append(CheckRow("amb", n, k, r.win_rate, r.stderr, amb_bound(n, l), "lower"))
    return out


def plot_check(rows: list[CheckRow], path: str | Path) -> Path:
    """Simulated win rates (points, ±2 s.e.) and the bounds (lines) against N."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.0), dpi=100)
    names = list(dict.fromkeys(r.strategy for r in rows))
    for i, name in enumerate(names):
        rs = [r for r in rows if r.strategy == name]
        ns = [r.n for r in rs]
        kind = rs[0].kind
        ax.errorbar(ns, [r.simulated for r in rs], yerr=[2 * r.stderr for r in rs], fmt="o",
                    color=f"C{i}", ms=4, label=f"{name}: simulated")  # fmt: skip
        line = "--" if kind == "lower" else "-"
        what = "exact rate" if kind == "exact" else f"{kind} bound"
        ax.plot(ns, [min(r.bound, 1.0) for r in rs], line, color=f"C{i}", lw=1,
                label=f"{name.split('(')[0]}: {what}")  # fmt: skip
    ax.set_xlabel(f"players N (K = l(N+1), l = {rows[0].k // (rows[0].n + 1)})")
    ax.set_ylabel("non-chameleon win rate")
    ax.set_ylim(0, 0.8)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title("Karabag & Topcu bounds vs simulation")
    fig.tight_layout()
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def rows_as_dicts(rows: list[CheckRow]) -> list[dict[str, Any]]:
    return [{**asdict(r), "respected": r.respected} for r in rows]
