"""``POST /v1/transcripts``: the games of an uploaded log file, as ``leakage.transcript/1``.

What the explorer calls for a file it cannot read in the browser: an Inspect AI log, a zip
archive (``.eval``) or a JSON object (``--log-format json``), whose samples keep their games.
Any file a job reads works (JSON, JSONL, third-party logs by ``input_format``); nothing is
scored, so the explorer scores the games it gets as it scores pasted ones.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool

from leakage.errors import InvalidTranscript
from leakage.transcripts import input_formats
from leakage_service.deps import State
from leakage_service.errors import ServiceError
from leakage_service.inputs import JSONL_TYPES, InputFormat
from leakage_service.jobs import new_job_id
from leakage_service.logs import HEAD_BYTES, check_log, log_format, read_games
from leakage_service.schemas import LogGamesResponse, RecordError, error_responses

router = APIRouter(prefix="/v1", tags=["score"])


async def _save(request: Request, dest: Path) -> bytes:
    """Stream the body to ``dest``; its first bytes (what it is)."""
    head = b""
    with dest.open("wb") as fh:
        async for chunk in request.stream():
            if len(head) < HEAD_BYTES:
                head += chunk[: HEAD_BYTES - len(head)]
            fh.write(chunk)
    return head


class InputFormatsResponse(BaseModel):
    """The input formats this server reads (``input_format`` of the scoring routes)."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    input_formats: list[str]
    """``auto`` first, then the shipped formats and those installed adapters add."""


@router.get(
    "/transcripts/formats",
    summary="The input formats this server reads",
    response_model=InputFormatsResponse,
    responses=error_responses(401, 429),
)
async def formats() -> InputFormatsResponse:
    """What ``input_format`` may be here (the explorer's *input format* picker)."""
    return InputFormatsResponse(input_formats=list(input_formats()))


_UNSAFE = re.compile(r"[^\w.@+\- ]")


def _file_name(given: str | None) -> str | None:
    """The client's file name, bare (no folder) and plain (letters, digits, ``.@+-_`` and
    spaces; anything else becomes ``_``), or None."""
    if given is None:
        return None
    base = re.split(r"[\\/]", given)[-1].strip()
    base = _UNSAFE.sub("_", base).strip(". ")
    return base or None


@router.post(
    "/transcripts",
    summary="Read a log file into games",
    response_model=LogGamesResponse,
    responses=error_responses(401, 413, 422, 429),
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "A log file as the body: an Inspect AI eval log (.eval, a zip "
            "archive, or a JSON log), or JSON / JSONL records of input_format. Told apart "
            "by content; JSONL may be declared as application/x-ndjson.",
            "content": {
                "application/octet-stream": {"schema": {"type": "string", "format": "binary"}}
            },
        }
    },
)
async def transcripts(
    request: Request,
    state: State,
    input_format: InputFormat = "auto",
    filename: Annotated[str | None, Query(max_length=255)] = None,
) -> LogGamesResponse:
    """Each game of the file as a ``leakage.transcript/1`` record, and each record that is
    not one with its error; a 422 when the file holds no game (an Inspect log of another
    task: naming the sample and the field that is missing). ``filename``: the file's name
    on the client, which the games' ids and sources take (as when the command line reads
    that file: a CK-Arena game's id ends with it) and errors name; a ``.jsonl`` or
    ``.ndjson`` name is read as JSONL."""
    name = _file_name(filename)
    uploads = state.settings.uploads_dir
    uploads.mkdir(parents=True, exist_ok=True)
    part = uploads / f"{new_job_id()}.part"
    dest: Path | None = None
    try:
        head = await _save(request, part)
        if not head.strip():
            raise InvalidTranscript([("body", "empty upload: send a log file")])
        is_log = log_format(head) is not None
        if is_log:
            await run_in_threadpool(check_log, part, limits=state.settings.read_limits())
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        jsonl = ctype in JSONL_TYPES or (name or "").lower().endswith((".jsonl", ".ndjson"))
        dest = part.with_suffix(".eval" if is_log else ".jsonl" if jsonl else ".json")
        os.replace(part, dest)
        found = await run_in_threadpool(
            read_games,
            dest,
            input_format=input_format,
            limit=state.settings.max_batch_games,
            name=name,
            limits=state.settings.read_limits(),
        )
    finally:
        part.unlink(missing_ok=True)
        if dest is not None:
            dest.unlink(missing_ok=True)
    if not found.games:
        first = found.errors[0]
        raise ServiceError(
            422, "invalid_input",
            f"no game in {name or 'the upload'}: record {first['record']}: {first['message']}",
            field="body",
        )  # fmt: skip
    return LogGamesResponse(
        games=[g.model_dump(mode="json", exclude_none=True) for g in found.games],
        errors=[RecordError(**e) for e in found.errors],
        left_out=found.left_out,
    )
