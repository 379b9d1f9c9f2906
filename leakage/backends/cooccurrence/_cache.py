"""A persistent SQLite cache of hit counts, shared by runs and processes.

Web counts cost money and time, and a count for a query does not change much between runs,
so every answered query is stored and never asked again. One table, keyed by
``(source, endpoint, query_key)``: ``source`` is the count source's registry name,
``endpoint`` what else decides the number (the infini-gram index, the Custom Search engine
id, SerpApi's engine and locale parameters) and ``query_key`` the canonical, order-free
form of the query from :func:`~leakage.backends.cooccurrence._source.query_key`.

The database runs in WAL mode so that several processes can read while one writes, and a
connection is opened per operation: sources run their requests on event loops that may
live in different threads, and a short-lived connection is never shared between them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable

from leakage._sqlite import SqliteStore, select_in

_SCHEMA = """
CREATE TABLE IF NOT EXISTS counts (
    source     TEXT    NOT NULL,
    endpoint   TEXT    NOT NULL,
    query_key  TEXT    NOT NULL,
    count      INTEGER NOT NULL,
    approx     INTEGER,
    fetched_at REAL    NOT NULL,
    PRIMARY KEY (source, endpoint, query_key)
) WITHOUT ROWID
"""

# SQLite limits the number of bound parameters per statement (999 on old builds).


class CountCache(SqliteStore):
    """Counts already answered, on disk at ``path`` (created with its folder if missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, _SCHEMA)

    def get_many(self, source: str, endpoint: str, keys: Iterable[str]) -> dict[str, int]:
        """The cached counts among ``keys`` (missing keys are simply absent)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, int] = {}
        if not wanted:
            return found
        with self._connect() as conn:
            found.update(
                select_in(
                    conn,
                    "SELECT query_key, count FROM counts"
                    " WHERE source = ? AND endpoint = ? AND query_key IN ({marks})",
                    (source, endpoint),
                    wanted,
                )
            )
        return found

    def put_many(
        self, source: str, endpoint: str, rows: Iterable[tuple[str, int, bool | None]]
    ) -> int:
        """Store ``(query_key, count, approx)`` rows in one transaction; returns how many."""
        now = time.time()
        batch = [
            (source, endpoint, key, count, None if approx is None else int(approx), now)
            for key, count, approx in rows
        ]
        if batch:
            with self._connect() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO counts"
                    " (source, endpoint, query_key, count, approx, fetched_at)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    batch,
                )
        return len(batch)

    def __repr__(self) -> str:
        return f"CountCache({str(self.path)!r})"
