"""A stable dev/frozen split of item ids: SHA-256 of the UTF-8 id, its first 8 bytes read as
a big-endian integer u; the item is frozen when u / 2**64 < ``FROZEN_SHARE`` (one third).

Beneath everything (layer 0) so that an adapter can split its source's instances
(``leakage.transcripts.adapters.clembench.instance_side``) the way calibration splits items
(``leakage.calibration``, which re-exports these names and documents the protocol).
"""

from __future__ import annotations

import hashlib
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
