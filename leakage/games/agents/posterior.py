"""The posterior chameleon: it guesses the maximum-posterior word given the others' clues.

This is the adversary of the published experiments (web counts guess the secret about 40%
of the time after one clue): the posterior comes from the scoring library, a likelihood
backend's matrix through :func:`leakage.posterior.posterior_trace`. The backend is the one
the association tables were built with (the co-occurrence backend by default), so clues
outside the table's vocabulary (an LLM's) are scored the same way.

Clue: with no clue said before it, the most uninformative vocabulary clue (as a concealing
player would); otherwise the strongest associate of the current most probable word, i.e. it
imitates a revealing player. Vote: the player whose clue points least to that word.

:func:`heard_posterior` is its inference on its own; the leakage-aware non-chameleon's
default oracle calls it too, so that agent measures leakage against this adversary exactly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from leakage.games._types import ChameleonObservation
from leakage.games.agents._association import AssociationTable
from leakage.games.agents._common import (
    TableAgent,
    pick,
    vote_least_associated,
    vote_reflection,
)
from leakage.posterior import entropy_bits, posterior_trace


def heard_posterior(table: AssociationTable, clues: Sequence[str]) -> np.ndarray:
    """P(candidate | ``clues``) from the table's log-likelihoods, uniform prior."""
    if not clues:
        return np.full(len(table.candidates), 1.0 / len(table.candidates))
    return posterior_trace(table.rows(clues)).posterior[-1]


class PosteriorChameleon(TableAgent):
    """Chameleon: imitates the most probable word and guesses the maximum posterior."""

    name = "posterior"

    def posterior(self, obs: ChameleonObservation, table: AssociationTable) -> np.ndarray:
        """P(candidate | the other players' clues so far), uniform prior."""
        return heard_posterior(table, [c for p, c in obs.clues if p != obs.player])

    def __call__(self, obs: ChameleonObservation, /) -> str:
        if obs.phase == "reflect":
            return vote_reflection(self, obs)
        table = self.table(obs)
        post = self.posterior(obs, table)
        best = table.candidates[pick(post, obs.seed)]
        if obs.phase == "guess":
            return best
        if obs.phase == "vote":
            return vote_least_associated(obs, table, best)
        if not any(p != obs.player for p, _ in obs.clues):
            return table.clues[int(np.argmax(entropy_bits(table.posterior)))]
        return table.clues[pick(table.posterior[:, table.column(best)], obs.seed)]
