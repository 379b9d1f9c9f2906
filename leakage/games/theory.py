"""Propositions 1-3 of Karabag & Topcu and a Monte-Carlo simulator that checks them.

Karabag & Topcu, "Do LLMs Strategically Reveal, Conceal, and Infer Information? A
Theoretical and Empirical Analysis in The Chameleon Game", section 4. The bounds and the
constants α and φ follow the paper's definitions (cited on each function):

- **Trivial** strategy (section 4.1, after Definition 1): the same response for every secret,
  every non-chameleon votes for player 1. The chameleon is caught with probability 1/N and
  guesses with probability 1/K: a win rate of (1/N)(1 - 1/K) (23.4% for N = 4, K = 16).
- **α-KL pairwise concealing** (Definition 1, Proposition 1): α is the *largest* pairwise
  KL divergence max_{i,j} KL(D^{w_i} || D^{w_j}) between the response distributions; win ≤
  1/N + (N-1)/N² · sqrt((K-1)α/K). Family: with probability ε the response is the secret's
  own associate, else the associate of a uniformly drawn candidate.
- **α-L1 pairwise revealing** (Definition 2, Proposition 2): α is the *smallest* L1 distance
  between the three-bin vectors (p_{w_i>w_j}, p_{w_i=w_j}, p_{w_i<w_j}) of D^{w_i} and
  (p_{w_j<w_i}, p_{w_j=w_i}, p_{w_j>w_i}) of D^{w_j}, which equals min_{i≠j} ||D^{w_i} -
  D^{w_j}||_1; φ is the paper's φ(θ) = log((1-θ)/θ)/(1-2θ) of the bins' θ, minimised over
  pairs; win ≤ 6(K-1) exp(-(N-1)αφ/2). (The appendix proof applies Weissman et al.'s
  inequality at deviation α/2, which gives the exponent (N-1)φα²/16; the statement has
  (N-1)αφ/2. We implement the statement, as published, and check it by simulation.) Family:
  with probability ``reveal`` a revealing response, drawn from ρ(· | w) (the secret's
  associate with probability κ, else a random candidate's), else one generic response.
- **π_amb** (section 4.2, Proposition 3): K = l(N+1) words; at each turn a non-chameleon
  eliminates l of the words still possible, never the secret; after an inconsistent response
  (one that eliminated the secret) every later non-chameleon answers ``null``; everyone
  votes for the first inconsistent player, or for player 1 when there is none. The best
  chameleon eliminates l of the remaining words too: it eliminated the secret with
  probability 1/(N+2-i) in position i and is then voted out, and knows it (the nulls after
  it, or being caught at all when i ≥ 2), so it guesses among its l words; in position 1
  without eliminating the secret it is voted out and guesses among the l words left. The
  paper's exact value (appendix, proof of Proposition 3) is
  (1/N)[N/(N+1) + Σ_i 1/(N+2-i)](l-1)/l = H_N/N · (l-1)/l, bounded below by
  (log(N+1) + 0.4)/N · (l-1)/l.

The simulated chameleon against stationary strategies answers with the posterior predictive
of the responses before it (the marginal D^ch = (1/K) Σ D^w of the paper's proof when it
speaks first), votes for a random player, and when caught guesses the maximum-posterior
candidate. Each non-chameleon votes for the player whose response is least likely under
D^{w*}; a tie in the tally is broken by a randomly drawn player, as in the engine. The
non-chameleons win when the chameleon is caught and guesses wrong.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

# -- the bounds ---------------------------------------------------------------------


def trivial_win_rate(n: int, k: int) -> float:
    """Exact non-chameleon win rate of the trivial strategy (section 4.1): (1/N)(1 - 1/K)."""
    return (1 / n) * (1 - 1 / k)


def concealing_bound(n: int, k: int, alpha: float) -> float:
    """Proposition 1: win rate ≤ 1/N + (N-1)/N² · sqrt((K-1)α/K), α of
    :func:`kl_concealing_alpha`."""
    return 1 / n + (n - 1) / n**2 * math.sqrt((k - 1) * alpha / k)


def revealing_bound(n: int, k: int, alpha: float, phi: float) -> float:
    """Proposition 2: win rate ≤ 6(K-1) exp(-(N-1)αφ/2), α and φ of
    :func:`l1_revealing_alpha` and :func:`revealing_phi`."""
    return 6 * (k - 1) * math.exp(-(n - 1) * alpha * phi / 2)


def amb_win_rate(n: int, l: int) -> float:  # noqa: E741 (the paper's l)
    """π_amb's exact win rate against the best chameleon (appendix, proof of Proposition 3):
    (1/N) [N/(N+1) + Σ_{i=1..N} 1/(N+2-i)] (l-1)/l, which is H_N/N · (l-1)/l."""
    caught_wrong = n / (n + 1) + sum(1 / (n + 2 - i) for i in range(1, n + 1))
    return caught_wrong / n * (l - 1) / l


def amb_bound(n: int, l: int) -> float:  # noqa: E741 (the paper's l)
    """Proposition 3: π_amb's win rate ≥ (log(N+1) + 0.4)/N · (l-1)/l (K = l(N+1))."""
    return (math.log(n + 1) + 0.4) / n * (l - 1) / l


