"""The one place errors become HTTP responses, all of one shape::

    {"error": {"type": "invalid_transcript", "message": "...", "field": "turns[0].player",
               "record": 3, "problems": [{"field": ..., "message": ...}]},
     "request_id": "..."}

``field`` names the request part at fault (a query parameter, ``body``, or a path inside the
transcript); ``record`` the record of a batch or job. The ``error`` object is the library's
(``leakage.errors.ErrorRecord.detail``), and so is a batch or job result's error line
(``error_line``: ``{"record": 3, "error": {...}}``, the shape of ``leakage batch``'s errors
file). Library errors (``LeakageError``) are mapped to a status once (``STATUS``; their type
is their ``error_type``); unexpected exceptions become a 500 with a generic message and the
traceback goes to the log only, never to the client.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from leakage.errors import (
    BackendUnavailable,
    BudgetExhausted,
    CorpusError,
    CountSourceError,
    ErrorRecord,
    InputTooLarge,
    InvalidInput,
    InvalidTranscript,
    LeakageError,
    LLMError,
    UnknownBackend,
    UnknownInputFormat,
    validation_problems,
)
from leakage_service.patterns import NOT_BLANK
from leakage_service.redact import redact_paths

log = logging.getLogger("leakage.service")


class GameTooLarge(InvalidTranscript):
    """A game over this server's size limits (``LEAKAGE_MAX_CANDIDATES``, ``_MAX_TURNS``,
    ``_MAX_TEXT_CHARS``, ``_MAX_GAME_CHARS``, ``_MAX_GAME_COST``); ``problems`` name the
    fields. A service error, not the library's: the CLI scores such games."""

    error_type = "game_too_large"


STATUS: list[tuple[type[LeakageError], int]] = [
    (InputTooLarge, 413),  # a log past the max_log_* limits, naming its member
    (InvalidInput, 422),
    (UnknownBackend, 422),
    (BudgetExhausted, 503),
    (BackendUnavailable, 503),
    (CountSourceError, 502),
    (LLMError, 502),
    (CorpusError, 503),
]
"""Library error -> HTTP status, first match wins; the error's type is its ``error_type``
(``invalid_transcript``, ``game_too_large``, ...). Any other is a 500, ``internal_error``."""


class ServiceError(HTTPException):
    """An error the service raises on purpose, already in the response's terms."""

    def __init__(
        self,
        status: int,
        type_: str,
        message: str,
        *,
        field: str | None = None,
        record: int | str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(status_code=status, detail=message, headers=headers)
        self.type = type_
        self.message = message
        self.field = field
        self.record = record


class PayloadTooLarge(ServiceError):
    def __init__(self, limit: int) -> None:
        super().__init__(
            413,
            "payload_too_large",
            f"request body larger than {limit:,} bytes; send fewer games per request or "
            "submit a job (POST /v1/jobs)",
            field="body",
        )


class ScoreTimeout(ServiceError):
    def __init__(self, seconds: float, retry_after: int) -> None:
        super().__init__(
            503,
            "timeout",
            f"scoring took longer than this server allows ({seconds:g} s, "
            f"LEAKAGE_SCORE_TIMEOUT); retry in {retry_after} s, or submit a job "
            "(POST /v1/jobs), which has no deadline",
            headers={"Retry-After": str(retry_after)},
        )


class BackendLoading(ServiceError):
    """The backend's first load is still under way (it goes on; a later request gets it)."""

    def __init__(self, name: str, elapsed: float, last: float | None, retry_after: int) -> None:
        before = f"about {last:.0f} s last time" if last else "no earlier load to go by"
        super().__init__(
            503,
            "backend_loading",
            f"loading the {name} backend: {elapsed:.0f} s so far, {before}; retry in "
            f"{retry_after} s (the load goes on meanwhile)",
            field="backend",
            headers={"Retry-After": str(retry_after)},
        )
        self.elapsed = elapsed
        self.last = last


class QueueFull(ServiceError):
    def __init__(self, retry_after: int) -> None:
        super().__init__(
            503,
            "queue_full",
            f"the scoring queue is full; retry in {retry_after} s",
            headers={"Retry-After": str(retry_after)},
        )


class SlowQueueFull(ServiceError):
    """The slow pool (splits, report pages of jobs) has as many requests as it takes."""

    def __init__(self, retry_after: int, workers: int, queue: int) -> None:
        super().__init__(
            503,
            "queue_full",
            f"the server is busy with slow requests (splits and report pages: {workers} at "
            f"once and {queue} waiting, LEAKAGE_SLOW_WORKERS and LEAKAGE_SLOW_QUEUE); retry in "
            f"{retry_after} s",
            headers={"Retry-After": str(retry_after)},
        )


class BodyTimeout(ServiceError):
    """A request body that stopped arriving (``LEAKAGE_BODY_TIMEOUT``)."""

    def __init__(self, seconds: float) -> None:
        super().__init__(
            503,
            "timeout",
            f"the request body stopped arriving: nothing came for {seconds:g} s "
            "(LEAKAGE_BODY_TIMEOUT); send it again, whole",
            field="body",
            headers={"Retry-After": "1"},
        )


def error_body(
    type_: str,
    message: str,
    *,
    field: str | None = None,
    record: int | str | None = None,
    problems: list[tuple[str, str]] | None = None,
    request_id: str | None = None,
) -> dict[str, Any]:
    err = ErrorRecord(record, type_, message, field, tuple(problems or ())).detail()
    return {"error": err, "request_id": request_id}


def describe_leakage_error(
    err: LeakageError, *, field: str | None = None, record: int | str | None = None
) -> tuple[int, dict[str, Any]]:
    """(HTTP status, the ``error`` object) of a library error."""
    status, found = _error_record(err, field=field, record=record)
    return status, found.detail()


def _error_record(
    err: LeakageError, *, field: str | None = None, record: int | str | None = None
) -> tuple[int, ErrorRecord]:
    status = next((code for cls, code in STATUS if isinstance(err, cls)), 500)
    found = ErrorRecord.of(err, record=record)
    type_ = found.type if status != 500 else "internal_error"
    message, field = found.message, field or found.field
    if isinstance(err, UnknownBackend):
        field = field or "backend"
    elif isinstance(err, UnknownInputFormat):
        field = field or "input_format"
        # the library speaks to the command line; over HTTP the option is a query parameter
        message = message.replace("pass --input-format", "set the input_format query parameter")
    elif isinstance(err, BackendUnavailable | CorpusError):
        message = redact_paths(message)  # the server's files are not the client's business
    return status, ErrorRecord(found.record, type_, message, field, found.problems)


def error_line(record: int, err: Exception) -> str:
    """The NDJSON line (and stored job result) of a record that could not be scored: an
    ``ErrorRecord`` without ``source`` and ``label`` (``{"record": 3, "error": {...}}``)."""
    if isinstance(err, LeakageError):
        _, found = _error_record(err, record=record)
    else:
        message = "internal error scoring this game; see the log"
        found = ErrorRecord(record, "internal_error", message)
    return found.to_json()


def request_id(request: Request) -> str | None:
    return request.scope.get("state", {}).get("request_id")


def _json(request: Request, status: int, body: dict[str, Any], headers: Any = None) -> JSONResponse:
    body["request_id"] = request_id(request)
    return JSONResponse(body, status_code=status, headers=headers)


async def _leakage_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, LeakageError)
    status, err = describe_leakage_error(exc)
    if status >= 500:
        log.warning("library error: %s", exc)
    return _json(request, status, {"error": err})


