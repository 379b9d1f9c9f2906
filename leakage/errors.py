"""Errors raised by leakage.

Every error the library raises on purpose derives from ``LeakageError``; the CLI maps them
to exit codes once (``leakage.cli._errors``) and the service to HTTP statuses once::

    LeakageError
    ├── InvalidInput                 bad data from the user (exit 2, HTTP 422)
    │   ├── InvalidTranscript        a transcript record is malformed or inconsistent
    │   │   └── InputTooLarge        an input expands (or takes) past its reading limits
    │   │                            (``leakage.transcripts.ReadLimits``; HTTP 413)
    │   └── UnknownInputFormat       no adapter reads this file
    ├── UnknownBackend               a backend or count-source name is not registered
    ├── BackendUnavailable           a backend cannot run here (missing extra, key, index)
    ├── CountSourceError             a count source failed after its retries
    │   └── BudgetExhausted          the per-run query budget is spent
    ├── LLMError                     an LLM endpoint failed after its retries or answered
    │                                something unreadable (exit 4, like CountSourceError)
    └── CorpusError                  a corpus could not be read or indexed

A message says what was wrong, where (file, record, field) and how to fix it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol


def _printable(text: str) -> str:
    """``text`` with any lone surrogate written as its ``\\udXXX`` escape."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class LeakageError(Exception):
    """Base class of every error leakage raises on purpose."""

    error_type: ClassVar[str] = "leakage_error"
    """Its name in an error record (:class:`ErrorRecord`) and the service's error bodies."""


class InvalidInput(LeakageError):
    """The user's input is wrong; the rest of a batch is still processed."""

    error_type = "invalid_input"


class InvalidTranscript(InvalidInput):
    """A transcript record is malformed or inconsistent.

    ``source`` names the file (or ``<request>``), ``record`` the record (index or id) and
    ``problems`` holds one ``(field, message)`` pair per problem found.
    """

    error_type = "invalid_transcript"

    def __init__(
        self,
        problems: list[tuple[str, str]],
        *,
        source: str | None = None,
        record: str | int | None = None,
    ) -> None:
        # a message may quote what the user sent; a lone surrogate in it would stop the
        # error itself from being written (UTF-8 output, JSON error lines)
        self.problems = [(_printable(f), _printable(m)) for f, m in problems]
        self.source = source
        self.record = record
        super().__init__(self._render())

    def _render(self) -> str:
        where = []
        if self.source is not None:
            where.append(str(self.source))
        if self.record is not None:
            where.append(f"record {self.record}")
        prefix = ": ".join([", ".join(where)]) + ": " if where else ""
        return "; ".join(
            f"{prefix}{field}: {msg}" if field else f"{prefix}{msg}" for field, msg in self.problems
        )

    def located(self, *, source: str | None = None, record: str | int | None = None):
        """Return a copy of this error (of its class) with the file and record filled in."""
        return type(self)(
            self.problems,
            source=source if source is not None else self.source,
            record=record if record is not None else self.record,
        )


class InputTooLarge(InvalidTranscript):
    """An input would expand past, or take longer to read than, the limits it is read under
    (:class:`leakage.transcripts.ReadLimits`): an archive member or a whole archive larger
    than allowed once decompressed (from the sizes its directory declares, or found while
    reading), an implausible compression ratio, or reading past its deadline. ``problems``
    name the file's member (``header.json``, ``samples/3_epoch_1.json``). The service
    answers 413."""

    error_type = "input_too_large"


class UnknownInputFormat(InvalidInput):
    """No adapter recognises the input."""

    error_type = "unknown_input_format"


class UnknownBackend(LeakageError):
    """A backend or count-source name is not registered."""

    error_type = "unknown_backend"


class BackendUnavailable(LeakageError):
    """A backend cannot run here; the message says what to install or set."""

    error_type = "backend_unavailable"


class DeviceUnavailable(BackendUnavailable):
    """The device a model was asked to run on (``--device cuda:1``, ``mps``) is not there;
    the message says what torch found. Never a silent fall-back to the CPU."""

    error_type = "device_unavailable"


class CountSourceError(LeakageError):
    """A count source failed after its retries."""

    error_type = "count_source_failed"


class BudgetExhausted(CountSourceError):
    """The per-run query budget is spent; ``done`` queries were answered before it ran out."""

    error_type = "budget_exhausted"

    def __init__(self, message: str, *, done: int, budget: int) -> None:
        self.done = done
        self.budget = budget
        super().__init__(message)


