"""The transcript format ``leakage.transcript/1``.

One JSON object per game (JSONL for many). ``game`` selects the variant: ``chameleon`` or
``spygame``. Inputs forbid unknown fields so that a typo is an error, not a silent default;
free-form data goes in ``meta``.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator
from pydantic_core import PydanticCustomError

TRANSCRIPT_FORMAT: Final = "leakage.transcript/1"

MAX_META_DEPTH: Final = 32
"""How deeply ``meta`` may nest (``meta`` itself is level 1, each object or array inside it
one more). Reports echo ``meta``, and serialisers stop at a recursion limit (pydantic's is
255), so a deeper ``meta`` would fail after the game was scored."""

ChameleonRole = Literal["chameleon", "non-chameleon"]
SpyGameRole = Literal["civilian", "spy"]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)


class Player(_Input):
    id: str = Field(min_length=1)
    """Player id, unique within the game (a string, even when the source used numbers)."""
    role: Literal["chameleon", "non-chameleon", "civilian", "spy"]
    """``chameleon`` / ``non-chameleon`` in The Chameleon, ``civilian`` / ``spy`` in SpyGame."""
    agent: str | None = None
    """Who played: a model name, ``human``, a scripted agent's name."""
    word: str | None = None
    """The word this player was given (SpyGame; the chameleon has none)."""


class Turn(_Input):
    player: str
    """Id of the speaking player."""
    text: str
    """What the player said: one word (Chameleon) or a short description (SpyGame)."""
    round: int | None = Field(default=None, ge=1)
    """Round number, from 1, when the game has rounds."""


class Vote(_Input):
    voter: str
    target: str
    round: int | None = Field(default=None, ge=1)


class Elimination(_Input):
    player: str
    round: int = Field(ge=1)


class SpyWords(_Input):
    civilian: str = Field(min_length=1)
    """The word the civilians share."""
    spy: str = Field(min_length=1)
    """The spy's word."""

    @property
    def key(self) -> str:
        """The pair's join key (:func:`pair_key`)."""
        return pair_key(self.civilian, self.spy)


def pair_key(a: str, b: str) -> str:
    """The join key of a word pair, order-free and case-folded: how a game's pair meets a
    splits file's row (``leakage batch --difficulty``, ``leakage report --by difficulty``)."""
    x, y = sorted((a.strip().casefold(), b.strip().casefold()))
    return f"{x}|{y}"


class _TranscriptBase(_Input):
    format: Literal["leakage.transcript/1"] = TRANSCRIPT_FORMAT
    """Format and version tag; always ``leakage.transcript/1``."""
    id: str = Field(min_length=1)
    """Game id, unique within a batch."""
    players: list[Player] = Field(min_length=2)
    turns: list[Turn] = Field(default_factory=list)
    """Turns in the order spoken."""
    votes: list[Vote] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free-form data: source file, models, matchup, difficulty, seeds."""

    # A ClassVar, not a pydantic private attribute: those are initialised on every instance,
    # which cost a quarter of the validation time of a small game.
    _roles: ClassVar[tuple[str, ...]] = ()
    game: str

    def player(self, player_id: str) -> Player:
        for p in self.players:
            if p.id == player_id:
                return p
        raise KeyError(player_id)

    def _problems(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        ids = [p.id for p in self.players]
        known = set(ids)
        if len(known) < len(ids):  # (a Counter only when there is something to count)
            for pid, n in Counter(ids).items():
                if n > 1:
                    problems.append(("players", f"player id {pid!r} appears {n} times"))
        for i, p in enumerate(self.players):
            if p.role not in self._roles:
                problems.append(
                    (
                        f"players[{i}].role",
                        f"role {p.role!r} does not belong in a {self.game} game "
                        f"(use one of {', '.join(self._roles)})",
                    )
                )
        for i, t in enumerate(self.turns):
            if t.player not in known:
                problems.append((f"turns[{i}].player", f"unknown player {t.player!r}"))
            if not t.text.strip():
                problems.append((f"turns[{i}].text", "empty text"))
        if self.meta:
            problems.extend(meta_problems(self.meta))
        for i, v in enumerate(self.votes):
            if v.voter not in known:
                problems.append((f"votes[{i}].voter", f"unknown player {v.voter!r}"))
            if v.target not in known:
                problems.append((f"votes[{i}].target", f"unknown player {v.target!r}"))
        return problems

    @model_validator(mode="after")
    def _consistent(self) -> _TranscriptBase:
        problems = self._problems()
        if problems:
            raise PydanticCustomError(
                "inconsistent_transcript",
                "{problems}",
                {"problems": "; ".join(f"{f}: {m}" for f, m in problems)},
            )
        return self


_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _sub_path(path: str, key: object) -> str:
    """``meta.a[3]``; a key that is not plain is quoted, with the separators of the problems
    list (``;`` and ``:``) escaped."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if isinstance(key, str) and _PLAIN_KEY.match(key):
        return f"{path}.{key}"
    quoted = json.dumps(str(key)[:64]).replace(";", "\\u003b").replace(":", "\\u003a")
    return f"{path}[{quoted}]"


