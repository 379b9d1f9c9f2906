"""``leakage batch``: inputs, the step table, reports, errors, manifest, workers, caches."""

from __future__ import annotations

import gzip
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leakage.batch import (
    COLUMNS,
    BatchJob,
    expand_inputs,
    iter_records,
    load_difficulty,
    run_batch,
    steps_schema,
    to_transcript,
)
from leakage.errors import InvalidInput
from leakage.reports import Report
from leakage.scoring import score_transcript
from leakage.transcripts import load_transcripts

from .batch_helpers import example_records, game_keys, many_games, read_steps, sorted_rows
from .conftest import EXAMPLES

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


# -- inputs -------------------------------------------------------------------------------


def test_inputs_files_directories_globs_gzip_and_parquet(tmp_path: Path):
    recs = example_records()
    (tmp_path / "sub").mkdir()
    many_games(tmp_path / "sub" / "a.jsonl.gz", 3, gz=True)
    (tmp_path / "b.json").write_text(json.dumps(recs[:2]), encoding="utf-8")
    (tmp_path / "c.json.gz").write_bytes(gzip.compress(json.dumps(recs[2]).encode()))
    (tmp_path / "notes.txt").write_text("not an input", encoding="utf-8")
    # Parquet with the JSON of each record in one column ...
    pq.write_table(pa.table({"record": [json.dumps(r) for r in recs[:2]]}), tmp_path / "d.parquet")
    # ... and with one column per field (nested), as a data-frame export would write it.
    nested = pa.Table.from_pylist([{k: v for k, v in r.items() if k != "meta"} for r in recs[3:5]])
    pq.write_table(nested, tmp_path / "sub" / "e.parquet")

    files = expand_inputs([tmp_path / "sub", str(tmp_path / "*.json*"), tmp_path / "d.parquet"])
    assert [f.name for f in files] == [
        "a.jsonl.gz",
        "e.parquet",
        "b.json",
        "c.json.gz",
        "d.parquet",
    ]
    records = list(iter_records(files))
    assert [(Path(r.source).name, r.record, r.label) for r in records] == [
        ("a.jsonl.gz", 0, "line 1"), ("a.jsonl.gz", 1, "line 2"), ("a.jsonl.gz", 2, "line 3"),
        ("e.parquet", 0, "row 0"), ("e.parquet", 1, "row 1"),
        ("b.json", 0, 0), ("b.json", 1, 1),
        ("c.json.gz", 0, 0),
        ("d.parquet", 0, "row 0"), ("d.parquet", 1, "row 1"),
    ]  # fmt: skip
    games = [to_transcript(r) for r in records]
    assert not [g for g in games if isinstance(g, InvalidInput)]
    assert [g.id for g in games[3:5]] == [recs[3]["id"], recs[4]["id"]]


