"""A small SQLite file shared safely by threads and processes (the on-disk caches use it)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path


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
