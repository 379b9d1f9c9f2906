"""``POST /v1/score`` (one transcript -> its report), ``POST /v1/score/batch`` (many ->
streamed NDJSON, one line per game as it finishes) and ``POST /v1/score/preview`` (how much a
clue not said yet would leak)."""

from __future__ import annotations

import json
import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse
from starlette.concurrency import run_in_threadpool

from leakage.backends import SupportsTokenCount
from leakage.errors import InvalidTranscript, LeakageError
from leakage.games import with_next_clue
from leakage.reports import Report
from leakage.scoring import report_json
from leakage.transcripts import AnyTranscript
from leakage_service.deps import Params, State
from leakage_service.errors import ServiceError
from leakage_service.inputs import (
    JSONL_TYPES,
    ScoreParams,
    StrictJsonRoute,
    check_size,
    checked_json,
    decode_text,
    parse_json,
    request_key,
    split_records,
    to_game,
)
from leakage_service.runtime import score_records
from leakage_service.schemas import (
    EXAMPLE_TRANSCRIPT,
    TRANSCRIPT_REF,
    ErrorBody,
    PreviewAfter,
    PreviewFigures,
    PreviewRequest,
    PreviewResponse,
    error_responses,
)
from leakage_service.state import ServiceState

router = APIRouter(prefix="/v1", tags=["score"], route_class=StrictJsonRoute)
log = logging.getLogger("leakage.service")


def _admit(state: ServiceState, body: bytes, params: ScoreParams) -> Any:
    """The body's game, refused for its size before any model loads: a game too large for
    the backend must not cost a model load (nor wait for one)."""
    game = to_game(parse_json(decode_text(body)), params)
    check_size(game, state.settings, params.backend)
    return game


def _score_one(state: ServiceState, game: Any, params: ScoreParams, deadline: float) -> bytes:
    slot = state.backends.get(params.backend)
    if isinstance(slot.backend, SupportsTokenCount):  # the loaded judge's tokens count too
        check_size(game, state.settings, params.backend, slot.backend)
    data = state.backends.score(
        slot, game, params.options(), shape=params.shape(), deadline=deadline
    )
    return report_json(data)


def _check_json_body(request: Request) -> None:
    """A 415 for a body declared as anything but JSON (``application/json`` or a
    ``+json`` type). No Content-Type at all is read as JSON: clients that send raw bytes
    (httpx ``content=``, requests ``data=``) name none, and such a body was never anything
    else. A body declared as a form (what curl ``--data-binary`` declares unless told),
    text or a multipart upload is refused: its client meant something else, and a 415
    naming the header says how to fix it where reading it as JSON would not."""
    given = request.headers.get("content-type", "")
    media = given.split(";")[0].strip().lower()
    if not media or media == "application/json" or media.endswith("+json"):
        return
    if media in JSONL_TYPES:
        hint = "; for JSONL (one game a line) use POST /v1/score/batch"
    elif media.startswith("multipart/"):
        hint = "; to upload a file of games use POST /v1/jobs"
    else:
        hint = ""
    raise ServiceError(
        415, "unsupported_media_type",
        f"Content-Type {given.strip()!r} is not JSON: send the transcript as JSON with "
        "'Content-Type: application/json' (curl: -H 'Content-Type: application/json'; "
        f"--data-binary alone declares a form){hint}",
        field="content-type",
    )  # fmt: skip


