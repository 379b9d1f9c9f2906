"""Models compared and the reveal-vs-conceal plane: ``leakage report --by speaker``,
``--compare``, the plane's definitions on examples worked by hand, on real CK-Arena logs,
and the API (``GET /v1/jobs/{id}/curves?by=speaker``, ``GET /v1/jobs/{id}/plane``)."""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage.batch import steps_schema
from leakage.curves import (
    NO_REFERENCES,
    build_site,
    default_grouping,
    per_statement,
    plane_references,
)
from leakage.curves._colours import colour_of, group_colour
from leakage.curves._compare import paired_difference
from leakage.curves._data import load_steps
from leakage.curves._plane import reference_points, reveal_values
from leakage.errors import InvalidInput

from .conftest import EXAMPLES
from .test_service import Api, assert_error, plain_api

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


# -- the plane's y, worked by hand ----------------------------------------------------------


def test_reveal_value_of_chameleon_clues_by_hand():
    """K = 4 candidates, secret w0, uniform prior.

    Clue 1 has likelihoods P(c1 | w) = (0.4, 0.2, 0.2, 0.2): the posterior after it is
    (0.4, 0.2, 0.2, 0.2), and y1 = log2[P(c1 | w0) / mean_w P(c1 | w)] = log2(0.4 / 0.25)
    = log2 1.6 = 0.678 bits. x1 = 2 - H(0.4, 0.2, 0.2, 0.2) = 2 - 1.922 = 0.078 bits.
    Clue 2 (the chameleon's, not counted) leaves the posterior as it was: no y.
    Clue 3 has P(c3 | w) = (0.1, 0.3, 0.3, 0.3): the posterior becomes (0.04, 0.06, 0.06,
    0.06) / 0.22, and y3 = log2(0.1 / 0.25) = -1.322 bits: the clue fits the secret worse
    than a random candidate, evidence that its speaker does not know it.
    """
    p1 = np.array([0.4, 0.2, 0.2, 0.2])
    p3 = p1 * np.array([0.1, 0.3, 0.3, 0.3])
    p3 /= p3.sum()
    post = np.stack([p1, p1, p3])
    y = reveal_values("chameleon", ["w0", "w1", "w2", "w3"], post, [True, False, True], secret="w0")
    assert y[0] == pytest.approx(math.log2(1.6))
    assert math.isnan(y[1])
    assert y[2] == pytest.approx(math.log2(0.4))
    assert reveal_values("chameleon", ["a", "b"], post[:, :2], [True] * 3, secret=None).size == 3
    assert np.isnan(
        reveal_values("chameleon", ["a", "b"], post[:, :2], [True] * 3, secret=None)
    ).all()


def test_reveal_value_of_spygame_statements_by_hand():
    """SpyGame, pair (sun, moon) and a distractor: each statement's posterior is from the
    statement alone, so P(s | sun) / P(s | moon) = post(sun) / post(moon). A statement with
    posterior (0.6, 0.2, 0.2) has y = log2 3 = 1.585 bits (it says its speaker holds the
    civilians' word); (0.1, 0.4, 0.5) has y = log2 0.25 = -2 bits."""
    post = np.array([[0.6, 0.2, 0.2], [0.1, 0.4, 0.5]])
    y = reveal_values(
        "spygame", ["sun", "moon", "star"], post, [True, True], secret="sun", spy_word="moon"
    )
    assert y.tolist() == pytest.approx([math.log2(3), -2.0])


def test_reference_strategies_sit_where_the_theory_puts_them():
    """Trivial: no information either way (0, 0). For a stationary strategy the mean y of a
    non-chameleon's clue is I(W; R) (here in bits), and the chameleon's clue, drawn from the
    marginal, has mean y = -E_q KL-like <= 0. π_amb (K = 16 = 4 · (3 + 1)): the first clue
    of N = 3 players has x = log2(4/3) and y = log2(4/3) exactly."""
    from leakage.games import theory

    refs = {r["group"]: r for r in reference_points(k=16, n=4, games=3000, seed=1)}
    triv = refs["trivial · non-chameleon"]
    assert (triv["leakage_bits"], triv["reveal_bits"]) == (0.0, 0.0)
    for name, pi in (
        ("concealing", theory.concealing(16, 0.3).pi),
        ("revealing", theory.revealing(16, 0.9, 0.9).pi),
    ):
        mi = theory.mutual_information(pi) / math.log(2)
        r = refs[f"{name} · non-chameleon"]
        assert r["reveal_low"] - 0.02 <= mi <= r["reveal_high"] + 0.02, (name, mi, r)
        assert refs[f"{name} · chameleon"]["reveal_bits"] < 0
    assert (
        refs["revealing · non-chameleon"]["reveal_bits"]
        > refs["concealing · non-chameleon"]["reveal_bits"]
    )
    amb = refs["pi_amb · non-chameleon"]
    assert "N=3" in amb["note"] and amb["leakage_bits"] > 0
    assert not any(r.startswith("pi_amb") for r in {g["group"] for g in reference_points(k=2)})


