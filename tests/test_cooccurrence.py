"""Co-occurrence backend: estimator, local FTS5 index, corpus readers, backend."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leakage.backends.cooccurrence import (
    CooccurrenceBackend,
    LocalIndexSource,
    term_loglik,
)
from leakage.corpus import (
    build_index,
    clue_terms,
    file_documents,
    read_meta,
    wordnet_documents,
)
from leakage.errors import CorpusError

DOCS = [
    "tennis is played with a racket and a ball on a court",
    "badminton is played with rackets and a shuttlecock",
    "ice hockey players hit a puck with a stick",
    "field hockey is played on grass with a stick and a ball",
    "the racket was too noisy",
    "golf clubs and golf balls",
    "a triathlon combines swimming, cycling and running",
    "hockey ice rink",  # the words of "ice hockey" in the wrong order: not the phrase
]


@pytest.fixture()
def small_index(tmp_path: Path) -> Path:
    path = tmp_path / "small.sqlite"
    build_index(path, DOCS, sources=["test"])
    return path


def test_local_counts_are_exact(small_index: Path):
    with LocalIndexSource(small_index) as src:
        assert src.total() == len(DOCS)
        assert src.counts([("racket",), ("tennis",), ("racket", "tennis")]) == [3, 1, 1]
        # Porter stemming folds plurals: "rackets" and "racket" are one term.
        assert src.count(("rackets",)) == 3
        # Phrases are phrases: "ice hockey" is in one document, "hockey" in three.
        assert src.count(("ice hockey",)) == 1
        assert src.count(("hockey",)) == 3
        assert src.count(("stick", "ice hockey")) == 1
        # Pair counts do not depend on the order of the pair.
        assert src.count(("ball", "stick")) == src.count(("stick", "ball")) == 1
        assert src.count(("zeppelin",)) == 0
        assert src.count(("ball", "stick", "grass")) == 1
        assert src.uncached([("a",)]) == []


def test_index_records_what_it_holds(small_index: Path):
    meta = read_meta(small_index)
    assert meta["documents"] == len(DOCS) and meta["sources"] == ["test"]
    with pytest.raises(CorpusError, match="leakage corpus build"):
        read_meta(small_index.with_name("missing.sqlite"))


def test_failed_build_keeps_the_old_index(small_index: Path):
    def broken():
        yield "one document"
        raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        build_index(small_index, broken(), sources=["broken"])
    assert read_meta(small_index)["sources"] == ["test"]
    assert not list(small_index.parent.glob("*.building-*"))


def test_file_documents_txt_jsonl_gz(tmp_path: Path):
    (tmp_path / "a.txt").write_text("first doc\n\nsecond doc\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(
        json.dumps({"text": "third"}) + "\n" + json.dumps({"body": "x", "text": "fourth"}) + "\n",
        encoding="utf-8",
    )
    with gzip.open(tmp_path / "c.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write(json.dumps({"text": "fifth"}) + "\n")
    docs = list(file_documents([tmp_path / "a.txt", tmp_path / "b.jsonl", tmp_path / "c.jsonl.gz"]))
    assert docs == ["first doc", "second doc", "third", "fourth", "fifth"]


def test_file_documents_names_the_bad_line(tmp_path: Path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "ok"}\n{"nope": 1}\n', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.jsonl: line 2"):
        list(file_documents([bad]))


def test_wordnet_documents_are_real_wordnet():
    docs = list(wordnet_documents())
    assert len(docs) > 100_000  # WordNet 3.0 has 117,659 synsets
    racket = [d for d in docs if d.startswith("racket, racquet ;")]
    assert racket and "tennis" in racket[0]


@pytest.mark.parametrize(
    ("clue", "terms"),
    [
        ("racket", ("racket",)),
        ("Ice Hockey", ("ice", "hockey")),
        ("A sport played with an oval-shaped ball.", ("sport", "played", "oval-shaped", "ball")),
        ("It is what it is", ("it", "is", "what")),
        ("!!!", ()),
    ],
)
def test_clue_terms(clue, terms):
    assert clue_terms(clue) == terms


counts = st.integers(0, 10**9)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda t: st.integers(1, 16).flatmap(
            lambda k: st.tuples(
                st.lists(st.lists(counts, min_size=k, max_size=k), min_size=t, max_size=t),
                st.lists(counts, min_size=t, max_size=t),
                st.lists(counts, min_size=k, max_size=k),
            )
        )
    ),
    st.sampled_from(["conditional", "npmi", "ngd"]),
    st.floats(0.01, 1000),
)
def test_term_loglik_is_always_finite(args, estimator, beta):
    pair, term, cand = (np.array(a, dtype=float) for a in args)
    out = term_loglik(pair, term, cand, 1e6, estimator=estimator, beta=beta)
    assert out.shape == pair.shape
    assert np.all(np.isfinite(out))


def test_one_zero_does_not_veto_a_rare_candidate():
    # "Triathlon" occurs in no document; "Motor Racing" once. Neither breaks the estimate.
    pair = np.array([[5.0, 0.0, 0.0]])
    out = term_loglik(pair, np.array([20.0]), np.array([50.0, 0.0, 1.0]), 1000.0)
    assert np.all(np.isfinite(out))
    assert out[0, 0] > out[0, 1] and out[0, 0] > out[0, 2]


def test_clue_that_meets_no_candidate_is_uninformative():
    out = term_loglik(np.zeros((1, 3)), np.array([7.0]), np.array([1.0, 100.0, 1e4]), 1e5)
    assert np.all(out == 0.0)


def test_conditional_matches_the_published_estimator_when_beta_is_small():
    out = term_loglik(
        np.array([[10.0, 1.0]]), np.array([50.0]), np.array([100.0, 40.0]), 1e9, beta=1e-9
    )
    assert np.allclose(np.exp(out), [[10 / 100, 1 / 40]], rtol=1e-6)


def test_backend_on_a_small_index(small_index: Path):
    with LocalIndexSource(small_index) as src:
        backend = CooccurrenceBackend(src, beta=1.0)
        cands = ["Tennis", "Golf", "Ice Hockey", "Triathlon"]
        L = backend.loglik(["racket", "puck", "zeppelin", "A stick and a puck!"], cands)
        assert L.shape == (4, 4) and np.all(np.isfinite(L))
        assert np.argmax(L[0]) == 0
        assert np.argmax(L[1]) == 2
        assert np.all(L[2] == L[2, 0])  # a clue no candidate co-occurs with is flat
        assert np.argmax(L[3]) == 2
        assert backend.info()["count_source"]["documents"] == len(DOCS)
        assert ("racket", "tennis") in backend.queries(["racket"], ["Tennis"])


def test_backend_rejects_bad_settings(small_index: Path):
    with LocalIndexSource(small_index) as src:
        for kw in ({"estimator": "magic"}, {"pooling": "max"}, {"beta": 0}):
            with pytest.raises(ValueError):
                CooccurrenceBackend(src, **kw)


def test_default_index_sanity(cooccurrence):
    """The real default corpus puts the obvious word first for a few unambiguous clues."""
    sports = [
        "Soccer",
        "Tennis",
        "Golf",
        "Swimming",
        "Ice Hockey",
        "Cycling",
        "Boxing",
        "Triathlon",
        "Motor Racing",
    ]
    for clue, expected in [
        ("racket", "Tennis"),
        ("puck", "Ice Hockey"),
        ("swim", "Swimming"),
        ("wheel", "Cycling"),
    ]:
        L = cooccurrence.loglik([clue], sports)
        assert sports[int(np.argmax(L[0]))] == expected, clue


def test_backend_options_are_checked_by_name_and_type(leakage_home: Path):
    from leakage import create_backend
    from leakage.errors import InvalidInput

    with pytest.raises(InvalidInput, match=r"no option 'nope'; it takes: beta, budget"):
        create_backend("cooccurrence", nope=1)
    with pytest.raises(InvalidInput, match=r"option beta='ten': Input should be a valid number"):
        create_backend("cooccurrence", beta="ten")
    assert create_backend("cooccurrence", beta="10").info()["beta"] == 10.0  # "10" is 10