# -- the paper's α and φ -------------------------------------------------------------


def kl_concealing_alpha(pi: NDArray[np.float64]) -> float:
    """The smallest α for which ``pi`` is α-KL pairwise concealing (Definition 1, section
    4.1): max over pairs of KL(D^{w_i} || D^{w_j}) in nats; ``inf`` when some D^{w_i} puts
    mass where another D^{w_j} has none."""
    p = pi[:, None, :]
    q = pi[None, :, :]
    if np.any((p > 0) & (q == 0)):
        return math.inf
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(p / q), 0.0)
    return float(terms.sum(axis=2).max())


def _bins(pi: NDArray[np.float64], i: int, j: int) -> tuple[NDArray[np.float64], ...]:
    """Definition 2: (p_{w_i>w_j}, p_{w_i=w_j}, p_{w_i<w_j}) of D^{w_i} and the matching
    (p_{w_j<w_i}, p_{w_j=w_i}, p_{w_j>w_i}) of D^{w_j}."""
    gt, eq, lt = pi[i] > pi[j], pi[i] == pi[j], pi[i] < pi[j]
    return (
        np.array([pi[i][gt].sum(), pi[i][eq].sum(), pi[i][lt].sum()]),
        np.array([pi[j][gt].sum(), pi[j][eq].sum(), pi[j][lt].sum()]),
    )


def l1_revealing_alpha(pi: NDArray[np.float64]) -> float:
    """The largest α for which ``pi`` is α-L1 pairwise revealing (Definition 2, section
    4.1): the smallest, over pairs i ≠ j, L1 distance between the bins of D^{w_i} and
    D^{w_j} (equal to ||D^{w_i} - D^{w_j}||_1)."""
    k = pi.shape[0]
    dist = [np.abs(np.subtract(*_bins(pi, i, j))).sum() for i in range(k) for j in range(k)
            if i != j]  # fmt: skip
    return float(min(dist))


def phi_of_theta(theta: float) -> float:
    """Proposition 2's φ(θ) = log((1-θ)/θ) / (1-2θ): 2 at θ = 1/2 (its limit), ``inf`` at 0."""
    if theta <= 0:
        return math.inf
    if abs(1 - 2 * theta) < 1e-12:
        return 2.0
    return math.log((1 - theta) / theta) / (1 - 2 * theta)


def revealing_theta(pi: NDArray[np.float64], i: int, j: int) -> float:
    """Proposition 2's θ(w^i, w^j): the largest min(ΣA, 1 - ΣA) over subsets A of the bins
    (p_{w_i>w_j}, p_{w_i=w_j}, p_{w_i<w_j}) of D^{w_i}."""
    bins = _bins(pi, i, j)[0]
    sums = [float(bins[list(a)].sum()) for a in itertools.product([False, True], repeat=3)]
    return max(min(x, 1 - x) for x in sums)