# -- a small table whose numbers are worked by hand ------------------------------------------


def _row(record: int, step: int, model: str, role: str, gain: float, **kw: Any) -> dict[str, Any]:
    k = kw.get("k", 16)
    return {
        "source": "/data/g.jsonl", "record": record, "game_id": f"g{record}", "game": "chameleon",
        "backend": "fake", "step": step, "clues_so_far": step + 1, "player": f"p{step}",
        "role": role, "model": model, "game_model": "a+b", "round": 1, "text": f"c{record}{step}",
        "counted": True, "candidates": [f"w{j}" for j in range(k)],
        "probabilities": [1.0 / k] * k, "entropy_bits": 1.0, "prior_entropy_bits": math.log2(k),
        "information_gain_bits": gain, "kl_bits": 0.0, "secret": "w0",
        "secret_probability": 0.5, "secret_rank": kw.get("rank", 1), "speaker_word": None,
        "category": "Things", "matchup": None, "difficulty": None, "pair": None,
    }  # fmt: skip


@pytest.fixture
def table(tmp_path: Path) -> Path:
    """Game 0: A gives 0.5 and 0.3 (mean 0.4), B 0.1: difference 0.3. Game 1: A 0.2, B 0.4
    and 0.2 (mean 0.3): difference -0.1. Game 2: A alone (0.9): not shared. So A against B
    over the 2 shared games: mean difference (0.3 - 0.1) / 2 = 0.1 bits."""
    rows = [
        _row(0, 0, "A", "non-chameleon", 0.5), _row(0, 1, "B", "non-chameleon", 0.1),
        _row(0, 2, "A", "non-chameleon", 0.3),
        _row(1, 0, "B", "non-chameleon", 0.4), _row(1, 1, "A", "non-chameleon", 0.2),
        _row(1, 2, "B", "non-chameleon", 0.2),
        _row(2, 0, "A", "non-chameleon", 0.9),
    ]  # fmt: skip
    out = tmp_path / "results" / "steps"
    out.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=steps_schema()), out / "part-0.parquet")
    return out.parent


def test_per_statement_only_where_every_game_is_spygame():
    """SpyGame reads each statement on its own; one Chameleon game makes the clues
    accumulate (the report's wording and the service's field come from this one call)."""
    assert per_statement(["spygame", "spygame", None])
    assert not per_statement(["spygame", "chameleon"])
    assert not per_statement(["chameleon"])
    assert not per_statement([])
    assert default_grouping(["spygame"]) == "speaker"
    assert default_grouping(["chameleon", "spygame"]) == "model"


def test_plane_references_belong_to_the_game():
    """Karabag & Topcu's strategies are The Chameleon's: drawn for its games' K, none for
    SpyGame (said so), and for a mixed table labelled as the Chameleon games'."""
    cham = [_row(0, i, "A", "non-chameleon", 0.1, k=8) for i in range(3)]
    spy = [{**r, "game": "spygame", "record": 1} for r in cham]
    refs = plane_references(pa.Table.from_pylist(cham, schema=steps_schema()))
    assert refs["k"] == 8 and not refs["mixed_k"]
    assert {r["model"] for r in refs["references"]} >= {"trivial", "concealing", "revealing"}
    assert all("K=8" in r["note"] for r in refs["references"])
    assert "K = 8" in refs["note"] and "SpyGame" not in refs["note"]
    none = plane_references(pa.Table.from_pylist(spy, schema=steps_schema()))
    assert none == {"references": [], "k": None, "mixed_k": False, "note": NO_REFERENCES}
    both = plane_references(pa.Table.from_pylist(cham + spy, schema=steps_schema()))
    assert both["references"] and "SpyGame has none" in both["note"]
    other_k = [_row(2, 0, "A", "non-chameleon", 0.1, k=4)]
    mixed = plane_references(pa.Table.from_pylist(cham + other_k, schema=steps_schema()))
    assert mixed["mixed_k"] and mixed["k"] == 16 and "different numbers" in mixed["note"]


