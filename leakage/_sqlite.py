"""A small SQLite file shared safely by threads and processes (the on-disk caches use it)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

_IN_CHUNK = 500
"""Keys per ``IN (...)`` statement: well under SQLite's limit on host parameters."""


class SqliteStore:
    """A database file at ``path`` (created with its folder if missing) holding ``schema``."""

    def __init__(self, path: str | os.PathLike[str], schema: str) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._connect() as conn:
            # WAL is a property of the database file: set once, every later connection
            # (in any process) uses it.
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(schema)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        # timeout: wait for another process's write instead of failing with "locked".
        with closing(sqlite3.connect(self.path, timeout=30.0)) as conn:
            conn.execute("PRAGMA synchronous=NORMAL")
            with conn:  # commits on success, rolls back on error
                yield conn


def select_in(
    conn: sqlite3.Connection, sql: str, params: Sequence[Any], keys: Sequence[Any]
) -> Iterator[tuple[Any, ...]]:
    """The rows of ``sql``, whose last condition is ``IN ({marks})``, for every key of
    ``keys`` (after ``params``), in statements of at most ``_IN_CHUNK`` keys."""
    for start in range(0, len(keys), _IN_CHUNK):
        chunk = keys[start : start + _IN_CHUNK]
        yield from conn.execute(sql.format(marks=",".join("?" * len(chunk))), (*params, *chunk))
