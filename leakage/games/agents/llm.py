"""LLM players through the LLM layer (``OpenAICompatibleClient``, ``LocalLM``).

The prompts restate the rules as the papers give them to their players (Karabag & Topcu for
The Chameleon, Gu et al. for SpyGame) and are plain ``str.format`` templates that a user can
replace (:class:`ChameleonPrompts`, :class:`SpyPrompts`).

A local model (a client with a tokenizer: :class:`~leakage.llm.LocalLM`) answers under
constraints (:mod:`leakage.games.agents._constrained`): a vote is the most likely of the
other players, a guess the most likely candidate, a clue the most likely allowed one-word
completion (not a word said before; not the secret, and for the chameleon not a card word,
when ``forbid_secret``). Small models then play valid games without being asked again.

An endpoint's answers are read strictly: the text after the last ``Answer:`` (or the whole
reply when there is none) must be exactly one word / one player id / one candidate / one
line / a reflection object, and a clue must follow the same rules as above. A reply that does
not is asked again (``retries`` times) with the reason; after that the last reply is returned
as it is, and the engine records the invalid move with its reason (``meta.invalid``).
``last_move`` says how the last answer was made (for tests and logs).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from leakage.games._types import (
    ChameleonObservation,
    Observation,
    SpyObservation,
    parse_candidate,
    parse_one_word,
    parse_player,
)
from leakage.games.agents._constrained import chat_text, choose, one_word
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
    reflect: str = (
        "Words said so far: {clues}. Whom do you think is the chameleon, among {others}? "
        'Reply in the form Answer: {{"self": "chameleon" or "non-chameleon", '
        '"suspect": "<player id>"}}.'
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
Check = Callable[[str], str | None]
"""Why a parsed answer breaks the rules (None: it does not)."""


@dataclass(frozen=True)
class MoveRequest:
    """One move as text to ask for: the messages, and how a reply is read and checked.

    An LLM player built on another harness (the Inspect solver, :mod:`leakage.inspect`)
    sends ``messages`` to its own model, reads each reply with :meth:`read` and, while it
    says why a reply breaks the rules, asks again with :meth:`retry`; this module's
    players do the same through an ``LLMClient``.
    """

    phase: str
    messages: list[Message]
    parse: Parser
    check: Check | None = None
    options: list[str] | None = None
    """The answers allowed in this phase when they are a fixed list (votes, guesses)."""
    banned: dict[str, str] | None = None
    """Words a one-word answer of this phase must not be, each with the reason."""
    others: list[str] | None = None
    """The other players this move may name (a vote's or a reflection's suspect)."""

    def read(self, reply: str) -> tuple[str | None, str]:
        """``(answer, "")`` for a reply the rules accept, else ``(None, why)``."""
        parsed = self.parse(extract_answer(reply))
        if parsed is None:
            return None, "could not be read"
        why = (self.check and self.check(parsed)) or ""
        return (None, why) if why else (str(parsed), "")

    def retry(self, messages: list[Message], reply: str, why: str) -> list[Message]:
        """``messages`` with the rejected reply and the reason it was rejected."""
        return corrected(messages, reply, why)


def corrected(messages: list[Message], reply: str, why: str) -> list[Message]:
    """``messages`` with the rejected reply and the reason it was rejected: what a player is
    asked again."""
    return [
        *messages,
        Message("assistant", reply),
        Message("user", f"That answer {why}. Follow the reply form exactly."),
    ]


class Asked(NamedTuple):
    """What :func:`ask_until_read` got."""

    answer: str | None
    """The accepted answer; None when every try was rejected."""
    reply: str
    """The last reply."""
    why: str
    """Why the last reply was rejected ('' when it was accepted)."""
    tries: int
    """How many times the client was asked."""


def ask_until_read(
    client: LLMClient,
    messages: list[Message],
    read: Callable[[str], tuple[str | None, str]],
    *,
    retries: int,
    max_tokens: int,
) -> Asked:
    """Ask ``client`` until ``read`` accepts its reply (``(answer, "")``; ``(None, why)``
    rejects it), at most ``retries + 1`` times; each retry is asked with the rejected reply
    and the reason (:func:`corrected`)."""
    reply, why = "", ""
    for tries in range(1, retries + 2):
        reply = client.generate(messages, max_tokens=max_tokens).text
        answer, why = read(reply)
        if answer is not None:
            return Asked(answer, reply, "", tries)
        messages = corrected(messages, reply, why)
    return Asked(None, reply, why, retries + 1)


def constrained_answer(client: LLMClient, req: MoveRequest) -> tuple[str, dict[str, Any]] | None:
    """The answer a local model gives under the rules' constraints
    (:mod:`leakage.games.agents._constrained`): the likeliest of a phase's fixed options, or
    the allowed one-word answer its decoding reaches; with how it was made (``last_move``).
    None for a client whose tokenizer is not here (an endpoint), a phase without such a
    constraint (a description, a reflection), or a one-word phase where no allowed word was
    reached: the caller then asks for a free reply."""
    prompt = chat_text(client, req.messages)
    if prompt is None:
        return None
    if req.options:
        answer, scores = choose(client, prompt, req.options)
        return answer, {"mode": "scored", "options": dict(zip(req.options, scores, strict=True))}
    if req.banned is not None:
        word, ranked = one_word(client, prompt, req.banned)
        if word is not None:
            return word, {"mode": "one-word", **ranked}
    return None


def last_resort(reply: str) -> str:
    """What a player answers when every try was rejected: the reply as it is (the engine
    then records the invalid move and its reason)."""
    return extract_answer(reply) or reply


class _Moves:
    """The prompts and rules of one game kind: an observation in, a :class:`MoveRequest`
    out. Knows nothing of the model that answers."""

    game = ""
    prompts: Any

    def _fields(self, obs: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _parsers(self, obs: Any, others: list[str]) -> dict[str, Parser]:
        raise NotImplementedError

    def _options(self, obs: Any, others: list[str]) -> list[str] | None:
        """The answers allowed in this phase when they are a fixed list."""
        return None

    def _banned(self, obs: Any) -> dict[str, str] | None:
        """Words a one-word answer of this phase must not be, each with the reason (None:
        not a one-word phase)."""
        return None

    def request(self, obs: Observation) -> MoveRequest:
        """What to ask the model for this observation, and how to read its reply."""
        kind = ChameleonObservation if self.game == "chameleon" else SpyObservation
        if not isinstance(obs, kind):
            raise TypeError(f"{type(self).__name__} plays {self.game}")
        fields = self._fields(obs)
        system = Message("system", self.prompts.system.format(**fields))
        user = Message("user", getattr(self.prompts, obs.phase).format(**fields))
        others = fields["others"].split(", ")
        banned = self._banned(obs)
        return MoveRequest(
            phase=obs.phase,
            messages=[system, user],
            parse=self._parsers(obs, others)[obs.phase],
            check=_not_banned(banned) if banned is not None else None,
            options=self._options(obs, others),
            banned=banned,
            others=others,
        )


class _LLMPlayer(_Moves):
    """One move = the system prompt and the phase's prompt, both filled from ``_fields``."""

    def __init__(
        self,
        client: LLMClient,
        *,
        retries: int = 2,
        max_tokens: int = 64,
        constrained: bool = True,
    ) -> None:
        self.client = client
        self.retries = retries
        self.max_tokens = max_tokens
        self.constrained = constrained
        """Answer under the rules' constraints when the client is a local model."""
        self.name = f"llm:{client.name}"
        self.last_move: dict[str, Any] | None = None

    def __call__(self, obs: Observation, /) -> str:
        req = self.request(obs)
        found = constrained_answer(self.client, req) if self.constrained else None
        if found is not None:
            answer, self.last_move = found
            return answer
        return self._ask(req)

    def _ask(self, req: MoveRequest) -> str:
        got = ask_until_read(
            self.client, req.messages, req.read, retries=self.retries, max_tokens=self.max_tokens
        )
        if got.answer is not None:
            self.last_move = {"mode": "generated", "tries": got.tries}
            return got.answer
        self.last_move = {"mode": "generated", "tries": got.tries, "rejected": got.why}
        return last_resort(got.reply)


