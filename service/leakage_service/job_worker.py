"""The job worker: one background thread that runs queued jobs, oldest first, game by game,
and keeps the store within its retention limits; and the files a path job reads.

A path job's folders are expanded into files when it is submitted (:func:`path_job_files`),
each checked after resolving symbolic links; the worker checks them again when it runs, so
a queued job never reads a file the server's current ``LEAKAGE_ALLOWED_PATHS`` excludes.
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from leakage.batch import BatchJob, ChunkResult, run_batch
from leakage.errors import ErrorRecord, InvalidInput, LeakageError
from leakage.transcripts import (
    AnyTranscript,
    ReadLimits,
    check_input_format,
    expand_inputs,
    iter_records,
    kind_of,
)
from leakage_service.errors import error_line
from leakage_service.inputs import check_size, with_distractors
from leakage_service.jobs import Job, JobStore, Retention, housekeeping, named_upload
from leakage_service.runtime import Backends, BackendSlot
from leakage_service.settings import Settings

log = logging.getLogger("leakage.service")


class JobPathError(InvalidInput):
    """A path of a path job that cannot be read, naming the request field it came from."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class PathNotAllowed(JobPathError):
    """A file a path job would read lies outside ``LEAKAGE_ALLOWED_PATHS``."""


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path.is_relative_to(r) for r in roots)


def path_job_files(named: list[tuple[str, str, Path]], roots: list[Path]) -> list[Path]:
    """The files a path job reads, resolved, in the order ``iter_transcripts`` reads them:
    each named file, and the JSON / JSONL / Parquet files found under each named folder
    (recursively, sorted). ``named`` holds (request field, what the client wrote, the
    resolved path) for each path of the request.

    Every file is checked after resolving its symbolic links: one that leads outside the
    allowed ``roots`` raises :class:`PathNotAllowed` naming it as found in the folder (its
    target, a path outside, is not shown); a folder without such files raises
    :class:`JobPathError`. Blocking (walks folders): call from a thread.
    """
    out: dict[Path, None] = {}
    for field, given, path in named:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.is_file() and kind_of(p))
            if not found:
                raise JobPathError(
                    f"{given}: no JSON, JSONL or Parquet files in this folder (.json, .jsonl, "
                    ".parquet, .gz of those)",
                    field=field,
                )
        else:
            found = [path]
        for p in found:
            real = p.resolve()
            if not _inside(real, roots):
                shown = given if p == path else f"{given.rstrip('/')}/{p.relative_to(path)}"
                raise PathNotAllowed(
                    f"{shown}: a link to a file outside the folders this server allows "
                    "(LEAKAGE_ALLOWED_PATHS); the job reads nothing outside them: remove "
                    "the link or name the other files",
                    field=field,
                )
            out.setdefault(real, None)
    return list(out)


