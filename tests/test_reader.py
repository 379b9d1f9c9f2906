"""The reader's strength (``leakage.reader``): the shipped reference set, the measurement on
it with hand-made backends, the shipped figures and the sentence reports show."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from leakage.errors import InvalidInput
from leakage.reader import (
    COMMAND,
    lower_bound_note,
    measure_strength,
    reference_games,
    shipped_strengths,
)


class Knows:
    """A backend that has read the answers right: the secret's column highest."""

    name = "knows"

    def __init__(self, secrets: dict[tuple[str, ...], str]) -> None:
        self.secrets = secrets

    def info(self) -> dict[str, str]:
        return {"backend": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        out = np.zeros((len(clues), len(candidates)))
        out[:, list(candidates).index(self.secrets[tuple(candidates)])] = 1.0
        return out


class Blank(Knows):
    """A backend that reads nothing: every candidate alike (a tie, which counts against)."""

    name = "blank"

    def loglik(self, clues, candidates, *, category=None):  # type: ignore[no-untyped-def]
        return np.zeros((len(clues), len(candidates)))


def test_the_reference_set_is_8_word_cards_with_attribution() -> None:
    games = reference_games()
    assert len(games) >= 20
    for g in games:
        assert len(g.candidates) == 8 and g.secret in g.candidates
        assert "CC BY 4.0" in g.meta["attribution"] and g.meta["qa"]
        assert all(t.text.endswith(("Yes.", "No.")) for t in g.turns if t.player == "Player 2")
    with pytest.raises(InvalidInput, match="no reference set"):
        reference_games("riddles")


def test_measured_strength_of_a_reader_that_knows_and_one_that_does_not() -> None:
    games = reference_games()
    secrets = {tuple(g.candidates): str(g.secret) for g in games}
    strong = measure_strength(Knows(secrets), games)  # type: ignore[arg-type]
    assert strong.top1 == 1.0 and strong.games == len(games) and strong.chance == 0.125
    assert strong.top1_ci[0] > 0.8 and strong.top1_ci[1] == 1.0
    weak = measure_strength(Blank(secrets), games)  # type: ignore[arg-type]
    assert weak.top1 == 0.0 and weak.reader == "blank"


def test_shipped_strengths_and_the_note() -> None:
    shipped = shipped_strengths()
    assert {"ensemble", "answers", "embedding"} <= set(shipped)
    ens = shipped["ensemble"]
    note = lower_bound_note("ensemble")
    assert f"{ens.top1:.0%} of the time" in note and COMMAND in note
    assert "ensemble" in note and "lower bound" in note
    assert "not measured" in lower_bound_note("my-plugin")
    assert "lower bound" in lower_bound_note(None)
