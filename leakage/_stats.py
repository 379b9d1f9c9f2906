"""Percentile bootstrap over games: the one resampling used by curves, calibration and games.

Every figure the project bootstraps is a ratio of sums over games, ``Σ num / Σ den``: the mean
of a per-game value (``den`` = 1 where the game has the value, 0 where not), a per-clue mean
(``num`` = the sum over a game's clues, ``den`` = their number), a per-item mean over whole
games (calibration's paired difference) or a win rate (games' metrics). One replicate draws
the games with replacement, ``rng.integers(0, n, (replicates, n))`` row by row, as counts
``w`` (how often each game was drawn), and every figure of that replicate is
``w @ num / w @ den``: a matrix product for all figures at once, so that a thousand replicates
over a hundred thousand games take seconds, not minutes. The rows are drawn in blocks that
keep the weights small; the draws are the same as one ``(replicates, n)`` call (numpy's
bounded integers do not depend on how a request is split).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

_CHUNK_CELLS = 4_000_000  # replicates x games per block of weights (32 MB of float64)


def resample_counts(
    rng: np.random.Generator, n: int, replicates: int
) -> Iterator[tuple[int, NDArray[np.float64]]]:
    """Blocks ``(start, w)`` of replicates: ``w[r, g]`` = how often replicate ``start + r``
    drew game ``g`` (rows of ``rng.integers(0, n, (replicates, n))``, in that order)."""
    per_block = max(1, _CHUNK_CELLS // max(n, 1))
    for start in range(0, replicates, per_block):
        b = min(per_block, replicates - start)
        idx = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
        yield start, np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)


def ratio_draws(
    num: NDArray[np.float64],
    den: NDArray[np.float64],
    *,
    replicates: int,
    rng: np.random.Generator,
) -> NDArray[np.float64]:
    """``Σ num / Σ den`` per column of (games, figures) arrays, for each bootstrap replicate:
    shape (replicates, figures); a replicate that drew no game with the figure is NaN."""
    n, f = num.shape
    draws = np.empty((replicates, f))
    if n == 0:
        draws.fill(np.nan)
        return draws
    for start, w in resample_counts(rng, n, replicates):
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[start : start + len(w)] = (w @ num) / (w @ den)
    return draws


def percentile_interval(
    draws: NDArray[np.float64], level: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The central ``level`` percentile interval over replicates (axis 0), NaN replicates
    left out; a figure with no replicate at all is NaN (without numpy's all-NaN warning)."""
    alpha = (1.0 - level) / 2.0
    if draws.size == 0:
        empty = np.full(draws.shape[1:], np.nan)
        return empty, empty.copy()
    # np.nanquantile reads each figure's replicates one by one in Python (``apply_along_axis``):
    # a second for the curves of a thousand games. Figures without a NaN replicate (most)
    # take np.quantile over all of them at once, the same numbers (the same sort and the same
    # interpolation); only the others go through np.nanquantile.
    flat = np.asarray(draws, dtype=np.float64).reshape(len(draws), -1)
    low = np.empty(flat.shape[1])
    high = np.empty(flat.shape[1])
    gaps = np.isnan(flat).any(axis=0)
    whole = ~gaps
    if whole.any():
        low[whole] = np.quantile(flat[:, whole], alpha, axis=0)
        high[whole] = np.quantile(flat[:, whole], 1.0 - alpha, axis=0)
    if gaps.any():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            low[gaps] = np.nanquantile(flat[:, gaps], alpha, axis=0)
            high[gaps] = np.nanquantile(flat[:, gaps], 1.0 - alpha, axis=0)
    return low.reshape(draws.shape[1:]), high.reshape(draws.shape[1:])


def ratio_of_sums(num: NDArray[np.float64], den: NDArray[np.float64]) -> NDArray[np.float64]:
    """``Σ num / Σ den`` over games (axis 0); NaN where ``Σ den`` is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(num.sum(axis=0) / den.sum(axis=0), dtype=np.float64)
