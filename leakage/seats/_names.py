"""The seats' names: which observer a figure is computed for (docs/games.md, "Seats")."""

from __future__ import annotations

from typing import Final

from leakage.errors import InvalidInput

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


def check_seat(seat: str, game: str, where: str = "") -> None:
    """An error naming the ``seat`` field when ``seat`` is not one of ``game``'s seats
    (``game``: ``spygame`` or ``chameleon``; ``where``: the game's id, for the message)."""
    seats = SPYGAME_SEATS if game == "spygame" else CHAMELEON_SEATS
    if seat not in seats:
        title = "SpyGame / Undercover" if game == "spygame" else "The Chameleon"
        prefix = f"{where}: " if where else ""
        raise InvalidInput(
            f"{prefix}seat: {seat!r} is not a seat of {title}; its seats are {', '.join(seats)}"
        )
