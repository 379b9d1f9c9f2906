"""The per-run query budget of a paid count source.

Web search APIs bill per query, so a run is given a ceiling on the number of queries that
actually go out (cache hits are free and never touch the budget). A query is charged once
when it is first sent; its retries are not charged again, because the providers bill
answered searches, not refused ones.
"""

from __future__ import annotations


class QueryBudget:
    """How many more queries this run may send; ``limit=None`` means no ceiling.

    Not thread-safe on purpose: one source runs its requests on one event loop, and every
    ``take()`` happens on that loop between awaits.
    """

    def __init__(self, limit: int | None = None) -> None:
        if limit is not None and limit < 0:
            raise ValueError(f"a query budget cannot be negative (got {limit})")
        self.limit = limit
        self.spent = 0

    @property
    def remaining(self) -> int | None:
        """Queries left, or ``None`` when there is no ceiling."""
        return None if self.limit is None else self.limit - self.spent

    def take(self) -> bool:
        """Charge one query; ``False`` (and nothing charged) when the budget is spent."""
        if self.limit is not None and self.spent >= self.limit:
            return False
        self.spent += 1
        return True

    def __repr__(self) -> str:
        return f"QueryBudget(limit={self.limit}, spent={self.spent})"
