"""The benchmark's SpyGame figures on games small enough to work by hand."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from benchmarks._spygame import spy_round1
from leakage import SpyGameTranscript

# A statement "c" favours the civilians' word by one nat, "s" the spy's.
ROWS = {"c": [0.0, -1.0], "s": [-1.0, 0.0]}


class Fixed:
    name = "fixed"

    def info(self) -> dict[str, Any]:
        return {"name": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        return np.array([ROWS[c] for c in clues])


def game(gid: str, spy: str, said: dict[str, str]) -> SpyGameTranscript:
    return SpyGameTranscript.model_validate(
        {
            "format": "leakage.transcript/1",
            "game": "spygame",
            "id": gid,
            "words": {"civilian": "Mango", "spy": "Papaya"},
            "players": [
                {"id": p, "role": "spy" if p == spy else "civilian"} for p in ("p1", "p2", "p3")
            ],
            "turns": [{"player": p, "text": t, "round": 1} for p, t in said.items()],
        }
    )


def test_the_spy_posterior_auc_pools_every_players_p_spy_after_round_one() -> None:
    # d = +1 for "c", -1 for "s"; P(spy) ∝ exp(-d): 0.787 for the "s" speaker, 0.107 for the
    # others. Game a: the spy said "s" (0.787); game b: the spy said "c" (0.107) and a
    # civilian "s" (0.787). Spies {0.787, 0.107} against civilians {0.107 x3, 0.787}:
    # 0.787 beats three and ties one (3.5), 0.107 ties three (1.5): AUC = 5 / 8.
    games = [
        game("a", "p3", {"p1": "c", "p2": "c", "p3": "s"}),
        game("b", "p2", {"p1": "c", "p2": "c", "p3": "s"}),
    ]
    out = spy_round1(games, Fixed())
    assert out["spy_posterior_auc"] == pytest.approx(5 / 8, abs=1e-3)
    low, high = out["spy_posterior_auc_ci95"]
    assert low <= 5 / 8 <= high
