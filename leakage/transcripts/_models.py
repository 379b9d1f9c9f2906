"""The transcript format ``leakage.transcript/1``.

One JSON object per game (JSONL for many). ``game`` selects the variant: ``chameleon`` or
``spygame``. Inputs forbid unknown fields so that a typo is an error, not a silent default;
free-form data goes in ``meta``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterator
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, TypeAdapter, model_validator
from pydantic_core import PydanticCustomError

from leakage.transcripts._json import json_problems, surrogate_problem

TRANSCRIPT_FORMAT: Final = "leakage.transcript/1"

MAX_META_DEPTH: Final = 32
"""How deeply ``meta`` may nest (``meta`` itself is level 1, each object or array inside it
one more). Reports echo ``meta``, and serialisers stop at a recursion limit (pydantic's is
255), so a deeper ``meta`` would fail after the game was scored."""

MAX_ROUND: Final = 2**53 - 1
"""The largest round number: the largest integer a JSON number holds exactly everywhere (and
well inside the step table's 64-bit integers)."""


def _not_a_bool(value: Any) -> Any:
    """``true`` is not round 1, nor is ``"1"``: pydantic's lax integers would read them so.
    ``1.0`` is round 1: JSON has one kind of number, JSON Schema's ``integer`` includes
    ``1.0``, and JSON writers differ on writing a whole float (``1.5`` is refused)."""
    if isinstance(value, bool):
        raise PydanticCustomError("int_type", "a round number from 1, not true or false")
    if isinstance(value, str | bytes):
        raise PydanticCustomError("int_type", "a round number from 1, as a number, not a string")
    return value


RoundNumber = Annotated[int, Field(ge=1, le=MAX_ROUND), BeforeValidator(_not_a_bool)]
"""A round number: an integer from 1 (never a boolean or a string; ``1.0`` is 1)."""

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
    round: RoundNumber | None = None
    """Round number, from 1, when the game has rounds."""


class Vote(_Input):
    voter: str
    target: str
    round: RoundNumber | None = None


class Elimination(_Input):
    player: str
    round: RoundNumber


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

    def _strings(self) -> list[str]:
        """Every string of the game (``meta`` aside): ``_texts`` without the field names."""
        out = [self.id]
        for p in self.players:
            out += (p.id, p.agent or "", p.word or "")
        for t in self.turns:
            out += (t.player, t.text)
        for v in self.votes:
            out += (v.voter, v.target)
        return out

    def _texts(self) -> Iterator[tuple[str, str]]:
        """``(field, text)`` of every string of the game (``meta`` aside)."""
        yield "id", self.id
        for i, p in enumerate(self.players):
            yield f"players[{i}].id", p.id
            if p.agent is not None:
                yield f"players[{i}].agent", p.agent
            if p.word is not None:
                yield f"players[{i}].word", p.word
        for i, t in enumerate(self.turns):
            yield f"turns[{i}].player", t.player
            yield f"turns[{i}].text", t.text
        for i, v in enumerate(self.votes):
            yield f"votes[{i}].voter", v.voter
            yield f"votes[{i}].target", v.target

    def _problems(self) -> list[tuple[str, str]]:
        problems: list[tuple[str, str]] = []
        if _UNFIT.search("".join(self._strings())):  # rare: then name the fields
            problems = [(f, why) for f, text in self._texts() if (why := text_problem(text))][:5]
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


_UNFIT = re.compile("[\x00\ud800-\udfff]")
"""What a game's text may not hold: NUL, and lone surrogates (no UTF-8 encoder writes them)."""


def text_problem(text: str) -> str | None:
    """What makes ``text`` unfit for a game (NUL, a lone surrogate), else None."""
    found = _UNFIT.search(text)
    if found is None:
        return None
    if found.group() == "\x00":
        return (
            f"NUL character (U+0000) at character {found.start()}: not allowed in a game's "
            "text (C libraries and indexes end a string there); remove it"
        )
    return surrogate_problem(text)


def meta_problems(meta: dict[str, Any], *, prefix: str = "meta") -> list[tuple[str, str]]:
    """What makes ``meta`` unfit for a JSON report: nesting deeper than ``MAX_META_DEPTH``,
    numbers JSON does not have (NaN, Infinity, which Python's ``json`` reads and writes),
    integers too long to write (more than ``MAX_INT_DIGITS`` digits), lone surrogates in a
    key or a string. One ``(field, message)`` per problem, at most one per kind; walked
    without recursion, so any depth is safe to check."""
    found = json_problems(meta, max_depth=MAX_META_DEPTH, limit=64)
    problems: list[tuple[str, str]] = []
    kinds: set[str] = set()
    for path, msg in found:
        kind = msg.removeprefix("key: ").split(" ", 1)[0]
        kind = "number" if "is not a JSON number" in msg else kind
        if kind in kinds:
            continue
        kinds.add(kind)
        if msg.startswith("nested more than"):
            msg = f"nested more than {MAX_META_DEPTH} levels deep in meta"
        problems.append((f"{prefix}{_after_root(path)}", msg))
    return problems


def _after_root(path: str) -> str:
    """A ``json_problems`` path (``a[3]``, ``["x y"]``) put after ``meta``."""
    return path if not path or path.startswith("[") else f".{path}"


def _fold(word: str) -> str:
    """A word as words are compared: NFKC (``Café`` composed or not, full-width letters,
    ligatures), stripped and case-folded (empty for a blank word)."""
    if not word.isascii():
        word = unicodedata.normalize("NFKC", word)
    return word.strip().casefold()


def _folded(words: list[str]) -> list[str]:
    """``_fold`` of each word (inlined: this runs on every game's candidates)."""
    if "".join(words).isascii():  # the usual case
        return [w.strip().casefold() for w in words]
    return [_fold(w) for w in words]


def _duplicated(words: list[str]) -> str:
    """The problem of candidates that are the same word (``_fold``); spelt out as code points
    too when they are not ASCII (``Café`` composed and not look the same)."""
    text = f"duplicate candidates: {', '.join(words)}"
    if not all(w.isascii() for w in words):
        text += f" ({', '.join(ascii(w) for w in words)}: the same once Unicode-normalised)"
    return text


_LOOK_ALIKE_SCRIPTS: Final = frozenset({"LATIN", "GREEK", "CYRILLIC"})
"""Scripts whose letters look alike (Latin e, Cyrillic е, Greek ε): a word that mixes them
is a look-alike of a word written in one, never a word of its own."""


def mixed_scripts(word: str) -> list[str]:
    """The look-alike scripts (``_LOOK_ALIKE_SCRIPTS``) ``word`` mixes; empty when it keeps
    to one of them (or holds none)."""
    if word.isascii():
        return []
    scripts = set()
    for ch in word:
        if ch.isalpha():
            script = "LATIN" if ch.isascii() else unicodedata.name(ch, "").split(" ", 1)[0]
            if script in _LOOK_ALIKE_SCRIPTS:
                scripts.add(script)
    return sorted(scripts) if len(scripts) > 1 else []


def invisible_character(word: str) -> str | None:
    """The first invisible format character (Unicode category Cf: zero-width space U+200B,
    zero-width joiners, word joiner, soft hyphen, BOM, direction marks) in ``word``, as
    ``U+XXXX``; None when it has none. Such a word looks like the word without it, and no
    normalisation (NFKC) removes it."""
    if word.isascii():
        return None
    for ch in word:
        if unicodedata.category(ch) == "Cf":
            return f"U+{ord(ch):04X}"
    return None


def word_problems(field: str, words: list[str]) -> list[tuple[str, str]]:
    """Look-alike words among candidates, one problem each: words that mix look-alike
    scripts (``mixed_scripts``) or hold an invisible character (``invisible_character``)."""
    if "".join(words).isascii():  # the usual case: no script but Latin
        return []
    out = []
    for i, w in enumerate(words):
        hidden = invisible_character(w)
        if hidden is not None:
            out.append(
                (f"{field}[{i}]", f"{w!r} holds an invisible character ({hidden}), so it "
                 "is a look-alike of the word without it; remove it")
            )  # fmt: skip
            continue
        scripts = mixed_scripts(w)
        if scripts:
            names = " and ".join(s.title() for s in scripts)
            out.append(
                (f"{field}[{i}]", f"{w!r} mixes {names} letters: a look-alike of a word "
                 "written in one script; write it in one")
            )  # fmt: skip
    return out


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

    def _strings(self) -> list[str]:
        extra = [self.category, *self.candidates, self.secret or "", self.chameleon_guess or ""]
        return super()._strings() + extra

    def _texts(self) -> Iterator[tuple[str, str]]:
        yield from super()._texts()
        yield "category", self.category
        for i, w in enumerate(self.candidates):
            yield f"candidates[{i}]", w
        if self.secret is not None:
            yield "secret", self.secret
        if self.chameleon_guess is not None:
            yield "chameleon_guess", self.chameleon_guess

    def _problems(self) -> list[tuple[str, str]]:
        problems = super()._problems()
        problems += word_problems("candidates", self.candidates)
        folded = _folded(self.candidates)
        for i, f in enumerate(folded):
            if not f:
                problems.append((f"candidates[{i}]", "empty candidate"))
        dup = sorted(set(_duplicates(self.candidates, folded)))
        if dup:
            problems.append(("candidates", _duplicated(dup)))
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

    def _strings(self) -> list[str]:
        extra = [self.words.civilian, self.words.spy, *self.distractors]
        return super()._strings() + extra + [e.player for e in self.eliminations]

    def _texts(self) -> Iterator[tuple[str, str]]:
        yield from super()._texts()
        yield "words.civilian", self.words.civilian
        yield "words.spy", self.words.spy
        for i, w in enumerate(self.distractors):
            yield f"distractors[{i}]", w
        for i, e in enumerate(self.eliminations):
            yield f"eliminations[{i}].player", e.player

    def _problems(self) -> list[tuple[str, str]]:
        problems = super()._problems()
        problems += word_problems("words.civilian", [self.words.civilian])[:1]
        problems += word_problems("words.spy", [self.words.spy])[:1]
        problems += word_problems("distractors", self.distractors)
        if _fold(self.words.civilian) == _fold(self.words.spy):
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
            problems.append(("distractors", _duplicated(dup)))
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

    def words_by_player(self) -> dict[str, str]:
        """Each player's word, by id: what ``word_of`` says of one player, for them all in
        one pass (``word_of`` in a loop over the players or turns searches the players each
        time: quadratic in a game of many players)."""
        spy, civilian = self.words.spy, self.words.civilian
        return {p.id: spy if p.role == "spy" else civilian for p in self.players}


Transcript = Annotated[ChameleonTranscript | SpyGameTranscript, Field(discriminator="game")]
"""Either kind of game, told apart by its ``game`` field."""

TRANSCRIPT_ADAPTER: TypeAdapter[ChameleonTranscript | SpyGameTranscript] = TypeAdapter(Transcript)


def transcript_json_schema() -> dict[str, Any]:
    """The JSON Schema of ``leakage.transcript/1``."""
    schema = TRANSCRIPT_ADAPTER.json_schema()
    schema["$id"] = "https://leakage.invalid/schemas/leakage.transcript/1"
    schema["title"] = TRANSCRIPT_FORMAT
    return schema
