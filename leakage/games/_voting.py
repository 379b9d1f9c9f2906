"""Simultaneous votes: plurality, ties broken by a randomly drawn player."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np


def tally(
    votes: Mapping[str, str], players: Sequence[str], rng: np.random.Generator
) -> tuple[str | None, dict[str, object]]:
    """The accused player and how it was decided.

    The most-voted player is accused. On a tie a player is drawn uniformly from all
    ``players``; it breaks the tie with its own vote when that vote is among the tied,
    otherwise the accused is drawn uniformly from the tied (the drawn player has no
    preference among them). No votes at all: nobody is accused.
    """
    counts = Counter(votes.values())
    if not counts:
        return None, {"counts": {}, "tied": []}
    top = max(counts.values())
    tied = [p for p in players if counts.get(p, 0) == top]
    info: dict[str, object] = {"counts": dict(counts), "tied": tied}
    if len(tied) == 1:
        return tied[0], info
    breaker = players[int(rng.integers(len(players)))]
    choice = votes.get(breaker)
    if choice not in tied:
        choice = tied[int(rng.integers(len(tied)))]
    info["tiebreaker"] = breaker
    return choice, info
