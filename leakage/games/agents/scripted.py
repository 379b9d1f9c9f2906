"""Scripted Chameleon strategies of Karabag & Topcu, on a real card's association table.

- :class:`RevealingAgent` says the secret's strongest associate (the clue with the highest
  P(secret | clue)); fellow players recognise it at once, and so does the chameleon.
- :class:`ConcealingAgent` says the clue whose posterior is closest to uniform (the highest
  entropy): equally likely under every candidate, so it tells the chameleon nothing, and
  the other players nothing either.
- :class:`AmbiguousAgent` is the card version of the history-dependent elimination
  strategy π_amb: given the clues said so far, it says the clue that leaves the secret's
  posterior nearest 1/l (l = K / (N + 1)), i.e. it narrows the card to an ambiguity set of
  about l candidates that still contains the secret, and no further. The exact π_amb of the
  theory, on abstract clues, is in :mod:`leakage.games.theory`.
- :class:`RandomChameleon`: the trivial chameleon (a random clue, vote and guess).

All non-chameleons vote for the player whose clue points least to the secret.
"""

from __future__ import annotations

import numpy as np

from leakage.games._types import ChameleonObservation
from leakage.games.agents._association import AssociationTables
from leakage.games.agents._common import TableAgent, pick, vote_least_associated
from leakage.posterior import entropy_bits, normalize_log


class RevealingAgent(TableAgent):
    """Non-chameleon: the secret's strongest associate."""

    name = "revealing"

    def __call__(self, obs: ChameleonObservation, /) -> str:
        table = self.table(obs)
        if obs.phase == "vote":
            return vote_least_associated(obs, table, obs.secret or "")
        return table.clues[pick(table.posterior[:, table.column(obs.secret or "")], obs.seed)]


class ConcealingAgent(TableAgent):
    """Non-chameleon: the clue equally likely under every candidate."""

    name = "concealing"

    def __init__(self, tables: AssociationTables) -> None:
        super().__init__(tables)
        self._flat: dict[tuple[str, ...], int] = {}

    def __call__(self, obs: ChameleonObservation, /) -> str:
        table = self.table(obs)
        if obs.phase == "vote":
            return vote_least_associated(obs, table, obs.secret or "")
        best = self._flat.get(table.candidates)
        if best is None:
            best = self._flat[table.candidates] = int(np.argmax(entropy_bits(table.posterior)))
        return table.clues[best]


class AmbiguousAgent(TableAgent):
    """Non-chameleon π_amb on a card: keep the secret in an ambiguity set of about l words."""

    name = "amb"

    def __call__(self, obs: ChameleonObservation, /) -> str:
        table = self.table(obs)
        secret = table.column(obs.secret or "")
        if obs.phase == "vote":
            return vote_least_associated(obs, table, obs.secret or "")
        k, n = len(table.candidates), len(obs.players)
        target = 1.0 / max(2, k // (n + 1))
        history = table.rows([c for _, c in obs.clues]).sum(axis=0)
        after = normalize_log(history[None, :] + table.loglik)
        p = after[:, secret]
        rank = (after > p[:, None]).sum(axis=1)
        score = -np.abs(p - target) - (rank >= round(1 / target))
        return table.clues[pick(score, obs.seed)]


class RandomChameleon(TableAgent):
    """The trivial chameleon: a random vocabulary clue, a random vote, a random guess."""

    name = "random"

    def __call__(self, obs: ChameleonObservation, /) -> str:
        rng = np.random.default_rng(obs.seed)
        if obs.phase == "vote":
            others = [p for p in obs.players if p != obs.player]
            return others[rng.integers(len(others))]
        if obs.phase == "guess":
            return obs.candidates[rng.integers(len(obs.candidates))]
        table = self.table(obs)
        return table.clues[rng.integers(len(table.clues))]
