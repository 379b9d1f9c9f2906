"""The Chameleon cards the engines deal from: ``leakage/data/chameleon_cards.json``, package
data read with ``importlib.resources`` (so an installed wheel has it too)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from leakage.errors import CorpusError, InvalidInput


def shipped_cards_file() -> Traversable:
    """The shipped card set (28 categories x 16 words), a resource of the ``leakage`` package."""
    return files("leakage") / "data" / "chameleon_cards.json"


@dataclass(frozen=True, slots=True)
class Card:
    """One category card: the category and its words (16 on the shipped cards)."""

    category: str
    words: tuple[str, ...]


def parse_cards(data: object, *, source: str = "<cards>") -> tuple[Card, ...]:
    """Cards from parsed JSON: a list of ``{"category": str, "words": [str, ...]}``."""
    if not isinstance(data, list) or not data:
        raise InvalidInput(f"{source}: expected a non-empty JSON list of cards")
    cards = []
    for i, item in enumerate(data):
        if not isinstance(item, dict) or not isinstance(item.get("category"), str):
            raise InvalidInput(f"{source}: card {i}: expected an object with a 'category'")
        words = item.get("words")
        if (
            not isinstance(words, list)
            or len(words) < 2
            or not all(isinstance(w, str) and w.strip() for w in words)
        ):
            raise InvalidInput(f"{source}: card {i}: 'words' must list at least 2 words")
        if len({w.casefold() for w in words}) != len(words):
            raise InvalidInput(f"{source}: card {i}: a word appears twice")
        cards.append(Card(item["category"], tuple(words)))
    return tuple(cards)


@lru_cache(maxsize=8)
def load_cards(path: str | Path | None = None) -> tuple[Card, ...]:
    """The cards in ``path`` (default: the shipped set, ``shipped_cards_file()``).

    A user's file that cannot be read is ``InvalidInput``; a shipped set that cannot be read
    means a broken installation: ``CorpusError``.
    """
    if path is None:
        shipped = shipped_cards_file()
        try:
            return parse_cards(json.loads(shipped.read_text(encoding="utf-8")), source=str(shipped))
        except (OSError, ValueError, InvalidInput) as err:
            raise CorpusError(
                f"{shipped}: cannot read the shipped card set ({err}); this leakage "
                "installation is incomplete: reinstall it"
            ) from err
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise InvalidInput(f"{p}: cannot read the cards: {err}") from err
    return parse_cards(data, source=str(p))
