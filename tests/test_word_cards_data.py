"""The word cards of ``benchmarks/studies/word_cards.py``: several human one-word hints for one
secret on a 16-word card, built from the Codenames items. The builder on hand-made items runs
everywhere; the checks on the shared Codenames file skip without ``../shared/data``. No
models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.studies import word_cards as wc
from leakage.calibration import dev_frozen_split, extract_items
from leakage.transcripts import ChameleonTranscript


def _item(n: int, secret: str, hint: str, board: list[str]) -> ChameleonTranscript:
    return ChameleonTranscript.model_validate(
        {
            "id": f"codenames-guess-val-{n}",
            "game": "chameleon",
            "category": "Codenames board",
            "candidates": [secret, *board],
            "secret": secret,
            "players": [
                {"id": "p1", "role": "non-chameleon", "agent": "human"},
                {"id": "p2", "role": "chameleon", "agent": "none"},
            ],
            "turns": [{"player": "p1", "text": hint, "round": 1}],
        }
    )


def _hand_made() -> list[ChameleonTranscript]:
    words = [f"w{i}" for i in range(30)]
    return [
        # "bank": ids out of file order; a repeated hint and the secret as hint are skipped
        _item(20, "bank", "money", words[:10]),
        _item(3, "Bank", "river", words[5:15]),
        _item(7, "bank", "River", words[:4]),
        _item(9, "bank", "bank", words[20:]),
        _item(11, "bank", "loan", words[10:12]),
        _item(25, "bank", "vault", words[12:20]),
        # "moon": three items but two distinct hints; "sun": too few items
        _item(1, "moon", "night", words[:5]),
        _item(2, "moon", "night", words[:5]),
        _item(4, "moon", "tide", words[:5]),
        _item(5, "sun", "hot", words[:5]),
    ]


def test_word_cards_rule_on_hand_made_items() -> None:
    cards, left_out = wc.word_cards(_hand_made())
    assert [c.secret for c in cards] == ["Bank"]  # the spelling of its first item by id
    (card,) = cards
    assert card.clues == ("river", "loan", "money")
    assert card.sources == tuple(f"codenames-guess-val-{n}" for n in (3, 11, 20))
    assert left_out["secrets_with_fewer_distinct_hints"] == ["moon"]
    assert left_out["secrets_with_fewer_items"] == 1
    # distractors from the three used boards only (w0-w14), the secret once
    assert len(card.candidates) == wc.CARD_SIZE
    assert card.candidates.count("Bank") == 1
    assert set(card.candidates) - {"Bank"} <= {f"w{i}" for i in range(15)}
    assert card.distractor_pool == 15


def test_themed_items_put_hints_on_the_cards_that_hold_the_secret() -> None:
    """Each distinct hint alone (m = 1), then the first 2 and 3 hints, against every card
    holding the secret, in the card's spelling; secrets on no card are left out."""
    from benchmarks.studies.chameleon_cards import CardSource

    cards = [
        CardSource("a", "Money", ("Coin", "Bank", "Loan", "Safe"), "MIT"),
        CardSource("b", "Places", ("BANK", "Shop", "Park"), "MIT"),
        CardSource("c", "Sky", ("Star", "Cloud", "Planet"), "MIT"),
    ]
    games = _hand_made()
    items, sides = wc.themed_items(games, cards)
    on_a = [i for i in items if i.transcript.meta["card"] == "a"]
    assert [(i.m, [t.text for t in i.transcript.turns]) for i in on_a] == [
        (1, ["river"]),
        (1, ["loan"]),
        (1, ["money"]),
        (1, ["vault"]),
        (2, ["river", "loan"]),
        (3, ["river", "loan", "money"]),
    ]
    assert {i.transcript.secret for i in on_a} == {"Bank"}
    assert on_a[0].transcript.candidates == ["Coin", "Bank", "Loan", "Safe"]
    on_b = [i for i in items if i.transcript.meta["card"] == "b"]
    assert len(on_b) == len(on_a) and {i.transcript.secret for i in on_b} == {"BANK"}
    assert not [i for i in items if i.transcript.meta["card"] == "c"]  # moon, sun: no card
    assert {i.group for i in items} == {"themed:bank"}
    # the side follows the Codenames split of the hints' items
    _, frozen_ids = dev_frozen_split([g.id for g in games])
    for i in items:
        ids = i.transcript.meta["sources"]
        want = {"frozen" if x in set(frozen_ids) else "dev" for x in ids}
        assert sides[i.transcript.id] == (want.pop() if len(want) == 1 else "mixed")
    games_, skipped = extract_items([i.transcript for i in items])
    assert not skipped and all(len(g.clues) == i.m for g, i in zip(games_, items, strict=True))