def meta_problems(meta: dict[str, Any], *, prefix: str = "meta") -> list[tuple[str, str]]:
    """What makes ``meta`` unfit for a JSON report: nesting deeper than ``MAX_META_DEPTH``
    and numbers JSON does not have (NaN, Infinity, which Python's ``json`` reads and
    writes). One ``(field, message)`` per problem, at most one per kind; walked without
    recursion, so any depth is safe to check."""
    problems: list[tuple[str, str]] = []
    too_deep = non_finite = False
    stack: list[tuple[str, Any, int]] = [(prefix, meta, 1)]
    while stack and not (too_deep and non_finite):
        path, value, depth = stack.pop()
        if isinstance(value, float) and not math.isfinite(value) and not non_finite:
            non_finite = True
            name = "NaN" if math.isnan(value) else ("-" if value < 0 else "") + "Infinity"
            problems.append((path, f"{name} is not a JSON number: send a finite number"))
        elif isinstance(value, dict | list):
            if depth > MAX_META_DEPTH:
                if not too_deep:
                    too_deep = True
                    problems.append(
                        (path, f"nested more than {MAX_META_DEPTH} levels deep in meta")
                    )
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in items:
                stack.append((_sub_path(path, key), item, depth + 1))
    return problems


def _folded(words: list[str]) -> list[str]:
    """The words as they are compared: stripped and case-folded (empty for a blank word)."""
    return [w.strip().casefold() for w in words]


def _duplicates(words: list[str], folded: list[str]) -> list[str]:
    """The words whose folded form (``folded``, from :func:`_folded`) appears more than once."""
    if len(set(folded)) == len(folded):  # the usual case, without a Counter
        return []
    counts = Counter(folded)
    return [w for w, f in zip(words, folded, strict=True) if counts[f] > 1]


class ChameleonTranscript(_TranscriptBase):
    """A game of The Chameleon: one chameleon, K candidate words, one secret."""

    game: Literal["chameleon"]
    category: str = Field(min_length=1)
    """The category on the card, e.g. ``Sports``."""
    candidates: list[str] = Field(min_length=2)
    """The K words on the card (K = 16 in the literature)."""
    secret: str | None = None
    """The secret word; without it a report has no accuracy figures."""
    chameleon_guess: str | None = None
    """The chameleon's guess at the secret, when it was caught and guessed."""

    _roles: ClassVar[tuple[str, ...]] = ("chameleon", "non-chameleon")

    def _problems(self) -> list[tuple[str, str]]:
        problems = super()._problems()
        folded = _folded(self.candidates)
        for i, f in enumerate(folded):
            if not f:
                problems.append((f"candidates[{i}]", "empty candidate"))
        dup = sorted(set(_duplicates(self.candidates, folded)))
        if dup:
            problems.append(("candidates", f"duplicate candidates: {', '.join(dup)}"))
        if self.secret is not None and self.secret not in self.candidates:
            problems.append(("secret", f"secret {self.secret!r} is not among the candidates"))
        if not any(p.role == "chameleon" for p in self.players):
            problems.append(("players", "no player has role 'chameleon'"))
        return problems

    def chameleons(self) -> set[str]:
        return {p.id for p in self.players if p.role == "chameleon"}


class SpyGameTranscript(_TranscriptBase):
    """A game of SpyGame / Undercover: civilians share a word, one or more spies hold another."""

    game: Literal["spygame"]
    words: SpyWords
    distractors: list[str] = Field(default_factory=list)
    """Extra candidate words for the speaker's-word posterior, besides the pair."""
    eliminations: list[Elimination] = Field(default_factory=list)

    _roles: ClassVar[tuple[str, ...]] = ("civilian", "spy")

    def _problems(self) -> list[tuple[str, str]]:
        problems = super()._problems()
        if self.words.civilian.strip().casefold() == self.words.spy.strip().casefold():
            problems.append(("words", "the civilian and spy words are the same"))
        if not any(p.role == "spy" for p in self.players):
            problems.append(("players", "no player has role 'spy'"))
        for i, p in enumerate(self.players):
            expected = self.words.spy if p.role == "spy" else self.words.civilian
            if p.word is not None and p.word != expected:
                problems.append(
                    (f"players[{i}].word", f"{p.role} holds {p.word!r}, expected {expected!r}")
                )
        dup = sorted(set(_duplicates(self.candidates, _folded(self.candidates))))
        if dup:
            problems.append(("distractors", f"duplicate candidates: {', '.join(dup)}"))
        known = {p.id for p in self.players}
        for i, e in enumerate(self.eliminations):
            if e.player not in known:
                problems.append((f"eliminations[{i}].player", f"unknown player {e.player!r}"))
        return problems

    @property
    def candidates(self) -> list[str]:
        """The speaker's-word candidates: the pair, then any distractors."""
        return [self.words.civilian, self.words.spy, *self.distractors]

    def spies(self) -> set[str]:
        return {p.id for p in self.players if p.role == "spy"}

    def word_of(self, player_id: str) -> str:
        p = self.player(player_id)
        return self.words.spy if p.role == "spy" else self.words.civilian


Transcript = Annotated[ChameleonTranscript | SpyGameTranscript, Field(discriminator="game")]
"""Either kind of game, told apart by its ``game`` field."""

TRANSCRIPT_ADAPTER: TypeAdapter[ChameleonTranscript | SpyGameTranscript] = TypeAdapter(Transcript)


def transcript_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``leakage.transcript/1``."""
    schema = TRANSCRIPT_ADAPTER.json_schema()
    schema["$id"] = "https://leakage.invalid/schemas/leakage.transcript/1"
    schema["title"] = TRANSCRIPT_FORMAT
    return schema
