"""The report format ``leakage.report/1``: per-turn posteriors and leakage figures of a game."""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

REPORT_FORMAT: Final = "leakage.report/1"


class _Out(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


class Step(_Out):
    """One turn of the game and what the posterior looked like after it."""

    index: int
    """Position of the turn in the transcript, from 0."""
    player: str
    role: str
    round: int | None = None
    text: str
    counted: bool
    """Whether this turn updated the posterior (Chameleon: non-chameleon turns by default)."""
    posterior: dict[str, float]
    """Candidate -> probability. Chameleon: after every counted turn so far. SpyGame: the
    speaker's word posterior from this statement alone (uniform prior). From a player's seat
    (``settings.seat``): the spy's P of each candidate over the open vocabulary (so not
    summing to 1), or the voter's / non-chameleon's P(player is a spy / the chameleon)."""
    entropy_bits: float
    information_gain_bits: float
    """Entropy drop caused by this turn (SpyGame: from the uniform prior)."""
    kl_bits: float
    """KL divergence of this posterior from the previous one (SpyGame: from uniform)."""
    secret_probability: float | None = None
    """Probability of the secret (SpyGame: of the speaker's own word); null without a secret."""
    secret_rank: int | None = None
    """Rank of the secret, 1 = most probable; ties count against it."""
    speaker_word: str | None = None
    """SpyGame: the word the speaker held."""
    spy_posterior: dict[str, float] | None = None
    """SpyGame: player id -> probability of being a spy, given every statement so far."""
    outlier_scores: dict[str, float] | None = None
    """SpyGame, embedding backends: player id -> how far that player's descriptions so far sit
    from the other speakers' (1 - cosine of the mean vectors); only players who have spoken."""
    seat_view: dict[str, dict[str, Any]] | None = Field(
        default=None, exclude_if=lambda v: v is None
    )
    """A player's seat (``settings.seat``: ``spy``, ``civilian``, ``non-chameleon``): each
    player who sits there -> its figures after this turn (``counted``, ``entropy_bits``,
    ``information_gain_bits``, ``secret_probability``, ``secret_rank``; the spy's seat its
    ``top`` words, the voters' and non-chameleons' ``p_odd_one_out`` per player). The step's
    other fields are the first of them's. Absent from reports of the outside seats."""


class Summary(_Out):
    counted_turns: int
    prior_entropy_bits: float
    final_entropy_bits: float | None = None
    mean_entropy_bits: float | None = None
    """SpyGame: mean entropy of the per-statement speaker's-word posteriors."""
    total_information_gain_bits: float | None = None
    final_secret_probability: float | None = None
    final_secret_rank: int | None = None
    top1: bool | None = None
    top3: bool | None = None
    spy_top_after_round1: list[str] | None = None
    """SpyGame: the player(s) the spy posterior ranks highest after the first round (as many
    as there are spies; equal probabilities are broken by seat order)."""
    spy_hit_after_round1: bool | None = None
    outlier_top_after_round1: list[str] | None = None
    """SpyGame, embedding backends: the player(s) with the highest outlier score after round 1."""
    outlier_hit_after_round1: bool | None = None


class Report(_Out):
    """Leakage of one game under one backend."""

    format: Literal["leakage.report/1"] = REPORT_FORMAT
    game_id: str
    game: Literal["chameleon", "spygame"]
    backend: str
    backend_info: dict[str, Any]
    category: str | None = None
    candidates: list[str]
    secret: str | None
    """Chameleon: the secret word. SpyGame: the civilians' word (steps name the speaker's)."""
    settings: dict[str, Any]
    steps: list[Step]
    summary: Summary
    meta: dict[str, Any]


def report_seat(report: Report) -> str:
    """Whose posterior ``report``'s figures are (``settings.seat``, else the game's default
    seat under its settings; docs/games.md, "Seats")."""
    from leakage._seats import settings_seat

    return settings_seat(report.game, report.settings)
