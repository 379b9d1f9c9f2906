"""Jobs: large batches scored in the background, stored in SQLite so that they outlive the
server.

A job reads its games from files (an upload saved under ``service/uploads/``, or folders on
the server the operator allowed) with ``iter_transcripts``, so record ``i`` is the same game
on every run. Each result (report or error) is committed as soon as its game is scored; a
job that was running when the server stopped is resumed at start-up (or marked failed, as
the operator chose), skipping every record already stored, so no game is scored twice.

States: ``queued`` -> ``running`` -> ``done`` | ``failed`` | ``cancelled``.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leakage.errors import InvalidInput, InvalidTranscript, LeakageError
from leakage.transcripts import AnyTranscript, iter_transcripts
from leakage_service.inputs import ScoreParams, with_distractors
from leakage_service.runtime import Backends, score_records

log = logging.getLogger("leakage.service")

STATES = ("queued", "running", "done", "failed", "cancelled")
FINAL_STATES = ("done", "failed", "cancelled")

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
    error TEXT
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
"""


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


def new_job_id() -> str:
    return uuid.uuid4().hex


class JobStore:
    """The jobs database. One connection per thread (SQLite connections are not shared)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        con = self._con()
        con.execute("PRAGMA journal_mode=WAL")
        con.executescript(_SCHEMA)

    def _con(self) -> sqlite3.Connection:
        con: sqlite3.Connection | None = getattr(self._local, "con", None)
        if con is None:
            con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
            con.execute("PRAGMA synchronous=NORMAL")
            self._local.con = con
        return con

    def _write(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        con = self._con()
        return con.execute(sql, args).rowcount

    def create(self, job_id: str, params: ScoreParams, paths: list[str], *, upload: bool) -> None:
        self._write(
            "INSERT INTO jobs (id, state, created, params, paths, upload) VALUES (?,?,?,?,?,?)",
            (job_id, "queued", time.time(), params.model_dump_json(), json.dumps(paths), upload),
        )

    def get(self, job_id: str) -> Job | None:
        con = self._con()
        row = con.execute(
            "SELECT id, state, created, started, finished, params, paths, upload, total, runs, "
            "error, done, failed FROM jobs WHERE id = ?",
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
        )

    def errors(self, job_id: str, limit: int = 20) -> list[dict[str, Any]]:
        rows = self._con().execute(
            "SELECT body FROM results WHERE job_id = ? AND ok = 0 ORDER BY idx LIMIT ?",
            (job_id, limit),
        )
        return [json.loads(b) for (b,) in rows]

    def counts(self) -> dict[str, int]:
        found = dict(self._con().execute("SELECT state, COUNT(*) FROM jobs GROUP BY state"))
        return {s: int(found.get(s, 0)) for s in STATES}

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

    def add_result(self, job: Job, idx: int, *, ok: bool, game_id: str | None, body: str) -> None:
        """Store one record's result and count it, in one transaction."""
        con = self._con()
        con.execute("BEGIN IMMEDIATE")
        try:
            con.execute(
                "INSERT INTO results (job_id, idx, ok, game_id, body, run) VALUES (?,?,?,?,?,?)",
                (job.id, idx, ok, game_id, body, job.runs),
            )
            con.execute(
                "UPDATE jobs SET done = done + 1, failed = failed + ? WHERE id = ?",
                (0 if ok else 1, job.id),
            )
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")

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
        """Jobs left ``running`` by a server that stopped: queue them again or fail them."""
        if on_restart == "resume":
            return self._write("UPDATE jobs SET state = 'queued' WHERE state = 'running'")
        return self._write(
            "UPDATE jobs SET state = 'failed', finished = ?, error = ? WHERE state = 'running'",
            (time.time(), "the server stopped while this job ran (LEAKAGE_ON_RESTART=fail)"),
        )

    def results(self, job_id: str, batch: int = 500) -> Iterator[tuple[int, bool, str]]:
        """(index, ok, stored JSON) in record order, read in batches on a fresh connection
        (for a response streamed from another thread)."""
        with closing(sqlite3.connect(self.path, timeout=30.0)) as con:
            last = -1
            while True:
                rows = con.execute(
                    "SELECT idx, ok, body FROM results WHERE job_id = ? AND idx > ? "
                    "ORDER BY idx LIMIT ?",
                    (job_id, last, batch),
                ).fetchall()
                if not rows:
                    return
                for idx, ok, body in rows:
                    yield idx, bool(ok), body
                last = rows[-1][0]

    def close(self) -> None:
        con = getattr(self._local, "con", None)
        if con is not None:
            con.close()
            self._local.con = None


class JobWorker:
    """One background thread that runs queued jobs, oldest first, game by game."""

    def __init__(self, store: JobStore, backends: Backends, *, on_restart: str = "resume") -> None:
        self.store = store
        self.backends = backends
        self.on_restart = on_restart
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._cancelled: set[str] = set()
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

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    def _loop(self) -> None:
        try:
            while not self._stop.is_set():
                job = self.store.claim_next()
                if job is None:
                    self._wake.wait(1.0)
                    self._wake.clear()
                    continue
                self._run_safely(job)
        finally:
            self.store.close()

    def _run_safely(self, job: Job) -> None:
        try:
            state = self._run(job)
        except LeakageError as err:  # e.g. the backend cannot be created here
            log.warning("job %s failed: %s", job.id, err)
            self.store.finish(job.id, "failed", str(err))
            return
        except Exception:
            log.exception("job %s failed", job.id)
            self.store.finish(job.id, "failed", "internal error; see the server log")
            return
        if state == "stopped":  # server shutting down: resume (or fail) at the next start
            if self.on_restart == "resume":
                self.store.finish(job.id, "queued")
            else:
                self.store.finish(job.id, "failed", "the server stopped while this job ran")
        elif state == "done":
            self.store.finish(job.id, "done")
        log.info("job %s: %s", job.id, state)

    def _run(self, job: Job) -> str:
        params = job.params
        slot = self.backends.get(params.backend)
        if job.total is None:
            total = sum(1 for _ in iter_transcripts(job.paths, input_format=params.input_format))
            self.store.set_total(job.id, total)
        stored = self.store.stored(job.id)
        # An upload is one file the server wrote: its path is left out of error messages.
        upload = str(Path(job.paths[0]).resolve()) if job.upload and job.paths else None
        games = (
            (i, _with_distractors(item, params, upload=upload))
            for i, item in enumerate(iter_transcripts(job.paths, input_format=params.input_format))
            if i not in stored
        )

        def halted() -> bool:
            return self._stop.is_set() or job.id in self._cancelled

        for r in score_records(self.backends, slot, games, params, stop=halted):
            self.store.add_result(job, r.index, ok=r.ok, game_id=r.game_id, body=r.body)
        if job.id in self._cancelled:
            return "cancelled"
        return "stopped" if self._stop.is_set() else "done"


def _with_distractors(
    item: AnyTranscript | InvalidInput, params: ScoreParams, *, upload: str | None
) -> AnyTranscript | Exception:
    """A job's record ready to score, or its error (``upload``, the path of an uploaded file,
    left out: it is the server's, not the client's)."""
    if isinstance(item, InvalidTranscript) and upload:
        return InvalidTranscript(item.problems, record=item.record)
    if isinstance(item, InvalidInput) and upload:
        # Other errors begin with the file: "<path>: record <label>: <what>".
        message, prefix = str(item), f"{upload}: "
        return type(item)(message[len(prefix) :]) if message.startswith(prefix) else item
    if isinstance(item, InvalidInput):
        return item
    try:
        return with_distractors(item, params.distractors)
    except InvalidInput as err:
        return err
