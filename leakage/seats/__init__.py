"""Seats: whose posterior a figure is. A seat is what an observer knows (the card, its own
word, the pair, nothing); each figure is computed from one seat (DESIGN.md).

SpyGame / Undercover: ``outside-known`` (an observer told both words and which is the
civilians': ``spy_assignment=known``), ``outside-pair`` (told the pair, not which is whose:
``marginalise``), ``spy`` (a spy's own seat: its word, the civilians' word over an open
vocabulary, :func:`spy_seat`) and ``civilian`` (a voter's own seat: its word only, its role
unknown, :func:`voter_seat`). The Chameleon: ``chameleon`` (the card, not the secret: the
posterior over the secret as scored by default) and ``non-chameleon`` (the card and the
secret: P(player j is the chameleon), :func:`chameleon_seat_trace`). ``ScoreOptions.seat``
scores a game from any of them (``leakage score --seat``). See docs/games.md, "Seats".
"""

from leakage._seats import (
    CHAMELEON_SEATS,
    OPEN_SEATS,
    SEAT_ALIASES,
    SEAT_KNOWS,
    SEAT_NAMES,
    SEATS,
    SPYGAME_SEATS,
    canonical_seat,
    check_seat,
    default_seat,
    seat_sentence,
    settings_seat,
)
from leakage.seats._prior import (
    PAIR_PRIOR_FORMAT,
    PairPrior,
    default_pair_prior_path,
    fit_pair_prior,
    read_pair_prior,
)
from leakage.seats._reader import (
    SEAT_FINE,
    SEAT_SHORTLIST,
    SEAT_TAU,
    SeatReader,
    open_seat_vocabulary,
    seat_reader,
    tiers,
)
from leakage.seats._score import chameleon_seat_trace, spygame_seat_trace
from leakage.seats._spygame import (
    GameRows,
    SpySeat,
    SpySeatStep,
    VoterSeat,
    game_rows,
    pair_reveal_bits,
    reveal_bits,
    seat_shortlist,
    spy_rho,
    spy_seat,
    spy_seat_steps,
    voter_seat,
)
from leakage.seats._trace import SeatTrace, voter_hypotheses, voter_loglik

__all__ = [
    "CHAMELEON_SEATS",
    "OPEN_SEATS",
    "PAIR_PRIOR_FORMAT",
    "SEATS",
    "SEAT_ALIASES",
    "SEAT_FINE",
    "SEAT_KNOWS",
    "SEAT_NAMES",
    "SEAT_SHORTLIST",
    "SEAT_TAU",
    "SPYGAME_SEATS",
    "GameRows",
    "PairPrior",
    "SeatReader",
    "SeatTrace",
    "SpySeat",
    "SpySeatStep",
    "VoterSeat",
    "canonical_seat",
    "chameleon_seat_trace",
    "check_seat",
    "default_pair_prior_path",
    "default_seat",
    "fit_pair_prior",
    "game_rows",
    "open_seat_vocabulary",
    "pair_reveal_bits",
    "read_pair_prior",
    "reveal_bits",
    "seat_reader",
    "seat_sentence",
    "seat_shortlist",
    "settings_seat",
    "spy_rho",
    "spy_seat",
    "spy_seat_steps",
    "spygame_seat_trace",
    "tiers",
    "voter_hypotheses",
    "voter_loglik",
    "voter_seat",
]
