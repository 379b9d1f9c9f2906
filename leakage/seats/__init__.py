"""Seats: whose posterior a figure is. A seat is what an observer knows (the card, its own
word, the pair, nothing); each figure is computed from one seat (DESIGN.md).

SpyGame / Undercover: ``outside-known`` (an observer told both words and which is the
civilians': ``spy_assignment=known``), ``outside-pair`` (told the pair, not which is whose:
``marginalise``), ``spy`` (a spy's own seat: its word, the civilians' word over an open
vocabulary, :func:`spy_seat`) and ``civilian`` (a voter's own seat: its word only, its role
unknown, :func:`voter_seat`). See docs/games.md, "Seats".
"""

from leakage.seats._prior import (
    PAIR_PRIOR_FORMAT,
    PairPrior,
    default_pair_prior_path,
    fit_pair_prior,
    read_pair_prior,
)
from leakage.seats._spygame import (
    GameRows,
    SpySeat,
    SpySeatStep,
    VoterSeat,
    game_rows,
    seat_shortlist,
    spy_seat,
    voter_seat,
)

SPYGAME_SEATS = ("outside-known", "outside-pair", "civilian", "spy")
"""The seats of SpyGame / Undercover, the first the default."""

__all__ = [
    "PAIR_PRIOR_FORMAT",
    "SPYGAME_SEATS",
    "GameRows",
    "PairPrior",
    "SpySeat",
    "SpySeatStep",
    "VoterSeat",
    "default_pair_prior_path",
    "fit_pair_prior",
    "game_rows",
    "read_pair_prior",
    "seat_shortlist",
    "spy_seat",
    "voter_seat",
]
