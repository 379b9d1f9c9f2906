"""Typed field access for raw third-party records, with errors that name the field path."""

from __future__ import annotations

import heapq
from typing import Any

from leakage.errors import InvalidTranscript

_EXPECTED = {dict: "an object", list: "an array", str: "a string", int: "an integer"}


def kind_of(value: Any) -> str:
    """A reader's name for a JSON value's type (``an object``, ``a number``, ``null``)."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "true/false"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def get_field(
    obj: dict[str, Any], key: str, where: str, kind: type, *, required: bool = True
) -> Any:
    """``obj[key]`` checked to be a ``kind``; ``where`` is the path of ``obj`` for the error."""
    path = f"{where}.{key}" if where else key
    value = obj.get(key)
    if value is None:
        if required:
            raise InvalidTranscript([(path, "missing" if key not in obj else "must not be null")])
        return None
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise InvalidTranscript([(path, f"expected {_EXPECTED[kind]}, got {kind_of(value)}")])
    return value


SHOWN_IDS = 20
"""How many ids (or words) an error lists: a record may hold thousands."""


def some_ids(ids: set[str]) -> str:
    """The first ``SHOWN_IDS`` of ``ids`` in sorted order and how many more there are, for an
    error message: a record of 20,000 players makes a message of twenty, in O(n log 20)."""
    shown = heapq.nsmallest(SHOWN_IDS, ids)
    more = len(ids) - len(shown)
    return ", ".join(shown) + (f" and {more:,} more" if more else "")
