"""Held-out metrics: log loss, top-1 accuracy, expected calibration error, reliability bins,
and a paired bootstrap over games.

``probs`` is (items, K) with 0 where an item has no candidate; ``truth`` the true index.
Ties at the top are split: when t candidates share the highest probability and the truth is
one of them, the item counts 1/t of a hit (the expected accuracy of breaking the tie at
random). A flat posterior then has the accuracy its confidence claims, so ties neither
flatter nor punish a backend's calibration (the co-occurrence backend gives many exact ties:
clues that co-occur with no candidate).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leakage._stats import percentile_interval, ratio_draws

ECE_BINS = 15
_TINY = 1e-300


def log_loss(probs: NDArray[np.float64], truth: NDArray[np.int64]) -> float:
    """Mean negative log probability of the truth, in nats per item."""
    p = probs[np.arange(truth.size), truth]
    return float(-np.log(np.maximum(p, _TINY)).mean())


def item_log_loss(probs: NDArray[np.float64], truth: NDArray[np.int64]) -> NDArray[np.float64]:
    return -np.log(np.maximum(probs[np.arange(truth.size), truth], _TINY))


def top1_hits(probs: NDArray[np.float64], truth: NDArray[np.int64]) -> NDArray[np.float64]:
    """Per item: 1 when the truth alone is most probable, 1/t when it ties with t-1 others."""
    top = probs.max(axis=1, keepdims=True)
    at_top = np.isclose(probs, top, rtol=1e-9, atol=0.0) & (probs > 0)
    ties = at_top.sum(axis=1)
    return at_top[np.arange(truth.size), truth] / ties


def accuracy(probs: NDArray[np.float64], truth: NDArray[np.int64]) -> float:
    """Top-1 accuracy (ties split, see the module docstring)."""
    return float(top1_hits(probs, truth).mean())


@dataclass(frozen=True)
class ReliabilityBin:
    low: float
    high: float
    count: int
    confidence: float | None
    """Mean top-1 probability of the items in the bin (None when empty)."""
    accuracy: float | None
    """Their top-1 accuracy (None when empty)."""


def reliability_bins(
    probs: NDArray[np.float64], truth: NDArray[np.int64], *, bins: int = ECE_BINS
) -> list[ReliabilityBin]:
    """Items grouped by top-1 confidence into ``bins`` equal-width bins over [0, 1]."""
    conf = probs.max(axis=1)
    hits = top1_hits(probs, truth)
    which = np.minimum((conf * bins).astype(np.int64), bins - 1)
    out = []
    for b in range(bins):
        sel = which == b
        n = int(sel.sum())
        out.append(
            ReliabilityBin(
                low=b / bins,
                high=(b + 1) / bins,
                count=n,
                confidence=float(conf[sel].mean()) if n else None,
                accuracy=float(hits[sel].mean()) if n else None,
            )
        )
    return out


def expected_calibration_error(
    probs: NDArray[np.float64], truth: NDArray[np.int64], *, bins: int = ECE_BINS
) -> float:
    """Σ over confidence bins of (share of items) · |accuracy - mean confidence|."""
    n = truth.size
    if n == 0:
        return float("nan")
    return float(
        sum(
            b.count / n * abs(b.accuracy - b.confidence)
            for b in reliability_bins(probs, truth, bins=bins)
            if b.count and b.accuracy is not None and b.confidence is not None
        )
    )


@dataclass(frozen=True)
class PairedDifference:
    """Mean of (a - b) per item over the held-out items, with a bootstrap interval over games."""

    mean: float
    low: float
    high: float
    level: float
    resamples: int


def paired_bootstrap(
    loss_a: NDArray[np.float64],
    loss_b: NDArray[np.float64],
    game: NDArray[np.int64],
    *,
    resamples: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> PairedDifference:
    """Percentile bootstrap of mean(loss_a - loss_b), resampling whole games.

    Items of a game are correlated (one card, one strategy), so games are the unit.
    """
    diff = np.asarray(loss_a, dtype=np.float64) - np.asarray(loss_b, dtype=np.float64)
    games, idx = np.unique(game, return_inverse=True)
    per_game = np.bincount(idx, weights=diff, minlength=games.size).astype(np.float64)
    counts = np.bincount(idx, minlength=games.size).astype(np.float64)
    mean = float(diff.mean()) if diff.size else float("nan")
    if games.size < 2:
        return PairedDifference(mean, mean, mean, level, 0)
    draws = ratio_draws(
        per_game[:, None], counts[:, None], replicates=resamples, rng=np.random.default_rng(seed)
    )
    low, high = percentile_interval(draws, level)
    return PairedDifference(mean, float(low[0]), float(high[0]), level, resamples)
