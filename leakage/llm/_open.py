"""``open_llm``: an LLM client of a registered kind, local models shared between callers.

The kinds are the registry ``LLM_CLIENTS``: ``local`` (``LocalLM``, a causal LM run here with
torch), ``ctranslate2`` (``CTranslate2LM``, the same models run by CTranslate2, int8 by
default: faster on a CPU without bf16, docs/benchmarks.md) and ``openai``
(``OpenAICompatibleClient``, an OpenAI-compatible endpoint, its answers cached), and those
of installed distributions, by an entry point in the group ``leakage.llm_clients`` naming a
factory like those here (the model first, then keyword options)::

    [project.entry-points."leakage.llm_clients"]
    mykind = "mypackage.client:open_client"

Every caller that needs a client (the judge and the listener, the describers of
``leakage splits``, the game agents) picks it here.
"""

from __future__ import annotations

import inspect
import weakref
from collections.abc import Callable, Mapping
from typing import Any

from leakage._registry import Registry
from leakage.errors import BackendUnavailable, InvalidInput
from leakage.llm._base import LLMClient

ClientFactory = Callable[..., LLMClient]
LLM_CLIENTS: Registry[ClientFactory] = Registry(
    "leakage.llm_clients",
    builtin={
        "local": "leakage.llm._open:_local",
        "openai": "leakage.llm._open:_openai",
        "ctranslate2": "leakage.llm._open:_ctranslate2",
    },
)
"""The kinds of LLM client: name -> factory(model, **options)."""

DEFAULT_LOCAL_MODEL = "gemma-3-270m"
"""The local model when none is named (``LocalLM``'s default)."""


def register_llm_client(name: str) -> Callable[[ClientFactory], ClientFactory]:
    """Decorator: register a factory that builds the LLM client kind ``name``."""

    def deco(factory: ClientFactory) -> ClientFactory:
        return LLM_CLIENTS.register(name, factory)

    return deco


_OPEN_MODELS: weakref.WeakValueDictionary[tuple[Any, ...], Any] = weakref.WeakValueDictionary()
"""Local models in use, by (client class, model, options: ``_shared``): the
judge and the listener of one ensemble (or two backends of one service, or two game agents)
load a model once and share it (``LocalLM`` serialises its calls); a model nobody holds any
more is freed."""


def _local(
    model: str | None = None,
    *,
    precision: str = "auto",
    threads: int | None = None,
    normaliser: str = "exact",
    models_dir: str | None = None,
    device: str = "auto",
) -> LLMClient:
    """A local model by name or path (``LocalLM``), shared with the callers that ask for the
    same one with the same settings. ``models_dir``: where a GGUF model is converted
    (default ``Paths.models``); ``device``: where it runs (``auto``, ``cpu``, ``cuda``,
    ``cuda:N``, ``mps``)."""
    try:
        from leakage.llm import LocalLM
    except ImportError as err:  # pragma: no cover - the layer ships with the package
        raise BackendUnavailable(f"the local LLM layer cannot be imported: {err}") from err
    name = model or DEFAULT_LOCAL_MODEL
    options = dict(precision=precision, threads=threads, normaliser=normaliser, device=device)
    return _shared(LocalLM, name, models_dir=models_dir, **options)


def _shared(cls: Callable[..., LLMClient], name: str, **options: Any) -> LLMClient:
    """``cls(name, **options)``, or the one already built with the same class, name and
    options and still held by someone (``_OPEN_MODELS``)."""
    key = (cls.__name__, name, *sorted(options.items()))
    shared = _OPEN_MODELS.get(key)
    if shared is None:
        shared = cls(name, **options)
        _OPEN_MODELS[key] = shared
    return shared


def _ctranslate2(
    model: str | None = None,
    *,
    compute_type: str = "int8",
    precision: str = "auto",
    threads: int | None = None,
    models_dir: str | None = None,
    device: str = "auto",
) -> LLMClient:
    """A local model by name or path run by CTranslate2 (``CTranslate2LM``), shared like
    ``_local``'s. ``compute_type``: ``int8`` (default), ``int8_float32``, ``float32`` or
    ``auto``; ``precision`` ``fp32`` (the judge's and the listener's option) stands for
    ``compute_type="float32"``. ``device``: ``auto``, ``cpu``, ``cuda``, ``cuda:N``."""
    if precision not in ("auto", "fp32"):
        raise InvalidInput(
            f"precision {precision!r} is not one of the ctranslate2 client (auto, or fp32: "
            "compute_type float32); its compute_type option says how it computes"
        )
    if precision == "fp32":
        if compute_type not in ("int8", "float32"):  # int8: the default, not asked for
            raise InvalidInput(f"precision fp32 and compute_type {compute_type!r} disagree")
        compute_type = "float32"
    from leakage.llm._ct2 import CTranslate2LM

    return _shared(
        CTranslate2LM,
        model or DEFAULT_LOCAL_MODEL,
        compute_type=compute_type,
        threads=threads,
        models_dir=models_dir,
        device=device,
    )


