"""Open vocabularies: the vector index (numpy, FAISS flat / HNSW / IVF), word lists, guessing,
and the ``vocab build`` / ``guess`` commands, with the real bundled MiniLM."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from leakage.errors import InvalidInput
from leakage.vocab import (
    AUTO_RULE,
    OpenVocabulary,
    ShortlistPosterior,
    VectorIndex,
    WordForms,
    build_vocabulary,
    choose_kind,
    default_vocab_dir,
    exact_top_k,
    load_words,
    merge_words,
    read_meta,
    reranked_guess,
    vocabulary_pool,
    wordfreq_words,
)

from .cli_support import run_leakage
from .numerics import reorder_tolerance

KINDS = ["numpy", "flat", "hnsw", "ivf"]


@pytest.fixture(scope="module")
def small(minilm):
    """A few hundred frequent words and their MiniLM vectors."""
    words = wordfreq_words(400)
    return words, minilm.encode(words)


@pytest.fixture(scope="module")
def vocab5k(minilm):
    """An open vocabulary of the ~5,000 most frequent English words (flat index)."""
    index = build_vocabulary(load_words("wordfreq:5000"), minilm, kind="flat")
    return OpenVocabulary(index, minilm)


def _queries(vectors: np.ndarray, n: int = 16) -> np.ndarray:
    rng = np.random.default_rng(7)
    q = vectors[rng.choice(len(vectors), n, replace=False)]
    q = q + rng.normal(scale=0.05, size=q.shape).astype(np.float32)
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


# -- the index -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_each_kind(kind: str, small, minilm, tmp_path: Path):
    words, vectors = small
    index = VectorIndex.build(words, vectors, model=minilm.name, kind=kind, source="wordfreq:400")
    assert index.kind == kind and len(index) == len(words)
    queries = _queries(vectors)
    before = index.search(queries, 10)

    index.save(tmp_path / "v")
    meta = json.loads((tmp_path / "v" / "meta.json").read_text())
    assert meta["format"] == "leakage.vocab/1"
    assert (meta["model"], meta["dimension"], meta["kind"], meta["count"], meta["source"]) == (
        minilm.name,
        384,
        kind,
        len(words),
        "wordfreq:400",
    )
    loaded = VectorIndex.load(tmp_path / "v", encoder=minilm)
    assert loaded.words == words and loaded.kind == kind
    assert np.allclose(loaded.vectors, index.vectors, atol=1e-6)
    after = loaded.search(queries, 10)
    assert np.array_equal(before[1], after[1])
    assert np.allclose(before[0], after[0], atol=1e-5)


def test_vectors_are_renormalised_to_unit_length(small, minilm):
    words, vectors = small
    index = VectorIndex.build(words, vectors * 3, model=minilm.name, kind="numpy")
    assert np.allclose(np.linalg.norm(index.vectors, axis=1), 1, atol=1e-6)


def test_flat_agrees_with_exact_numpy(small, minilm):
    words, vectors = small
    index = VectorIndex.build(words, vectors, model=minilm.name, kind="flat")
    queries = _queries(vectors)
    scores, rows = index.search(queries, 10)
    ref_scores, ref_rows = exact_top_k(index.vectors, queries, 10)
    assert rows.shape == (16, 10) and rows.dtype == np.int64
    # Each score is one fp32 sum of 384 products of unit vectors' components (Σ|x_i y_i| <= 1),
    # by FAISS's kernels on one side and numpy's BLAS on the other.
    atol = reorder_tolerance("float32", [minilm.dimension], 1.0)
    np.testing.assert_allclose(scores, ref_scores, rtol=0, atol=atol)
    assert np.all(np.diff(scores, axis=1) <= 0)  # best first
    # Both find the 10 best in order; two neighbours whose cosines are within rounding of
    # each other may come in either order.
    exact = queries.astype(np.float64) @ index.vectors.astype(np.float64).T
    best = -np.sort(-exact, axis=1)[:, :10]
    for found in (rows, ref_rows):
        assert all(len(set(r)) == 10 for r in found.tolist())
        np.testing.assert_allclose(np.take_along_axis(exact, found, 1), best, rtol=0, atol=atol)


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_approximate_kinds_find_the_exact_neighbours(kind: str, small, minilm):
    words, vectors = small
    index = VectorIndex.build(words, vectors, model=minilm.name, kind=kind)
    queries = _queries(vectors)
    _, rows = index.search(queries, 10)
    _, ref = exact_top_k(index.vectors, queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(rows, ref, strict=True)])
    assert recall >= 0.95


@pytest.mark.parametrize("kind", ["hnsw", "ivf"])
def test_builds_are_deterministic(kind: str, small, minilm):
    import faiss

    words, vectors = small
    a = VectorIndex.build(words, vectors, model=minilm.name, kind=kind)
    b = VectorIndex.build(words, vectors, model=minilm.name, kind=kind)
    assert np.array_equal(faiss.serialize_index(a._index), faiss.serialize_index(b._index))


def test_search_more_than_count_and_bad_shapes(small, minilm):
    words, vectors = small
    index = VectorIndex.build(words[:5], vectors[:5], model=minilm.name, kind="numpy")
    _, rows = index.search(vectors[0], 50)  # a single 1-D query is fine
    assert rows.shape == (1, 5) and rows[0, 0] == 0
    with pytest.raises(InvalidInput, match="shape"):
        index.search(np.zeros((1, 3), np.float32), 1)
    with pytest.raises(InvalidInput, match="twice"):
        VectorIndex.build(["a", "a"], vectors[:2], model=minilm.name)
    with pytest.raises(InvalidInput, match="2 words but 3 vectors"):
        VectorIndex.build(["a", "b"], vectors[:3], model=minilm.name)


def test_auto_rule_is_a_size_table():
    limits = [limit for limit, _ in AUTO_RULE]
    assert limits == sorted(limits)
    assert choose_kind(300) == AUTO_RULE[0][1]
    assert choose_kind(50_000) == "hnsw"
    assert choose_kind(500_000) == "numpy"
    assert choose_kind(10**12) == AUTO_RULE[-1][1]


def test_load_with_another_model_says_how_to_fix(small, minilm, tmp_path: Path):
    words, vectors = small
    VectorIndex.build(words, vectors, model="BAAI/bge-m3", kind="flat").save(tmp_path / "v")
    with pytest.raises(InvalidInput, match=r"built with the model 'BAAI/bge-m3'.*all-MiniLM"):
        VectorIndex.load(tmp_path / "v", encoder=minilm)
    with pytest.raises(InvalidInput, match="384-dimensional vectors but the encoder makes 1024"):
        VectorIndex.load(tmp_path / "v", dimension=1024)
    with pytest.raises(InvalidInput, match="built with"):
        OpenVocabulary(VectorIndex.load(tmp_path / "v"), minilm)


def test_load_a_folder_that_is_not_an_index(tmp_path: Path):
    with pytest.raises(InvalidInput, match="not a folder"):
        VectorIndex.load(tmp_path / "absent")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match=r"missing meta\.json, words\.txt, index\.faiss"):
        VectorIndex.load(tmp_path / "empty")
    bad = tmp_path / "bad"
    bad.mkdir()
    for name in ("meta.json", "words.txt", "index.faiss"):
        (bad / name).write_text("{}" if name == "meta.json" else "x")
    with pytest.raises(InvalidInput, match=r"meta.json: model: Field required"):
        read_meta(bad)


def test_save_refuses_to_replace_a_folder_that_is_not_an_index(small, minilm, tmp_path: Path):
    words, vectors = small
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    index = VectorIndex.build(words, vectors, model=minilm.name, kind="numpy")
    with pytest.raises(InvalidInput, match="not a vocabulary index"):
        index.save(tmp_path / "mine")
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["mine"]  # no temporary folder left


# -- word lists ----------------------------------------------------------------------------


def test_wordfreq_list_is_filtered():
    words = load_words("wordfreq:300")
    assert words.source == "wordfreq:300"
    assert 250 < len(words.words) < 300
    assert all(w.isalpha() and len(w) >= 2 for w in words.words)
    assert "the" in words.words and "a" not in words.words and "don't" not in words.words


def test_word_file(tmp_path: Path):
    path = tmp_path / "w.txt"
    path.write_text("# sports\nhockey\n  tennis \n\nhockey\nice rink\n", encoding="utf-8")
    words = load_words(str(path))
    assert words.words == ["hockey", "tennis", "ice rink"]
    assert words.source == f"file:{path.resolve()}"
    with pytest.raises(InvalidInput, match="no such file"):
        load_words(str(tmp_path / "absent.txt"))
    with pytest.raises(InvalidInput, match="wordfreq:N"):
        load_words("wordfreq:lots")


def test_merge_words_adds_candidates_once_ignoring_case():
    assert merge_words(["tennis", "golf"], ["Tennis", "Hockey", "hockey", " "]) == [
        "tennis",
        "golf",
        "Hockey",
    ]


def test_default_vocab_dir(tmp_path: Path):
    path = default_vocab_dir("sentence-transformers/all-MiniLM-L6-v2", home=tmp_path)
    assert path == tmp_path / "vocab" / "sentence-transformers-all-minilm-l6-v2-wordfreq-50000"


# -- open-vocabulary guessing --------------------------------------------------------------


def test_puck_makes_an_adversary_guess_hockey(vocab5k: OpenVocabulary):
    result = vocab5k.guess(["puck"], top=10, secret="hockey")
    words = [g.word for g in result.guesses]
    assert "hockey" in words
    assert vocab5k.index.position("puck") is None  # not among the 5,000: nothing excluded
    assert result.excluded == [] and result.ranked == len(vocab5k.index)
    probs = [g.probability for g in result.guesses]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1
    assert [g.rank for g in result.guesses] == list(range(1, 11))
    assert result.secret is not None and result.secret.in_vocabulary
    assert result.secret.rank == words.index("hockey") + 1


def test_clue_words_are_left_out_unless_kept(vocab5k: OpenVocabulary):
    left_out = vocab5k.guess(["Ice"], top=5, exclude=["hockey"], exclude_forms=False)
    assert left_out.excluded == ["ice", "hockey"]
    assert left_out.ranked == len(vocab5k.index) - 2
    assert not {"ice", "hockey"} & {g.word for g in left_out.guesses}
    kept = vocab5k.guess(["ice"], top=5, exclude_clues=False)
    assert kept.guesses[0].word == "ice" and kept.excluded == []


def test_probabilities_are_a_softmax_over_the_whole_vocabulary(vocab5k: OpenVocabulary):
    clues = ["ice", "winter"]
    result = vocab5k.guess(clues, top=5)
    sims = vocab5k.similarities(clues)
    keep = np.ones(len(sims), bool)
    keep[[vocab5k.index.position(c) for c in clues]] = False
    logits = sims[keep] / vocab5k.tau
    probs = np.exp(logits - logits.max())
    probs /= probs.sum()
    assert result.guesses[0].probability == pytest.approx(probs.max(), rel=1e-6)
    assert result.guesses[0].similarity == pytest.approx(sims[keep].max(), abs=1e-6)


def test_rank_of(vocab5k: OpenVocabulary):
    near = vocab5k.rank_of("hockey", ["puck"])
    far = vocab5k.rank_of("money", ["puck"])
    assert near.rank <= 10 and far.rank > 100 and far.of == near.of and far.in_vocabulary
    assert far.probability < near.probability
    # Case does not matter; the word itself is ranked even when it is a clue.
    assert vocab5k.rank_of("Hockey", ["puck"]).rank == near.rank
    assert vocab5k.rank_of("puck", ["puck"]).rank == 1
    # A word outside the vocabulary is ranked as if it were in it.
    outside = vocab5k.rank_of("zamboni", ["puck", "ice"])
    ranked = vocab5k.guess(["puck", "ice"], top=1).ranked
    assert not outside.in_vocabulary and outside.of == ranked + 1


def test_add_candidates_then_rank(small, minilm, tmp_path: Path):
    words, vectors = small
    for kind in ("flat", "numpy"):
        index = VectorIndex.build(words, vectors, model=minilm.name, kind=kind)
        vocab = OpenVocabulary(index, minilm)
        assert vocab.add_candidates(["Zamboni", "The", "zamboni", "Curling"]) == 2
        assert index.words[-2:] == ["Zamboni", "Curling"] and len(index) == len(words) + 2
        top = vocab.guess(["ice resurfacing machine"], top=3, secret="zamboni")
        assert top.secret is not None and top.secret.in_vocabulary
        index.save(tmp_path / kind)
        again = VectorIndex.load(tmp_path / kind, encoder=minilm)
        assert again.words == index.words and again.meta.count == len(words) + 2
        _, rows = again.search(minilm.encode(["Zamboni"]), 1)
        assert again.words[rows[0, 0]] == "Zamboni"


def test_every_kind_guesses_the_same(small, minilm):
    words, vectors = small
    seen = {}
    for kind in KINDS:
        index = VectorIndex.build(words, vectors, model=minilm.name, kind=kind)
        result = OpenVocabulary(index, minilm).guess(["football", "goal"], top=5)
        seen[kind] = [(g.word, round(g.probability, 6)) for g in result.guesses]
    assert all(v == seen["numpy"] for v in seen.values()), seen


def test_a_clues_own_forms_are_left_out(vocab5k: OpenVocabulary):
    forms = WordForms(
        [
            "racket",
            "rackets",
            "rack",
            "racking",
            "racketeering",
            "tennis",
            "net",
            "nets",
            "netting",
            "network",
            "work",
            "ethernet",
            "ether",
            "nettle",
            "planet",
            "ball",
            "basketball",
            "basket",
        ]
    )
    words = forms.words
    assert {words[r] for r in forms.of("racket")} == {"rackets", "rack", "racking", "racketeering"}
    # network = net + work, ethernet = ether + net; nettle and planet only share letters
    assert {words[r] for r in forms.of("Net")} == {"nets", "netting", "network", "ethernet"}
    assert {words[r] for r in forms.of("basketball")} == {"basket", "ball"}
    assert forms.of("tennis") == [] and forms.of("ice cream") == [] and forms.of("3d") == []
    # inflections: the same stem only (rule 1)
    assert {words[r] for r in forms.inflections("net")} == {"nets", "netting"}
    # In a guess: left out by default and listed apart from the clues; ranks stay exact.
    result = vocab5k.guess(["water"], top=20)
    assert "waters" in result.forms and "water" in result.excluded
    assert not {g.word for g in result.guesses} & set(result.forms)
    assert result.ranked == len(vocab5k.index) - 1 - len(result.forms)
    assert [g.rank for g in result.guesses] == list(range(1, 21))
    kept = vocab5k.guess(["water"], top=3, exclude_forms=False)
    assert kept.forms == [] and kept.ranked == len(vocab5k.index) - 1
    # The word ranked is never left out, even when it is a clue's form.
    assert vocab5k.rank_of("waters", ["water"]).of == result.ranked + 1


def test_the_words_a_sentence_clue_says_are_left_out(vocab5k: OpenVocabulary):
    words = ["rate", "value", "values", "valuation", "worth", "measure", "measured", "price"]
    forms = WordForms([*words, "a", "of", "something"])
    # by hand: a, measure (+ measured: stem "measur"), of, value (+ values: stem "valu"),
    # worth, something; valuation (stem "valuat"), rate and price are not said
    said = {forms.words[r] for r in forms.of("A measure of the value or worth of something.")}
    assert said == {"a", "measure", "measured", "of", "value", "values", "worth", "something"}
    # a word alone keeps the one-word rules; two words count as a sentence
    assert {forms.words[r] for r in forms.of("price rate")} == {"price", "rate"}
    assert forms.words_of("price") == []
    # In a guess: none of them is guessed, ranks stay exact, the target is never left out.
    clue = "A piece of furniture with doors and shelves for storing things"
    result = vocab5k.guess([clue], top=10)
    assert {"furniture", "doors", "door", "things", "thing", "store"} <= set(result.forms)
    assert not {g.word for g in result.guesses} & set(result.forms)
    assert result.ranked == int(vocab5k.ranked([clue]).sum())
    assert [g.rank for g in result.guesses] == list(range(1, 11))
    # "store" shares the stem of "storing" (not in this vocabulary)
    kept = vocab5k.rank_of("furniture", [clue])
    assert kept.in_vocabulary and kept.of == result.ranked + 1
    assert vocab5k.rank_of("furniture", [clue], exclude_forms=False).rank <= 3


def test_racket_net_guesses_tennis_once_reranked(vocab5k: OpenVocabulary, default_index):
    """Issue 39: the clues' forms left out and the shortlist re-ranked by the word fit's
    co-occurrence and embedding members put tennis in the top 5."""
    pool = vocabulary_pool(vocab5k, cooccurrence={"index": default_index})
    search = ShortlistPosterior(vocab5k, pool, shortlist=100)
    result = reranked_guess(search, ["racket", "net"], top=5, secret="tennis")
    assert result.secret is not None and result.secret.rank <= 5, result.guesses
    assert "tennis" in [g.word for g in result.guesses]
    assert result.reranked_by == "cooccurrence, embedding (shortlist of 100)"
    alone = vocab5k.guess(["racket", "net"], top=5, secret="tennis")
    assert alone.secret is not None and alone.secret.rank > result.secret.rank


def test_shortlist_posterior_keeps_the_mass_left_out(vocab5k: OpenVocabulary, default_index):
    pool = vocabulary_pool(vocab5k, cooccurrence={"index": default_index})
    search = ShortlistPosterior(vocab5k, pool, shortlist=50)
    clues = ["ice", "winter", "skate"]
    mask = search.mask(clues)
    steps = search.steps(clues, mask=mask)
    assert len(steps) == 3
    plain = ShortlistPosterior(vocab5k, None, shortlist=50).steps(clues, mask=mask)
    for post, base in zip(steps, plain, strict=True):
        p = np.exp(post.log_p)
        assert p.sum() == pytest.approx(1.0, abs=1e-9) and np.all(p[~mask] == 0)
        outside = np.ones(len(p), bool)
        outside[post.shortlist] = False
        # Words outside the shortlist keep their stage-1 probabilities; the shortlist keeps
        # its stage-1 mass, shared out again by the members.
        assert np.allclose(post.log_p[outside & mask], base.log_p[outside & mask])
        assert p[post.shortlist].sum() == pytest.approx(post.shortlist_mass, rel=1e-9)
        assert 0 < post.entropy_bits() < np.log2(mask.sum())
        top = post.top(3)
        assert post.rank(vocab5k.index.position(top[0][0])) == 1
    # Without a backend the posterior is the open vocabulary's softmax.
    g = vocab5k.guess(clues, top=1)
    row = vocab5k.index.position(g.guesses[0].word)
    assert plain[-1].probability(row) == pytest.approx(g.guesses[0].probability, rel=1e-6)


def test_bad_guess_input(vocab5k: OpenVocabulary):
    with pytest.raises(InvalidInput, match="at least one clue"):
        vocab5k.guess([])
    with pytest.raises(InvalidInput, match="at least one clue"):
        vocab5k.guess(["  "])


# -- the command line ----------------------------------------------------------------------


_run = run_leakage


def test_cli_build_then_guess(tmp_path: Path):
    home = tmp_path / "home"
    words = tmp_path / "sports.txt"
    words.write_text(
        "\n".join([*wordfreq_words(300), "hockey", "tennis", "golf", "skating", "ice"]), "utf-8"
    )
    p = _run("vocab", "build", "--words", str(words), "--kind", "hnsw", home=home)
    assert p.returncode == 0, p.stderr
    out = home / "vocab" / "sentence-transformers-all-minilm-l6-v2-sports"
    assert f"into {out}" in p.stderr
    assert read_meta(out).kind == "hnsw"

    p = _run(
        "guess",
        "puck",
        "ice",
        "--vocab",
        str(out),
        "--secret",
        "hockey",
        "-f",
        "json",
        "--rerank",
        "none",
        home=home,
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["vocabulary"]["kind"] == "hnsw" and doc["clues"] == ["puck", "ice"]
    assert doc["guesses"][0]["word"] == "hockey" and doc["secret"]["rank"] == 1
    assert "ice" in doc["excluded"]

    p = _run(
        "guess",
        "puck",
        "--vocab",
        str(out),
        "--top",
        "3",
        "--secret",
        "tennis",
        "--rerank",
        "none",
        home=home,
    )
    assert p.returncode == 0, p.stderr
    assert "hockey" in p.stdout and "secret 'tennis': rank" in p.stdout

    p = _run("guess", "puck", "--vocab", str(tmp_path / "nowhere"), home=home)
    assert p.returncode == 2 and "no vocabulary index here" in p.stderr