def test_paired_difference_by_hand(table: Path):
    steps = load_steps(table, "speaker")
    rows = paired_difference(steps, "A", "B", replicates=500)
    assert [r["role"] for r in rows] == ["non-chameleon", "(all roles)"]
    r = rows[0]
    assert (r["shared_games"], r["clues_a"], r["clues_b"]) == (2, 3, 3)
    assert r["mean_gain_a"] == pytest.approx(0.3)  # mean of 0.4 and 0.2, game 2 left out
    assert r["mean_gain_b"] == pytest.approx(0.2)
    assert r["difference_bits"] == pytest.approx(0.1)
    # two games: a replicate draws (0.3, 0.3), (-0.1, -0.1) or one of each
    assert r["difference_low"] == pytest.approx(-0.1) and r["difference_high"] == pytest.approx(0.3)
    with pytest.raises(InvalidInput, match=r"model 'C' gave no counted clue .*A, B"):
        paired_difference(steps, "A", "C")


def test_by_speaker_groups_each_clue_by_its_own_model(table: Path, tmp_path: Path):
    rep = build_site(table, tmp_path / "r", by="speaker", replicates=200, compare=("A", "B"))
    by_group = {r["group"]: r for r in rep.by_group}
    # A's clues: 0.5, 0.3, 0.2, 0.9 over 3 games: ratio of sums 1.9 / 4
    assert by_group["A · non-chameleon"]["mean_gain_bits"] == pytest.approx(1.9 / 4)
    assert by_group["B · non-chameleon"]["mean_gain_bits"] == pytest.approx(0.7 / 3)
    # m = 1: games 0 and 2 start with A (entropy 1.0 each), game 1 with B
    first = {(r["group"], r["metric"]): r["games"] for r in rep.curves if r["m"] == 1}
    assert first[("A · non-chameleon", "entropy_bits")] == 2
    assert first[("B · non-chameleon", "entropy_bits")] == 1
    names = {p.name for p in rep.files}
    assert {"compare.csv", "compare.png", "plane.csv", "plane_clues.csv", "plane.svg"} <= names
    with (tmp_path / "r" / "compare.csv").open() as fh:
        assert float(next(csv.DictReader(fh))["difference_bits"]) == pytest.approx(0.1)
    # a uniform posterior after every clue: y = log2(16 · 1/16) = 0 for every clue
    plane = [r for r in rep.plane if r["kind"] == "data"]
    assert {r["group"] for r in plane} == {"A · non-chameleon", "B · non-chameleon"}
    assert all(r["reveal_bits"] == pytest.approx(0.0) for r in plane)


def test_top_k_only_where_there_are_more_than_k_candidates(tmp_path: Path):
    rows = [_row(g, 0, "A", "civilian", 0.1, k=2, rank=2) for g in range(3)]
    out = tmp_path / "t" / "steps"
    out.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=steps_schema()), out / "p.parquet")
    rep = build_site(out.parent, tmp_path / "r", by="speaker", replicates=50, plane=False)
    metrics = {r["metric"] for r in rep.curves}
    assert metrics == {"entropy_bits", "top1"}  # K = 2: no top-3 or top-5


def test_colours_come_from_the_name_not_the_order():
    assert colour_of("gpt-4o") == colour_of("gpt-4o")
    assert colour_of("gpt-4o") != colour_of("claude-3-5-haiku")
    assert group_colour("gpt-4o · spy") == group_colour("gpt-4o · civilian") == colour_of("gpt-4o")
    assert colour_of("x").startswith("#") and len(colour_of("x")) == 7


# -- real CK-Arena logs, batch-scored with cooccurrence --------------------------------------


