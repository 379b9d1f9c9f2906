"""The count-source protocol: document (or occurrence) counts for conjunctions of phrases.

A query is a tuple of one or more phrases, read as ``p1 AND p2 AND ...``; a phrase may hold
several words (``"ice hockey"``) and is matched as a phrase. ``("racket",)`` asks for #(racket),
``("racket", "tennis")`` for #(racket AND tennis).

The count sources are a registry (``COUNT_SOURCES``, entry-point group
``leakage.count_sources``): name -> a class with ``key_env`` and an ``open`` classmethod. This
module imports nothing heavy, so the names can be listed cheaply (a command line's choices).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from leakage._registry import Registry

Query = tuple[str, ...]


def query_key(query: Query) -> str:
    """A canonical, order-free text form of a query, for caches and logs."""
    return " AND ".join(sorted('"' + " ".join(p.casefold().split()) + '"' for p in query))


@runtime_checkable
class CountSource(Protocol):
    """Anything that answers co-occurrence counts."""

    name: str
    """Registry name, e.g. ``local``, ``serpapi``, ``google-cse``, ``infini-gram``."""

    def total(self) -> float:
        """N, the number of documents the counts are out of (an estimate for web engines)."""
        ...

    def counts(self, queries: Sequence[Query]) -> list[int]:
        """One count per query, in order. Raises ``CountSourceError`` / ``BudgetExhausted``."""
        ...

    def uncached(self, queries: Sequence[Query]) -> list[Query]:
        """The distinct queries that would cost a request (for dry runs and budgets)."""
        ...

    def info(self) -> dict[str, Any]:
        """What gives the counts (``source``: the name, and the index, endpoint, cache, ...),
        copied into every report (never a key)."""
        ...


class CountSourceKind(Protocol):
    """What ``COUNT_SOURCES`` holds for a name: usually the source's class."""

    key_env: tuple[str, ...]
    """Environment variables holding its credentials, all needed (none for most)."""

    def open(self, **options: Any) -> CountSource:
        """Open the source. ``options`` are those of ``open_count_source`` that it names
        among ``index`` (a local index file), ``build_missing`` (build the default index when
        there is none), ``cache_path`` (the web count cache), ``budget`` (the most requests a
        run may send) and ``endpoint`` (a base URL instead of the engine's); it is given only
        those it names (the backend passes every source's paths)."""
        ...


COUNT_SOURCES: Registry[CountSourceKind] = Registry(
    "leakage.count_sources",
    builtin={
        "local": "leakage.backends.cooccurrence._local:LocalIndexSource",
        "serpapi": "leakage.backends.cooccurrence._engines:SerpApiSource",
        "google-cse": "leakage.backends.cooccurrence._engines:GoogleCseSource",
        "infini-gram": "leakage.backends.cooccurrence._engines:InfiniGramSource",
    },
)
"""The count sources: the package's own (imported when first opened) and those of installed
distributions (entry-point group ``leakage.count_sources``, each naming a class like these)."""


def count_source_names() -> list[str]:
    """Every count source's name (imports none of them)."""
    return COUNT_SOURCES.names()
