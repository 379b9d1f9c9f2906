"""What the engines show an agent and what they accept back.

An agent is a plain callable ``agent(observation) -> str`` (TextArena style): the engine
asks it for a clue, a vote, a guess, a description or a reflection, and parses the answer
strictly. An answer that does not parse is an *invalid move*, recorded in the transcript
with its reason; it never raises. Observations carry a ``seed`` drawn by the engine for
that decision, so a scripted agent that draws its randomness from it is reproducible
whatever order games are played in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

ChameleonPhase = Literal["clue", "reflect", "vote", "guess"]
SpyPhase = Literal["describe", "reflect", "vote"]


@dataclass(frozen=True, slots=True)
class ChameleonObservation:
    """One decision of a Chameleon player."""

    phase: ChameleonPhase
    player: str
    role: Literal["chameleon", "non-chameleon"]
    category: str
    candidates: tuple[str, ...]
    secret: str | None
    """The secret; ``None`` for the chameleon."""
    players: tuple[str, ...]
    """Every player, in speaking order."""
    clues: tuple[tuple[str, str], ...]
    """``(player, clue)`` said so far, in order."""
    seed: int
    accused: str | None = None
    """In the guess phase: who was accused (the chameleon itself)."""


@dataclass(frozen=True, slots=True)
class Statement:
    player: str
    round: int
    text: str


@dataclass(frozen=True, slots=True)
class SpyObservation:
    """One decision of a SpyGame player."""

    phase: SpyPhase
    player: str
    word: str
    role: Literal["civilian", "spy"] | None
    """The player's role when the variant tells it (MAgIC / CK-Arena), else ``None``."""
    round: int
    players: tuple[str, ...]
    """Every player, in speaking order."""
    alive: tuple[str, ...]
    statements: tuple[Statement, ...]
    eliminated: tuple[tuple[str, int], ...]
    """``(player, round)`` of each elimination so far."""
    seed: int
    votes: tuple[tuple[str, str, int], ...] = field(default=())
    """``(voter, target, round)`` of earlier rounds."""
    category: str | None = None
    """The category the pair was drawn from, when known (never the other word)."""


Observation = ChameleonObservation | SpyObservation


@runtime_checkable
class Agent(Protocol):
    """Anything that answers an observation with text (an agent of one game kind takes that
    game's observation: :class:`ChameleonObservation` or :class:`SpyObservation`)."""

    def __call__(self, obs: Any, /) -> str: ...


def agent_name(agent: object) -> str:
    """The name a transcript records for an agent (its ``name`` attribute, else its type)."""
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else type(agent).__name__


@dataclass(frozen=True, slots=True)
class InvalidMove:
    """A move the engine could not accept: who, when, why, and what was said."""

    player: str
    phase: str
    reason: str
    output: str
    round: int | None = None

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {
            "player": self.player,
            "phase": self.phase,
            "reason": self.reason,
            "output": self.output[:200],
        }
        if self.round is not None:
            d["round"] = self.round
        return d


_ONE_WORD = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")
_EDGE = " \t\r\n\"'“”‘’.,;:!?()[]{}*`"


def parse_one_word(text: str) -> str | None:
    """The single word in ``text`` (quotes and end punctuation stripped), or None."""
    word = text.strip().strip(_EDGE)
    return word if _ONE_WORD.fullmatch(word) else None


def parse_player(text: str, allowed: tuple[str, ...] | list[str]) -> str | None:
    """The player id ``text`` names (exactly, ignoring case and edge punctuation), or None."""
    said = text.strip().strip(_EDGE).casefold()
    for pid in allowed:
        if pid.casefold() == said:
            return pid
    return None


def parse_candidate(text: str, candidates: tuple[str, ...]) -> str | None:
    """The candidate ``text`` names (ignoring case and edge punctuation), or None."""
    said = " ".join(text.strip().strip(_EDGE).casefold().split())
    for w in candidates:
        if " ".join(w.casefold().split()) == said:
            return w
    return None
