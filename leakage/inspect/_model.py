"""Inspect model providers that run offline: ``leakage/<local model>`` and ``leakage/scripted``.

Registered with Inspect through the package's entry point (``@modelapi("leakage")``), so
``--model leakage/smollm2-135m`` works wherever leakage is installed, with no network:

* ``leakage/smollm2-135m``, ``leakage/gemma-3-270m`` (the bundled GGUF models), or any name
  or path :func:`leakage.llm.open_llm` takes for a model run here. Inside a game the moves
  are made as the project's own local players make them
  (:func:`leakage.games.agents.llm.constrained_answer`): a vote or a guess is the likeliest
  allowed option, a clue the likeliest allowed one-word completion; descriptions and
  reflections are generated freely under Inspect's ``max_tokens``, ``temperature``, ``seed``
  and ``stop_seqs``. Model args (``-M``): ``kind`` (``local`` or ``ctranslate2``; default
  as ``open_llm`` picks), ``device``, ``threads``, ``precision``, ``models_dir``.
* ``leakage/scripted`` (or ``leakage/scripted-NAME``, a distinct player of the same rules):
  a valid move for every phase by fixed rules, no model at all, for smoke tests. Usage is
  counted in words, so nothing asks for a tokenizer file (mockllm counts with tiktoken's
  ``o200k_base``, which it downloads).

How a move is constrained reaches the provider from the :func:`~leakage.inspect.play_game`
solver through :data:`MOVE` (a context variable set around each ``generate``): Inspect's
call goes on recording the event, the usage and the limits, and the provider's
:class:`~inspect_ai.model.ModelCall` records how the answer was made. Called outside a game
(another task's solver), both providers just answer the chat.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

import anyio.to_thread
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelCall,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from leakage.games.agents.llm import MoveRequest, constrained_answer
from leakage.llm import LLMClient, Message, SupportsTokenizer

MOVE: ContextVar[MoveRequest | None] = ContextVar("leakage_inspect_move", default=None)
"""The move being asked for (its phase, options, banned words), set by the solver."""

SCRIPTED = "scripted"
LOCAL_OPTIONS = ("kind", "device", "threads", "precision", "models_dir")

_CLUES = (
    "ball", "team", "goal", "score", "play", "run", "jump", "swim", "light", "water",
    "house", "music", "green", "quick", "sound", "stone",
)  # fmt: skip
_DESCRIPTIONS = (
    "It is something people often talk about.",
    "You may find it in many homes.",
    "Most people have seen one.",
    "It comes up in everyday life.",
)


@contextmanager
def move(req: MoveRequest) -> Iterator[None]:
    """``req`` as the move every ``generate`` in the block answers."""
    token = MOVE.set(req)
    try:
        yield
    finally:
        MOVE.reset(token)


def _messages(input: list[ChatMessage]) -> list[Message]:
    roles = {"system": "system", "user": "user", "assistant": "assistant", "tool": "user"}
    return [Message(roles[m.role], m.text) for m in input]  # type: ignore[arg-type]


def scripted_reply(name: str, req: MoveRequest | None, messages: list[Message]) -> str:
    """A valid move by fixed rules, varied by ``name`` (``scripted-a`` and ``scripted-b``
    say different clues and vote differently): a clue is the first word of a fixed list
    (rotated by the name) not banned, a vote one of the others, a guess one of the card's
    words, a description a fixed sentence, a reflection suspects one of the others."""
    if req is None:
        return "Answer: hello"
    turn = sum(m.role == "assistant" for m in messages)
    shift = zlib.crc32(name.encode())
    if req.options:
        pick = req.options[shift % len(req.options)]
        return f"Answer: {pick}"
    if req.banned is not None:
        banned = {b.casefold() for b in req.banned}
        words = _CLUES[shift % len(_CLUES) :] + _CLUES[: shift % len(_CLUES)]
        return "Answer: " + next(w for w in words if w not in banned)
    if req.phase == "reflect":
        others = req.others or [""]
        suspect = others[(shift + turn) % len(others)]
        replies = [
            f'Answer: {{"self": "{role}", "suspect": "{suspect}"}}'
            for role in ("non-chameleon", "civilian", "chameleon", "spy")
        ]
        return next((r for r in replies if req.read(r)[0] is not None), replies[0])
    return "Answer: " + _DESCRIPTIONS[shift % len(_DESCRIPTIONS)]


def _words(text: str) -> int:
    return len(text.split())


class LeakageModelAPI(ModelAPI):
    """``leakage/<model>``: a model run here, or ``scripted`` (see the module doc)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.scripted = model_name == SCRIPTED or model_name.startswith(f"{SCRIPTED}-")
        unknown = sorted(set(model_args) - set(LOCAL_OPTIONS))
        if unknown or (self.scripted and model_args):
            takes = "none" if self.scripted else ", ".join(LOCAL_OPTIONS)
            raise ValueError(
                f"leakage/{model_name}: model args {', '.join(unknown or sorted(model_args))} "
                f"are not taken (it takes: {takes})"
            )
        self.client: LLMClient | None = None
        if not self.scripted:
            # loaded now, when Inspect resolves the models: a missing model or package is
            # said before any game starts
            from leakage.llm import open_llm

            self.client = open_llm(model_name, **model_args)

    def max_tokens(self) -> int | None:
        return 64

    def max_connections(self) -> int:
        # a local model answers one call at a time (LocalLM serialises them)
        return 1 if self.client is not None else 16

    async def count_text_tokens(self, text: str) -> int:
        if isinstance(self.client, SupportsTokenizer):
            return len(self.client.tokenizer(text)["input_ids"])
        return _words(text)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> tuple[ModelOutput, ModelCall]:
        req = MOVE.get()
        messages = _messages(input)
        if self.client is None:
            text = scripted_reply(self.model_name, req, messages)
            how: dict[str, Any] = {"mode": "scripted"}
            used = (sum(_words(m.content) for m in messages), _words(text))
        else:
            text, how, used = await anyio.to_thread.run_sync(
                self._local, self.client, messages, req, config
            )
        output = ModelOutput.from_content(model=self.model_name, content=text)
        output.usage = ModelUsage(
            input_tokens=used[0], output_tokens=used[1], total_tokens=sum(used)
        )
        request = {
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "phase": req.phase if req else None,
            "options": req.options if req else None,
            "banned": sorted(req.banned) if req and req.banned is not None else None,
        }
        return output, ModelCall.create(request=request, response={"text": text, **how})

    @staticmethod
    def _local(
        client: LLMClient, messages: list[Message], req: MoveRequest | None, config: GenerateConfig
    ) -> tuple[str, dict[str, Any], tuple[int, int]]:
        if req is not None and req.messages == messages[: len(req.messages)]:
            found = constrained_answer(client, replace(req, messages=messages))
            if found is not None:
                answer, how = found
                prompt_tokens = _count(client, messages)
                return f"Answer: {answer}", how, (prompt_tokens, _count(client, answer))
        gen = client.generate(
            messages,
            max_tokens=config.max_tokens or 64,
            temperature=config.temperature or 0.0,
            seed=config.seed,
            stop=config.stop_seqs,
        )
        used = (gen.prompt_tokens, gen.completion_tokens)
        return gen.text, {"mode": "generated"}, used


def _count(client: LLMClient, text: str | list[Message]) -> int:
    if not isinstance(client, SupportsTokenizer):
        return 0
    if isinstance(text, list):
        text = "\n\n".join(m.content for m in text)
    return len(client.tokenizer(text)["input_ids"])


@modelapi(name="leakage")
def leakage_models() -> type[ModelAPI]:
    """``leakage/<model>``: the bundled local models and the scripted player."""
    return LeakageModelAPI
