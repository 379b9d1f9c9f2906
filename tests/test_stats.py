"""leakage._stats: the one percentile bootstrap of curves, calibration and games.

Each of the three used to resample on its own; the references below are their former code,
verbatim, and the shared implementation must give the same draws and the same intervals.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from leakage._stats import percentile_interval, ratio_draws, resample_counts
from leakage.calibration import paired_bootstrap
from leakage.curves import bootstrap_mean, bootstrap_ratio
from leakage.games.metrics import _COMPOSITES, MAGIC_LAMBDA, aggregate


def _old_curves(num, den, *, replicates=1000, level=0.95, seed=0, chunk=4_000_000):
    n, f = num.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        value = num.sum(axis=0) / den.sum(axis=0)
    rng = np.random.default_rng(seed)
    draws = np.empty((replicates, f))
    per_block = max(1, chunk // n)
    for start in range(0, replicates, per_block):
        b = min(per_block, replicates - start)
        idx = rng.integers(0, n, size=(b, n)) + (np.arange(b) * n)[:, None]
        w = np.bincount(idx.ravel(), minlength=b * n).reshape(b, n).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws[start : start + b] = (w @ num) / (w @ den)
    alpha = (1.0 - level) / 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        low = np.nanquantile(draws, alpha, axis=0)
        high = np.nanquantile(draws, 1.0 - alpha, axis=0)
    return value, low, high


def _old_paired(loss_a, loss_b, game, *, resamples=2000, level=0.95, seed=0):
    diff = np.asarray(loss_a, dtype=np.float64) - np.asarray(loss_b, dtype=np.float64)
    games, idx = np.unique(game, return_inverse=True)
    per_game = np.bincount(idx, weights=diff, minlength=games.size)
    counts = np.bincount(idx, minlength=games.size).astype(np.float64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, games.size, size=(resamples, games.size))
    stats = per_game[draws].sum(axis=1) / counts[draws].sum(axis=1)
    tail = (1 - level) / 2 * 100
    low, high = np.percentile(stats, [tail, 100 - tail])
    return float(diff.mean()), float(low), float(high)


def _old_aggregate(per_game, names, *, n_boot=1000, confidence=0.95, seed=0):
    def ratios(num, den):
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(num.sum(axis=-1) / den.sum(axis=-1))

    rng = np.random.default_rng(seed)
    rows = []
    tail = (1 - confidence) / 2 * 100
    for name in names:
        parts = _COMPOSITES.get(name, ((name, 1.0),))
        games = [g for g in per_game if g.get(parts[0][0]) is not None]
        if not games:
            rows.append((name, None, None, None))
            continue
        idx = rng.integers(len(games), size=(n_boot, len(games)))
        value = 0.0
        boots = np.zeros(n_boot)
        for i, (part, weight) in enumerate(parts):
            arr = np.array([g.get(part) or (0.0, 0.0) for g in games], dtype=float)
            num, den = arr[:, 0], arr[:, 1]
            if i and not den.sum():
                continue
            value += weight * float(ratios(num, den))
            ratio = ratios(num[idx], den[idx])
            boots += weight * (np.nan_to_num(ratio, nan=0.0) if i else ratio)
        boots = boots[np.isfinite(boots)]
        lo, hi = np.percentile(boots, [tail, 100 - tail]) if boots.size else (value, value)
        rows.append((name, value, float(lo), float(hi)))
    return rows


def test_the_blocks_of_weights_are_the_rows_of_one_draw():
    n, replicates = 7, 23
    single = np.random.default_rng(5).integers(0, n, size=(replicates, n))
    expected = np.stack([np.bincount(row, minlength=n) for row in single]).astype(float)
    import leakage._stats as stats

    for block_cells in (4_000_000, 21, 7, 1):  # one block; odd-sized blocks; a row a block
        old, stats._CHUNK_CELLS = stats._CHUNK_CELLS, block_cells
        try:
            got = np.vstack(
                [w for _, w in resample_counts(np.random.default_rng(5), n, replicates)]
            )
        finally:
            stats._CHUNK_CELLS = old
        assert np.array_equal(got, expected)


def test_curves_intervals_are_the_former_ones():
    rng = np.random.default_rng(11)
    num = rng.normal(size=(300, 4))
    den = rng.integers(0, 3, size=(300, 4)).astype(float)
    num[den == 0] = 0.0
    den[:, 3] = 0.0  # a figure no game has
    num[:, 3] = 0.0
    new = bootstrap_ratio(num, den, replicates=700, seed=4)
    value, low, high = _old_curves(num, den, replicates=700, seed=4)
    for a, b in ((new.value, value), (new.low, low), (new.high, high)):
        assert np.array_equal(a, b, equal_nan=True)
    values = np.where(rng.random((120, 2)) < 0.2, np.nan, rng.normal(size=(120, 2)))
    present = ~np.isnan(values)
    _, low, high = _old_curves(np.where(present, values, 0.0), present.astype(float), seed=3)
    mean = bootstrap_mean(values, replicates=1000, seed=3)
    assert np.array_equal(mean.low, low) and np.array_equal(mean.high, high)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_paired_bootstrap_intervals_are_the_former_ones(seed):
    rng = np.random.default_rng(seed)
    game = rng.integers(0, 40, size=500)
    a, b = rng.random(500), rng.random(500)
    new = paired_bootstrap(a, b, game, resamples=2000, seed=seed)
    mean, low, high = _old_paired(a, b, game, resamples=2000, seed=seed)
    assert new.mean == mean
    # same draws; the sums over a replicate's games are taken in another order (a matrix
    # product), so an end may differ in its last bit
    assert new.low == pytest.approx(low, rel=1e-12, abs=1e-15)
    assert new.high == pytest.approx(high, rel=1e-12, abs=1e-15)


def test_game_metric_intervals_are_the_former_ones():
    rng = np.random.default_rng(8)
    per_game = []
    for _ in range(60):
        wins = int(rng.integers(0, 2))
        wrong = int(rng.integers(0, 4))
        per_game.append(
            {
                "deception_wins": (float(wins), 1.0),
                "deception_wrong_guesses": (float(wrong), 3.0) if rng.random() < 0.7 else None,
                "win_rate": (float(rng.integers(0, 3)), 2.0) if rng.random() < 0.5 else None,
                "absent": None,
            }
        )
    names = ["deception", "win_rate", "absent", "deception_wins"]
    assert MAGIC_LAMBDA != 1.0  # the composite weights its second component
    new = [(r.metric, r.value, r.ci_low, r.ci_high) for r in aggregate(per_game, names, seed=6)]
    # counts add exactly in any order: the figures are the former ones to the bit
    assert new == _old_aggregate(per_game, names, seed=6)


def test_percentile_interval_leaves_out_replicates_without_the_figure():
    draws = np.array([[1.0, np.nan], [2.0, np.nan], [np.nan, np.nan], [3.0, np.nan]])
    low, high = percentile_interval(draws, 0.5)
    assert low[0] == 1.5 and high[0] == 2.5 and np.isnan(low[1]) and np.isnan(high[1])
    assert ratio_draws(
        np.empty((0, 2)), np.empty((0, 2)), replicates=3, rng=np.random.default_rng()
    ).shape == (3, 2)


@pytest.mark.parametrize("shape", [(1000, 37), (200, 3, 4), (50,), (7, 0)])
def test_percentile_interval_is_numpys_nanquantile_to_the_bit(shape):
    """Figures without a NaN replicate take np.quantile at once: the same numbers as
    np.nanquantile over each figure, with and without NaN replicates, all-NaN figures too."""
    rng = np.random.default_rng(3)
    draws = rng.normal(size=shape) ** 3
    if draws.size:
        draws[rng.random(shape) < 0.02] = np.nan  # some figures miss a few replicates
        draws.reshape(len(draws), -1)[:, :1] = np.nan  # one figure has none at all
    for level in (0.95, 0.5, 0.9):
        low, high = percentile_interval(draws, level)
        alpha = (1 - level) / 2
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            want_low = np.nanquantile(draws, alpha, axis=0)
            want_high = np.nanquantile(draws, 1 - alpha, axis=0)
        assert low.shape == high.shape == draws.shape[1:]
        np.testing.assert_array_equal(low, want_low)
        np.testing.assert_array_equal(high, want_high)
