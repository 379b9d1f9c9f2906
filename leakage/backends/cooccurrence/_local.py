"""Counts from a local FTS5 index (``leakage corpus build``): free, offline, exact.

Each phrase's posting list (the sorted rowids of the documents that contain it) is read
once and kept, least recently used ones dropped past ``max_postings``; a pair count is the
size of the intersection of two posting lists. A game with K candidates and m clue terms
therefore costs K + m index look-ups, not K·m.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Self

import numpy as np
from numpy.typing import NDArray

from leakage.backends.cooccurrence._source import Query
from leakage.corpus import normalize_phrase, read_meta
from leakage.errors import CorpusError

_EMPTY = np.empty(0, dtype=np.int64)


def _fts_phrase(phrase: str) -> str:
    return '"' + phrase.replace('"', '""') + '"'


class LocalIndexSource:
    """A ``CountSource`` over a leakage FTS5 index file."""

    name = "local"
    key_env: tuple[str, ...] = ()

    @classmethod
    def open(cls, *, index: str | Path | None = None, build_missing: bool = True) -> Self:
        """The index at ``index``, else the default one (``leakage.paths``), built from the
        bundled documents when it is missing and ``build_missing``."""
        from leakage.corpus import default_index_path

        path = Path(index) if index is not None else default_index_path()
        if index is None and build_missing and not path.exists():
            from leakage.corpus import build_index, default_documents

            docs, sources = default_documents()
            build_index(path, docs, sources=sources)
        return cls(path)

    def __init__(
        self, path: Path, *, max_postings: int = 50_000, max_pairs: int = 1_000_000
    ) -> None:
        self.path = Path(path)
        self.meta = read_meta(self.path)
        self._n = float(self.meta["documents"])
        self._con = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        self._postings: OrderedDict[str, NDArray[np.int64]] = OrderedDict()
        self._pairs: dict[tuple[str, str], int] = {}
        self._max_postings = max_postings
        self._max_pairs = max_pairs

    def close(self) -> None:
        self._con.close()

    def __enter__(self) -> LocalIndexSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def total(self) -> float:
        return self._n

    def info(self) -> dict[str, Any]:
        return {"source": self.name, "index": str(self.path), **self.meta}

    def postings(self, phrase: str) -> NDArray[np.int64]:
        """Sorted rowids of the documents containing ``phrase`` (cached)."""
        key = normalize_phrase(phrase)
        hit = self._postings.get(key)
        if hit is not None:
            self._postings.move_to_end(key)
            return hit
        if not key:
            return _EMPTY
        with self._lock:
            try:
                rows = self._con.execute(
                    "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rowid", (_fts_phrase(key),)
                ).fetchall()
            except sqlite3.Error as err:
                raise CorpusError(f"{self.path}: query {key!r} failed: {err}") from err
        arr = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        self._postings[key] = arr
        if len(self._postings) > self._max_postings:
            self._postings.popitem(last=False)
        return arr

    def count(self, query: Query) -> int:
        if len(query) == 1:
            return int(self.postings(query[0]).size)
        if len(query) == 2:
            a, b = normalize_phrase(query[0]), normalize_phrase(query[1])
            key = (a, b) if a <= b else (b, a)
            hit = self._pairs.get(key)
            if hit is None:
                pa, pb = self.postings(a), self.postings(b)
                hit = (
                    int(np.intersect1d(pa, pb, assume_unique=True).size)
                    if pa.size and pb.size
                    else 0
                )
                if len(self._pairs) >= self._max_pairs:
                    self._pairs.clear()  # counts are cheap to recount from cached postings
                self._pairs[key] = hit
            return hit
        docs = self.postings(query[0])
        for phrase in query[1:]:
            docs = np.intersect1d(docs, self.postings(phrase), assume_unique=True)
        return int(docs.size)

    def counts(self, queries: Sequence[Query]) -> list[int]:
        return [self.count(q) for q in queries]

    def uncached(self, queries: Sequence[Query]) -> list[Query]:
        return []  # local look-ups cost nothing
