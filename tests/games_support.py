"""What the game tests share: one card, its association tables, scripted test agents."""

from __future__ import annotations

import re
import zlib

import numpy as np
import pytest

from leakage.games import load_cards
from leakage.games.agents import AssociationTables

SPORTS = tuple(c for c in load_cards() if c.category == "Sports")
"""One card: every game of the tests deals from it, so one table is built."""


@pytest.fixture(scope="module", name="tables")
def tables_fixture(cooccurrence) -> AssociationTables:
    """Import it into a test module to use the ``tables`` fixture there."""
    return AssociationTables(cooccurrence)


def scripted(fn):
    """An agent from a function of the observation."""

    class Fn:
        name = fn.__name__

        def __call__(self, obs):
            return fn(obs)

    return Fn()


class WordsEncoder:
    """Bag of words hashed into ``dimension`` dimensions, unit length: texts sharing words are
    near (an encoder for tests that need no model)."""

    name = "test-words"

    def __init__(self, dimension: int = 64) -> None:
        self.dimension = dimension

    def encode_batch(self, texts):
        out = np.zeros((len(texts), self.dimension), np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"\w+", t.lower()):
                out[i, zlib.crc32(w.encode()) % self.dimension] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)

    def close(self) -> None:
        """Nothing to release (``open_encoder``'s encoders have ``close``; a factory that
        opened this one in their place closes it)."""
