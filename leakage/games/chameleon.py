"""The Chameleon engine (Karabag & Topcu): one word per player, simultaneous votes, a guess.

A game: N players (default 4) in a random speaking order, one of them the chameleon; K
candidate words from a card (default 16, all of a shipped card), one the secret, which every
player but the chameleon is told. Each player says one word in turn; then all vote at once
for another player; the most-voted is accused, a tie broken by a randomly drawn player (see
``_voting.tally``). An accused chameleon gets one guess at the secret. Outcomes:

- ``chameleon_unidentified``: a non-chameleon was accused; the chameleon wins;
- ``chameleon_guessed``: the chameleon was caught and guessed the secret; it wins;
- ``chameleon_caught``: caught, wrong guess; the non-chameleons win;
- ``invalid``: a player answered something the rules do not allow (more than one word, a
  vote for itself or for nobody, a guess that is not a candidate; the secret itself only
  under ``forbid_secret``). The game stops there; ``meta.invalid`` says who, in which phase,
  why and what was said. Karabag & Topcu report about 5% such games with LLM players; they
  are counted, not raised.

Saying the secret is allowed by default, as in Karabag & Topcu (section 3.2: "they can
directly say the secret word not to be misidentified, but it may result in the chameleon
inferring the secret word"); ``ChameleonConfig(forbid_secret=True)`` makes it an invalid
move instead (the house rule of some tables, and this engine's rule before).

**Reflections** (``ChameleonConfig(reflect=True)``; off by default, so every game, seed and
transcript is as before): after each clue every other player reflects, as in SpyGame after
each statement (Gu et al.; MAgIC's Chameleon players state "Player 1 is more suspicious,
because ..." and what each other player thinks before they act). A reflection is the
SpyGame JSON object (:mod:`leakage.games._reflection`): ``{"self": "chameleon" |
"non-chameleon", "suspect": <player id>}`` (``suspect``: the player it would vote for now; the
chameleon knows who the chameleon is, so its suspect is whom it points at), optionally
``"thinks"``, ``"beliefs"`` (``{player: P(chameleon)}``), ``"others_beliefs"``, and
``"secret_guess"`` (a candidate) and ``"secret_beliefs"`` (``{candidate: P(secret)}``), the
chameleon's view of the secret. Each is kept in ``meta.reflections`` with ``round`` (1),
``after_turn`` (the index in ``turns`` of the clue it follows) and ``player``; an invalid one
is dropped and listed in ``meta.invalid_moves`` (the game goes on), as SpyGame does.

The game loop is ``reset(seed)``, ``observation`` and ``step(text)``; :func:`play_chameleon`
runs it with one agent per role. Everything random comes from ``numpy.random.default_rng``
of the game's seed, so the same seed and the same agent answers give the same transcript.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from leakage.games._cards import Card, load_cards
from leakage.games._loop import check_roles, run
from leakage.games._reflection import candidate, candidate_probabilities, read_reflection
from leakage.games._types import (
    Agent,
    ChameleonObservation,
    InvalidMove,
    parse_candidate,
    parse_one_word,
    parse_player,
)
from leakage.games._voting import tally
from leakage.transcripts import ChameleonTranscript

ENGINE = "leakage.games.chameleon/1"
ROLES = ("non-chameleon", "chameleon")


@dataclass(frozen=True)
class ChameleonConfig:
    """Rules of a Chameleon game."""

    n_players: int = 4
    n_candidates: int = 16
    """K: the card's words are sampled down to this many (all of them when the card has K)."""
    forbid_secret: bool = False
    """Saying the secret word itself (whoever says it) is an invalid move. Off by default:
    Karabag & Topcu (section 3.2) let a player say it, at the cost of telling the chameleon."""
    reflect: bool = False
    """After each clue every other player reflects (states its beliefs; see the module doc).
    Off by default: the rules of Karabag & Topcu have no such phase."""

    def __post_init__(self) -> None:
        if self.n_players < 3:
            raise ValueError(f"The Chameleon needs at least 3 players, got {self.n_players}")
        if self.n_candidates < 2:
            raise ValueError(f"need at least 2 candidates, got {self.n_candidates}")


