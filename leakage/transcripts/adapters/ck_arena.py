"""Adapter for CK-Arena Undercover logs (Xu et al. 2025): one ``{"game_record": {...}}`` each.

Mapping to ``leakage.transcript/1`` (a ``spygame``):

- players: ``player_id`` (an integer upstream) becomes a string id, ``undercover`` becomes
  ``spy``, ``llm_id`` is the agent and ``assigned_concept`` the word. The pair is taken from
  what the players hold, not from ``concept_pair`` (whose a/b order says nothing about roles).
- turns: ``game_process.statements`` in list order, with ``statement_round`` as the round.
  A statement whose content is empty (12 in the dev logs, all by models that failed to
  answer) carries no clue and would fail the transcript's "empty text" check, so it is
  skipped; ``meta.skipped_empty_statements`` counts them and ``meta.skipped_statement_ids``
  names them, so a reader can tell a skipped turn from a player who never spoke.
- votes: ``game_process.voting_rounds[].votes`` with ``voting_round_id`` as the round. A
  ``voted_for`` of ``0``, ``null`` or ``"null"`` is how CK-Arena records a vote it could not
  parse; the upstream tally ignores it, and so do we (``meta.abstentions`` counts them).
- eliminations: from the three ways CK-Arena removes a player: the players' vote
  (``voting_rounds``), an audience model's decision (``audience_decisions``, games without
  votes) and a judge's low reasonableness score (``metric_eliminations``; upstream marks
  those players with ``eliminated_in_voting_round = -1``). ``meta.elimination_causes`` says
  which (``vote`` / ``audience`` / ``metric``, or ``record`` for a player whose positive
  ``eliminated_in_voting_round`` appears in no list). Within a round a metric elimination
  comes first: it follows the statement, before the vote (such a player never votes again).
- meta: source, source file (and the upstream path it encodes), game id, timestamp,
  ``topic_category`` (upstream sometimes holds an experiment name there), the concept pair,
  the model of every player, the civilians' and spies' models with a ``matchup`` string
  ``"civilian models vs spy models"``, the winner role and winners, judges, the audience model,
  and the judges' mean scores of each kept turn (``turn_scores``, aligned with ``turns``).

Ids: several files share a ``game_id`` (games started in the same second), so the id is
``game_id@file stem`` when the file is known, plus ``#index`` for the later records of a
multi-record file.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from leakage.errors import InvalidTranscript
from leakage.transcripts._models import SpyGameTranscript
from leakage.transcripts.adapters._fields import get_field, kind_of, some_ids

_ROLES = {"civilian": "civilian", "undercover": "spy"}
_ABSTAIN = frozenset({"0", "null", "none", ""})
_CAUSE_ORDER = {"metric": 0, "vote": 1, "audience": 1, "record": 1}
_SCORES = ("relevance", "novelty", "reasonableness")


def _objects(
    obj: dict[str, Any], key: str, where: str, *, required: bool = True
) -> Iterator[tuple[str, dict[str, Any]]]:
    """The objects in the array ``obj[key]``, each with its field path."""
    items = get_field(obj, key, where, list, required=required) or []
    for i, item in enumerate(items):
        path = f"{where}.{key}[{i}]"
        if not isinstance(item, dict):
            raise InvalidTranscript([(path, f"expected an object, got {kind_of(item)}")])
        yield path, item


def _player_ref(obj: dict[str, Any], key: str, where: str, known: set[str]) -> str:
    """A player id field (an integer upstream) as a known string id."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | str):
        msg = "missing" if value is None else f"expected a player id, got {kind_of(value)}"
        raise InvalidTranscript([(f"{where}.{key}", msg)])
    pid = str(value).strip()
    if pid not in known:
        msg = f"unknown player {value!r} (players: {some_ids(known)})"
        raise InvalidTranscript([(f"{where}.{key}", msg)])
    return pid


def _round(obj: dict[str, Any], key: str, where: str) -> int:
    value = get_field(obj, key, where, int)
    if value < 1:
        raise InvalidTranscript(
            [(f"{where}.{key}", f"expected a round number from 1, got {value}")]
        )
    return value