class JobWorker:
    """One background thread that runs queued jobs, oldest first, game by game, and keeps
    the store within its retention limits."""

    def __init__(
        self,
        store: JobStore,
        backends: Backends,
        *,
        allowed: list[Path] | None = None,
        retention: Retention | None = None,
        limits: ReadLimits | None = None,
        ray_address: str | None = None,
        chunk_size: int = 16,
        on_done: Callable[[str, Path], None] | None = None,
    ) -> None:
        self.store = store
        self.on_done = on_done
        """Called with a job and its results folder once it is done, before it is marked
        done (the server's step cache compacts its parts: ``StepCache.compact``)."""
        self.ray_address = ray_address
        """A Ray cluster to score on (``LEAKAGE_RAY_ADDRESS``; ``auto``: the one this machine
        belongs to); None: in this process, with the server's loaded backend."""
        self.chunk_size = chunk_size
        """Records scored (and stored, and committed to the step table) together."""
        self.limits = limits or ReadLimits()
        """What an Inspect log or ``.gz`` file of a job may expand to (``max_log_*``)."""
        self.backends = backends
        self.allowed = [Path(p).expanduser().resolve() for p in allowed or ()]
        """Folders a path job may read, checked again when it runs (settings may change)."""
        self.retention = retention
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._cancelled: set[str] = set()
        self._next_housekeeping = 0.0
        self._thread = threading.Thread(target=self._loop, name="leakage-jobs", daemon=True)

    def start(self) -> None:
        self._thread.start()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()

    def wake(self) -> None:
        self._wake.set()

    def cancel(self, job_id: str) -> None:
        self._cancelled.add(job_id)

    def housekeeping_soon(self) -> None:
        """Run the retention pass (and give space back) at the next occasion."""
        self._next_housekeeping = 0.0
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop after the game in hand; False when the thread is still running after
        ``timeout`` seconds (then nothing it uses may be closed under it)."""
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                self._housekeeping()
                job = self.store.claim_next()
                if job is None:
                    self._wake.wait(1.0)
                    self._wake.clear()
                    continue
                self._run_safely(job)
                self._next_housekeeping = 0.0  # after each job
        finally:
            self.store.close()

    def _housekeeping(self) -> None:
        if self.retention is None or time.monotonic() < self._next_housekeeping:
            return
        self._next_housekeeping = time.monotonic() + self.retention.every
        try:
            housekeeping(self.store, self.retention)
        except (sqlite3.Error, OSError):
            log.exception("job store housekeeping failed (tried again later)")

    def _run_safely(self, job: Job) -> None:
        try:
            state = self._run(job)
        except LeakageError as err:  # e.g. the backend cannot be created here
            log.warning("job %s failed: %s", job.id, err)
            self.store.finish(job.id, "failed", str(err))
            return
        except Exception:
            if self._stop.is_set():  # the server is going down under it: decide at restart
                log.warning("job %s interrupted by the shutdown", job.id, exc_info=True)
                self.store.finish(job.id, "queued")
                return
            log.exception("job %s failed", job.id)
            self.store.finish(job.id, "failed", "internal error; see the server log")
            return
        finally:
            self._cancelled.discard(job.id)
        if state == "stopped":  # server shutting down: the next start resumes or fails it
            self.store.finish(job.id, "queued")
        elif state == "done":
            if self.on_done is not None:
                self.on_done(job.id, self.store.results_dir(job.id))
            self.store.finish(job.id, "done")
        log.info("job %s: %s", job.id, state)

    def _files(self, job: Job) -> list[Path]:
        """The files the job reads; a path job's are checked against the allowed folders
        again (the settings, or a link, may have changed since it was submitted)."""
        if job.upload:  # a multipart upload may be several files
            return [Path(p).resolve() for p in job.paths]
        files = self.store.files(job.id) or expand_inputs(job.paths)  # older stores: folders
        for f in files:
            if not _inside(f.resolve(), self.allowed):
                raise InvalidInput(
                    f"{f}: outside the folders this server allows (LEAKAGE_ALLOWED_PATHS)"
                )
        return files

    def _run(self, job: Job) -> str:
        """Score the job's records with ``leakage batch``'s engine (:func:`run_batch`) into
        the job's results folder, storing each record's report or error line as its chunk
        comes back; resumed after a restart from the engine's own ledger."""
        params = job.params
        check_input_format(params.input_format)
        slot = self.backends.get(params.backend)
        files = self._files(job)

        def halted() -> bool:
            return self._stop.is_set() or job.id in self._cancelled

        def why() -> str:
            return "cancelled" if job.id in self._cancelled else "stopped"

        out = self.store.results_dir(job.id)
        offsets = self._offsets(job, files, out, halted)
        if offsets is None:
            return why()
        # An upload's files are the server's: their path is left out of error messages (the
        # files of a multipart upload keep their own names).
        upload = None
        if job.upload:
            upload = f"{files[0].parent}{os.sep}" if named_upload(job) else str(files[0])
        stored = self.store.stored(job.id)
        cancelled = False

        def store(chunk: ChunkResult) -> bool:
            nonlocal cancelled
            for o in chunk.outcomes():
                idx = offsets[o.source] + o.record
                if idx in stored:  # stored by a run that stopped before the engine committed
                    continue
                if o.ok:
                    body, game_id = o.body, json.loads(o.body).get("game_id")
                else:
                    body, game_id = job_error_line(o.body, idx, upload), None
                if not self.store.add_result(job, idx, ok=o.ok, game_id=game_id, body=body):
                    cancelled = True  # cancelled or deleted meanwhile: nothing more stored
                    return False
            self._housekeeping()
            return True

        ray = self.ray_address is not None
        try:
            self._batch(job, files, out, slot, store, ray)
        except (OSError, sqlite3.Error):
            if cancelled or self.store.get(job.id) is None:  # deleted under it
                return "cancelled"
            raise
        if cancelled:
            return "cancelled"
        return why() if halted() else "done"

    def _batch(
        self,
        job: Job,
        files: list[Path],
        out: Path,
        slot: BackendSlot,
        store: Callable[[ChunkResult], bool],
        ray: bool,
    ) -> None:
        params = job.params

        def halted() -> bool:
            return self._stop.is_set() or job.id in self._cancelled

        options: dict[str, Any] = {}
        if ray:  # the actors build the backend as this server does, its files included
            options = _plain(self.backends.options(slot.name))
        run_batch(
            BatchJob(
                inputs=files,
                out=out,
                backend=params.backend,
                backend_options=options,
                variables=self.backends.settings.variables() if ray else None,
                input_format=params.input_format,
                options=params.options(),
                engine="ray" if ray else "local",
                ray_address=self.ray_address,
                workers=None if ray else 0,
                resume=True,
                chunk_size=self.chunk_size,
                checkpoint_games=1,  # every chunk committed: a view sees it at once
                shape=params.shape(),
                prepare=partial(
                    prepare_job_game,
                    distractors=tuple(params.distractors),
                    settings=self.backends.settings,
                    backend=slot.name,
                    model=None if ray else slot.backend,
                ),
                limits=self.limits,
                backend_object=None if ray else slot.backend,
                backend_lock=None if ray else slot.lock,
                on_chunk=store,
                stop=halted,
                record_errors=True,  # a game the backend fails on fails alone (docs/service.md)
            ),
            command=["leakage-service", "job", job.id],
        )

    def _offsets(
        self, job: Job, files: list[Path], out: Path, halted: Callable[[], bool]
    ) -> dict[str, int] | None:
        """Where each file's records start among the job's records (a record's number in
        the job is its file's offset plus its position in the file), counted once and kept
        in the results folder; None when the job was halted while counting."""
        kept = out / "offsets.json"
        if kept.is_file():
            return {str(k): int(v) for k, v in json.loads(kept.read_text("utf-8")).items()}
        offsets: dict[str, int] = {}
        total = 0
        for f in files:
            offsets[str(f)] = total
            for _ in iter_records([f], limits=self.limits):  # parsed or not: a quick count
                total += 1
                if total % 1000 == 0 and halted():
                    return None
        if job.total is None:
            self.store.set_total(job.id, total)
        out.mkdir(parents=True, exist_ok=True)
        tmp = out / "offsets.json.tmp"
        tmp.write_text(json.dumps(offsets), encoding="utf-8")
        tmp.replace(kept)
        return offsets


