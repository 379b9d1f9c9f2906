"""What the scripted agents share: per-decision randomness and the non-chameleon's vote."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from leakage.games._types import ChameleonObservation
from leakage.games.agents._association import AssociationTable, AssociationTables
from leakage.posterior import normalize_log


def pick(scores: NDArray[np.float64], seed: int, *, best: str = "max") -> int:
    """Index of the best score; exact ties broken by ``seed`` (not by position)."""
    target = scores.max() if best == "max" else scores.min()
    ties = np.flatnonzero(scores == target)
    if ties.size == 1:
        return int(ties[0])
    return int(ties[np.random.default_rng(seed).integers(ties.size)])


def secret_support(table: AssociationTable, clues: Sequence[str], secret: str) -> NDArray:
    """P(secret | clue) of each clue on its own (uniform prior over the candidates)."""
    if not clues:
        return np.zeros(0)
    return normalize_log(table.rows(clues))[:, table.column(secret)]


def vote_least_associated(obs: ChameleonObservation, table: AssociationTable, word: str) -> str:
    """Vote for the other player whose clue points least to ``word``."""
    others = [(p, c) for p, c in obs.clues if p != obs.player]
    if not others:
        others = [(p, "") for p in obs.players if p != obs.player]
        return others[np.random.default_rng(obs.seed).integers(len(others))][0]
    support = secret_support(table, [c for _, c in others], word)
    return others[pick(support, obs.seed, best="min")][0]


def vote_reflection(agent: Callable[[ChameleonObservation], str], obs: ChameleonObservation) -> str:
    """The reflection of a Chameleon agent without beliefs of its own: its told role and, as
    its suspect, the player it would vote for now (``{"self": ..., "suspect": ...}``)."""
    return json.dumps({"self": obs.role, "suspect": agent(replace(obs, phase="vote"))})


class TableAgent:
    """Base of the agents that read an association table for the card in play."""

    name = "table"

    def __init__(self, tables: AssociationTables) -> None:
        self.tables = tables

    def table(self, obs: ChameleonObservation) -> AssociationTable:
        return self.tables.get(obs.candidates, obs.category)
