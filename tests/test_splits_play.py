"""Difficulty fed back to the runner: split files read back, SpyGame played from a split, the
difficulty recorded in each transcript and the report grouped by it without a splits file."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from leakage.cli import app
from leakage.errors import InvalidInput
from leakage.splits import (
    FileDescriber,
    PairTable,
    SplitPair,
    build_splits,
    draw_pairs,
    read_split,
    write_splits,
)
from tests.cli_support import invoke_leakage

# Card words (the associative players have tables for them), six pairs: two per tercile.
PAIRS = [("sun", "moon"), ("cat", "dog"), ("apple", "pear"),
         ("tennis", "golf"), ("rose", "tulip"), ("piano", "violin")]  # fmt: skip
DESCRIPTIONS = {
    "sun": "The star at the centre of our solar system. It gives light and heat by day.",
    "moon": "The natural satellite of the earth. It shines at night with reflected light.",
    "cat": "A small furry pet that purrs and hunts mice.",
    "dog": "A loyal furry pet that barks and fetches sticks.",
    "apple": "A round fruit with red or green skin that grows on trees.",
    "pear": "A sweet fruit with green skin, narrow at the top, that grows on trees.",
    "tennis": "A racket sport played over a net on a court.",
    "golf": "A sport in which a club drives a small ball into holes on a course.",
    "rose": "A flower with thorny stems and fragrant petals.",
    "tulip": "A spring flower growing from a bulb, with a cup-shaped bloom.",
    "piano": "A large keyboard instrument whose hammers strike strings.",
    "violin": "A string instrument held under the chin and played with a bow.",
}


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def split_dir(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real split of PAIRS: `build_splits` with a file describer and the bundled MiniLM."""
    tmp = tmp_path_factory.mktemp("split")
    desc = tmp / "descriptions.jsonl"
    desc.write_text(
        "".join(json.dumps({"word": w, "description": d}) + "\n" for w, d in DESCRIPTIONS.items())
    )
    table = PairTable.from_pairs(PAIRS, columns=("civilian", "spy"))
    result = build_splits(table, FileDescriber(desc), minilm)
    assert result.summary.counts == {"hard": 2, "medium": 2, "easy": 2, "unknown": 0}
    write_splits(result, tmp / "out")
    return tmp / "out"


def split_rows(split_dir: Path) -> dict[tuple[str, str], tuple[str, float]]:
    """(civilian, spy) -> (level, similarity), read with csv from all.csv."""
    with (split_dir / "all.csv").open(newline="") as fh:
        return {
            (r["civilian"], r["spy"]): (r["split"], float(r["similarity"]))
            for r in csv.DictReader(fh)
        }


# -- reading split files ------------------------------------------------------------------


def test_read_split_directory_single_files_and_all_csv(split_dir: Path):
    truth = split_rows(split_dir)
    pairs = read_split(split_dir)
    assert len(pairs) == 6
    assert {(p.civilian, p.spy): (p.difficulty, p.similarity) for p in pairs} == truth
    assert [p.difficulty for p in pairs] == ["hard"] * 2 + ["medium"] * 2 + ["easy"] * 2
    assert pairs[0].source == "hard.csv:2" and pairs[-1].source == "easy.csv:3"
    hard = read_split(split_dir, "hard")
    assert [p.difficulty for p in hard] == ["hard", "hard"] and hard == pairs[:2]
    assert read_split(split_dir / "medium.csv") == pairs[2:4]  # level from the file name
    assert read_split(split_dir / "medium.csv", "medium") == pairs[2:4]
    from_all = read_split(split_dir / "all.csv", "easy")  # level from the split column
    assert [(p.civilian, p.spy, p.similarity) for p in from_all] == [
        (p.civilian, p.spy, p.similarity) for p in pairs[4:]
    ]
    assert from_all[0].source == "all.csv:6"


def test_bad_split_files_are_errors_naming_file_line_and_field(tmp_path: Path):
    bad = write(
        tmp_path / "hard.csv",
        "civilian,spy,similarity\nsun,moon,0.9\n,dog,0.5\napple,pear,high\nrose,Rose,0.4\n"
        "piano,violin,1.7\ntennis,golf\n",
    )
    with pytest.raises(InvalidInput) as err:
        read_split(bad)
    lines = str(err.value).splitlines()
    assert lines == [
        f"{bad}: line 3: field 'civilian': empty word",
        f"{bad}: line 4: field 'similarity': expected a number in [-1, 1], got 'high'",
        f"{bad}: line 5: the pair is the same word twice ('rose')",
        f"{bad}: line 6: field 'similarity': expected a number in [-1, 1], got '1.7'",
        f"{bad}: line 7: expected 3 fields, got 2",
    ]
    level = write(tmp_path / "all.csv", "word_a,word_b,similarity,split\nsun,moon,0.9,tricky\n")
    with pytest.raises(InvalidInput, match=r"all\.csv: line 2: field 'split': expected one of "):
        read_split(level)
    no_sim = write(tmp_path / "easy.csv", "civilian,spy,score\nsun,moon,0.9\n")
    with pytest.raises(InvalidInput, match=r"easy\.csv: line 1: .*'similarity' column"):
        read_split(no_sim)
    unnamed = write(tmp_path / "mine.csv", "civilian,spy,similarity\nsun,moon,0.9\n")
    with pytest.raises(InvalidInput, match=r"mine\.csv: cannot tell the pairs' difficulty"):
        read_split(unnamed)
    only_hard = tmp_path / "only-hard"
    only_hard.mkdir()
    write(only_hard / "hard.csv", "civilian,spy,similarity\n")
    with pytest.raises(InvalidInput, match=r"no medium\.csv, easy\.csv here"):
        read_split(only_hard)
    with pytest.raises(InvalidInput, match="no hard pairs to play"):
        read_split(only_hard, "hard")
    with pytest.raises(InvalidInput, match="no such file or directory"):
        read_split(tmp_path / "missing")
    with pytest.raises(InvalidInput, match="unknown difficulty 'tricky'"):
        read_split(only_hard, "tricky")