def _malformed_json(e: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [("body", f"malformed JSON: {e.get('ctx', {}).get('error', e.get('msg', 'invalid'))}")]


_BY_TYPE = {"json_invalid": _malformed_json}


def _plain(message: str) -> str:
    """pydantic's message for a blank text (a mismatch of ``NOT_BLANK``) in words: the
    pattern, which is all it gives, tells a person nothing."""
    if message == f"String should match pattern '{NOT_BLANK}'":
        return "must not be blank: give at least one character other than spaces"
    return message


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    # ("query", "top_k") -> top_k; ("body", "pairs", 3, 0) -> body.pairs[3][0]
    problems = validation_problems(exc, strip=("query", "path", "header"), by_type=_BY_TYPE)
    problems = [(f, _plain(m)) for f, m in problems]
    first = problems[0] if problems else ("", "invalid request")
    message = "; ".join(f"{f}: {m}" if f else m for f, m in problems) or "invalid request"
    body = error_body("invalid_request", message, field=first[0] or None, problems=problems)
    return _json(request, 422, body)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if isinstance(exc, ServiceError):
        body = error_body(exc.type, exc.message, field=exc.field, record=exc.record)
        return _json(request, exc.status_code, body, exc.headers)
    if isinstance(exc.__cause__, ServiceError):  # raised while FastAPI read the body
        return await _http_error(request, exc.__cause__)
    if exc.status_code == 400 and exc.__cause__ is not None:  # FastAPI could not parse it
        reason = "not UTF-8" if isinstance(exc.__cause__, UnicodeDecodeError) else "unreadable"
        if isinstance(exc.__cause__, RecursionError):
            reason = "nested too deeply to read"
        message = f"the body is {reason}: send a UTF-8 JSON object"
        return _json(request, 422, error_body("invalid_request", message, field="body"))
    names = {404: "not_found", 405: "method_not_allowed", 400: "bad_request"}
    type_ = names.get(exc.status_code, "http_error")
    message = str(exc.detail)
    path = request.url.path
    if exc.status_code == 404 and len(path) > 1 and path.endswith("/"):
        message += f"; the API's paths have no trailing slash: {path.rstrip('/') or '/'}"
    return _json(request, exc.status_code, error_body(type_, message), exc.headers)


def internal_error_body(request_id: str | None) -> dict[str, Any]:
    return error_body(
        "internal_error",
        "internal error; the server log has the details under this request id",
        request_id=request_id,
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(LeakageError, _leakage_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    # Anything else is caught by the outermost middleware (AccessLog): a generic 500.
