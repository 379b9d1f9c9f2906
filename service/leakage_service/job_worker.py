"""The job worker: one background thread that runs queued jobs, oldest first, game by game,
and keeps the store within its retention limits; and the files a path job reads.

A path job's folders are expanded into files when it is submitted (:func:`path_job_files`),
each checked after resolving symbolic links; the worker checks them again when it runs, so
a queued job never reads a file the server's current ``LEAKAGE_ALLOWED_PATHS`` excludes.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from pathlib import Path

from leakage.errors import InvalidInput, InvalidTranscript, LeakageError
from leakage.transcripts import (
    AnyTranscript,
    RawRecord,
    ReadLimits,
    check_input_format,
    expand_inputs,
    iter_records,
    kind_of,
    to_transcript,
)
from leakage_service.inputs import ScoreParams, with_distractors
from leakage_service.jobs import Job, JobStore, Retention, housekeeping, named_upload
from leakage_service.runtime import Backends, score_records

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
    ) -> None:
        self.store = store
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
        params = job.params
        check_input_format(params.input_format)
        slot = self.backends.get(params.backend)
        files = self._files(job)

        def halted() -> bool:
            return self._stop.is_set() or job.id in self._cancelled

        def why() -> str:
            return "cancelled" if job.id in self._cancelled else "stopped"

        if job.total is None:
            total = 0
            for _ in iter_records(
                files, limits=self.limits
            ):  # one record each, parsed or not: a quick count
                total += 1
                if total % 1000 == 0 and halted():
                    return why()
            self.store.set_total(job.id, total)
        stored = self.store.stored(job.id)
        # An upload's files are the server's: their path is left out of error messages (the
        # files of a multipart upload keep their own names).
        upload = None
        if job.upload:
            upload = f"{files[0].parent}{os.sep}" if named_upload(job) else str(files[0])
        games = (
            (i, _game(raw, params, upload=upload))
            for i, raw in enumerate(iter_records(files, limits=self.limits))
            if i not in stored
        )
        for r in score_records(self.backends, slot, games, params, stop=halted):
            if not self.store.add_result(job, r.index, ok=r.ok, game_id=r.game_id, body=r.body):
                return "cancelled"  # cancelled or deleted meanwhile: this result not stored
            self._housekeeping()
        return why() if halted() else "done"


def _game(raw: RawRecord, params: ScoreParams, *, upload: str | None) -> AnyTranscript | Exception:
    return _with_distractors(to_transcript(raw, params.input_format), params, upload=upload)


def _with_distractors(
    item: AnyTranscript | InvalidInput, params: ScoreParams, *, upload: str | None
) -> AnyTranscript | Exception:
    """A job's record ready to score, or its error (``upload``, the path of an uploaded file
    or the folder of a multipart upload's files ending in a separator, left out: it is the
    server's, not the client's; such files keep their own names)."""
    folder = upload is not None and upload.endswith(os.sep)
    if isinstance(item, InvalidTranscript) and upload:
        name = Path(item.source).name if folder and item.source else None
        return InvalidTranscript(item.problems, record=item.record, source=name)
    if isinstance(item, InvalidInput) and upload:
        # Other errors begin with the file: "<path>: record <label>: <what>".
        message, prefix = str(item), upload if folder else f"{upload}: "
        return type(item)(message[len(prefix) :]) if message.startswith(prefix) else item
    if isinstance(item, InvalidInput):
        return item
    try:
        return with_distractors(item, params.distractors)
    except InvalidInput as err:
        return err
