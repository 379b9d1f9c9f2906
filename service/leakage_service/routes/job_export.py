"""A job's results as files: JSONL streamed page by page, and the Parquet export
(``GET /v1/jobs/{id}/results?format=jsonl|parquet``), whose figures come from the job's
step table."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool

from leakage_service.job_report import record_lines
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


PARQUET_FIELDS = (
    "record", "ok", "game_id", "game", "backend", "final_entropy_bits",
    "final_secret_probability", "final_secret_rank", "error_type", "error_message",
)  # fmt: skip
"""The columns of ``results?format=parquet`` before ``body``."""


def results_parquet(state: ServiceState, job_id: str) -> Path:
    """The results as a Parquet file (a temporary file, removed after sending): one row
    per record stored, in record order, with :data:`PARQUET_FIELDS` and ``body``.

    A row's figures are its line of :func:`~leakage_service.job_report.record_lines`: a
    game's row of :func:`leakage.batch.game_records` on the job's step table, a failed
    record's stored error line. ``body`` is the record's stored JSON (its
    ``leakage.report/1``, or its error line) as it was stored, and is read from the store:
    the step table holds a game's turns, figures and grouping columns, but not the rest of
    its report (``meta`` as the log gave it, ``settings``, ``backend_info``, the summary's
    other figures, a SpyGame's per-step spy posterior), so the report cannot be written
    again from it byte for byte.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert state.store is not None
    job = state.store.get(job_id)
    columns: dict[str, list[Any]] = {k: [] for k in (*PARQUET_FIELDS, "body")}
    if job is not None:
        stored = list(state.store.results(job_id))
        bodies = [body for _, _, body in stored]
        for line, body in zip(record_lines(state, job, stored), bodies, strict=True):
            for k in PARQUET_FIELDS:
                columns[k].append(line[k])
            columns["body"].append(body)
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
