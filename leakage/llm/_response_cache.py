"""A persistent SQLite cache of LLM answers, shared by runs and processes.

Remote requests cost money and time, and at temperature 0 the same request gets the same
answer, so every answered request is stored and never sent again. One table, keyed by
``(model, request_key)``: ``request_key`` is a hash of everything that decides the answer
(the endpoint kind, the prompt or messages and every sampling parameter), so a change to
any of them is a new request. The endpoint's URL is not part of the key on purpose: the
same model served by another vLLM instance gives the same answers.

Like the count cache (:mod:`leakage.backends.cooccurrence._cache`), the database runs in
WAL mode so that several processes can read while one writes, and a connection is opened
per operation, because requests run on event loops that may live in different threads.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable, Mapping
from typing import Any

from leakage._sqlite import SqliteStore, select_in

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    model       TEXT NOT NULL,
    request_key TEXT NOT NULL,
    kind        TEXT NOT NULL,
    response    TEXT NOT NULL,
    created_at  REAL NOT NULL,
    PRIMARY KEY (model, request_key)
) WITHOUT ROWID
"""

# SQLite limits the number of bound parameters per statement (999 on old builds).


def request_key(model: str, kind: str, request: Mapping[str, Any]) -> str:
    """The cache key of one request: a hash of the model, the endpoint kind and the request.

    ``request`` holds everything that decides the answer (prompt or messages, sampling
    parameters); keys are sorted, so the order in which they were written does not matter.
    """
    canonical = json.dumps(
        {"model": model, "kind": kind, "request": request},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class ResponseCache(SqliteStore):
    """Answers already received, on disk at ``path`` (created with its folder if missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, _SCHEMA)

    def get_many(self, model: str, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The cached answers among ``keys`` (missing keys are simply absent)."""
        wanted = list(dict.fromkeys(keys))
        found: dict[str, dict[str, Any]] = {}
        if not wanted:
            return found
        with self._connect() as conn:
            rows = select_in(
                conn,
                "SELECT request_key, response FROM responses"
                " WHERE model = ? AND request_key IN ({marks})",
                (model,),
                wanted,
            )
            found.update((key, json.loads(text)) for key, text in rows)
        return found

    def put_many(self, model: str, rows: Iterable[tuple[str, str, Mapping[str, Any]]]) -> int:
        """Store ``(request_key, kind, answer)`` rows in one transaction; returns how many."""
        now = time.time()
        batch = [
            (model, key, kind, json.dumps(answer, ensure_ascii=False), now)
            for key, kind, answer in rows
        ]
        if batch:
            with self._connect() as conn:
                conn.executemany(
                    "INSERT OR REPLACE INTO responses"
                    " (model, request_key, kind, response, created_at) VALUES (?, ?, ?, ?, ?)",
                    batch,
                )
        return len(batch)

    def __len__(self) -> int:
        with self._connect() as conn:
            (n,) = conn.execute("SELECT COUNT(*) FROM responses").fetchone()
        return int(n)

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.path)!r})"


__all__ = ["ResponseCache", "request_key"]
