"""WordNet's is-a relation as a feature of the answers reader (benchmarks/studies/answers.py
``--relations``, measured and not shipped): the rule worked by hand on a 3-word card with the
real WordNet 3.0. No ``../shared``."""

from __future__ import annotations

import pytest

from benchmarks.studies.answers import _phrase, _wn, isa_feature

CARD = ["Bass", "Violin", "Carrot"]


@pytest.fixture(scope="module")
def senses() -> list[tuple[int, object]]:
    wordnet = _wn()
    return [(j, s) for j, w in enumerate(CARD) for s in wordnet.synsets(w.casefold())]


def hits(attribute: str, senses: list[tuple[int, object]]) -> dict[str, float]:
    feature = isa_feature(attribute, CARD, senses)
    return {s.name(): v for (_, s), v in zip(senses, feature, strict=True)}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("attribute", "phrase"),
    [
        ("a type of fish", "fish"),
        ("a kind of musical instrument", "musical instrument"),
        ("an animal", "animal"),
        ("'Violin'", "violin"),
        ("something that can be held in your hand", None),  # more than 3 words
        ("man-made", "man-made"),  # a phrase, but no noun synset: no relation
    ],
)
def test_the_noun_phrase_an_attribute_names(attribute: str, phrase: str | None) -> None:
    assert _phrase(attribute) == phrase


def test_a_sense_is_a_fish_when_fish_is_in_its_hypernym_closure(senses) -> None:
    # By hand, WordNet 3.0: bass has 8 noun senses and 1 adjective; only bass.n.08
    # ("edible marine and freshwater spiny-finned fishes") has fish.n.01 among its hypernyms
    # (sea_bass.n.01 and freshwater_bass.n.01 are the fish as food: flesh -> food). Violin's
    # one sense and carrot's four are not fish; the adjective is neither hit nor miss.
    found = hits("a type of fish", senses)
    assert [k for k, v in found.items() if v > 0] == ["bass.n.08"]
    assert found["bass.s.01"] == 0.0
    assert sum(v < 0 for v in found.values()) == 8 - 1 + 1 + 4
    # a musical instrument: the bass viol (bass.n.07) and the violin
    found = hits("a musical instrument", senses)
    assert sorted(k for k, v in found.items() if v > 0) == ["bass.n.07", "violin.n.01"]


def test_an_attribute_that_names_a_card_word_is_identity(senses) -> None:
    found = hits("'Violin'", senses)
    assert found["violin.n.01"] == 1.0
    assert all(v == -1.0 for k, v in found.items() if k != "violin.n.01")  # adjective too
    assert set(hits("man-made", senses).values()) == {0.0}
