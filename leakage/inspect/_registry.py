"""Inspect's entry point (``[project.entry-points.inspect_ai] leakage``): importing this
module registers the tasks ``leakage/chameleon`` and ``leakage/spygame``, the solver
``leakage/play_game``, the scorers ``leakage/leakage_scorer`` and ``leakage/game_scorer``,
the metric ``leakage/game_metrics``, the epoch reducer ``leakage/games`` and the model
provider ``leakage`` (``--model leakage/smollm2-135m``, ``leakage/gemma-3-270m``,
``leakage/scripted``)."""

from leakage.inspect._model import leakage_models
from leakage.inspect._scorer import game_metrics, game_scorer, games_reducer, leakage_scorer
from leakage.inspect._solver import play_game
from leakage.inspect._tasks import chameleon, spygame

__all__ = [
    "chameleon",
    "game_metrics",
    "game_scorer",
    "games_reducer",
    "leakage_models",
    "leakage_scorer",
    "play_game",
    "spygame",
]
