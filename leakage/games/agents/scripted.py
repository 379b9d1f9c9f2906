"""Scripted Chameleon strategies of Karabag & Topcu, on real cards.

- :class:`RevealingAgent` says the secret's strongest associate (the clue with the highest
  P(secret | clue)); fellow players recognise it at once, and so does the chameleon.
- :class:`ConcealingAgent` says the clue whose posterior is closest to uniform (the highest
  entropy): equally likely under every candidate, so it tells the chameleon nothing, and
  the other players nothing either.
- :class:`TrivialAgent` is the paper's trivial strategy (section 4.1): the same response,
  ``null``, whatever the secret, and a vote for player 1. Against any chameleon that
  answers the same it wins (1/N)(1 - 1/K): 23.4% for N = 4, K = 16.
- :class:`CopyingChameleon` is the chameleon of Proposition 1: it copies a clue said before
  it, or, speaking first, answers as the non-chameleons' strategy (which it knows) would for
  a uniformly drawn candidate, the marginal D^ch = (1/K) Σ D^w of the proof; it votes as
  that strategy would, and guesses the candidate whose answers match the others' clues most.
- :class:`AmbiguousAgent` is π_amb (section 4.2, Proposition 3) on a card, for either role.
  The pre-agreed code: the K candidates, in the card's order, are dealt into N+1 consecutive
  groups of l = K/(N+1) (as equal as possible when N+1 does not divide K; the proposition
  needs K = l(N+1)), and a clue names a group by saying one of its words (spaces written as
  hyphens, so it is one word). A non-chameleon eliminates a uniformly drawn group not named
  yet that does not hold the secret; after an inconsistent clue (not a group word, a group
  named already or the secret's group) it says ``null``; it votes for the first
  inconsistent player, else for player 1. As the chameleon it plays the best response the
  proof analyses: it names a group not named yet, votes for player 1 and, caught, guesses in
  its own group when it must have eliminated the secret (nulls followed its clue, or it was
  caught from position 2 on), else in the group nobody named.
- :class:`RandomChameleon`: the trivial chameleon (a random clue, vote and guess).

The table agents' non-chameleons vote for the player whose clue points least to the secret.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

import numpy as np

from leakage.games._types import Agent, ChameleonObservation
from leakage.games.agents._association import AssociationTable, AssociationTables
from leakage.games.agents._common import (
    TableAgent,
    pick,
    vote_least_associated,
    vote_reflection,
)
from leakage.posterior import entropy_bits


class _TableNonChameleon(TableAgent):
    """A table agent's non-chameleon: votes for the player whose clue points least to the
    secret, reflects as it votes, and says :meth:`clue`."""

    def __call__(self, obs: ChameleonObservation, /) -> str:
        if obs.phase == "reflect":
            return vote_reflection(self, obs)
        table = self.table(obs)
        if obs.phase == "vote":
            return vote_least_associated(obs, table, obs.secret or "")
        return self.clue(obs, table)

    def clue(self, obs: ChameleonObservation, table: AssociationTable) -> str:
        raise NotImplementedError


class RevealingAgent(_TableNonChameleon):
    """Non-chameleon: the secret's strongest associate."""

    name = "revealing"

    def clue(self, obs: ChameleonObservation, table: AssociationTable) -> str:
        return table.clues[pick(table.posterior[:, table.column(obs.secret or "")], obs.seed)]


class ConcealingAgent(_TableNonChameleon):
    """Non-chameleon: the clue equally likely under every candidate."""

    name = "concealing"

    def __init__(self, tables: AssociationTables) -> None:
        super().__init__(tables)
        self._flat: dict[tuple[str, ...], int] = {}

    def clue(self, obs: ChameleonObservation, table: AssociationTable) -> str:
        best = self._flat.get(table.candidates)
        if best is None:
            best = self._flat[table.candidates] = int(np.argmax(entropy_bits(table.posterior)))
        return table.clues[best]


NULL = "null"
"""The paper's null response (π_amb after an inconsistent clue; the trivial strategy)."""


def vote_first(obs: ChameleonObservation) -> str:
    """The vote of the trivial strategy and of π_amb when nobody is exposed: player 1 (the
    first speaker), or player 2 for player 1 itself (nobody may vote for itself)."""
    first = obs.players[0]
    return first if first != obs.player else obs.players[1]


class TrivialAgent:
    """Non-chameleon: the trivial strategy (section 4.1): ``null`` whatever the secret, and
    a vote for player 1."""

    name = "trivial"

    def __call__(self, obs: ChameleonObservation, /) -> str:
        if obs.phase == "reflect":
            return vote_reflection(self, obs)
        return vote_first(obs) if obs.phase == "vote" else NULL


