"""The leaderboard ``leakage.leaderboard/1``: worked by hand on three models and four games,
the role-standardised all-roles row by hand, Holm's correction, and on real CK-Arena logs
(co-occurrence) against figures computed independently from the step table."""

from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage.batch import steps_schema
from leakage.curves import (
    ALL_ROLES_STANDARDISED,
    LEADERBOARD_FORMAT,
    build_site,
    leaderboard,
    leaderboard_records,
    load_outcomes,
    outcomes_from_reports,
)
from leakage.curves._leaderboard import _holm, _p_value, _ranks
from leakage.errors import InvalidInput

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _row(gid: str, step: int, model: str, role: str, gain: float, p: float | None, **kw: Any):
    base = {
        "source": "/hand.jsonl", "record": int(gid[1:]), "game_id": gid, "game": "chameleon",
        "backend": "hand", "step": step, "clues_so_far": 0, "player": f"{model}-{role}",
        "role": role, "model": model, "game_model": None, "round": None, "text": "c",
        "counted": role != "chameleon", "candidates": ["w0", "w1"],
        "probabilities": [0.5, 0.5], "entropy_bits": 1.0, "prior_entropy_bits": 1.0,
        "information_gain_bits": gain, "kl_bits": 0.0, "secret": "w0",
        "secret_probability": p, "secret_rank": 1, "speaker_word": None, "category": "x",
        "matchup": None, "difficulty": None, "pair": None,
    }  # fmt: skip
    return {**base, **kw}


NC, CH = "non-chameleon", "chameleon"
HAND = [
    # g1: A and B give clues, C is the chameleon (not counted); non-chameleons win
    _row("g1", 0, "A", NC, 1.0, 0.5), _row("g1", 1, "B", NC, 0.5, 0.6),
    _row("g1", 2, "C", CH, 0.0, 0.6),
    # g2: A twice, C once, B the chameleon; the chameleon wins
    _row("g2", 0, "A", NC, 0.2, 0.3), _row("g2", 1, "C", NC, 0.6, 0.5),
    _row("g2", 2, "A", NC, 0.4, 0.4), _row("g2", 3, "B", CH, 0.0, 0.4),
    # g3: B and C, A the chameleon; non-chameleons win
    _row("g3", 0, "B", NC, 0.1, 0.55), _row("g3", 1, "C", NC, 0.9, 0.7),
    _row("g3", 2, "A", CH, 0.0, 0.7),
    # g4: A and B, C the chameleon; no outcome known
    _row("g4", 0, "A", NC, 0.5, 0.6), _row("g4", 1, "B", NC, 0.3, 0.45),
    _row("g4", 2, "C", CH, 0.0, 0.45),
]  # fmt: skip
OUTCOMES = {"g1": NC, "g2": CH, "g3": NC, "g4": None}


