"""A job's records (``GET /v1/jobs/{id}/records``) and ``results?format=parquet`` are drawn from
its step table (``leakage.batch.game_records``) and answer exactly what they answered when
they were read from the stored reports (issue 40); the table holds each game's outcome
(``winner_role``), and the leaderboard route reads its win rates from it.

:func:`records_from_reports` and :func:`parquet_from_reports` are the two views as they were
before the move (main at f33d93b, word for word but for their names): the oracle the new ones
are compared with, on jobs of every kind of record: Chameleon and SpyGame games, a game with no
turn, a failed record, ``top_k``, games scored from a player's seat, and 12 CK-Arena logs. (The
first four jobs through main's own server gave the same records and Parquet rows, checked once
by a script outside the suite.)
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLES
from .test_service import Api, settings_for, wait_job

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def records_from_reports(store: Any, job_id: str) -> list[dict[str, Any]]:
    """``job_records`` before the move: one line per stored result, from its JSON."""
    out = []
    for idx, ok, body in store.results(job_id):
        doc = json.loads(body)
        summary = doc.get("summary") or {} if ok else {}
        err = {} if ok else doc.get("error") or {}
        meta = doc.get("meta") or {} if ok else {}
        out.append(
            {
                "record": idx, "ok": ok, "game_id": doc.get("game_id"), "game": doc.get("game"),
                "turns": len(doc.get("steps") or []) if ok else None,
                "counted": summary.get("counted_turns"),
                "final_entropy_bits": summary.get("final_entropy_bits"),
                "final_secret_probability": summary.get("final_secret_probability"),
                "final_secret_rank": summary.get("final_secret_rank"),
                "matchup": _text(meta.get("matchup")),
                "difficulty": _text(meta.get("difficulty")),
                "error_type": err.get("type"), "error_message": err.get("message"),
                "error_field": err.get("field"),
            }
        )  # fmt: skip
    return out


def parquet_from_reports(store: Any, job_id: str) -> Any:
    """``results_parquet`` before the move, as a ``pyarrow.Table``."""
    columns: dict[str, list[Any]] = {
        k: []
        for k in (
            "record", "ok", "game_id", "game", "backend", "final_entropy_bits",
            "final_secret_probability", "final_secret_rank", "error_type", "error_message",
            "body",
        )
    }  # fmt: skip
    for idx, ok, body in store.results(job_id):
        doc = json.loads(body)
        summary = doc.get("summary", {}) if ok else {}
        err = {} if ok else doc.get("error", {})
        row = {
            "record": idx, "ok": ok, "game_id": doc.get("game_id"), "game": doc.get("game"),
            "backend": doc.get("backend"),
            "final_entropy_bits": summary.get("final_entropy_bits"),
            "final_secret_probability": summary.get("final_secret_probability"),
            "final_secret_rank": summary.get("final_secret_rank"),
            "error_type": err.get("type"), "error_message": err.get("message"), "body": body,
        }  # fmt: skip
        for k, v in row.items():
            columns[k].append(v)
    schema = pa.schema(
        [
            ("record", pa.int64()), ("ok", pa.bool_()), ("game_id", pa.string()),
            ("game", pa.string()), ("backend", pa.string()),
            ("final_entropy_bits", pa.float64()), ("final_secret_probability", pa.float64()),
            ("final_secret_rank", pa.int64()), ("error_type", pa.string()),
            ("error_message", pa.string()), ("body", pa.string()),
        ]
    )  # fmt: skip
    return pa.table(columns, schema=schema)


def _body() -> bytes:
    """Chameleon and SpyGame games (two with an outcome), a game with no turn, a record that
    fails, as one JSONL upload."""
    lines = (EXAMPLES / "chameleon_batch.jsonl").read_text(encoding="utf-8").splitlines()
    games = [json.loads(line) for line in lines if line.strip()][:3]
    games[0]["meta"] = {**games[0].get("meta", {}), "winner_role": "chameleon"}
    silent = {**games[1], "id": "no-turns", "turns": []}
    fruit = json.loads((EXAMPLES / "spygame_fruit.json").read_text(encoding="utf-8"))
    fruit["meta"]["winner_role"] = "civilian"
    two = json.loads((EXAMPLES / "spygame_two_spies.json").read_text(encoding="utf-8"))
    broken = {"format": "leakage.transcript/1", "game": "chameleon", "id": "broken"}
    records = [games[0], fruit, silent, broken, games[1], two, games[2]]
    return "".join(json.dumps(r) + "\n" for r in records).encode()


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Any:
    api = Api(settings_for(tmp_path_factory.mktemp("records"), default_index))
    yield api
    api.close()


def _job(api: Api, body: bytes | None = None, **params: Any) -> str:
    r = api.post(
        "/v1/jobs", params=params, content=_body() if body is None else body,
        headers={"content-type": "application/x-ndjson"},
    )  # fmt: skip
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"], timeout=600)
    assert job["state"] == "done", job
    return str(job["id"])


@pytest.mark.parametrize(
    "params",
    [{}, {"top_k": 2}, {"seat": "non-chameleon"}, {"seat": "civilian"}],
    ids=["default", "top_k", "non-chameleon", "civilian"],
)
def test_records_and_parquet_are_what_the_reports_gave(api: Api, params: dict[str, Any]):
    job_id = _job(api, **params)
    want = _same_as_from_reports(api, job_id)
    assert any(not r["ok"] for r in want) and any(r["ok"] for r in want)
    spy = [r["final_secret_probability"] for r in want if r["game"] == "spygame"]
    # from a player's seat a SpyGame's final P(secret) is its last step's; from outside, none
    assert bool(spy) == (params.get("seat") != "non-chameleon")  # not a seat of SpyGame
    assert all((p is not None) == (params.get("seat") == "civilian") for p in spy)


def test_a_ck_arena_jobs_records_and_parquet_are_what_the_reports_gave(api: Api, shared_data: Path):
    logs = sorted((shared_data / "ck-arena-dev" / "logs").glob("*.json"))[:12]
    body = "".join(json.dumps(json.loads(p.read_text(encoding="utf-8"))) + "\n" for p in logs)
    job_id = _job(api, body.encode(), input_format="ck-arena")
    want = _same_as_from_reports(api, job_id)
    assert len(want) == 12 and all(r["ok"] and r["turns"] for r in want)


def _same_as_from_reports(api: Api, job_id: str) -> list[dict[str, Any]]:
    """Assert that the job's records and Parquet export are what its reports gave; its
    records."""
    store = api.state.store
    want = records_from_reports(store, job_id)
    r = api.get(f"/v1/jobs/{job_id}/records")
    assert r.status_code == 200, r.text
    assert r.json()["records"] == want
    r = api.get(f"/v1/jobs/{job_id}/results", params={"format": "parquet"})
    assert r.status_code == 200, r.text
    got = pq.read_table(io.BytesIO(r.content))
    expected = parquet_from_reports(store, job_id)
    assert got.schema.equals(expected.schema)
    assert got.to_pylist() == expected.to_pylist()
    return want


def test_the_records_of_games_come_from_the_step_table(api: Api, monkeypatch):
    """Only a game without step rows (the one with no turns) reads its stored report."""
    job_id = _job(api)
    store = api.state.store
    read: list[int] = []
    page = store.results_page

    def counted(job: str, after: int = -1, limit: int = 200) -> Any:
        read.append(after + 1)
        return page(job, after, limit)

    monkeypatch.setattr(store, "results_page", counted)
    lines = api.get(f"/v1/jobs/{job_id}/records").json()["records"]
    silent = [r["record"] for r in lines if r["game_id"] == "no-turns"]
    assert read == silent == [2]


def test_the_step_table_holds_each_games_outcome(api: Api):
    job_id = _job(api)
    store = api.state.store
    table = api.state.steps.get(job_id, store.results_dir(job_id)).table
    outcome = dict(zip(table["game_id"].to_pylist(), table["winner_role"].to_pylist(), strict=True))
    assert outcome["example-spygame-mango-papaya"] == "civilian"
    assert outcome["example-chameleon-fruits"] == "chameleon"
    assert outcome["example-spygame-violin-cello-two-spies"] is None
    from leakage.curves import outcomes_from_reports, outcomes_from_steps

    reports = [json.loads(b) for _, ok, b in store.results(job_id) if ok]
    from_reports = outcomes_from_reports(reports)
    assert outcomes_from_steps(table) == {k: from_reports[k] for k in outcome}


def test_a_table_without_outcomes_reads_and_ranks_from_the_reports(api: Api):
    """Parts written before the table held outcomes (no ``winner_role`` column) still read,
    as null, and the leaderboard's win rates then come from the job's reports, as before."""
    job_id = _job(api)
    store = api.state.store
    params = {"replicates": 200}
    before = api.get(f"/v1/jobs/{job_id}/leaderboard", params=params).json()
    assert any(r["win_rate"] is not None for r in before["rows"])
    assert before["outcomes"].startswith("the step table's winner_role column")
    page = api.get(f"/v1/jobs/{job_id}/report.html", params={"replicates": 100}).text
    assert _win_rates(page).startswith("the step table's winner_role column, matched on game_id")
    steps = store.results_dir(job_id) / "steps"
    for part in steps.glob("part-*.parquet"):
        pq.write_table(pq.read_table(part).drop_columns(["winner_role"]), part)
    api.state.steps.forget(job_id)
    held = api.state.steps.get(job_id, steps.parent)
    assert held.table.num_rows and held.table["winner_role"].null_count == held.table.num_rows
    after = api.get(f"/v1/jobs/{job_id}/leaderboard", params=params).json()
    assert after["outcomes"].startswith("the job's stored reports' meta.winner_role")
    assert {**after, "outcomes": ""} == {**before, "outcomes": ""}
    page = api.get(f"/v1/jobs/{job_id}/report.html", params={"replicates": 100}).text
    assert _win_rates(page).startswith("the job's stored reports' meta.winner_role, matched")


def _win_rates(page: str) -> str:
    """The leaderboard's source sentence in a report.html ("Win rates: ...")."""
    import html

    text = html.unescape(page)
    return text[text.index("Win rates: ") + len("Win rates: ") :]
