"""Jobs for large batches: submit (upload or server-side path), poll, fetch results, cancel
(``POST .../cancel``, results kept) or delete (``DELETE``, gone); and what the explorer shows
of one: its curves (``GET .../curves``) and a game with its transcript (``GET .../games/{id}``)."""

from __future__ import annotations

import codecs
import datetime as dt
import json
import os
import shutil
from collections.abc import AsyncIterator
from enum import StrEnum
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from fastapi import Query, Request, Response
from fastapi.responses import FileResponse, StreamingResponse
from pydantic import ValidationError
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile as StarletteUploadFile
from starlette.exceptions import HTTPException

from leakage.errors import InvalidTranscript, validation_problems
from leakage.transcripts import TOO_DEEP, json_problems, jsonl_lines, loads
from leakage_service.deps import Params, State
from leakage_service.errors import ServiceError
from leakage_service.inputs import JSONL_TYPES
from leakage_service.job_worker import JobPathError, PathNotAllowed, path_job_files
from leakage_service.jobs import Job, named_upload, new_job_id
from leakage_service.logs import HEAD_BYTES, ZIP_MAGIC, check_log, log_format
from leakage_service.routes.job_export import results_jsonl, results_parquet
from leakage_service.routes.job_route import JobId, router
from leakage_service.routes.job_route import job_or_404 as _job
from leakage_service.schemas import (
    TRANSCRIPT_REF,
    ErrorBody,
    JobList,
    JobPathRequest,
    JobStatus,
    error_responses,
)
from leakage_service.state import ServiceState

_PATH_PEEK = 8 * 1024 * 1024
"""Largest JSON body read at submission (a possible ``{"path": ...}`` request, or one line of
malformed JSON to refuse at once); larger is an upload, read record by record by the job."""
_HEAD = 64 * 1024
"""Bytes read to tell an empty body, and JSON, from the rest."""
_MAX_FIELDS = 10
"""Form fields besides the files that are parsed, to name them in the 422 (a multipart upload
is ``file`` parts alone)."""
_READ_AS = (".json", ".jsonl", ".ndjson", ".eval")
"""The suffixes an uploaded file is read by as it is named (any other: read as ``.json``)."""
_MAX_FILES = 1000
"""Most ``file`` parts one multipart upload may hold (one job of them all)."""
_PAGE = 200
"""Results read per database query (and sent as one chunk) when streaming JSONL."""
_MAX_RECORD = 2**53 - 1
"""Largest record number a request may name: the largest integer a browser's JSON numbers
hold exactly, far below SQLite's 64-bit integers (a larger one would not fit the query)."""


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
        files=named_upload(job),
        total=job.total,
        done=job.done,
        ok=job.done - job.failed,
        failed=job.failed,
        progress=round(job.done / job.total, 4) if job.total else (1.0 if job.total == 0 else None),
        runs=job.runs,
        error=job.error,
        errors=state.store.errors(job.id),
        links={
            "self": f"/v1/jobs/{job.id}",
            "results": f"/v1/jobs/{job.id}/results",
            "cancel": f"/v1/jobs/{job.id}/cancel",
        },
    )


async def _part_chunks(upload: StarletteUploadFile) -> AsyncIterator[bytes]:
    while chunk := await upload.read(1 << 20):
        yield chunk


def _form_error(err: HTTPException) -> ServiceError:
    """Starlette's 400 for a form it cannot parse (too many parts, no boundary, ...)."""
    return ServiceError(
        422,
        "invalid_request",
        f"unreadable multipart upload: {err.detail} A multipart upload is one or more 'file' "
        "parts; or send the JSONL or JSON as the body itself",
        field="body",
    )


def _upload_name(upload: Any, i: int, seen: set[str]) -> str:
    """A 'file' part's file name, as the job keeps it: its last path component (``file-<n>``
    when that is no name), and a name sent twice numbered (``games (2).jsonl``)."""
    if isinstance(upload, str):
        raise ServiceError(
            422, "invalid_request",
            "the 'file' part has no filename, so it is not read as a file; send it as one "
            "(curl -F file=@logs.jsonl)", field="file",
        )  # fmt: skip
    name = Path((upload.filename or "").replace("\\", "/").replace("\x00", "")).name
    if not name or name in (".", ".."):
        name = f"file-{i + 1}"
    stem, suffix = Path(name).stem, Path(name).suffix
    k, kept = 1, name
    while kept in seen:
        k += 1
        kept = f"{stem} ({k}){suffix}"
    seen.add(kept)
    return kept