class LLMError(LeakageError):
    """An LLM endpoint failed after its retries, refused the request (key, model, path) or
    answered something unreadable; the message names the URL or the missing field.

    A remote client whose *budget* is spent raises :class:`BudgetExhausted` instead, and one
    whose endpoint lacks a needed ability (completions echo + logprobs) raises
    :class:`BackendUnavailable`.
    """

    error_type = "llm_failed"


class CorpusError(LeakageError):
    """A corpus could not be read or indexed."""

    error_type = "corpus_unavailable"


@dataclass(frozen=True)
class ErrorRecord:
    """A record that could not be scored, in the one shape of every error line (``leakage
    batch``'s ``errors.jsonl``, the service's batch and job result lines; docs/batch.md)::

        {"source": "games.jsonl", "record": 3, "label": "line 4",
         "error": {"type": "invalid_transcript", "message": "...", "field": "turns[1].player",
                   "record": 3, "problems": [{"field": "turns[1].player", "message": "..."}]}}

    ``source`` and ``label`` (the file, and where the record is in it) are left out when
    None (the service's records are numbered within a request or job); ``problems`` when
    empty. The ``error`` object is the one of the service's error bodies.
    """

    record: int | str | None
    type: str
    """:attr:`LeakageError.error_type` of the error (``internal_error`` for a bug)."""
    message: str
    field: str | None = None
    problems: tuple[tuple[str, str], ...] = ()
    source: str | None = None
    label: str | None = None

    @classmethod
    def of(
        cls,
        err: LeakageError,
        *,
        record: int | str | None = None,
        source: str | None = None,
        label: str | None = None,
    ) -> ErrorRecord:
        """The record of a library error: its type, message and (an invalid transcript's)
        problems, the first of which names the field; ``record`` defaults to the error's."""
        problems = tuple(err.problems) if isinstance(err, InvalidTranscript) else ()
        if record is None and isinstance(err, InvalidTranscript):
            record = err.record
        field = problems[0][0] or None if problems else None
        return cls(record, err.error_type, str(err), field, problems, source, label)

    def detail(self) -> dict[str, Any]:
        """The ``error`` object."""
        doc: dict[str, Any] = {
            "type": self.type,
            "message": self.message,
            "field": self.field,
            "record": self.record,
        }
        if self.problems:
            doc["problems"] = [{"field": f or None, "message": m} for f, m in self.problems]
        return doc

    def to_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {} if self.source is None else {"source": self.source}
        doc["record"] = self.record
        if self.label is not None:
            doc["label"] = self.label
        doc["error"] = self.detail()
        return doc

    def to_json(self) -> str:
        """One line of JSON (UTF-8 text, not escaped to ASCII)."""
        return json.dumps(self.to_dict(), ensure_ascii=False)


class _HasErrors(Protocol):
    def errors(self) -> Any: ...


def validation_problems(
    err: _HasErrors,
    *,
    strip: Collection[str] = (),
    keep: Callable[[str | int], bool] | None = None,
    dotted: bool = False,
    by_type: Mapping[str, Callable[[Mapping[str, Any]], list[tuple[str, str]]]] | None = None,
) -> list[tuple[str, str]]:
    """One ``(field, message)`` pair per error of a pydantic ``ValidationError`` (or FastAPI's
    ``RequestValidationError``), in its order; the one formatter of the library and service.

    The field is the error's location as a path, ``pairs[3].word`` (``dotted``:
    ``pairs.3.word``), ``""`` for the whole value. A first location part in ``strip`` is
    left out (a union's tag, FastAPI's ``query``), and so is every part ``keep`` rejects (the
    union member pydantic tried). An error whose type is in ``by_type`` gives the pairs that
    function makes of it instead. Needs no pydantic import: it reads ``err.errors()``.
    """
    problems: list[tuple[str, str]] = []
    for e in err.errors():
        kind = e.get("type")
        if by_type and kind in by_type:
            problems.extend(by_type[kind](e))
            continue
        loc = tuple(e.get("loc", ()))
        if loc and loc[0] in strip:
            loc = loc[1:]
        if keep is not None:
            loc = tuple(part for part in loc if keep(part))
        if dotted:
            field = ".".join(map(str, loc))
        else:
            field = ""
            for part in loc:
                field += (
                    f"[{part}]" if isinstance(part, int) else (f".{part}" if field else str(part))
                )
        problems.append((field, str(e.get("msg", "invalid"))))
    return problems


__all__ = [
    "BackendUnavailable",
    "BudgetExhausted",
    "CorpusError",
    "CountSourceError",
    "DeviceUnavailable",
    "ErrorRecord",
    "InputTooLarge",
    "InvalidInput",
    "InvalidTranscript",
    "LLMError",
    "LeakageError",
    "UnknownBackend",
    "UnknownInputFormat",
    "validation_problems",
]
