"""Records to transcripts: a file's text into records (one JSON object, an array, or JSONL),
and each record, native or third-party, into a validated transcript or the ``InvalidInput``
that names its problems (``_files`` reads the files).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from leakage.errors import InvalidInput, InvalidTranscript, UnknownInputFormat
from leakage.transcripts._json import json_problems, loads
from leakage.transcripts._models import TRANSCRIPT_FORMAT
from leakage.transcripts._native import (
    AnyTranscript,
    parse_transcript,
)
from leakage.transcripts.adapters import ADAPTERS


def input_formats() -> tuple[str, ...]:
    """Every ``input_format``: ``auto``, ``leakage`` and the adapters' names, read from the
    registry when asked (an adapter registered at run time, or a plug-in installed, is one)."""
    return ("auto", "leakage", *ADAPTERS.names())


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


def jsonl_lines(text: str) -> list[str]:
    """The lines of a JSONL text: split at ``\n`` (a ``\r`` before it dropped) and nowhere
    else. ``str.splitlines`` also splits at U+2028, U+2029, U+0085 and form feeds, which JSON
    allows raw inside a string: a record holding one would be cut in two."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _malformed(err: json.JSONDecodeError, *, line: bool) -> str:
    where = f"line {err.lineno} column {err.colno}" if line else f"column {err.colno}"
    return f"malformed JSON: {err.msg.removesuffix(' at')} at {where}"


def _checked(
    record: Any, flagged: bool, *, source: str | None = None, label: int | str | None = None
) -> Any | InvalidTranscript:
    """``record`` (of a text ``loads`` read, ``flagged`` as it said), or the
    ``InvalidTranscript`` naming its lone surrogates, over-long integers, NaN and repeated
    keys."""
    problems = json_problems(record) if flagged else []
    if problems:
        return InvalidTranscript(problems, source=source, record=label)
    return record


def parse_record(
    text: str, *, source: str | None = None, record: int | str | None = None
) -> Any | InvalidTranscript:
    """One record's JSON text (a JSONL line) parsed, or the ``InvalidTranscript`` that says
    what is wrong with it: malformed, nested too deeply to read, or holding what
    ``json_problems`` finds (each named by its field)."""
    try:
        doc, flagged = loads(text)
    except json.JSONDecodeError as err:
        problem = ("", _malformed(err, line=False))
        return InvalidTranscript([problem], source=source, record=record)
    except RecursionError:
        return InvalidTranscript([("", TOO_DEEP)], source=source, record=record)
    return _checked(doc, flagged, source=source, label=record)


def _looks_like_jsonl(text: str) -> bool:
    """JSONL when the first line is a complete JSON object on its own (or one nested too
    deeply to read, which line by line is that line's error alone)."""
    first = text.split("\n", 1)[0].strip()
    try:
        return "\n" in text and isinstance(loads(first)[0], dict)
    except json.JSONDecodeError:
        return False
    except RecursionError:
        return "\n" in text


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{},]')
"""A JSON text's strings and structural characters (what splitting an array needs)."""


def array_elements(text: str) -> list[str] | None:
    """The texts of the elements of the JSON array ``text`` (split by its brackets and
    commas, outside strings), for an array ``json`` cannot read whole; None when ``text``
    is not one array."""
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] != "[":
        return None
    depth, begin = 0, start + 1
    out: list[str] = []
    for m in _TOKENS.finditer(text, start):
        tok = m.group()
        if tok in "[{":
            depth += 1
        elif tok in "]}":
            depth -= 1
            if depth == 0:
                last = text[begin : m.start()]
                if last.strip() or out:
                    out.append(last)
                return out if not text[m.end() :].strip() else None
        elif tok == "," and depth == 1:
            out.append(text[begin : m.start()])
            begin = m.end()
    return None


def _records(text: str, path: Path) -> Iterator[tuple[int | str, Any | InvalidInput]]:
    """Yield ``(record label, parsed JSON or error)``: one object, an array, or JSONL lines.
    A record that holds what ``json_problems`` finds is its own error; the others are read."""
    stripped = text.strip()
    source = str(path)
    if not stripped:
        yield 0, InvalidTranscript([("", "empty file")], source=source)
        return
    if path.suffix != ".jsonl":
        try:
            doc, flagged = loads(stripped)
        except (json.JSONDecodeError, RecursionError) as err:
            elements = array_elements(stripped) if isinstance(err, RecursionError) else None
            if elements is not None:  # one record nests too deeply: it fails alone
                for i, element in enumerate(elements):
                    yield i, parse_record(element, source=source, record=i)
                return
            if not _looks_like_jsonl(stripped):
                if isinstance(err, RecursionError):
                    problem = ("", TOO_DEEP)
                else:
                    problem = ("", _malformed(err, line=True))
                yield 0, InvalidTranscript([problem], source=source)
                return
        else:
            if isinstance(doc, list):
                for i, record in enumerate(doc):
                    yield i, _checked(record, flagged, source=source, label=i)
            else:
                yield 0, _checked(doc, flagged, source=source, label=0)
            return
    for lineno, line in enumerate(jsonl_lines(text), start=1):
        if line.strip():
            label = f"line {lineno}"
            yield label, parse_record(line, source=source, record=label)


def _locate(err: InvalidInput, source: str, record: int | str) -> InvalidInput:
    if isinstance(err, InvalidTranscript):
        return err.located(source=source, record=record)
    return type(err)(f"{source}: record {record}: {err}")