def test_leaderboard_by_hand():
    """Non-chameleon leakage per clue, Σ gain / Σ clues over the games:
    A (1.0 + 0.2 + 0.4 + 0.5) / 4 = 0.525 in 3 games; B (0.5 + 0.1 + 0.3) / 3 = 0.3 in 3;
    C (0.6 + 0.9) / 2 = 0.75 in 2: B leaks least (rank 1), then A, then C.
    Own word (the secret) after A's clues: (0.5 + 0.3 + 0.4 + 0.6) / 4 = 0.45.
    Win rates where the outcome is known (g4 has none): A as non-chameleon won g1, lost g2:
    0.5 of 2; B won g1 and g3: 1.0 of 2; C lost g2, won g3: 0.5. As chameleon: B won g2 (1.0),
    A lost g3 (0.0), C lost g1 (0.0 of 1: g4 unknown). The chameleons' clues are not counted:
    no leakage, no rank. One role with counted clues: no all-roles rows."""
    board = leaderboard(HAND, outcomes=OUTCOMES, reveal=False, replicates=400, seed=3, min_games=1)
    assert board.format == LEADERBOARD_FORMAT and board.games == 4 and board.reader == "hand"
    rows = {(r.role, r.model): r for r in board.rows}
    assert [(r.role, r.model) for r in board.rows][:3] == [(NC, "B"), (NC, "A"), (NC, "C")]
    a, b, c = rows[(NC, "A")], rows[(NC, "B")], rows[(NC, "C")]
    assert (a.leakage_bits, b.leakage_bits, c.leakage_bits) == pytest.approx((0.525, 0.3, 0.75))
    assert (a.clues, a.games, b.clues, b.games, c.clues, c.games) == (4, 3, 3, 3, 2, 2)
    assert (b.rank, a.rank, c.rank) == (1, 2, 3)
    assert a.own_word_probability == pytest.approx(0.45)
    assert (a.win_rate, b.win_rate, c.win_rate) == pytest.approx((0.5, 1.0, 0.5))
    assert (a.games_with_outcome, b.games_with_outcome, c.games_with_outcome) == (2, 2, 2)
    assert a.unit == "clue" and a.reveal_bits is None
    for role, model, win in [(CH, "B", 1.0), (CH, "A", 0.0), (CH, "C", 0.0)]:
        r = rows[(role, model)]
        assert r.win_rate == pytest.approx(win) and r.games_with_outcome == 1
        assert r.leakage_bits is None and r.rank is None and r.clues == 0
    assert not any(r.role == ALL_ROLES_STANDARDISED for r in board.rows)
    for r in (a, b, c):
        assert r.leakage_low <= r.leakage_bits <= r.leakage_high
        assert 1 <= r.rank_low <= r.rank <= r.rank_high <= 3
    # Same seed, same board; the records carry every CSV column.
    again = leaderboard(HAND, outcomes=OUTCOMES, reveal=False, replicates=400, seed=3, min_games=1)
    assert again == board
    assert leaderboard_records(board)[0]["model"] == "B"
    # C spoke in 2 games as a non-chameleon: with min_games 3 it keeps its figures, unranked
    strict = leaderboard(HAND, outcomes=OUTCOMES, reveal=False, replicates=100, min_games=3)
    c3 = next(r for r in strict.rows if (r.role, r.model) == (NC, "C"))
    assert c3.rank is None and c3.leakage_bits == pytest.approx(0.75) and not c3.not_separable_from
    assert "chameleon · non-chameleon: 1 model(s) with fewer than 3 games shown unranked" in (
        strict.notes
    )
    assert not any(p.model_a == "C" or p.model_b == "C" for p in strict.pairs)


def test_leaderboard_intervals_are_the_bootstrap_over_games():
    """The intervals, rank intervals and pairwise p-values, recomputed here by resampling the
    four games directly (the games numbered in the order of the table, sorted by source,
    record and step; the draws those of ``rng.integers(0, 4, (R, 4))``)."""
    replicates, seed = 300, 11
    board = leaderboard(
        HAND, outcomes=OUTCOMES, reveal=False, replicates=replicates, seed=seed, min_games=1
    )
    sums = defaultdict(lambda: np.zeros(4))
    counts = defaultdict(lambda: np.zeros(4))
    for r in HAND:
        if r["counted"]:
            g = int(r["game_id"][1:]) - 1
            sums[r["model"]][g] += r["information_gain_bits"]
            counts[r["model"]][g] += 1
    draws = np.random.default_rng(seed).integers(0, 4, (replicates, 4))
    w = np.stack([np.bincount(d, minlength=4) for d in draws]).astype(float)
    models = ["A", "B", "C"]
    with np.errstate(invalid="ignore", divide="ignore"):
        est = np.stack([(w @ sums[m]) / (w @ counts[m]) for m in models], axis=1)
    rows = {r.model: r for r in board.rows if r.role == NC}
    for j, m in enumerate(models):
        lo, hi = np.nanquantile(est[:, j], [0.025, 0.975])
        assert rows[m].leakage_low == pytest.approx(lo)
        assert rows[m].leakage_high == pytest.approx(hi)
    v = np.where(np.isfinite(est), est, np.inf)
    rank = np.where(np.isfinite(est), (v[:, None, :] < v[:, :, None]).sum(axis=2) + 1.0, np.nan)
    for j, m in enumerate(models):
        lo, hi = np.nanquantile(rank[:, j], [0.025, 0.975])
        assert (rows[m].rank_low, rows[m].rank_high) == (math.floor(lo), math.ceil(hi))
    pairs = {(p.model_a, p.model_b): p for p in board.pairs if p.role == NC}
    raw = []
    for a, b in [("B", "A"), ("B", "C"), ("A", "C")]:
        d = est[:, models.index(a)] - est[:, models.index(b)]
        d = d[np.isfinite(d)]
        observed = rows[a].leakage_bits - rows[b].leakage_bits
        p = math.erfc(abs(observed) / d.std(ddof=1) / math.sqrt(2))
        raw.append(p)
        assert pairs[(a, b)].p_value == pytest.approx(p)
    order = np.argsort(raw)
    holm = np.maximum.accumulate([min(1.0, (3 - i) * raw[k]) for i, k in enumerate(order)])
    for i, k in enumerate(order):
        a, b = [("B", "A"), ("B", "C"), ("A", "C")][k]
        assert pairs[(a, b)].p_holm == pytest.approx(holm[i])
        if holm[i] >= 0.05:
            assert b in rows[a].not_separable_from and a in rows[b].not_separable_from


