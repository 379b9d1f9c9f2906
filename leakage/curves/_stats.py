"""Bootstrap over games: confidence intervals of means and ratios, all figures in one pass.

Every figure is a ratio of sums over games, ``Σ num / Σ den``, bootstrapped by
:mod:`leakage._stats` (one replicate's figures are one matrix product).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leakage._stats import percentile_interval, ratio_draws, ratio_of_sums


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
    NaN; ``replicates=0`` gives the point estimates with NaN intervals. A replicate that drew
    no game with the figure is left out of its interval.
    """
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    n, f = num.shape
    value = ratio_of_sums(num, den)
    if n == 0 or replicates <= 0:
        nan = np.full(f, np.nan)
        return Estimate(value, nan, nan.copy())
    draws = ratio_draws(num, den, replicates=replicates, rng=np.random.default_rng(seed))
    low, high = percentile_interval(draws, level)
    return Estimate(value, low, high)


def bootstrap_mean(values: NDArray[np.float64], **kwargs: float | int) -> Estimate:
    """Mean over games of per-game ``values`` (games, figures); NaN means "no value"."""
    values = np.asarray(values, dtype=np.float64)
    present = ~np.isnan(values)
    return bootstrap_ratio(np.where(present, values, 0.0), present.astype(np.float64), **kwargs)  # type: ignore[arg-type]