def test_draw_pairs_plays_every_pair_once_per_pass_in_a_seeded_order():
    pairs = [SplitPair(f"a{i}", f"b{i}", "hard", 0.5, f"hard.csv:{i + 2}") for i in range(5)]
    drawn = draw_pairs(pairs, 12, seed=3)
    assert len(drawn) == 12
    assert sorted(drawn[:5], key=pairs.index) == pairs  # first pass: each pair once
    assert sorted(drawn[5:10], key=pairs.index) == pairs  # second pass too
    assert draw_pairs(pairs, 12, seed=3) == drawn  # seeded
    assert draw_pairs(pairs, 12, seed=4) != drawn


# -- play, batch and report ----------------------------------------------------------------


def invoke(*args: str) -> str:
    r = invoke_leakage(*args)
    assert r.exit_code == 0, r.output
    return r.output


def test_spygame_from_a_split_records_difficulty_and_the_report_groups_by_it(
    split_dir: Path, tmp_path: Path, default_index: Path
):
    games = tmp_path / "games.jsonl"
    play = ("play", "spygame", "--pairs-from", str(split_dir), "--seed", "5",
            "--index", str(default_index))  # fmt: skip
    invoke(*play, "--games", "7", "--out", str(games))
    records = [json.loads(x) for x in games.read_text().splitlines()]
    truth = split_rows(split_dir)
    played = []
    for r in records:
        pair = (r["words"]["civilian"], r["words"]["spy"])
        assert (r["meta"]["difficulty"], r["meta"]["pair_similarity"]) == truth[pair]
        assert r["meta"]["pair_source"].startswith(f"{r['meta']['difficulty']}.csv:")
        played.append(pair)
    assert sorted(played[:6]) == sorted(truth)  # every pair once before any twice
    invoke(*play, "--games", "7", "--out", str(tmp_path / "again.jsonl"))
    assert (tmp_path / "again.jsonl").read_text() == games.read_text()  # seeded replay

    hard = tmp_path / "hard.jsonl"
    invoke(*play, "--difficulty", "hard", "--games", "3", "--out", str(hard))
    hard_records = [json.loads(x) for x in hard.read_text().splitlines()]
    assert {r["meta"]["difficulty"] for r in hard_records} == {"hard"}

    # A game played from the cards has no difficulty: its group is "unknown".
    cards = tmp_path / "cards.jsonl"
    invoke("play", "spygame", "--games", "1", "--seed", "5", "--index", str(default_index),
           "--out", str(cards))  # fmt: skip
    assert "difficulty" not in json.loads(cards.read_text())["meta"]

    results = tmp_path / "results"
    invoke("batch", str(games), str(cards), "--out", str(results), "--workers", "0")
    invoke("report", str(results), "--by", "difficulty", "--out", str(tmp_path / "rep"),
           "--bootstrap", "20")  # fmt: skip
    with (tmp_path / "rep" / "leakage_by_group.csv").open(newline="") as fh:
        groups = {r["group"]: int(r["games"]) for r in csv.DictReader(fh)}
    levels = [r["meta"]["difficulty"] for r in records]
    assert groups == {
        "hard": levels.count("hard"),
        "medium": levels.count("medium"),
        "easy": levels.count("easy"),
        "unknown": 1,
    }

    # An explicit splits file wins over the recorded difficulty.
    relabel = write(
        tmp_path / "relabel.csv",
        "civilian,spy,difficulty\n" + "".join(f"{c},{s},easy\n" for c, s in truth),
    )
    invoke("report", str(results), "--by", "difficulty", "--out", str(tmp_path / "rep2"),
           "--bootstrap", "20", "--difficulty", str(relabel))  # fmt: skip
    with (tmp_path / "rep2" / "leakage_by_group.csv").open(newline="") as fh:
        groups = {r["group"]: int(r["games"]) for r in csv.DictReader(fh)}
    assert groups == {"easy": 7, "unknown": 1}


def test_play_pair_options_are_checked(tmp_path: Path, split_dir: Path):
    r = CliRunner().invoke(app, ["play", "spygame", "--difficulty", "hard"])
    assert r.exit_code == 2 and "--pairs-from" in r.output
    r = CliRunner().invoke(app, ["play", "chameleon", "--pairs-from", str(split_dir)])
    assert r.exit_code == 2 and "spygame" in r.output
    bad = write(tmp_path / "hard.csv", "civilian,spy,similarity\nsun,moon,x\n")
    p = subprocess.run(
        [sys.executable, "-m", "leakage", "play", "spygame", "--pairs-from", str(bad)],
        capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"},
    )  # fmt: skip
    assert p.returncode == 2, p.stderr
    assert f"{bad}: line 2: field 'similarity'" in p.stderr
