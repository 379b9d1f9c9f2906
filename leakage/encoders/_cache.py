"""``CachedEncoder``: batching and caching by content hash, written once for every encoder.

Vectors live in memory for the run and in SQLite on disk across runs, keyed by
(model name, SHA-256 of the text), so a string is embedded once per model.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leakage._sqlite import select_in
from leakage.encoders._base import Encoder

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    hash BLOB NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, hash)
) WITHOUT ROWID;
"""


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8")).digest()


class CachedEncoder:
    """Wraps an ``Encoder``: de-duplicates, batches, and caches in memory and on disk.

    ``cache_path=None`` keeps the cache in memory only. ``max_memory`` bounds the number of
    vectors held in memory (the oldest are dropped; the disk cache keeps them).
    ``batch_size``: texts handed to the encoder per call (it cuts them into passes by its
    own token budget: ``SentenceTransformerEncoder``), large enough to fill a GPU.
    """

    def __init__(
        self,
        encoder: Encoder,
        *,
        cache_path: str | Path | None = None,
        batch_size: int = 4096,
        max_memory: int = 500_000,
    ) -> None:
        self.encoder = encoder
        self.name = encoder.name
        self.dimension = encoder.dimension
        self.batch_size = batch_size
        self.max_memory = max_memory
        self._memory: dict[str, NDArray[np.float32]] = {}
        self._lock = threading.Lock()
        self._con: sqlite3.Connection | None = None
        self.cache_path = Path(cache_path) if cache_path is not None else None
        self.encoded = 0
        """How many texts this instance sent to the model (cache misses)."""

    def _db(self) -> sqlite3.Connection | None:
        if self.cache_path is None:
            return None
        if self._con is None:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            con = sqlite3.connect(self.cache_path, check_same_thread=False, timeout=30)
            con.execute("PRAGMA journal_mode=WAL")
            con.executescript(_SCHEMA)
            self._con = con
        return self._con

    def info(self) -> dict[str, Any]:
        """The wrapped encoder's (a cache does not change the vectors)."""
        return self.encoder.info()

    def close(self) -> None:
        if self._con is not None:
            self._con.close()
            self._con = None

    def _from_disk(self, texts: list[str]) -> dict[str, NDArray[np.float32]]:
        con = self._db()
        if con is None or not texts:
            return {}
        by_hash = {_digest(t): t for t in texts}
        found: dict[str, NDArray[np.float32]] = {}
        keys = list(by_hash)
        sql = "SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})"
        for h, blob in select_in(con, sql, (self.name,), keys):
            vec = np.frombuffer(blob, dtype=np.float32)
            if vec.size == self.dimension:
                found[by_hash[h]] = vec
        return found

    def _to_disk(self, items: dict[str, NDArray[np.float32]]) -> None:
        con = self._db()
        if con is None or not items:
            return
        with con:
            con.executemany(
                "INSERT OR REPLACE INTO vectors VALUES (?, ?, ?)",
                [
                    (self.name, _digest(t), np.asarray(v, np.float32).tobytes())
                    for t, v in items.items()
                ],
            )

    def _remember(self, items: dict[str, NDArray[np.float32]]) -> None:
        if len(self._memory) + len(items) > self.max_memory:
            for key in list(self._memory)[: len(items) + len(self._memory) - self.max_memory]:
                del self._memory[key]
        self._memory.update(items)

    def warm(self, texts: Iterable[str]) -> None:
        """Make sure every text has a vector, embedding the missing ones in large batches."""
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if t not in self._memory]
            if not missing:
                return
            found = self._from_disk(missing)
            self._remember(found)
            todo = [t for t in missing if t not in found]
            fresh: dict[str, NDArray[np.float32]] = {}
            for i in range(0, len(todo), self.batch_size):
                batch = todo[i : i + self.batch_size]
                vecs = np.asarray(self.encoder.encode_batch(batch), dtype=np.float32)
                fresh.update(zip(batch, vecs, strict=True))
            self.encoded += len(todo)
            self._to_disk(fresh)
            self._remember(fresh)

    def encode(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Vectors for ``texts`` (shape (n, dimension)), from the cache where possible."""
        memory = self._memory
        if not all(t in memory for t in texts):
            self.warm(texts)
            memory = self._memory
        if not texts:
            return np.empty((0, self.dimension), dtype=np.float32)
        return np.stack([memory[t] for t in texts])

    def encode_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """The ``Encoder`` protocol, so a cached encoder can stand wherever an encoder can."""
        return self.encode(texts)
