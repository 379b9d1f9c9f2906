"""clembench episode logs (``interactions.json``) of ``guesswhat`` and ``taboo``.

clembench (Chalamalasetti et al. 2023, "clembench: Using Game Play to Evaluate
Chat-Optimized Language Models as Conversational Agents", EMNLP 2023; runs published in
github clembench/clembench-runs) writes one ``interactions.json`` per episode, under
``<run>/<model pair>/<game>/<experiment>/episode_<n>/``::

    {"players": {"GM": "Game master for guesswhat",
                 "Player 1": "Guesser, o3-mini-2025-01-31", "Player 2": "Answerer, ..."},
     "turns": [[{"from": "GM", "to": "Player 1", "timestamp": "...",
                 "action": {"type": "send message", "content": "..."}}, ...], ...]}

(newer clembench versions write each player as ``{"game_role": ..., "model_name": ...}``;
both are read). The game is told by its players' roles: ``Guesser`` + ``Answerer`` is
guesswhat, ``WordDescriber`` + ``WordGuesser`` is taboo. Everything else is read from the
messages as the game master sent and received them.

**guesswhat** (a ``chameleon`` game). The guesser sees an 8-word card and asks yes/no
questions; the answerer knows the target and answers; the guesser then guesses once. The
card is the game's ``candidates``, the target its ``secret`` (read from the game master's
prompt to the answerer, ``Target Word: ...``; an episode aborted before the answerer was
ever prompted names no target and has ``secret`` null). The answerer, who knows the target,
sits in a non-chameleon's seat; the guesser, who infers it, in the chameleon's. Each
answered question is one clue of the answerer, the question and its answer together, as the
guesser heard them: ``"Is the target word a type of beverage? Yes."`` (so that the answer is
read as what it says about the question: see docs/adapters.md). The final guess is the
guesser's turn (``GUESS: Bass``) and the transcript's ``chameleon_guess``. A question the
game master rejected (a part-of-speech question, two questions at once) was never answered
and is not a clue: ``meta.rejected`` keeps it. ``meta.qa`` lists each clue's question and
answer (``yes`` / ``no`` when the answer is one of those, else as written).

**taboo** (a ``chameleon`` game). The describer gives clues for a target without its taboo
words; the guesser guesses after each. The target is an open-vocabulary secret: the game has
no card. The transcript's ``candidates`` are the words the game itself names, the target and
its taboo (``related``) words, so a card posterior asks which of them the clues describe; the
figure over the whole vocabulary is an open-vocabulary seat's (``leakage guess``,
docs/vocab.md), and ``meta.open_vocabulary`` is true to say so. The describer sits in a
non-chameleon's seat, the guesser in the chameleon's: each clue the game master passed on
(``valid clue``) is a turn of the describer, each valid guess a turn of the guesser, with the
round (the try, from 1). Only a leading ``CLUE:`` / ``GUESS:`` is stripped. A reply the game
master did not pass on (it broke the taboo, or the format) is in ``meta.rejected``.

Both: the id is ``<model pair>/<game>/<experiment>/episode_<n>`` when the file sits where
clembench writes it (``meta.experiment``, ``meta.episode``), else the file's stem (plus
``#index`` for a later record of the same file); ``meta`` also keeps the models, the
outcome (``correct guess``, ``incorrect guess``, ``max turns reached``, ``invalid format``,
``invalid content``, ``invalid clue``: the game master's own words) and whether the guess was
right. A log that cannot be read names the field (``turns[2][1].action.content``).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from leakage._split import Side, split_side
from leakage.errors import InvalidTranscript
from leakage.transcripts._models import ChameleonTranscript
from leakage.transcripts.adapters._fields import get_field, kind_of

GUESSWHAT_ROLES = ("Guesser", "Answerer")
TABOO_ROLES = ("WordDescriber", "WordGuesser")
"""clembench's role names of the two games' players (first: Player 1)."""
_GAMES = {"guesswhat": GUESSWHAT_ROLES, "taboo": TABOO_ROLES}
ENDINGS = frozenset(
    {
        "correct guess",
        "incorrect guess",
        "max turns reached",
        "invalid format",
        "invalid content",
        "invalid clue",
    }
)
"""The game master's actions that end an episode (its ``outcome``)."""
TABOO_CATEGORY = "English words"
"""The category a taboo transcript carries (the game has no card)."""