def _openai(
    model: str | None = None,
    *,
    endpoint: str | None = None,
    api_key: str | None = None,
    cache_path: str | None = None,
    cache: bool = True,
    variables: Mapping[str, str] | None = None,
) -> LLMClient:
    """An OpenAI-compatible endpoint: ``endpoint``, ``model`` and ``api_key`` default to
    LEAKAGE_LLM_BASE_URL, LEAKAGE_LLM_MODEL and LEAKAGE_LLM_API_KEY of ``variables``, the
    values the caller read (the command line's and the service's settings;
    ``OpenAICompatibleClient.from_variables``), or of the environment when ``variables`` is
    ``None`` (``from_env``, for direct library users). Its answers are cached in
    ``cache_path`` (default ``Paths.llm_responses`` of the home ``LEAKAGE_HOME`` names);
    ``cache=False``: none (every request is sent)."""
    from leakage.llm import OpenAICompatibleClient
    from leakage.paths import default_paths

    if not cache:
        cache_path = None
    elif cache_path is None:
        cache_path = str(default_paths().llm_responses)
    kw: dict[str, Any] = {"base_url": endpoint} if endpoint else {}
    if model:
        kw["model"] = model
    if api_key:
        kw["api_key"] = api_key
    if variables is None:
        return OpenAICompatibleClient.from_env(cache_path=cache_path, **kw)
    return OpenAICompatibleClient.from_variables(variables, cache_path=cache_path, **kw)


def default_local_kind(**given: Any) -> str:
    """The kind of a local model's client when none is named, for the options ``given``
    (those set away from their defaults): the client of ``leakage._runtime.decide_runtime``
    (``ctranslate2``, int8, on a CPU without native bf16 where nothing given asks otherwise;
    ``local``, torch, elsewhere), told whether the ``ctranslate2`` client takes every option
    given."""
    from leakage._runtime import decide_runtime

    named, any_name = _taken(LLM_CLIENTS["ctranslate2"])
    takes = any_name or all(key in named for key in given)
    device, precision = given.get("device", "auto"), given.get("precision", "auto")
    return decide_runtime(device, precision, ctranslate2_takes=takes).client


def _taken(factory: ClientFactory) -> tuple[set[str], bool]:
    """The keyword options a factory takes, and whether it takes any (``**options``)."""
    params = list(inspect.signature(factory).parameters.values())[1:]  # after the model
    named = {p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}
    return named, any(p.kind is p.VAR_KEYWORD for p in params)


def open_llm(
    model: str | None = None,
    *,
    kind: str | None = None,
    endpoint: str | None = None,
    api_key: str | None = None,
    precision: str = "auto",
    threads: int | None = None,
    cache_path: str | None = None,
    normaliser: str = "exact",
    models_dir: str | None = None,
    variables: Mapping[str, str] | None = None,
    device: str = "auto",
    **options: Any,
) -> LLMClient:
    """A client of the kind ``kind`` (``LLM_CLIENTS``; default: ``openai`` when ``endpoint``
    is set, else ``default_local_kind``: ``ctranslate2`` on a CPU without bf16, ``local``
    elsewhere) for ``model``.

    ``ctranslate2``: the same models run by CTranslate2 (``compute_type``, ``threads``,
    ``device``, ``models_dir``; ``precision`` ``fp32`` is ``compute_type="float32"``).
    ``local``: a model by name or path (default ``gemma-3-270m``), ``device`` (``auto``: a
    CUDA device when torch sees one; ``cpu``, ``cuda``, ``cuda:N``, ``mps``), ``precision``,
    ``threads``, ``normaliser`` (``exact`` or ``shortlist``, ``LocalLM``) and ``models_dir``
    (where a GGUF model is converted; default ``Paths.models``); one loaded model is shared
    by the callers that ask for the same one with the same settings. ``openai``: the
    ``endpoint`` (its model from ``model`` or LEAKAGE_LLM_MODEL, ``api_key``), its answers
    cached in ``cache_path`` (default ``Paths.llm_responses`` of the home ``LEAKAGE_HOME``
    names). ``options``: more keyword options, for a kind that takes them.

    ``variables``: the values of the documented variables (``LEAKAGE_LLM_*``,
    ``OPENAI_API_KEY``) as the caller read them, for a kind that reads any (``openai``); the
    command line and the service pass those of their settings. ``None``: such a kind reads
    the environment, a convenience for direct library users.

    An option given (other than its default here) that the kind does not take is
    ``InvalidInput`` (a usage error on the command line, not a traceback); ``cache_path``,
    ``models_dir`` and ``variables`` go to the kinds that take them, and are left out for the
    others.
    An unknown kind is ``UnknownBackend`` naming those there are.
    """
    given: dict[str, Any] = {k: v for k, v in (("endpoint", endpoint), ("api_key", api_key)) if v}
    if threads is not None:
        given["threads"] = threads
    if precision != "auto":
        given["precision"] = precision
    if normaliser != "exact":
        given["normaliser"] = normaliser
    if device != "auto":
        given["device"] = device
    given.update(options)
    kind = kind or ("openai" if endpoint else default_local_kind(**given))
    factory = LLM_CLIENTS.pick(kind, "LLM client")
    named, any_name = _taken(factory)
    for key in sorted(given):
        if key not in named and not any_name:
            takers = [f"{k!r}" for k in LLM_CLIENTS if key in _taken(LLM_CLIENTS[k])[0]]
            raise InvalidInput(
                f"{key} is an option of the {' or '.join(takers) or 'no'} LLM client, "
                f"not of {kind!r} (it takes: {', '.join(sorted(named)) or 'nothing'})"
            )
    # where files go and the variables read: a caller gives them whatever the kind, and each
    # kind takes its own
    for key, value in (
        ("cache_path", cache_path),
        ("models_dir", models_dir),
        ("variables", variables),
    ):
        if value is not None and (key in named or any_name):
            given[key] = value
    return factory(model, **given)


__all__ = [
    "DEFAULT_LOCAL_MODEL",
    "LLM_CLIENTS",
    "default_local_kind",
    "open_llm",
    "register_llm_client",
]
