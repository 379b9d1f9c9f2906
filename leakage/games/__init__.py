"""The game runner: Chameleon and SpyGame engines, agents, game metrics and theory.

Games are played by agents (plain callables over an observation) and come out as
``leakage.transcript/1`` transcripts with the outcome, tallies and invalid moves in
``meta``. See docs/games.md. Whose turn it is in a transcript cut after some turns:
:mod:`leakage.games.turns`.
"""

from leakage.games._cards import Card, load_cards
from leakage.games._types import (
    Agent,
    ChameleonObservation,
    InvalidMove,
    Observation,
    SpyObservation,
    Statement,
)
from leakage.games.chameleon import ChameleonConfig, ChameleonGame, play_chameleon
from leakage.games.spygame import SpyGame, SpyGameConfig, play_spygame
from leakage.games.turns import next_round, next_speaker, with_next_clue

__all__ = [
    "Agent",
    "Card",
    "ChameleonConfig",
    "ChameleonGame",
    "ChameleonObservation",
    "InvalidMove",
    "Observation",
    "SpyGame",
    "SpyGameConfig",
    "SpyObservation",
    "Statement",
    "load_cards",
    "next_round",
    "next_speaker",
    "play_chameleon",
    "play_spygame",
    "with_next_clue",
]
