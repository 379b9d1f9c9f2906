"""The game loop both engines share: ask the agent of the current player's role, step."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from leakage.games._types import Agent, agent_name


class Engine(Protocol):
    done: bool

    @property
    def observation(self) -> Any: ...

    def role(self, player: str) -> str: ...

    def step(self, answer: str) -> bool: ...

    def transcript(self, meta: Mapping[str, Any] | None = None) -> Any: ...


def check_roles(agents: Mapping[str, Agent], roles: tuple[str, ...]) -> dict[str, str]:
    """The agents' names by role; ``ValueError`` naming a role without an agent."""
    missing = [r for r in roles if r not in agents]
    if missing:
        raise ValueError(f"no agent for role {', '.join(missing)}; give one per role")
    return {role: agent_name(a) for role, a in agents.items()}


def run(engine: Engine, agents: Mapping[str, Agent]) -> None:
    """Play a reset engine to the end; then each agent with an ``end_game`` method (one that
    learns across games, e.g. the cheatsheet agent) is given the transcript."""
    while not engine.done:
        obs = engine.observation
        engine.step(agents[engine.role(obs.player)](obs))
    distinct = {id(a): a for a in agents.values()}.values()
    learners = [a for a in distinct if callable(getattr(a, "end_game", None))]
    if learners:
        transcript = engine.transcript()
        for agent in learners:
            agent.end_game(transcript)  # type: ignore[attr-defined]