def test_holm_and_p_value_by_hand():
    """Holm: p = (0.01, 0.04, 0.03) sorted 0.01, 0.03, 0.04 times 3, 2, 1 = 0.03, 0.06, 0.04,
    made monotone: 0.03, 0.06, 0.06. The p of an observed difference 1.96 with replicates
    (-1, 1), standard deviation sqrt 2: z = 1.386, p = 2 Φ(-1.386) = 0.1658; of 1.96 · sqrt 2
    with replicates (0, 2): z = 1.96, p = 0.05; no difference and no spread: 1; no
    replicates: NaN. Competition ranks of (0.3, 0.1, 0.3, NaN): 2, 1, 2, NaN."""
    assert _holm(np.array([0.01, 0.04, 0.03])).tolist() == pytest.approx([0.03, 0.06, 0.06])
    holm = _holm(np.array([0.02, np.nan]))
    assert holm[0] == pytest.approx(0.04) and math.isnan(holm[1])
    # no replicates: figures without intervals, no pair called separable
    bare = leaderboard(HAND, outcomes=OUTCOMES, reveal=False, replicates=0, min_games=1)
    assert all(r.leakage_low is None and r.rank_low is None for r in bare.rows)
    assert bare.pairs and not any(p.separable for p in bare.pairs)
    assert _p_value(np.array([-1.0, 1.0]), 1.96) == pytest.approx(0.16576, abs=1e-4)
    assert _p_value(np.array([0.0, 2.0]), 1.96 * math.sqrt(2)) == pytest.approx(0.05, abs=1e-4)
    assert _p_value(np.array([1.0, 1.0]), 0.0) == 1.0
    assert math.isnan(_p_value(np.array([np.nan]), 0.3))
    got = _ranks(np.array([0.3, 0.1, 0.3, np.nan]))
    assert got[:3].tolist() == [2.0, 1.0, 2.0] and math.isnan(got[3])


def _spy(gid: str, step: int, model: str, role: str, gain: float) -> dict[str, Any]:
    return _row(
        gid, step, model, role, gain, 0.6, game="spygame", pair="sun|moon", secret="sun",
        speaker_word="sun" if role == "civilian" else "moon", category=None, counted=True,
    )  # fmt: skip


