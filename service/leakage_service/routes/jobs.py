"""Jobs for large batches: submit (upload or server-side path), poll, fetch results, cancel."""

from __future__ import annotations

import codecs
import datetime as dt
import json
import os
import tempfile
from collections.abc import AsyncIterator, Iterator
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request, Response
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import ValidationError
from starlette.background import BackgroundTask
from starlette.datastructures import UploadFile as StarletteUploadFile

from leakage.errors import InvalidInput, InvalidTranscript
from leakage_service.deps import Params, State
from leakage_service.errors import ServiceError
from leakage_service.inputs import JSONL_TYPES
from leakage_service.jobs import Job, new_job_id
from leakage_service.schemas import JobPathRequest, JobStatus, error_responses
from leakage_service.state import ServiceState

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

JobId = Annotated[
    str,
    PathParam(pattern=r"^[0-9a-f]{32}$", description="The id POST /v1/jobs returned."),
]
_PATH_PEEK = 64 * 1024  # a {"path": ...} body is small; anything larger is an upload


def _iso(t: float | None) -> str | None:
    return None if t is None else dt.datetime.fromtimestamp(t, dt.UTC).isoformat()


def _status(state: ServiceState, job: Job) -> JobStatus:
    assert state.store is not None
    return JobStatus(
        id=job.id,
        state=job.state,  # type: ignore[arg-type]
        created_at=_iso(job.created) or "",
        started_at=_iso(job.started),
        finished_at=_iso(job.finished),
        params=job.params,
        source="upload" if job.upload else "path",
        paths=None if job.upload else job.paths,
        total=job.total,
        done=job.done,
        ok=job.done - job.failed,
        failed=job.failed,
        progress=round(job.done / job.total, 4) if job.total else (1.0 if job.total == 0 else None),
        runs=job.runs,
        error=job.error,
        errors=state.store.errors(job.id),
        links={"self": f"/v1/jobs/{job.id}", "results": f"/v1/jobs/{job.id}/results"},
    )


def _job(state: ServiceState, job_id: str) -> Job:
    assert state.store is not None
    job = state.store.get(job_id)
    if job is None:
        raise ServiceError(404, "job_not_found", f"no job {job_id!r} on this server", field="id")
    return job


async def _chunks(request: Request) -> AsyncIterator[bytes]:
    """The uploaded bytes: the body, or the ``file`` part of a multipart form."""
    ctype = request.headers.get("content-type", "")
    if not ctype.lower().startswith("multipart/form-data"):
        async for chunk in request.stream():
            yield chunk
        return
    form = await request.form(max_files=1, max_fields=10)
    try:
        upload = form.get("file")
        if not isinstance(upload, StarletteUploadFile):
            raise ServiceError(
                422, "invalid_request", "a multipart upload needs a 'file' part", field="file"
            )
        while chunk := await upload.read(1 << 20):
            yield chunk
    finally:
        await form.close()


async def _save_upload(request: Request, dest: Path) -> int:
    """Stream the upload to ``dest`` (checking it is UTF-8 on the way); bytes written."""
    utf8 = codecs.getincrementaldecoder("utf-8-sig")()
    size = 0
    try:
        with dest.open("wb") as fh:
            async for chunk in _chunks(request):
                utf8.decode(chunk)
                fh.write(chunk)
                size += len(chunk)
            utf8.decode(b"", final=True)
    except UnicodeDecodeError as err:
        dest.unlink(missing_ok=True)
        raise InvalidTranscript([("body", f"not UTF-8 text ({err.reason}); send UTF-8")]) from None
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    return size


def _allowed_paths(state: ServiceState, req: JobPathRequest) -> list[str]:
    roots = [Path(p).expanduser().resolve() for p in state.settings.allowed_paths]
    if not roots:
        raise ServiceError(
            403, "paths_disabled",
            "this server reads no server-side paths (LEAKAGE_ALLOWED_PATHS is empty); upload "
            "the transcripts instead", field="path",
        )  # fmt: skip
    out = []
    for given in req.all_paths():
        p = Path(given).expanduser().resolve()
        if not any(p.is_relative_to(r) for r in roots):
            raise ServiceError(
                403, "path_not_allowed",
                f"{given}: outside the folders this server allows (LEAKAGE_ALLOWED_PATHS)",
                field="path",
            )  # fmt: skip
        if not p.exists():
            raise InvalidInput(f"{given}: no such file or folder on the server")
        out.append(str(p))
    return out