def _not_banned(banned: dict[str, str]) -> Check:
    reasons = {b.casefold(): why for b, why in banned.items()}

    def check(word: str) -> str | None:
        why = reasons.get(word.casefold())
        return None if why is None else f"is not allowed ({word!r} {why})"

    return check


class ChameleonMoves(_Moves):
    """The Chameleon's prompts and rules for an LLM player (either role).

    ``forbid_secret`` (default True) keeps its clues valid under the rule that forbids the
    secret (``ChameleonConfig(forbid_secret=True)``) and under the paper's, which allows it:
    a non-chameleon never says the secret, a chameleon never says a card word (it cannot
    know which is the secret). False lets either say any word not said before.
    """

    game = "chameleon"

    def __init__(
        self, prompts: ChameleonPrompts = ChameleonPrompts(), *, forbid_secret: bool = True
    ) -> None:
        self.prompts = prompts
        self.forbid_secret = forbid_secret

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
            "reflect": lambda a: _reflection(a, others, ("chameleon", "non-chameleon")),
            "vote": lambda a: parse_player(a, others),
            "guess": lambda a: parse_candidate(a, obs.candidates),
        }

    def _options(self, obs: ChameleonObservation, others: list[str]) -> list[str] | None:
        return {"vote": others, "guess": list(obs.candidates)}.get(obs.phase)

    def _banned(self, obs: ChameleonObservation) -> dict[str, str] | None:
        if obs.phase != "clue":
            return None
        banned: dict[str, str] = {}
        if self.forbid_secret and obs.secret is None:
            banned |= dict.fromkeys(obs.candidates, "is a card word; it could be the secret")
        elif self.forbid_secret and obs.secret is not None:
            banned[obs.secret] = "is the secret"
        return banned | dict.fromkeys((c for _, c in obs.clues), "was said before")


