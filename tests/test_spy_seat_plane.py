"""The reveal-vs-conceal plane of SpyGame from the spy's own seat (issue 39, item 5): x the
spy's gain about the civilians' word over an open vocabulary, y the statement's value to the
civilians, log2 P(s | civilians' word) / P(s | spies' word); the step table's
``reveal_bits`` column, the plane, ``leakage report`` and the service's note, on a game
worked by hand."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from math import log
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage import load_transcripts
from leakage.batch import StepColumns, StepNumbers, row_context, steps_schema
from leakage.curves import build_site, clue_points, plane_axes, plane_view
from leakage.scoring import ScoreOptions, game_input, score_inputs

from .conftest import EXAMPLES

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

TWO_SPIES = EXAMPLES / "spygame_two_spies.json"
# P(statement | Violin), P(statement | Cello) by hand for three statements; the others 0.4 / 0.2.
HAND = {
    "It rests under your chin while you play it.": (0.8, 0.1),  # p1, civilian: log2 8 = 3
    "You play it with a bow drawn across four strings.": (0.3, 0.6),  # p2, spy: -1
    "Its deep, warm sound is often compared to a human voice.": (0.25, 1.0),  # p5, spy: -2
    "It is the smallest and highest of its family in the orchestra.": (0.5, 0.5),  # p3: 0
}
DEFAULT = (0.4, 0.2)  # log2 2 = 1


class Pair:
    """A backend whose P(statement | word) is given by hand for the pair (1e-3 elsewhere)."""

    name = "pair"

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def info(self) -> dict[str, Any]:
        return {"backend": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        self.asked.append(list(candidates))
        out = np.full((len(clues), len(candidates)), log(1e-3))
        for i, c in enumerate(clues):
            violin, cello = HAND.get(c, DEFAULT)
            for j, w in enumerate(candidates):
                if w == "Violin":
                    out[i, j] = log(violin)
                elif w == "Cello":
                    out[i, j] = log(cello)
        return out


def _expected(texts: Sequence[str]) -> list[float]:
    return [math.log2(a / b) for a, b in (HAND.get(t, DEFAULT) for t in texts)]


def _table(seat: str | None, words: str, backend: Any) -> Any:
    """The step rows of the two-spies example scored from ``seat`` by ``backend``."""
    (game,), errors = load_transcripts([TWO_SPIES])
    assert not errors
    options = ScoreOptions(seat=seat, seat_vocabulary=words if seat else None)
    inp = game_input(game, options)
    (trace,) = score_inputs([inp], backend)
    numbers, columns = StepNumbers(), StepColumns()
    numbers.add(trace)  # type: ignore[arg-type]
    columns.add(row_context(str(TWO_SPIES), 0, game, inp.counted), inp, backend.name)
    return pa.Table.from_batches([columns.to_batch(numbers.arrays())])


@pytest.fixture(scope="module")
def spy_table(words: str) -> Any:
    return _table("spy", words, Pair())


def test_the_spy_seat_reads_each_statements_value_to_the_civilians_by_hand(words: str):
    """y = log2 P(s | Violin) / P(s | Cello): 3 bits for "It rests under your chin" (0.8 /
    0.1), -1 for the spy p2's bow (0.3 / 0.6), -2 for p5's deep sound (0.25 / 1), 0 for p3's
    (0.5 / 0.5), 1 for every other statement (0.4 / 0.2); a one-tier backend is asked about
    the pair once."""
    (game,), _ = load_transcripts([TWO_SPIES])
    backend = Pair()
    inp = game_input(game, ScoreOptions(seat="spy", seat_vocabulary=words))
    (trace,) = score_inputs([inp], backend)
    texts = [t.text for t in game.turns]
    assert trace.reveal_bits is not None  # type: ignore[union-attr]
    assert trace.reveal_bits.tolist() == pytest.approx(_expected(texts))  # type: ignore[union-attr]
    assert trace.reveal_bits[:3].tolist() == pytest.approx([3.0, -1.0, 0.0])  # type: ignore[union-attr]
    assert ["Violin", "Cello"] in backend.asked


def test_the_step_table_holds_the_column_and_the_plane_has_two_dimensions(spy_table: Any):
    """From p2's seat (the first spy) every turn but p2's counts; the plane places the 8
    civilians' statements (x: the spy's gain, y: by hand) and leaves out p5's one (a spy
    holds no civilians' word to leak)."""
    rows = spy_table.to_pylist()
    assert spy_table.schema.field("reveal_bits").nullable
    assert [r["reveal_bits"] for r in rows] == pytest.approx(_expected([r["text"] for r in rows]))
    points = clue_points(spy_table)
    civilian = [i for i, r in enumerate(rows) if r["counted"] and r["speaker_word"] == r["secret"]]
    assert points["index"].tolist() == civilian and len(civilian) == 8
    assert points["x"].tolist() == [rows[i]["information_gain_bits"] for i in civilian]
    assert points["y"].tolist() == pytest.approx(_expected([rows[i]["text"] for i in civilian]))
    assert (points["spies_left_out"], points["spy_seat_games"], points["undefined"]) == (1, 1, 0)
    view = plane_view(spy_table, replicates=50)
    assert view["axes"]["two_dimensional"] and view["spies_left_out"] == 1
    assert (
        "spy's own seat" in view["axes"]["note"]
        and "1 statement by a spy is left out" in view["axes"]["note"]
    )
    assert view["points_total"] == 8 and {g["role"] for g in view["groups"]} == {"civilian"}


