"""What the game tests share: one card, its association tables, scripted test agents."""

from __future__ import annotations

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
