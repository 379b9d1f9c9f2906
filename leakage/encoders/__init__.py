"""Text encoders: the ``Encoder`` protocol, the caching wrapper, the registry of kinds of
encoder (``ENCODERS``: sentence-transformers models, and those installed distributions add).

Importing this package does not import torch; building a ``SentenceTransformerEncoder`` does.
"""

from leakage._runtime import cpu_supports_bf16
from leakage.encoders._base import (
    DEFAULT_ENCODER,
    DEFAULT_TAU,
    ENCODERS,
    Encoder,
    EncoderFactory,
)
from leakage.encoders._cache import CachedEncoder
from leakage.encoders._st import (
    DEFAULT_MODEL,
    MINILM_NAME,
    SentenceTransformerEncoder,
    default_cache_path,
    resolve_model,
)

__all__ = [
    "DEFAULT_ENCODER",
    "DEFAULT_MODEL",
    "DEFAULT_TAU",
    "ENCODERS",
    "MINILM_NAME",
    "CachedEncoder",
    "Encoder",
    "EncoderFactory",
    "SentenceTransformerEncoder",
    "cpu_supports_bf16",
    "default_cache_path",
    "encoder_names",
    "open_encoder",
    "resolve_model",
]


def encoder_names() -> list[str]:
    """Every kind of encoder (imports none of them)."""
    return ENCODERS.names()


def open_encoder(
    model: str = DEFAULT_MODEL,
    *,
    precision: str = "auto",
    threads: int | None = None,
    cache_path: str | None = None,
    disk_cache: bool = True,
    kind: str = DEFAULT_ENCODER,
    device: str = "auto",
) -> CachedEncoder:
    """A cached encoder (the usual way to get one): ``model`` built by the factory ``kind``
    of ``ENCODERS`` (sentence-transformers by default; ``UnknownBackend`` names the kinds
    there are, ``BackendUnavailable`` says why an installed one cannot be loaded) on
    ``device`` (``leakage._runtime``'s policy: ``auto``, ``cpu``, ``cuda``, ``cuda:N``,
    ``mps``), its vectors kept in ``cache_path`` (default: ``leakage.paths``' embeddings)
    unless ``disk_cache`` is off. A kind whose factory takes no ``device`` is built without
    one when ``device`` is ``auto``; asked for another device it is a ``ValueError``."""
    import inspect
    from pathlib import Path

    factory = ENCODERS.pick(kind, "encoder")
    params = inspect.signature(factory).parameters
    takes_device = "device" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
    if takes_device:
        enc = factory(model, precision=precision, threads=threads, device=device)
    elif device == "auto":
        enc = factory(model, precision=precision, threads=threads)
    else:
        raise ValueError(f"the encoder kind {kind!r} takes no device option (asked: {device!r})")
    path = None if not disk_cache else Path(cache_path) if cache_path else default_cache_path()
    return CachedEncoder(enc, cache_path=path)
