"""Process settings for the model runtimes (torch, transformers), applied before they load,
and the preamble every model load shares (``open_model_runtime``, ``load_local_weights``):
the sentence encoders, the local LLM and the GGUF conversion."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TypeVar

from leakage.errors import BackendUnavailable


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


@dataclass(frozen=True)
class ModelRuntime:
    """torch, imported and set up for a model (``open_model_runtime``)."""

    torch: Any
    """The torch module."""
    precision: str
    """``fp32`` or ``bf16`` (``auto`` resolved)."""

    @property
    def dtype(self) -> Any:
        """The torch dtype of ``precision``."""
        return self.torch.bfloat16 if self.precision == "bf16" else self.torch.float32

    @property
    def threads(self) -> int:
        """torch's intra-op threads."""
        return int(self.torch.get_num_threads())


def open_model_runtime(
    needs: str,
    hint: str,
    *,
    modules: Sequence[str] = (),
    precision: str = "auto",
    threads: int | None = None,
) -> ModelRuntime:
    """What every model load does first: ``precision`` resolved (a bad one is a
    ``ValueError`` before anything is imported), the process set up
    (``prepare_model_runtime``), torch, transformers and ``modules`` imported, transformers'
    progress bars off, and torch's intra-op threads set when ``threads`` is given.

    A module that cannot be imported is ``BackendUnavailable("{needs}: {hint}")``, with
    ``{missing}`` in ``needs`` standing for the modules that are not installed."""
    resolved = resolve_precision(precision)
    prepare_model_runtime()
    wanted = ("torch", "transformers", *modules)
    try:
        for name in wanted:
            importlib.import_module(name)
    except ImportError as err:
        missing = [m for m in wanted if find_spec(m) is None] or [err.name or str(err)]
        raise BackendUnavailable(f"{needs.format(missing=', '.join(missing))}: {hint}") from err
    import torch
    import transformers

    transformers.utils.logging.disable_progress_bar()
    if threads is not None:
        torch.set_num_threads(threads)
    return ModelRuntime(torch, resolved)


T = TypeVar("T")


def load_local_weights(
    load: Callable[..., T], source: str | Path, *, not_here: Callable[[str], str]
) -> T:
    """``load(str(source), local_files_only=True)``: a model folder, or a hub name looked up
    in the local Hugging Face cache only (nothing is downloaded at run time). An ``OSError``
    (weights not there, a folder that is not a model) is ``BackendUnavailable(not_here(why))``,
    ``why`` the error's class and first line."""
    try:
        return load(str(source), local_files_only=True)
    except OSError as err:
        first = (str(err).splitlines() or [""])[0][:160]
        raise BackendUnavailable(not_here(f"{err.__class__.__name__}: {first}")) from err