def _plain(options: dict[str, Any]) -> dict[str, Any]:
    """Backend options as the manifest records them: paths as text, and no ``variables``
    (the keys of web count sources: given to the actors apart, never written)."""
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key == "variables":
            continue
        if isinstance(value, dict):
            value = _plain(value)
        out[key] = str(value) if isinstance(value, Path) else value
    return out


def job_error_line(batch_line: str, idx: int, upload: str | None) -> str:
    """The stored error of record ``idx`` (``{"record": idx, "error": {...}}``, as
    :func:`leakage_service.errors.error_line` writes it) from the engine's error line
    (which names the file and the record's place in it); an upload's path, the server's
    and not the client's, is left out of the message: an uploaded file's whole path, or the
    folder (``upload`` ending in a separator) of a multipart upload's files, which keep
    their own names)."""
    err = json.loads(batch_line)["error"]
    message = err["message"]
    if upload and upload.endswith(os.sep):
        message = message.replace(upload, "")
    elif upload:
        message = message.replace(f"{upload}, ", "").replace(f"{upload}: ", "")
    backend_error = _backend_error(err["type"], message)
    if backend_error is not None:  # the backend failed on this game (record_errors)
        return error_line(idx, backend_error)
    problems = tuple((p["field"] or "", p["message"]) for p in err.get("problems", ()))
    return ErrorRecord(idx, err["type"], message, err.get("field"), problems).to_json()


def _backend_error(error_type: str, message: str) -> LeakageError | None:
    """The library error (not an ``InvalidInput``) whose ``error_type`` is ``error_type``,
    rebuilt with ``message``, so that its stored line is the one the service writes for it
    elsewhere (``errors.error_line``: its type unless a 500, server paths redacted); None
    for an input's error or an unknown type, kept as the engine wrote it."""
    found: type[LeakageError] | None = None
    todo: list[type[LeakageError]] = [LeakageError]
    while todo and found is None:
        cls = todo.pop()
        if cls.error_type == error_type and not issubclass(cls, InvalidInput):
            found = cls
        todo.extend(cls.__subclasses__())
    if found is None:
        return None
    rebuilt = found.__new__(found)
    rebuilt.args = (message,)
    return rebuilt


def prepare_job_game(
    game: AnyTranscript,
    *,
    distractors: tuple[str, ...],
    settings: Settings,
    backend: str,
    model: object | None = None,
) -> AnyTranscript | InvalidInput:
    """A job's game ready to score (its distractors added), or why not: a duplicate
    distractor, or a game over this server's size limits (``check_size``, before any
    backend sees it; ``model``, the loaded backend, counts its language model's tokens)."""
    try:
        game = with_distractors(game, list(distractors))
        check_size(game, settings, backend, model)
    except InvalidInput as err:
        return err
    return game
