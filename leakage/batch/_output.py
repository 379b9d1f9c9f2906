"""The results directory and its checkpoint ledger: what makes a killed run resumable.

Layout of ``--out DIR``::

    manifest.json          leakage.batch/1: inputs, backend, versions, run statistics
    steps/part-00000.parquet ...   the step table (leakage.steps/1), one part per checkpoint
    reports.jsonl          one leakage.report/1 per scored game
    errors.jsonl           one line per failed record
    checkpoint.sqlite      the ledger: committed records and the committed size of each file

Commit protocol (one checkpoint): the part file is written under a temporary name, synced
and renamed into ``steps/``; the report and error lines (appended as chunks arrive) are
flushed and synced; then one SQLite transaction records every record of the checkpoint and
the part's name and the two files' sizes. That transaction is the commit point. After a kill
at any moment, :meth:`ResultsDir.open` cuts both JSONL files back to their committed sizes and
deletes part files the ledger does not name, so what remains is exactly the committed
records, each once; ``--resume`` then skips them (the ledger's primary key refuses a record
committed twice).
"""

from __future__ import annotations

import os
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from leakage.batch._rows import steps_schema
from leakage.batch._worker import ChunkResult

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    id   INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS committed (
    source INTEGER NOT NULL,
    record INTEGER NOT NULL,
    PRIMARY KEY (source, record)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS commits (
    seq           INTEGER PRIMARY KEY,
    part          TEXT,
    reports_bytes INTEGER NOT NULL,
    errors_bytes  INTEGER NOT NULL,
    games         INTEGER NOT NULL,
    failed        INTEGER NOT NULL,
    at            REAL    NOT NULL
);
"""
ROW_GROUP_ROWS = 65_536


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut(path: Path, size: int) -> None:
    """Truncate ``path`` to ``size`` bytes (creating it empty when missing)."""
    with path.open("ab") as fh:
        if fh.tell() > size:
            fh.truncate(size)


def checkpoints(out: str | Path) -> int:
    """How many checkpoints a results directory has committed (read-only, safe while a run
    is writing; 0 when there is no ledger yet)."""
    ledger = Path(out) / "checkpoint.sqlite"
    if not ledger.is_file():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{ledger}?mode=ro", uri=True, timeout=30.0)) as db:
            return int(db.execute("SELECT count(*) FROM commits").fetchone()[0])
    except sqlite3.OperationalError:  # the ledger is being created
        return 0


class ResultsDir:
    """An output directory opened for appending committed checkpoints."""

    def __init__(self, out: str | Path) -> None:
        self.out = Path(out)
        self.steps_dir = self.out / "steps"
        self.steps_dir.mkdir(parents=True, exist_ok=True)
        self.manifest = self.out / "manifest.json"
        self.reports_path = self.out / "reports.jsonl"
        self.errors_path = self.out / "errors.jsonl"
        self._db = sqlite3.connect(self.out / "checkpoint.sqlite", timeout=30.0)
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.executescript(_SCHEMA)
        self._sources: dict[str, int] = dict(
            (p, i) for i, p in self._db.execute("SELECT id, path FROM sources")
        )
        self._recover()
        self._reports = self.reports_path.open("ab")
        self._errors = self.errors_path.open("ab")
        self._keys: list[tuple[str, int]] = []
        self._games = self._failed = 0
        self._pending: list[Any] = []
        self._pending_rows = 0
        self._writer: Any = None
        self._tmp: Path | None = None

    # -- recovery and reading ------------------------------------------------------------

    def _recover(self) -> None:
        row = self._db.execute(
            "SELECT reports_bytes, errors_bytes FROM commits ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        reports_bytes, errors_bytes = row if row else (0, 0)
        _cut(self.reports_path, reports_bytes)
        _cut(self.errors_path, errors_bytes)
        parts = {p for (p,) in self._db.execute("SELECT part FROM commits") if p}
        for f in [*self.steps_dir.glob("part-*.parquet"), *self.steps_dir.glob(".part-*.tmp")]:
            if f.name not in parts:
                f.unlink()

    def committed_count(self) -> tuple[int, int]:
        """``(games, failed records)`` committed so far."""
        games, failed = self._db.execute(
            "SELECT coalesce(sum(games), 0), coalesce(sum(failed), 0) FROM commits"
        ).fetchone()
        return int(games), int(failed)

    def committed_records(self, source: str) -> set[int]:
        """Records of ``source`` already committed (read per file, so memory stays per file)."""
        sid = self._sources.get(source)
        if sid is None:
            return set()
        return {
            r for (r,) in self._db.execute("SELECT record FROM committed WHERE source = ?", (sid,))
        }

    def part_files(self) -> list[Path]:
        return sorted(self.steps_dir.glob("part-*.parquet"))

    # -- appending -----------------------------------------------------------------------

    @property
    def pending_games(self) -> int:
        return len(self._keys)

    def add(self, result: ChunkResult) -> None:
        """Append a chunk's outputs (not yet committed)."""
        if result.steps is not None and result.steps.num_rows:
            self._pending.append(result.steps)
            self._pending_rows += result.steps.num_rows
            if self._pending_rows >= ROW_GROUP_ROWS:
                self._flush_rows()
        if result.reports:
            self._reports.write(result.reports)
        if result.errors:
            self._errors.write(result.errors.encode("utf-8"))
        self._keys.extend(result.keys)
        self._games += result.games
        self._failed += result.failed

    def _flush_rows(self) -> None:
        if not self._pending:
            return
        import pyarrow as pa
        import pyarrow.parquet as pq

        if self._writer is None:
            self._tmp = self.steps_dir / f".part-{os.getpid()}-{time.time_ns()}.tmp"
            self._writer = pq.ParquetWriter(self._tmp, steps_schema(), compression="zstd")
        self._writer.write_table(pa.Table.from_batches(self._pending, schema=steps_schema()))
        self._pending = []
        self._pending_rows = 0

    def commit(self) -> None:
        """Make everything added since the last commit durable, atomically."""
        if not self._keys:
            return
        self._flush_rows()
        (seq,) = self._db.execute("SELECT coalesce(max(seq), -1) + 1 FROM commits").fetchone()
        part = None
        if self._writer is not None and self._tmp is not None:
            self._writer.close()
            self._writer = None
            part = f"part-{seq:05d}.parquet"
            _fsync(self._tmp)
            os.replace(self._tmp, self.steps_dir / part)
            self._tmp = None
        for fh in (self._reports, self._errors):
            fh.flush()
            os.fsync(fh.fileno())
        with self._db:
            rows = []
            for source, record in self._keys:
                sid = self._sources.get(source)
                if sid is None:
                    cur = self._db.execute("INSERT INTO sources (path) VALUES (?)", (source,))
                    sid = self._sources[source] = int(cur.lastrowid or 0)
                rows.append((sid, record))
            self._db.executemany("INSERT INTO committed (source, record) VALUES (?, ?)", rows)
            self._db.execute(
                "INSERT INTO commits VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    seq,
                    part,
                    self._reports.tell(),
                    self._errors.tell(),
                    self._games,
                    self._failed,
                    time.time(),
                ),
            )
        self._keys = []
        self._games = self._failed = 0

    def compact(self) -> bool:
        """Rewrite the committed parts as one (:func:`compact_steps`); False when there
        were fewer than two."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        parts = list(
            self._db.execute("SELECT seq, part FROM commits WHERE part IS NOT NULL ORDER BY seq")
        )
        if len(parts) < 2 or self._keys:
            return False
        (first, _), (last, _) = parts[0], parts[-1]
        name = f"part-{first:05d}-{last:05d}.parquet"  # sorts before part-{last + 1:05d}
        tmp = self.steps_dir / f".part-{os.getpid()}-{time.time_ns()}.tmp"
        with pq.ParquetWriter(tmp, steps_schema(), compression="zstd") as writer:
            held: list[Any] = []  # whole row groups of ROW_GROUP_ROWS, as a run writes them
            for _, part in parts:
                held.append(pq.read_table(self.steps_dir / part, schema=steps_schema()))
                if sum(t.num_rows for t in held) >= ROW_GROUP_ROWS:
                    writer.write_table(pa.concat_tables(held), row_group_size=ROW_GROUP_ROWS)
                    held = []
            if held:
                writer.write_table(pa.concat_tables(held), row_group_size=ROW_GROUP_ROWS)
        _fsync(tmp)
        os.replace(tmp, self.steps_dir / name)  # not in the ledger yet: _recover drops it
        with self._db:  # the commit point: the ledger names the one part, on its last commit
            self._db.execute("UPDATE commits SET part = NULL WHERE part IS NOT NULL")
            self._db.execute("UPDATE commits SET part = ? WHERE seq = ?", (name, last))
        for _, part in parts:  # no longer in the ledger: _recover drops them if left here
            (self.steps_dir / part).unlink(missing_ok=True)
        return True

    def close(self) -> None:
        """Close without committing what is pending (a stopped run keeps its last commit)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._tmp is not None:
            self._tmp.unlink(missing_ok=True)
            self._tmp = None
        self._reports.close()
        self._errors.close()
        self._db.close()


