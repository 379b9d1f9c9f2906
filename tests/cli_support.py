"""The ``leakage`` command run as a user runs it: a subprocess of this Python."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_leakage(
    *args: str,
    home: Path,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    errors: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """``python -m leakage ARGS`` with ``LEAKAGE_HOME=home``, wide output (``COLUMNS=200``)
    and ``env`` added to this environment; its output captured as text (``errors``: how
    undecodable bytes are read, as ``open`` takes it)."""
    return subprocess.run(
        [sys.executable, "-m", "leakage", *args],
        capture_output=True,
        text=True,
        errors=errors,
        env={**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200", **(env or {})},
        timeout=timeout,
    )
