"""TextArena Taboo game logs (``leakage.textarena-taboo/1``): one record per hidden word.

TextArena 0.7.4 keeps no game log of its own beyond the messages in memory, so the log is
what :class:`leakage.textarena.TabooLeakageWrapper` writes while a game is played (JSONL,
one line per hidden word, in the order the words came up). A record::

    {"format": "leakage.textarena-taboo/1", "game_id": "...", "env_id": "Taboo-v0-animals",
     "textarena_version": "0.7.4", "seed": 3, "num_players": 4, "word_number": 1,
     "category": "animals", "candidates": ["Alpaca", ...], "word": "Alpaca",
     "taboo_words": ["South America", ...], "team": 0,
     "players": [{"id": 0, "role": "Clue Giver"}, {"id": 1, "role": "Guesser"}],
     "messages": [{"player": 0, "text": "[a woolly animal]", "round": 1, "taboo": false},
                  {"player": 1, "text": "[camel]", "round": 1, "guess": "camel",
                   "correct": false}],
     "outcome": "guessed", "game_end": {"rewards": {"0": 1, ...}, "reason": "..."}}

Mapping to ``leakage.transcript/1`` (a ``chameleon`` game, id ``game_id#word_number``):
the candidates are the category's words (Taboo's word list for the category), the secret
is the hidden word, the players are the team that played it. The clue giver, who knows the
word, sits in a non-chameleon's seat; the guessers, who infer it, in the chameleon's: so
the clues update the posterior and the guesses are turns that do not (``leakage score
--include-chameleon`` counts them too). A blank message carries no clue and is left out
(``meta.skipped_empty_messages`` lists its position). A clue the clue giver already gave
for this word (the same words, in any case and punctuation: ``[a woolly animal]`` and ``a
woolly animal.``) is counted once: the repeat is left out of the turns, because the
guessers learn nothing new from it and the independence the posterior assumes would
otherwise count it again as fresh evidence (``meta.repeated_clues`` lists each repeat's
message and the message it repeats). ``meta`` keeps the TextArena roles,
the taboo words, each guess and whether it was right, which clues broke the taboo
(``taboo_turns``), the word's outcome and the game's rewards.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from leakage.errors import InvalidTranscript
from leakage.transcripts._models import ChameleonTranscript
from leakage.transcripts.adapters._fields import get_field, kind_of, some_ids

TABOO_FORMAT = "leakage.textarena-taboo/1"
"""The format tag of a Taboo log record (and its version)."""
CLUE_GIVER, GUESSER = "Clue Giver", "Guesser"
"""TextArena's Taboo roles."""
OUTCOMES = ("guessed", "forfeited", "open")
"""How a word ended: a guesser named it, the clue giver lost it by breaking the taboo a
second time, or the game ended with the word still in play."""


def _int(obj: dict[str, Any], key: str, where: str, *, required: bool = True) -> int | None:
    value = get_field(obj, key, where, int, required=required)
    return value if value is None else int(value)