def test_a_damaged_gzip_keeps_its_good_records_and_names_where_it_stopped(tmp_path: Path):
    whole = gzip.compress(many_games(tmp_path / "x.jsonl", 40).read_bytes())
    bad = tmp_path / "cut.jsonl.gz"
    bad.write_bytes(whole[: len(whole) * 2 // 3])
    records = list(iter_records([bad]))
    *good, last = records
    assert good and all(isinstance(r.payload, str) for r in good)
    assert isinstance(last.payload, InvalidInput)
    assert last.record == len(good)  # its own key: it never collides with a good record
    assert "cut.jsonl.gz" in str(last.payload)


def test_unreadable_files_are_error_lines_and_the_rest_of_the_run_is_scored(
    tmp_path: Path, leakage_home: Path
):
    whole = gzip.compress(many_games(tmp_path / "x.jsonl", 10).read_bytes())
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    damaged = tmp_path / "damaged.parquet"
    damaged.write_bytes(b"PAR1" + bytes(range(200)) + b"PAR1")
    foreign = tmp_path / "foreign.parquet"
    foreign.write_bytes(b"not parquet at all")
    seen: list[int] = []  # a progress callback: the files are counted first, as the CLI's are
    stats = run_batch(
        _job(tmp_path, [cut, damaged, foreign, EXAMPLES / "chameleon_sports.json"], workers=0),
        on_progress=lambda done, expected: seen.append(expected),
    )
    assert stats.stopped is None and stats.games >= 1
    errors = [json.loads(x) for x in (tmp_path / "out" / "errors.jsonl").read_text().splitlines()]
    assert {Path(e["source"]).name for e in errors} == {
        "cut.jsonl.gz", "damaged.parquet", "foreign.parquet"
    }  # fmt: skip
    assert any("truncated" in e["error"]["message"] for e in errors)
    parquet = [e for e in errors if e["source"].endswith(".parquet")]
    assert all("Parquet" in e["error"]["message"] for e in parquet)


def test_bad_records_are_named_by_file_and_line(tmp_path: Path):
    path = tmp_path / "mixed.jsonl"
    good = json.dumps(example_records()[0])
    path.write_text(f'{good}\n{{"format": "leakage.transcript/1", "game": \n\n{good}\n')
    items = [to_transcript(r) for r in iter_records([path.resolve()])]
    assert not isinstance(items[0], InvalidInput) and not isinstance(items[2], InvalidInput)
    assert isinstance(items[1], InvalidInput)
    assert "mixed.jsonl" in str(items[1]) and "line 2" in str(items[1])


# -- a run --------------------------------------------------------------------------------


def _job(tmp_path: Path, inputs: list[Path], **kw: object) -> BatchJob:
    return BatchJob(inputs=inputs, out=tmp_path / "out", **kw)  # type: ignore[arg-type]


def test_batch_writes_steps_reports_errors_and_manifest(
    tmp_path: Path, leakage_home: Path, cooccurrence
):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "leakage.transcript/1", "game": "chameleon", "id": "x"}\n')
    inputs = [EXAMPLES / "chameleon_batch.jsonl", EXAMPLES / "spygame_fruit.json", bad]
    stats = run_batch(_job(tmp_path, inputs, workers=0, chunk_size=2))
    out = tmp_path / "out"
    assert (stats.games, stats.failed) == (7, 1)

    table = read_steps(out)
    assert table.schema.equals(steps_schema())
    assert table.schema.names == [c[0] for c in COLUMNS]
    assert set(game_keys(table).values()) == {1} and len(game_keys(table)) == 7

    # The numbers are the library's own: score the same games directly and compare.
    games, _ = load_transcripts(inputs[:2])
    by_id = {g.id: g for g in games}
    rows = table.to_pylist()
    for g in games:
        rep = score_transcript(g, cooccurrence)
        mine = [r for r in rows if r["game_id"] == g.id]
        assert len(mine) == len(g.turns)
        for r, s in zip(mine, rep.steps, strict=True):
            assert r["text"] == s.text and r["counted"] == s.counted
            assert r["probabilities"] == pytest.approx(list(s.posterior.values()))
            assert r["entropy_bits"] == pytest.approx(s.entropy_bits)
            assert r["secret_rank"] == s.secret_rank
            assert r["candidates"] == rep.candidates
    fruits = [r for r in rows if r["game_id"] == "example-chameleon-fruits"]
    assert [r["clues_so_far"] for r in fruits] == list(np.cumsum([r["counted"] for r in fruits]))
    assert {r["model"] for r in fruits} == {"gpt-4o", "llama-3"}
    assert {r["game_model"] for r in fruits} == {"gpt-4o"}  # the chameleon's turn is not counted
    spy = [r for r in rows if r["game"] == "spygame"]
    fruit = by_id["example-spygame-mango-papaya"]
    assert spy and {r["pair"] for r in spy} == {f"{fruit.words.civilian}|{fruit.words.spy}"}  # type: ignore[union-attr]

    reports = [
        Report.model_validate_json(x) for x in (out / "reports.jsonl").read_text().splitlines()
    ]
    assert sorted(r.game_id for r in reports) == sorted(by_id)
    errors = [json.loads(x) for x in (out / "errors.jsonl").read_text().splitlines()]
    assert len(errors) == 1
    assert errors[0]["source"] == str(bad.resolve()) and errors[0]["label"] == "line 1"
    assert errors[0]["error"]["type"] == "invalid_transcript"
    assert any(p["field"] == "players" for p in errors[0]["error"]["problems"])

    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["totals"] == {"games": 7, "failed": 1}
    assert [f["path"] for f in manifest["inputs"]["files"]] == [str(p.resolve()) for p in inputs]
    assert manifest["backend"] == "cooccurrence"
    assert manifest["backend_info"]["count_source"]["index"] == str(
        leakage_home / "corpus" / "default.sqlite"
    )
    assert manifest["corpus"]["version"] == manifest["backend_info"]["count_source"]["version"]
    assert manifest["code_version"]["leakage"] and manifest["code_version"]["packages"]["pyarrow"]
    assert manifest["steps_columns"] == table.schema.names


def test_two_worker_processes_write_what_one_process_writes(tmp_path: Path, leakage_home: Path):
    src = many_games(tmp_path / "games.jsonl", 120)
    one = run_batch(BatchJob(inputs=[src], out=tmp_path / "one", workers=0))
    two = run_batch(BatchJob(inputs=[src], out=tmp_path / "two", workers=2, chunk_size=7))
    assert one.games == two.games == 120
    # Worker processes scored (one or both: the parent parses and writes, and when it is
    # the slower side the first worker to start may take every chunk).
    assert 1 <= len(two.worker_peak_rss_mb) <= 2 and os.getpid() not in two.worker_peak_rss_mb
    assert sorted_rows(read_steps(tmp_path / "one")) == sorted_rows(read_steps(tmp_path / "two"))
    lines = (tmp_path / "two" / "reports.jsonl").read_text().splitlines()
    assert len(lines) == len(set(lines)) == 120


def test_an_existing_result_is_not_overwritten_and_resume_checks_the_job(
    tmp_path: Path, leakage_home: Path
):
    src = many_games(tmp_path / "g.jsonl", 10)
    run_batch(_job(tmp_path, [src], workers=0))
    with pytest.raises(InvalidInput, match="--resume"):
        run_batch(_job(tmp_path, [src], workers=0))
    with pytest.raises(InvalidInput, match=r"different job.*backend_options"):
        run_batch(_job(tmp_path, [src], workers=0, resume=True, backend_options={"beta": 10}))
    again = run_batch(_job(tmp_path, [src], workers=0, resume=True))
    assert (again.games, again.skipped) == (0, 10)
    many_games(src, 11)  # the input changed under the result
    with pytest.raises(InvalidInput, match="input files changed"):
        run_batch(_job(tmp_path, [src], workers=0, resume=True))


def test_a_backend_that_cannot_start_stops_the_run_with_its_error(tmp_path: Path):
    from leakage.errors import UnknownBackend

    src = many_games(tmp_path / "g.jsonl", 5)
    with pytest.raises(UnknownBackend):
        run_batch(_job(tmp_path, [src], workers=1, backend="no-such-backend"))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"] == "stopped" and manifest["totals"]["games"] == 0


class _DownOnKoala:
    """A backend whose count source fails on the games whose clues say "koala"."""

    name = "flat"

    def info(self) -> dict[str, object]:
        return {"backend": self.name}

    def loglik(self, clues, candidates, *, category=None):  # type: ignore[no-untyped-def]
        from leakage.errors import CountSourceError

        if "koala" in clues:
            raise CountSourceError("the count source is down")
        return np.full((len(clues), len(candidates)), -1.0)


@pytest.mark.parametrize("record_errors", [False, True])
def test_a_backend_error_on_one_game_stops_the_run_or_fails_that_game_alone(
    tmp_path: Path, record_errors: bool
):
    """``leakage batch`` (record_errors=False) stops at the error, keeping what it committed
    (resumable); the service's jobs (True) give that game its error line and go on."""
    from leakage.errors import CountSourceError

    src = many_games(tmp_path / "g.jsonl", 12)  # records 2 and 8 say "koala"
    job = _job(
        tmp_path, [src], workers=0, chunk_size=4, checkpoint_games=1,
        backend_object=_DownOnKoala(), record_errors=record_errors,
    )  # fmt: skip
    if not record_errors:
        with pytest.raises(CountSourceError, match="the count source is down"):
            run_batch(job)
        assert not list((tmp_path / "out" / "steps").glob("part-*"))  # chunk 0-3, the first
        return
    stats = run_batch(job)
    assert (stats.games, stats.failed, stats.stopped) == (10, 2, None)
    errors = [json.loads(x) for x in (tmp_path / "out" / "errors.jsonl").read_text().splitlines()]
    assert [(e["record"], e["error"]["type"], e["error"]["message"]) for e in errors] == [
        (r, "count_source_failed", "the count source is down") for r in (2, 8)
    ]
    assert len(game_keys(read_steps(tmp_path / "out"))) == 10


def test_difficulty_from_a_splits_file(tmp_path: Path, leakage_home: Path):
    splits = tmp_path / "splits"
    splits.mkdir()
    (splits / "hard.csv").write_text("word_a,word_b,similarity\nsun,moon,0.9\n")
    (splits / "easy.csv").write_text("word_a,word_b,similarity\nPAPAYA,mango,0.5\n")
    table = load_difficulty(splits)
    assert table == {"moon|sun": "hard", "mango|papaya": "easy"}
    game = json.loads((EXAMPLES / "spygame_fruit.json").read_text())
    assert game["meta"]["difficulty"] == "hard"  # the splits file wins over meta ...
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "with_meta.json").write_text(json.dumps(game))
    game["id"] += "-2"
    del game["meta"]["difficulty"]  # ... and decides without it
    (tmp_path / "in" / "without.json").write_text(json.dumps(game))
    game["id"] += "-3"
    game["meta"]["difficulty"] = "medium"  # a pair the file lacks keeps its meta.difficulty
    game["words"] = {"civilian": "kiwi", "spy": "lime"}
    for p in game["players"]:
        p["word"] = "lime" if p["role"] == "spy" else "kiwi"
    (tmp_path / "in" / "other_pair.json").write_text(json.dumps(game))
    run_batch(_job(tmp_path, [tmp_path / "in"], workers=0, difficulty=splits))
    rows = read_steps(tmp_path / "out").to_pylist()
    assert {(r["game_id"], r["difficulty"]) for r in rows} == {
        (game["id"][:-4], "easy"),
        (game["id"][:-2], "easy"),
        (game["id"], "medium"),
    }