async def _save_files(request: Request, state: Any, folder: Path) -> tuple[list[Path], int]:
    """A multipart upload: its 'file' parts (one or more, at most ``_MAX_FILES``), each saved
    under its own name in ``folder`` (the job's), checked as a single upload is (UTF-8 text
    or an Inspect log, not empty); the files in the order sent and their total size. The
    names stay the files' own, so that the job's games carry them (a CK-Arena game's id and
    ``meta.source_file``) and its errors name them."""
    try:
        form = await request.form(max_files=_MAX_FILES, max_fields=_MAX_FIELDS)
    except HTTPException as err:
        if isinstance(err, ServiceError) or err.status_code != 400:
            raise
        raise _form_error(err) from None
    try:
        parts = form.getlist("file")
        if not parts:
            raise ServiceError(
                422, "invalid_request", "a multipart upload needs a 'file' part", field="file"
            )
        if others := sorted(set(form.keys()) - {"file"}):
            raise ServiceError(
                422, "invalid_request",
                "a multipart upload is 'file' parts only; it also has "
                + ", ".join(map(repr, others)),
                field=others[0],
            )  # fmt: skip
        seen: set[str] = set()
        names = [_upload_name(p, i, seen) for i, p in enumerate(parts)]
        folder.mkdir()
        files, total = [], 0
        for part, name in zip(parts, names, strict=True):
            assert isinstance(part, StarletteUploadFile)
            # read as its suffix says (.json by content: an array, an object or JSONL, an
            # Inspect JSON log); any other name gets .json after its own
            suffix = Path(name).suffix.lower()
            dest = folder / (name if suffix in _READ_AS else f"{name}.json")
            size = await _save_stream(_part_chunks(part), dest, field="file", name=name)
            with dest.open("rb") as fh:
                raw_head = fh.read(_HEAD)
            if not raw_head.removeprefix(codecs.BOM_UTF8).strip():
                raise InvalidTranscript(
                    [("file", f"{name}: empty upload: send JSONL or a JSON array")]
                )
            if log_format(raw_head[:HEAD_BYTES]) is not None:  # an Inspect log
                check = partial(check_log, field="file", limits=state.settings.read_limits())
                await run_in_threadpool(check, dest)
            files.append(dest)
            total += size
        return files, total
    finally:
        await form.close()


async def _save_stream(
    chunks: AsyncIterator[bytes], dest: Path, *, field: str, name: str | None = None
) -> int:
    """Stream an upload to ``dest`` (checking it is UTF-8 on the way, unless it is a zip
    archive: an Inspect ``.eval`` log, checked once saved); bytes written. ``field`` is what
    an error names (``body``, or the multipart ``file`` part), ``name`` the file's."""
    utf8 = codecs.getincrementaldecoder("utf-8-sig")()
    size = before = 0  # bytes written; where the last decode started (an error's offset)
    start = b""  # the first bytes, until they tell a zip archive from text
    text: bool | None = None
    try:
        with dest.open("wb") as fh:
            async for chunk in chunks:
                if text is None:
                    start += chunk
                    if len(start) < len(ZIP_MAGIC):
                        continue
                    text, chunk, start = not start.startswith(ZIP_MAGIC), start, b""
                if text:
                    before = size - len(utf8.getstate()[0])  # where this decode starts
                    utf8.decode(chunk)
                fh.write(chunk)
                size += len(chunk)
            if start:  # fewer bytes than a zip's signature: text
                before = size
                utf8.decode(start)
                fh.write(start)
                size += len(start)
            before = size - len(utf8.getstate()[0])
            utf8.decode(b"", final=True)
    except UnicodeDecodeError as err:
        dest.unlink(missing_ok=True)
        at = before + err.start
        whose = f"{name}: " if name else ""
        raise InvalidTranscript(
            [(field, f"{whose}not UTF-8 text (byte {at}: {err.reason}); send UTF-8")]
        ) from None
    except BaseException:
        dest.unlink(missing_ok=True)
        raise
    return size


