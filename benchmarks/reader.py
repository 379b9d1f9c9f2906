"""What reading a record costs: one JSON record's text to a validated transcript, by the paths
the library has had, on the same records in one run.

- ``json.loads + validate_python``: the plain reader (a record Python's ``json`` reads);
- ``validate_json``: pydantic's own parser straight from the text, the fast path
  ``leakage score`` and ``leakage batch`` used for native records before the JSON reader
  (it took a repeated key's last value silently, and any lone surrogate, over-long integer
  or NaN sent the record to the plain reader to be worded);
- ``read + validate_python``: the JSON reader now used everywhere
  (``leakage.transcripts._json.loads``: over-long integers and repeated keys kept as markers
  and named, lone surrogates found), with the text rules of the transcript (NUL, look-alike
  candidates) in the validation.

``validate_python`` alone (the records parsed beforehand) is the transcript's own rules, so
running this module on an older tree's library measures what the rules added (a folder that
holds the old ``leakage`` and these ``benchmarks``; the paths the old tree lacks are left
out)::

    git worktree add /tmp/before 5e72e89 && mkdir /tmp/mix
    ln -s /tmp/before/leakage /tmp/mix/leakage && ln -s "$PWD/benchmarks" /tmp/mix/benchmarks
    (cd /tmp/mix && "$OLDPWD/.venv/bin/python" -m benchmarks reader)

Records: 20,000 synthetic Chameleon games (``benchmarks._games``, the ``batch`` benchmark's)
and, when ``../shared/data`` is there, the CK-Arena dev logs converted to native records.
Each path reads every record; the best of 5 passes is kept (the machine is shared).

    .venv/bin/python -m benchmarks reader
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import SHARED_DATA, write_result
from leakage.transcripts import TRANSCRIPT_ADAPTER, load_transcripts

try:
    from leakage.transcripts import loads
except ImportError:  # a tree before the JSON reader (run on it through PYTHONPATH)
    loads = None  # type: ignore[assignment]

N_SYNTHETIC = 20_000
PASSES = 5


def _plain(text: str) -> Any:
    return TRANSCRIPT_ADAPTER.validate_python(json.loads(text))


def _fast(text: str) -> Any:
    return TRANSCRIPT_ADAPTER.validate_json(text)


def _reader(text: str) -> Any:
    doc, _ = loads(text)
    return TRANSCRIPT_ADAPTER.validate_python(doc)


PATHS: dict[str, Callable[[str], Any]] = {
    "json.loads + validate_python": _plain,
    "validate_json (the former fast path)": _fast,
    **({"read + validate_python (now)": _reader} if loads is not None else {}),
}


def _records() -> dict[str, list[str]]:
    from benchmarks._games import generate_games

    games, _ = generate_games(N_SYNTHETIC, 7)
    out = {"synthetic Chameleon": [g.model_dump_json(exclude_none=True) for g in games]}
    logs = SHARED_DATA / "ck-arena-dev" / "logs"
    if logs.is_dir():
        converted, _ = load_transcripts([logs], input_format="ck-arena")
        out["CK-Arena dev (native)"] = [g.model_dump_json(exclude_none=True) for g in converted]
    return out


def _best_us(fn: Callable[[Any], Any], items: list[Any]) -> float:
    best = float("inf")
    for _ in range(PASSES):
        start = time.perf_counter()
        for item in items:
            fn(item)
        best = min(best, time.perf_counter() - start)
    return best / len(items) * 1e6


def run() -> None:
    results: dict[str, Any] = {}
    for name, texts in _records().items():
        size = sum(len(t) for t in texts) / len(texts)
        row = {path: round(_best_us(fn, texts), 2) for path, fn in PATHS.items()}
        parsed = [json.loads(t) for t in texts]
        row["validate_python alone"] = round(
            _best_us(TRANSCRIPT_ADAPTER.validate_python, parsed), 2
        )
        results[name] = {"records": len(texts), "mean_bytes": round(size), "us_per_record": row}
        print(f"{name}: {len(texts):,} records of {size:,.0f} bytes")
        for path, us in row.items():
            print(f"  {path:40s} {us:8.1f} us/record")
    write_result("reader", {"passes": PASSES, "synthetic": N_SYNTHETIC}, results)
