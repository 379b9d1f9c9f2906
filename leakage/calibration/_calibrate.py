"""The calibration protocol: fit on training games, measure on held-out games, decide.

1. Split the games (seeded) into train and test; no game is on both sides.
2. On train: each member's temperature alone; then the ensemble's weights with the
   temperatures fixed (``_fit``).
3. On test: log loss, top-1 accuracy, ECE and reliability bins of each member alone, of the
   equal-weight pool (weight 1, each member's own temperature) and of the ensemble.
4. The rule: an ensemble must never be worse than its best member on held-out data by more
   than noise. A paired bootstrap over held-out games of the per-item log-loss difference
   (ensemble - best member); when the whole interval lies above 0 the ensemble is worse, and
   the weights that ship fall back to the best member alone (weight 1, the others 0).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.backends.ensemble import EnsembleWeights
from leakage.calibration._data import ItemSet, split_games
from leakage.calibration._fit import fit_multipliers, fit_temperature, pooled_probs
from leakage.calibration._metrics import (
    ECE_BINS,
    PairedDifference,
    ReliabilityBin,
    accuracy,
    expected_calibration_error,
    item_log_loss,
    paired_bootstrap,
    reliability_bins,
)
from leakage.errors import InvalidInput

ENSEMBLE = "ensemble"
EQUAL_POOL = "equal_pool"
FEW_TEST_GAMES = 20
"""Below this many held-out games the verdict warns that its interval is rough."""


@dataclass(frozen=True)
class Metrics:
    """Held-out figures of one predictor."""

    log_loss: float
    """Mean -log P(truth), nats per item."""
    accuracy: float
    """Top-1 accuracy, ties split."""
    ece: float
    """Expected calibration error over ``ECE_BINS`` equal-width bins of top-1 confidence."""
    items: int
    games: int
    reliability: list[ReliabilityBin] = field(repr=False)

    def summary(self) -> dict[str, Any]:
        return {
            "log_loss": self.log_loss,
            "accuracy": self.accuracy,
            "ece": self.ece,
            "items": self.items,
            "games": self.games,
        }


def _metrics(probs: NDArray[np.float64], items: ItemSet) -> Metrics:
    t = items.truth
    return Metrics(
        log_loss=float(item_log_loss(probs, t).mean()),
        accuracy=accuracy(probs, t),
        ece=expected_calibration_error(probs, t, bins=ECE_BINS),
        items=items.n_items,
        games=int(np.unique(items.game).size),
        reliability=reliability_bins(probs, t, bins=ECE_BINS),
    )


@dataclass(frozen=True)
class CalibrationResult:
    """Everything one calibration run fitted and measured."""

    members: tuple[str, ...]
    temperatures: dict[str, float | None]
    """Each member's temperature fitted alone (None: it predicts best by saying nothing)."""
    fitted_weights: dict[str, float]
    """The ensemble's fitted weights (multipliers of each member's rows / its temperature)."""
    weights: dict[str, float]
    """The weights to ship: ``fitted_weights``, or the best member alone after a fallback."""
    scales: dict[str, float]
    """The scales to ship: the temperatures (1 for a member with none; its weight is 0)."""
    metrics: dict[str, Metrics]
    """Held-out metrics: each member alone, ``equal_pool`` and ``ensemble``."""
    best_member: str
    comparison: PairedDifference
    """Held-out log loss of the ensemble minus that of the best member, per item."""
    ensemble_worse: bool
    fallback: str | None
    train_games: tuple[str, ...]
    test_games: tuple[str, ...]
    train_items: int
    test_items: int
    seed: int
    test_fraction: float
    split: str = "seeded permutation of games"
    """How train and test were chosen (``calibrate``: seeded; ``calibrate_on``: given)."""

    def verdict(self) -> str:
        c = self.comparison
        diff = (
            f"ensemble - {self.best_member} log loss {c.mean:+.4f} nats/item, "
            f"{c.level:.0%} interval [{c.low:+.4f}, {c.high:+.4f}] over held-out games"
        )
        if len(self.test_games) < FEW_TEST_GAMES:
            diff += f"; only {len(self.test_games)} held-out games, so the interval is rough"
        if self.ensemble_worse:
            return f"WORSE than its best member beyond noise ({diff})"
        if c.high < 0:
            return f"better than its best member beyond noise ({diff})"
        return f"not distinguishable from its best member ({diff})"

    def to_dict(self) -> dict[str, Any]:
        """The whole result as JSON-ready data (``calibration.json``)."""
        return {
            "members": list(self.members),
            "temperatures": self.temperatures,
            "fitted_weights": self.fitted_weights,
            "weights": self.weights,
            "scales": self.scales,
            "metrics": {
                k: {**m.summary(), "reliability": [asdict(b) for b in m.reliability]}
                for k, m in self.metrics.items()
            },
            "ece_bins": ECE_BINS,
            "best_member": self.best_member,
            "comparison": asdict(self.comparison),
            "ensemble_worse": self.ensemble_worse,
            "verdict": self.verdict(),
            "fallback": self.fallback,
            "split": {
                "rule": self.split,
                "seed": self.seed,
                "test_fraction": self.test_fraction,
                "train_games": len(self.train_games),
                "test_games": len(self.test_games),
                "train_items": self.train_items,
                "test_items": self.test_items,
                "test_game_ids": list(self.test_games),
            },
        }

    def weights_document(
        self,
        *,
        fitted_on: dict[str, Any],
        member_info: dict[str, Any] | None = None,
        note: str | None = None,
    ) -> EnsembleWeights:
        """The ``leakage.ensemble-weights/1`` file that the ensemble backend reads."""
        return EnsembleWeights(
            members=list(self.members),
            weights=dict(self.weights),
            scales=dict(self.scales),
            note=note,
            fallback=self.fallback,
            member_info=member_info or {},
            fitted_on={
                **fitted_on,
                "split": self.split,
                "split_seed": self.seed,
                "test_fraction": self.test_fraction,
                "train_games": len(self.train_games),
                "test_games": len(self.test_games),
                "train_items": self.train_items,
                "test_items": self.test_items,
            },
            metrics={
                "held_out": {k: m.summary() for k, m in self.metrics.items()},
                "temperatures": self.temperatures,
                "fitted_weights": self.fitted_weights,
                "best_member": self.best_member,
                "ensemble_minus_best_log_loss": asdict(self.comparison),
                "verdict": self.verdict(),
            },
            created=datetime.now(UTC).isoformat(timespec="seconds"),
        )