def _players(game: dict[str, Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The players (transcript form) and each role's word, checked to be one per role."""
    players: list[dict[str, Any]] = []
    seen: set[str] = set()  # the ids so far: a set, so that the check is linear in players
    words: dict[str, set[str]] = {"civilian": set(), "spy": set()}
    for path, p in _objects(game, "players", "game_record"):
        pid = p.get("player_id")
        if isinstance(pid, bool) or not isinstance(pid, int | str) or not str(pid).strip():
            raise InvalidTranscript([(f"{path}.player_id", "expected a player id")])
        if str(pid).strip() in seen:
            raise InvalidTranscript([(f"{path}.player_id", f"player id {pid!r} appears twice")])
        seen.add(str(pid).strip())
        raw_role = get_field(p, "role", path, str)
        if raw_role not in _ROLES:
            raise InvalidTranscript(
                [(f"{path}.role", f"expected 'civilian' or 'undercover', got {raw_role!r}")]
            )
        role = _ROLES[raw_role]
        word = get_field(p, "assigned_concept", path, str)
        words[role].add(word)
        agent = get_field(p, "llm_id", path, str, required=False)
        players.append({"id": str(pid).strip(), "role": role, "agent": agent, "word": word})
    if not players:
        raise InvalidTranscript([("game_record.players", "no players")])
    pair: dict[str, str] = {}
    for role, held in words.items():
        name = "undercover" if role == "spy" else "civilian"
        if len(held) != 1:
            msg = f"the {name} players hold different words: {some_ids(held)}"
            raise InvalidTranscript([("game_record.players", msg if held else f"no {name}")])
        pair[role] = held.pop()
    return players, pair


def _turn_scores(statement: dict[str, Any]) -> dict[str, float] | None:
    """The judges' mean scores of one statement, when the record carries them well-formed."""
    stats = statement.get("metrics")
    stats = stats.get("judges_stats") if isinstance(stats, dict) else None
    if not isinstance(stats, dict):
        return None
    scores = {s: stats.get(f"{s}_score_mean") for s in _SCORES}
    return {s: float(v) for s, v in scores.items() if isinstance(v, int | float)} or None


def _eliminations(
    game: dict[str, Any], process: dict[str, Any], known: set[str]
) -> tuple[list[tuple[str, int, str]], list[dict[str, Any]], int]:
    """``(player, round, cause)`` eliminations, the votes and the number of abstentions."""
    where = "game_record.game_process"
    out: dict[str, tuple[int, str]] = {}
    votes: list[dict[str, Any]] = []
    abstentions = 0
    for key, cause in (("voting_rounds", "vote"), ("audience_decisions", "audience")):
        for path, vr in _objects(process, key, where, required=False):
            rnd = _round(vr, "voting_round_id", path)
            for vpath, v in _objects(vr, "votes", path, required=cause == "vote"):
                voter = _player_ref(v, "voter_id", vpath, known)
                target = v.get("voted_for")
                if target is None or str(target).strip().casefold() in _ABSTAIN:
                    abstentions += 1
                    continue
                votes.append(
                    {
                        "voter": voter,
                        "target": _player_ref(v, "voted_for", vpath, known),
                        "round": rnd,
                    }
                )
            for epath, e in _objects(vr, "eliminated", path, required=False):
                out[_player_ref(e, "player_id", epath, known)] = (rnd, cause)
    for path, m in _objects(process, "metric_eliminations", where, required=False):
        out[_player_ref(m, "player_id", path, known)] = (
            _round(m, "elimination_round", path),
            "metric",
        )
    for path, p in _objects(game, "players", "game_record"):
        rnd = get_field(p, "eliminated_in_voting_round", path, int, required=False)
        pid = str(p["player_id"]).strip()
        if rnd is not None and rnd >= 1 and pid not in out:
            out[pid] = (rnd, "record")
    ordered = sorted(out.items(), key=lambda kv: (kv[1][0], _CAUSE_ORDER[kv[1][1]]))
    return [(pid, rnd, cause) for pid, (rnd, cause) in ordered], votes, abstentions


def _models_by_role(players: list[dict[str, Any]], role: str) -> list[str]:
    return sorted({p["agent"] for p in players if p["role"] == role and p["agent"]})


class CKArenaAdapter:
    """Reads CK-Arena ``game_record`` logs; see the module docstring for the mapping."""

    name = "ck-arena"

    def sniff(self, record: Any) -> bool:
        game = record.get("game_record") if isinstance(record, dict) else None
        return isinstance(game, dict) and "concept_pair" in game and "players" in game

    def convert(self, record: Any, *, path: Path | None, index: int) -> SpyGameTranscript:
        if not isinstance(record, dict):
            raise InvalidTranscript([("", f"expected a JSON object, got {kind_of(record)}")])
        game = get_field(record, "game_record", "", dict)
        game_id = game.get("game_id")
        if isinstance(game_id, bool) or not isinstance(game_id, str | int) or not str(game_id):
            msg = "missing" if game_id is None else f"expected a string, got {kind_of(game_id)}"
            raise InvalidTranscript([("game_record.game_id", msg)])
        players, pair = _players(game)
        known = {p["id"] for p in players}

        process = get_field(game, "game_process", "game_record", dict)
        where = "game_record.game_process"
        turns: list[dict[str, Any]] = []
        scores: list[dict[str, float] | None] = []
        skipped: list[Any] = []
        for spath, s in _objects(process, "statements", where):
            speaker = _player_ref(s, "player_id", spath, known)
            rnd = _round(s, "statement_round", spath)
            text = get_field(s, "content", spath, str)
            if not text.strip():
                skipped.append(s.get("statement_id", spath))
                continue
            turns.append({"player": speaker, "text": text, "round": rnd})
            scores.append(_turn_scores(s))
        eliminations, votes, abstentions = _eliminations(game, process, known)

        meta = self._meta(game, players, path)
        meta.update(
            skipped_empty_statements=len(skipped),
            skipped_statement_ids=skipped,
            abstentions=abstentions,
            elimination_causes={pid: cause for pid, _, cause in eliminations},
            turn_scores=scores,
        )
        stem = f"@{path.stem}" if path is not None else ""
        data = {
            "game": "spygame",
            "id": f"{game_id}{stem}" + (f"#{index}" if index else ""),
            "players": players,
            "words": pair,
            "turns": turns,
            "votes": votes,
            "eliminations": [{"player": pid, "round": rnd} for pid, rnd, _ in eliminations],
            "meta": meta,
        }
        # Imported here: the loader imports the adapter registry, so a top-level import would
        # be circular.
        from leakage.transcripts._native import problems_from_validation_error

        try:
            return SpyGameTranscript.model_validate(data)
        except ValidationError as err:
            raise InvalidTranscript(problems_from_validation_error(err)) from None

    def _meta(
        self, game: dict[str, Any], players: list[dict[str, Any]], path: Path | None
    ) -> dict[str, Any]:
        civilians = _models_by_role(players, "civilian")
        spies = _models_by_role(players, "spy")
        summary = get_field(game, "game_summary", "game_record", dict, required=False) or {}
        winner = get_field(summary, "winner_role", "game_record.game_summary", str, required=False)
        if winner is not None and winner not in _ROLES:
            raise InvalidTranscript(
                [("game_record.game_summary.winner_role", f"unknown role {winner!r}")]
            )
        meta: dict[str, Any] = {
            "source": "ck-arena",
            "source_file": path.name if path is not None else None,
            "upstream_path": path.name.replace("__", "/") if path is not None else None,
            "game_id": str(game["game_id"]),
            "timestamp": game.get("timestamp"),
            "topic_category": get_field(game, "topic_category", "game_record", str, required=False),
            "concept_pair": game.get("concept_pair"),
            "models": {p["id"]: p["agent"] for p in players},
            "civilian_models": civilians,
            "spy_models": spies,
            "matchup": f"{'+'.join(civilians)} vs {'+'.join(spies)}",
            "winner_role": _ROLES[winner] if winner is not None else None,
            "judges": [
                j["id"] for j in game.get("judges") or [] if isinstance(j, dict) and "id" in j
            ],
        }
        raw = game.get("players") or []
        if all(isinstance(p, dict) and isinstance(p.get("is_winner"), bool) for p in raw):
            meta["winners"] = [str(p["player_id"]).strip() for p in raw if p["is_winner"]]
        audience = game.get("audience")
        if isinstance(audience, dict) and audience.get("llm_id"):
            meta["audience_model"] = audience["llm_id"]
        return meta
