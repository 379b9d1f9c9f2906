"""Cutting scored pairs into hard / medium / easy (pure functions, no I/O).

- Order: similarity descending; equal similarities by the pair's text (case-folded ``a``,
  then ``b``, then as written), then by input position, so the order never depends on how
  the input was shuffled beyond exact duplicates.
- ``terciles``: the ordered pairs cut into three runs of sizes as equal as possible, the
  earlier splits taking the extra pair(s): 10 pairs -> 4 / 3 / 3, 11 -> 4 / 4 / 3. A cut
  point is the midpoint between the last pair above it and the first pair below it.
- ``thresholds``: hard when similarity > ``hard_above``, easy when < ``easy_below``,
  medium otherwise (both cut values included).
- Samples: ``n`` pairs per split, drawn without replacement with
  ``numpy.random.default_rng([seed, k])`` for split k (0 hard, 1 medium, 2 easy), kept in
  split order; a split with fewer than ``n`` pairs is an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from leakage.errors import InvalidInput

SPLITS = ("hard", "medium", "easy")
METHODS = ("terciles", "thresholds")
GU_HARD_ABOVE = 0.789
GU_EASY_BELOW = 0.735
"""Gu et al.'s cut points (BGE-M3 embeddings of LLM-written descriptions, 600 pairs). They
are the defaults of the ``thresholds`` method; other models put similarities on other
scales, so they do not transfer as they are."""


def order(
    similarities: Sequence[float] | NDArray[np.float64], texts: Sequence[tuple[str, str]]
) -> list[int]:
    """Indices of the pairs by similarity descending, ties broken by the pair text."""
    return sorted(
        range(len(similarities)),
        key=lambda i: (
            -float(similarities[i]),
            texts[i][0].casefold(),
            texts[i][1].casefold(),
            texts[i][0],
            texts[i][1],
            i,
        ),
    )


def tercile_sizes(n: int) -> tuple[int, int, int]:
    """Split sizes for ``n`` pairs: as equal as possible, earlier splits larger."""
    q, r = divmod(n, 3)
    return q + (r >= 1), q + (r >= 2), q


def _midpoint(upper: float, lower: float) -> float:
    return (upper + lower) / 2


def terciles(
    similarities: Sequence[float] | NDArray[np.float64], texts: Sequence[tuple[str, str]]
) -> tuple[dict[str, list[int]], dict[str, float | None]]:
    """(indices per split in order, cut points ``hard_medium`` / ``medium_easy``)."""
    ranked = order(similarities, texts)
    h, m, _ = tercile_sizes(len(ranked))
    splits = {"hard": ranked[:h], "medium": ranked[h : h + m], "easy": ranked[h + m :]}
    sims = [float(similarities[i]) for i in ranked]
    cuts: dict[str, float | None] = {"hard_medium": None, "medium_easy": None}
    if 0 < h < len(sims):
        cuts["hard_medium"] = _midpoint(sims[h - 1], sims[h])
    if 0 < h + m < len(sims):
        cuts["medium_easy"] = _midpoint(sims[h + m - 1], sims[h + m])
    return splits, cuts


def thresholds(
    similarities: Sequence[float] | NDArray[np.float64],
    texts: Sequence[tuple[str, str]],
    *,
    hard_above: float = GU_HARD_ABOVE,
    easy_below: float = GU_EASY_BELOW,
) -> tuple[dict[str, list[int]], dict[str, float | None]]:
    """(indices per split in order, cut points): fixed cut points."""
    if not easy_below <= hard_above:
        raise InvalidInput(
            f"--easy-below ({easy_below}) must not exceed --hard-above ({hard_above})"
        )
    splits: dict[str, list[int]] = {s: [] for s in SPLITS}
    for i in order(similarities, texts):
        s = float(similarities[i])
        splits["hard" if s > hard_above else "easy" if s < easy_below else "medium"].append(i)
    return splits, {"hard_medium": hard_above, "medium_easy": easy_below}


def sample(splits: dict[str, list[int]], n: int, seed: int) -> dict[str, list[int]]:
    """``n`` members of every split, seeded; raises ``InvalidInput`` if a split is smaller."""
    if n < 1:
        raise InvalidInput(f"--sample must be at least 1, got {n}")
    if seed < 0:
        raise InvalidInput(f"--seed must be 0 or more, got {seed}")
    short = {s: len(splits[s]) for s in SPLITS if len(splits[s]) < n}
    if short:
        sizes = ", ".join(f"{s} {len(splits[s])}" for s in SPLITS)
        raise InvalidInput(
            f"cannot sample {n} pairs per split: {', '.join(short)} "
            f"{'has' if len(short) == 1 else 'have'} fewer (sizes: {sizes}); use --sample "
            f"{min(len(v) for v in splits.values())} or less"
        )
    out = {}
    for k, name in enumerate(SPLITS):
        members = splits[name]
        rng = np.random.default_rng([seed, k])
        picked = np.sort(rng.choice(len(members), size=n, replace=False))
        out[name] = [members[int(j)] for j in picked]
    return out