def decide_fallback(
    members: tuple[str, ...],
    fitted_weights: dict[str, float],
    best_member: str,
    comparison: PairedDifference,
) -> tuple[bool, dict[str, float], str | None]:
    """(ensemble worse?, weights to ship, fallback note) under the never-worse rule."""
    if comparison.low <= 0:
        return False, dict(fitted_weights), None
    weights = {n: 1.0 if n == best_member else 0.0 for n in members}
    note = (
        f"fallback: the fitted ensemble was worse than {best_member} alone on held-out games "
        f"(log loss {comparison.mean:+.4f} nats/item, {comparison.level:.0%} interval "
        f"[{comparison.low:+.4f}, {comparison.high:+.4f}]); these weights use {best_member} "
        f"alone (fitted weights were {fitted_weights})"
    )
    return True, weights, note


def calibrate(
    items: ItemSet,
    *,
    seed: int = 0,
    test_fraction: float = 0.3,
    resamples: int = 2000,
) -> CalibrationResult:
    """Fit temperatures and weights on training games; measure and decide on held-out games."""
    if not items.members:
        raise ValueError("calibration needs at least one member backend")
    n_games = len(items.game_ids)
    try:
        train_idx, _ = split_games(n_games, test_fraction=test_fraction, seed=seed)
    except ValueError as err:
        raise InvalidInput(f"calibration: {err}") from None
    return calibrate_on(
        items,
        np.isin(items.game, train_idx),
        seed=seed,
        test_fraction=test_fraction,
        resamples=resamples,
    )


