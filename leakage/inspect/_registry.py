"""Inspect's entry point (``[project.entry-points.inspect_ai] leakage``): importing this
module registers ``leakage/chameleon``, ``leakage/spygame``, ``leakage/play_game``,
``leakage/leakage_scorer``, ``leakage/game_scorer`` and ``leakage/game_metrics``."""

from leakage.inspect._scorer import game_metrics, game_scorer, leakage_scorer
from leakage.inspect._solver import play_game
from leakage.inspect._tasks import chameleon, spygame

__all__ = ["chameleon", "game_metrics", "game_scorer", "leakage_scorer", "play_game", "spygame"]