def test_all_roles_rows_are_standardised_by_hand():
    """SpyGame, X and Y in both roles. Civilian: X (0.2 + 0.4) / 2 = 0.3, Y (0.5 + 0.1 + 0.3)
    / 3 = 0.3; spy: X 0.3, Y 0.1. Z spoke twice, only as a civilian: no all-roles row for it,
    but its statements count in the weights. Civilians gave 7 of the 9 statements, so the
    weights are 7/9 and 2/9: X 0.3, Y 7/9 · 0.3 + 2/9 · 0.1 = 0.2556 (Y's plain mean over
    its four statements, 0.25, is moved by its own mix of roles, 3/4 civilian)."""
    rows = [
        _spy("g1", 0, "X", "civilian", 0.2), _spy("g1", 1, "X", "civilian", 0.4),
        _spy("g1", 2, "Y", "spy", 0.1),
        _spy("g2", 0, "X", "spy", 0.3), _spy("g2", 1, "Y", "civilian", 0.5),
        _spy("g2", 2, "Y", "civilian", 0.1), _spy("g2", 3, "Y", "civilian", 0.3),
        _spy("g2", 4, "Z", "civilian", 0.4), _spy("g2", 5, "Z", "civilian", 0.2),
    ]  # fmt: skip
    board = leaderboard(rows, reveal=False, replicates=200, min_games=1)
    std = {r.model: r for r in board.rows if r.role == ALL_ROLES_STANDARDISED}
    assert set(std) == {"X", "Y"}
    assert std["X"].leakage_bits == pytest.approx(0.3)
    assert std["Y"].leakage_bits == pytest.approx(7 / 9 * 0.3 + 2 / 9 * 0.1)
    assert (std["Y"].rank, std["X"].rank) == (1, 2)
    assert (std["X"].clues, std["X"].games) == (3, 2)
    assert all(r.unit == "statement" for r in board.rows)
    assert board.rows[-1].role == ALL_ROLES_STANDARDISED  # after the per-role rows
    assert "none: the step table has no outcome column" in board.outcomes
    assert all(r.win_rate is None for r in board.rows)


def test_no_all_roles_rows_for_the_chameleon():
    """With the chameleon's clues counted, the Chameleon has two roles with clues, but the
    chameleon holds no word: its gain is not leakage of a secret of its own, so no all-roles
    row mixes the two, and the board says why."""
    counted = [{**r, "counted": True, "information_gain_bits": 0.2} if r["role"] == CH else r
               for r in HAND]  # fmt: skip
    board = leaderboard(counted, reveal=False, replicates=50, min_games=1)
    assert {r.role for r in board.rows} == {NC, CH}
    assert any(n.startswith("chameleon: no all-roles rows") for n in board.notes)
    cham = [r for r in board.rows if r.role == CH]
    assert all(r.leakage_bits == pytest.approx(0.2) and r.rank == 1 for r in cham)


def test_leaderboard_bad_input_names_what_is_wrong(tmp_path: Path):
    with pytest.raises(InvalidInput, match="missing columns"):
        leaderboard([{"model": "A"}])
    with pytest.raises(InvalidInput, match="no such file"):
        leaderboard(tmp_path / "nothing")
    no_clue = [{**r, "counted": False} for r in HAND]
    with pytest.raises(InvalidInput, match="no counted clue"):
        leaderboard(no_clue, reveal=False)
    bad = tmp_path / "reports.jsonl"
    bad.write_text('{"game_id": "g1", "meta": {"winner_role": "spy"}}\n[1]\n')
    with pytest.raises(InvalidInput, match=r"line 2: not a leakage.report/1"):
        load_outcomes(tmp_path)


def test_outcomes_from_reports_and_shared_ids(tmp_path: Path):
    """Outcomes come from reports.jsonl's meta.winner_role by game id; an id listed twice with
    different outcomes has none, and so has an id two games of the table share."""
    (tmp_path / "reports.jsonl").write_text(
        "".join(
            json.dumps({"game_id": g, "meta": {"winner_role": w}}) + "\n"
            for g, w in [("g1", NC), ("g2", CH), ("g2", NC), ("g3", NC)]
        )
    )
    assert load_outcomes(tmp_path) == {"g1": NC, "g2": None, "g3": NC}
    assert outcomes_from_reports([{"game_id": "x", "meta": {"winner_role": "spy"}}]) == {"x": "spy"}
    with pytest.raises(InvalidInput, match=r"report 1: not a leakage\.report/1"):
        outcomes_from_reports([{"game_id": "x"}, {"meta": {}}])
    steps = tmp_path / "steps"
    steps.mkdir()
    shared = [
        {**r, "game_id": "g1"} if r["game_id"] == "g4" else r for r in HAND
    ]  # g1 and g4 now share an id
    old = steps_schema().remove(steps_schema().get_field_index("winner_role"))
    pq.write_table(pa.Table.from_pylist(shared, schema=old), steps / "part-0.parquet")
    board = leaderboard(tmp_path, reveal=False, replicates=50)
    # a table written before its outcome column: from reports.jsonl
    assert board.outcomes.startswith(f"meta.winner_role in {tmp_path / 'reports.jsonl'}")
    assert "1 of 4 games" in board.outcomes  # only g3 is known and unambiguous
    b = next(r for r in board.rows if (r.role, r.model) == (NC, "B"))
    assert (b.win_rate, b.games_with_outcome) == (1.0, 1)