def test_outside_seats_keep_one_curve_and_say_what_gives_two(words: str, spy_table: Any):
    """The outside observer told the pair reads the same ratio from its own posteriors
    (each statement alone: P(Violin) / P(Cello) = the likelihoods' ratio), so y agrees
    statement by statement, while x is its entropy drop over the pair; its note says the
    spy's seat gives the second dimension. A table written before the column (dropped
    here) reads as before."""
    outside = _table(None, words, Pair())
    assert outside["reveal_bits"].null_count == outside.num_rows
    got = clue_points(outside)
    texts = outside["text"].to_pylist()
    assert got["y"].tolist() == pytest.approx(_expected(texts))
    # x and y on one curve: x = 1 - H(p), p = 2^y / (1 + 2^y)
    p = 2.0 ** got["y"] / (1 + 2.0 ** got["y"])
    assert got["x"] == pytest.approx(1 + p * np.log2(p) + (1 - p) * np.log2(1 - p))
    axes = plane_axes(got)
    assert not axes["two_dimensional"] and "--seat spy" in axes["note"]
    old = outside.drop_columns(["reveal_bits"])
    assert clue_points(old)["y"].tolist() == got["y"].tolist()
    spy = clue_points(spy_table)
    civilian = [i for i, t in enumerate(texts) if i in set(spy["index"].tolist())]
    assert spy["y"].tolist() == pytest.approx(got["y"][civilian].tolist())
    assert not np.allclose(spy["x"], got["x"][civilian])


def test_report_draws_the_spy_seat_plane(spy_table: Any, tmp_path: Path):
    results = tmp_path / "results" / "steps"
    results.mkdir(parents=True)
    pq.write_table(spy_table.cast(steps_schema()), results / "part-0.parquet")
    rep = build_site(results.parent, tmp_path / "site", by="speaker", replicates=50)
    with open(tmp_path / "site" / "plane_clues.csv", newline="") as f:
        clues = list(csv.DictReader(f))
    assert len(clues) == 8 and {c["role"] for c in clues} == {"civilian"}
    html = (tmp_path / "site" / "report.html").read_text()
    assert "spy&#x27;s own seat" in html or "spy's own seat" in html
    assert "leakage to the spy" in (tmp_path / "site" / "plane.svg").read_text()
    assert [r for r in rep.plane if r["kind"] == "data"]


def test_the_leaderboard_reads_the_spy_seats_reveal_value_by_hand(
    words: str, spy_table: Any, tmp_path: Path
):
    """The leaderboard's reveal value of a table scored from the spy's seat is its
    ``reveal_bits`` (the plane's y, one computation), averaged per counted statement by hand:
    gpt-4o (p1) 3 and 1 -> 2.0; claude (p3) 0 and 1 -> 0.5; deepseek-v3 and llama-3 1.0;
    the other spy gemini-2.0 (p5) -2.0 (p2, the seat, is not counted). From an outside seat
    (the ratio from the posteriors over the pair) the values are the same. ``observers``
    says the figures are the spy's seat's; a table of both seats says they are mixed."""
    from leakage.curves import OBSERVERS_SPY_SEAT, leaderboard

    want = {
        ("civilian", "gpt-4o"): 2.0, ("civilian", "claude"): 0.5,
        ("civilian", "deepseek-v3"): 1.0, ("civilian", "llama-3"): 1.0, ("spy", "gemini-2.0"): -2.0,
    }  # fmt: skip
    board = leaderboard(spy_table, replicates=50, min_games=1)
    got = {(r.role, r.model): r.reveal_bits for r in board.rows}
    assert got == pytest.approx(want)
    assert board.observers["spygame"] == OBSERVERS_SPY_SEAT
    assert "cumulative" in board.observers["spygame"]["leakage"]
    outside = leaderboard(_table(None, words, Pair()), replicates=50, min_games=1)
    assert {(r.role, r.model): r.reveal_bits for r in outside.rows if r.clues} == pytest.approx(
        {**want, ("spy", "qwen-2.5"): pytest.approx(0.0)}
    )
    assert "per statement, not cumulative" in outside.observers["spygame"]["leakage"]
    # a folder of Parquet parts reads the column too
    folder = tmp_path / "steps"
    folder.mkdir()
    pq.write_table(spy_table.cast(steps_schema()), folder / "part-0.parquet")
    assert leaderboard(folder, replicates=50, min_games=1) == board
    other = _table(None, words, Pair())
    other = other.set_column(0, other.schema.field(0), pa.array(["o"] * other.num_rows))
    both = pa.concat_tables([spy_table, other])
    mixed = leaderboard(both, replicates=50, min_games=1)
    assert "spygame: 1 of 2 games scored from the spy's own seat" in " ".join(mixed.notes)


def test_spy_seat_tables_are_not_read_statement_by_statement(
    words: str, spy_table: Any, tmp_path: Path
):
    """The spy's posterior accumulates over the statements it has heard: its curves say
    "after m clues", not "each read on its own" (an outside seat's do), while the grouping a
    viewer opens with stays by speaker (six models a game)."""
    from leakage.curves import default_grouping, per_statement, spy_seat_games

    outside = _table(None, words, Pair())
    assert (spy_seat_games(spy_table), spy_seat_games(outside)) == (1, 0)
    assert spy_seat_games(outside.drop_columns(["reveal_bits"])) == 0
    assert per_statement(["spygame"]) and not per_statement(["spygame"], spy_seat=True)
    assert default_grouping(["spygame"]) == "speaker"
    for table, each in [(spy_table, False), (outside, True)]:
        results = tmp_path / f"r{each}" / "steps"
        results.mkdir(parents=True)
        pq.write_table(table.cast(steps_schema()), results / "part-0.parquet")
        assert spy_seat_games(results.parent) == (0 if each else 1)
        build_site(results.parent, tmp_path / f"s{each}", by="speaker", replicates=20)
        svg = (tmp_path / f"s{each}" / "entropy.svg").read_text()
        assert ("each read on its own" in svg) == each
        assert ("after m clues" in svg) == (not each)
