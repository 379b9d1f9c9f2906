"""Process settings for the model runtimes (torch, transformers), applied before they load,
and the preamble every model load shares (``open_model_runtime``, ``load_local_weights``):
the sentence encoders, the local LLM and the GGUF conversion.

**The device policy**, one for every model the project loads (``device``: the library's
option, ``--device`` on the command line, ``LEAKAGE_DEVICE`` in the service):

- ``auto``: the first CUDA device when torch sees one, else the CPU (MPS only when asked:
  its numerics and operator coverage vary by macOS release);
- ``cpu``, ``cuda`` (the current CUDA device, ``cuda:0`` unless ``CUDA_VISIBLE_DEVICES`` or
  Ray says otherwise), ``cuda:N``, ``mps``.

A device that is not there is ``DeviceUnavailable`` (exit 3, a 503) with one line saying what
torch found: never a silent fall-back to the CPU. A spelling that is none of these is a
``ValueError`` before torch is imported. ``precision="auto"`` is bf16 on a CUDA device that
has it (compute capability 8.0 and later), bf16 on a CPU with native bf16, fp32 otherwise
(MPS included). Work is cut by a token budget per pass that grows with the device
(``ModelRuntime.budget``).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any, TypeVar

from leakage.errors import BackendUnavailable, DeviceUnavailable

DEVICES = ("auto", "cpu", "cuda", "cuda:N", "mps")
"""The spellings of a ``device`` option (``N`` a CUDA device index)."""


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


_ONEDNN_BELOW_BF16 = (
    "SSE41",
    "AVX",
    "AVX2",
    "AVX2_VNNI",
    "AVX2_VNNI_2",
    "AVX512_CORE",
    "AVX512_CORE_VNNI",
)
"""``ONEDNN_MAX_CPU_ISA`` values that keep oneDNN's bf16 kernels off."""


def cpu_isa_capped() -> str | None:
    """The variable that holds torch's CPU kernels below AVX-512 (``ATEN_CPU_CAPABILITY``
    ``avx2`` or ``default``, ``ONEDNN_MAX_CPU_ISA`` below ``AVX512_CORE_BF16``), as
    ``NAME=value``; ``None`` when nothing does."""
    aten = os.environ.get("ATEN_CPU_CAPABILITY", "").strip().lower()
    if aten and not aten.startswith("avx512"):
        return f"ATEN_CPU_CAPABILITY={aten}"
    onednn = os.environ.get("ONEDNN_MAX_CPU_ISA", "").strip().upper()
    if onednn in _ONEDNN_BELOW_BF16:
        return f"ONEDNN_MAX_CPU_ISA={onednn}"
    return None


