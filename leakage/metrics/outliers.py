"""How far each player's descriptions sit from everyone else's, in embedding space.

A spy describes a different word, so its statements tend to drift away from the civilians'.
For a player p with description vectors v_1..v_n, let m_p be their normalised mean; the
outlier score of p is 1 - cos(m_p, c_p), where c_p is the normalised mean of the other
speakers' m_q (each speaker weighs the same however much they said). It needs no word pair:
a player (or an observer) can compute it without knowing either word.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray


def _unit(v: NDArray[np.float64]) -> NDArray[np.float64]:
    n = np.linalg.norm(v, axis=-1, keepdims=True)
    return v / np.maximum(n, 1e-12)


def outlier_scores(player_means: dict[str, NDArray[np.float64]]) -> dict[str, float]:
    """Outlier score of each player from the (unnormalised) mean of their vectors."""
    ids = list(player_means)
    if len(ids) < 2:
        return dict.fromkeys(ids, 0.0)
    m = _unit(np.stack([player_means[p] for p in ids]))
    total = m.sum(axis=0)
    others = _unit(total[None, :] - m)
    scores = 1.0 - (m * others).sum(axis=1)
    return {p: float(s) for p, s in zip(ids, scores, strict=True)}


def outlier_trace(speakers: Sequence[str], vectors: NDArray[np.float32]) -> list[dict[str, float]]:
    """The outlier scores of every player who has spoken, after each statement."""
    sums: dict[str, NDArray[np.float64]] = {}
    out = []
    for p, v in zip(speakers, np.asarray(vectors, dtype=np.float64), strict=True):
        sums[p] = sums.get(p, 0.0) + v
        out.append(outlier_scores(sums))
    return out