def _path_request(head: bytes) -> JobPathRequest | None:
    """The body as a ``{"path": ...}`` request, or None when it is an upload."""
    try:
        doc = json.loads(head.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(doc, dict) or not ({"path", "paths"} & doc.keys()) or "game" in doc:
        return None
    try:
        return JobPathRequest.model_validate(doc)
    except ValidationError as err:
        e = err.errors(include_url=False)[0]
        raise ServiceError(
            422, "invalid_request", f"{e['msg']}", field=".".join(map(str, e["loc"])) or "body"
        ) from None


@router.post(
    "",
    status_code=202,
    summary="Submit a job",
    response_model=JobStatus,
    responses=error_responses(401, 403, 413, 422, 429, 503),
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "JSONL (one transcript per line) or a JSON array of transcripts to "
            'upload, or {"path": "..."} / {"paths": [...]} naming files or folders on the '
            "server inside LEAKAGE_ALLOWED_PATHS.",
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                },
                "application/json": {
                    "schema": {
                        "anyOf": [
                            {"$ref": "#/components/schemas/JobPathRequest"},
                            {"type": "array", "items": {"$ref": "#/components/schemas/Transcript"}},
                        ]
                    }
                },
            },
        }
    },
)
async def submit(request: Request, state: State, params: Params, response: Response) -> JobStatus:
    """Queue a job; poll ``GET /v1/jobs/{id}`` and fetch ``/results``."""
    assert state.store is not None and state.worker is not None
    state.backends.check(params.backend)
    job_id = new_job_id()
    uploads = state.settings.uploads_dir
    uploads.mkdir(parents=True, exist_ok=True)
    part = uploads / f"{job_id}.part"
    size = await _save_upload(request, part)
    with part.open("rb") as fh:
        head = fh.read(_PATH_PEEK + 1)
    if size <= _PATH_PEEK and (req := _path_request(head)) is not None:
        part.unlink()
        paths, upload = _allowed_paths(state, req), False
    else:
        if not head.strip():
            part.unlink()
            raise InvalidTranscript([("body", "empty body: send JSONL or a JSON array")])
        # .json reads a JSON array, one object, or JSONL (iter_transcripts falls back to
        # lines); .jsonl only lines, which a declared JSONL upload gets.
        ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
        dest = part.with_suffix(".jsonl" if ctype in JSONL_TYPES else ".json")
        os.replace(part, dest)
        paths, upload = [str(dest)], True
    state.store.create(job_id, params, paths, upload=upload)
    state.worker.wake()
    response.headers["Location"] = f"/v1/jobs/{job_id}"
    return _status(state, _job(state, job_id))


@router.get(
    "/{job_id}",
    summary="A job's state and progress",
    response_model=JobStatus,
    responses=error_responses(401, 404, 422, 429),
)
async def get_job(job_id: JobId, state: State) -> JobStatus:
    return _status(state, _job(state, job_id))


class ResultFormat(StrEnum):
    jsonl = "jsonl"
    parquet = "parquet"


def _jsonl(state: ServiceState, job_id: str) -> Iterator[bytes]:
    assert state.store is not None
    for _, _, body in state.store.results(job_id):
        yield body.encode() + b"\n"


def _parquet(state: ServiceState, job_id: str) -> Path:
    """The results as a Parquet file (a temporary file, removed after sending)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert state.store is not None
    columns: dict[str, list[Any]] = {
        k: []
        for k in (
            "record", "ok", "game_id", "game", "backend", "final_entropy_bits",
            "final_secret_probability", "final_secret_rank", "error_type", "error_message",
            "body",
        )
    }  # fmt: skip
    for idx, ok, body in state.store.results(job_id):
        doc = json.loads(body)
        summary = doc.get("summary", {}) if ok else {}
        err = {} if ok else doc.get("error", {})
        row = {
            "record": idx, "ok": ok, "game_id": doc.get("game_id"), "game": doc.get("game"),
            "backend": doc.get("backend"),
            "final_entropy_bits": summary.get("final_entropy_bits"),
            "final_secret_probability": summary.get("final_secret_probability"),
            "final_secret_rank": summary.get("final_secret_rank"),
            "error_type": err.get("type"), "error_message": err.get("message"), "body": body,
        }  # fmt: skip
        for k, v in row.items():
            columns[k].append(v)
    schema = pa.schema(
        [
            ("record", pa.int64()), ("ok", pa.bool_()), ("game_id", pa.string()),
            ("game", pa.string()), ("backend", pa.string()),
            ("final_entropy_bits", pa.float64()), ("final_secret_probability", pa.float64()),
            ("final_secret_rank", pa.int64()), ("error_type", pa.string()),
            ("error_message", pa.string()), ("body", pa.string()),
        ]
    )  # fmt: skip
    fd, name = tempfile.mkstemp(prefix=f"leakage-{job_id}-", suffix=".parquet")
    os.close(fd)
    pq.write_table(pa.table(columns, schema=schema), name)
    return Path(name)


@router.get(
    "/{job_id}/results",
    summary="A job's results (JSONL or Parquet)",
    response_class=Response,
    responses={
        200: {
            "description": "One row per record scored so far, in record order: the report, or "
            '{"record": i, "error": {...}}. X-Job-State says whether the job is finished.',
            "content": {
                "application/x-ndjson": {"schema": {"type": "string"}},
                "application/vnd.apache.parquet": {
                    "schema": {"type": "string", "format": "binary"}
                },
            },
        },
        **error_responses(401, 404, 422, 429),
    },
)
async def results(
    job_id: JobId,
    state: State,
    format: Annotated[ResultFormat, Query(description="jsonl or parquet")] = ResultFormat.jsonl,
) -> Response:
    job = _job(state, job_id)
    headers = {"X-Job-State": job.state}
    if format is ResultFormat.parquet:
        path = await state.pool.run(_parquet, state, job_id)
        return FileResponse(
            path,
            media_type="application/vnd.apache.parquet",
            filename=f"{job_id}.parquet",
            headers=headers,
            background=BackgroundTask(path.unlink, missing_ok=True),
        )
    return StreamingResponse(
        _jsonl(state, job_id), media_type="application/x-ndjson", headers=headers
    )


@router.delete(
    "/{job_id}",
    summary="Cancel a job",
    response_model=JobStatus,
    responses=error_responses(401, 404, 409, 422, 429),
)
async def cancel(job_id: JobId, state: State) -> JobStatus:
    """Cancel a queued or running job (results stored so far are kept)."""
    assert state.store is not None and state.worker is not None
    job = _job(state, job_id)
    if not state.store.cancel(job_id):
        raise ServiceError(409, "job_finished", f"job {job_id} is already {job.state}", field="id")
    state.worker.cancel(job_id)
    return _status(state, _job(state, job_id))
