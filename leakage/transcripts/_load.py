"""Records to transcripts: a file's text into records (one JSON object, an array, or JSONL),
and each record, native or third-party, into a validated transcript or the ``InvalidInput``
that names its problems (``_files`` reads the files).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from leakage.errors import (
    InvalidInput,
    InvalidTranscript,
    UnknownInputFormat,
    validation_problems,
)
from leakage.transcripts._models import (
    TRANSCRIPT_ADAPTER,
    TRANSCRIPT_FORMAT,
    ChameleonTranscript,
    SpyGameTranscript,
)
from leakage.transcripts.adapters import ADAPTERS


def input_formats() -> tuple[str, ...]:
    """Every ``input_format``: ``auto``, ``leakage`` and the adapters' names, read from the
    registry when asked (an adapter registered at run time, or a plug-in installed, is one)."""
    return ("auto", "leakage", *ADAPTERS.names())


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


def _is_native(record: Any) -> bool:
    return isinstance(record, dict) and record.get("format") == TRANSCRIPT_FORMAT


def convert_record(
    record: Any, *, input_format: str = "auto", path: Path | None = None, index: int = 0
) -> AnyTranscript:
    """Turn one parsed record in ``input_format`` into a validated transcript."""
    if input_format == "leakage" or (input_format == "auto" and _is_native(record)):
        return parse_transcript(record)
    if input_format == "auto":
        for adapter in ADAPTERS.values():
            if adapter.sniff(record):
                return adapter.convert(record, path=path, index=index)
        if isinstance(record, dict) and "game" in record:
            return parse_transcript(record)  # native without the format tag: say what is wrong
        raise UnknownInputFormat(
            'not a leakage.transcript/1 record (no "format": "leakage.transcript/1") and '
            f"no adapter recognises it; pass --input-format ({', '.join(input_formats()[1:])})"
        )
    try:
        adapter = ADAPTERS[input_format]
    except KeyError:
        raise UnknownInputFormat(
            f"unknown input format {input_format!r}; choose one of {', '.join(input_formats())}"
        ) from None
    return adapter.convert(record, path=path, index=index)


def check_input_format(input_format: str) -> None:
    """``UnknownInputFormat`` (listing the names there are) unless ``input_format`` is one."""
    if input_format not in input_formats():
        raise UnknownInputFormat(
            f"unknown input format {input_format!r}; choose one of {', '.join(input_formats())}"
        )


TOO_DEEP = "JSON nested too deeply to read (about 1,000 levels or more)"
"""The problem of a record whose nesting exceeds what Python's ``json`` reads (it raises
``RecursionError``, which is not a ``JSONDecodeError``)."""


def _looks_like_jsonl(text: str) -> bool:
    """JSONL when the first line is a complete JSON object on its own (or one nested too
    deeply to read, which line by line is that line's error alone)."""
    first = text.split("\n", 1)[0].strip()
    try:
        return "\n" in text and isinstance(json.loads(first), dict)
    except json.JSONDecodeError:
        return False
    except RecursionError:
        return "\n" in text


def _records(text: str, path: Path) -> Iterator[tuple[int | str, Any | InvalidInput]]:
    """Yield ``(record label, parsed JSON or error)``: one object, an array, or JSONL lines."""
    stripped = text.strip()
    if not stripped:
        yield 0, InvalidTranscript([("", "empty file")], source=str(path))
        return
    if path.suffix != ".jsonl":
        try:
            doc = json.loads(stripped)
        except (json.JSONDecodeError, RecursionError) as err:
            if not _looks_like_jsonl(stripped):
                if isinstance(err, RecursionError):
                    problem = ("", TOO_DEEP)
                else:
                    where = f"line {err.lineno} column {err.colno}"
                    problem = ("", f"malformed JSON: {err.msg.removesuffix(' at')} at {where}")
                yield 0, InvalidTranscript([problem], source=str(path))
                return
        else:
            if isinstance(doc, list):
                yield from enumerate(doc)
            else:
                yield 0, doc
            return
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield f"line {lineno}", json.loads(line)
        except (json.JSONDecodeError, RecursionError) as err:
            msg = (
                TOO_DEEP
                if isinstance(err, RecursionError)
                else f"malformed JSON: {err.msg.removesuffix(' at')} at column {err.colno}"
            )
            yield (
                f"line {lineno}",
                InvalidTranscript([("", msg)], source=str(path), record=f"line {lineno}"),
            )


def _locate(err: InvalidInput, source: str, record: int | str) -> InvalidInput:
    if isinstance(err, InvalidTranscript):
        return err.located(source=source, record=record)
    return type(err)(f"{source}: record {record}: {err}")