def _results(where: Path, parts: list[tuple[list[dict[str, Any]], bool]]) -> Path:
    """A results folder: each part's rows, with or without the outcome column, and a
    reports.jsonl whose outcomes are all the chameleon's (not the table's)."""
    (where / "steps").mkdir(parents=True)
    for i, (rows, with_outcomes) in enumerate(parts):
        schema = steps_schema()
        if not with_outcomes:
            schema = schema.remove(schema.get_field_index("winner_role"))
            rows = [{k: v for k, v in r.items() if k != "winner_role"} for r in rows]
        table = pa.Table.from_pylist(rows, schema=schema)
        pq.write_table(table, where / "steps" / f"part-{i}.parquet")
    (where / "reports.jsonl").write_text(
        "".join(json.dumps({"game_id": g, "meta": {"winner_role": CH}}) + "\n" for g in OUTCOMES)
    )
    return where


def test_win_rates_come_from_the_tables_outcome_column(tmp_path: Path, leakage_home: Path):
    """One rule, whoever asks: a results folder whose step table holds ``winner_role``
    (OUTCOMES by hand) takes the win rates from it, not from reports.jsonl (which says the
    chameleon won every game): A as non-chameleon 0.5 of 2, B 1.0 of 2 (test_leaderboard_by_hand),
    in leaderboard(), game_outcomes() and report.html. A folder with a part written before the
    column takes them all from reports.jsonl (A and B then lose every game)."""
    from leakage.curves import game_outcomes

    rows = [{**r, "winner_role": OUTCOMES[r["game_id"]]} for r in HAND]
    new = _results(tmp_path / "new", [(rows, True)])
    outcomes, source = game_outcomes(new)
    assert outcomes == OUTCOMES and source == "the step table's winner_role column"
    board = leaderboard(new, reveal=False, replicates=50, min_games=1)
    assert board.outcomes == "the step table's winner_role column, matched on game_id: 3 of 4 games"
    win = {(r.role, r.model): r.win_rate for r in board.rows}
    assert (win[(NC, "A")], win[(NC, "B")], win[(CH, "B")]) == pytest.approx((0.5, 1.0, 1.0))
    assert board == leaderboard(rows, reveal=False, replicates=50, min_games=1)
    site = build_site(new, tmp_path / "site", replicates=50, plane=False, min_games=1)
    html = (tmp_path / "site" / "report.html").read_text(encoding="utf-8")
    assert "Win rates: the step table&#x27;s winner_role column" in html or (
        "Win rates: the step table's winner_role column" in html
    )
    assert site.leaderboard == board
    # parts before and after the column (a run resumed): reports.jsonl for every game
    mixed = _results(
        tmp_path / "mixed",
        [([r for r in rows if r["game_id"] in ("g1", "g2")], False),
         ([r for r in rows if r["game_id"] in ("g3", "g4")], True)],
    )  # fmt: skip
    board = leaderboard(mixed, reveal=False, replicates=50, min_games=1)
    assert board.outcomes.startswith(f"meta.winner_role in {mixed / 'reports.jsonl'}")
    win = {(r.role, r.model): r.win_rate for r in board.rows}
    assert (win[(NC, "A")], win[(NC, "B")], win[(CH, "B")]) == pytest.approx((0.0, 0.0, 1.0))
    # the caller's reports decide over reports.jsonl for such a table; none at all is said
    given = [{"game_id": "g1", "meta": {"winner_role": NC}}]
    board = leaderboard(mixed, reports=given, reports_source="my reports", reveal=False,
                        replicates=50, min_games=1)  # fmt: skip
    assert board.outcomes == "my reports, matched on game_id: 1 of 4 games"
    (mixed / "reports.jsonl").unlink()
    board = leaderboard(mixed, reveal=False, replicates=50, min_games=1)
    assert board.outcomes.startswith("none: the step table has no outcome column")
    # the column held, every outcome null: said so
    unknown = [{**r, "winner_role": None} for r in HAND]
    assert leaderboard(unknown, reveal=False, replicates=50).outcomes == (
        "none: no game has a known outcome in the step table's winner_role column"
    )


