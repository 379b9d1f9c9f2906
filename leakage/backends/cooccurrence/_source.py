"""The count-source protocol: document (or occurrence) counts for conjunctions of phrases.

A query is a tuple of one or more phrases, read as ``p1 AND p2 AND ...``; a phrase may hold
several words (``"ice hockey"``) and is matched as a phrase. ``("racket",)`` asks for #(racket),
``("racket", "tennis")`` for #(racket AND tennis).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

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