def compact_steps(out: str | Path) -> bool:
    """Rewrite the step table of the results directory ``out`` as one Parquet part, the
    rows in the same order; True when it did (False: fewer than two parts).

    A run commits one part per checkpoint (a service job: one per chunk of 16 games), and
    reading a table of many small parts costs more than reading one: a finished 1,000-game
    job's 63 parts took 0.3 s, one part 0.05-0.1 s. The part is written under a temporary
    name, synced and renamed, then one ledger transaction names it in place of the parts
    (the commit point), then those are deleted: a compaction cut short at any moment leaves
    either the parts or the one part once the directory is opened again
    (:class:`ResultsDir` drops the files its ledger does not name), and ``--resume`` goes
    on after it (the next part sorts after it). Between the rename and the deletions a
    reader listing ``steps/`` would see both: run it when nothing reads the directory, or
    under the lock of the one that does (the service compacts a job when it finishes,
    under its step cache's lock)."""
    if not (Path(out) / "checkpoint.sqlite").is_file():
        return False  # no run wrote here (or the directory was deleted meanwhile)
    results = ResultsDir(out)
    try:
        return results.compact()
    finally:
        results.close()


def commit_steps(out: str | Path, keys: list[tuple[str, int]], steps: Any) -> None:
    """Commit ``steps`` (a ``pyarrow.RecordBatch`` of ``leakage.steps/1`` rows, or None) for
    the records ``keys`` as one checkpoint of the results directory ``out``, by the writer
    and commit protocol of a run: what another producer of step rows (rows rebuilt from
    stored reports, :func:`leakage.batch.report_steps`) writes with."""
    results = ResultsDir(out)
    try:
        games = len({(s, r) for s, r in zip(
            steps["source"].to_pylist(), steps["record"].to_pylist(), strict=True
        )}) if steps is not None else 0  # fmt: skip
        results.add(ChunkResult(keys=keys, steps=steps, games=games))
        results.commit()
    finally:
        results.close()
