"""``manifest.json`` (``leakage.batch/1``): what is needed to reproduce or resume a result.

It records the inputs (the arguments and every file read, with size and modification time),
the input format, the backend with its options and its ``info()`` (model names, corpus index
and version), the scoring options, the code version (package version, git commit when run
from a checkout, and the versions of the libraries that shape the numbers) and, per run, the
statistics. ``--resume`` refuses a directory whose recorded job differs from the one asked.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
import subprocess
from dataclasses import asdict
from importlib import metadata
from pathlib import Path
from typing import Any, Final

from leakage.batch._rows import COLUMN_NAMES, STEPS_FORMAT
from leakage.errors import InvalidInput
from leakage.scoring import ScoreOptions

BATCH_FORMAT: Final = "leakage.batch/1"
_PACKAGES = ("numpy", "pydantic", "pyarrow", "scipy", "torch", "sentence-transformers", "ray")
# The parts of a manifest that must match for --resume to continue a directory.
_JOB_KEYS = ("input_format", "backend", "backend_options", "score_options", "difficulty")


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _git_commit() -> str | None:
    repo = Path(__file__).resolve().parents[2]
    if not (repo / ".git").exists():
        return None
    try:
        head = subprocess.run(
            ["git", "-C", str(repo), "rev-parse", "HEAD"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
        dirty = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip()  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+dirty" if dirty else "")


def code_version() -> dict[str, Any]:
    from leakage import __version__

    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "leakage": __version__,
        "git_commit": _git_commit(),
        "python": platform.python_version(),
        "packages": versions,
    }


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def describe_inputs(arguments: list[str], files: list[Path]) -> dict[str, Any]:
    out = []
    for f in files:
        try:
            st = f.stat()
            out.append({"path": str(f), "bytes": st.st_size, "mtime_ns": st.st_mtime_ns})
        except OSError:
            out.append({"path": str(f), "bytes": None, "mtime_ns": None})
    return {"arguments": arguments, "files": out}


def _find(info: Any, keys: tuple[str, ...]) -> list[Any]:
    """Every value under one of ``keys`` anywhere in a nested ``info()`` dict."""
    found: list[Any] = []
    if isinstance(info, dict):
        for k, v in info.items():
            if k in keys and isinstance(v, str | int | float):
                found.append(v)
            else:
                found += _find(v, keys)
    elif isinstance(info, list):
        for v in info:
            found += _find(v, keys)
    return found


def backend_summary(info: dict[str, Any]) -> dict[str, Any]:
    """Model names and corpus version picked out of a backend's ``info()``."""
    models = list(dict.fromkeys(_find(info, ("model", "model_name", "encoder"))))
    corpus = {
        k: v
        for k in ("index", "version", "built_at", "documents", "sources")
        if (v := next(iter(_find(info.get("count_source", {}), (k,))), None)) is not None
    }
    return {"models": models, "corpus": corpus or None}


def new_manifest(
    *,
    arguments: list[str],
    files: list[Path],
    input_format: str,
    backend: str,
    backend_options: dict[str, Any],
    options: ScoreOptions,
    difficulty: str | None,
    engine: str,
) -> dict[str, Any]:
    return {
        "format": BATCH_FORMAT,
        "created_at": now(),
        "status": "running",
        "inputs": describe_inputs(arguments, files),
        "input_format": input_format,
        "backend": backend,
        "backend_options": _jsonable(backend_options),
        "backend_info": None,
        "models": [],
        "corpus": None,
        # the seat options only when set: a run started before they existed still resumes
        "score_options": {
            k: v for k, v in asdict(options).items() if v is not None or not k.startswith("seat")
        },
        "difficulty": difficulty,
        "engine": engine,
        "code_version": code_version(),
        "steps_format": STEPS_FORMAT,
        "steps_columns": list(COLUMN_NAMES),
        "runs": [],
    }


def read_manifest(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise InvalidInput(f"{path}: unreadable manifest ({err}); use another --out") from None
    if doc.get("format") != BATCH_FORMAT:
        raise InvalidInput(f"{path}: not a {BATCH_FORMAT} manifest; use another --out")
    return doc


def check_resumable(old: dict[str, Any], new: dict[str, Any]) -> None:
    """Raise ``InvalidInput`` naming what differs when ``old`` is not the same job as ``new``."""
    diffs = [k for k in _JOB_KEYS if old.get(k) != new.get(k)]
    old_files = {f["path"]: f for f in old["inputs"]["files"]}
    new_files = {f["path"]: f for f in new["inputs"]["files"]}
    changed = [p for p in old_files.keys() & new_files.keys() if old_files[p] != new_files[p]]
    gone = sorted(old_files.keys() - new_files.keys())
    if changed:
        diffs.append(f"input files changed since the first run: {', '.join(sorted(changed)[:3])}")
    if gone:
        diffs.append(f"input files no longer given: {', '.join(gone[:3])}")
    if diffs:
        raise InvalidInput(
            "cannot resume: this --out holds a different job ("
            + "; ".join(diffs)
            + "); rerun with the original arguments or choose another --out"
        )


def write_manifest(path: Path, doc: dict[str, Any]) -> None:
    """Write atomically (temporary file + rename), so a kill never leaves half a manifest."""
    doc["updated_at"] = now()
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)
