"""What the explorer shows of a job (under ``/v1/jobs``): its curves, plane, model
comparison, one game with its transcript, its records and ``report.html``, each a thin
wrapping of a ``job_views`` / ``job_report`` call (``leakage.curves`` on the job's step
table) run on the slow pool."""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from enum import StrEnum
from functools import partial
from typing import Annotated, Any, TypeVar

from fastapi import Path as PathParam
from fastapi import Query
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from leakage.curves import LEADERBOARD_COLUMNS, leaderboard_records
from leakage_service.deps import State
from leakage_service.errors import ServiceError
from leakage_service.job_report import job_records, job_report_html
from leakage_service.job_views import (
    find_game,
    game_transcript,
    job_compare,
    job_curves,
    job_leaderboard,
    job_plane,
)
from leakage_service.jobs import Job
from leakage_service.routes.job_route import JobId, router
from leakage_service.routes.job_route import job_or_404 as _job
from leakage_service.schemas import (
    ErrorBody,
    JobCompare,
    JobCurves,
    JobGame,
    JobLeaderboard,
    JobPlane,
    JobRecords,
    error_responses,
)
from leakage_service.state import ServiceState

Replicates = Annotated[
    int, Query(ge=100, le=10_000, description="Bootstrap replicates of the intervals.")
]
"""The bootstrap option of every view with intervals, written once."""
_MAX_RECORD = 2**53 - 1
"""Largest record number a request may name: the largest integer a browser's JSON numbers
hold exactly, far below SQLite's 64-bit integers (a larger one would not fit the query)."""


_View = TypeVar("_View", bound=BaseModel)


def _view(model: type[_View], job: Job, out: Any = None, /, **fields: Any) -> _View:
    """A view's response, the one wrapping of every view: ``model`` validated from the
    job's id and state, the fields of ``out`` (the view's result: a dataclass of
    ``job_views`` or a pydantic model) that ``model`` has, and ``fields`` over them (a field
    renamed or cleaned for the response)."""
    found: dict[str, Any] = {}
    if isinstance(out, BaseModel):
        found = out.model_dump()
    elif out is not None:
        found = {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}
    body = {k: v for k, v in found.items() if k in model.model_fields}
    return model.model_validate({**body, **fields, "job": job.id, "state": job.state})


class CurveGrouping(StrEnum):
    model = "model"
    matchup = "matchup"
    difficulty = "difficulty"
    speaker = "speaker"


class CurvesGrouping(StrEnum):
    """The curves' groupings, and ``auto``: the games' own (``default_by``)."""

    model = "model"
    matchup = "matchup"
    difficulty = "difficulty"
    speaker = "speaker"
    auto = "auto"


@router.get(
    "/{job_id}/curves",
    summary="A job's leakage curves (as leakage report draws them)",
    response_model=JobCurves,
    responses=error_responses(401, 404, 422, 429, 503),
)
async def curves(
    job_id: JobId,
    state: State,
    by: Annotated[
        CurvesGrouping,
        Query(
            description="Group the games by the models of the counted speakers, the "
            "matchup or the difficulty (meta.matchup, meta.difficulty); speaker: each clue by "
            "its speaker's own model and role (a point (group, m) averages the games whose "
            "m-th counted clue that model said in that role); auto: the games' own "
            "(default_by: speaker for SpyGame, whose statements are read one by one, model "
            "otherwise)."
        ),
    ] = CurvesGrouping.model,
    max_clues: Annotated[int, Query(ge=1, le=64, description="Last m drawn.")] = 16,
    replicates: Replicates = 1000,
) -> JobCurves:
    """Mean entropy after m counted clues and P(secret among the top 1, 3, 5) after m clues,
    per group, each with a 95% bootstrap interval over games (``leakage.curves``, the figures
    of ``leakage report``), from the results stored so far; and every scored game with its
    group and counted clues, so that a point (group, m) lists its games: those of its group
    with at least m clues."""  # fmt: skip
    job = _job(state, job_id)
    out = await state.slow.run(
        partial(job_curves, max_clues=max_clues, replicates=replicates), state, job, by.value
    )
    return _view(JobCurves, job, out, curves=out.rows)


