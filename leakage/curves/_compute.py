"""The figures of a report, as tables of numbers (every plotted number is in one of them).

- ``curves``: for each group and each number of clues m, the mean entropy of the posterior
  after m counted clues (m = 0 is the prior, log2 K) and the share of games whose secret is
  among the k most probable candidates after m clues (k = 1, 3, 5), each with a bootstrap
  95% interval over games (Karabag & Topcu's two figures). A game contributes to m only when
  it has at least m counted clues; ``games`` says how many did. A game contributes to top k
  only when it has more than k candidates (with K <= k the secret is always there: a
  two-word SpyGame has no top-3 or top-5). With ``--by speaker`` a game is in a group at m
  when its m-th counted clue was said by that model in that role.
- ``gain_histogram``: the distribution of the per-clue information gain, by group.
- ``leakage_by_group``: per group of speakers, the mean information gain per clue and the
  share of clues after which the secret ranks first, with bootstrap intervals over games.
- ``extreme_clues``: the most and least revealing clues (largest and smallest gain), each
  clue once per secret: logs often hold the same clue for the same secret many times.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage.curves._data import StepTable
from leakage.curves._stats import bootstrap_mean, bootstrap_ratio

TOP_K = (1, 3, 5)
CLUE_COLUMNS = [
    "game_id",
    "player",
    "role",
    "model",
    "text",
    "information_gain_bits",
    "entropy_bits",
    "secret",
    "secret_rank",
    "clues_so_far",
]


def _ordered(groups: NDArray[np.object_], games: NDArray[np.int64]) -> list[str]:
    """Group names, the one with the most games first (ties by name)."""
    sizes = Counter(g for g, _ in set(zip(groups.tolist(), games.tolist(), strict=True)))
    return sorted(sizes, key=lambda g: (-sizes[g], g))


def curves(
    steps: StepTable, *, max_clues: int = 16, replicates: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """Rows ``group, metric, m, value, low, high, games`` (metric: entropy_bits, top1 ...)."""
    sel = steps.counted & (steps.clues >= 1) & (steps.clues <= max_clues)
    if not sel.any():
        return []
    top_m = int(steps.clues[sel].max())
    out: list[dict[str, Any]] = []
    for group in _ordered(steps.curve_group[sel], steps.game[sel]):
        rows = sel & (steps.curve_group == group)
        _, gi = np.unique(steps.game[rows], return_inverse=True)
        n = int(gi.max()) + 1
        m = steps.clues[rows]
        entropy = np.full((n, top_m + 1), np.nan)
        entropy[gi, 0] = steps.prior[rows]
        entropy[gi, m] = steps.entropy[rows]
        rank = np.full((n, top_m), np.nan)
        rank[gi, m - 1] = steps.rank[rows]
        kk = np.zeros((n, top_m), dtype=np.int64)
        kk[gi, m - 1] = steps.n_candidates[rows]
        # Top k only where there are more than k candidates: with K <= k it is 1 by rule.
        blocks = [entropy] + [
            np.where(np.isnan(rank) | (kk <= k), np.nan, rank <= k) for k in TOP_K
        ]
        values = np.hstack(blocks)
        est = bootstrap_mean(values, replicates=replicates, seed=seed)
        present = (~np.isnan(values)).sum(axis=0)
        metrics = [("entropy_bits", 0)] + [(f"top{k}", 1) for k in TOP_K]
        col = 0
        for metric, first in metrics:
            for mm in range(first, top_m + 1):
                if present[col]:
                    out.append(
                        {
                            "group": group,
                            "metric": metric,
                            "m": mm,
                            "value": float(est.value[col]),
                            "low": float(est.low[col]),
                            "high": float(est.high[col]),
                            "games": int(present[col]),
                        }
                    )
                col += 1
    return out


def gain_histogram(steps: StepTable, *, bins: int = 30) -> list[dict[str, Any]]:
    """Rows ``group, bin_low, bin_high, count, density`` over the counted clues."""
    sel = steps.counted & np.isfinite(steps.gain)
    if not sel.any():
        return []
    edges = np.histogram_bin_edges(steps.gain[sel], bins=bins)
    out = []
    for group in _ordered(steps.clue_group[sel], steps.game[sel]):
        g = steps.gain[sel & (steps.clue_group == group)]
        counts, _ = np.histogram(g, bins=edges)
        width = np.diff(edges)
        density = counts / (len(g) * np.where(width > 0, width, 1.0))
        for lo, hi, c, d in zip(edges[:-1], edges[1:], counts, density, strict=True):
            out.append(
                {
                    "group": group,
                    "bin_low": float(lo),
                    "bin_high": float(hi),
                    "count": int(c),
                    "density": float(d),
                }
            )
    return out


def leakage_by_group(
    steps: StepTable, *, replicates: int = 1000, seed: int = 0
) -> list[dict[str, Any]]:
    """Per speaker group: clues, games, mean gain per clue and top-1 share, with intervals."""
    sel = steps.counted & np.isfinite(steps.gain)
    out = []
    for group in _ordered(steps.clue_group[sel], steps.game[sel]):
        rows = sel & (steps.clue_group == group)
        gi = np.unique(steps.game[rows], return_inverse=True)[1].astype(np.int64)
        n = int(gi.max()) + 1
        rank = steps.rank[rows]
        has_rank = ~np.isnan(rank)
        num = np.stack(
            [
                np.bincount(gi, weights=steps.gain[rows], minlength=n),
                np.bincount(gi, weights=(has_rank & (rank <= 1)).astype(float), minlength=n),
            ],
            axis=1,
        ).astype(np.float64)
        den = np.stack(
            [
                np.bincount(gi, minlength=n).astype(float),
                np.bincount(gi, weights=has_rank.astype(float), minlength=n),
            ],
            axis=1,
        )
        est = bootstrap_ratio(num, den, replicates=replicates, seed=seed)
        out.append(
            {
                "group": group,
                "clues": int(rows.sum()),
                "games": n,
                "mean_gain_bits": float(est.value[0]),
                "mean_gain_low": float(est.low[0]),
                "mean_gain_high": float(est.high[0]),
                "median_gain_bits": float(np.median(steps.gain[rows])),
                "top1_share": float(est.value[1]),
                "top1_low": float(est.low[1]),
                "top1_high": float(est.high[1]),
            }
        )
    return out


_SCAN_BLOCKS = 50
"""How many blocks of rows :func:`extreme_clues` reads, at most, looking for distinct clues."""


def extreme_clues(
    steps: StepTable, *, n: int = 20
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The ``n`` most revealing counted clues (largest gain first) and the ``n`` least.

    A clue is shown once per secret (compared stripped and case-folded), at its most
    extreme gain. The texts are read by row, in blocks down the ranking, up to
    ``_SCAN_BLOCKS`` blocks of ``4 n`` rows: a table where one clue fills all of them shows
    fewer than ``n``.
    """
    idx = np.flatnonzero(steps.counted & np.isfinite(steps.gain))
    if idx.size == 0:
        return [], []
    order = idx[np.argsort(steps.gain[idx], kind="stable")]
    return _distinct(steps, order[::-1], n), _distinct(steps, order, n)


def _distinct(steps: StepTable, order: NDArray[np.int64], n: int) -> list[dict[str, Any]]:
    picked: list[dict[str, Any]] = []
    seen: set[tuple[str, Any]] = set()
    block = 4 * n
    for start in range(0, min(len(order), _SCAN_BLOCKS * block), block):
        for row in steps.rows(order[start : start + block], CLUE_COLUMNS):
            key = (str(row["text"]).strip().casefold(), row["secret"])
            if key in seen:
                continue
            seen.add(key)
            picked.append(row)
            if len(picked) == n:
                return picked
    return picked
