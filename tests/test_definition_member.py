"""The definition member of ``benchmarks/studies/definition_member.py``: WordNet senses as it reads
them (the ``wn`` package the project depends on ships WordNet 3.0), the texts it embeds, the
sense chosen by the game's category (the bundled MiniLM), and the fits it measures on
hand-made rows. No ``../shared``."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.studies import definition_member as dm
from benchmarks.studies._wordnet import WordNet
from benchmarks.studies.pooling_variants import CardRows


@pytest.fixture(scope="module")
def wordnet() -> WordNet:
    return WordNet()


def test_sense_texts_hand_made() -> None:
    sense = dm.Sense(("lion",), ("big cat",), "large gregarious predatory feline of Africa")
    assert dm.sense_text("Lion", sense, "word_definition") == (
        "Lion: large gregarious predatory feline of Africa"
    )
    assert dm.sense_text("Lion", sense, "word_hypernym_definition") == (
        "Lion (a kind of big cat): large gregarious predatory feline of Africa"
    )
    assert dm.sense_text("Lion", sense, "definition") == sense.definition
    bare = dm.Sense(("x",), (), "a thing")
    assert dm.sense_text("X", bare, "word_hypernym_definition") == "X: a thing"
    with pytest.raises(ValueError, match="unknown definition text"):
        dm.sense_text("X", bare, "gloss")


def test_wordnet_senses(wordnet: WordNet) -> None:
    (uk, *_) = dm.senses(wordnet, "United Kingdom")
    # the gloss up to its first ";": "...British Isles; divided into England and ..."
    assert uk.definition == "a monarchy in northwestern Europe occupying most of the British Isles"
    assert uk.hypernyms == ("kingdom",)
    # nouns first: WordNet's first sense of "wine" is the drink, not the verb "drink wine"
    assert "fermented juice" in dm.senses(wordnet, "Wine")[0].definition
    assert all(s.hypernyms for s in dm.senses(wordnet, "wine"))  # every sense a noun
    # a plural is looked up without its "s" when only that is found; unknown words have none
    assert dm.senses(wordnet, "Ice-Hockey")[0].lemmas[0] == "ice hockey"
    assert dm.senses(wordnet, "zzqx") == []
    # a word with no noun sense: its other senses (adjective "green" has nouns too, so
    # "quickly", an adverb only)
    assert dm.senses(wordnet, "quickly") and not dm.senses(wordnet, "quickly")[0].hypernyms


def test_the_category_chooses_the_sense(wordnet: WordNet, minilm) -> None:
    backend = dm.DefinitionBackend(minilm, wordnet, texts="word_definition", tau=0.05)
    country = backend.candidate_texts(["Turkey"], "Countries")[0]
    bird = backend.candidate_texts(["Turkey"], "Birds")[0]
    assert country != bird
    assert "Asia" in country or "republic" in country, country
    assert "bird" in bird.casefold() or "fowl" in bird.casefold(), bird
    assert backend.candidate_texts(["zzqx"], "Birds") == ["zzqx"]  # not in WordNet: bare word
    info = backend.info()
    assert info["backend"] == "definition" and info["texts"] == "word_definition"
    rows = backend.loglik(["It has a monarchy."], ["United Kingdom", "France"], category="x")
    assert np.allclose(np.exp(rows).sum(axis=1), 1.0) and rows[0, 0] > rows[0, 1]
    with pytest.raises(ValueError, match="unknown definition text"):
        dm.DefinitionBackend(minilm, wordnet, texts="gloss")


def test_fits_and_measure_on_hand_made_rows() -> None:
    names = [*dm.MEMBERS, "word_definition"]
    assert list(dm.fits(names)) == [
        "four",
        "four+word_definition",
        "word_definition alone",
        "embedding+word_definition",
    ]
    # 40 items of 1 clue on 3 candidates; only the definition member (last) knows the
    # secret (candidate 0): the fits that hold it put the truth first on every item
    rng = np.random.default_rng(0)
    rows = []
    for _ in range(40):
        r = rng.normal(size=(len(names), 1, 3))
        r[-1, 0] = [2.0, -1.0, -1.0]
        rows.append(r - r.mean(axis=-1, keepdims=True))
    groups = [f"w{n % 10}" for n in range(40)]
    # the United Kingdom game: every member but the definition member leans to France
    uk_rows = rows[0].copy()
    uk_rows[:-1, 0] = [-0.1, 0.2, -0.1]
    data = CardRows(
        names=names,
        rows=rows,
        uk_rows=uk_rows,
        uk_candidates=["United Kingdom", "France", "Japan"],
        uk_secret="United Kingdom",
        uk_category="Countries",
        truth=np.zeros(40, dtype=np.int64),
        groups=groups,
        sides={g: ("dev" if int(g[1]) < 5 else "frozen") for g in groups},
        dev=[n for n in range(40) if n % 10 < 5],
        cells={
            "m1_dev": np.array([n for n in range(40) if n % 10 < 5]),
            "m1_frozen": np.array([n for n in range(40) if n % 10 >= 5]),
        },
        seconds={},
        logs="",
        cards_path="",
    )
    out = dm.measure(data)
    assert out["magic_uk_game"]["four+word_definition"]["rank"] == 1
    assert out["figures"]["word_definition alone"]["m1_frozen"]["top1"] == 1.0
    assert out["figures"]["four+word_definition"]["m1_frozen"]["minus_four"]["top1"] > 0.3
    assert "minus_four" not in out["figures"]["four"]["m1_frozen"]
    table = dm.subsets(data)
    assert len(table) == 31  # every non-empty subset of five members
    for row in table:
        knows = "word_definition" in row["members"]
        assert (row["uk_rank"] == 1) == knows, row
        assert set(row["frozen"]) == {"m1_frozen"}
        if knows:
            assert row["frozen"]["m1_frozen"]["top1"] == 1.0
