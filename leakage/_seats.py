"""The seats' names: which observer a figure is computed for (docs/games.md, "Seats")."""

from __future__ import annotations

from typing import Final

from leakage.errors import InvalidInput, InvalidTranscript

SPYGAME_SEATS: Final = ("outside-known", "outside-pair", "civilian", "spy")
"""The seats of SpyGame / Undercover, the first the default."""
CHAMELEON_SEATS: Final = ("chameleon", "non-chameleon")
"""The seats of The Chameleon, the first the default (with ``include_chameleon`` off)."""
SEAT_ALIASES: Final = {"known": "outside-known", "marginalise": "outside-pair"}
"""The old names of the outside seats (``spy_assignment``), still taken."""
SEATS: Final = (*SPYGAME_SEATS, *CHAMELEON_SEATS)
"""Every seat's name."""
SEAT_NAMES: Final = (*SEATS, *SEAT_ALIASES)
"""Every name a seat option takes: the seats and their aliases."""
OPEN_SEATS: Final = ("civilian", "spy")
"""Seats whose unknown word ranges over an open vocabulary (``leakage.vocab``)."""


def canonical_seat(name: str) -> str:
    """The seat ``name`` stands for (an alias resolved); an unknown name is an error that
    names the ``seat`` field and the choices."""
    seat = SEAT_ALIASES.get(name, name)
    if seat not in SEATS:
        raise InvalidInput(
            f"seat: unknown seat {name!r}; choose from {', '.join(SEATS)} "
            f"(or the old names {', '.join(SEAT_ALIASES)})"
        )
    return seat


def seat_error(message: str, record: str | int | None = None) -> InvalidTranscript:
    """A game that cannot be scored from the seat asked for: an error whose field is
    ``seat`` (and whose record is the game), so a batch lists it and goes on."""
    return InvalidTranscript([("seat", message)], record=record)


def check_seat(seat: str, game: str, record: str | int | None = None) -> None:
    """An error naming the ``seat`` field when ``seat`` is not one of ``game``'s seats
    (``game``: ``spygame`` or ``chameleon``; ``record``: the game, for the message)."""
    seats = SPYGAME_SEATS if game == "spygame" else CHAMELEON_SEATS
    if seat not in seats:
        title = "SpyGame / Undercover" if game == "spygame" else "The Chameleon"
        raise seat_error(
            f"{seat!r} is not a seat of {title}; its seats are {', '.join(seats)}", record
        )


SEAT_KNOWS: Final = {
    "outside-known": "an outside observer told both words and which is the civilians'",
    "outside-pair": "an outside observer told the pair, not which word is whose",
    "civilian": "each civilian, who knows its own word only (not the other, not its role)",
    "spy": "each spy, who knows its own word and ranks the civilians' over an open vocabulary",
    "chameleon": "the chameleon, who knows the card, not the secret",
    "non-chameleon": "each non-chameleon, who knows the card and the secret",
    "outside-card": "an outside observer who knows the card and counts every clue",
}
"""What the observer of each seat knows (``outside-card``: a Chameleon game scored with
``include_chameleon``, no player's seat)."""


def default_seat(game: str, spy_assignment: str = "known", include_chameleon: bool = False) -> str:
    """The seat a game is scored from when none is asked for."""
    if game == "spygame":
        return SEAT_ALIASES.get(spy_assignment, spy_assignment)
    return "outside-card" if include_chameleon else "chameleon"


def settings_seat(game: str, settings: dict[str, object]) -> str:
    """The seat of a report's or a run's ``settings`` (``score_options``): ``seat`` when
    set, else the game's default under the settings."""
    seat = settings.get("seat")
    if isinstance(seat, str) and seat:
        return SEAT_ALIASES.get(seat, seat)
    return default_seat(
        game,
        str(settings.get("spy_assignment") or "known"),
        bool(settings.get("include_chameleon")),
    )


def seat_sentence(seat: str) -> str:
    """One sentence for a view: whose posterior its figures are."""
    return f"Figures from the seat {seat}: {SEAT_KNOWS.get(seat, seat)}."