def cpu_supports_bf16() -> bool:
    """Whether this CPU has native bf16 arithmetic (AVX512-BF16 or AMX-BF16) and torch may
    use it (no ``cpu_isa_capped`` variable holds its kernels below AVX-512: a machine so held
    computes as one without bf16 does, which is how the benchmarks measure such CPUs)."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return ("avx512_bf16" in flags or "amx_bf16" in flags) and cpu_isa_capped() is None


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    import platform

    return platform.processor() or platform.machine() or "unknown CPU"


def resolve_precision(precision: str, device: str = "cpu", torch: Any = None) -> str:
    """``fp32`` or ``bf16`` for a model's ``precision`` option on ``device`` (resolved:
    ``cpu``, ``cuda:N``, ``mps``); ``auto`` is bf16 where the CPU has native bf16 or the
    CUDA device supports it (``torch`` is asked, and must be given, for a CUDA device),
    fp32 otherwise."""
    if precision not in ("auto", "fp32", "bf16"):
        raise ValueError("precision must be auto, fp32 or bf16")
    if precision != "auto":
        return precision
    if device.startswith("cuda"):
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    if device == "mps":
        return "fp32"
    return "bf16" if cpu_supports_bf16() else "fp32"


def check_device(device: str) -> str:
    """A ``device`` option's spelling, lower-cased (``auto``, ``cpu``, ``cuda``, ``cuda:N``,
    ``mps``); anything else is a ``ValueError`` naming them. Imports nothing."""
    value = device.strip().lower() if isinstance(device, str) else ""
    if value in ("auto", "cpu", "cuda", "mps") or re.fullmatch(r"cuda:[0-9]{1,4}", value):
        return value
    raise ValueError(f"device must be auto, cpu, cuda, cuda:N or mps, not {device!r}")


def cuda_may_be_present() -> bool:
    """Whether torch could see a CUDA device here: torch is installed and, on Linux, an
    NVIDIA device node (or WSL's ``/dev/dxg``) exists. False means no CUDA for certain, and
    is known without importing torch."""
    import sys

    if find_spec("torch") is None:
        return False
    dev = Path("/dev")
    return sys.platform != "linux" or any(dev.glob("nvidia[0-9]*")) or (dev / "dxg").exists()


def device_is_cpu(device: str) -> bool:
    """Whether a ``device`` option runs on the CPU: ``cpu``, or ``auto`` where torch sees no
    CUDA device (torch is imported only where one may be present)."""
    wanted = check_device(device)
    if wanted != "auto":
        return wanted == "cpu"
    if not cuda_may_be_present():
        return True
    import torch

    return not torch.cuda.is_available()


CLIENTS = ("local", "ctranslate2")
"""The clients that run a local model: ``local`` (torch) and ``ctranslate2``."""


@dataclass(frozen=True)
class RuntimeChoice:
    """Where and how a local model runs: the one decision (``decide_runtime``) that the LLM
    layer opens its client by, and that the ensemble picks its shipped fit from
    (``rows``). Each local client carries its own (``LocalLM.runtime``,
    ``CTranslate2LM.runtime``), and the judge's and the listener's ``info()`` record it
    (``describe``) in every report's ``backend_info.runtime``."""

    client: str
    """``local`` (torch) or ``ctranslate2`` (``CLIENTS``)."""
    device: str
    """The device: an option as asked (``decide_runtime``) or resolved (a client's)."""
    precision: str
    """torch: ``auto``, ``fp32`` or ``bf16``; CTranslate2: its compute type (``int8``,
    ``int8_float32``, ``float32``, ``auto``)."""

    @property
    def rows(self) -> str:
        """Which rows the model computes, as the ensemble's shipped fits are keyed: ``int8``
        for CTranslate2 in an int8 compute type, ``""`` otherwise (torch, and CTranslate2
        float32, which gives torch fp32's numbers)."""
        return "int8" if self.client == "ctranslate2" and self.precision.startswith("int8") else ""

    def describe(self) -> dict[str, str]:
        """``client``, ``device``, ``precision`` and ``rows``: what a backend's ``info()``,
        and so every report's ``backend_info``, records of the decision."""
        return {
            "client": self.client,
            "device": self.device,
            "precision": self.precision,
            "rows": self.rows,
        }


def decide_runtime(
    device: str = "auto", precision: str = "auto", *, ctranslate2_takes: bool = True
) -> RuntimeChoice:
    """The runtime of a local model when no client kind is named, from the settings and the
    hardware: CTranslate2 int8 on a CPU without native bf16 (``cpu_supports_bf16``) when the
    device is the CPU (``cpu``, or ``auto`` without a CUDA device), the precision is left
    ``auto``, CTranslate2 is installed and its client takes every option given
    (``ctranslate2_takes``); torch (``local``) otherwise: bf16 on GPUs and on CPUs that have
    it, and ``precision="fp32"`` keeps torch in fp32 anywhere.

    On such CPUs int8 is 1.3-1.7x torch fp32 on the listener and stays within the bounds the
    project set on its figures (docs/benchmarks.md, "A fast CPU path"); the ensemble then
    pools with the weights fitted on int8 rows (``RuntimeChoice.rows``)."""
    torch = RuntimeChoice("local", device, precision)
    if precision != "auto" or cpu_supports_bf16() or not ctranslate2_takes:
        return torch
    if find_spec("ctranslate2") is None or not device_is_cpu(device):
        return torch
    return RuntimeChoice("ctranslate2", device, "int8")


def _torch_build(torch: Any) -> str:
    cuda = getattr(torch.version, "cuda", None)
    return f"torch {torch.__version__}" + (f" (CUDA {cuda})" if cuda else " (a CPU-only build)")


def resolve_device(device: str, torch: Any) -> str:
    """The torch device a ``device`` option names, checked: ``cpu``, ``cuda:N`` or ``mps``.

    ``auto`` is ``cuda:<current>`` when torch sees a CUDA device, else ``cpu``. A device that
    is not there is ``DeviceUnavailable``, one line with what torch found (the build, the
    CUDA devices it sees, ``CUDA_VISIBLE_DEVICES``)."""
    wanted = check_device(device)
    if wanted == "cpu":
        return "cpu"
    if wanted == "mps":
        mps = getattr(torch.backends, "mps", None)
        if mps is not None and mps.is_available():
            return "mps"
        built = mps is not None and mps.is_built()
        raise DeviceUnavailable(
            f"device 'mps' was asked for, but {_torch_build(torch)} "
            + (
                "sees no MPS device (it needs Apple silicon and macOS 12.3 or later)"
                if built
                else "was built without MPS"
            )
            + "; device cpu or auto runs here"
        )
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if wanted == "auto":
        return f"cuda:{torch.cuda.current_device()}" if count else "cpu"
    index = torch.cuda.current_device() if wanted == "cuda" and count else None
    if wanted.startswith("cuda:"):
        index = int(wanted.partition(":")[2])
    if index is not None and index < count:
        return f"cuda:{index}"
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    seen = (
        "no CUDA device"
        if not count
        else f"{count} CUDA device{'s' if count > 1 else ''} "
        f"({', '.join(f'cuda:{i}' for i in range(count))})"
    )
    why = (
        f"{_torch_build(torch)} sees {seen}"
        + (f" with CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else "")
        if getattr(torch.version, "cuda", None)
        else f"{_torch_build(torch)} cannot use one (install a CUDA build of torch)"
    )
    raise DeviceUnavailable(
        f"device {device.strip()!r} was asked for, but {why}; device cpu or auto runs here"
    )


def device_name(device: str, torch: Any) -> str:
    """What runs a resolved device: the GPU's name, or the CPU's model name."""
    if device.startswith("cuda"):
        return str(torch.cuda.get_device_name(torch.device(device)))
    if device == "mps":
        return "Apple MPS"
    return cpu_name()


@dataclass(frozen=True)
class PassBudget:
    """How much work one forward pass takes on a device: enough to fill it, bounded so that
    activations and logit buffers stay small next to its memory."""

    prompt_tokens: int
    """Prompt tokens (padding included) per prompt-encoding pass."""
    step_tokens: int
    """Continuation tokens (padding included) per teacher-forced pass."""
    head_rows: int
    """Positions projected onto the vocabulary at once."""
    call_prompts: int
    """Prompts per bulk scoring call (their KV states live until it ends)."""
    encoder_tokens: int
    """Tokens (padding included) per sentence-encoder batch."""


CPU_BUDGET = PassBudget(
    prompt_tokens=4096, step_tokens=1024, head_rows=128, call_prompts=256, encoder_tokens=8192
)
"""On a CPU larger passes gain nothing (two cores are busy at a few hundred tokens) and the
logit buffers would only grow (128 x 262k float32 = 134 MB for Gemma)."""
GPU_BUDGET = PassBudget(
    prompt_tokens=65536,
    step_tokens=16384,
    head_rows=2048,
    call_prompts=8192,
    encoder_tokens=131072,
)
"""On a GPU a pass needs thousands of tokens to fill the device; 2,048 x 262k float32 logits
are 2.1 GB, and 8,192 Gemma prompts' KV states about 4 GB in bf16."""


def pass_budget(device: str) -> PassBudget:
    """The budget of a resolved device (a GPU's for ``cuda:N`` and ``mps``)."""
    return CPU_BUDGET if device == "cpu" else GPU_BUDGET


@dataclass(frozen=True)
class ModelRuntime:
    """torch, imported and set up for a model (``open_model_runtime``)."""

    torch: Any
    """The torch module."""
    precision: str
    """``fp32`` or ``bf16`` (``auto`` resolved for the device)."""
    device: str = "cpu"
    """``cpu``, ``cuda:N`` or ``mps`` (``auto`` resolved, checked to be there)."""

    @property
    def budget(self) -> PassBudget:
        """The device's ``PassBudget``."""
        return pass_budget(self.device)

    def describe(self) -> dict[str, str]:
        """``device``, ``device_name``, ``runtime`` (torch's version and build) and
        ``precision``: what every ``info()`` and report records."""
        return {
            "device": self.device,
            "device_name": device_name(self.device, self.torch),
            "runtime": _torch_build(self.torch),
            "precision": self.precision,
        }

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
    device: str = "auto",
) -> ModelRuntime:
    """What every model load does first: ``precision`` and ``device`` checked (a bad
    spelling is a ``ValueError`` before anything is imported), the process set up
    (``prepare_model_runtime``), torch, transformers and ``modules`` imported, transformers'
    progress bars off, torch's intra-op threads set when ``threads`` is given, and the device
    resolved (``resolve_device``: one that is not there is ``DeviceUnavailable``) and the
    precision for it.

    A module that cannot be imported is ``BackendUnavailable("{needs}: {hint}")``, with
    ``{missing}`` in ``needs`` standing for the modules that are not installed."""
    if precision not in ("auto", "fp32", "bf16"):
        raise ValueError("precision must be auto, fp32 or bf16")
    check_device(device)
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
    where = resolve_device(device, torch)
    return ModelRuntime(torch, resolve_precision(precision, where, torch), where)


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


def padded_batches(items: Sequence[T], lengths: Sequence[int], budget: int) -> list[list[T]]:
    """``items`` in their order, cut into batches whose padded size (rows x the batch's
    longest of ``lengths``) stays within ``budget`` tokens; an item longer than the budget
    goes alone. Items sorted by length (ascending) make the fullest batches."""
    batches: list[list[T]] = []
    current: list[T] = []
    longest = 0
    for item, n in zip(items, lengths, strict=True):
        if current and max(longest, n) * (len(current) + 1) > budget:
            batches.append(current)
            current, longest = [], 0
        current.append(item)
        longest = max(longest, n)
    if current:
        batches.append(current)
    return batches