def _path_job(state: ServiceState, req: JobPathRequest) -> tuple[list[str], list[Path]]:
    """The paths a request names (resolved) and the files the job will read, each checked
    to lie inside ``LEAKAGE_ALLOWED_PATHS`` after resolving ``..`` and symbolic links
    (blocking: folders are walked; run on a thread)."""
    roots = [Path(p).expanduser().resolve() for p in state.settings.allowed_paths]
    if not roots:
        raise ServiceError(
            403, "paths_disabled",
            "this server reads no server-side paths (LEAKAGE_ALLOWED_PATHS is empty); upload "
            "the transcripts instead", field="path",
        )  # fmt: skip
    named: list[tuple[str, str, Path]] = []
    for field, given in req.named():
        try:
            p = Path(given).expanduser()
        except RuntimeError:  # "~someone": no such user here
            user = given.split("/", 1)[0]
            raise ServiceError(
                422, "invalid_request",
                f"{given}: no user {user[1:]!r} on the server to expand {user!r}; give an "
                "absolute path", field=field,
            ) from None  # fmt: skip
        try:
            p = p.resolve()
        except (OSError, RuntimeError, ValueError) as err:  # a loop of links, before 3.13
            raise ServiceError(
                422, "invalid_request", f"{given}: not a usable path ({err})", field=field
            ) from None
        if not any(p.is_relative_to(r) for r in roots):
            raise ServiceError(
                403, "path_not_allowed",
                f"{given}: outside the folders this server allows (LEAKAGE_ALLOWED_PATHS)",
                field=field,
            )  # fmt: skip
        try:
            exists = p.exists()
        except OSError as err:  # e.g. a name too long, a folder it may not enter
            raise ServiceError(
                422, "invalid_input", f"{given}: cannot be read on the server ({err.strerror})",
                field=field,
            ) from None  # fmt: skip
        if not exists:
            raise ServiceError(
                422, "invalid_input", f"{given}: no such file or folder on the server",
                field=field,
            )  # fmt: skip
        named.append((field, given, p))
    try:
        files = path_job_files(named, roots)
    except PathNotAllowed as err:
        raise ServiceError(403, "path_not_allowed", str(err), field=err.field) from None
    except JobPathError as err:
        raise ServiceError(422, "invalid_input", str(err), field=err.field) from None
    return [str(p) for _, _, p in named], files


def _lines(text: str) -> int:
    return sum(1 for line in jsonl_lines(text) if line.strip())


def _path_request(path: Path) -> JobPathRequest | None:
    """The saved body as a ``{"path": ...}`` request (a JSON object with a ``path`` or
    ``paths`` key), or None when it is an upload (blocking: run on a thread). A body that is
    one line of malformed JSON (not JSONL, whose lines fail one by one) is refused here: it
    holds no record to score."""
    try:
        text = path.read_text("utf-8-sig")
    except UnicodeDecodeError:
        return None  # an upload: the job says which record is not UTF-8
    if text.lstrip()[:1] == "[" and _lines(text) > 1:
        return None  # an array over several lines: the job reads it (no need to twice)
    try:
        doc, flagged = loads(text)
    except json.JSONDecodeError as err:
        if _lines(text) > 1:
            return None  # JSONL, say: an upload
        where = f"line {err.lineno} column {err.colno}"
        raise ServiceError(
            422, "invalid_input", f"malformed JSON: {err.msg.removesuffix(' at')} at {where}",
            field="body",
        ) from None  # fmt: skip
    except RecursionError:
        if text.lstrip()[:1] == "[" or _lines(text) > 1:
            return None  # an array or JSONL: each record fails or is read alone
        # one object no JSON reader here can read: refused whole
        raise ServiceError(422, "invalid_input", TOO_DEEP, field="body") from None
    if not isinstance(doc, dict) or not ({"path", "paths"} & doc.keys()):
        return None
    problems = json_problems(doc) if flagged else []
    if problems:  # an over-long number, a lone surrogate, a repeated key
        field, msg = problems[0]
        raise ServiceError(422, "invalid_request", msg, field=field or "body")
    try:
        return JobPathRequest.model_validate(doc)
    except ValidationError as err:
        # the request's own names only (pydantic adds the union member it tried)
        field, msg = validation_problems(
            err, keep=lambda part: isinstance(part, int) or part in JobPathRequest.model_fields
        )[0]
        raise ServiceError(422, "invalid_request", msg, field=field or "body") from None


