"""A scripted SpyGame player on a card's association table.

It knows only its own word (and, in the MAgIC / CK-Arena variant, its role). It describes its
word with its strongest associates not yet said (``reveal``: 0 says the strongest, higher
values skip that many to stay vaguer). It scores every statement against the card's words
(the candidate list a leakage report uses): a player whose statements point less to *my*
word than the others' do is suspect. Reflection: I believe I am the spy when the other
players' statements, pooled, point to another card word more than to mine. Vote: the most
suspect living player.
"""

from __future__ import annotations

import json

import numpy as np

from leakage.games._types import SpyObservation
from leakage.games.agents._association import AssociationTable, AssociationTables, gives_away
from leakage.games.agents._common import pick
from leakage.posterior import normalize_log


class AssociativeSpyPlayer:
    """Scripted SpyGame player (civilian or spy; see module doc)."""

    def __init__(self, tables: AssociationTables, *, reveal: int = 0, name: str = "associative"):
        self.tables = tables
        self.reveal = reveal
        self.name = name

    def _table(self, obs: SpyObservation) -> AssociationTable:
        return self.tables.for_word(obs.word, obs.category)

    def _support(self, obs: SpyObservation, table: AssociationTable) -> dict[str, float]:
        """Mean P(my word | statement) of each other living player's statements."""
        mine = table.column(obs.word)
        by: dict[str, list[str]] = {}
        for s in obs.statements:
            if s.player != obs.player and s.player in obs.alive:
                by.setdefault(s.player, []).append(s.text)
        out = {}
        for p, texts in by.items():
            out[p] = float(normalize_log(table.rows(texts))[:, mine].mean())
        return out

    def _believes_spy(self, obs: SpyObservation, table: AssociationTable) -> bool:
        if obs.role is not None:
            return obs.role == "spy"
        others = [s.text for s in obs.statements if s.player != obs.player]
        if not others:
            return False
        pooled = normalize_log(table.rows(others).sum(axis=0)[None, :])[0]
        return int(np.argmax(pooled)) != table.column(obs.word)

    def _suspect(self, obs: SpyObservation, table: AssociationTable) -> str:
        support = self._support(obs, table)
        if not support:
            others = [p for p in obs.alive if p != obs.player]
            return others[np.random.default_rng(obs.seed).integers(len(others))]
        names = list(support)
        return names[pick(-np.array([support[p] for p in names]), obs.seed)]

    def __call__(self, obs: SpyObservation, /) -> str:
        table = self._table(obs)
        if obs.phase == "describe":
            said = {s.text.casefold() for s in obs.statements if s.player == obs.player}
            order = np.argsort(-table.posterior[:, table.column(obs.word)], kind="stable")
            fresh = [
                table.clues[i]
                for i in order
                if table.clues[i].casefold() not in said
                and not gives_away(table.clues[i], obs.word)
            ]
            return fresh[min(self.reveal, len(fresh) - 1)] if fresh else "thing"
        if obs.phase == "reflect":
            role = "spy" if self._believes_spy(obs, table) else "civilian"
            return json.dumps({"self": role, "suspect": self._suspect(obs, table)})
        return self._suspect(obs, table)
