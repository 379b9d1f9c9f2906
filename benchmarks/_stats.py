"""Small statistics in numpy: Mann-Whitney ROC AUC, tie-aware accuracy, game-level bootstrap."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray


def _average_ranks(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Ranks from 1, tied values sharing the mean of their ranks."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    # Start and end (exclusive) of each run of equal values in sorted order.
    starts = np.flatnonzero(np.r_[True, xs[1:] != xs[:-1]])
    ends = np.r_[starts[1:], xs.size]
    mean_rank = (starts + ends + 1) / 2.0
    ranks = np.empty(x.size)
    ranks[order] = np.repeat(mean_rank, ends - starts)
    return ranks


def roc_auc(score: NDArray[np.float64], positive: NDArray[np.bool_]) -> float:
    """P(score of a random positive > score of a random negative), ties counting half.

    The Mann-Whitney U statistic divided by n_pos · n_neg; NaN without both classes.
    """
    score = np.asarray(score, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = positive.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = _average_ranks(score)
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0
    return float(u / (n_pos * n_neg))


def own_word_accuracy(d: NDArray[np.float64], civilian: NDArray[np.bool_]) -> float:
    """Fraction of statements whose likelihood favours the speaker's own word; ties count half.

    ``d`` = loglik(civilian word) - loglik(spy word); a civilian's statement is right when
    ``d > 0``, a spy's when ``d < 0``.
    """
    signed = np.where(civilian, d, -d)
    return float(np.mean((signed > 0) + 0.5 * (signed == 0))) if d.size else float("nan")


def bootstrap_ci(
    stat: Callable[[NDArray[np.int64]], float],
    n_groups: int,
    *,
    seed: int,
    n_boot: int = 400,
    level: float = 0.95,
) -> list[float]:
    """Percentile interval of ``stat(groups)`` over resamples of the groups (games)."""
    rng = np.random.default_rng(seed)
    values = np.array([stat(rng.integers(0, n_groups, n_groups)) for _ in range(n_boot)])
    values = values[np.isfinite(values)]
    if not values.size:
        return [float("nan"), float("nan")]
    lo, hi = np.quantile(values, [(1 - level) / 2, (1 + level) / 2])
    return [round(float(lo), 3), round(float(hi), 3)]


def wilson_ci(hits: float, n: int, z: float = 1.96) -> list[float]:
    """Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return [float("nan"), float("nan")]
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(float(centre - half), 3), round(float(centre + half), 3)]
