"""The likelihood-backend protocol and the backend registry.

A backend turns clues and candidate words into a clues x candidates matrix of
log P(clue | candidate is the secret). Backends are registered as *factories* so that heavy
imports (torch, faiss, transformers, HTTP clients) happen only when one is created, never
at ``import leakage``.

Abilities beyond ``loglik`` are optional and declared as protocols here (``SupportsPrepare``,
``SupportsEmbed``, ``SupportsDryRun``, ``SupportsClose``, ``SupportsCacheStats``,
``SupportsTokenCount``): a caller asks ``isinstance(backend, SupportsEmbed)`` instead of
probing for attributes, and a backend (or a test fake) needs no base class to have one.
Every shipped backend has ``close()``. A factory may declare how heavy its backend's work is
(``costs``, read by ``cost_factor``) so that a server can bound a game before building it.

This module imports no numerical library, and the registry names the package's backends by
``"module:attribute"``: listing them (``backend_names``, a command line's choices) imports
none of them.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, Self, TypeVar, runtime_checkable

from leakage._registry import Registry
from leakage.errors import InvalidInput, validation_problems

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@runtime_checkable
class LikelihoodBackend(Protocol):
    """Anything that scores clues against candidate secrets."""

    name: str

    def info(self) -> dict[str, Any]:
        """Name and settings (model, corpus, smoothing), copied into every report."""
        ...

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> NDArray[np.float64]:
        """log P(clue_i | secret = candidate_j), shape (len(clues), len(candidates)).

        Rows need not be normalised; values are finite (backends smooth zero evidence).
        """
        ...


Games = Iterable[tuple[Sequence[str], Sequence[str], str | None]]
"""Many games' ``(clues, candidates, category)``, as ``prepare`` takes them."""

Precision = Literal["auto", "fp32", "bf16"]
"""A model's ``precision`` option (``auto``: bf16 on a GPU that has it and where the CPU has
it natively)."""

Device = str
"""A model's ``device`` option: ``auto`` (a CUDA device when torch sees one, else the CPU),
``cpu``, ``cuda``, ``cuda:N`` or ``mps`` (``leakage._runtime.DEVICES``)."""


@runtime_checkable
class SupportsPrepare(Protocol):
    """Does bulk work for many games at once (embeds every text in large batches, scores
    every prompt of a batch together) before they are scored one by one."""

    def prepare(self, games: Games) -> None: ...