# -- real CK-Arena logs, batch-scored with co-occurrence ---------------------------------------


def test_ck_arena_leaderboard_equals_the_step_table(
    shared_data: Path, tmp_path: Path, leakage_home: Path
):
    """Every row's counts and figures recomputed here from the Parquet rows and
    reports.jsonl; leakage and reveal also equal the report's leakage-by-speaker and plane."""
    from leakage.batch import BatchJob, run_batch

    logs = shared_data / "ck-arena-dev" / "logs"
    out = tmp_path / "b"
    run_batch(BatchJob(inputs=[logs], out=out, input_format="ck-arena", workers=0))
    board = leaderboard(out, replicates=200)
    assert board.games == 227 and board.reader == "cooccurrence"
    assert "227 of 227 games" in board.outcomes
    assert "lower bound" in board.reader_note
    winners = {}
    for line in (out / "reports.jsonl").read_text().splitlines():
        rep = json.loads(line)
        winners[rep["game_id"]] = rep["meta"]["winner_role"]
    gain, prob, clues = defaultdict(float), defaultdict(float), defaultdict(int)
    games, won = defaultdict(set), defaultdict(set)
    for r in pq.read_table(out / "steps").to_pylist():
        key = (r["role"], r["model"])
        games[key].add(r["game_id"])
        if winners[r["game_id"]] == r["role"]:
            won[key].add(r["game_id"])
        if r["counted"]:
            gain[key] += r["information_gain_bits"]
            prob[key] += r["secret_probability"]
            clues[key] += 1
    per_role = [r for r in board.rows if r.role != ALL_ROLES_STANDARDISED]
    assert {(r.role, r.model) for r in per_role} == set(games)
    for r in per_role:
        key = (r.role, r.model)
        assert (r.clues, r.games, r.games_with_outcome) == (
            clues[key],
            len(games[key]),
            len(games[key]),
        )
        assert r.leakage_bits == pytest.approx(gain[key] / clues[key])
        assert r.own_word_probability == pytest.approx(prob[key] / clues[key])
        assert r.win_rate == pytest.approx(len(won[key]) / len(games[key]))
        assert r.unit == "statement"
    for role in ("civilian", "spy"):
        ranked = [r for r in per_role if r.role == role and r.rank is not None]
        assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))
        assert all(r.rank_low <= r.rank <= r.rank_high for r in ranked)
        assert [r.leakage_bits for r in ranked] == sorted(r.leakage_bits for r in ranked)
        # fewer than 10 games: shown after the ranked rows, without rank or tests
        assert all(r.games < 10 for r in per_role if r.role == role and r.rank is None)
    assert {r.role for r in board.rows} == {"civilian", "spy", ALL_ROLES_STANDARDISED}
    # a standardised row is ranked only when the model has 10 games in each role
    games_of = {(r.role, r.model): r.games for r in per_role}
    for r in board.rows:
        if r.role == ALL_ROLES_STANDARDISED:
            enough = min(games_of[("civilian", r.model)], games_of[("spy", r.model)]) >= 10
            assert (r.rank is not None) == enough, r.model
    rep = build_site(out, tmp_path / "r", by="speaker", replicates=200)
    by_group = {g["group"]: g for g in rep.by_group}
    plane = {p["group"]: p for p in rep.plane if p["kind"] == "data"}
    for r in per_role:
        group = f"{r.model} · {r.role}"
        assert r.leakage_bits == pytest.approx(by_group[group]["mean_gain_bits"])
        assert r.reveal_bits == pytest.approx(plane[group]["reveal_bits"])
    n = sum(1 for r in board.rows if r.role == "civilian" and r.rank is not None)
    assert len([p for p in board.pairs if p.role == "civilian"]) == n * (n - 1) // 2


