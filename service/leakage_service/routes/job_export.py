"""A job's results as files: JSONL streamed page by page, and the Parquet export
(``GET /v1/jobs/{id}/results?format=jsonl|parquet``)."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from leakage_service.state import ServiceState

PAGE = 200
"""Results read per database query (and sent as one chunk) when streaming JSONL."""


async def results_jsonl(state: ServiceState, job_id: str) -> AsyncIterator[bytes]:
    """The stored results as JSONL, a page per chunk. Each page is one short query on a
    pool thread with a connection of its own (a sync generator here would be advanced on
    whichever pool thread is free, and SQLite objects must stay on the thread that made
    them)."""
    store = state.store
    assert store is not None
    last = -1
    while rows := await run_in_threadpool(store.results_page, job_id, last, PAGE):
        yield "".join(f"{body}\n" for _, _, body in rows).encode()
        last = rows[-1][0]
    if store.get(job_id) is None:  # deleted meanwhile: cut the stream, do not end it cleanly
        raise RuntimeError(f"job {job_id} was deleted while its results were being sent")


def results_parquet(state: ServiceState, job_id: str) -> Path:
    """The results as a Parquet file (a temporary file, removed after sending)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert state.store is not None
    columns: dict[str, list[Any]] = {
        k: []
        for k in (
            "record", "ok", "game_id", "game", "backend", "final_entropy_bits",
            "final_secret_probability", "final_secret_rank", "error_type", "error_message",
            "body",
        )
    }  # fmt: skip
    for idx, ok, body in state.store.results(job_id):
        doc = json.loads(body)
        summary = doc.get("summary", {}) if ok else {}
        err = {} if ok else doc.get("error", {})
        row = {
            "record": idx, "ok": ok, "game_id": doc.get("game_id"), "game": doc.get("game"),
            "backend": doc.get("backend"),
            "final_entropy_bits": summary.get("final_entropy_bits"),
            "final_secret_probability": summary.get("final_secret_probability"),
            "final_secret_rank": summary.get("final_secret_rank"),
            "error_type": err.get("type"), "error_message": err.get("message"), "body": body,
        }  # fmt: skip
        for k, v in row.items():
            columns[k].append(v)
    schema = pa.schema(
        [
            ("record", pa.int64()), ("ok", pa.bool_()), ("game_id", pa.string()),
            ("game", pa.string()), ("backend", pa.string()),
            ("final_entropy_bits", pa.float64()), ("final_secret_probability", pa.float64()),
            ("final_secret_rank", pa.int64()), ("error_type", pa.string()),
            ("error_message", pa.string()), ("body", pa.string()),
        ]
    )  # fmt: skip
    fd, name = tempfile.mkstemp(prefix=f"leakage-{job_id}-", suffix=".parquet")
    os.close(fd)
    pq.write_table(pa.table(columns, schema=schema), name)
    return Path(name)
