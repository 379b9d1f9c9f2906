"""Issue 30's dev data (``benchmarks/studies/chameleon_cards.py``): the card item builder on a
hand-made Undercover game, the frozen split by secret word, and MAgIC's printed United Kingdom
game as a valid transcript. The shared-data part skips without ``../shared/data``."""

from __future__ import annotations

import pytest

from benchmarks.common import SHARED_DATA
from benchmarks.studies import chameleon_cards as cc
from leakage.calibration import extract_items, split_side
from leakage.transcripts import ChameleonTranscript, SpyGameTranscript

CARDS = [
    cc.CardSource("test", "Sports", ("Football", "Rugby", "Tennis", "Ice Hockey"), "MIT"),
    cc.CardSource("test", "Ball games", ("Tennis", "Football", "Golf"), "MIT"),
    cc.CardSource("test", "Fruits", ("Apple", "Pear", "Plum"), "MIT"),
]


def _game() -> SpyGameTranscript:
    """Four civilians (football), two spies (basketball); one civilian names the word."""
    players = [
        {"id": str(i), "role": "spy" if i in (2, 5) else "civilian", "agent": f"m{i}"}
        for i in range(1, 7)
    ]
    turns = [
        ("1", "A sport played with an oval ball.", 1),
        ("2", "Players dribble and shoot at a hoop.", 1),
        ("3", "Football fans fill the stadium.", 1),  # names the secret: left out
        ("4", "Eleven players on each side.", 1),
        ("5", "A team sport played indoors.", 1),
        ("6", "Goals are scored with the feet.", 1),
        ("1", "Played on a grass pitch.", 2),
    ]
    return SpyGameTranscript.model_validate(
        {
            "id": "g1",
            "game": "spygame",
            "words": {"civilian": "football", "spy": "basketball"},
            "players": players,
            "turns": [{"player": p, "text": t, "round": r} for p, t, r in turns],
        }
    )


def test_card_items_use_civilian_statements_against_each_card_holding_the_word() -> None:
    items = cc.card_items([_game()], CARDS)
    # two cards hold "football" (case folded), three prefixes each; the fruit card none
    assert [(i.card.category, i.m) for i in items if i.card] == [
        ("Sports", 1),
        ("Sports", 2),
        ("Sports", 3),
        ("Ball games", 1),
        ("Ball games", 2),
        ("Ball games", 3),
    ]
    m3 = items[2].transcript
    assert isinstance(m3, ChameleonTranscript)
    assert m3.secret == "Football"  # the card's spelling
    assert m3.candidates == ["Football", "Rugby", "Tennis", "Ice Hockey"]
    # civilians only, in the order spoken, the one naming the word left out
    assert [t.text for t in m3.turns] == [
        "A sport played with an oval ball.",
        "Eleven players on each side.",
        "Goals are scored with the feet.",
    ]
    assert all(i.group == "card-word:football" for i in items)
    assert len({i.transcript.id for i in items}) == len(items)
    # every item is scored as m counted clues with the secret as truth
    games, skipped = extract_items([i.transcript for i in items])
    assert not skipped
    assert [len(g.clues) for g in games] == [1, 2, 3, 1, 2, 3]
    assert all(g.truth == [g.candidates.index("Football")] * len(g.clues) for g in games)


def test_pair_items_and_too_few_statements() -> None:
    game = _game()
    pair = cc.pair_items([game])
    assert [i.transcript.candidates for i in pair] == [["football", "basketball"]] * 3
    # four civilian statements do not name the word: m = 4 is built, m = 5 is not
    assert [i.m for i in cc.card_items([game], CARDS[:1], clues=(4, 5))] == [4]


def test_names_word() -> None:
    assert cc.names_word("Footballs are round.", "football")
    assert cc.names_word("I like ice  hockey", "Ice Hockey")
    assert not cc.names_word("A footballer's boots.", "football")


def test_split_is_by_secret_word() -> None:
    items = cc.card_items([_game()], CARDS) + cc.pair_items([_game()])
    sides = cc.split(items)
    assert sides == {"card-word:football": split_side("card-word:football")}


def test_magic_fixture_is_a_valid_transcript() -> None:
    t = cc.load_fixture()
    assert isinstance(t, ChameleonTranscript)
    assert t.secret == "United Kingdom"
    assert len(t.candidates) == 8
    assert [x.text for x in t.turns] == ["It's in Europe.", "It's an island.", "It has a monarchy."]
    games, skipped = extract_items([t])
    assert not skipped and len(games[0].clues) == 3


def test_magic_candidates_are_the_shared_countries_card() -> None:
    path = SHARED_DATA / "chameleon-cards" / "cards.json"
    if not path.exists():
        pytest.skip(f"needs the shared reference data at {path}")
    cards = [c for c in cc.load_cards(path) if "chatarena" in c.source]
    countries = [c for c in cards if c.category == "Countries"]
    assert len(countries) == 1
    assert list(countries[0].words) == cc.load_fixture().candidates
