"""The step table's outcome column and its reading as one row per game
(``leakage.batch.game_records``, ``leakage.games/1``).

- ``leakage batch`` writes each game's ``meta.winner_role`` as ``winner_role``;
  ``leakage.curves.outcomes_from_steps`` gives what ``outcomes_from_reports`` gives;
- a part written before the column existed still reads (as null) with the table's schema,
  and gives no outcomes;
- rows rebuilt from stored reports (``report_steps``) carry the outcome too;
- a game's row holds its report's summary figures: the last step's for the Chameleon and
  for a SpyGame scored from a player's seat, none for a SpyGame read from outside; a rank
  of 0 (a seat's step without one) is null, as in the report.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from leakage.batch import (
    BatchJob,
    StoredReport,
    game_records,
    games_schema,
    report_steps,
    run_batch,
    steps_schema,
)
from leakage.curves import outcomes_from_reports, outcomes_from_steps
from leakage.errors import InvalidInput

from .batch_helpers import example_records, read_steps
from .conftest import EXAMPLES

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
ds = pytest.importorskip("pyarrow.dataset")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory, shared_home: Path) -> tuple[Path, Any]:
    """Three Chameleon games (one won by the chameleon) and a SpyGame won by the civilians,
    through ``leakage batch``'s engine."""
    import os

    folder = tmp_path_factory.mktemp("games")
    games = example_records()[:3]
    games[0]["meta"] = {**games[0].get("meta", {}), "winner_role": "chameleon"}
    fruit = json.loads((EXAMPLES / "spygame_fruit.json").read_text(encoding="utf-8"))
    fruit["meta"]["winner_role"] = "civilian"
    path = folder / "games.jsonl"
    path.write_text("".join(json.dumps(g) + "\n" for g in [*games, fruit]), encoding="utf-8")
    old = os.environ.get("LEAKAGE_HOME")
    os.environ["LEAKAGE_HOME"] = str(shared_home)
    try:
        stats = run_batch(BatchJob(inputs=[path], out=folder / "out", workers=0))
    finally:
        if old is None:
            del os.environ["LEAKAGE_HOME"]
        else:
            os.environ["LEAKAGE_HOME"] = old
    assert (stats.games, stats.failed) == (4, 0)
    return folder / "out", read_steps(folder / "out")


def _reports(out: Path) -> list[dict[str, Any]]:
    lines = (out / "reports.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def test_the_step_table_holds_each_games_outcome(scored: tuple[Path, Any]):
    out, table = scored
    assert table.schema.names[-1] == "winner_role" and table.schema.equals(steps_schema())
    by_game = dict(zip(table["game_id"].to_pylist(), table["winner_role"].to_pylist(), strict=True))
    assert by_game["example-chameleon-fruits"] == "chameleon"
    assert by_game["example-spygame-mango-papaya"] == "civilian"
    assert sum(w is None for w in by_game.values()) == 2
    assert outcomes_from_steps(table) == outcomes_from_reports(_reports(out)) == by_game
    assert outcomes_from_steps(out / "steps") == by_game


def test_a_part_without_the_outcome_column_still_reads(scored: tuple[Path, Any], tmp_path: Path):
    _, table = scored
    old = tmp_path / "part-00000.parquet"
    pq.write_table(table.drop_columns(["winner_role"]), old)
    again = ds.dataset([str(old)], schema=steps_schema(), format="parquet").to_table()
    assert again.num_rows == table.num_rows and again["winner_role"].null_count == table.num_rows
    assert again.drop_columns(["winner_role"]).equals(table.drop_columns(["winner_role"]))
    assert outcomes_from_steps(old) == {} == outcomes_from_steps(pq.read_table(old))
    # a run resumed after the column was added: its later parts' games have their outcomes
    resumed = tmp_path / "resumed"
    resumed.mkdir()
    spy = pa.compute.equal(table["game"], "spygame")
    before = table.filter(pa.compute.invert(spy)).drop_columns(["winner_role"])
    pq.write_table(before, resumed / "part-00000.parquet")
    pq.write_table(table.filter(spy), resumed / "part-00001.parquet")
    mixed = outcomes_from_steps(resumed)
    assert mixed["example-spygame-mango-papaya"] == "civilian"
    assert mixed["example-chameleon-fruits"] is None  # its part was written without the column
    with pytest.raises(InvalidInput, match="game_id"):
        outcomes_from_steps(pa.table({"source": ["a"], "record": [0]}))


def test_rows_rebuilt_from_reports_carry_the_outcome(scored: tuple[Path, Any]):
    out, table = scored
    reports = [StoredReport("stored", i, r) for i, r in enumerate(_reports(out))]
    rebuilt = pa.Table.from_batches([report_steps(reports)])
    assert outcomes_from_steps(rebuilt) == outcomes_from_steps(table)


def test_a_games_row_holds_its_reports_summary(scored: tuple[Path, Any]):
    out, table = scored
    games = game_records(table)
    assert games.schema.equals(games_schema()) and games.num_rows == 4
    reports = {r["game_id"]: r for r in _reports(out)}
    for row in games.to_pylist():
        report = reports[row["game_id"]]
        summary = report["summary"]
        assert row["turns"] == len(report["steps"]) and row["counted"] == summary["counted_turns"]
        assert row["final_entropy_bits"] == summary["final_entropy_bits"]
        assert row["final_secret_probability"] == summary["final_secret_probability"]
        assert row["final_secret_rank"] == summary["final_secret_rank"]
        assert row["winner_role"] == report["meta"].get("winner_role")
    spy = games.filter(pa.compute.equal(games["game"], "spygame")).to_pylist()[0]
    assert spy["final_secret_probability"] is None and spy["mean_speaker_word_probability"]
    # scored from a player's seat, a SpyGame's final figures are its last step's
    seated = game_records(table, seat="civilian")
    last = table.filter(pa.compute.equal(table["game"], "spygame")).to_pylist()[-1]
    row = seated.filter(pa.compute.equal(seated["game"], "spygame")).to_pylist()[0]
    assert row["final_secret_probability"] == last["secret_probability"]
    assert row["final_secret_rank"] == last["secret_rank"]
    assert row["mean_speaker_word_probability"] is None
    assert game_records(table, seat="known").equals(games)  # an outside seat (its old name)
    # a seat's step without a rank holds 0; its report writes none
    ranks = pa.compute.if_else(
        pa.compute.equal(table["game"], "chameleon"), 0, table["secret_rank"]
    ).cast(pa.int32())
    unranked = table.set_column(table.schema.get_field_index("secret_rank"), "secret_rank", ranks)
    assert game_records(unranked)["final_secret_rank"].null_count == 4
