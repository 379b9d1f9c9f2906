"""The Taboo wrapper: each clue scored while the game is played, the game kept as a log."""

from __future__ import annotations

import copy
import json
import re
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import textarena as ta
from textarena.envs.Taboo.env import TabooEnv

from leakage.backends import LikelihoodBackend, create_backend
from leakage.scoring import ScoreOptions, score_transcript
from leakage.transcripts.adapters.textarena_taboo import (
    CLUE_GIVER,
    TABOO_FORMAT,
    TabooAdapter,
)

_ADAPTER = TabooAdapter()
_GUESS = re.compile(r"\[(.*?)\]")
"""How Taboo reads a guess: the first text in square brackets."""


def _taboo_env(env: Any) -> TabooEnv:
    """The Taboo environment under any wrappers; ``TypeError`` for another game."""
    base = env
    while isinstance(base, ta.Wrapper):
        base = base.env
    if not isinstance(base, TabooEnv):
        raise TypeError(
            f"TabooLeakageWrapper wraps TextArena's Taboo (ta.make('Taboo-v0'), ...), "
            f"not {type(base).__name__}"
        )
    return base


def _breaks_taboo(text: str, word: str, taboo_words: list[str]) -> bool:
    """Taboo's own rule: the clue names the word or a taboo word (whole words, any case)."""
    forbidden = "|".join(map(re.escape, [*taboo_words, word]))
    return re.search(rf"\b({forbidden})\b", text, re.IGNORECASE) is not None