class ChameleonGame:
    """One game at a time: ``reset(seed)``, then ``step(answer)`` until ``done``."""

    def __init__(
        self,
        config: ChameleonConfig = ChameleonConfig(),
        *,
        cards: Sequence[Card] | None = None,
        agents: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.cards = tuple(cards) if cards is not None else load_cards()
        usable = [c for c in self.cards if len(c.words) >= config.n_candidates]
        if not usable:
            raise ValueError(f"no card has {config.n_candidates} words")
        self._usable = usable
        self._agent_names = dict(agents or {})
        self.done = True

    # -- the loop ------------------------------------------------------------------

    def reset(self, seed: int, *, card: Card | None = None, game_id: str | None = None) -> None:
        rng = np.random.default_rng(seed)
        self._rng = rng
        self.seed = seed
        self.game_id = game_id or f"chameleon-{seed}"
        card = card if card is not None else self._usable[int(rng.integers(len(self._usable)))]
        k = self.config.n_candidates
        words = list(card.words)
        if len(words) > k:
            words = [words[i] for i in sorted(rng.choice(len(words), size=k, replace=False))]
        self.category = card.category
        self.candidates = tuple(words)
        self.secret = self.candidates[int(rng.integers(k))]
        n = self.config.n_players
        self.players = tuple(f"p{i + 1}" for i in rng.permutation(n))
        self.chameleon = self.players[int(rng.integers(n))]
        self.clues: list[tuple[str, str]] = []
        self.votes: dict[str, str] = {}
        self.vote_info: dict[str, Any] = {}
        self.accused: str | None = None
        self.guess: str | None = None
        self.invalid: InvalidMove | None = None
        self.reflections: list[dict[str, Any]] = []
        self.invalid_moves: list[dict[str, object]] = []
        self._reflecting: list[str] = []
        """The players still to reflect on the last clue (in speaking order)."""
        self.phase = "clue"
        self._cursor = 0
        self._pending: ChameleonObservation | None = None
        self.done = False

    def role(self, player: str) -> str:
        return "chameleon" if player == self.chameleon else "non-chameleon"

    @property
    def current_player(self) -> str:
        if self.phase == "guess":
            return self.chameleon
        if self.phase == "reflect":
            return self._reflecting[0]
        return self.players[self._cursor]

    @property
    def observation(self) -> ChameleonObservation:
        """What the current player sees (the same object until the next ``step``: reading
        it twice does not draw a second seed)."""
        if self._pending is None:
            self._pending = self._observe()
        return self._pending

    def _observe(self) -> ChameleonObservation:
        player = self.current_player
        return ChameleonObservation(
            phase=self.phase,  # type: ignore[arg-type]
            player=player,
            role=self.role(player),  # type: ignore[arg-type]
            category=self.category,
            candidates=self.candidates,
            secret=None if player == self.chameleon else self.secret,
            players=self.players,
            clues=tuple(self.clues),
            seed=int(self._rng.integers(2**31)),
            accused=self.accused if self.phase == "guess" else None,
        )

    def step(self, answer: str) -> bool:
        """Apply the current player's answer; True when the game is over."""
        if self.done:
            raise RuntimeError("the game is over; call reset(seed) to start another")
        self._pending = None
        player = self.current_player
        if self.phase == "clue":
            word = parse_one_word(answer)
            if word is None:
                return self._invalid(player, answer, "not exactly one word")
            if self.config.forbid_secret and parse_candidate(word, (self.secret,)) is not None:
                return self._invalid(player, answer, "said the secret word")
            self.clues.append((player, word))
            if self.config.reflect:
                self._reflecting = [p for p in self.players if p != player]
                self.phase = "reflect"
            else:
                self._advance("vote")
        elif self.phase == "reflect":
            self._reflection(player, answer)
            self._reflecting.pop(0)
            if not self._reflecting:
                self.phase = "clue"
                self._advance("vote")
        elif self.phase == "vote":
            others = tuple(p for p in self.players if p != player)
            target = parse_player(answer, others)
            if target is None:
                why = "voted for itself" if parse_player(answer, (player,)) else "no player named"
                return self._invalid(player, answer, why)
            self.votes[player] = target
            self._advance(None)
            if self.phase == "tally":
                self._tally()
        else:
            guess = parse_candidate(answer, self.candidates)
            if guess is None:
                return self._invalid(player, answer, "the guess is not a candidate")
            self.guess = guess
            self.done = True
        return self.done

    def _reflection(self, player: str, answer: str) -> None:
        entry, why = read_reflection(
            answer,
            player=player,
            players=self.players,
            roles=ROLES,
            fields=[
                ("secret_guess", lambda v: candidate(v, self.candidates)),
                ("secret_beliefs", lambda v: candidate_probabilities(v, self.candidates)),
            ],
        )
        if entry is None:
            move = InvalidMove(player, "reflect", why or "not a reflection object", answer, 1)
            self.invalid_moves.append(move.as_dict())
            return
        self.reflections.append(
            {"round": 1, "after_turn": len(self.clues) - 1, "player": player, **entry}
        )

    def _advance(self, next_phase: str | None) -> None:
        self._cursor += 1
        if self._cursor == len(self.players):
            self._cursor = 0
            self.phase = next_phase or "tally"

    def _tally(self) -> None:
        accused, info = tally(self.votes, self.players, self._rng)
        self.accused, self.vote_info = accused, info
        if accused == self.chameleon:
            self.phase = "guess"
        else:
            self.done = True

    def _invalid(self, player: str, answer: str, reason: str) -> bool:
        self.invalid = InvalidMove(player, self.phase, reason, answer)
        self.done = True
        return True

    # -- results -------------------------------------------------------------------

    @property
    def outcome(self) -> str:
        if self.invalid is not None:
            return "invalid"
        if self.accused != self.chameleon:
            return "chameleon_unidentified"
        return "chameleon_guessed" if self.guess == self.secret else "chameleon_caught"

    def transcript(self, meta: Mapping[str, Any] | None = None) -> ChameleonTranscript:
        """The game so far as ``leakage.transcript/1``; outcome and tally in ``meta``."""
        outcome = self.outcome
        winner = {"chameleon_caught": "non-chameleon", "invalid": None}.get(outcome, "chameleon")
        data: dict[str, Any] = {
            "engine": ENGINE,
            "seed": self.seed,
            "outcome": outcome,
            "winner_role": winner,
            "accused": self.accused,
            "caught": self.accused == self.chameleon,
            "speaking_order": list(self.players),
            "tally": self.vote_info,
            "n_players": self.config.n_players,
            "n_candidates": self.config.n_candidates,
            "forbid_secret": self.config.forbid_secret,
        }
        if self.config.reflect:
            data["reflect"] = "statement"
            data["reflections"] = self.reflections
            data["invalid_moves"] = self.invalid_moves
        if self.invalid is not None:
            data["invalid"] = self.invalid.as_dict()
        data.update(meta or {})
        names = self._agent_names
        return ChameleonTranscript.model_construct(
            game="chameleon",
            id=self.game_id,
            players=[_player(p, self.role(p), names.get(self.role(p))) for p in self.players],
            turns=[_turn(p, text) for p, text in self.clues],
            votes=[_vote(v, t) for v, t in self.votes.items()],
            meta=data,
            category=self.category,
            candidates=list(self.candidates),
            secret=self.secret,
            chameleon_guess=self.guess,
        )


def _player(pid: str, role: str, agent: str | None) -> Any:
    from leakage.transcripts import Player

    return Player.model_construct(id=pid, role=role, agent=agent, word=None)


def _turn(player: str, text: str, rnd: int | None = None) -> Any:
    from leakage.transcripts import Turn

    return Turn.model_construct(player=player, text=text, round=rnd)


def _vote(voter: str, target: str, rnd: int | None = None) -> Any:
    from leakage.transcripts import Vote

    return Vote.model_construct(voter=voter, target=target, round=rnd)


def play_chameleon(
    agents: Mapping[str, Agent],
    *,
    seed: int,
    config: ChameleonConfig = ChameleonConfig(),
    cards: Sequence[Card] | None = None,
    card: Card | None = None,
    game: ChameleonGame | None = None,
    game_id: str | None = None,
) -> ChameleonTranscript:
    """Play one game with one agent per role (``non-chameleon``, ``chameleon``)."""
    names = check_roles(agents, ROLES)
    if game is None:
        game = ChameleonGame(config, cards=cards, agents=names)
    game.reset(seed, card=card, game_id=game_id)
    run(game, agents)
    return game.transcript()
