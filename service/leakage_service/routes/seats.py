"""``GET /v1/seats``: the seats a game is scored from, in the library's words.

What the explorer's *seat* picker offers and how every view of a game or a job says whose
posterior its figures are (docs/games.md, "Seats"): each game kind's seats (its default
first), what each seat's observer knows (``leakage.seats.SEAT_KNOWS``), the sentence a
view shows for a seat asked for (``leakage.seats.seat_sentence``), and the default seat
under the option that decides it when no seat is asked for (``leakage.seats.default_seat``:
SpyGame's ``spy_assignment``, The Chameleon's ``include_chameleon``). Nothing is scored.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict

from leakage.seats import (
    CHAMELEON_SEATS,
    SEAT_ALIASES,
    SEAT_KNOWS,
    SPYGAME_SEATS,
    default_seat,
    seat_sentence,
)
from leakage_service.schemas import error_responses

router = APIRouter(prefix="/v1", tags=["score"])


class Seat(BaseModel):
    """One seat: its name, what its observer knows, and the sentence a view shows."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    seat: str
    """The seat's name (the ``seat`` parameter's value)."""
    knows: str
    """What the observer of this seat knows, in plain words (``SEAT_KNOWS``)."""
    sentence: str
    """"Figures from the seat ...: ..." (``seat_sentence``)."""


class GameSeats(BaseModel):
    """A game kind's seats."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    game: Literal["spygame", "chameleon"]
    """The game kind, as transcripts and reports name it."""
    title: str
    """The game's name for people."""
    seats: list[Seat]
    """The seats ``seat`` may name for this game, the default first."""
    default: str
    """The seat a game is scored from when none is asked for, under the default options."""
    option: Literal["spy_assignment", "include_chameleon"]
    """The scoring option that decides the default seat when none is asked for."""
    default_by_option: dict[str, str]
    """The default seat for each value of ``option`` (``include_chameleon``: ``"false"`` /
    ``"true"``; with ``"true"`` every clue counts: an outside observer's seat)."""
    outside: list[Seat]
    """Default seats that are no player's and not a ``seat`` value (``outside-card``)."""


class SeatsResponse(BaseModel):
    """Every game kind's seats, and the old names ``seat`` still takes."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    games: list[GameSeats]
    """SpyGame / Undercover, then The Chameleon."""
    aliases: dict[str, str]
    """Old names of seats (``known``, ``marginalise``) and the seat each stands for."""


def _seat(name: str) -> Seat:
    return Seat(seat=name, knows=SEAT_KNOWS[name], sentence=seat_sentence(name))


def seats_response() -> SeatsResponse:
    """The library's seats, as ``GET /v1/seats`` gives them."""
    spy = {v: default_seat("spygame", v) for v in ("known", "marginalise")}
    cham = {str(v).lower(): default_seat("chameleon", include_chameleon=v) for v in (False, True)}
    games = [
        GameSeats(
            game="spygame",
            title="SpyGame / Undercover",
            seats=[_seat(s) for s in SPYGAME_SEATS],
            default=default_seat("spygame"),
            option="spy_assignment",
            default_by_option=spy,
            outside=[],
        ),
        GameSeats(
            game="chameleon",
            title="The Chameleon",
            seats=[_seat(s) for s in CHAMELEON_SEATS],
            default=default_seat("chameleon"),
            option="include_chameleon",
            default_by_option=cham,
            outside=[_seat(s) for s in sorted(set(cham.values()) - set(CHAMELEON_SEATS))],
        ),
    ]
    return SeatsResponse(games=games, aliases=dict(SEAT_ALIASES))


@router.get(
    "/seats",
    summary="The seats a game may be scored from",
    response_model=SeatsResponse,
    responses=error_responses(401, 429),
)
async def seats() -> SeatsResponse:
    """What ``seat`` may be for each game kind, what each seat's observer knows, and the
    default seat when none is asked for (the explorer's *seat* picker and the seat every
    view names)."""
    return seats_response()