class CopyingChameleon:
    """Chameleon of Proposition 1: copies an earlier clue, or answers as ``imitate`` (the
    non-chameleons' strategy) would for a random candidate; votes as ``imitate`` would for
    its best guess; guesses the candidate under which ``imitate``'s first answer matches the
    most of the others' clues (exact for strategies whose answer depends on the secret only,
    as Proposition 1's stationary ones; ties broken by the decision's seed)."""

    name = "copy"

    def __init__(self, imitate: Agent) -> None:
        self.imitate = imitate

    def _as(self, obs: ChameleonObservation, secret: str, **kw: object) -> str:
        return self.imitate(replace(obs, role="non-chameleon", secret=secret, **kw))  # type: ignore[arg-type]

    def guess(self, obs: ChameleonObservation) -> str:
        said = [c.casefold() for p, c in obs.clues if p != obs.player]
        score = np.array(
            [
                sum(c == self._as(obs, w, phase="clue", clues=()).casefold() for c in said)
                for w in obs.candidates
            ],
            dtype=float,
        )
        return obs.candidates[pick(score, obs.seed)]

    def __call__(self, obs: ChameleonObservation, /) -> str:
        if obs.phase == "reflect":
            return vote_reflection(self, obs)
        rng = np.random.default_rng(obs.seed)
        if obs.phase == "guess":
            return self.guess(obs)
        if obs.phase == "vote":
            return self._as(obs, self.guess(obs))
        earlier = [c for p, c in obs.clues if p != obs.player]
        if earlier:
            return earlier[int(rng.integers(len(earlier)))]
        return self._as(obs, obs.candidates[int(rng.integers(len(obs.candidates)))])


def amb_groups(candidates: tuple[str, ...], n_players: int) -> list[tuple[str, ...]]:
    """π_amb's N+1 groups: the candidates in order, in consecutive groups of l = K/(N+1)
    (the first K mod (N+1) groups one word longer when N+1 does not divide K)."""
    size, extra = divmod(len(candidates), n_players + 1)
    if size == 0:
        raise ValueError(
            f"pi_amb needs at least N+1 = {n_players + 1} candidates, got {len(candidates)}"
        )
    out, start = [], 0
    for g in range(n_players + 1):
        end = start + size + (g < extra)
        out.append(tuple(candidates[start:end]))
        start = end
    return out


def _as_clue(word: str) -> str:
    return "-".join(word.split())


@lru_cache(maxsize=256)
def _amb_code(
    candidates: tuple[str, ...], n_players: int
) -> tuple[list[tuple[str, ...]], dict[str, int]]:
    """The groups and, for each group word as a clue (casefolded), its group; computed once
    per card and table size (every move of a game reads them)."""
    groups = amb_groups(candidates, n_players)
    return groups, {_as_clue(w).casefold(): g for g, ws in enumerate(groups) for w in ws}


class AmbiguousAgent:
    """π_amb on a card (section 4.2), as a non-chameleon or as the chameleon's best
    response; see the module doc for the code."""

    name = "amb"

    def _read(
        self, obs: ChameleonObservation
    ) -> tuple[list[tuple[str, int | None]], list[tuple[str, ...]]]:
        """Each clue so far with the group it names (``None``: null, not a group word, or a
        group named before), and the groups."""
        groups, group_of = _amb_code(obs.candidates, len(obs.players))
        seen: set[int] = set()
        out: list[tuple[str, int | None]] = []
        for player, clue in obs.clues:
            g = group_of.get(clue.casefold())
            if g in seen:
                g = None
            if g is not None:
                seen.add(g)
            out.append((player, g))
        return out, groups

    def __call__(self, obs: ChameleonObservation, /) -> str:
        if obs.phase == "reflect":
            return vote_reflection(self, obs)
        rng = np.random.default_rng(obs.seed)
        said, groups = self._read(obs)
        named = {g for _, g in said if g is not None}
        secret_group = None
        if obs.secret is not None:
            secret_group = next(g for g, ws in enumerate(groups) if obs.secret in ws)
        if obs.phase == "clue":
            # consistent so far: every clue named a new group, never the secret's
            if any(g is None or g == secret_group for _, g in said):
                return NULL
            free = [g for g in range(len(groups)) if g not in named and g != secret_group]
            words = groups[free[int(rng.integers(len(free)))]]
            return _as_clue(words[int(rng.integers(len(words)))])
        if obs.phase == "vote":
            if obs.secret is not None:
                for player, g in said:
                    if player != obs.player and (g is None or g == secret_group):
                        return player
            return vote_first(obs)
        # the guess: the chameleon's own group if it must have eliminated the secret
        mine = next((i for i, (p, _) in enumerate(said) if p == obs.player), None)
        own = said[mine][1] if mine is not None else None
        nulls_after = mine is not None and any(g is None for _, g in said[mine + 1 :])
        if own is not None and (nulls_after or mine != 0):
            words = groups[own]
        else:
            left = [g for g in range(len(groups)) if g not in named]
            words = tuple(w for g in left for w in groups[g]) or obs.candidates
        return words[int(rng.integers(len(words)))]


class RandomChameleon(TableAgent):
    """The trivial chameleon: a random vocabulary clue, a random vote, a random guess."""

    name = "random"

    def __call__(self, obs: ChameleonObservation, /) -> str:
        if obs.phase == "reflect":
            return vote_reflection(self, obs)
        rng = np.random.default_rng(obs.seed)
        if obs.phase == "vote":
            others = [p for p in obs.players if p != obs.player]
            return others[rng.integers(len(others))]
        if obs.phase == "guess":
            return obs.candidates[rng.integers(len(obs.candidates))]
        table = self.table(obs)
        return table.clues[rng.integers(len(table.clues))]