def revealing_phi(pi: NDArray[np.float64]) -> float:
    """Proposition 2's φ = min_{w'} φ(w*, w'), taken here over every secret w* as well (the
    bound then holds whatever the secret; a symmetric strategy has one value anyway)."""
    k = pi.shape[0]
    return min(phi_of_theta(revealing_theta(pi, i, j)) for i in range(k) for j in range(k)
               if i != j)  # fmt: skip


# -- abstract strategies ------------------------------------------------------------


@dataclass(frozen=True)
class Strategy:
    """A stationary strategy: ``pi[w, r]`` = P(response r | secret w); ``alpha`` (and ``phi``
    for a revealing one) are the constants of the proposition it is checked against."""

    name: str
    pi: NDArray[np.float64]
    alpha: float
    phi: float = 1.0


def mutual_information(pi: NDArray[np.float64]) -> float:
    """I(W; R) in nats for a uniform secret (not the paper's α: see
    :func:`kl_concealing_alpha`)."""
    q = pi.mean(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(pi > 0, pi * np.log(pi / q), 0.0)
    return float(terms.sum() / pi.shape[0])


def trivial(k: int) -> Strategy:
    return Strategy("trivial", np.ones((k, 1)), 0.0)


def concealing(k: int, eps: float) -> Strategy:
    """With probability ``eps`` the secret's own associate, else a random candidate's; α of
    Definition 1."""
    pi = np.full((k, k), (1 - eps) / k) + eps * np.eye(k)
    return Strategy(f"concealing(eps={eps:g})", pi, kl_concealing_alpha(pi))


def revealing(k: int, reveal: float, kappa: float) -> Strategy:
    """With probability ``reveal`` a revealing response (the secret's associate with
    probability ``kappa``, else a random candidate's), otherwise one generic response; α and
    φ of Definition 2 and Proposition 2."""
    rho = np.full((k, k), (1 - kappa) / k) + kappa * np.eye(k)
    pi = np.hstack([np.full((k, 1), 1 - reveal), reveal * rho])
    name = f"revealing(reveal={reveal:g},kappa={kappa:g})"
    return Strategy(name, pi, l1_revealing_alpha(pi), revealing_phi(pi))


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
    """Monte-Carlo win rate of π_amb (K = l(N+1)) against its best chameleon, as the paper
    models it (section 4.2 and the proof of Proposition 3; see the module doc).

    The K words are dealt into N+1 groups of l and a response eliminates one group still
    possible (which l words go is immaterial: only whether they hold the secret matters, and
    that has probability 1/(N+2-i) in position i either way). ``-1`` is a null response."""
    rng = np.random.default_rng(seed)
    groups = n + 1
    rows = np.arange(games)
    g = rng.integers(groups, size=games)
    c = rng.integers(n, size=games)
    remaining = np.ones((games, groups), dtype=bool)
    named = np.full((games, n), -1, dtype=np.int64)
    broken = np.zeros(games, dtype=bool)  # some response so far eliminated the secret
    secret_group = np.arange(groups)[None, :] == g[:, None]
    for i in range(n):
        cham = c == i
        allowed = remaining & ~(~cham[:, None] & secret_group)
        choice = _random_argmax(allowed, rng)
        speaks = cham | ~broken  # after an inconsistent response, non-chameleons say null
        named[:, i] = np.where(speaks, choice, -1)
        remaining[rows[speaks], choice[speaks]] = False
        broken |= cham & (choice == g)
    seats = np.arange(n)
    first = np.where(seats == 0, 1, 0)  # "vote for player 1" (player 1 itself: player 2)
    votes = np.where(broken[:, None], c[:, None], first[None, :])
    votes[rows, c] = first[c]
    caught = tally_many(votes, rng) == c
    # A caught chameleon that eliminated the secret knows it (the nulls after it; or, from
    # position 2 on, being caught at all) and guesses among its own group; a caught first
    # speaker that did not guesses among the group nobody eliminated.
    leftover = np.argmax(remaining, axis=1)
    guessed_group = np.where(broken, named[rows, c], leftover)
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
    reveal: float = 0.9,
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
        st = revealing(k, reveal, kappa)
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
