"""Two models compared where they met: the paired difference of their clues' leakage.

For models A and B and each role (and all roles together): the *shared games* are those in
which both A and B gave at least one counted clue in that role. In each shared game g,
``a_g`` is the mean information gain (bits) of A's counted clues there, ``b_g`` the same for
B, and ``d_g = a_g - b_g``. The figure is the mean of ``d_g`` over the shared games, with a
bootstrap 95% percentile interval over those games (games resampled together, so the pairing
is kept: the secret, the category and the clues before are common to both terms). Comparing
within games removes what differs between games (an easy secret, a long game) from the
difference, which separate per-model means do not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from leakage.curves._data import StepTable
from leakage.curves._stats import bootstrap_mean
from leakage.errors import InvalidInput

ALL_ROLES = "(all roles)"
COMPARE_COLUMNS = [
    "model_a", "model_b", "role", "shared_games", "clues_a", "clues_b",
    "mean_gain_a", "mean_gain_b", "difference_bits", "difference_low", "difference_high",
]  # fmt: skip


SIDE_COLUMNS = ["mean_gain_a_low", "mean_gain_a_high", "mean_gain_b_low", "mean_gain_b_high"]


def _per_game(steps: StepTable, rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per game: sum of gains and number of counted clues among ``rows``."""
    games = steps.game[rows]
    return (
        np.bincount(games, weights=steps.gain[rows], minlength=n),
        np.bincount(games, minlength=n).astype(np.float64),
    )


def paired_difference(
    steps: StepTable, model_a: str, model_b: str, *, replicates: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """Rows of :data:`COMPARE_COLUMNS`: one per role both models spoke in, then all roles.

    Each row also has ``mean_gain_a_low`` / ``_high`` and ``mean_gain_b_low`` / ``_high``, the
    two models' own intervals over the same games and replicates (not CSV columns: the
    explorer draws them side by side). A role with no shared game has ``shared_games`` 0 and
    NaN figures. Raises
    :class:`InvalidInput` when a model gave no counted clue in the table, naming the models
    that did.
    """
    usable = steps.counted & np.isfinite(steps.gain)
    known = sorted(set(steps.model[usable].tolist()))
    for name in (model_a, model_b):
        if name not in known:
            raise InvalidInput(
                f"{steps.location}: model {name!r} gave no counted clue "
                f"(field model; models here: {', '.join(map(str, known)) or 'none'})"
            )
    if model_a == model_b:
        raise InvalidInput(f"compare two different models, not {model_a!r} with itself")
    n = steps.n_games
    is_a, is_b = usable & (steps.model == model_a), usable & (steps.model == model_b)
    roles = sorted(set(steps.role[is_a].tolist()) & set(steps.role[is_b].tolist()))
    out = []
    for role in [*roles, ALL_ROLES]:
        in_role = np.ones_like(usable) if role == ALL_ROLES else steps.role == role
        sum_a, cnt_a = _per_game(steps, is_a & in_role, n)
        sum_b, cnt_b = _per_game(steps, is_b & in_role, n)
        shared = (cnt_a > 0) & (cnt_b > 0)
        row: dict[str, Any] = {
            "model_a": model_a,
            "model_b": model_b,
            "role": role,
            "shared_games": int(shared.sum()),
            "clues_a": int(cnt_a[shared].sum()),
            "clues_b": int(cnt_b[shared].sum()),
        }
        if shared.any():
            a, b = sum_a[shared] / cnt_a[shared], sum_b[shared] / cnt_b[shared]
            est = bootstrap_mean(np.stack([a, b, a - b], axis=1), replicates=replicates, seed=seed)
            row.update(
                mean_gain_a=float(est.value[0]),
                mean_gain_b=float(est.value[1]),
                mean_gain_a_low=float(est.low[0]),
                mean_gain_a_high=float(est.high[0]),
                mean_gain_b_low=float(est.low[1]),
                mean_gain_b_high=float(est.high[1]),
                difference_bits=float(est.value[2]),
                difference_low=float(est.low[2]),
                difference_high=float(est.high[2]),
            )
        else:
            row.update({c: float("nan") for c in [*COMPARE_COLUMNS[6:], *SIDE_COLUMNS]})
        out.append(row)
    return out