_CANDIDATES = re.compile(r"List of candidate words:\s*(\[.*?\])", re.S)
_TARGET = re.compile(r"Target Word:\s*(.+)")
_TABOO_TARGET = re.compile(
    r"target word that you need to describe and that the other player needs to guess:\s*"
    r"\n\s*(.+?)\s*\n(?:\s*Related words are:\s*\n((?:\s*-\s*.+\n?)*))?"
)
_PREFIX = re.compile(r"^\s*(QUESTION|ANSWER|GUESS|CLUE)\s*:\s*", re.I)
_EPISODE = re.compile(r"episode_(\d+)$")
_Messages = list[tuple[str, str, str, str, str]]
"""``(where, from, to, action type, content)`` of every message, in order."""


def _roles(record: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    """``{player key: (role, model)}`` of the non-GM players, read from either form."""
    players = get_field(record, "players", "", dict)
    out: dict[str, tuple[str, str | None]] = {}
    for key, value in players.items():
        if key == "GM":
            continue
        where = f"players.{key}"
        if isinstance(value, str):
            role, _, model = value.partition(",")
            out[key] = (role.strip(), model.strip() or None)
        elif isinstance(value, dict):
            role = get_field(value, "game_role", where, str)
            model = get_field(value, "model_name", where, str, required=False)
            out[key] = (role.strip(), model)
        else:
            raise InvalidTranscript(
                [(where, f"expected a string or an object, got {kind_of(value)}")]
            )
    return out


def _game_of(record: Any) -> str | None:
    """``guesswhat`` / ``taboo`` by the players' roles; None for anything else."""
    if not isinstance(record, dict) or not isinstance(record.get("turns"), list):
        return None
    try:
        roles = {role for role, _ in _roles(record).values()}
    except InvalidTranscript:
        return None
    return next((game for game, want in _GAMES.items() if roles == set(want)), None)


def _messages(record: dict[str, Any]) -> _Messages:
    """``(where, from, to, action type, content)`` of every message, in order."""
    out = []
    for i, turn in enumerate(get_field(record, "turns", "", list)):
        if not isinstance(turn, list):
            raise InvalidTranscript([(f"turns[{i}]", f"expected an array, got {kind_of(turn)}")])
        for j, msg in enumerate(turn):
            where = f"turns[{i}][{j}]"
            if not isinstance(msg, dict):
                raise InvalidTranscript([(where, f"expected an object, got {kind_of(msg)}")])
            sender = get_field(msg, "from", where, str)
            to = get_field(msg, "to", where, str)
            action = get_field(msg, "action", where, dict)
            kind = get_field(action, "type", f"{where}.action", str)
            content = action.get("content")
            if not isinstance(content, str):
                # some actions carry a number or an object (a score); messages always text
                if kind in ("send message", "get message"):
                    msg_ = f"expected a string, got {kind_of(content)}"
                    raise InvalidTranscript([(f"{where}.action.content", msg_)])
                content = "" if content is None else str(content)
            out.append((where, sender, to, kind, content))
    return out


def _prefix(text: str) -> str | None:
    """``QUESTION`` / ``ANSWER`` / ``GUESS`` / ``CLUE`` when ``text`` starts with it."""
    m = _PREFIX.match(text)
    return m[1].upper() if m else None


def _strip(text: str) -> str:
    return _PREFIX.sub("", text, count=1).strip()


def _yes_no(answer: str) -> str:
    """``yes`` / ``no`` for an answer that says one of them (``Yes.``, ``NO``), else as is."""
    word = answer.strip().strip(".!").strip().casefold()
    return word if word in ("yes", "no") else answer.strip()


def _place(path: Path | None, index: int, game: str) -> tuple[str, dict[str, Any]]:
    """The game's id and where clembench put it (``experiment``, ``episode``)."""
    if path is None:
        return f"clembench-{game}#{index}", {}
    parts = path.resolve().parts if path.name == "interactions.json" else ()
    m = _EPISODE.match(parts[-2]) if len(parts) >= 5 else None
    if m:
        pair, game_dir, experiment = parts[-5], parts[-4], parts[-3]
        gid = f"{pair}/{game_dir}/{experiment}/episode_{m[1]}"
        return gid, {"experiment": experiment, "episode": int(m[1]), "model_pair": pair}
    return (path.stem if index == 0 else f"{path.stem}#{index}"), {}


def _validated(data: dict[str, Any], turn_message: list[str]) -> ChameleonTranscript:
    # Imported here: the loader imports the adapter registry (a cycle at import time).
    from leakage.transcripts._native import problems_from_validation_error

    try:
        return ChameleonTranscript.model_validate(data)
    except ValidationError as err:
        problems = problems_from_validation_error(err)
        renamed = []
        for field, why in problems:
            m = re.match(r"turns\[(\d+)\]", field)
            if m and int(m[1]) < len(turn_message):
                field = f"{turn_message[int(m[1])]}.action.content{field[m.end() :]}"
            renamed.append((field, why))
        raise InvalidTranscript(renamed) from None


def _models(roles: dict[str, tuple[str, str | None]]) -> dict[str, str | None]:
    return {role: model for role, model in roles.values()}


def _outcome(messages: _Messages) -> str | None:
    """The game master's last ending action (``ENDINGS``): how the episode ended."""
    for _, sender, to, kind, _ in reversed(messages):
        if sender == "GM" and to == "GM" and kind in ENDINGS:
            return kind
    return None


@dataclass
class _Episode:
    """What one game's reading of the messages found, besides what both games share."""

    fields: dict[str, Any]
    """The transcript's own fields (``category``, ``candidates``, ``secret``, ...)."""
    meta: dict[str, Any]
    """The game's ``meta`` entries, between the models and the outcome."""
    turns: list[dict[str, Any]]
    turn_message: list[str]
    """Where each turn's message is (``turns[i][j]``), to name it in an error."""
    rejected: list[dict[str, str]]


class _ClembenchAdapter:
    """What both games share: the players' check, the messages, the id, the models, the
    outcome and the seats (the one who knows the target is the non-chameleon, the one who
    guesses it the chameleon); ``_read`` reads a game's own messages."""

    game = ""
    knows = ""
    """The role of the player who knows the target; the other player guesses it."""

    def sniff(self, record: Any) -> bool:
        return _game_of(record) == self.game

    def _check(self, record: Any) -> dict[str, tuple[str, str | None]]:
        if not isinstance(record, dict):
            raise InvalidTranscript([("", f"expected a JSON object, got {kind_of(record)}")])
        roles = _roles(record)
        found = sorted(role for role, _ in roles.values())
        want = _GAMES[self.game]
        if found != sorted(want):
            msg = f"a clembench {self.game} log has players {' and '.join(want)}; got {found}"
            raise InvalidTranscript([("players", msg)])
        return roles

    def _read(
        self, knower: str, guesser: str, messages: _Messages, outcome: str | None
    ) -> _Episode:
        """The game's own reading of the messages of players ``knower`` and ``guesser``."""
        raise NotImplementedError

    def convert(self, record: Any, *, path: Path | None, index: int) -> ChameleonTranscript:
        roles = self._check(record)
        by_role = {role: key for key, (role, _) in roles.items()}
        messages = _messages(record)
        outcome = _outcome(messages)
        knower = self.knows
        (guesser,) = set(_GAMES[self.game]) - {knower}
        episode = self._read(by_role[knower], by_role[guesser], messages, outcome)
        gid, place = _place(path, index, self.game)
        models = _models(roles)
        meta: dict[str, Any] = {
            "source": "clembench",
            "clembench_game": self.game,
            "source_file": path.name if path is not None else None,
            **place,
            "models": models,
            **episode.meta,
            "outcome": outcome,
            "rejected": episode.rejected,
        }
        data = {
            "game": "chameleon",
            "id": gid,
            **episode.fields,
            "players": [
                {"id": by_role[knower], "role": "non-chameleon", "agent": models[knower]},
                {"id": by_role[guesser], "role": "chameleon", "agent": models[guesser]},
            ],
            "turns": episode.turns,
            "meta": meta,
        }
        return _validated(data, episode.turn_message)


class GuessWhatAdapter(_ClembenchAdapter):
    """Reads clembench ``guesswhat`` episodes; see the module docstring."""

    name = "clembench-guesswhat"
    game = "guesswhat"
    knows = "Answerer"

    def _read(
        self, answerer: str, guesser: str, messages: _Messages, outcome: str | None
    ) -> _Episode:
        candidates: list[str] | None = None
        target: str | None = None
        turns: list[dict[str, Any]] = []
        turn_message: list[str] = []
        qa: list[dict[str, Any]] = []
        rejected: list[dict[str, str]] = []
        pending: tuple[str, str] | None = None  # (where, question) awaiting its answer
        guess: str | None = None
        for k, (where, sender, to, kind, content) in enumerate(messages):
            if sender == "GM" and to == guesser and candidates is None:
                m = _CANDIDATES.search(content)
                if m:
                    candidates = _card(m[1], f"{where}.action.content")
            elif sender == "GM" and to == answerer and target is None:
                m = _TARGET.search(content)
                if m:
                    target = m[1].strip()
            elif sender == guesser and kind == "get message":
                refused = _refused(messages, k)
                if refused is not None:
                    rejected.append({"text": content, "reason": refused, "at": where})
                elif _prefix(content) == "GUESS":
                    guess = _strip(content)
                    turns.append({"player": guesser, "text": content.strip()})
                    turn_message.append(where)
                else:
                    pending = (where, _strip(content))
            elif sender == answerer and kind == "get message" and pending is not None:
                refused = _refused(messages, k)
                if refused is not None:  # the answer broke the format: no clue
                    why = f"the answer {content!r} was rejected: {refused}"
                    rejected.append({"text": pending[1], "reason": why, "at": pending[0]})
                    pending = None
                    continue
                answer = _yes_no(_strip(content))
                said = answer.capitalize() + "." if answer in ("yes", "no") else answer
                turns.append({"player": answerer, "text": f"{pending[1]} {said}"})
                turn_message.append(where)
                qa.append({"q": pending[1], "a": answer})
                pending = None
        if pending is not None:
            why = "never answered (the log ends first)"
            rejected.append({"text": pending[1], "reason": why, "at": pending[0]})
        if candidates is None:
            msg = "no game master prompt to the guesser lists the candidate words"
            raise InvalidTranscript([("turns", msg)])
        secret = _on_card(target, candidates)
        if target is not None and secret is None:
            msg = f"the target {target!r} (the answerer's prompt) is not on the card"
            raise InvalidTranscript([("turns", msg)])
        return _Episode(
            fields={
                "category": "guesswhat",
                "candidates": candidates,
                "secret": secret,
                "chameleon_guess": guess,
            },
            meta={
                "qa": qa,
                "final_guess": guess,
                "correct": None if guess is None or secret is None else _same(guess, secret),
            },
            turns=turns,
            turn_message=turn_message,
            rejected=rejected,
        )


def _card(text: str, where: str) -> list[str]:
    try:
        card = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        card = None
    if not isinstance(card, list) or not all(isinstance(w, str) for w in card):
        raise InvalidTranscript(
            [(where, f"the candidate list {text[:80]!r} is not a list of words")]
        )
    return card


def _same(a: str, b: str) -> bool:
    return a.strip().casefold() == b.strip().casefold()


def _on_card(word: str | None, card: list[str]) -> str | None:
    """The card's spelling of ``word`` (case aside), or None."""
    if word is None:
        return None
    return next((w for w in card if _same(w, word)), None)


def _refused(messages: _Messages, k: int) -> str | None:
    """The game master's reason when it rejected message ``k`` (its next GM-to-GM action
    before any other message is an ``invalid ...``), else None."""
    for _, sender, to, kind, content in messages[k + 1 :]:
        if sender != "GM" or to != "GM":
            return None
        if kind.startswith("invalid"):
            return content
    return None


class TabooAdapter(_ClembenchAdapter):
    """Reads clembench ``taboo`` episodes; see the module docstring."""

    name = "clembench-taboo"
    game = "taboo"
    knows = "WordDescriber"

    def _read(
        self, describer: str, guesser: str, messages: _Messages, outcome: str | None
    ) -> _Episode:
        target: str | None = None
        related: list[str] = []
        turns: list[dict[str, Any]] = []
        turn_message: list[str] = []
        rejected: list[dict[str, str]] = []
        guesses: list[str] = []
        tries = 0
        for k, (where, sender, to, kind, content) in enumerate(messages):
            if sender == "GM" and to == describer and target is None:
                m = _TABOO_TARGET.search(content + "\n")
                if m:
                    target = m[1].strip()
                    related = [
                        w.strip().lstrip("-").strip()
                        for w in (m[2] or "").splitlines()
                        if w.strip()
                    ]
            elif kind == "get message" and sender in (describer, guesser):
                valid = _passed_on(messages, k)
                if valid is None:
                    why = _refused(messages, k) or "not passed on by the game master"
                    rejected.append({"text": content, "reason": why, "at": where})
                    continue
                if sender == describer:
                    tries += 1
                else:
                    guesses.append(_strip(content))
                turns.append({"player": sender, "text": _strip(content), "round": max(tries, 1)})
                turn_message.append(where)
        if target is None:
            msg = "no game master prompt to the describer names the target word"
            raise InvalidTranscript([("turns", msg)])
        return _Episode(
            fields={
                "category": TABOO_CATEGORY,
                "candidates": list(dict.fromkeys([target, *related])),
                "secret": target,
            },
            meta={
                "open_vocabulary": True,
                "related": related,
                "guesses": guesses,
                "correct": outcome == "correct guess",
            },
            turns=turns,
            turn_message=turn_message,
            rejected=rejected,
        )


def _passed_on(messages: _Messages, k: int) -> str | None:
    """``valid clue`` / ``valid guess`` when the game master accepted message ``k``, else
    None (it was rejected, or the log ends first)."""
    for _, sender, to, kind, _ in messages[k + 1 :]:
        if sender != "GM" or to != "GM":
            return None
        if kind in ("valid clue", "valid guess"):
            return kind
        if kind.startswith("invalid"):
            return None
    return None


def instance_key(game: str, experiment: str, episode: int) -> str:
    """The id of a clembench instance: every model plays the same card and target for the
    same game, experiment and episode number (``guesswhat/0_Level_1/episode_2``)."""
    return f"clembench/{game}/{experiment}/episode_{episode}"


def instance_side(game: str, experiment: str, episode: int) -> Side:
    """``dev`` or ``frozen`` for a clembench instance: the frozen split of
    :mod:`leakage.calibration` (``leakage._split``: a stable hash, one third frozen) applied
    to :func:`instance_key`, so every model's episode of one instance falls on the same side
    and no card or target is on both."""
    return split_side(instance_key(game, experiment, episode))
