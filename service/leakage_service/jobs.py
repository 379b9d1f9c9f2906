"""Jobs: large batches scored in the background, stored in SQLite so that they outlive the
server.

A job reads its games from files: an upload saved under ``service/uploads/``, or files on
the server inside the folders the operator allowed. A named folder is expanded into its
files when the job is submitted (each checked after resolving symbolic links, see
``job_worker.path_job_files``) and that list is stored, so record ``i`` is the same game on
every run. Each result (report or error) is committed as soon as its game is scored; the
worker that scores them is in ``job_worker``.

A server that stops gracefully puts its running job back in the queue; one that crashes
leaves it ``running``. Either way the next start decides, by its own
``LEAKAGE_ON_RESTART`` (:meth:`JobStore.recover`): resume it, skipping every record already
stored (no game is scored twice), or mark it failed.

Finished jobs are deleted, with their results and uploads, once older than
``job_max_age_days`` or, oldest first, while the store holds more than ``job_max_bytes``
(:class:`Retention`); the worker does it at start-up, after each job and once a minute,
then gives the freed pages back to the file system (incremental vacuum, WAL truncated).

States: ``queued`` -> ``running`` -> ``done`` | ``failed`` | ``cancelled``.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leakage_service.inputs import ScoreParams

log = logging.getLogger("leakage.service")

STATES = ("queued", "running", "done", "failed", "cancelled")
FINAL_STATES = ("done", "failed", "cancelled")
STOPPED_MESSAGE = "the server stopped while this job ran (LEAKAGE_ON_RESTART=fail)"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    created REAL NOT NULL,
    started REAL,
    finished REAL,
    params TEXT NOT NULL,
    paths TEXT NOT NULL,
    upload INTEGER NOT NULL,
    total INTEGER,
    done INTEGER NOT NULL DEFAULT 0,
    failed INTEGER NOT NULL DEFAULT 0,
    runs INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    bytes INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS jobs_state ON jobs (state, created);
CREATE TABLE IF NOT EXISTS results (
    job_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    game_id TEXT,
    body TEXT NOT NULL,
    run INTEGER NOT NULL,
    PRIMARY KEY (job_id, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS job_files (
    job_id TEXT NOT NULL,
    pos INTEGER NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (job_id, pos)
) WITHOUT ROWID;
"""
# ``bytes``: the job's upload plus the UTF-8 size of its stored results (what retention
# counts). ``job_files``: the files a path job reads, in order, fixed when it was submitted.


@dataclass(frozen=True)
class Job:
    id: str
    state: str
    created: float
    started: float | None
    finished: float | None
    params: ScoreParams
    paths: list[str]
    upload: bool
    total: int | None
    runs: int
    error: str | None
    done: int = 0
    failed: int = 0
    bytes: int = 0


@dataclass(frozen=True)
class Retention:
    """How long finished jobs are kept (the ``job_max_*`` settings)."""

    max_age_days: float = 7.0
    """Finished jobs older than this (by their finishing time) are deleted; 0: kept."""
    max_bytes: int = 1024**3
    """Past this many stored bytes (uploads and results) the finished jobs that finished
    first are deleted until the store is under it again; 0: no limit."""
    every: float = 60.0
    """Seconds between the worker's passes (it also makes one after each job)."""


_JOB_ID = re.compile(r"[0-9a-f]{32}")


def _upload_entry(first: str, job_id: str) -> str:
    """The name in the uploads folder a job's upload holds: its file, or its folder."""
    p = Path(first)
    return job_id if p.parent.name == job_id else p.name


def named_upload(job: Job) -> list[str] | None:
    """The file names of a multipart upload (saved under them in the job's own folder), in
    the order read; None for any other job."""
    if not job.upload or not job.paths or Path(job.paths[0]).parent.name != job.id:
        return None
    return [Path(p).name for p in job.paths]


def new_job_id() -> str:
    return uuid.uuid4().hex


