"""Bootstrap over games: confidence intervals of means and ratios, all figures in one pass.

Every figure is a ratio of sums over games, ``Σ num / Σ den``: the mean of a per-game value
(``den`` = 1 where the game has the value, 0 where not) or a per-clue mean (``num`` = the sum
over a game's clues, ``den`` = their number). One bootstrap replicate draws the games with
replacement, as counts ``w`` (how often each game was drawn), and every figure of that
replicate is ``w @ num / w @ den``: a matrix product for all figures at once, so that a
thousand replicates over a hundred thousand games take seconds, not minutes.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

_CHUNK_CELLS = 4_000_000  # replicates x games per block of weights (32 MB of float64)


@dataclass(frozen=True)
class Estimate:
    """Point estimates and percentile intervals, one entry per figure."""

    value: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]


def bootstrap_ratio(
    num: NDArray[np.float64],
    den: NDArray[np.float64],
    *,
    replicates: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> Estimate:
    """``Σ num / Σ den`` per column with a bootstrap percentile interval over rows (games).

    ``num`` and ``den`` have shape (games, figures). A column whose ``den`` sums to zero is
    NaN; ``replicates=0`` gives the point estimates with NaN intervals.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    n, f = num.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        value = num.sum(axis=0) / den.sum(axis=0)
    if n == 0 or replicates <= 0:
        nan = np.full(f, np.nan)
        return Estimate(value, nan, nan.copy())
    rng = np.random.default_rng(seed)
    draws = np.empty((replicates, f))
    per_block = max(1, _CHUNK_CELLS // n)
    for start in range(0, replicates, per_block):
        b = min(per_block, replicates - start)
        idx = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
        w = np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[start : start + b] = (w @ num) / (w @ den)
    alpha = (1.0 - level) / 2.0
    # A replicate that drew no game with the figure is NaN; the interval ignores it (and a
    # figure no game has stays NaN, without numpy's all-NaN warning).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanquantile(draws, alpha, axis=0) if f else np.empty(0)
        high = np.nanquantile(draws, 1.0 - alpha, axis=0) if f else np.empty(0)
    return Estimate(value, np.asarray(low), np.asarray(high))


def bootstrap_mean(values: NDArray[np.float64], **kwargs: float | int) -> Estimate:
    """Mean over games of per-game ``values`` (games, figures); NaN means "no value"."""
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    return bootstrap_ratio(np.where(present, values, 0.0), present.astype(np.float64), **kwargs)  # type: ignore[arg-type]