# -- colours -----------------------------------------------------------------------------------


def test_colours_are_distinct_within_a_job_and_the_same_in_every_view():
    """The models of a job get distinct colours, assigned by sorted name from one fixed
    sequence: gpt-4o and o1 (two near-identical ochres under the name hash) differ, a view's
    other names (a '+'-joined group) come after the models and do not move them, and no two
    of the first 22 colours are closer than ΔE76 27 in CIELAB (40: 25, 64: 20)."""
    import itertools

    from leakage.curves import assign_colours, group_colour
    from leakage.curves._colours import _lab, colour_sequence

    job = ["o1", "gpt-4o", "qwen2.5-32b", None, "gemini-2.5-pro-thinking", "gpt-5"]
    curves_view = assign_colours(job, ["gpt-4o+o1", "o1"])
    plane_view = assign_colours(job)
    assert {m: curves_view[m] for m in plane_view} == plane_view
    assert len(set(curves_view.values())) == len(curves_view) == 6
    assert list(plane_view) == sorted(m for m in job if m)
    assert group_colour("o1 · spy", plane_view) == plane_view["o1"] != plane_view["gpt-4o"]
    assert group_colour("unseen", plane_view).startswith("#")  # the name-hash fallback
    lab = np.asarray(_lab(colour_sequence()))

    def closest(n: int) -> float:
        pairs = itertools.combinations(range(n), 2)
        return min(float(np.linalg.norm(lab[i] - lab[j])) for i, j in pairs)

    assert closest(22) > 27 and closest(40) > 25 and closest(64) > 20
    many = assign_colours([f"m{i}" for i in range(80)])  # past the sequence: hue wheel
    assert len(set(many.values())) == 80


# -- leakage report --leaderboard ---------------------------------------------------------------


def test_report_leaderboard_cli(tmp_path: Path, leakage_home: Path):
    """`leakage report --leaderboard`: the table printed, leaderboard.csv / .json /
    _pairs.csv written, and report.html opening with the leaderboard and the reader's
    lower-bound sentence; the CSV holds the JSON's rows."""
    import csv

    from typer.testing import CliRunner

    from leakage.batch import BatchJob, run_batch
    from leakage.cli import app

    from .conftest import EXAMPLES

    run_batch(BatchJob(inputs=[EXAMPLES / "chameleon_batch.jsonl"], out=tmp_path / "b", workers=0))
    out = tmp_path / "r"
    r = CliRunner().invoke(
        app,
        ["report", str(tmp_path / "b"), "--out", str(out), "--bootstrap", "100", "--leaderboard"],
    )
    assert r.exit_code == 0, r.output
    assert "chameleon · non-chameleon" in r.output and "leakage bits/clue" in r.output
    assert "lower bound set by the reader that computed it, cooccurrence" in r.output
    # the examples record no winner; the batch's table holds the (null) outcome column
    assert "Win rates: none: no game has a known outcome in the step table's" in r.output
    # the chameleons gave no counted clue and the examples record no winner: left out, said so
    assert "chameleon · chameleon: 5 model(s) left out" in r.output
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["format"] == LEADERBOARD_FORMAT and board["games"] == 6
    assert {x["role"] for x in board["rows"]} == {"non-chameleon"}
    with (out / "leaderboard.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert [(x["role"], x["model"]) for x in rows] == [
        (x["role"], x["model"]) for x in board["rows"]
    ]
    for x, y in zip(rows, board["rows"], strict=True):
        if y["leakage_bits"] is not None:
            assert float(x["leakage_bits"]) == pytest.approx(y["leakage_bits"])
    assert (out / "leaderboard_pairs.csv").is_file()
    assert (out / "leaderboard.png").stat().st_size > 5_000
    assert "chameleon · non-chameleon" in (out / "leaderboard.svg").read_text()
    html = (out / "report.html").read_text()
    first = html.index("<h2>")
    assert html[first:].startswith("<h2>Leaderboard: which model leaks least</h2>")  # first
    assert html.index("names the secret on 8-word cards") < html.index("<h2>Data")
