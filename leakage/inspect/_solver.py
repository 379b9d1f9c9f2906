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
from leakage.inspect._model import move
from leakage.llm import Message

_CHAT = {"system": ChatMessageSystem, "user": ChatMessageUser, "assistant": ChatMessageAssistant}

DEFAULT_MAX_TOKENS = {"chameleon": 64, "spygame": 96}
"""A move's ``max_tokens`` when neither the eval (``--max-tokens``, the task's config) nor
the role's model sets one: the project's own LLM players' (a word; a sentence)."""

NO_MODEL = "none/none"


class UnboundRole(ValueError):
    """A game role that no model plays (its model role unbound, and no ``--model``)."""


def _chat(messages: list[Message]) -> list[ChatMessage]:
    return [_CHAT[m.role](content=m.content) for m in messages]


def role_models(game: str) -> dict[str, Model]:
    """Each engine role of ``game`` -> the Inspect model bound to its model role
    (``--model-role``), else the eval's model. ``ValueError`` naming the role when neither
    is set (the eval runs with no model, ``UnboundRole``): said before any model is
    called."""
    out: dict[str, Model] = {}
    for role, model_role in GAME_ROLES[game].items():
        model = get_model(role=model_role)
        if str(model) == NO_MODEL:
            raise UnboundRole(
                f"leakage/{game}: the model role {model_role!r} (the {role} players) is not "
                f"bound and the eval has no model: pass --model-role {model_role}=MODEL or "
                "--model MODEL (offline: --model leakage/smollm2-135m, or leakage/scripted "
                "for a smoke test)"
            )
        out[role] = model
    return out


def generation_config(model: Model, game: str, max_tokens: int | None = None) -> GenerateConfig:
    """What a move is generated with: the eval's settings (``--max-tokens``,
    ``--temperature``, ``--seed``, ``--timeout``, ``--max-retries``, ..., the task's config)
    under the role's model's own, and the game's ``max_tokens`` (``max_tokens``, else
    :data:`DEFAULT_MAX_TOKENS`) only where neither sets one. Inspect gives a role's model
    only the eval's operational settings (connections, retries, timeouts); the generation
    settings the user asked for are passed here, so that they hold for every role."""
    from inspect_ai.model._generate_config import active_generate_config

    wanted = active_generate_config().merge(model.config)
    if wanted.max_tokens is None:
        wanted = wanted.merge(GenerateConfig(max_tokens=max_tokens or DEFAULT_MAX_TOKENS[game]))
    return wanted


async def _answer(model: Model, req: MoveRequest, *, retries: int, config: GenerateConfig) -> str:
    """The model's move: asked again with the reason (``retries`` times) while its reply
    breaks the rules, as the project's own LLM players do; the last reply as it is after
    that (the engine then records the invalid move). A ``leakage/`` model reads the move's
    rules (``MOVE``) and answers within them."""
    messages, reply = req.messages, ""
    with move(req):
        for _ in range(retries + 1):
            reply = (await model.generate(_chat(messages), config=config)).completion
            answer, why = req.read(reply)
            if answer is not None:
                return answer
            messages = req.retry(messages, reply, why)
    return last_resort(reply)


def _engine(
    meta: dict[str, Any], agents: dict[str, str]
) -> tuple[ChameleonGame | SpyGame, ChameleonMoves | SpyMoves]:
    """The engine a sample's metadata describes, reset to its seed, and its players' rules."""
    config = dict(meta["config"])
    if meta["game"] == "chameleon":
        cham = ChameleonGame(ChameleonConfig(**config), agents=agents)
        cham.reset(meta["seed"], game_id=meta["game_id"])
        return cham, ChameleonMoves(forbid_secret=True)
    spy = SpyGame(SpyGameConfig(**config), agents=agents)
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
    the mover's role (``get_model(role=...)``; the eval's model when the role is not bound)
    with :func:`generation_config`. Each seat's model (``players[].agent``) and the role
    bindings (``meta.model_roles``) are kept in the transcript, which goes to the store
    under ``leakage_transcript``; the messages show each public move; the output is the
    outcome."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        meta = state.metadata
        game = meta["game"]
        models = role_models(game)
        configs = {r: generation_config(m, game, max_tokens) for r, m in models.items()}
        engine, moves = _engine(meta, {role: str(m) for role, m in models.items()})
        while not engine.done:
            obs = engine.observation
            role = engine.role(obs.player)
            model = models[role]
            req = moves.request(obs)
            answer = await _answer(model, req, retries=retries, config=configs[role])
            if obs.phase in ("clue", "describe", "vote", "guess"):
                state.messages.append(
                    ChatMessageAssistant(
                        content=f"{obs.player} ({obs.phase}): {answer}", model=str(model)
                    )
                )
            engine.step(answer)
        kept = ("run_seed", "difficulty", "pair_similarity")
        extra: dict[str, Any] = {k: meta[k] for k in kept if k in meta}
        extra["model_roles"] = {GAME_ROLES[game][r]: str(m) for r, m in models.items()}
        transcript = engine.transcript(extra)
        state.store.set(TRANSCRIPT_KEY, transcript.model_dump(mode="json"))
        state.output = ModelOutput.from_content(
            model="leakage", content=str(transcript.meta["outcome"])
        )
        return state

    return solve
