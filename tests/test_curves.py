"""Leakage curves and the report: bootstrap intervals, curve values, files, the HTML page."""

from __future__ import annotations

import csv
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage.batch import steps_schema
from leakage.curves import bootstrap_mean, bootstrap_ratio, build_report, build_site
from leakage.curves._figures import MAX_BANDS
from leakage.errors import InvalidInput

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


# -- bootstrap ----------------------------------------------------------------------------


def test_bootstrap_interval_matches_the_normal_theory_width():
    rng = np.random.default_rng(1)
    x = rng.normal(2.0, 1.0, size=(400, 1))
    est = bootstrap_mean(x, replicates=2000, seed=3)
    assert est.value[0] == pytest.approx(x.mean())
    assert est.low[0] < x.mean() < est.high[0]
    width = est.high[0] - est.low[0]
    assert width == pytest.approx(2 * 1.96 * x.std() / math.sqrt(400), rel=0.12)
    again = bootstrap_mean(x, replicates=2000, seed=3)
    assert (again.low[0], again.high[0]) == (est.low[0], est.high[0])  # seeded


def test_bootstrap_ratio_is_a_ratio_of_sums_and_missing_values_are_left_out():
    num = np.array([[3.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    den = np.array([[3.0, 1.0], [1.0, 0.0], [2.0, 0.0]])
    est = bootstrap_ratio(num, den, replicates=300)
    assert est.value.tolist() == [4 / 6, 1.0]
    assert 0.0 <= est.low[0] <= est.value[0] <= est.high[0] <= 1.0
    with_nan = bootstrap_mean(np.array([[1.0, np.nan], [3.0, np.nan]]), replicates=50)
    assert with_nan.value[0] == 2.0 and np.isnan(with_nan.value[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an all-missing figure is quietly NaN
        assert np.isnan(bootstrap_mean(np.full((3, 1), np.nan), replicates=20).low[0])
    none = bootstrap_mean(np.ones((4, 2)), replicates=0)
    assert none.value.tolist() == [1.0, 1.0] and np.isnan(none.low).all()


# -- curves on a table whose numbers are known ---------------------------------------------


def _game(
    record: int, model: str, entropies: list[float], ranks: list[int], gains: list[float]
) -> list[dict[str, Any]]:
    k = 16
    rows = []
    for i, (h, r, g) in enumerate(zip(entropies, ranks, gains, strict=True)):
        rows.append(
            {
                "source": "/data/games.jsonl", "record": record, "game_id": f"g{record}",
                "game": "chameleon", "backend": "fake", "step": i, "clues_so_far": i + 1,
                "player": f"p{i}", "role": "non-chameleon", "model": model,
                "game_model": model, "round": 1, "text": f"<clue {record}-{i}>",
                "counted": True, "candidates": [f"w{j}" for j in range(k)],
                "probabilities": [1.0 / k] * k, "entropy_bits": h,
                "prior_entropy_bits": 4.0, "information_gain_bits": g, "kl_bits": 0.0,
                "secret": "w0", "secret_probability": 0.5, "secret_rank": r,
                "speaker_word": None, "category": "Things", "matchup": None,
                "difficulty": None, "pair": None,
            }
        )  # fmt: skip
    return rows


@pytest.fixture
def table(tmp_path: Path) -> Path:
    rows = (
        _game(0, "a", [3.0, 2.0, 1.0], [2, 1, 1], [1.0, 1.0, 1.0])
        + _game(1, "a", [2.0, 1.0], [4, 3], [2.0, 1.0])
        + _game(2, "b", [4.0, 3.5, 3.0], [9, 6, 5], [0.0, 0.5, 0.5])
    )
    out = tmp_path / "results"
    (out / "steps").mkdir(parents=True)
    half = len(rows) // 2  # two parts, as a batch run writes them
    for i, part in enumerate((rows[:half], rows[half:])):
        pq.write_table(
            pa.Table.from_pylist(part, schema=steps_schema()), out / "steps" / f"part-{i}.parquet"
        )
    return out


def _curve(rows: list[dict[str, Any]], group: str, metric: str) -> dict[int, tuple[float, int]]:
    return {
        r["m"]: (r["value"], r["games"])
        for r in rows
        if r["group"] == group and r["metric"] == metric
    }


def test_curves_by_model(table: Path, tmp_path: Path):
    rep = build_site(table, tmp_path / "rep", by="model", replicates=200, top=2)
    assert rep.games == 3
    assert _curve(rep.curves, "a", "entropy_bits") == {
        0: (4.0, 2), 1: (2.5, 2), 2: (1.5, 2), 3: (1.0, 1),
    }  # fmt: skip
    assert _curve(rep.curves, "a", "top1") == {1: (0.0, 2), 2: (0.5, 2), 3: (1.0, 1)}
    assert _curve(rep.curves, "a", "top3") == {1: (0.5, 2), 2: (1.0, 2), 3: (1.0, 1)}
    assert _curve(rep.curves, "b", "top5") == {1: (0.0, 1), 2: (0.0, 1), 3: (1.0, 1)}
    for r in rep.curves:
        assert r["low"] <= r["value"] + 1e-12 and r["value"] <= r["high"] + 1e-12
    by = {r["group"]: r for r in rep.by_group}
    assert by["a"]["mean_gain_bits"] == pytest.approx(6.0 / 5)  # per clue, not per game
    assert by["a"]["top1_share"] == pytest.approx(2 / 5)
    assert (by["a"]["clues"], by["a"]["games"]) == (5, 2)

    # The CSVs hold exactly the plotted numbers.
    with (tmp_path / "rep" / "curves.csv").open() as fh:
        written = list(csv.DictReader(fh))
    assert len(written) == len(rep.curves)
    assert [float(r["value"]) for r in written] == [r["value"] for r in rep.curves]
    with (tmp_path / "rep" / "most_revealing.csv").open() as fh:
        most = list(csv.DictReader(fh))
    assert [float(r["information_gain_bits"]) for r in most] == [2.0, 1.0]
    with (tmp_path / "rep" / "least_revealing.csv").open() as fh:
        assert float(next(csv.DictReader(fh))["information_gain_bits"]) == 0.0


def test_a_clue_is_listed_once_per_secret_at_its_most_extreme(tmp_path: Path):
    rows = []
    for record, (text, secret, gain) in enumerate(
        [
            ("igloo", "w0", 3.0),
            (" Igloo", "w0", 2.5),  # the same clue for the same secret: not listed again
            ("igloo", "w1", 2.0),  # the same clue for another secret: listed
            ("snow", "w0", 1.0),
            ("IGLOO ", "w0", -1.0),  # least revealing: its own most extreme occurrence
            ("ice", "w0", 0.5),
        ]
    ):
        (row,) = _game(record, "a", [1.0], [1], [gain])
        row.update(text=text, secret=secret)
        rows.append(row)
    (tmp_path / "steps").mkdir()
    pq.write_table(
        pa.Table.from_pylist(rows, schema=steps_schema()), tmp_path / "steps" / "p.parquet"
    )
    rep = build_report(tmp_path, tmp_path / "rep", replicates=10, top=3)
    with (tmp_path / "rep" / "most_revealing.csv").open() as fh:
        most = [
            (r["text"], r["secret"], float(r["information_gain_bits"])) for r in csv.DictReader(fh)
        ]
    assert most == [("igloo", "w0", 3.0), ("igloo", "w1", 2.0), ("snow", "w0", 1.0)]
    with (tmp_path / "rep" / "least_revealing.csv").open() as fh:
        least = [(r["text"], float(r["information_gain_bits"])) for r in csv.DictReader(fh)]
    assert least == [("IGLOO ", -1.0), ("ice", 0.5), ("snow", 1.0)]
    assert rep.games == 6


def test_report_files_and_a_self_contained_page(table: Path, tmp_path: Path):
    out = tmp_path / "rep"
    rep = build_report(table, out, by="role", replicates=100)
    for stem in ("leaderboard", "entropy", "topk", "info_gain", "leakage_by_group", "plane"):
        assert (out / f"{stem}.png").read_bytes()[:4] == b"\x89PNG"
        assert "<svg" in (out / f"{stem}.svg").read_text()
    page = (out / "report.html").read_text()
    assert page.count("<svg") == 6
    assert "<script" not in page and "<link" not in page and 'src="http' not in page
    assert "&lt;clue 1-0&gt;" in page and "<clue" not in page  # clue text is escaped
    assert "log2 16" in page  # the prior is named
    # whose figures they are: the step table's backend, not measured on the reference set
    assert "Leakage is a lower bound set by the reader that computed it, fake;" in page
    assert "not measured on the project&#x27;s reference set" in page
    # the page says when its curves leave the bands out (the CSVs keep every interval)
    assert f"as bands when at most {MAX_BANDS} groups are drawn" in page
    assert {p.name for p in rep.files} >= {"report.html", "curves.csv", "info_gain.csv"}


def test_difficulty_can_be_joined_at_report_time(tmp_path: Path):
    rows = _game(0, "a", [0.5], [1], [0.5]) + _game(1, "a", [0.9], [1], [0.1])
    for r in rows:
        r.update(game="spygame", pair="Sun|Moon" if r["record"] == 0 else "cat|dog")
    (tmp_path / "steps").mkdir()
    pq.write_table(
        pa.Table.from_pylist(rows, schema=steps_schema()), tmp_path / "steps" / "p.parquet"
    )
    rep = build_report(
        tmp_path, tmp_path / "rep", by="difficulty", replicates=10, difficulty={"moon|sun": "hard"}
    )
    assert _curve(rep.curves, "hard", "entropy_bits")[1] == (0.5, 1)
    assert _curve(rep.curves, "unknown", "entropy_bits")[1] == (0.9, 1)


def test_not_a_step_table_is_a_clear_error(tmp_path: Path):
    pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
    with pytest.raises(InvalidInput, match=r"not a leakage\.steps/1 table"):
        build_report(tmp_path / "other.parquet", tmp_path / "rep")
    with pytest.raises(InvalidInput, match="no such file"):
        build_report(tmp_path / "missing", tmp_path / "rep")


def test_a_run_that_scored_no_game_and_an_empty_folder_say_so(tmp_path: Path, leakage_home: Path):
    from leakage.batch import BatchJob, run_batch

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "leakage.transcript/1"}\n', encoding="utf-8")
    run_batch(BatchJob(inputs=[bad], out=tmp_path / "out", workers=0))
    with pytest.raises(InvalidInput, match=r"the run scored no game \(see .*errors\.jsonl\)"):
        build_report(tmp_path / "out", tmp_path / "rep")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InvalidInput, match="no Parquet files here"):
        build_report(tmp_path / "empty", tmp_path / "rep")


def test_build_report_is_the_former_name_of_build_site():
    # the curves write a folder of files; "report" is leakage.report/1 (scoring.build_report)
    assert build_report is build_site