class TabooLeakageWrapper(ta.Wrapper):
    """Scores each clue of a TextArena Taboo game as it is given and keeps the game's log.

    ``step`` returns TextArena's ``(done, info)``; after a clue giver's message ``info``
    also holds ``"leakage"``: the posterior over the category's words given the clues so
    far for the hidden word (``top``: the ``top_k`` most probable, with their
    probabilities), ``secret_probability``, ``secret_rank``, ``entropy_bits`` and this
    clue's ``information_gain_bits``, what ``leakage score`` reports for that turn of the
    log, with the ``player`` and its TextArena ``role`` (``Clue Giver``, ``Guesser``). A
    clue the clue giver already gave for this word is counted once (the log's reading,
    :func:`~leakage.transcripts.adapters.textarena_taboo.clue_key`): its step says
    ``repeated`` (the message it repeats) and ``counted`` false, and the posterior is the
    one before it, unchanged. A scoring failure does not stop the game:
    ``info["leakage"]["error"]`` says what went wrong, and the message is logged all the
    same. Guesses are scored too with ``include_guesses``. :attr:`roles` says who plays
    what in the game under way.

    ``backend`` is a backend name (``leakage score -b``, built once with
    ``backend_options``) or a built backend. ``close()`` returns TextArena's rewards and
    game info and, with ``log_path``, appends the game's records (one per hidden word,
    :attr:`records`) to that JSONL file. ``agents`` names who played each seat.
    """

    def __init__(
        self,
        env: Any,
        backend: str | LikelihoodBackend = "cooccurrence",
        backend_options: Mapping[str, Any] | None = None,
        *,
        top_k: int = 5,
        include_guesses: bool = False,
        log_path: str | Path | None = None,
        agents: Mapping[int, str] | None = None,
    ) -> None:
        super().__init__(env)
        self._taboo = _taboo_env(env)
        if isinstance(backend, str):
            backend = create_backend(backend, **dict(backend_options or {}))
        self.backend: LikelihoodBackend = backend
        self.top_k = top_k
        self.options = ScoreOptions(include_chameleon=include_guesses)
        self.log_path = Path(log_path) if log_path is not None else None
        self.agents = dict(agents or {})
        self._records: list[dict[str, Any]] = []
        self._open: dict[tuple[int, int], dict[str, Any]] = {}
        self._game: dict[str, Any] = {}

    @property
    def roles(self) -> dict[int, str]:
        """Each player's TextArena role in the game under way (``Clue Giver`` or ``Guesser``;
        empty before ``reset``)."""
        state = getattr(self._taboo, "state", None)
        mapping = getattr(state, "role_mapping", None) or {} if self._game else {}
        return {pid: role for pid, role in mapping.items() if pid >= 0}  # -1: the game itself

    @property
    def records(self) -> list[dict[str, Any]]:
        """The game's log so far: one ``leakage.textarena-taboo/1`` record per hidden word,
        in the order the words came up (a copy)."""
        return copy.deepcopy(self._records)

    def reset(self, num_players: int, seed: int | None = None) -> Any:
        # Taboo checks these with assert, which python -O drops
        if isinstance(num_players, bool) or not isinstance(num_players, int):
            raise TypeError(f"num_players must be an integer, not {type(num_players).__name__}")
        if num_players < 4 or num_players % 2:
            raise ValueError(f"Taboo needs an even number of players, at least 4: {num_players}")
        out = self.env.reset(num_players=num_players, seed=seed)
        self._records, self._open = [], {}
        self._game = {
            "game_id": uuid.uuid4().hex[:12],
            "env_id": getattr(self._taboo, "env_id", None),
            "textarena_version": getattr(ta, "__version__", None),
            "seed": seed,
            "num_players": num_players,
        }
        return out

    def _record(self, team: int, index: int) -> dict[str, Any]:
        """The record of the team's ``index``-th word, begun when the word comes up."""
        key = (team, index)
        if key not in self._open:
            taboo, state = self._taboo, self._taboo.state
            gs = state.game_state
            members = [p for p in range(state.num_players) if p // taboo.team_size == team]
            players = []
            for pid in members:
                player = {"id": pid, "role": state.role_mapping[pid]}
                if pid in self.agents:
                    player["agent"] = self.agents[pid]
                players.append(player)
            record = {
                "format": TABOO_FORMAT,
                **self._game,
                "word_number": len(self._records) + 1,
                "category": taboo.categories[0],
                "candidates": list(taboo.data),
                "word": gs["word_to_guess"],
                "taboo_words": list(gs["taboo_words"]),
                "team": team,
                "players": players,
                "messages": [],
                "outcome": "open",
                "game_end": None,
            }
            self._records.append(record)
            self._open[key] = record
        return self._open[key]

    def step(self, action: str) -> tuple[bool, Any]:
        taboo = self._taboo
        state = taboo.state
        gs = state.game_state
        pid = state.current_player_id
        role = state.role_mapping[pid]
        team = pid // taboo.team_size
        index = gs["team_word_indices"][team]
        record = self._record(team, index)
        score_before, logged, rnd = gs["score"][team], len(state.logs), gs["round"]

        done, info = self.env.step(action=action)

        # what the game published: the message as the player's team saw it
        text = next((m for src, m in state.logs[logged:] if src == pid), None)
        correct = gs["score"][team] > score_before
        if gs["team_word_indices"][team] > index:
            record["outcome"] = "guessed" if correct else "forfeited"
            del self._open[(team, index)]
        info = dict(info or {})
        if text is None:
            return done, info
        message: dict[str, Any] = {"player": pid, "text": text, "round": rnd}
        if role == CLUE_GIVER:
            message["taboo"] = _breaks_taboo(text, record["word"], record["taboo_words"])
        else:
            guess = _GUESS.search(text)
            message["guess"] = guess.group(1).strip() if guess else None
            message["correct"] = correct
        record["messages"].append(message)
        if role == CLUE_GIVER or self.options.include_chameleon:
            who = {"player": pid, "role": role}
            scored = self._score(record) if text.strip() else {"skipped": "empty message"}
            info["leakage"] = {**who, **scored}
        return done, info

    def _score(self, record: dict[str, Any]) -> dict[str, Any]:
        """The leakage after the record's last message, as ``leakage score`` reports it."""
        found: dict[str, Any] = {
            "transcript_id": f"{record['game_id']}#{record['word_number']}",
            "word_number": record["word_number"],
        }
        try:
            transcript = _ADAPTER.convert(record, path=None, index=0)
            report = score_transcript(transcript, self.backend, self.options)
        # The game goes on whatever scoring meets (a backend out of reach, a text it
        # rejects); the info says what it was, and the log keeps the message to score later.
        except Exception as err:
            return {**found, "error": f"{type(err).__name__}: {err}"}
        last = len(record["messages"]) - 1
        repeat = next(
            (r["repeats"] for r in transcript.meta["repeated_clues"] if r["message"] == last),
            None,
        )
        if repeat is not None:  # counted once: the posterior stays where it was
            found |= {"repeated": repeat, "counted": False, "information_gain_bits": 0.0}
        if not report.steps:
            return {**found, "backend": report.backend, "secret": report.secret}
        step = report.steps[-1]
        top = sorted(step.posterior.items(), key=lambda kv: -kv[1])[: self.top_k]
        return {
            "backend": report.backend,
            "turn": step.index,
            "secret": report.secret,
            "counted": step.counted,
            "top": [[w, p] for w, p in top],
            "secret_probability": step.secret_probability,
            "secret_rank": step.secret_rank,
            "entropy_bits": step.entropy_bits,
            "information_gain_bits": step.information_gain_bits,
            **found,
        }

    def close(self) -> Any:
        result = self.env.close()
        rewards, game_info = result if isinstance(result, tuple) else (result, {})
        reasons = {str(i.get("reason")) for i in (game_info or {}).values() if i.get("reason")}
        end = {
            "rewards": {str(k): v for k, v in (rewards or {}).items()},
            "reason": "; ".join(sorted(reasons)) or None,
        }
        for record in self._records:
            record["game_end"] = end
        if self.log_path is not None and self._records:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            with self.log_path.open("a", encoding="utf-8") as fh:
                for record in self._records:
                    fh.write(json.dumps(record, ensure_ascii=False) + "\n")
        return result
