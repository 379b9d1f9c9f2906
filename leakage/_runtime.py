"""Process settings for the model runtimes (torch, transformers), applied before they load."""

from __future__ import annotations

import os
from pathlib import Path


def prepare_model_runtime() -> None:
    """Offline hubs, quiet progress bars and passive OpenMP waits, unless the user set them.

    Nothing is fetched from a model hub at run time, and progress bars would only clutter
    standard error. OpenMP threads that busy-wait collapse 4-18x when another process holds
    a core; passive waiting avoids that at some cost on an idle machine
    (docs/benchmarks.md): set OMP_WAIT_POLICY=ACTIVE before starting to trade robustness
    for idle speed. It takes effect only if torch has not been imported yet.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def cpu_supports_bf16() -> bool:
    """Whether this CPU has native bf16 arithmetic (AVX512-BF16 or AMX-BF16)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "avx512_bf16" in flags or "amx_bf16" in flags


def resolve_precision(precision: str) -> str:
    """``fp32`` or ``bf16`` for a model's ``precision`` option; ``auto`` is bf16 where the CPU
    has native bf16, else fp32."""
    if precision not in ("auto", "fp32", "bf16"):
        raise ValueError("precision must be auto, fp32 or bf16")
    if precision == "auto":
        return "bf16" if cpu_supports_bf16() else "fp32"
    return precision