@runtime_checkable
class SupportsEmbed(Protocol):
    """Embeds text (the SpyGame outlier score uses it)."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """Unit vectors, one row per text."""
        ...


@dataclass(frozen=True)
class CountPlan:
    """What scoring some games would ask one count source (a dry run's answer)."""

    source: str
    """The count source's name (``local``, ``serpapi``, ...)."""
    queries: int
    """Distinct count queries the games need."""
    uncached: int
    """Those of them that are not cached: each would cost a request."""


@runtime_checkable
class SupportsDryRun(Protocol):
    """Sends count queries, and can say how many before it sends any."""

    def dry_run(self, games: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[CountPlan]:
        """One plan per count source that scoring these ``(clues, candidates)`` would ask."""
        ...


@runtime_checkable
class SupportsClose(Protocol):
    """Holds something to release (SQLite connections of an index or a cache)."""

    def close(self) -> None:
        """Release it; calling it again does nothing."""
        ...


@runtime_checkable
class SupportsCacheStats(Protocol):
    """Counts the texts it had to send to a model because no cache had them."""

    def cache_misses(self) -> int:
        """How many texts this backend has sent to its encoder so far."""
        ...


@runtime_checkable
class SupportsTokenCount(Protocol):
    """Runs a language model here, whose tokenizer says how much text costs it (the
    service's size limits count tokens as well as bytes)."""

    def count_tokens(self, texts: Sequence[str]) -> int | None:
        """Tokens the model makes of ``texts``, all together, without special tokens; None
        when it has no tokenizer here (a model behind an HTTP endpoint)."""
        ...


class Closing:
    """Mixin: ``with backend:`` closes it on the way out (the class defines ``close``)."""

    def close(self) -> None:
        """Nothing to release (a subclass that holds something overrides this)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


BackendFactory = Callable[..., LikelihoodBackend]
BACKENDS: Registry[BackendFactory] = Registry(
    "leakage.backends",
    builtin={
        "cooccurrence": "leakage.backends.cooccurrence._backend:_cooccurrence",
        "embedding": "leakage.backends.embedding:_embedding",
        "ensemble": "leakage.backends.ensemble:_ensemble",
        "judge": "leakage.backends.judge:_judge",
        "listener": "leakage.backends.judge:_listener",
        "answers": "leakage.backends.answers:_answers",
    },
)
"""The backends: the package's own (name -> its factory, imported when first asked for), and
those of installed distributions (entry-point group ``leakage.backends``, each naming a
factory like these: keyword options in, a ``LikelihoodBackend`` out)."""


def register_backend(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Decorator: register a factory that builds the backend ``name`` from keyword options
    (at run time: a test, a notebook; a distribution declares an entry point instead)."""

    def deco(factory: BackendFactory) -> BackendFactory:
        return BACKENDS.register(name, factory)

    return deco


def backend_names() -> list[str]:
    """Every registered backend, the entry points of installed distributions included
    (imports none of the package's backends)."""
    return BACKENDS.names()


@runtime_checkable
class DeclaresCost(Protocol):
    """A backend factory that says how heavy its backend's work is (``costs``)."""

    cost_factor: int


_F = TypeVar("_F", bound=Callable[..., Any])


def costs(factor: int) -> Callable[[_F], _F]:
    """Decorator of a backend factory: one unit of its backend's work (a byte of clue text
    against one candidate) costs ``factor`` times what it costs the co-occurrence backend
    (default 1), e.g. 250 for one that runs a language model per candidate. A server bounds
    the work of a game by it before the backend is built (``cost_factor``)."""
    if factor < 1:
        raise ValueError(f"a cost factor is at least 1 (got {factor})")

    def deco(factory: _F) -> _F:
        factory.cost_factor = factor  # type: ignore[attr-defined]
        return factory

    return deco


def cost_factor(name: str) -> int:
    """The cost factor the factory of backend ``name`` declares (``costs``), else 1; imports
    the factory's module (not its models). ``UnknownBackend`` for a name not registered."""
    return factory.cost_factor if isinstance(factory := _factory(name), DeclaresCost) else 1


def accepted_options(factory: Callable[..., Any]) -> tuple[set[str], bool]:
    """Keyword names a factory takes, and whether it takes ``**kwargs``."""
    params = inspect.signature(factory).parameters.values()
    named = {
        p.name
        for p in params
        if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    }
    return named, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def with_variables(
    name: str, options: dict[str, Any], variables: Mapping[str, str]
) -> dict[str, Any]:
    """``options`` of the backend ``name`` with ``variables`` (the values of the documented
    variables the caller read: the LLM endpoint's ``LEAKAGE_LLM_*``, the web count sources'
    keys) as the ``variables`` option of the backend, or of each ensemble member that takes
    one (a per-member option, ignored for a backend that is not a member). A ``variables``
    option already there stays. The command line and the service use it so that the library
    reads no environment (its ``from_env`` factories are for direct library users)."""

    def takes(backend: str) -> bool:
        return backend in BACKENDS and "variables" in accepted_options(BACKENDS[backend])[0]

    if name != "ensemble":
        if takes(name):
            options.setdefault("variables", variables)
        return options
    for member in BACKENDS:
        if member != "ensemble" and takes(member):
            own = options.setdefault(member, {})
            if isinstance(own, dict):
                own.setdefault("variables", variables)
    return options


_PLAIN = (int, float, bool, str, Path, type(None))


def _plain(hint: Any) -> bool:
    """Whether ``hint`` is made only of plain values (numbers, text, paths, None, a
    ``Literal`` of such values)."""
    if hint in _PLAIN:
        return True
    origin = typing.get_origin(hint)
    if origin is Literal:
        return all(isinstance(v, _PLAIN) for v in typing.get_args(hint))
    if origin in (typing.Union, types.UnionType):
        return all(_plain(h) for h in typing.get_args(hint))
    return False


def _checked(name: str, factory: BackendFactory, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` checked against the factory's signature: an unknown name, or a value that
    is not of a plain option's type (``threads=abc``) or not one of a ``Literal`` option's
    values (``estimator=foo``), is the user's error, said as such rather than a TypeError or
    ValueError from deep inside the backend. Plain values are converted as
    pydantic converts them (``"2"`` to 2 for an int)."""
    from pydantic import TypeAdapter, ValidationError

    named, any_name = accepted_options(factory)
    unknown = sorted(set(options) - named) if not any_name else []
    if unknown:
        raise InvalidInput(
            f"backend {name!r} has no option {', '.join(map(repr, unknown))}; "
            f"it takes: {', '.join(sorted(named))}"
        )
    try:
        hints = typing.get_type_hints(factory)
    except Exception:  # a hint that cannot be resolved here: leave the values alone
        return options
    out = dict(options)
    for key, value in options.items():
        hint = hints.get(key)
        if hint is None or not _plain(hint):
            continue
        try:
            out[key] = TypeAdapter(hint).validate_python(value)
        except ValidationError as err:
            _, reason = validation_problems(err)[0]
            raise InvalidInput(f"backend {name!r}, option {key}={value!r}: {reason}") from None
    return out


def _factory(name: str) -> BackendFactory:
    return BACKENDS.pick(name, "backend")


def create_backend(name: str, **options: Any) -> LikelihoodBackend:
    """Build a registered backend; ``UnknownBackend`` lists the names there are, and
    ``InvalidInput`` names an option the backend does not take or a value of the wrong
    type."""
    factory = _factory(name)
    return factory(**_checked(name, factory, options))


@contextmanager
def open_backend(name: str, **options: Any) -> Iterator[LikelihoodBackend]:
    """``create_backend`` for a ``with`` block: the backend is closed when the block ends."""
    backend = create_backend(name, **options)
    try:
        yield backend
    finally:
        if isinstance(backend, SupportsClose):
            backend.close()