_SPACE = " \\t\\n\\r\\u000b\\u000c"  # what bytes.strip() removes, as a JSON Schema class
_TEXT = {
    "type": "string",
    # not empty: past one leading byte order mark and the white space, something is left
    "pattern": f"^(\\ufeff[{_SPACE}]*[^{_SPACE}]|[{_SPACE}]*[^{_SPACE}\\ufeff]|[{_SPACE}]+\\ufeff)",
}
_OBJECT_NOT_PATHS = {
    "type": "object",
    "not": {"anyOf": [{"required": ["path"]}, {"required": ["paths"]}]},
}


@router.post(
    "",
    status_code=202,
    summary="Submit a job",
    response_model=JobStatus,
    responses={
        **error_responses(401, 403, 413, 422, 429, 503),
        422: {
            "model": ErrorBody,
            "description": "Bad input: the body (empty, not UTF-8, a path that is not "
            "usable), a query parameter, or a multipart form that is not 'file' parts "
            f"(at most {_MAX_FILES}, each with a file name; a form with at most "
            f"{_MAX_FIELDS} other fields is refused naming one).",
        },
    },
    openapi_extra={
        "requestBody": {
            "required": True,
            "description": "An upload: JSONL (one transcript per line), or a JSON array of "
            "transcripts or one transcript object, as the body or as multipart 'file' "
            "parts (UTF-8 text; several files make one job, read in the order sent, each "
            "keeping its file name); or an Inspect AI log (.eval zip or JSON log, any "
            "Content-Type), checked when submitted. Each record is a leakage.transcript/1 "
            "game or a third-party log (input_format); a record that is neither fails alone "
            "in the job, so any JSON value is a record here. Or, as application/json, "
            '{"path": "..."} / {"paths": [...]} naming files or folders on the server inside '
            "LEAKAGE_ALLOWED_PATHS: a JSON object with a path or paths key is always such a "
            "request.",
            "content": {
                "application/x-ndjson": {"schema": _TEXT},
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {
                            "file": {
                                "type": "array",
                                "minItems": 1,
                                "maxItems": _MAX_FILES,
                                "items": {"type": "string", "format": "binary"},
                                "description": "One or more files, each with a file name (a "
                                "name sent twice is kept numbered: games (2).jsonl), of UTF-8 "
                                "text, not empty: JSONL, a JSON array or one "
                                "JSON object; or an Inspect AI log (a .eval zip archive or a "
                                "JSON log). Otherwise a 422 naming the field file.",
                            }
                        },
                        "required": ["file"],
                        "additionalProperties": False,
                    },
                    "encoding": {"file": {"contentType": "application/x-ndjson; charset=utf-8"}},
                },
                "application/json": {
                    "schema": {
                        "anyOf": [
                            {"$ref": "#/components/schemas/JobPathRequest"},
                            {"type": "array", "items": {"anyOf": [TRANSCRIPT_REF, {}]}},
                            _OBJECT_NOT_PATHS,
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
    dest: Path | None = None
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":  # files, each kept under its own name
        folder = uploads / job_id
        try:
            files, size = await _save_files(request, state, folder)
            state.store.create(job_id, params, [str(f) for f in files], upload=True, size=size)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)  # a refused request leaves no file
            raise
        state.worker.wake()
        response.headers["Location"] = f"/v1/jobs/{job_id}"
        return _status(state, _job(state, job_id))
    try:
        size = await _save_stream(request.stream(), part, field="body")
        with part.open("rb") as fh:
            raw_head = fh.read(_HEAD)
        head = raw_head.removeprefix(codecs.BOM_UTF8).lstrip()
        if not head:
            raise InvalidTranscript([("body", "empty upload: send JSONL or a JSON array")])
        req = None
        inspect_log = log_format(raw_head[:HEAD_BYTES]) is not None
        if inspect_log:  # either of Inspect's formats, whatever the Content-Type says
            limits = state.settings.read_limits()
            await run_in_threadpool(partial(check_log, field="body", limits=limits), part)
        elif ctype not in JSONL_TYPES:  # JSON: an upload or a path request
            if head[:1] not in (b"[", b"{"):
                raise ServiceError(
                    422, "invalid_request",
                    f"the body is not JSON: it starts with {head[:12].decode(errors='replace')!r};"
                    " send a JSON array of transcripts, one transcript object, or JSONL (as "
                    "Content-Type application/x-ndjson)", field="body",
                )  # fmt: skip
            if size <= _PATH_PEEK:
                req = await run_in_threadpool(_path_request, part)
        if req is not None:
            part.unlink()
            paths, path_files = await run_in_threadpool(_path_job, state, req)
            state.store.create(job_id, params, paths, upload=False, files=path_files)
        else:
            # .json reads a JSON array, one object, or JSONL (iter_transcripts falls back to
            # lines); .jsonl only lines, which a declared JSONL upload gets.
            # An Inspect log is read as one whatever its name (transcripts._files reads a
            # .json or .eval file by its content); .eval says what it is.
            suffix = ".jsonl" if ctype in JSONL_TYPES else ".json"
            dest = part.with_suffix(".eval" if inspect_log else suffix)
            os.replace(part, dest)
            state.store.create(job_id, params, [str(dest)], upload=True, size=size)
    except BaseException:
        if dest is not None:
            dest.unlink(missing_ok=True)
        raise
    finally:
        part.unlink(missing_ok=True)  # a refused request leaves no file behind
    state.worker.wake()
    response.headers["Location"] = f"/v1/jobs/{job_id}"
    return _status(state, _job(state, job_id))


@router.get(
    "",
    summary="The jobs on this server, newest first",
    response_model=JobList,
    responses=error_responses(401, 422, 429),
)
async def list_jobs(
    state: State,
    limit: Annotated[int, Query(ge=1, le=500, description="At most this many jobs.")] = 100,
) -> JobList:
    """Every job's state and progress (the explorer's list of jobs), newest first."""
    assert state.store is not None
    jobs = await run_in_threadpool(state.store.recent, limit)
    total = sum(state.store.counts().values())
    return JobList(jobs=[_status(state, j) for j in jobs], total=total)


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
        **error_responses(401, 404, 422, 429, 503),
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
        path = await state.slow.run(results_parquet, state, job_id)
        return FileResponse(
            path,
            media_type="application/vnd.apache.parquet",
            filename=f"{job_id}.parquet",
            headers=headers,
            background=BackgroundTask(path.unlink, missing_ok=True),
        )
    return StreamingResponse(
        results_jsonl(state, job_id), media_type="application/x-ndjson", headers=headers
    )


@router.post(
    "/{job_id}/cancel",
    summary="Cancel a job",
    response_model=JobStatus,
    responses={
        200: {"description": "The job, now cancelled (results stored so far are kept)."},
        **error_responses(401, 404, 409, 422, 429),
    },
)
async def cancel(job_id: JobId, state: State) -> JobStatus:
    """Cancel a queued or running job; the results stored so far are kept. A job that has
    finished is a 409 (``DELETE`` deletes it)."""
    assert state.store is not None and state.worker is not None
    _job(state, job_id)
    if not state.store.cancel(job_id):
        job = _job(state, job_id)  # finished since it was read
        raise ServiceError(
            409, "job_finished",
            f"job {job_id} is already {job.state}; DELETE /v1/jobs/{job_id} deletes it with "
            "its results", field="id",
        )  # fmt: skip
    state.worker.cancel(job_id)
    return _status(state, _job(state, job_id))


@router.delete(
    "/{job_id}",
    status_code=204,
    summary="Delete a job",
    response_class=Response,
    responses={
        204: {"description": "The job, its results and its upload are deleted."},
        **error_responses(401, 404, 422, 429),
    },
)
async def delete(job_id: JobId, state: State) -> Response:
    """Delete a job whatever its state (a queued or running one is cancelled first), with its
    results and its upload; the job is then 404. To stop a job and keep what it stored,
    ``POST /v1/jobs/{id}/cancel``."""
    assert state.store is not None and state.worker is not None
    _job(state, job_id)
    state.store.cancel(job_id)
    state.worker.cancel(job_id)
    await run_in_threadpool(state.store.delete, job_id)
    state.worker.housekeeping_soon()  # give the space back
    return Response(status_code=204)


# The explorer's views of a job, registered on the same router after the routes above.
from leakage_service.routes import job_views  # noqa: E402, F401