def test_small_pool_gives_a_smaller_card() -> None:
    games = [_item(n, "cat", h, ["a", "b", "c"]) for n, h in enumerate(("fur", "meow", "pet"))]
    (card,), _ = wc.word_cards(games)
    assert sorted(card.candidates) == ["a", "b", "c", "cat"]


def test_items_are_prefixes_with_m_clues_and_the_truth() -> None:
    cards, _ = wc.word_cards(_hand_made())
    items = wc.build_items(cards)
    assert [i.m for i in items] == [1, 2, 3]
    games, skipped = extract_items([i.transcript for i in items])
    assert not skipped
    assert [g.clues for g in games] == [["river"], ["river", "loan"], ["river", "loan", "money"]]
    for g in games:
        assert g.truth == [g.candidates.index("Bank")] * len(g.clues)
        assert g.candidates == list(cards[0].candidates)


@pytest.fixture(scope="module")
def built(shared_data: Path) -> tuple[Any, Any, Any, Any]:
    from benchmarks.adversary import load_codenames

    path = shared_data / "codenames-guess-val" / "games.jsonl"
    games = load_codenames(path)
    return games, *wc.load(path)


def test_counts(built: tuple[Any, Any, Any, Any]) -> None:
    games, cards, items, counts = built
    assert counts["codenames_items"] == len(games) == 377
    assert counts["secrets"] == 96
    assert counts["secrets_used"] == len(cards) == 62
    assert counts["secrets_by_side"] == {"frozen": 3, "dev": 19, "mixed": 40}
    assert counts["items_by_m"] == {"m1": 62, "m2": 62, "m3": 62}
    assert len(items) == 3 * len(cards)
    assert counts["card_sizes"] == {"16": 62}


def test_cards_hold_the_secret_once_and_the_hints_in_id_order(
    built: tuple[Any, Any, Any, Any],
) -> None:
    games, cards, _, _ = built
    by_id = {g.id: g for g in games}
    for c in cards:
        assert len(c.candidates) == wc.CARD_SIZE
        assert len(set(c.candidates)) == wc.CARD_SIZE
        assert [w.casefold() for w in c.candidates].count(c.secret.casefold()) == 1
        used = [by_id[s] for s in c.sources]
        assert all(g.secret.casefold() == c.secret.casefold() for g in used)
        assert [wc.hint(g) for g in used] == list(c.clues)
        numbers = [int(s.rsplit("-", 1)[1]) for s in c.sources]
        assert numbers == sorted(numbers)
        # every item of this secret before the last used one gave a used or skipped hint
        folded = {h.casefold() for h in c.clues} | {c.secret.casefold()}
        earlier = [
            g
            for g in games
            if g.secret.casefold() == c.secret.casefold()
            and int(g.id.rsplit("-", 1)[1]) < numbers[-1]
        ]
        assert all(wc.hint(g).casefold() in folded for g in earlier)
        # distractors come from the boards of the used items
        boards = {w.casefold() for g in used for w in g.candidates}
        assert {w.casefold() for w in c.candidates} <= boards


def test_items_are_prefixes_and_scored_as_m_clues(built: tuple[Any, Any, Any, Any]) -> None:
    _, cards, items, _ = built
    games, skipped = extract_items([i.transcript for i in items])
    assert not skipped and len(games) == len(items)
    for n, c in enumerate(cards):
        trio = games[3 * n : 3 * n + 3]
        assert [i.m for i in items[3 * n : 3 * n + 3]] == [1, 2, 3]
        assert [g.clues for g in trio] == [list(c.clues[:m]) for m in (1, 2, 3)]
        for g in trio:
            assert g.candidates == list(c.candidates)
            assert g.truth == [g.candidates.index(c.secret)] * len(g.clues)


def test_split_rule(built: tuple[Any, Any, Any, Any]) -> None:
    games, cards, _, _ = built
    _, frozen_ids = dev_frozen_split([g.id for g in games])
    frozen = set(frozen_ids)
    for c in cards:
        sides = {s in frozen for s in c.sources}
        want = "mixed" if len(sides) == 2 else ("frozen" if sides == {True} else "dev")
        assert c.side == want


def test_deterministic(built: tuple[Any, Any, Any, Any]) -> None:
    games, cards, items, _ = built
    again, _ = wc.word_cards(list(reversed(games)))
    assert again == cards
    assert [i.transcript for i in wc.build_items(again)] == [i.transcript for i in items]
