"""A job's step table (``leakage.steps/1``), as its engine wrote it, held in memory for the
views: every view of a job (curves, plane, comparison, report page) is a library call on
these rows, never a reading of the job's inputs or stored reports.

The engine (``leakage.batch``) commits a job's rows as Parquet parts, one per chunk, named
in commit order (``steps/part-00000.parquet``, ...), and never rewrites one while the job
runs. So the cache keeps, per job, the parts it has read and their rows: a running job's
refresh reads only the parts committed since the last one; a finished job's costs a folder
listing. When a job is done its parts are rewritten as one (:meth:`StepCache.compact`,
:func:`leakage.batch.compact_steps`; a job finished before that, when it is first viewed),
so that opening it after a restart reads one file, not one per chunk; under the job's lock,
which a view holds while it lists and reads the parts, so that it never sees both. A record's
number in the job is its file's offset (``offsets.json``, written by the worker) plus its
position in the file (the table's ``record``).

A job stored before its jobs wrote a step table (its reports in SQLite, no results folder)
gets one once, when it is first viewed after it finished (:func:`rebuild_from_reports`):
its rows rebuilt from the stored reports by :func:`leakage.batch.report_steps` and committed
with the engine's writer (:func:`leakage.batch.commit_steps`), each record under its number
in the job (source :data:`STORED_SOURCE`, no offsets).
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leakage.batch import (
    StoredReport,
    commit_steps,
    compact_steps,
    iter_records,
    player_models,
    report_steps,
    steps_schema,
    to_transcript,
)
from leakage.errors import InvalidInput, LeakageError
from leakage.transcripts import ReadLimits

log = logging.getLogger("leakage.service")

STORED_SOURCE = "stored reports"
"""The ``source`` of the rows rebuilt from a job's stored reports; their ``record`` is the
record's number in the job."""


