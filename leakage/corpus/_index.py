"""The local co-occurrence index: SQLite FTS5 over short documents.

One contentless FTS5 table (positions kept, so phrase queries work; the text itself is not
stored, which keeps the file small) with the Porter stemmer, so that plurals and simple
inflections fold together ("rackets" counts for "racket"). A ``meta`` table records what
the index holds. Builds write to a temporary file and rename it into place, so a failed or
interrupted build never damages an existing index.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import IO, Any

from leakage.corpus._mythes import find_mythes, mythes_documents
from leakage.corpus._wordnet import find_wordnet_dir, wordnet_documents
from leakage.errors import CorpusError

INDEX_VERSION = 1
TOKENIZER = "porter unicode61 remove_diacritics 2"
_BATCH = 5000


def default_index_path() -> Path:
    """``$LEAKAGE_HOME/corpus/default.sqlite`` (:attr:`leakage.paths.Paths.index` of the home
    ``LEAKAGE_HOME`` names, default ``~/.cache/leakage``)."""
    from leakage.paths import default_paths

    return default_paths().index


@dataclass(frozen=True)
class IndexInfo:
    path: Path
    documents: int
    sources: list[str]
    built_seconds: float
    size_bytes: int


def build_index(
    out: Path,
    documents: Iterable[str],
    *,
    sources: list[str],
    progress: Callable[[int], None] | None = None,
) -> IndexInfo:
    """Index ``documents`` into a new FTS5 file at ``out`` (replacing it only on success)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + f".building-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    start = time.perf_counter()
    con = sqlite3.connect(tmp)
    try:
        con.executescript(
            f"""
            PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;
            CREATE VIRTUAL TABLE docs USING fts5(text, content='', tokenize='{TOKENIZER}');
            CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
            """
        )
        n = 0
        it = iter(documents)
        while batch := list(islice(it, _BATCH)):
            con.executemany("INSERT INTO docs(text) VALUES (?)", ((d,) for d in batch))
            n += len(batch)
            if progress is not None:
                progress(len(batch))
        con.execute("INSERT INTO docs(docs) VALUES ('optimize')")
        meta = {
            "version": INDEX_VERSION,
            "documents": n,
            "sources": sources,
            "tokenizer": TOKENIZER,
            "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }
        con.executemany(
            "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()]
        )
        con.commit()
    except sqlite3.Error as err:
        con.close()
        tmp.unlink(missing_ok=True)
        raise CorpusError(f"{out}: index build failed: {err}") from err
    except BaseException:
        con.close()
        tmp.unlink(missing_ok=True)
        raise
    con.close()
    os.replace(tmp, out)
    return IndexInfo(out, n, sources, time.perf_counter() - start, out.stat().st_size)


def default_documents() -> tuple[Iterator[str], list[str]]:
    """The default corpus: WordNet 3.0 synsets, plus MyThes when the machine has it."""
    wn_dir = find_wordnet_dir()
    sources = [f"wordnet-3.0 ({wn_dir})"]
    docs: Iterator[str] = wordnet_documents(wn_dir)
    mythes = find_mythes()
    if mythes is not None:
        sources.append(f"mythes-en-us ({mythes})")

        def both() -> Iterator[str]:
            yield from wordnet_documents(wn_dir)
            yield from mythes_documents(mythes)

        docs = both()
    return docs, sources


def _open_text(path: Path) -> IO[str]:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return path.open(encoding="utf-8", errors="replace")


def file_documents(
    paths: Iterable[Path],
    *,
    text_field: str = "text",
    on_bytes: Callable[[int], None] | None = None,
) -> Iterator[str]:
    """Documents from user files: ``.txt`` (one per non-empty line) or ``.jsonl`` (a field).

    ``.gz`` variants are read transparently. A JSONL line that is not an object with the
    field raises ``CorpusError`` naming file and line, before anything is replaced.
    """
    for path in paths:
        path = Path(path)
        jsonl = ".jsonl" in path.suffixes or ".json" in path.suffixes
        try:
            with _open_text(path) as fh:
                for lineno, line in enumerate(fh, start=1):
                    if on_bytes is not None:
                        on_bytes(len(line))
                    if not line.strip():
                        continue
                    if not jsonl:
                        yield line.strip()
                        continue
                    try:
                        obj: Any = json.loads(line)
                        text = obj[text_field]
                    except (json.JSONDecodeError, KeyError, TypeError) as err:
                        raise CorpusError(
                            f"{path}: line {lineno}: expected a JSON object with a "
                            f"{text_field!r} string ({err.__class__.__name__})"
                        ) from None
                    if isinstance(text, str) and text.strip():
                        yield text
        except OSError as err:
            raise CorpusError(f"{path}: cannot read: {err.strerror}") from err


def read_meta(path: Path) -> dict[str, Any]:
    """The ``meta`` table of an index; ``CorpusError`` if it is not a leakage index."""
    if not Path(path).is_file():
        raise CorpusError(f"{path}: no index here; build one with `leakage corpus build`")
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            rows = con.execute("SELECT key, value FROM meta").fetchall()
        finally:
            con.close()
    except sqlite3.Error as err:
        raise CorpusError(
            f"{path}: not a leakage corpus index ({err}); rebuild it with `leakage corpus build`"
        ) from err
    return {k: json.loads(v) for k, v in rows}
