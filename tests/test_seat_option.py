"""Seats as a scoring option (issue 39): ``ScoreOptions.seat`` through the library, the
command line, the batch, the service and the Inspect tasks; each player seat's figures
worked by hand on small games."""

from __future__ import annotations

import json
from collections.abc import Sequence
from math import log
from pathlib import Path
from typing import Any, get_args

import numpy as np
import pytest

from leakage import load_transcripts
from leakage.errors import InvalidInput, InvalidTranscript
from leakage.reports import report_seat, report_table
from leakage.scoring import ScoreOptions, game_input, score_transcript
from leakage.seats import SEAT_NAMES
from leakage.seats._trace import civilian_steps
from leakage.transcripts import parse_transcript

from .conftest import EXAMPLES
from .test_cli import run

SPORTS = EXAMPLES / "chameleon_sports.json"
TWO_SPIES = EXAMPLES / "spygame_two_spies.json"


def _game(path: Path) -> Any:
    games, errors = load_transcripts([path])
    assert not errors
    return games[0]


class Rows:
    """A backend whose log P(clue | word) is a table given by hand."""

    name = "rows"

    def __init__(self, table: dict[str, dict[str, float]]) -> None:
        self.table = table
        self.asked: list[tuple[list[str], list[str]]] = []

    def info(self) -> dict[str, Any]:
        return {"backend": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> np.ndarray:
        self.asked.append((list(clues), list(candidates)))
        return np.array([[log(self.table[c].get(w, 1e-3)) for w in candidates] for c in clues])


def _chameleon() -> Any:
    return parse_transcript(
        {
            "format": "leakage.transcript/1",
            "game": "chameleon",
            "id": "hand",
            "category": "Letters",
            "candidates": ["A", "B"],
            "secret": "A",
            "players": [
                {"id": "p1", "role": "non-chameleon"},
                {"id": "p2", "role": "non-chameleon"},
                {"id": "p3", "role": "chameleon"},
            ],
            "turns": [
                {"player": "p1", "text": "x"},
                {"player": "p2", "text": "y"},
                {"player": "p3", "text": "z"},
            ],
        }
    )


HAND_ROWS = {"x": {"A": 0.8, "B": 0.2}, "y": {"A": 0.6, "B": 0.4}, "z": {"A": 0.1, "B": 0.9}}


def test_non_chameleon_seat_worked_by_hand():
    """p1 knows the secret A. A clue r of player j weighs P(j is the chameleon) by
    ((P(r|A) + P(r|B)) / 2) / P(r|A): y by 0.5/0.6, z by 0.5/0.1."""
    report = score_transcript(_chameleon(), Rows(HAND_ROWS), ScoreOptions(seat="non-chameleon"))
    assert report.settings["seat"] == "non-chameleon"
    assert report.settings["seat_holders"] == ["p1", "p2"]
    first, second, third = report.steps
    assert not first.counted  # p1's own clue
    assert first.posterior == pytest.approx({"p1": 0.0, "p2": 0.5, "p3": 0.5})
    w_y, w_z = 0.5 / 0.6, 0.5 / 0.1
    assert second.posterior["p2"] == pytest.approx(w_y / (w_y + 1))
    assert third.posterior["p3"] == pytest.approx(w_z / (w_y + w_z))
    assert third.secret_probability == pytest.approx(w_z / (w_y + w_z)) and third.secret_rank == 1
    h = [-(p * np.log2(p)) for p in (w_y / (w_y + w_z), w_z / (w_y + w_z))]
    assert third.entropy_bits == pytest.approx(sum(h))
    assert third.information_gain_bits == pytest.approx(second.entropy_bits - third.entropy_bits)
    # p2's own view: x weighs p1 by 0.5/0.8, z weighs p3 by 5; y is p2's own
    view = third.seat_view["p2"]
    w_x = 0.5 / 0.8
    assert view["p_odd_one_out"]["p3"] == pytest.approx(w_z / (w_x + w_z))
    assert second.seat_view["p2"]["counted"] is False


def test_civilian_seat_worked_by_hand():
    """Three players, one spy a; my word w; the other word x is one of two, π = 1/2 each.
    a's statement: P(.|x) = 0.9, 0.1, P(.|w) = 0.2; b's: 0.1, 0.1, and 0.8 under w.
    Hypotheses (prior 1/3 each): I am a civilian and a is the spy: 0.5 (a's, marginalised)
    x 0.8 (b's, under w) = 0.4; b is the spy: 0.1 x 0.2 = 0.02; I am the spy (a, b hold x):
    0.5 x 0.09 + 0.5 x 0.01 = 0.05."""
    steps = civilian_steps(
        np.log([[0.9, 0.1], [0.1, 0.1]]),
        np.log([0.2, 0.8]),
        np.log([0.5, 0.5]),
        ["a", "b"],
        ["me", "a", "b"],
        "me",
        ["a"],
    )
    total = 0.4 + 0.02 + 0.05
    after = dict(zip(["me", "a", "b"], steps.columns[-1], strict=True))
    assert after == pytest.approx({"me": 0.05 / total, "a": 0.4 / total, "b": 0.02 / total})
    assert steps.probability[-1] == pytest.approx(0.4 / total) and steps.rank[-1] == 1
    # after a's statement alone: 0.5 (a holds x), 0.2 (a holds w), 0.5 (a, b hold x)
    first = dict(zip(["me", "a", "b"], steps.columns[0], strict=True))
    assert first == pytest.approx({"me": 0.5 / 1.2, "a": 0.5 / 1.2, "b": 0.2 / 1.2})
    assert steps.prior_entropy == pytest.approx(np.log2(3))


def test_spy_seat_figures_per_statement(words: str, cooccurrence):
    game = _game(TWO_SPIES)
    options = ScoreOptions(seat="spy", seat_vocabulary=words)
    report = score_transcript(game, cooccurrence, options)
    assert report_seat(report) == "spy" and report.settings["seat_holders"] == ["p2", "p5"]
    assert report.settings["seat_secret"].startswith("the civilians' word")
    entropy = report.summary.prior_entropy_bits
    for step in report.steps:
        assert step.counted is (step.player != "p2")
        assert step.posterior["Cello"] == 0.0  # the spy's own word is never the other
        if step.counted:
            assert step.information_gain_bits == pytest.approx(entropy - step.entropy_bits)
        entropy = step.entropy_bits
        view = step.seat_view["p5"]
        assert view["counted"] is (step.player != "p5") and view["own_word"] == "Cello"
        assert 0 < step.secret_probability <= 1 and step.secret_rank >= 1
    last = report.steps[-1]
    assert last.posterior["Violin"] == pytest.approx(last.secret_probability)
    assert last.secret_rank <= 10, last.seat_view["p2"]["top"]
    assert report.summary.final_secret_rank == last.secret_rank
    # the table's caption ranks the civilians' word out of the vocabulary, not the pair
    words_read = report.settings["seat_vocabulary_words"]
    caption = report_table(report).caption
    assert f"civilians' word rank {last.secret_rank}/{words_read:,}" in caption, caption
    assert words_read > 2 and "secret rank" not in caption


def test_the_outside_seats_are_the_old_assignments():
    game = _game(TWO_SPIES)
    backend = Rows({t.text: {"Violin": 0.6, "Cello": 0.4} for t in game.turns})
    plain = score_transcript(game, backend).model_dump()
    assert "seat" not in plain["settings"] and "seat_view" not in plain["steps"][0]
    for seat, assignment in (("known", "known"), ("marginalise", "marginalise")):
        named = score_transcript(game, backend, ScoreOptions(seat=seat)).model_dump()
        old = score_transcript(game, backend, ScoreOptions(spy_assignment=assignment))
        expected = {"outside-known": "known", "outside-pair": "marginalise"}
        assert expected[named["settings"].pop("seat")] == assignment
        assert named == old.model_dump()
    assert report_seat(score_transcript(_game(SPORTS), Rows(_sports_rows()))) == "chameleon"


def _sports_rows() -> dict[str, dict[str, float]]:
    return {t.text: {} for t in _game(SPORTS).turns}


def test_a_seat_not_of_the_game_is_an_error_naming_the_field():
    with pytest.raises(InvalidTranscript) as found:
        game_input(_game(SPORTS), ScoreOptions(seat="spy"))
    assert found.value.problems[0][0] == "seat" and "The Chameleon" in str(found.value)
    with pytest.raises(InvalidTranscript, match="seat: 'non-chameleon' is not a seat of Spy"):
        game_input(_game(TWO_SPIES), ScoreOptions(seat="non-chameleon"))
    with pytest.raises(InvalidInput, match="seat: unknown seat 'judge'"):
        ScoreOptions(seat="judge")
    with pytest.raises(InvalidInput, match="contradicts"):
        ScoreOptions(seat="outside-known", spy_assignment="marginalise")
    with pytest.raises(InvalidInput, match="include_chameleon"):
        ScoreOptions(seat="chameleon", include_chameleon=True)


def test_the_options_take_every_seat_name():
    from leakage.cli import _options as o
    from leakage_service.inputs import ScoreParams

    assert get_args(o.Seat) == SEAT_NAMES
    field = ScoreParams.model_fields["seat"].annotation
    assert get_args(get_args(field)[0]) == SEAT_NAMES


def test_cli_score_seat(leakage_home: Path, tmp_path: Path):
    out = tmp_path / "r.jsonl"
    p = run(
        "score", str(SPORTS), str(TWO_SPIES), "--seat", "non-chameleon",
        "-f", "jsonl", "-o", str(out), home=leakage_home,
    )  # fmt: skip
    assert p.returncode == 2  # the SpyGame has no non-chameleon: said, the rest scored
    assert "seat: 'non-chameleon' is not a seat of SpyGame" in p.stderr
    (report,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert report["settings"]["seat"] == "non-chameleon"
    assert report["steps"][-1]["secret_probability"] == max(
        report["steps"][-1]["posterior"].values()
    )
    p = run("score", str(SPORTS), "--seat", "non-chameleon", home=leakage_home)
    assert p.returncode == 0, p.stderr
    assert "seat: non-chameleon (p1)" in " ".join(p.stdout.split())


def test_cli_batch_seat(leakage_home: Path, tmp_path: Path):
    pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = tmp_path / "run"
    p = run(
        "batch", str(EXAMPLES / "chameleon_batch.jsonl"), str(TWO_SPIES), "--out", str(out),
        "--seat", "non-chameleon", "--workers", "1", "--no-progress", home=leakage_home,
    )  # fmt: skip
    assert p.returncode == 2, p.stderr  # in errors.jsonl: a game without a secret, the SpyGame
    errors = [json.loads(x) for x in (out / "errors.jsonl").read_text().splitlines()]
    assert [e["error"]["field"] for e in errors] == ["seat", "seat"]
    assert "has none" in errors[0]["error"]["message"]
    assert "not a seat of SpyGame" in errors[1]["error"]["message"]
    reports = [json.loads(x) for x in (out / "reports.jsonl").read_text().splitlines()]
    assert reports and {r["settings"]["seat"] for r in reports} == {"non-chameleon"}
    steps = pq.read_table(out / "steps").to_pylist()
    # each step's candidates are the game's players from this seat
    assert steps and all(c.startswith("p") for row in steps for c in row["candidates"])
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["score_options"]["seat"] == "non-chameleon"


def test_service_score_seat(tmp_path: Path, default_index: Path):
    from .test_service import Api, ndjson, settings_for, wait_job

    api = Api(settings_for(tmp_path, default_index))
    try:
        ok = api.post("/v1/score", params={"seat": "non-chameleon"}, content=SPORTS.read_bytes())
        assert ok.status_code == 200, ok.text
        report = ok.json()
        assert report["settings"]["seat"] == "non-chameleon"
        assert set(report["steps"][0]["posterior"]) == {"p1", "p2", "p3", "p4"}
        bad = api.post("/v1/score", params={"seat": "spy"}, content=SPORTS.read_bytes())
        assert bad.status_code == 422 and bad.json()["error"]["field"] == "seat"
        unknown = api.post("/v1/score", params={"seat": "judge"}, content=SPORTS.read_bytes())
        assert unknown.status_code == 422
        # options that contradict the seat: the seat decides (every request the schema
        # allows is scored; the streaming batch once answered 200 and then broke off)
        for route in ("/v1/score", "/v1/score/batch"):
            clash = api.post(
                route, params={"seat": "outside-known", "spy_assignment": "marginalise"},
                content=TWO_SPIES.read_bytes(),
            )  # fmt: skip
            assert clash.status_code == 200, (route, clash.text)
            settings = json.loads(clash.text.splitlines()[0])["settings"]
            assert settings["spy_assignment"] == "known", settings
            clash = api.post(
                route, params={"seat": "chameleon", "include_chameleon": "true"},
                content=SPORTS.read_bytes(),
            )  # fmt: skip
            assert clash.status_code == 200, (route, clash.text)
            settings = json.loads(clash.text.splitlines()[0])["settings"]
            assert settings["seat"] == "chameleon" and not settings["include_chameleon"], settings
        old = api.post("/v1/score", params={"seat": "marginalise"}, content=TWO_SPIES.read_bytes())
        assert old.json()["settings"]["spy_assignment"] == "marginalise"
        # a job: the seat goes with its options; a record it does not fit is that record's
        # error, the others are scored
        body = (
            SPORTS.read_bytes().replace(b"\n", b"")
            + b"\n"
            + TWO_SPIES.read_bytes().replace(b"\n", b"")
            + b"\n"
        )
        job = api.post("/v1/jobs", params={"seat": "non-chameleon"}, content=body)
        assert job.status_code == 202, job.text
        done = wait_job(api, job.json()["id"], timeout=120)
        assert (done["ok"], done["failed"]) == (1, 1), done
        assert "not a seat of SpyGame" in json.dumps(done["errors"])
        lines = ndjson(api.get(f"/v1/jobs/{done['id']}/results"))
        assert lines[0]["settings"]["seat"] == "non-chameleon"
    finally:
        api.close()


def test_inspect_tasks_check_the_seat_before_any_move(leakage_home: Path):
    pytest.importorskip("inspect_ai")
    from leakage.inspect import chameleon, spygame

    with pytest.raises(InvalidTranscript, match="seat"):
        chameleon(games=1, seat="spy")
    assert spygame(games=1, seat="spy") is not None


def test_the_whole_pool_re_ranks_the_best_words_keeping_their_mass():
    """Five words with P 0.4, 0.3, 0.2, 0.05, 0.05; the whole pool's row for the one
    statement heard is 0.1 and 0.9 on the two best: their mass 0.7 is shared 0.07 / 0.63."""
    from leakage.seats._spygame import refine
    from leakage.vocab import OpenPosterior

    post = OpenPosterior(
        ["a", "b", "c", "d", "e"], np.log([0.4, 0.3, 0.2, 0.05, 0.05]), np.arange(5), 1.0
    )
    refine([post], [np.array([0, 1])], np.zeros(5), np.log([[0.1, 0.9]]), {0: 0, 1: 1})
    assert np.exp(post.log_p) == pytest.approx([0.07, 0.63, 0.2, 0.05, 0.05])
    assert post.rank(1) == 1 and post.rank(0) == 3


def test_the_spy_seat_asks_the_costly_members_once_about_a_few_words(words: str, cooccurrence):
    """An ensemble with a costly member (here a counting stand-in for the listener): the
    cheap members re-rank the shortlist, the whole pool (one call for every spy) only each
    step's ``SEAT_FINE`` best words and the spies' own word."""
    from leakage.backends.ensemble import EnsembleBackend
    from leakage.seats import SEAT_FINE

    game = _game(TWO_SPIES)
    listener = Rows({t.text: {"Violin": 0.9} for t in game.turns})
    listener.name = "listener"
    pool = EnsembleBackend(
        {"cooccurrence": cooccurrence, "listener": listener},
        {"cooccurrence": 1.0, "listener": 1.0},
        {"cooccurrence": 1.0, "listener": 1.0},
    )
    report = score_transcript(game, pool, ScoreOptions(seat="spy", seat_vocabulary=words))
    assert len(listener.asked) == 1
    clues, candidates = listener.asked[0]
    assert clues == [t.text for t in game.turns]
    heard = sum(1 for t in game.turns if t.player != "p2") + sum(
        1 for t in game.turns if t.player != "p5"
    )
    assert "Cello" in candidates and len(candidates) <= SEAT_FINE * heard + 1
    assert report.settings["seat_fine"] == "cooccurrence, listener"
    assert report.settings["seat_rerank"] == "cooccurrence"
    assert report.steps[-1].secret_rank == 1  # the stand-in listener names Violin
