"""LLM players through the LLM layer (``OpenAICompatibleClient``, ``LocalLM``).

The prompts restate the rules as the papers give them to their players (Karabag & Topcu for
The Chameleon, Gu et al. for SpyGame) and are plain ``str.format`` templates that a user can
replace (:class:`ChameleonPrompts`, :class:`SpyPrompts`). Answers are read strictly: the
text after the last ``Answer:`` (or the whole reply when there is none) must be exactly one
word / one player id / one candidate / one line / a reflection object. A reply that does not
parse is asked again (``retries`` times) with the reason; after that the last reply is
returned as it is, and the engine records the invalid move with its reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from leakage.games._types import (
    ChameleonObservation,
    Observation,
    SpyObservation,
    parse_candidate,
    parse_one_word,
    parse_player,
)
from leakage.llm import LLMClient, Message

_ANSWER = re.compile(r"answer\s*:\s*(.*)", re.IGNORECASE)


def extract_answer(reply: str) -> str:
    """The text after the last ``Answer:`` on its line, else the whole reply, stripped."""
    found = _ANSWER.findall(reply)
    return (found[-1] if found else reply).strip()


@dataclass(frozen=True)
class ChameleonPrompts:
    system: str = (
        "You are player {player} in The Chameleon, a word game for {n_players} players. "
        "The category is {category}; the card lists {k} words: {candidates}. One of them is "
        "the secret word. Every player except one, the chameleon, knows the secret. Each "
        "player says one word related to the secret, in turn; then everyone votes for the "
        "player they think is the chameleon. If the chameleon is caught, it may guess the "
        "secret and wins if it guesses right. {role_line}"
    )
    non_chameleon: str = (
        "You are not the chameleon. The secret word is {secret}. Help the others recognise "
        "you without giving the secret away to the chameleon."
    )
    chameleon: str = (
        "You are the chameleon: you do not know the secret. Blend in so that you are not "
        "caught, and work out the secret from the others' words."
    )
    clue: str = (
        "Words said so far: {clues}. Say your one word (not the secret itself). "
        "Reply in the form 'Answer: <word>'."
    )
    vote: str = (
        "All words: {clues}. Vote for the player you think is the chameleon, one of: "
        "{others}. Reply in the form 'Answer: <player id>'."
    )
    guess: str = (
        "You were caught. All words: {clues}. Which word of the card is the secret? "
        "Reply in the form 'Answer: <word from the card>'."
    )


@dataclass(frozen=True)
class SpyPrompts:
    system: str = (
        "You are player {player} in a game of 'Who is the spy?' with {n_players} players. "
        "Most players share one word; the spy holds a different but related word. {role_line}"
        " Each round every living player describes their word in one short sentence without "
        "saying it, then reflects on who the spy is, then everyone votes; the most voted "
        "player is out. Your word is {word}."
    )
    role_unknown: str = "Nobody is told whether they are the spy; work it out."
    role_known: str = "You are a {role}."
    describe: str = (
        "Round {round}. Statements so far:\n{statements}\nDescribe your word in one short "
        "sentence without saying it. Reply in the form 'Answer: <sentence>'."
    )
    reflect: str = (
        "Round {round}. Statements so far:\n{statements}\nDo you think you are the spy, and "
        "whom do you suspect among {others}? Reply in the form "
        'Answer: {{"self": "civilian" or "spy", "suspect": "<player id>"}}.'
    )
    vote: str = (
        "Round {round}. Statements so far:\n{statements}\nVote for the player to eliminate, "
        "one of: {others}. Reply in the form 'Answer: <player id>'."
    )


Parser = Callable[[str], str | None]


class _LLMPlayer:
    """One move = the system prompt and the phase's prompt, both filled from ``_fields``."""

    game = ""

    def __init__(self, client: LLMClient, *, retries: int = 2, max_tokens: int = 64) -> None:
        self.client = client
        self.retries = retries
        self.max_tokens = max_tokens
        self.name = f"llm:{client.name}"

    def _fields(self, obs: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _parsers(self, obs: Any, others: list[str]) -> dict[str, Parser]:
        raise NotImplementedError

    def __call__(self, obs: Observation, /) -> str:
        kind = ChameleonObservation if self.game == "chameleon" else SpyObservation
        if not isinstance(obs, kind):
            raise TypeError(f"{type(self).__name__} plays {self.game}")
        fields = self._fields(obs)
        prompts = self.prompts  # type: ignore[attr-defined]
        system = Message("system", prompts.system.format(**fields))
        user = Message("user", getattr(prompts, obs.phase).format(**fields))
        parse = self._parsers(obs, fields["others"].split(", "))[obs.phase]
        return self._ask([system, user], parse)

    def _ask(self, messages: list[Message], parse: Parser) -> str:
        reply = ""
        for _ in range(self.retries + 1):
            reply = self.client.generate(messages, max_tokens=self.max_tokens).text
            parsed = parse(extract_answer(reply))
            if parsed is not None:
                return parsed
            messages = [
                *messages,
                Message("assistant", reply),
                Message("user", "That answer could not be read. Follow the reply form exactly."),
            ]
        return extract_answer(reply) or reply


class ChameleonLLMAgent(_LLMPlayer):
    """A Chameleon player (either role) asking an LLM for every move."""

    game = "chameleon"

    def __init__(self, client: LLMClient, prompts: ChameleonPrompts = ChameleonPrompts(), **kw):
        super().__init__(client, **kw)
        self.prompts = prompts

    def _fields(self, obs: ChameleonObservation) -> dict[str, Any]:
        p = self.prompts
        return {
            "player": obs.player,
            "n_players": len(obs.players),
            "category": obs.category,
            "k": len(obs.candidates),
            "candidates": ", ".join(obs.candidates),
            "role_line": p.chameleon
            if obs.secret is None
            else p.non_chameleon.format(secret=obs.secret),
            "clues": "; ".join(f"{q}: {c}" for q, c in obs.clues) or "(none yet)",
            "others": ", ".join(q for q in obs.players if q != obs.player),
        }

    def _parsers(self, obs: ChameleonObservation, others: list[str]) -> dict[str, Parser]:
        return {
            "clue": parse_one_word,
            "vote": lambda a: parse_player(a, others),
            "guess": lambda a: parse_candidate(a, obs.candidates),
        }


def _reflection(answer: str, others: list[str]) -> str | None:
    try:
        data = json.loads(answer)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("self") not in ("civilian", "spy"):
        return None
    suspect = parse_player(str(data.get("suspect", "")), others)
    return None if suspect is None else json.dumps({**data, "suspect": suspect})


def _one_line(answer: str) -> str | None:
    text = answer.strip().strip('"')
    return text if text and "\n" not in text else None


class SpyLLMAgent(_LLMPlayer):
    """A SpyGame player asking an LLM for every move."""

    game = "spygame"

    def __init__(self, client: LLMClient, prompts: SpyPrompts = SpyPrompts(), **kw):
        kw.setdefault("max_tokens", 96)
        super().__init__(client, **kw)
        self.prompts = prompts

    def _fields(self, obs: SpyObservation) -> dict[str, Any]:
        p = self.prompts
        return {
            "player": obs.player,
            "n_players": len(obs.players),
            "word": obs.word,
            "role_line": p.role_unknown if obs.role is None else p.role_known.format(role=obs.role),
            "round": obs.round,
            "statements": "\n".join(f"{s.player}: {s.text}" for s in obs.statements)
            or "(none yet)",
            "others": ", ".join(q for q in obs.alive if q != obs.player),
        }

    def _parsers(self, obs: SpyObservation, others: list[str]) -> dict[str, Parser]:
        return {
            "describe": _one_line,
            "reflect": lambda a: _reflection(a, others),
            "vote": lambda a: parse_player(a, others),
        }
