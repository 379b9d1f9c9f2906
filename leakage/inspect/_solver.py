"""The solver that plays one game per sample with Inspect models, one model role per game
role, under this project's engines (:mod:`leakage.games`) and its LLM players' prompts and
reply rules (:mod:`leakage.games.agents.llm`)."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from leakage.games import ChameleonConfig, ChameleonGame, SpyGame, SpyGameConfig
from leakage.games.agents.llm import ChameleonMoves, MoveRequest, SpyMoves, last_resort
from leakage.inspect._keys import GAME_ROLES, TRANSCRIPT_KEY
from leakage.llm import Message

_CHAT = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}


def _chat(messages: list[Message]) -> list[ChatMessage]:
    return [_CHAT[m.role](content=m.content) for m in messages]


async def _answer(model: Model, req: MoveRequest, *, retries: int, max_tokens: int) -> str:
    """The model's move: asked again with the reason (``retries`` times) while its reply
    breaks the rules, as the project's own LLM players do; the last reply as it is after
    that (the engine then records the invalid move)."""
    messages, reply = req.messages, ""
    config = GenerateConfig(max_tokens=max_tokens)
    for _ in range(retries + 1):
        reply = (await model.generate(_chat(messages), config=config)).completion
        answer, why = req.read(reply)
        if answer is not None:
            return answer
        messages = req.retry(messages, reply, why)
    return last_resort(reply)


def _engine(meta: dict[str, Any]) -> tuple[ChameleonGame | SpyGame, ChameleonMoves | SpyMoves]:
    """The engine a sample's metadata describes, reset to its seed, and its players' rules."""
    config = dict(meta["config"])
    if meta["game"] == "chameleon":
        cham = ChameleonGame(ChameleonConfig(**config), agents=meta["agents"])
        cham.reset(meta["seed"], game_id=meta["game_id"])
        return cham, ChameleonMoves(forbid_secret=True)
    spy = SpyGame(SpyGameConfig(**config), agents=meta["agents"])
    pair = meta.get("pair")
    spy.reset(
        meta["seed"],
        pair=(pair[0], pair[1]) if pair else None,
        category=meta.get("category"),
        game_id=meta["game_id"],
    )
    return spy, SpyMoves()


@solver
def play_game(retries: int = 2, max_tokens: int | None = None) -> Solver:
    """Play the game a sample describes (its metadata: ``game``, ``seed``, ``game_id``,
    ``config``, for SpyGame optionally ``pair``): each move is asked of the model bound to
    the mover's role (``get_model(role=...)``; the eval's model when the role is not bound).
    The transcript goes to the store under ``leakage_transcript``; the messages show each
    public move; the output is the outcome."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        engine, moves = _engine(meta)
        roles = GAME_ROLES[meta["game"]]
        tokens = max_tokens or (64 if meta["game"] == "chameleon" else 96)
        while not engine.done:
            obs = engine.observation
            model = get_model(role=roles[engine.role(obs.player)])
            answer = await _answer(model, moves.request(obs), retries=retries, max_tokens=tokens)
            if obs.phase in ("clue", "describe", "vote", "guess"):
                state.messages.append(
                    ChatMessageAssistant(
                        content=f"{obs.player} ({obs.phase}): {answer}", model=model.name
                    )
                )
            engine.step(answer)
        kept = ("run_seed", "difficulty", "pair_similarity")
        extra: dict[str, Any] = {k: meta[k] for k in kept if k in meta}
        transcript = engine.transcript(extra)
        state.store.set(TRANSCRIPT_KEY, transcript.model_dump(mode="json"))
        state.output = ModelOutput.from_content(
            model="leakage", content=str(transcript.meta["outcome"])
        )
        return state

    return solve
