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

import hashlib
from collections.abc import Iterable
from typing import Literal

FROZEN_SHARE = 1 / 3
"""Share of item ids on the frozen side (in expectation; the hash decides each id)."""

Side = Literal["dev", "frozen"]


def split_side(item_id: str, *, frozen_share: float = FROZEN_SHARE) -> Side:
    """``"frozen"`` or ``"dev"`` for one item id (see the module docstring)."""
    if not 0 < frozen_share < 1:
        raise ValueError(f"frozen_share must be between 0 and 1, got {frozen_share}")
    u = int.from_bytes(hashlib.sha256(item_id.encode("utf-8")).digest()[:8], "big")
    return "frozen" if u / 2**64 < frozen_share else "dev"


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
