"""The frozen split: items that tuning never sees, only reports on.

Every item (a game, by its transcript ``id``) falls on the *dev* side (fit and tune here) or
the *frozen* side (report only) by a stable hash of its id, so the split is the same on every
machine, in every run and whatever the order of the files, and a new item never moves an old
one: SHA-256 of the UTF-8 id, its first 8 bytes read as a big-endian integer u; the item is
frozen when u / 2**64 < ``FROZEN_SHARE`` (one third).

Defined once here so that every later change is reported on the same frozen items
(``benchmarks/adversary.py``, docs/benchmarks.md "Adversary on human one-clue guesses").
"""

from __future__ import annotations

from collections.abc import Iterable

from leakage._split import FROZEN_SHARE, Side, split_side

__all__ = ["FROZEN_SHARE", "Side", "dev_frozen_split", "split_side"]


def dev_frozen_split(
    item_ids: Iterable[str], *, frozen_share: float = FROZEN_SHARE
) -> tuple[list[str], list[str]]:
    """(dev ids, frozen ids), each in input order; an id listed twice is an error."""
    dev: list[str] = []
    frozen: list[str] = []
    seen: set[str] = set()
    for i in item_ids:
        if i in seen:
            raise ValueError(f"item id {i!r} is listed twice; ids must be unique to split")
        seen.add(i)
        (frozen if split_side(i, frozen_share=frozen_share) == "frozen" else dev).append(i)
    return dev, frozen