@router.get(
    "/{job_id}/plane",
    summary="A job's reveal-vs-conceal plane (as leakage report draws it)",
    response_model=JobPlane,
    responses=error_responses(401, 404, 422, 429, 503),
)
async def plane(
    job_id: JobId,
    state: State,
    replicates: Replicates = 1000,
    max_points: Annotated[
        int, Query(ge=0, le=100_000, description="Most clues listed one by one.")
    ] = 5000,
) -> JobPlane:
    """Each counted clue's leakage (information gain about the secret, bits) against its
    reveal value (log2 likelihood ratio that its speaker knows the secret, bits), per
    model and role the means with 95% bootstrap intervals over games, and the reference
    strategies that belong to the job's games (``leakage.curves.plane_references``: Karabag &
    Topcu's trivial, concealing, revealing and pi_amb for The Chameleon, simulated on the same
    axes; none for SpyGame, said in ``references_note``), from the results stored so far."""
    job = _job(state, job_id)
    out = await state.slow.run(
        partial(job_plane, replicates=replicates, max_points=max_points), state, job
    )
    return _view(JobPlane, job, out)


class BoardFormat(StrEnum):
    json = "json"
    csv = "csv"


@router.get(
    "/{job_id}/leaderboard",
    summary="Which model leaks least, per game kind and role (leakage report --leaderboard)",
    response_model=JobLeaderboard,
    responses={
        200: {
            "description": "The leaderboard (JSON), or its rows as CSV with format=csv.",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **error_responses(401, 404, 409, 422, 429, 503),
        409: {
            "model": ErrorBody,
            "description": "job_not_ready: no scored game with a counted clue yet.",
        },
    },
)
async def board(
    job_id: JobId,
    state: State,
    format: Annotated[
        BoardFormat,
        Query(description="json: leakage.leaderboard/1; csv: its rows, one line each."),
    ] = BoardFormat.json,
    replicates: Replicates = 1000,
) -> Any:
    """One row per game kind, model and role (the speaker's own), from the results stored
    so far: its statements or clues (``unit``), games, mean leakage per clue to the reader
    without the secret, reveal value, the posterior left on its own word and its side's win
    rate (from the reports' ``meta.winner_role``), each with a 95% bootstrap interval over
    games; with at least ``min_games`` games a rank (1 = leaks least) and a rank interval,
    and the models it is not separable from (Holm-corrected bootstrap tests). The figures of
    ``leakage.curves.leaderboard`` on the job's step table, computed in one call; the
    leakage is a lower bound set by the reader (``reader``, ``reader_note``). A job with no
    scored game with a counted clue yet is a 409 (``job_not_ready``)."""
    job = _job(state, job_id)
    out = await state.slow.run(partial(job_leaderboard, replicates=replicates), state, job)
    if format is BoardFormat.csv:
        text = io.StringIO()
        writer = csv.DictWriter(text, fieldnames=LEADERBOARD_COLUMNS, lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(leaderboard_records(out))
        name = f"leakage-leaderboard-{job.id}.csv"
        return Response(
            text.getvalue(),
            media_type="text/csv; charset=utf-8",
            headers={
                "X-Job-State": job.state,
                "Content-Disposition": f'attachment; filename="{name}"',
            },
        )
    return _view(JobLeaderboard, job, out)


def _finite(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


_MODEL = Query(min_length=1, max_length=500, description="A model (as the players' agent).")


@router.get(
    "/{job_id}/compare",
    summary="Two models compared in the games where both spoke (leakage report --compare)",
    response_model=JobCompare,
    responses=error_responses(401, 404, 422, 429, 503),
)
async def compare(
    job_id: JobId,
    state: State,
    a: Annotated[str | None, _MODEL] = None,
    b: Annotated[str | None, _MODEL] = None,
    replicates: Replicates = 1000,
) -> JobCompare:
    """Per role, in the games where models ``a`` and ``b`` both gave counted clues in it:
    each one's mean information gain per clue and their paired difference (a minus b), with
    95% bootstrap intervals over those games (``leakage report --compare A B``), from the
    results stored so far. Without ``a`` and ``b``: the models there are to compare. A model
    with no counted clue is a 404 that lists the models present."""
    job = _job(state, job_id)
    if (a is None) != (b is None):
        raise ServiceError(
            422, "invalid_input", "name two models to compare, a and b (or neither for the "
            "list of models)", field="b" if b is None else "a",
        )  # fmt: skip
    out = await state.slow.run(partial(job_compare, replicates=replicates), state, job, a, b)
    rows = [{k: _finite(v) for k, v in r.items()} for r in out.rows]
    return _view(JobCompare, job, out, rows=rows)


_RECORD = Query(
    ge=0,
    le=_MAX_RECORD,
    description="The record (position in the job's input, from 0), when several games "
    "share the id.",
)


@router.get(
    "/{job_id}/games/{game_id:path}",
    summary="One game of a job: its report and its transcript",
    response_model=JobGame,
    responses=error_responses(401, 404, 422, 429),
)
async def game(
    job_id: JobId,
    game_id: Annotated[
        str,
        PathParam(
            min_length=1,
            max_length=1000,
            description="The game's id, percent-encoded (encodeURIComponent); a '/' in it "
            "may be sent as is. The ids '.' and '..' are dot segments, which URL parsers "
            "remove: ask for those with GET /v1/jobs/{job_id}/games?game_id=.",
        ),
    ],
    state: State,
    record: Annotated[int | None, _RECORD] = None,
) -> JobGame:
    """The stored report of a job's game and its transcript, read again from the job's
    input (to score it with another backend, or try a clue on it). The game id is matched
    exactly, whatever its characters."""  # fmt: skip
    return await _game(state, job_id, game_id, record)


@router.get(
    "/{job_id}/games",
    summary="One game of a job, its id in the query (any id, '.' and '..' included)",
    response_model=JobGame,
    responses=error_responses(401, 404, 422, 429),
)
async def game_by_query(
    job_id: JobId,
    game_id: Annotated[
        str, Query(min_length=1, max_length=1000, description="The game's id, exactly.")
    ],
    state: State,
    record: Annotated[int | None, _RECORD] = None,
) -> JobGame:
    """As ``GET /v1/jobs/{job_id}/games/{game_id}``, with the id as a query parameter, where
    no URL parser rewrites it (the explorer asks this way)."""
    return await _game(state, job_id, game_id, record)


async def _game(state: ServiceState, job_id: str, game_id: str, record: int | None) -> JobGame:
    job = _job(state, job_id)
    found = await run_in_threadpool(find_game, state, job, game_id, record)
    if found is None or found.game_id != game_id:
        where = f"at record {record}" if record is not None else "among its results"
        had = f" (record {record} is {found.game_id!r})" if found is not None else ""
        raise ServiceError(
            404, "game_not_found", f"job {job_id} has no game {game_id!r} {where}{had}",
            field="record" if found is not None else "game_id",
        )  # fmt: skip
    transcript, note = await run_in_threadpool(game_transcript, state, job, found.record)
    return JobGame(
        job=job.id,
        record=found.record,
        game_id=found.game_id,
        ok=found.ok,
        report=found.body if found.ok else None,
        error=None if found.ok else found.body.get("error"),
        transcript=transcript,
        transcript_note=note,
        params=job.params,
    )


@router.get(
    "/{job_id}/records",
    summary="One line per record of a job: its games and failed records",
    response_model=JobRecords,
    responses=error_responses(401, 404, 422, 429),
)
async def records(job_id: JobId, state: State) -> JobRecords:
    """Every record stored so far, in record order: a game's final entropy, P(secret) and
    rank, or a failed record's error (the explorer's sortable table of a job's games)."""
    job = _job(state, job_id)
    rows = await run_in_threadpool(job_records, state, job)
    return _view(JobRecords, job, records=rows)


@router.get(
    "/{job_id}/report.html",
    summary="A job's figures as one HTML page (as leakage report writes it)",
    # Response, not HTMLResponse: the errors are JSON, and the schema says so (with
    # HTMLResponse FastAPI would document every response of the route as text/html)
    response_class=Response,
    responses={
        200: {
            "description": "report.html of leakage report, from the results stored so far.",
            "content": {"text/html": {"schema": {"type": "string"}}},
        },
        **error_responses(401, 404, 409, 422, 429, 503),
    },
)
async def report_html(
    job_id: JobId,
    state: State,
    by: Annotated[
        CurveGrouping, Query(description="Group as leakage report --by does.")
    ] = CurveGrouping.model,
    replicates: Replicates = 1000,
) -> HTMLResponse:
    """``leakage report --by BY``'s self-contained page (figures, tables, intervals) of the
    job's results stored so far; a job with no scored game yet is a 409 (``job_not_ready``:
    the request is right, the job has nothing to report yet)."""
    job = _job(state, job_id)
    html, _ = await state.slow.run(
        partial(job_report_html, replicates=replicates), state, job, by.value
    )
    name = f"leakage-report-{job.id}-{by.value}.html"
    return HTMLResponse(
        html,
        headers={"X-Job-State": job.state, "Content-Disposition": f'inline; filename="{name}"'},
    )