# -- the command --------------------------------------------------------------------------


def _cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "leakage", *args],
        capture_output=True, text=True, env=env, timeout=180,
    )  # fmt: skip


def test_cli_batch_then_report(tmp_path: Path, leakage_home: Path):
    bad = EXAMPLES / "bad" / "mixed.jsonl"
    proc = _cli(
        "batch", str(EXAMPLES), str(bad), "--out", str(tmp_path / "res"), "--workers", "0",
        "-O", "beta=10", "--no-progress", home=leakage_home,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr  # bad records: exit 2, the rest scored
    assert "bad record" in proc.stderr
    manifest = json.loads((tmp_path / "res" / "manifest.json").read_text())
    assert manifest["backend_options"] == {"beta": 10}
    assert manifest["backend_info"]["beta"] == 10
    assert manifest["totals"]["games"] >= 9
    proc = _cli("report", str(tmp_path / "res"), "--by", "role", "--out", str(tmp_path / "rep"),
                "--bootstrap", "50", home=leakage_home)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "rep" / "report.html").stat().st_size > 10_000


# -- shared caches ------------------------------------------------------------------------


def _hammer_caches(folder: str, seed: int) -> int:
    from leakage.backends.cooccurrence._cache import CountCache
    from leakage.encoders import CachedEncoder

    class Ones:
        name, dimension = "ones", 4

        def encode_batch(self, texts: list[str]) -> np.ndarray:
            return np.ones((len(texts), 4), np.float32)

    counts = CountCache(Path(folder) / "counts.sqlite")
    vectors = CachedEncoder(Ones(), cache_path=Path(folder) / "vectors.sqlite")
    for i in range(60):
        counts.put_many("s", "e", [(f"{seed}-{i}-{j}", j, None) for j in range(20)])
        assert len(counts.get_many("s", "e", [f"{seed}-{i}-{j}" for j in range(20)])) == 20
        vectors.encode([f"{seed % 2}-{i}-{j}" for j in range(10)])
    vectors.close()
    return seed


