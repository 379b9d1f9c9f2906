"""What every benchmark shares: the machine record, result files, reference data, the index."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results"
SHARED_DATA = REPO.parent / "shared" / "data"
"""Third-party reference data beside the repository (read in place, never copied in)."""


class Skip(Exception):
    """A benchmark cannot run on this machine; the message says why."""


def shared_data(*parts: str) -> Path:
    """A path under ``../shared/data``; ``Skip`` when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        raise Skip(f"needs the shared reference data at {path}, which is absent")
    return path


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    return {
        "cpu_count": os.cpu_count(),
        "cpu_model": cpu_model(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "load_average_1_5_15_min": [round(x, 2) for x in os.getloadavg()],
    }


def write_result(name: str, parameters: dict[str, Any], results: dict[str, Any]) -> Path:
    """``benchmarks/results/<name>.json``: machine, parameters, numbers."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    doc = {"benchmark": name, "machine": machine(), "parameters": parameters, "results": results}
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def default_index() -> Path:
    """The default co-occurrence index, built first if it is missing (as `make corpus` does)."""
    from leakage.corpus import build_index, default_documents, default_index_path

    path = default_index_path()
    if not path.exists():
        print(f"  building the default index at {path} ...", flush=True)
        docs, sources = default_documents()
        build_index(path, docs, sources=sources)
    return path


def mark(ok: bool) -> str:
    return "met" if ok else "MISSED"


class Stopwatch:
    """``with Stopwatch() as sw: ...`` then ``sw.seconds``."""

    seconds: float = 0.0

    def __enter__(self) -> Stopwatch:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start