def test_ck_arena_models_compared_and_plane(shared_data: Path, tmp_path: Path, leakage_home: Path):
    from leakage.batch import BatchJob, run_batch

    logs = shared_data / "ck-arena-dev" / "logs"
    run_batch(BatchJob(inputs=[logs], out=tmp_path / "b", input_format="ck-arena", workers=0))
    rep = build_site(
        tmp_path / "b", tmp_path / "r", by="speaker", replicates=200,
        compare=("qwen2.5-72b", "deepseek-v3"),
    )  # fmt: skip
    assert rep.games == 227
    groups = {r["group"] for r in rep.by_group}
    assert {"qwen2.5-72b · civilian", "qwen2.5-72b · spy", "deepseek-v3 · spy"} <= groups
    assert not any("+" in g for g in groups)
    assert {r["metric"] for r in rep.curves} == {"entropy_bits", "top1"}  # two words
    civ = next(r for r in rep.compare if r["role"] == "civilian")
    assert civ["shared_games"] > 20
    assert civ["difference_low"] <= civ["difference_bits"] <= civ["difference_high"]
    data = {r["group"]: r for r in rep.plane if r["kind"] == "data"}
    # spies' statements fit the spy word: their mean reveal value is below the civilians'
    assert data["qwen2.5-72b · spy"]["reveal_bits"] < data["qwen2.5-72b · civilian"]["reveal_bits"]
    for r in data.values():
        assert r["leakage_low"] <= r["leakage_bits"] <= r["leakage_high"]
    # SpyGame has no reference strategy of its own: none drawn, and the page says why
    assert not [r for r in rep.plane if r["kind"] == "reference"]
    html = (tmp_path / "r" / "report.html").read_text(encoding="utf-8")
    assert "No reference strategy is drawn" in html
    assert "in the m-th statement, each read on its own" in html


# -- the API ----------------------------------------------------------------------------------


api = plain_api


@pytest.fixture(scope="module")
def job_id(api: Api) -> str:
    from .test_service import wait_job

    body = (EXAMPLES / "chameleon_batch.jsonl").read_bytes() + b'{"not": "a transcript"}\n'
    r = api.post("/v1/jobs", content=body, headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert job["state"] == "done", job
    return str(job["id"])


def test_job_plane_is_the_reports_plane(api: Api, job_id: str, tmp_path: Path, leakage_home: Path):
    from leakage.batch import BatchJob, run_batch

    got = api.get(f"/v1/jobs/{job_id}/plane", params={"replicates": 200}).json()
    assert (got["games"], got["failed"]) == (6, 1)
    run_batch(BatchJob(inputs=[EXAMPLES / "chameleon_batch.jsonl"], out=tmp_path / "b", workers=0))
    rep = build_site(tmp_path / "b", tmp_path / "r", by="speaker", replicates=200)
    want = [r for r in rep.plane if r["kind"] == "data"]
    assert len(got["groups"]) == len(want)
    for g, w in zip(got["groups"], want, strict=True):
        assert g == pytest.approx(w), (g, w)
    assert {r["model"] for r in got["references"]} >= {"trivial", "concealing", "revealing"}
    assert got["points_total"] == len(got["points"]) > 0
    assert set(got["colours"]) == {g["group"] for g in got["groups"]}
    assert "The Chameleon" in got["references_note"] and "K = 16" in got["references_note"]


def test_job_curves_by_speaker(api: Api, job_id: str):
    got = api.get(f"/v1/jobs/{job_id}/curves", params={"by": "speaker"}).json()
    assert got["by"] == "speaker"
    assert all(" · " in g for g in got["groups"])
    assert got["colours"][got["groups"][0]].startswith("#")
    assert all(g["speakers"] is not None for g in got["game_list"])
    assert (got["per_statement"], got["default_by"]) == (False, "model")  # clues accumulate
    assert api.get(f"/v1/jobs/{job_id}/curves", params={"by": "auto"}).json()["by"] == "model"


def test_spygame_job_reads_per_statement_and_has_no_references(api: Api):
    from .test_service import wait_job

    body = (EXAMPLES / "spygame_fruit.json").read_bytes()
    r = api.post("/v1/jobs", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert job["state"] == "done", job
    got = api.get(f"/v1/jobs/{job['id']}/curves").json()
    assert (got["per_statement"], got["default_by"]) == (True, "speaker")
    auto = api.get(f"/v1/jobs/{job['id']}/curves", params={"by": "auto"}).json()
    assert auto["by"] == "speaker" and all(" · " in g for g in auto["groups"])
    plane = api.get(f"/v1/jobs/{job['id']}/plane", params={"replicates": 200}).json()
    assert plane["references"] == [] and plane["references_note"] == NO_REFERENCES
    # from the outside seat: one curve, and the note says the spy's seat gives two dimensions
    assert any("one curve" in n and "seat=spy" in n for n in plane["notes"]), plane["notes"]


def test_job_plane_bad_input(api: Api, job_id: str):
    assert_error(api.get(f"/v1/jobs/{'0' * 32}/plane"), 404, "job_not_found", "id")
    assert_error(api.get("/v1/jobs/nope/plane"), 422, "?")
    assert_error(api.get(f"/v1/jobs/{job_id}/plane", params={"replicates": "x"}), 422, "?")
    assert_error(api.get(f"/v1/jobs/{job_id}/plane", params={"max_points": -1}), 422, "?")