def test_the_on_disk_caches_take_concurrent_writers_from_spawned_workers(tmp_path: Path):
    """Batch workers share $LEAKAGE_HOME's SQLite caches: new files, four writers at once."""
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        assert sorted(pool.starmap(_hammer_caches, [(str(tmp_path), s) for s in range(4)])) == [
            0, 1, 2, 3,
        ]  # fmt: skip
    import sqlite3

    with sqlite3.connect(tmp_path / "counts.sqlite") as db:
        assert db.execute("SELECT count(*) FROM counts").fetchone()[0] == 4 * 60 * 20
    with sqlite3.connect(tmp_path / "vectors.sqlite") as db:
        assert db.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2 * 60 * 10
    shutil.rmtree(tmp_path)


def test_an_unknown_input_format_or_an_unreadable_difficulty_file_stops_before_the_run(
    tmp_path: Path,
):
    game = EXAMPLES / "chameleon_sports.json"
    with pytest.raises(InvalidInput, match="unknown input format 'zzz'; choose one of auto"):
        run_batch(_job(tmp_path, [game], input_format="zzz", workers=0))
    binary = tmp_path / "levels.csv"
    binary.write_bytes(bytes(range(128, 256)))
    with pytest.raises(InvalidInput, match=r"levels\.csv: not UTF-8 text"):
        run_batch(_job(tmp_path, [game], difficulty=binary, workers=0))
    assert not (tmp_path / "out").exists()
