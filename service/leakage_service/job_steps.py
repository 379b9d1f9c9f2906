"""A job's step table (``leakage.steps/1``), as its engine wrote it, held in memory for the
views: every view of a job (curves, plane, comparison, report page) is a library call on
these rows, never a reading of the job's inputs or stored reports.

The engine (``leakage.batch``) commits a job's rows as Parquet parts, one per chunk, named
in commit order (``steps/part-00000.parquet``, ...), and never rewrites one. So the cache
keeps, per job, the parts it has read and their rows: a running job's refresh reads only the
parts committed since the last one; a finished job's costs a folder listing. A record's
number in the job is its file's offset (``offsets.json``, written by the worker) plus its
position in the file (the table's ``record``).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from leakage.batch import steps_schema


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

    def __init__(self, max_jobs: int = 8) -> None:
        self.max_jobs = max_jobs
        self.parts_read = 0
        """Parts read from disk since the cache was made (what a test of refreshes counts)."""
        self._jobs: OrderedDict[str, JobSteps] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, job_id: str, folder: Path) -> JobSteps:
        """The job's rows as committed now (``folder``: its results folder; an empty table
        before its first part). Blocking: call from a thread."""
        import pyarrow as pa
        import pyarrow.dataset as ds

        names = tuple(sorted(p.name for p in (folder / "steps").glob("part-*.parquet")))
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


def _offsets(folder: Path) -> dict[str, int]:
    try:
        return {
            str(k): int(v) for k, v in json.loads((folder / "offsets.json").read_text()).items()
        }
    except (OSError, ValueError):
        return {}
