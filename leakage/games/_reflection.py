"""Reflections, the belief statements both engines ask for, read strictly.

A reflection is a JSON object ``{"self": <role>, "suspect": <player id>}`` with optional
fields. The shared ones: ``"thinks"`` (``{other player: whom I think that player suspects}``,
MAgIC's second-order analysis, which its Reasoning metric reads), ``"beliefs"``
(``{player: P(that player is the hunted one)}``) and ``"others_beliefs"`` (``{other player:
{player: P}}``, what I think each other player believes). Each engine adds its own fields
(SpyGame ``other_word``; the Chameleon ``secret_guess`` and ``secret_beliefs``). A reflection
without a valid role and suspect is "not a reflection object"; a malformed optional field
makes the reflection invalid, the reason naming the field.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from leakage.games._types import parse_candidate, parse_player

Reader = Callable[[object], tuple[Any, str | None]]
"""An optional field's reader: ``(value, None)``, ``(None, reason)`` when malformed, or
``(None, None)`` to leave the field out without complaint."""


def read_reflection(
    answer: str,
    *,
    player: str,
    players: Sequence[str],
    roles: Sequence[str],
    fields: Sequence[tuple[str, Reader]] = (),
) -> tuple[dict[str, Any] | None, str | None]:
    """The reflection's fields (``self``, ``suspect``, then the optional ones in the order
    given: each engine's own ``fields``, then ``thinks``, ``beliefs``, ``others_beliefs``), or
    ``None`` and why it cannot be read. ``players``: whom a reflection may name (the living
    players); ``player``: who reflects."""
    try:
        data = json.loads(answer)
    except json.JSONDecodeError:
        data = None
    if (
        not isinstance(data, dict)
        or data.get("self") not in roles
        or parse_player(str(data.get("suspect", "")), tuple(players)) is None
    ):
        return None, "not a reflection object"
    entry: dict[str, Any] = {
        "self": data["self"],
        "suspect": parse_player(str(data["suspect"]), tuple(players)),
    }
    others = [q for q in players if q != player]
    readers: list[tuple[str, Reader]] = [
        *fields,
        ("thinks", lambda v: thinks(v, others, players)),
        ("beliefs", lambda v: probabilities(v, players)),
        ("others_beliefs", lambda v: others_beliefs(v, others, players)),
    ]
    for key, read in readers:
        if key not in data:
            continue
        value, why = read(data[key])
        if why:
            return None, f"{key}: {why}"
        if value is not None:
            entry[key] = value
    return entry, None


def thinks(value: object, others: Sequence[str], players: Sequence[str]) -> tuple[Any, str | None]:
    """``{other player: the player I think it suspects}`` (never itself)."""
    if not isinstance(value, dict):
        return None, "not an object of player ids"
    out: dict[str, str] = {}
    for k, v in value.items():
        who = parse_player(str(k), tuple(others))
        if who is None:
            return None, f"{k!r} is not another living player"
        suspect = parse_player(str(v), [q for q in players if q != who])
        if suspect is None:
            return None, f"{who} cannot suspect {v!r} (not another living player)"
        out[who] = suspect
    return out, None


def probabilities(
    value: object, keys: Sequence[str], *, what: str = "living player", match: Any = parse_player
) -> tuple[Any, str | None]:
    """``{key: probability in [0, 1]}``; keys read by ``match`` (player ids by default)."""
    if not isinstance(value, dict):
        return None, "not an object of probabilities"
    out: dict[str, float] = {}
    for k, v in value.items():
        who = match(str(k), tuple(keys))
        if who is None:
            return None, f"{k!r} is not a {what}"
        if isinstance(v, bool) or not isinstance(v, int | float):
            return None, f"{who}: {v!r} is not a number"
        if not (math.isfinite(v) and 0.0 <= v <= 1.0):
            return None, f"{who}: {v!r} is not a probability"
        out[who] = float(v)
    return out, None


def others_beliefs(
    value: object, others: Sequence[str], players: Sequence[str]
) -> tuple[Any, str | None]:
    """``{other player: {player: probability}}``."""
    if not isinstance(value, dict):
        return None, "not an object of players' beliefs"
    out: dict[str, dict[str, float]] = {}
    for k, v in value.items():
        who = parse_player(str(k), tuple(others))
        if who is None:
            return None, f"{k!r} is not another living player"
        inner, why = probabilities(v, players)
        if why:
            return None, f"{who}: {why}"
        out[who] = inner
    return out, None


def candidate(value: object, candidates: Sequence[str]) -> tuple[Any, str | None]:
    """One of the card's candidates (its spelling on the card)."""
    found = parse_candidate(value, tuple(candidates)) if isinstance(value, str) else None
    return (found, None) if found is not None else (None, f"{value!r} is not a candidate")


def candidate_probabilities(value: object, candidates: Sequence[str]) -> tuple[Any, str | None]:
    """``{candidate: probability}``."""
    return probabilities(value, candidates, what="candidate", match=parse_candidate)