def _reflection(
    answer: str, others: list[str], roles: tuple[str, ...] = ("civilian", "spy")
) -> str | None:
    try:
        data = json.loads(answer)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or data.get("self") not in roles:
        return None
    suspect = parse_player(str(data.get("suspect", "")), others)
    return None if suspect is None else json.dumps({**data, "suspect": suspect})


def _one_line(answer: str) -> str | None:
    text = answer.strip().strip('"')
    return text if text and "\n" not in text else None


class SpyMoves(_Moves):
    """SpyGame's prompts and rules for an LLM player."""

    game = "spygame"

    def __init__(self, prompts: SpyPrompts = SpyPrompts()) -> None:
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

    def _options(self, obs: SpyObservation, others: list[str]) -> list[str] | None:
        return others if obs.phase == "vote" else None


class ChameleonLLMAgent(ChameleonMoves, _LLMPlayer):
    """A Chameleon player (either role) asking an LLM for every move (the rules of
    :class:`ChameleonMoves`)."""

    def __init__(
        self,
        client: LLMClient,
        prompts: ChameleonPrompts = ChameleonPrompts(),
        *,
        forbid_secret: bool = True,
        **kw: Any,
    ):
        _LLMPlayer.__init__(self, client, **kw)
        ChameleonMoves.__init__(self, prompts, forbid_secret=forbid_secret)


class SpyLLMAgent(SpyMoves, _LLMPlayer):
    """A SpyGame player asking an LLM for every move."""

    def __init__(self, client: LLMClient, prompts: SpyPrompts = SpyPrompts(), **kw: Any):
        kw.setdefault("max_tokens", 96)
        _LLMPlayer.__init__(self, client, **kw)
        SpyMoves.__init__(self, prompts)
