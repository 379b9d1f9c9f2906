"""Calibration per item type: the frozen split, the item-type rule, typed weights files."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from leakage.calibration import FROZEN_SHARE, dev_frozen_split, split_side

# -- the frozen split ------------------------------------------------------------------------


def test_split_side_is_the_documented_hash():
    """SHA-256 of the id, first 8 bytes big-endian, / 2**64 < 1/3: frozen. Worked by hand."""
    for item_id in ("codenames-guess-val-0", "codenames-guess-val-4", "é-ü", ""):
        digest = hashlib.sha256(item_id.encode("utf-8")).hexdigest()
        u = int(digest[:16], 16)
        assert split_side(item_id) == ("frozen" if u < 2**64 / 3 else "dev")
    # fixed values, so that a change of the rule cannot pass unnoticed
    assert split_side("codenames-guess-val-0") == "dev"
    assert split_side("codenames-guess-val-4") == "frozen"


def test_split_is_deterministic_disjoint_and_about_a_third():
    ids = [f"game-{i}" for i in range(3000)]
    dev, frozen = dev_frozen_split(ids)
    assert set(dev).isdisjoint(frozen) and set(dev) | set(frozen) == set(ids)
    assert dev == [i for i in ids if i in set(dev)]  # input order kept
    # order and company do not move an item
    dev_r, frozen_r = dev_frozen_split(reversed(ids))
    assert set(dev_r) == set(dev) and set(frozen_r) == set(frozen)
    alone = {i for i in ids[:50] if split_side(i) == "frozen"}
    assert alone == set(frozen) & set(ids[:50])
    assert abs(len(frozen) / len(ids) - FROZEN_SHARE) < 0.03


def test_split_refuses_duplicate_ids_and_bad_shares():
    with pytest.raises(ValueError, match="listed twice"):
        dev_frozen_split(["a", "b", "a"])
    with pytest.raises(ValueError, match="frozen_share"):
        split_side("a", frozen_share=1.0)


def test_codenames_split_counts(shared_data: Path):
    """The split of the 377 real items, as docs/benchmarks.md reports it."""
    path = shared_data / "codenames-guess-val" / "games.jsonl"
    ids = [json.loads(line)["id"] for line in path.read_text(encoding="utf-8").splitlines()]
    dev, frozen = dev_frozen_split(ids)
    assert (len(dev), len(frozen)) == (253, 124)
