"""Leakage curves and reports over batch results (``leakage report``).

The leaderboard (:func:`leaderboard`, ``leakage.leaderboard/1``): which model leaks least,
per game kind and role, with bootstrap intervals over games, rank intervals and a
Holm-corrected "not separable from" list, computed once from a step table for the report,
the service and any caller.
Mean entropy after m clues and P(secret in top k) after m clues with bootstrap intervals
over games, per-clue information gain distributions, the most and least revealing clues and
leakage by model, as PNG / SVG figures, CSVs of every plotted number and one HTML page.
Importing this package imports neither pyarrow nor matplotlib; building a report does.
"""

from leakage.curves._colours import assign_colours, colour_of, colour_sequence, group_colour
from leakage.curves._compare import paired_difference
from leakage.curves._compute import curves
from leakage.curves._data import (
    NONE_GROUP,
    UNKNOWN_DIFFICULTY,
    StepTable,
    load_steps,
    steps_from_table,
)
from leakage.curves._leaderboard import (
    ALL_ROLES_STANDARDISED,
    LEADERBOARD_COLUMNS,
    LEADERBOARD_FORMAT,
    OBSERVERS_SPY_SEAT,
    PAIR_COLUMNS,
    Leaderboard,
    LeaderboardPair,
    LeaderboardRow,
    game_outcomes,
    leaderboard,
    leaderboard_records,
    load_outcomes,
    outcomes_from_reports,
    outcomes_from_steps,
)
from leakage.curves._plane import (
    NO_REFERENCES,
    clue_points,
    default_grouping,
    group_of,
    per_statement,
    plane_axes,
    plane_groups,
    plane_references,
    reference_points,
    reveal_values,
    spy_seat_games,
)
from leakage.curves._report import ReportFiles, build_report, build_site
from leakage.curves._stats import Estimate, bootstrap_mean, bootstrap_ratio
from leakage.curves._views import game_list, models_present, plane_view

__all__ = [
    "ALL_ROLES_STANDARDISED",
    "LEADERBOARD_COLUMNS",
    "LEADERBOARD_FORMAT",
    "NONE_GROUP",
    "NO_REFERENCES",
    "OBSERVERS_SPY_SEAT",
    "PAIR_COLUMNS",
    "UNKNOWN_DIFFICULTY",
    "Estimate",
    "Leaderboard",
    "LeaderboardPair",
    "LeaderboardRow",
    "ReportFiles",
    "StepTable",
    "assign_colours",
    "bootstrap_mean",
    "bootstrap_ratio",
    "build_report",
    "build_site",
    "clue_points",
    "colour_of",
    "colour_sequence",
    "curves",
    "default_grouping",
    "game_list",
    "game_outcomes",
    "group_colour",
    "group_of",
    "leaderboard",
    "leaderboard_records",
    "load_outcomes",
    "load_steps",
    "models_present",
    "outcomes_from_reports",
    "outcomes_from_steps",
    "paired_difference",
    "per_statement",
    "plane_axes",
    "plane_groups",
    "plane_references",
    "plane_view",
    "reference_points",
    "reveal_values",
    "spy_seat_games",
    "steps_from_table",
]
