"""Inspect AI components: the games as Inspect tasks, leakage as an Inspect scorer.

After ``pip install 'leakage[inspect]'`` Inspect finds them by name (the entry point
``inspect_ai: leakage = leakage.inspect._registry``)::

    inspect eval leakage/chameleon --model-role chameleon=MODEL --model-role non_chameleon=MODEL
    inspect eval leakage/spygame --model-role civilian=MODEL --model-role spy=MODEL
    inspect eval leakage/chameleon --model leakage/smollm2-135m -T games=4   # offline

Each sample is one game, played under this project's engines and rules
(:mod:`leakage.games`) with the prompts of its LLM players
(:mod:`leakage.games.agents.llm`); the finished game's ``leakage.transcript/1`` is kept in
the sample's store under :data:`TRANSCRIPT_KEY`, where :func:`leakage_scorer` and the
``inspect`` input format (``leakage score run.eval``) read it. See docs/inspect.md.

Importing this package does not import inspect_ai; each name below does, on first use.
"""

from typing import TYPE_CHECKING

from leakage.inspect._keys import GAME_ROLES, INSTALL_HINT, TRANSCRIPT_KEY

_LAZY = {
    "chameleon": "leakage.inspect._tasks",
    "spygame": "leakage.inspect._tasks",
    "play_game": "leakage.inspect._solver",
    "leakage_scorer": "leakage.inspect._scorer",
    "game_scorer": "leakage.inspect._scorer",
    "game_metrics": "leakage.inspect._scorer",
    "games_reducer": "leakage.inspect._scorer",
    "leakage_models": "leakage.inspect._model",
}

__all__ = [
    "GAME_ROLES",
    "INSTALL_HINT",
    "TRANSCRIPT_KEY",
    "chameleon",
    "game_metrics",
    "game_scorer",
    "games_reducer",
    "leakage_models",
    "leakage_scorer",
    "play_game",
    "spygame",
]

if TYPE_CHECKING:
    from leakage.inspect._model import leakage_models
    from leakage.inspect._scorer import game_metrics, game_scorer, games_reducer, leakage_scorer
    from leakage.inspect._solver import play_game
    from leakage.inspect._tasks import chameleon, spygame
else:

    def __getattr__(name: str) -> object:
        if name in _LAZY:
            import importlib

            from leakage.inspect._keys import require_inspect

            require_inspect()
            return getattr(importlib.import_module(_LAZY[name]), name)
        raise AttributeError(f"module 'leakage.inspect' has no attribute {name!r}")
