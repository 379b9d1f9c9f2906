"""Adapter for the SpyGame logs of Liang et al. 2023 (github Skytliang/SpyGame): one game a file.

The benchmark stores a game at ``benchmark/<host model>/<guest model>/<spy word>.json``: a
host model plays the villagers, a guest model the player ``guest_name`` (the spy there).

Mapping to ``leakage.transcript/1`` (a ``spygame``):

- players: the keys of ``players_model`` (``"Player 1"``; kept as ids), each ``[model, word]``.
  The role follows from the word: ``spy_word`` makes a spy, ``villager_word`` a civilian. The
  ``spy`` field (``"Player 2 (Durian)"``, or a list of such for games with several spies) must
  name the same players.
- turns: ``rounds["round-N"].describe``, rounds in number order, players in the order of the
  ``describe`` object. That is the order spoken: the host announces it ("take turns ... in the
  order of [...]") and the players' own histories and ``describe_cot`` follow it. The
  ``"Player N: "`` prefix that repeats the speaker is removed; a description left empty is
  skipped and counted in ``meta.skipped_empty_descriptions``.
- votes: ``rounds["round-N"].vote``, each ``"Host: Player 1 votes for Player 4. Reason: ..."``.
- eliminations: read from the ``result`` text, which follows four fixed templates (they are in
  the file's own ``prompts``): voted out but not the spy (``continue``), the spy voted out
  (``villager_win``), a villager voted out leaving the spy to win (``spy_win``: the selected
  player is out too), or a tie (no one out; the round number goes in ``meta.tie_rounds``).
- meta: source, source file, host and guest folders (from the path) and agents, the guest's
  name and identity, the model of every player, the civilians' and spies' models with a
  ``matchup`` string ``"civilian models vs spy models"``, the winner role, seed, temperature,
  round limit and times. Chains of thought (``describe_cot``, ``vote_cot``), the message
  histories and prompts are left out: they are not clues.

Ids: file stems repeat across folders (``Durian.json`` for every pairing), so the id is
``host folder/guest folder/stem``, plus ``#index`` for the later records of a multi-record file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from leakage.errors import InvalidTranscript
from leakage.transcripts._models import SpyGameTranscript
from leakage.transcripts.adapters._fields import get_field, kind_of, some_ids

_WINNERS = {"villager": "civilian", "civilian": "civilian", "spy": "spy"}
_ROUND_KEY = re.compile(r"round-(\d+)")
# The templates below read one field each in linear time: where a lazy field is followed by
# another, the first is an atomic group ``(?>...)``, so that a text that does not fit is not
# tried again at every later place the first literal occurs (that made a 96 KB vote text
# take 10 s, a 264 KB result text 28 s). Committing to the first place loses no match: any
# later place leaves a suffix of the first's, so the rest fits there only if it fits here.
_VOTE = re.compile(r"\s*Host:\s*(?>(?P<voter>.+?) votes for )(?P<target>.+?)\.(?:\s|$)", re.DOTALL)
_TIE = re.compile(r"\s*Host:\s*There is a tie among")
_OUT = (
    re.compile(r"\s*Host:\s*(?P<out>.+?) has been voted out, but he/she is not the spy"),
    re.compile(r"\s*Host:\s*(?P<out>.+?) is the spy and has been voted out"),
    re.compile(r"\s*Host:\s*(?>(?P<out>.+?) is not the spy, the spy player ).+? has survived"),
)


def _key(where: str, key: str) -> str:
    """Field path of an entry of a keyed object (``rounds['round-1']``, ``vote['Player 1']``)."""
    return f"{where}[{key!r}]"


def _natural(name: str) -> tuple[int, str]:
    """Sort ``Player 2`` before ``Player 10``."""
    digits = re.findall(r"\d+", name)
    return (int(digits[-1]) if digits else 1 << 30, name)


def _players(record: dict[str, Any], spy_word: str, villager_word: str) -> list[dict[str, Any]]:
    models = get_field(record, "players_model", "", dict)
    players = []
    for name in sorted(models, key=_natural):
        path = _key("players_model", name)
        entry = models[name]
        if not (
            isinstance(entry, list)
            and len(entry) >= 2
            and all(isinstance(x, str) for x in entry[:2])
        ):
            raise InvalidTranscript([(path, "expected [model, word]")])
        model, word = entry[0], entry[1]
        if word == spy_word:
            role = "spy"
        elif word == villager_word:
            role = "civilian"
        else:
            msg = f"{word!r} is neither spy_word {spy_word!r} nor villager_word {villager_word!r}"
            raise InvalidTranscript([(f"{path}[1]", msg)])
        players.append({"id": name, "role": role, "agent": model or None, "word": word})
    if not players:
        raise InvalidTranscript([("players_model", "no players")])
    return players


def _spy_name(entry: str) -> str:
    """The player of a ``spy`` entry: ``Player 2`` of ``"Player 2 (Durian)"`` (the text before
    the first ``(`` after the first character, in an entry that ends with ``)``), else the
    entry itself. String operations, not a regular expression: one with a lazy name before
    ``\\s*\\(`` is quadratic in a run of spaces or brackets."""
    text = entry.strip()
    cut = text.find("(", 1) if text.endswith(")") else -1
    return text[:cut].rstrip() if cut > 0 else text  # text[0] is no space: a name is left


def _check_spies(record: dict[str, Any], players: list[dict[str, Any]]) -> None:
    """The ``spy`` field must name the players that ``players_model`` gives the spy word."""
    raw = record.get("spy")
    if raw is None:
        return
    entries = raw if isinstance(raw, list) else [raw]
    named = set()
    for entry in entries:
        if not isinstance(entry, str):
            raise InvalidTranscript([("spy", f"expected a string, got {kind_of(entry)}")])
        named.add(_spy_name(entry))
    holders = {p["id"] for p in players if p["role"] == "spy"}
    if named != holders:
        raise InvalidTranscript(
            [
                (
                    "spy",
                    f"names {some_ids(named)} but players_model gives the spy word "
                    f"to {some_ids(holders) or 'no one'}",
                )
            ]
        )


def _known(name: str, known: set[str], path: str) -> str:
    name = name.strip()
    if name not in known:
        raise InvalidTranscript([(path, f"unknown player {name!r} (players: {some_ids(known)})")])
    return name


def _rounds(record: dict[str, Any]) -> list[tuple[int, str, dict[str, Any]]]:
    rounds = get_field(record, "rounds", "", dict)
    out = []
    for key, value in rounds.items():
        m = _ROUND_KEY.fullmatch(key)
        if m is None or int(m[1]) < 1:
            raise InvalidTranscript([(_key("rounds", key), "expected a key like 'round-1'")])
        if not isinstance(value, dict):
            raise InvalidTranscript(
                [(_key("rounds", key), f"expected an object, got {kind_of(value)}")]
            )
        out.append((int(m[1]), _key("rounds", key), value))
    return sorted(out, key=lambda r: r[0])


def _strip_speaker(text: str, name: str) -> str:
    """``"Player 3: It's a fruit."`` said by Player 3 -> ``"It's a fruit."``."""
    text = text.strip()
    prefix = f"{name}:"
    return text[len(prefix) :].strip() if text.startswith(prefix) else text


def _descriptions(rnd: dict[str, Any], where: str, known: set[str]) -> list[tuple[str, str]]:
    """``(speaker, text)`` in the order spoken, the ``Player N: `` prefix removed."""
    out = []
    for name, text in get_field(rnd, "describe", where, dict).items():
        path = _key(f"{where}.describe", name)
        speaker = _known(name, known, path)
        if not isinstance(text, str):
            raise InvalidTranscript([(path, f"expected a string, got {kind_of(text)}")])
        out.append((speaker, _strip_speaker(text, speaker)))
    return out


def _votes(rnd: dict[str, Any], where: str, known: set[str]) -> list[tuple[str, str]]:
    """``(voter, target)`` read from the host's ``Player 1 votes for Player 4.`` lines."""
    out = []
    for name, text in get_field(rnd, "vote", where, dict).items():
        path = _key(f"{where}.vote", name)
        voter = _known(name, known, path)
        m = _VOTE.match(text) if isinstance(text, str) else None
        if m is None:
            raise InvalidTranscript([(path, "expected 'Host: <voter> votes for <target>. ...'")])
        if m["voter"].strip() != voter:
            raise InvalidTranscript([(path, f"a vote by {m['voter']!r} filed under {voter!r}")])
        out.append((voter, _known(m["target"], known, path)))
    return out


def _voted_out(rnd: dict[str, Any], where: str, known: set[str]) -> str | None:
    """The player the ``result`` text says is out, or None after a tie."""
    result = get_field(rnd, "result", where, str)
    for rx in _OUT:
        if m := rx.match(result):
            return _known(m["out"], known, f"{where}.result")
    if _TIE.match(result):
        return None
    raise InvalidTranscript([(f"{where}.result", f"unrecognised result text {result[:60]!r}")])


class SpyGameLiangAdapter:
    """Reads SpyGame logs of Liang et al.; see the module docstring for the mapping."""

    name = "spygame-liang"

    def sniff(self, record: Any) -> bool:
        return (
            isinstance(record, dict)
            and isinstance(record.get("rounds"), dict)
            and isinstance(record.get("players_model"), dict)
            and "spy_word" in record
            and "villager_word" in record
        )

    def convert(self, record: Any, *, path: Path | None, index: int) -> SpyGameTranscript:
        if not isinstance(record, dict):
            raise InvalidTranscript([("", f"expected a JSON object, got {kind_of(record)}")])
        spy_word = get_field(record, "spy_word", "", str)
        villager_word = get_field(record, "villager_word", "", str)
        for key, word in (("spy_word", spy_word), ("villager_word", villager_word)):
            if not word.strip():
                raise InvalidTranscript([(key, "empty word")])
        players = _players(record, spy_word, villager_word)
        _check_spies(record, players)
        known = {p["id"] for p in players}

        turns: list[dict[str, Any]] = []
        votes: list[dict[str, Any]] = []
        eliminations: list[dict[str, Any]] = []
        ties: list[int] = []
        skipped = 0
        for number, where, rnd in _rounds(record):
            said = _descriptions(rnd, where, known)
            skipped += sum(1 for _, text in said if not text)
            turns += [{"player": p, "text": t, "round": number} for p, t in said if t]
            votes += [
                {"voter": v, "target": t, "round": number} for v, t in _votes(rnd, where, known)
            ]
            out = _voted_out(rnd, where, known)
            if out is None:
                ties.append(number)
            else:
                eliminations.append({"player": out, "round": number})

        meta = self._meta(record, players, path)
        meta.update(tie_rounds=ties, skipped_empty_descriptions=skipped)
        data = {
            "game": "spygame",
            "id": self._id(record, path, index),
            "players": players,
            "words": {"civilian": villager_word, "spy": spy_word},
            "turns": turns,
            "votes": votes,
            "eliminations": eliminations,
            "meta": meta,
        }
        # Imported here: the loader imports the adapter registry, so a top-level import would
        # be circular.
        from leakage.transcripts._native import problems_from_validation_error

        try:
            return SpyGameTranscript.model_validate(data)
        except ValidationError as err:
            raise InvalidTranscript(problems_from_validation_error(err)) from None

    @staticmethod
    def _id(record: dict[str, Any], path: Path | None, index: int) -> str:
        if path is not None:
            parts = [path.parent.parent.name, path.parent.name, path.stem]
        else:
            parts = [
                str(record.get("host_agent") or ""),
                str(record.get("guest_agent") or ""),
                f"{record['spy_word']}-{record.get('seed', '')}",
            ]
        return "/".join(p for p in parts if p) + (f"#{index}" if index else "")

    @staticmethod
    def _meta(
        record: dict[str, Any], players: list[dict[str, Any]], path: Path | None
    ) -> dict[str, Any]:
        civilians = sorted({p["agent"] for p in players if p["role"] == "civilian" and p["agent"]})
        spies = sorted({p["agent"] for p in players if p["role"] == "spy" and p["agent"]})
        win = get_field(record, "win", "", str, required=False)
        if win is not None and win not in _WINNERS:
            raise InvalidTranscript([("win", f"expected 'villager' or 'spy', got {win!r}")])
        meta: dict[str, Any] = {
            "source": "spygame-liang",
            "source_file": path.name if path is not None else None,
            "host_folder": (path.parent.parent.name or None) if path is not None else None,
            "guest_folder": (path.parent.name or None) if path is not None else None,
            "models": {p["id"]: p["agent"] for p in players},
            "civilian_models": civilians,
            "spy_models": spies,
            "matchup": f"{'+'.join(civilians)} vs {'+'.join(spies)}",
            "winner_role": _WINNERS[win] if win is not None else None,
        }
        for key in (
            "host_agent",
            "guest_agent",
            "guest_name",
            "guest_identity",
            "game_name",
            "seed",
            "temperature",
            "num_players",
            "max_rounds",
            "start_time",
            "end_time",
        ):
            value = record.get(key)
            if isinstance(value, str | int | float) and value != "":
                meta[key] = value
        return meta
