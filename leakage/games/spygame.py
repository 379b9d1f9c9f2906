"""The SpyGame engine (Gu et al.), with the MAgIC / CK-Arena Undercover variant as options.

Default (Gu et al.): 5 players, 4 civilians sharing a word and 1 spy holding a related word,
**no one told its role**. Each round: every living player describes its word in a short
statement (in speaking order); after each statement every other living player *reflects*
(states what it believes it is and whom it suspects: Gu et al., section 3, "After each player
finishes speaking, the other players update their beliefs about their own role and the roles
of others"); then all vote at once; the most-voted player is eliminated (a tie eliminates
nobody, as in the SpyGame logs of Liang et al.). Civilians win when every spy is out within
``max_rounds`` (default 6); spies win when they survive the last round or when they are no
fewer than the living civilians. ``reflect_after="round"`` asks for one reflection per
living player per round instead, after all descriptions (the engine's schedule before);
``reflect=False`` asks for none.

Variant (MAgIC, CK-Arena Undercover): ``roles_known=True`` tells each player its role, and
``n_spies=2`` (CK-Arena plays 6 players with 2 undercover).

Moves are parsed strictly. A description must be one line of 1 to ``max_words`` words and
must not contain the speaker's own word; an invalid description ends the game as
``invalid`` (``meta.invalid``). An invalid vote is an abstention and an invalid reflection
is dropped (the game goes on; both are listed in ``meta.invalid_moves``), which is how the
CK-Arena logs treat unparseable votes. A reflection is JSON:
``{"self": "civilian" | "spy", "suspect": "<player id>"}``, optionally with
``"other_word"`` (the player's guess of the other group's word), ``"thinks"`` (``{other
player: whom I think that player suspects}``, living players; MAgIC's second-order analysis,
which its Reasoning metric reads), ``"beliefs"`` (``{living player: P(that player is a
spy)}``, the reflecting player included) and ``"others_beliefs"`` (``{other living player:
{living player: P(spy)}}``, what I think each other player believes). A malformed optional
field makes the reflection invalid (the reason names the field). The engine records each
reflection with its ``round`` and ``after_turn``, the index in the transcript's ``turns`` of
the statement it follows.

Words come from a card: the two words of a pair are drawn from one card (related words of
one category, sun / moon style); or pass ``pair=(civilian, spy)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from leakage.games._cards import Card, load_cards
from leakage.games._loop import check_roles, run
from leakage.games._reflection import read_reflection
from leakage.games._types import (
    Agent,
    InvalidMove,
    SpyObservation,
    Statement,
    parse_player,
)
from leakage.games._voting import tally
from leakage.games.agents._association import fold
from leakage.transcripts import SpyGameTranscript

ENGINE = "leakage.games.spygame/1"
ROLES = ("civilian", "spy")


@dataclass(frozen=True)
class SpyGameConfig:
    n_players: int = 5
    n_spies: int = 1
    max_rounds: int = 6
    roles_known: bool = False
    """Tell each player its role (MAgIC / CK-Arena); Gu et al. do not."""
    reflect: bool = True
    """Ask for reflections before the votes (Gu et al.)."""
    reflect_after: Literal["statement", "round"] = "statement"
    """When: after every statement, every living player but its speaker (Gu et al.,
    section 3), or once a round, every living player after all descriptions."""
    max_words: int = 30

    def __post_init__(self) -> None:
        if not 1 <= self.n_spies < self.n_players - self.n_spies:
            raise ValueError(
                f"{self.n_spies} spies among {self.n_players} players: spies must be fewer "
                "than civilians"
            )
        if self.max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        if self.reflect_after not in ("statement", "round"):
            raise ValueError(
                f"reflect_after must be 'statement' or 'round', not {self.reflect_after!r}"
            )


class SpyGame:
    """One game at a time: ``reset(seed)``, then ``step(answer)`` until ``done``."""

    def __init__(
        self,
        config: SpyGameConfig = SpyGameConfig(),
        *,
        cards: Sequence[Card] | None = None,
        agents: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.cards = tuple(cards) if cards is not None else load_cards()
        self._agent_names = dict(agents or {})
        self.done = True

    def reset(
        self,
        seed: int,
        *,
        pair: tuple[str, str] | None = None,
        category: str | None = None,
        game_id: str | None = None,
    ) -> None:
        rng = np.random.default_rng(seed)
        self._rng, self.seed = rng, seed
        self.game_id = game_id or f"spygame-{seed}"
        if pair is None:
            card = self.cards[int(rng.integers(len(self.cards)))]
            i, j = rng.choice(len(card.words), size=2, replace=False)
            pair, category = (card.words[i], card.words[j]), card.category
        self.words = pair
        self.category = category
        n = self.config.n_players
        self.players = tuple(f"p{i + 1}" for i in rng.permutation(n))
        spies = rng.choice(n, size=self.config.n_spies, replace=False)
        self.spies = frozenset(self.players[int(i)] for i in spies)
        self.alive = list(self.players)
        self.round = 1
        self.statements: list[Statement] = []
        self.votes: list[tuple[str, str, int]] = []
        self._round_votes: dict[str, str] = {}
        self.eliminations: list[tuple[str, int]] = []
        self.reflections: list[dict[str, Any]] = []
        self.tallies: list[dict[str, Any]] = []
        self.invalid: InvalidMove | None = None
        self.invalid_moves: list[dict[str, object]] = []
        self._pending: SpyObservation | None = None
        self._schedule: list[tuple[str, str]] = []
        self._plan_round()
        self.done = False

    def _plan_round(self) -> None:
        """The round's moves in order, ``(phase, player)``: who describes, reflects, votes."""
        alive, cfg = self.alive, self.config
        plan: list[tuple[str, str]] = []
        for speaker in alive:
            plan.append(("describe", speaker))
            if cfg.reflect and cfg.reflect_after == "statement":
                plan += [("reflect", q) for q in alive if q != speaker]
        if cfg.reflect and cfg.reflect_after == "round":
            plan += [("reflect", q) for q in alive]
        plan += [("vote", q) for q in alive]
        self._schedule = plan

    @property
    def phase(self) -> str:
        """The phase of the next move (``describe``, ``reflect`` or ``vote``)."""
        return self._schedule[0][0] if self._schedule else "tally"

    def role(self, player: str) -> str:
        return "spy" if player in self.spies else "civilian"

    def word(self, player: str) -> str:
        return self.words[1] if player in self.spies else self.words[0]

    @property
    def current_player(self) -> str:
        return self._schedule[0][1]

    @property
    def observation(self) -> SpyObservation:
        """What the current player sees (the same object until the next ``step``: reading
        it twice does not draw a second seed)."""
        if self._pending is None:
            self._pending = self._observe()
        return self._pending

    def _observe(self) -> SpyObservation:
        p = self.current_player
        return SpyObservation(
            phase=self.phase,  # type: ignore[arg-type]
            player=p,
            word=self.word(p),
            role=self.role(p) if self.config.roles_known else None,  # type: ignore[arg-type]
            round=self.round,
            players=self.players,
            alive=tuple(self.alive),
            statements=tuple(self.statements),
            eliminated=tuple(self.eliminations),
            seed=int(self._rng.integers(2**31)),
            votes=tuple(self.votes),
            category=self.category,
        )

    def step(self, answer: str) -> bool:
        if self.done:
            raise RuntimeError("the game is over; call reset(seed) to start another")
        self._pending = None
        phase, p = self._schedule.pop(0)
        if phase == "describe":
            text = " ".join(answer.split())
            why = self._bad_description(answer, text, p)
            if why:
                self.invalid = InvalidMove(p, "describe", why, answer, self.round)
                self.done = True
                return True
            self.statements.append(Statement(p, self.round, text))
        elif phase == "reflect":
            self._reflection(p, answer)
        else:
            others = tuple(q for q in self.alive if q != p)
            target = parse_player(answer, others)
            if target is None:
                self._bad(p, "vote", answer, "no living player named (abstention)")
            else:
                self._round_votes[p] = target
                self.votes.append((p, target, self.round))
            if not self._schedule:
                self._tally()
        return self.done

    def _bad_description(self, raw: str, text: str, player: str) -> str | None:
        if not text:
            return "empty description"
        if "\n" in raw.strip():
            return "more than one line"
        if len(text.split()) > self.config.max_words:
            return f"more than {self.config.max_words} words"
        if f" {fold(self.word(player))} " in f" {fold(text)} ":
            return "says its own word"
        return None

    def _reflection(self, player: str, answer: str) -> None:
        entry, why = read_reflection(
            answer,
            player=player,
            players=self.alive,
            roles=ROLES,
            fields=[("other_word", lambda v: (v if isinstance(v, str) else None, None))],
        )
        if entry is None:
            self._bad(player, "reflect", answer, why or "not a reflection object")
            return
        self.reflections.append(
            {"round": self.round, "after_turn": len(self.statements) - 1, "player": player,
             **entry}
        )  # fmt: skip

    def _bad(self, player: str, phase: str, answer: str, reason: str) -> None:
        self.invalid_moves.append(InvalidMove(player, phase, reason, answer, self.round).as_dict())

    def _tally(self) -> None:
        out, info = tally(self._round_votes, self.alive, self._rng)
        tied = info.get("tied")
        if isinstance(tied, list) and len(tied) > 1:
            out = None  # a tie eliminates nobody
        self.tallies.append({"round": self.round, **info, "eliminated": out})
        self._round_votes = {}
        if out is not None:
            self.alive.remove(out)
            self.eliminations.append((out, self.round))
        spies = sum(1 for q in self.alive if q in self.spies)
        if spies == 0 or spies >= len(self.alive) - spies or self.round == self.config.max_rounds:
            self.done = True
            return
        self.round += 1
        self._plan_round()

    @property
    def outcome(self) -> str:
        if self.invalid is not None:
            return "invalid"
        spies = sum(1 for q in self.alive if q in self.spies)
        return "civilians_win" if spies == 0 else "spies_win"

    def transcript(self, meta: Mapping[str, Any] | None = None) -> SpyGameTranscript:
        outcome = self.outcome
        winner = {"civilians_win": "civilian", "spies_win": "spy"}.get(outcome)
        data: dict[str, Any] = {
            "engine": ENGINE,
            "seed": self.seed,
            "outcome": outcome,
            "winner_role": winner,
            "rounds_played": self.round,
            "max_rounds": self.config.max_rounds,
            "roles_known": self.config.roles_known,
            "speaking_order": list(self.players),
            "category": self.category,
            "reflections": self.reflections,
            "tallies": self.tallies,
            "invalid_moves": self.invalid_moves,
        }
        if self.invalid is not None:
            data["invalid"] = self.invalid.as_dict()
        data.update(meta or {})
        names = self._agent_names
        return SpyGameTranscript.model_validate(
            {
                "game": "spygame",
                "id": self.game_id,
                "players": [
                    {"id": p, "role": self.role(p), "agent": names.get(self.role(p)),
                     "word": self.word(p)}
                    for p in self.players
                ],
                "words": {"civilian": self.words[0], "spy": self.words[1]},
                "turns": [{"player": s.player, "text": s.text, "round": s.round}
                          for s in self.statements],
                "votes": [{"voter": v, "target": t, "round": r} for v, t, r in self.votes],
                "eliminations": [{"player": p, "round": r} for p, r in self.eliminations],
                "meta": data,
            }
        )  # fmt: skip


def play_spygame(
    agents: Mapping[str, Agent],
    *,
    seed: int,
    config: SpyGameConfig = SpyGameConfig(),
    cards: Sequence[Card] | None = None,
    pair: tuple[str, str] | None = None,
    game: SpyGame | None = None,
    game_id: str | None = None,
) -> SpyGameTranscript:
    """Play one game with one agent per role (``civilian``, ``spy``)."""
    names = check_roles(agents, ROLES)
    if game is None:
        game = SpyGame(config, cards=cards, agents=names)
    game.reset(seed, pair=pair, game_id=game_id)
    run(game, agents)
    return game.transcript()
