"""``POST /v1/score`` (one transcript -> its report) and ``POST /v1/score/batch`` (many ->
streamed NDJSON, one line per game as it finishes)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from leakage.backends import SupportsTokenCount
from leakage.errors import LeakageError
from leakage.reports import Report
from leakage.scoring import report_json
from leakage_service.deps import Params, State
from leakage_service.errors import ServiceError
from leakage_service.inputs import (
    JSONL_TYPES,
    ScoreParams,
    check_size,
    decode_text,
    parse_json,
    request_key,
    split_records,
    to_game,
)
from leakage_service.runtime import score_records
from leakage_service.schemas import EXAMPLE_TRANSCRIPT, TRANSCRIPT_REF, error_responses
from leakage_service.state import ServiceState

router = APIRouter(prefix="/v1", tags=["score"])
log = logging.getLogger("leakage.service")


def _score_one(state: ServiceState, body: bytes, params: ScoreParams, deadline: float) -> bytes:
    game = to_game(parse_json(decode_text(body)), params)
    check_size(game, state.settings, params.backend)
    slot = state.backends.get(params.backend)
    if isinstance(slot.backend, SupportsTokenCount):  # the loaded judge's tokens count too
        check_size(game, state.settings, params.backend, slot.backend)
    data = state.backends.score(
        slot, game, params.options(), shape=params.shape(), deadline=deadline
    )
    return report_json(data)


@router.post(
    "/score",
    summary="Score one transcript",
    response_class=Response,
    responses={
        200: {"model": Report, "description": "The report (leakage.report/1)."},
        **error_responses(401, 413, 422, 429, 502, 503),
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "One transcript: leakage.transcript/1, or a third-party log "
            "(input_format).",
            "content": {
                "application/json": {"schema": TRANSCRIPT_REF, "example": EXAMPLE_TRANSCRIPT}
            },
        }
    },
)
async def score(request: Request, state: State, params: Params) -> Response:
    """The per-turn posteriors and leakage of one game (``leakage.report/1``)."""
    state.backends.check(params.backend)
    body = await request.body()
    key = request_key(params, body)
    content = state.cache.get(key)
    if content is None:
        timeout = state.settings.score_timeout
        deadline = time.monotonic() + timeout
        content = await state.pool.run(_score_one, state, body, params, deadline, timeout=timeout)
        state.cache.put(key, content)
    return Response(content, media_type="application/json")


def _batch_producer(
    state: ServiceState, records: list[Any], params: ScoreParams
) -> Callable[[Callable[[bytes], None], threading.Event], None]:
    slot = state.backends.get(params.backend)

    def produce(emit: Callable[[bytes], None], stop: threading.Event) -> None:
        games = ((i, _game_or_error(r, params, i)) for i, r in enumerate(records))
        for scored in score_records(state.backends, slot, games, params, stop=stop.is_set):
            emit(scored.body.encode() + b"\n")

    return produce


def _game_or_error(record: Any, params: ScoreParams, index: int) -> Any:
    """The record as a game, or the error to report on its line (a bug in an adapter too:
    one record never fails the batch)."""
    try:
        return to_game(record, params, index=index)
    except LeakageError as err:
        return err
    except Exception as err:
        log.exception("record %d could not be read", index)
        return err


def _prepare_batch(
    state: ServiceState, body: bytes, params: ScoreParams, jsonl: bool
) -> Callable[[Callable[[bytes], None], threading.Event], None]:
    records = split_records(body, jsonl=jsonl)
    limit = state.settings.max_batch_games
    if len(records) > limit:
        raise ServiceError(
            413,
            "too_many_games",
            f"{len(records):,} games in one batch; at most {limit:,}: submit a job "
            "(POST /v1/jobs) for more",
            field="body",
        )
    return _batch_producer(state, records, params)


@router.post(
    "/score/batch",
    summary="Score many transcripts (streamed NDJSON)",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "One line per game, in input order, as each finishes: the report, "
            'or {"record": i, "error": {...}} for a game that failed.',
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        },
        **error_responses(401, 413, 422, 429, 502, 503),
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A JSON array of transcripts (or one transcript), or JSONL (one "
            "per line, with Content-Type application/x-ndjson). Each record is a "
            "leakage.transcript/1 game or a third-party log (input_format); a record that is "
            "neither is an error line of the response, so any JSON value is a record here.",
            "content": {
                "application/json": {
                    "schema": {
                        "anyOf": [
                            {"type": "array", "items": {"anyOf": [TRANSCRIPT_REF, {}]}},
                            {"type": "object"},
                        ]
                    },
                    "example": [EXAMPLE_TRANSCRIPT],
                },
                "application/x-ndjson": {"schema": {"type": "string"}},
            },
        }
    },
)
async def score_batch(request: Request, state: State, params: Params) -> StreamingResponse:
    """Score every game of the body; a failing game yields an error line, not a failed batch."""
    state.backends.check(params.backend)
    body = await request.body()
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    produce = await state.pool.run(
        _prepare_batch, state, body, params, ctype in JSONL_TYPES,
        timeout=state.settings.score_timeout,
    )  # fmt: skip
    return StreamingResponse(state.pool.stream(produce), media_type="application/x-ndjson")