class JobStore:
    """The jobs database. One connection per thread (SQLite connections are not shared):
    the worker's and the event loop's are kept; calls from a thread pool use
    :meth:`_short` (a connection opened and closed within the call)."""

    def __init__(self, path: Path, uploads: Path | None = None) -> None:
        self.path = Path(path)
        self.uploads = Path(uploads) if uploads is not None else self.path.parent / "uploads"
        self.results_root = self.path.parent / "job-results"
        """One folder per job: what ``leakage batch`` writes (``steps/`` parts of the step
        table ``leakage.steps/1``, its checkpoint ledger, manifest, reports and errors)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        con = self._con()
        fresh = not con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
        if fresh:  # must precede the first table; an older store is converted by vacuum()
            con.execute("PRAGMA auto_vacuum=INCREMENTAL")
        con.execute("PRAGMA journal_mode=WAL")
        con.executescript(_SCHEMA)
        self._migrate(con)

    # -- connections --------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        con.execute("PRAGMA synchronous=NORMAL")
        return con

    def _con(self) -> sqlite3.Connection:
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is None:
            con = self._connect()
            self._local.con = con
        return con

    def _short(self) -> closing[sqlite3.Connection]:
        """A connection for one call made on a pool thread (closed at the end of it)."""
        return closing(self._connect())

    def _write(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        con = self._con()
        return con.execute(sql, args).rowcount

    def _migrate(self, con: sqlite3.Connection) -> None:
        """Bring a store written by an older server up to this schema."""
        columns = {row[1] for row in con.execute("PRAGMA table_info(jobs)")}
        if "bytes" in columns:
            return
        log.info("job store: adding the size of each job (once)")
        con.execute("BEGIN IMMEDIATE")
        con.execute("ALTER TABLE jobs ADD COLUMN bytes INTEGER NOT NULL DEFAULT 0")
        con.execute(
            "UPDATE jobs SET bytes = (SELECT COALESCE(SUM(length(CAST(body AS BLOB))), 0) "
            "FROM results WHERE results.job_id = jobs.id)"
        )
        for job_id, paths in con.execute("SELECT id, paths FROM jobs WHERE upload").fetchall():
            size = _file_size(Path(json.loads(paths)[0]))
            con.execute("UPDATE jobs SET bytes = bytes + ? WHERE id = ?", (size, job_id))
        con.execute("COMMIT")

    # -- jobs ---------------------------------------------------------------------------

    def create(
        self,
        job_id: str,
        params: ScoreParams,
        paths: list[str],
        *,
        upload: bool,
        files: list[Path] | None = None,
        size: int = 0,
    ) -> None:
        """A queued job. ``paths``: the upload, or the paths the client named (resolved);
        ``files``: what a path job reads (:func:`path_job_files`); ``size``: the upload's."""
        con = self._con()
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute(
                "INSERT INTO jobs (id, state, created, params, paths, upload, bytes) "
                "VALUES (?,?,?,?,?,?,?)",
                (
                    job_id, "queued", time.time(), params.model_dump_json(), json.dumps(paths),
                    upload, size,
                ),
            )  # fmt: skip
            con.executemany(
                "INSERT INTO job_files (job_id, pos, path) VALUES (?,?,?)",
                ((job_id, i, str(p)) for i, p in enumerate(files or ())),
            )
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

    def get(self, job_id: str) -> Job | None:
        return self._get(self._con(), job_id)

    @staticmethod
    def _get(con: sqlite3.Connection, job_id: str) -> Job | None:
        row = con.execute(
            "SELECT id, state, created, started, finished, params, paths, upload, total, runs, "
            "error, done, failed, bytes FROM jobs WHERE id = ?",
            (job_id,),
        ).fetchone()
        if row is None:
            return None
        return Job(
            id=row[0],
            state=row[1],
            created=row[2],
            started=row[3],
            finished=row[4],
            params=ScoreParams.model_validate_json(row[5]),
            paths=json.loads(row[6]),
            upload=bool(row[7]),
            total=row[8],
            runs=row[9],
            error=row[10],
            done=row[11],
            failed=row[12],
            bytes=row[13],
        )

    def recent(self, limit: int = 100) -> list[Job]:
        """The newest ``limit`` jobs, newest first."""
        con = self._con()
        ids = con.execute("SELECT id FROM jobs ORDER BY created DESC, id LIMIT ?", (limit,))
        return [job for (job_id,) in ids.fetchall() if (job := self._get(con, job_id))]

    def files(self, job_id: str) -> list[Path]:
        """The files a path job reads, in order (empty for an upload, and for a path job an
        older server stored, which named its folders only)."""
        rows = self._con().execute(
            "SELECT path FROM job_files WHERE job_id = ? ORDER BY pos", (job_id,)
        )
        return [Path(p) for (p,) in rows]

    def errors(self, job_id: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._con().execute(
            "SELECT body FROM results WHERE job_id = ? AND ok = 0 ORDER BY idx LIMIT ?",
            (job_id, limit),
        )
        return [json.loads(b) for (b,) in rows]

    def counts(self) -> dict[str, int]:
        found = dict(self._con().execute("SELECT state, COUNT(*) FROM jobs GROUP BY state"))
        return {s: int(found.get(s, 0)) for s in STATES}

    def total_bytes(self) -> int:
        (n,) = self._con().execute("SELECT COALESCE(SUM(bytes), 0) FROM jobs").fetchone()
        return int(n)

    def claim_next(self) -> Job | None:
        """The oldest queued job, now marked running."""
        row = (
            self._con()
            .execute(
                "UPDATE jobs SET state = 'running', started = COALESCE(started, ?), "
                "runs = runs + 1 "
                "WHERE id = (SELECT id FROM jobs WHERE state = 'queued' ORDER BY created LIMIT 1) "
                "RETURNING id",
                (time.time(),),
            )
            .fetchone()
        )
        return None if row is None else self.get(row[0])

    def set_total(self, job_id: str, total: int) -> None:
        self._write("UPDATE jobs SET total = ? WHERE id = ?", (total, job_id))

    def stored(self, job_id: str) -> set[int]:
        rows = self._con().execute("SELECT idx FROM results WHERE job_id = ?", (job_id,))
        return {i for (i,) in rows}

    def add_result(self, job: Job, idx: int, *, ok: bool, game_id: str | None, body: str) -> bool:
        """Store one record's result and count it, in one transaction, if the job is still
        running; False (nothing stored) when it was cancelled or deleted meanwhile. The
        state is read in the transaction that stores, so a cancel is a barrier: once
        :meth:`cancel` has committed, no result of the job is stored, not even that of the
        game the worker had in hand."""
        con = self._con()
        con.execute("BEGIN IMMEDIATE")
        try:
            counted = con.execute(
                "UPDATE jobs SET done = done + 1, failed = failed + ?, bytes = bytes + ? "
                "WHERE id = ? AND state = 'running'",
                (0 if ok else 1, len(body.encode()), job.id),
            ).rowcount
            if counted:
                con.execute(
                    "INSERT INTO results (job_id, idx, ok, game_id, body, run) "
                    "VALUES (?,?,?,?,?,?)",
                    (job.id, idx, ok, game_id, body, job.runs),
                )
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        return bool(counted)

    def finish(self, job_id: str, state: str, error: str | None = None) -> bool:
        """Move a job to a final state (or back to queued); False when it already left
        ``running`` (cancelled meanwhile)."""
        finished = time.time() if state in FINAL_STATES else None
        return bool(
            self._write(
                "UPDATE jobs SET state = ?, finished = ?, error = ? "
                "WHERE id = ? AND state = 'running'",
                (state, finished, error, job_id),
            )
        )

    def cancel(self, job_id: str) -> bool:
        return bool(
            self._write(
                "UPDATE jobs SET state = 'cancelled', finished = ? "
                "WHERE id = ? AND state IN ('queued', 'running')",
                (time.time(), job_id),
            )
        )

    def recover(self, on_restart: str) -> int:
        """Jobs a stopped server left unfinished, handled as this server's operator chose:
        ``resume`` (queue them again) or ``fail``. A crash leaves a job ``running``; a
        graceful stop puts it back in the queue, where ``runs > 0`` tells it from a job that
        never started; either way the decision is this start's, not the stopped server's.
        How many jobs it resumed or failed."""
        if on_restart == "resume":
            (stopped,) = (
                self._con()
                .execute("SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND runs > 0")
                .fetchone()
            )
            crashed = self._write("UPDATE jobs SET state = 'queued' WHERE state = 'running'")
            return int(stopped) + crashed
        return self._write(
            "UPDATE jobs SET state = 'failed', finished = ?, error = ? "
            "WHERE state = 'running' OR (state = 'queued' AND runs > 0)",
            (time.time(), STOPPED_MESSAGE),
        )

    # -- results ------------------------------------------------------------------------

    def results_page(
        self, job_id: str, after: int = -1, limit: int = 200
    ) -> list[tuple[int, bool, str]]:
        """Up to ``limit`` results (index, ok, stored JSON) after record ``after``, in record
        order, read on a connection of this call's own: a page may be read on any thread."""
        with self._short() as con:
            rows = con.execute(
                "SELECT idx, ok, body FROM results WHERE job_id = ? AND idx > ? "
                "ORDER BY idx LIMIT ?",
                (job_id, after, limit),
            ).fetchall()
        return [(idx, bool(ok), body) for idx, ok, body in rows]

    def result_of_game(self, job_id: str, game_id: str) -> tuple[int, bool, str] | None:
        """The first result (index, ok, stored JSON) whose game id is exactly ``game_id``
        (any characters: compared as stored, never searched for in the JSON), on a
        connection of this call's own."""
        with self._short() as con:
            row = con.execute(
                "SELECT idx, ok, body FROM results WHERE job_id = ? AND game_id = ? "
                "ORDER BY idx LIMIT 1",
                (job_id, game_id),
            ).fetchone()
        return None if row is None else (int(row[0]), bool(row[1]), str(row[2]))

    def results(self, job_id: str, batch: int = 500) -> Iterator[tuple[int, bool, str]]:
        """Every result in record order, page by page (no SQLite object lives between two
        steps, so the iterator may be advanced from different threads)."""
        last = -1
        while rows := self.results_page(job_id, last, batch):
            yield from rows
            last = rows[-1][0]

    def outcomes(self, job_id: str) -> list[tuple[int, bool, str | None]]:
        """Every record stored, in record order: (index, ok, the stored error line of a
        failed record; None for a game, whose figures are in the job's step table), read
        without the games' reports."""
        with self._short() as con:
            rows = con.execute(
                "SELECT idx, ok, CASE WHEN ok THEN NULL ELSE body END FROM results "
                "WHERE job_id = ? ORDER BY idx",
                (job_id,),
            ).fetchall()
        return [(int(idx), bool(ok), body) for idx, ok, body in rows]

    # -- deleting -----------------------------------------------------------------------

    def delete(self, job_id: str) -> Job | None:
        """Delete a job, its results, its file list and its upload (any thread); the job as
        it was, or None when there was none. A running job should be cancelled first."""
        with self._short() as con:
            return self._delete(con, job_id)

    def _delete(self, con: sqlite3.Connection, job_id: str) -> Job | None:
        con.execute("BEGIN IMMEDIATE")
        try:
            job = self._get(con, job_id)
            if job is not None:
                for table, key in (("results", "job_id"), ("job_files", "job_id"), ("jobs", "id")):
                    con.execute(f"DELETE FROM {table} WHERE {key} = ?", (job_id,))
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        if job is not None and job.upload:
            self._remove_upload(job)
        if job is not None:
            self._remove_results(job_id)
        return job

    def results_dir(self, job_id: str) -> Path:
        """The job's results folder (:attr:`results_root`; may not exist yet)."""
        return self.results_root / job_id

    def _remove_results(self, job_id: str) -> None:
        folder = self.results_dir(job_id)
        if folder.parent == self.results_root:  # a job id is hex: never a path of its own
            shutil.rmtree(folder, ignore_errors=True)

    def _remove_upload(self, job: Job) -> None:
        """Remove a job's upload: only ever a file inside the uploads folder, or the job's
        own folder there (a multipart upload's files)."""
        uploads = self.uploads.resolve()
        for p in map(Path, job.paths):
            path = p.resolve()
            if path.parent == uploads:
                path.unlink(missing_ok=True)
            elif path.parent == uploads / job.id:
                shutil.rmtree(path.parent, ignore_errors=True)

    def prune(self, retention: Retention, now: float | None = None) -> list[Job]:
        """Delete finished jobs past the retention limits (age, then size, those that
        finished first going first); the jobs deleted."""
        now = time.time() if now is None else now
        con = self._con()
        final = "state IN ('done', 'failed', 'cancelled')"
        doomed: list[str] = []
        if retention.max_age_days > 0:
            cutoff = now - retention.max_age_days * 86400
            doomed += [
                i
                for (i,) in con.execute(
                    f"SELECT id FROM jobs WHERE {final} AND finished < ? ORDER BY finished",
                    (cutoff,),
                )
            ]
        deleted = [job for i in doomed if (job := self._delete(con, i)) is not None]
        if retention.max_bytes > 0:
            excess = self.total_bytes() - retention.max_bytes
            if excess > 0:
                rows = con.execute(
                    f"SELECT id, bytes FROM jobs WHERE {final} ORDER BY finished, created"
                ).fetchall()
                for job_id, size in rows:
                    if excess <= 0:
                        break
                    if (job := self._delete(con, job_id)) is not None:
                        deleted.append(job)
                        excess -= size
                if excess > 0:
                    log.warning(
                        "job store: %d bytes over LEAKAGE_JOB_MAX_BYTES in queued and running "
                        "jobs, which are never deleted",
                        excess,
                    )
        return deleted

    def vacuum(self) -> int:
        """Give free pages back to the file system (incremental vacuum, then the WAL
        checkpointed and truncated); the bytes the files shrank by. Nothing to do (no free
        page) costs two pragmas. A store created before incremental vacuum is converted
        once, by a full VACUUM."""
        con = self._con()
        before = self.disk_bytes()
        (mode,) = con.execute("PRAGMA auto_vacuum").fetchone()
        if mode != 2:  # 2: incremental
            log.info("job store: converting to incremental vacuum (once)")
            con.execute("PRAGMA auto_vacuum=INCREMENTAL")
            con.execute("VACUUM")
        elif con.execute("PRAGMA freelist_count").fetchone()[0]:
            # executescript steps the pragma to the end (execute() frees one page only)
            con.executescript("PRAGMA incremental_vacuum;")
        else:
            return 0
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return before - self.disk_bytes()

    def disk_bytes(self) -> int:
        """The database and its write-ahead log on disk."""
        return sum(_file_size(Path(f"{self.path}{s}")) for s in ("", "-wal"))

    def sweep_uploads(self) -> int:
        """Remove upload files no job refers to: ``.part`` files (uploads that never became a
        job) and saved uploads whose job is gone, both left by a crash. Only at start-up,
        when no upload is in flight. How many were removed."""
        if not self.uploads.is_dir():
            return self._sweep_results()
        with self._short() as con:
            known = {
                _upload_entry(json.loads(p)[0], job_id)
                for (job_id, p) in con.execute("SELECT id, paths FROM jobs WHERE upload")
            }
        removed = self._sweep_results()
        for f in self.uploads.iterdir():
            if f.name in known:
                continue
            if f.is_dir() and _JOB_ID.fullmatch(f.name):  # a multipart upload's folder
                shutil.rmtree(f, ignore_errors=True)
            elif f.is_file():
                f.unlink(missing_ok=True)
            else:
                continue
            removed += 1
        return removed

    def _sweep_results(self) -> int:
        """Remove the results folders of jobs that are gone (deleted while a crash was
        writing to them); how many."""
        if not self.results_root.is_dir():
            return 0
        with self._short() as con:
            known = {i for (i,) in con.execute("SELECT id FROM jobs")}
        gone = [d for d in self.results_root.iterdir() if d.is_dir() and d.name not in known]
        for d in gone:
            shutil.rmtree(d, ignore_errors=True)
        return len(gone)

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def housekeeping(store: JobStore, retention: Retention, *, start: bool = False) -> None:
    """Delete what retention says, then give the space back; at start-up also sweep the
    uploads folder of files no job refers to (left by a crash)."""
    deleted = store.prune(retention)
    swept = store.sweep_uploads() if start else 0
    freed = store.vacuum()  # also what a DELETE of a job freed
    if deleted or swept or freed:
        log.info(
            "job store: deleted %d finished job(s) and %d stray upload(s); files %+d bytes",
            len(deleted),
            swept,
            -freed,
        )