def _players(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The team's players (transcript form), checked: known roles, one clue giver."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()  # the ids so far: a set, so that the check is linear in players
    for i, p in enumerate(get_field(record, "players", "", list)):
        where = f"players[{i}]"
        if not isinstance(p, dict):
            raise InvalidTranscript([(where, f"expected an object, got {kind_of(p)}")])
        pid = str(_int(p, "id", where))
        if pid in seen:
            raise InvalidTranscript([(f"{where}.id", f"player {pid} appears twice")])
        seen.add(pid)
        role = get_field(p, "role", where, str)
        if role not in (CLUE_GIVER, GUESSER):
            msg = f"expected {CLUE_GIVER!r} or {GUESSER!r}, got {role!r}"
            raise InvalidTranscript([(f"{where}.role", msg)])
        agent = get_field(p, "agent", where, str, required=False)
        seat = "non-chameleon" if role == CLUE_GIVER else "chameleon"
        out.append({"id": pid, "role": seat, "agent": agent, "textarena_role": role})
    givers = [p["id"] for p in out if p["role"] == "non-chameleon"]
    if len(givers) != 1 or len(out) < 2:
        msg = (
            f"a team has one {CLUE_GIVER!r} and at least one {GUESSER!r}; "
            f"got {len(givers)} clue givers among {len(out)} players"
        )
        raise InvalidTranscript([("players", msg)])
    return out


def clue_key(text: str) -> str:
    """What makes two clues the same clue: their words, casefolded (``[A woolly animal]``
    and ``a woolly animal.`` are one clue)."""
    return " ".join(re.findall(r"\w+", text.casefold()))


def _rename(field: str, turn_message: list[int]) -> str:
    """A transcript field as the record names it (``turns[2].text`` -> ``messages[3].text``,
    ``secret`` -> ``word``)."""
    m = re.match(r"turns\[(\d+)\]", field)
    if m:
        return f"messages[{turn_message[int(m[1])]}]{field[m.end() :]}"
    return "word" + field[len("secret") :] if field.startswith("secret") else field


class TabooAdapter:
    """Reads ``leakage.textarena-taboo/1`` records; see the module docstring."""

    name = "textarena-taboo"

    def sniff(self, record: Any) -> bool:
        tag = record.get("format") if isinstance(record, dict) else None
        return isinstance(tag, str) and tag.startswith("leakage.textarena-taboo/")

    def convert(self, record: Any, *, path: Path | None, index: int) -> ChameleonTranscript:
        if not isinstance(record, dict):
            raise InvalidTranscript([("", f"expected a JSON object, got {kind_of(record)}")])
        tag = get_field(record, "format", "", str)
        if tag != TABOO_FORMAT:
            msg = f"expected {TABOO_FORMAT!r}, got {tag!r} (written by another leakage version?)"
            raise InvalidTranscript([("format", msg)])
        game_id = get_field(record, "game_id", "", str)
        number = _int(record, "word_number", "")
        category = get_field(record, "category", "", str)
        candidates = get_field(record, "candidates", "", list)
        for i, w in enumerate(candidates):
            if not isinstance(w, str):
                raise InvalidTranscript(
                    [(f"candidates[{i}]", f"expected a string, got {kind_of(w)}")]
                )
        word = get_field(record, "word", "", str)
        if word not in candidates:
            msg = f"the hidden word {word!r} is not among the candidates (the category's words)"
            raise InvalidTranscript([("word", msg)])
        taboo = get_field(record, "taboo_words", "", list, required=False) or []
        outcome = get_field(record, "outcome", "", str)
        if outcome not in OUTCOMES:
            msg = f"expected one of {', '.join(OUTCOMES)}, got {outcome!r}"
            raise InvalidTranscript([("outcome", msg)])
        players = _players(record)
        known = {p["id"] for p in players}

        turns: list[dict[str, Any]] = []
        turn_message: list[int] = []
        guesses: list[dict[str, Any]] = []
        taboo_turns: list[int] = []
        skipped: list[int] = []
        repeated: list[dict[str, int]] = []
        said: dict[str, int] = {}
        giver = next(p["id"] for p in players if p["role"] == "non-chameleon")
        for i, m in enumerate(get_field(record, "messages", "", list)):
            where = f"messages[{i}]"
            if not isinstance(m, dict):
                raise InvalidTranscript([(where, f"expected an object, got {kind_of(m)}")])
            pid = str(_int(m, "player", where))
            if pid not in known:
                msg = f"player {pid} is not on the team ({some_ids(known)})"
                raise InvalidTranscript([(f"{where}.player", msg)])
            text = get_field(m, "text", where, str)
            rnd = _int(m, "round", where, required=False)
            if not text.strip():
                skipped.append(i)
                continue
            if pid == giver:
                first = said.setdefault(clue_key(text), i)
                if first != i:
                    repeated.append({"message": i, "repeats": first})
                    continue
            turn = len(turns)
            if m.get("guess") is not None or "correct" in m:
                guess = get_field(m, "guess", where, str, required=False)
                correct = m.get("correct", False)
                if not isinstance(correct, bool):
                    msg = f"expected true/false, got {kind_of(correct)}"
                    raise InvalidTranscript([(f"{where}.correct", msg)])
                guesses.append({"turn": turn, "guess": guess, "correct": correct})
            if m.get("taboo") is True:
                taboo_turns.append(turn)
            turns.append({"player": pid, "text": text, "round": rnd})
            turn_message.append(i)

        meta: dict[str, Any] = {
            "source": "textarena-taboo",
            "source_file": path.name if path is not None else None,
            "game_id": game_id,
            "env_id": record.get("env_id"),
            "textarena_version": record.get("textarena_version"),
            "seed": record.get("seed"),
            "word_number": number,
            "team": record.get("team"),
            "taboo_words": taboo,
            "textarena_roles": {p["id"]: p.pop("textarena_role") for p in players},
            "outcome": outcome,
            "guesses": guesses,
            "taboo_turns": taboo_turns,
            "skipped_empty_messages": skipped,
            "repeated_clues": repeated,
            "game_end": record.get("game_end"),
        }
        data = {
            "game": "chameleon",
            "id": f"{game_id}#{number}",
            "category": category,
            "candidates": candidates,
            "secret": word,
            "players": players,
            "turns": turns,
            "meta": meta,
        }
        # Imported here: the loader imports the adapter registry (a cycle at import time).
        from leakage.transcripts._native import problems_from_validation_error

        try:
            return ChameleonTranscript.model_validate(data)
        except ValidationError as err:
            problems = problems_from_validation_error(err)
            raise InvalidTranscript([(_rename(f, turn_message), m) for f, m in problems]) from None