@router.post(
    "/score",
    summary="Score one transcript",
    response_class=Response,
    responses={
        200: {"model": Report, "description": "The report (leakage.report/1)."},
        **error_responses(401, 413, 422, 429, 502, 503),
        415: {
            "model": ErrorBody,
            "description": "The body is declared as something other than JSON (Content-Type); "
            "send application/json, or no Content-Type.",
        },
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
    _check_json_body(request)
    state.backends.check(params.backend)
    body = await request.body()
    key = request_key(params, body)
    content = state.cache.get(key)
    if content is None:
        game = await run_in_threadpool(_admit, state, body, params)
        await state.backends.loaded(params.backend, state.settings.backend_load_wait)
        timeout = state.settings.score_timeout
        deadline = time.monotonic() + timeout
        content = await state.pool.run(_score_one, state, game, params, deadline, timeout=timeout)
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
    await state.backends.loaded(params.backend, state.settings.backend_load_wait)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    produce = await state.pool.run(
        _prepare_batch, state, body, params, ctype in JSONL_TYPES,
        timeout=state.settings.score_timeout,
    )  # fmt: skip
    return StreamingResponse(state.pool.stream(produce), media_type="application/x-ndjson")


# -- POST /v1/score/preview -----------------------------------------------------------------


def _with_clue(game: AnyTranscript, req: PreviewRequest, params: ScoreParams) -> AnyTranscript:
    """``game`` cut after ``req.turns`` turns, with the clue said by the player after them
    (the game's rules: :func:`leakage.games.turns.with_next_clue`); the request's fields
    are checked here so that an error names them."""
    if req.turns is not None and req.turns > len(game.turns):
        raise ServiceError(
            422, "invalid_request",
            f"turns is {req.turns}, but the game has {len(game.turns)} turns",
            field="body.turns",
        )  # fmt: skip
    ids = [p.id for p in game.players]
    if req.player is not None and req.player not in ids:
        raise ServiceError(
            422, "invalid_request",
            f"player {req.player!r} is not one of the game's players ({', '.join(ids)})",
            field="body.player",
        )  # fmt: skip
    return with_next_clue(
        game, req.turns, req.clue, req.player, include_chameleon=params.include_chameleon
    )


def _preview_game(state: ServiceState, req: PreviewRequest, params: ScoreParams) -> Any:
    """The game with the clue to try, refused for its size before any model loads."""
    try:
        # the body was read by StrictJsonRequest: only the depth is left to check
        given = to_game(checked_json(req.transcript, flagged=False), params)
    except InvalidTranscript as err:  # its fields are inside the body's "transcript"
        raise InvalidTranscript(
            [(f"body.transcript.{f}" if f else "body.transcript", m) for f, m in err.problems]
        ) from None
    game = _with_clue(given, req, params)
    check_size(game, state.settings, params.backend)
    return game


def _preview(
    state: ServiceState, game: Any, params: ScoreParams, deadline: float
) -> PreviewResponse:
    slot = state.backends.get(params.backend)
    if isinstance(slot.backend, SupportsTokenCount):
        check_size(game, state.settings, params.backend, slot.backend)
    data = json.loads(
        report_json(
            state.backends.score(
                slot, game, params.options(), shape=params.shape(), deadline=deadline
            )
        )
    )
    steps = data["steps"]
    last = steps[-1]
    k = len(data["candidates"])
    if len(steps) > 1:
        prev = steps[-2]
        p_before, rank_before = prev["secret_probability"], prev["secret_rank"]
        word = last.get("speaker_word")
        if word is not None and word != prev.get("speaker_word"):
            # SpyGame: the figure is about this speaker's word, not the previous speaker's
            post = prev["posterior"]
            p_before = post.get(word)
            rank_before = None if p_before is None else 1 + sum(q > p_before for q in post.values())
        before = PreviewFigures(
            entropy_bits=prev["entropy_bits"],
            secret_probability=p_before,
            secret_rank=rank_before,
        )
    else:  # the clue is the first turn: the uniform prior
        before = PreviewFigures(
            entropy_bits=math.log2(k),
            secret_probability=1 / k if last["secret_probability"] is not None else None,
            secret_rank=None,
        )
    top, top_p = max(last["posterior"].items(), key=lambda kv: kv[1])
    return PreviewResponse(
        game_id=data["game_id"],
        game=data["game"],
        backend=data["backend"],
        clue=last["text"],
        player=last["player"],
        role=last["role"],
        turn=len(steps),
        secret=data["secret"],
        speaker_word=last["speaker_word"],
        candidates=data["candidates"],
        before=before,
        after=PreviewAfter(
            entropy_bits=last["entropy_bits"],
            secret_probability=last["secret_probability"],
            secret_rank=last["secret_rank"],
            information_gain_bits=last["information_gain_bits"],
            kl_bits=last["kl_bits"],
            counted=last["counted"],
            top_candidate=top,
            top_probability=top_p,
            posterior=last["posterior"],
        ),
    )


@router.post(
    "/score/preview",
    summary="How much would a clue leak? (before saying it)",
    response_model=PreviewResponse,
    responses=error_responses(401, 413, 422, 429, 502, 503),
)
async def preview(req: PreviewRequest, state: State, params: Params) -> PreviewResponse:
    """Score the game so far plus a hypothetical clue by the next player (or ``player``):
    the posterior, entropy, P(secret) and information gain that clue would bring, beside the
    figures before it. The same calculation as the leakage-aware agent's library oracle
    (``leakage.games.agents.leakage_aware``), and the same numbers as ``POST /v1/score`` on
    the transcript with the clue appended as its last turn."""
    game = await run_in_threadpool(_preview_game, state, req, params)
    await state.backends.loaded(params.backend, state.settings.backend_load_wait)
    timeout = state.settings.score_timeout
    deadline = time.monotonic() + timeout
    return await state.pool.run(_preview, state, game, params, deadline, timeout=timeout)