def calibrate_on(
    items: ItemSet,
    in_train: NDArray[np.bool_],
    *,
    seed: int = 0,
    test_fraction: float | None = None,
    resamples: int = 2000,
    split: str = "seeded permutation of games",
) -> CalibrationResult:
    """``calibrate`` with the split given: ``in_train`` (per item) marks the training items,
    the others are held out (e.g. the frozen split, ``dev_frozen_split``). ``seed`` seeds the
    bootstrap; a game must lie on one side only."""
    members = items.members
    if not members:
        raise ValueError("calibration needs at least one member backend")
    in_train = np.asarray(in_train, dtype=bool)
    train_idx = np.unique(items.game[in_train])
    test_idx = np.unique(items.game[~in_train])
    if np.intersect1d(train_idx, test_idx).size:
        raise ValueError("a game has items on both sides of the split")
    if not train_idx.size or not test_idx.size:
        raise InvalidInput("calibration: the split leaves no training or no held-out game")
    train, test = items.select(in_train), items.select(~in_train)
    if test_fraction is None:
        test_fraction = test_idx.size / (train_idx.size + test_idx.size)

    temperatures: dict[str, float | None] = {
        n: fit_temperature(train.member(n), train.mask, train.truth) for n in members
    }
    informative = [n for n in members if temperatures[n] is not None]
    if not informative:
        raise InvalidInput(
            f"calibration: no member ({', '.join(members)}) predicts the truth better than "
            f"uniform on the {len(train_idx)} training games; more games are needed"
        )
    scales = {n: temperatures[n] or 1.0 for n in members}
    inv_t = np.array([0.0 if temperatures[n] is None else 1.0 / scales[n] for n in members])

    # The ensemble: w_b >= 0 on rows already divided by their temperatures.
    keep = np.array([temperatures[n] is not None for n in members])
    scaled = train.rows[keep] * inv_t[keep, None, None]
    w_fit = fit_multipliers(
        scaled, train.mask, train.truth, init=np.full(keep.sum(), 1.0 / keep.sum())
    )
    fitted_weights = dict.fromkeys(members, 0.0)
    for n, w in zip([n for n in members if temperatures[n] is not None], w_fit, strict=True):
        fitted_weights[n] = float(w)
    ens_mult = inv_t * np.array([fitted_weights[n] for n in members])

    probs: dict[str, NDArray[np.float64]] = {}
    for b, n in enumerate(members):
        one = np.zeros(len(members))
        one[b] = inv_t[b]
        probs[n] = pooled_probs(test.rows, test.mask, one)
    probs[EQUAL_POOL] = pooled_probs(test.rows, test.mask, inv_t)
    probs[ENSEMBLE] = pooled_probs(test.rows, test.mask, ens_mult)
    metrics = {k: _metrics(p, test) for k, p in probs.items()}

    best = min(informative, key=lambda n: metrics[n].log_loss)
    comparison = paired_bootstrap(
        item_log_loss(probs[ENSEMBLE], test.truth),
        item_log_loss(probs[best], test.truth),
        test.game,
        resamples=resamples,
        seed=seed,
    )
    worse, weights, fallback = decide_fallback(members, fitted_weights, best, comparison)
    return CalibrationResult(
        members=members,
        temperatures=temperatures,
        fitted_weights=fitted_weights,
        weights=weights,
        scales=scales,
        metrics=metrics,
        best_member=best,
        comparison=comparison,
        ensemble_worse=worse,
        fallback=fallback,
        train_games=tuple(items.game_ids[i] for i in train_idx),
        test_games=tuple(items.game_ids[i] for i in test_idx),
        train_items=train.n_items,
        test_items=test.n_items,
        seed=seed,
        test_fraction=test_fraction,
        split=split,
    )
