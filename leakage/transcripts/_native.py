"""Native records: one ``leakage.transcript/1`` record (parsed JSON) validated into a
transcript, and pydantic's errors worded as ``(field, message)`` problems.

Its own module, beneath both ``_load`` (which dispatches a record to it or to an adapter) and
the adapters (which word their own validation errors the same way), so that neither imports
the other.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from leakage.errors import InvalidTranscript, validation_problems
from leakage.transcripts._models import TRANSCRIPT_ADAPTER, ChameleonTranscript, SpyGameTranscript

AnyTranscript = ChameleonTranscript | SpyGameTranscript


def _inconsistent(e: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The transcript's own consistency check, one pair per problem it listed."""
    return [
        (field, msg)
        for item in str(e["ctx"]["problems"]).split("; ")
        for field, _, msg in [item.partition(": ")]
    ]


_BY_TYPE: dict[str, Callable[[Mapping[str, Any]], list[tuple[str, str]]]] = {
    "inconsistent_transcript": _inconsistent,
    "union_tag_invalid": lambda e: [("game", "must be 'chameleon' or 'spygame'")],
    "union_tag_not_found": lambda e: [("game", "missing: say 'chameleon' or 'spygame'")],
}


def problems_from_validation_error(err: ValidationError) -> list[tuple[str, str]]:
    """One ``(field, message)`` pair per pydantic error, with the union tag dropped."""
    return validation_problems(err, strip=("chameleon", "spygame"), by_type=_BY_TYPE)


def parse_transcript(record: Any) -> AnyTranscript:
    """Validate one native ``leakage.transcript/1`` record (parsed JSON)."""
    if not isinstance(record, dict):
        raise InvalidTranscript([("", f"expected a JSON object, got {type(record).__name__}")])
    try:
        return TRANSCRIPT_ADAPTER.validate_python(record)
    except ValidationError as err:
        raise InvalidTranscript(problems_from_validation_error(err)) from None