@dataclass
class JobSteps:
    """The rows of a job's committed parts, and where each file's records start."""

    table: Any
    """A ``pyarrow.Table`` with :func:`leakage.batch.steps_schema`."""
    offsets: dict[str, int] = field(default_factory=dict)
    parts: tuple[str, ...] = ()
    views: dict[Hashable, Any] = field(default_factory=dict)
    """What views computed from these rows, by view and parameters (:meth:`view`)."""

    def view(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """``compute()``, once per ``key`` for these rows: a job's figures change only when
        a part is committed (then the cache holds a new :class:`JobSteps`)."""
        if key not in self.views:
            self.views[key] = compute()
        return self.views[key]

    def index(self, source: str, record: int) -> int:
        """The record's number in the job (its position among the job's records)."""
        return self.offsets.get(source, 0) + int(record)


class StepCache:
    """The step tables of the jobs viewed last (``max_jobs`` of them), read part by part."""

    def __init__(
        self, max_jobs: int = 8, missing: Callable[[str, Path], None] | None = None
    ) -> None:
        self.max_jobs = max_jobs
        self.missing = missing
        """Called (under a lock of its own) with a job whose results folder does not exist,
        before its rows are read: the server's :func:`rebuild_from_reports`."""
        self._missing_lock = threading.Lock()
        self.parts_read = 0
        """Parts read from disk since the cache was made (what a test of refreshes counts)."""
        self._jobs: OrderedDict[str, JobSteps] = OrderedDict()
        self._lock = threading.Lock()
        self._job_locks: dict[str, threading.Lock] = {}

    def _job_lock(self, job_id: str) -> threading.Lock:
        with self._lock:
            return self._job_locks.setdefault(job_id, threading.Lock())

    def holding(self, job_id: str) -> threading.Lock:
        """The job's lock (``with cache.holding(job_id):``), for a reader of its parts
        other than :meth:`get` (``report.html`` reads the folder), so that a compaction
        never runs under it; not to be held around :meth:`get`."""
        return self._job_lock(job_id)

    def get(self, job_id: str, folder: Path, *, done: bool = False) -> JobSteps:
        """The job's rows as committed now (``folder``: its results folder; an empty table
        before its first part); ``done``: the job is done, its parts compacted first if they
        are not yet (a job finished before compaction). Blocking: call from a thread."""
        if self.missing is not None and not folder.exists():
            with self._missing_lock:
                if not folder.exists():
                    self.missing(job_id, folder)
        with self._job_lock(job_id):
            names = _names(folder)
            if done and len(names) > 1:
                names = self._compact(job_id, folder, names)
            return self._read(job_id, folder, names)

    def compact(self, job_id: str, folder: Path) -> None:
        """Rewrite a job's parts as one, now that it is done (the rows held stay, the same
        rows in the same order, named by that part). Blocking: call from a thread."""
        with self._job_lock(job_id):
            names = _names(folder)
            if len(names) > 1:
                self._compact(job_id, folder, names)

    def _compact(self, job_id: str, folder: Path, names: tuple[str, ...]) -> tuple[str, ...]:
        import pyarrow as pa

        try:
            if not compact_steps(folder):
                return names
        except (OSError, sqlite3.Error, pa.ArrowException) as err:  # read as they are
            log.warning("job %s: its step table could not be compacted: %s", job_id, err)
            return _names(folder)
        now = _names(folder)
        with self._lock:
            held = self._jobs.get(job_id)
            if held is not None and held.parts == names:
                held.parts = now
        return now

    def _read(self, job_id: str, folder: Path, names: tuple[str, ...]) -> JobSteps:
        import pyarrow as pa
        import pyarrow.dataset as ds

        with self._lock:
            held = self._jobs.get(job_id)
        if held is not None and held.parts == names:
            with self._lock:
                self._jobs.move_to_end(job_id)
            return held
        kept = held is not None and names[: len(held.parts)] == held.parts
        tables = [held.table] if held is not None and kept else []
        start = len(held.parts) if held is not None and kept else 0
        new = names[start:]
        if new:
            try:  # the new parts together (a dataset reads them on several threads, in order)
                found = ds.dataset(
                    [str(folder / "steps" / n) for n in new],
                    schema=steps_schema(),
                    format="parquet",
                ).to_table()
            except (FileNotFoundError, pa.ArrowInvalid):  # the job deleted meanwhile
                new = ()
            else:
                tables.append(found)
                with self._lock:
                    self.parts_read += len(new)
        read = names[:start] + new
        table = pa.concat_tables(tables) if tables else steps_schema().empty_table()
        offsets = held.offsets if held is not None and held.offsets else _offsets(folder)
        steps = JobSteps(table, offsets, read)
        with self._lock:
            self._jobs[job_id] = steps
            self._jobs.move_to_end(job_id)
            while len(self._jobs) > self.max_jobs:
                self._jobs.popitem(last=False)
        return steps

    def forget(self, job_id: str) -> None:
        with self._lock:
            self._jobs.pop(job_id, None)


def _names(folder: Path) -> tuple[str, ...]:
    """The job's committed parts, in commit order."""
    return tuple(sorted(p.name for p in (folder / "steps").glob("part-*.parquet")))


def _offsets(folder: Path) -> dict[str, int]:
    try:
        return {
            str(k): int(v) for k, v in json.loads((folder / "offsets.json").read_text()).items()
        }
    except (OSError, ValueError):
        return {}


def rebuild_from_reports(
    store: Any,
    job_id: str,
    folder: Path,
    limits: ReadLimits | None = None,
    allowed: list[Path] | None = None,
) -> bool:
    """Give a finished job stored before step tables (reports in the store, no results
    folder) its step table, rebuilt from its stored reports and committed in ``folder`` as
    one checkpoint; True when one was written. Blocking: call from a thread.

    A speaker's model is read from the job's input when it is still there (a player's
    ``agent`` is not in a report; ``leakage.batch.report_steps`` says what else a report
    lacks), a path job's only inside ``allowed`` (``LEAKAGE_ALLOWED_PATHS`` now). Without
    it, from the reports' ``meta.models`` alone, the rest left null: as the views of such a
    job showed before once its upload was deleted. Written under a temporary name and
    renamed, so that a view never sees half of it.
    """
    job = store.get(job_id)
    if job is None or job.state not in ("done", "failed", "cancelled"):
        return False  # a job that runs writes its own table
    stored = list(store.results(job_id))
    if not any(ok for _, ok, _ in stored):
        return False
    models = _input_models(store, job, limits, allowed or [])
    reports = [
        StoredReport(STORED_SOURCE, idx, json.loads(body), models.get(idx))
        for idx, ok, body in stored
        if ok
    ]
    try:
        steps = report_steps(reports)
    except InvalidInput as err:  # e.g. a report of a seat: the job's views stay empty
        log.warning("job %s: its stored reports give no step table: %s", job_id, err)
        return False
    tmp = folder.with_name(f"{folder.name}.rebuilding")
    shutil.rmtree(tmp, ignore_errors=True)
    commit_steps(tmp, [(STORED_SOURCE, idx) for idx, _, _ in stored], steps)
    tmp.replace(folder)
    log.info("job %s: step table rebuilt from %d stored reports", job_id, len(reports))
    return True


def _input_models(
    store: Any, job: Any, limits: ReadLimits | None, allowed: list[Path]
) -> dict[int, dict[str, str | None]]:
    """Each record's players' models, read once from the job's input if it is all still
    there (a record's number is its position in the job's input); empty otherwise."""
    files = [Path(p) for p in job.paths] if job.upload else store.files(job.id)
    if not files or not all(f.is_file() for f in files):
        return {}
    roots = [r.expanduser().resolve() for r in allowed]
    if not job.upload and not all(any(f.resolve().is_relative_to(r) for r in roots) for f in files):
        return {}
    out: dict[int, dict[str, str | None]] = {}
    try:
        for i, raw in enumerate(iter_records(files, limits=limits or ReadLimits())):
            t = to_transcript(raw, job.params.input_format)
            if not isinstance(t, InvalidInput):
                out[i] = player_models(t)
    except (OSError, LeakageError) as err:
        log.warning("job %s: its input could not be read again for its models: %s", job.id, err)
        return {}
    return out
