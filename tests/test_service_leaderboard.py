"""``GET /v1/jobs/{id}/leaderboard``: a CK-Arena job's leaderboard (JSON and CSV) is the
library's (``leakage.curves.leaderboard`` on the job's own step table, with its reports'
outcomes), a job with nothing to rank is a 409, bad options a 422, and the schema lists it."""

from __future__ import annotations

import csv
import io
import json

import pytest

from leakage.curves import (
    LEADERBOARD_COLUMNS,
    LEADERBOARD_FORMAT,
    leaderboard,
    leaderboard_records,
    outcomes_from_reports,
    outcomes_from_steps,
)

from .conftest import SHARED_DATA
from .test_service import Api, assert_error, plain_api, wait_job

CK_ARENA = SHARED_DATA / "ck-arena-dev" / "logs"
N_LOGS = 24
REPLICATES = 200


api = plain_api


@pytest.fixture(scope="module")
def ck_job(api: Api) -> str:
    """A job of the first CK-Arena dev logs (co-occurrence), several files in one upload."""
    if not CK_ARENA.is_dir():
        pytest.skip(f"needs the CK-Arena dev logs in {CK_ARENA}")
    logs = sorted(CK_ARENA.glob("*.json"))[:N_LOGS]
    parts = [("file", (p.name, p.read_bytes(), "application/json")) for p in logs]
    r = api.post("/v1/jobs", params={"input_format": "ck-arena"}, files=parts)
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"], timeout=300)
    assert job["state"] == "done" and job["failed"] == 0, job
    return str(job["id"])


def library_board(api: Api, job_id: str) -> dict:
    """The library's leaderboard of the job's committed Parquet parts and stored reports,
    read here without the service's code."""
    steps = api.state.store.results_dir(job_id) / "steps"
    reports = [
        json.loads(line)
        for line in api.get(f"/v1/jobs/{job_id}/results").text.splitlines()
        if line.strip()
    ]
    board = leaderboard(steps, reports=reports, replicates=REPLICATES)  # the one rule
    # the table holds the outcomes the reports give
    assert outcomes_from_steps(steps) == outcomes_from_reports(reports)
    return board.model_dump()


def test_a_ck_arena_jobs_leaderboard_is_the_librarys(api: Api, ck_job: str) -> None:
    r = api.get(f"/v1/jobs/{ck_job}/leaderboard", params={"replicates": REPLICATES})
    assert r.status_code == 200, r.text
    got = r.json()
    want = library_board(api, ck_job)
    assert got["format"] == LEADERBOARD_FORMAT and got["job"] == ck_job
    assert got["state"] == "done"
    assert got["rows"] == want["rows"] and got["pairs"] == want["pairs"]
    assert {k: got[k] for k in want} == want
    assert got["rows"], "a CK-Arena job has rows"
    assert {row["unit"] for row in got["rows"]} == {"statement"}
    # the outcomes came from the step table: CK-Arena logs name the winner
    assert got["outcomes"].startswith("the step table's winner_role column")
    assert any(row["win_rate"] is not None for row in got["rows"])
    assert got["reader"] == "cooccurrence" and "lower bound" in got["reader_note"]
    # the CSV: the same rows, the library's columns
    c = api.get(
        f"/v1/jobs/{ck_job}/leaderboard", params={"replicates": REPLICATES, "format": "csv"}
    )
    assert c.status_code == 200 and c.headers["content-type"].startswith("text/csv")
    assert "attachment" in c.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(c.text)))
    assert list(rows[0]) == LEADERBOARD_COLUMNS
    from leakage.curves import Leaderboard

    records = leaderboard_records(Leaderboard.model_validate(want))
    assert rows == [{k: "" if v is None else str(v) for k, v in rec.items()} for rec in records]


def test_bad_options_are_422_and_nothing_to_rank_a_409(api: Api) -> None:
    r = api.post("/v1/jobs", content=b'{"not": "a transcript"}\n')
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert job["state"] == "done" and job["failed"] == 1
    assert_error(api.get(f"/v1/jobs/{job['id']}/leaderboard"), 409, "job_not_ready", "id")
    assert_error(
        api.get(f"/v1/jobs/{job['id']}/leaderboard", params={"format": "xml"}),
        422, "?", "format",
    )  # fmt: skip
    assert_error(
        api.get(f"/v1/jobs/{job['id']}/leaderboard", params={"replicates": 5}),
        422, "?", "replicates",
    )  # fmt: skip
    assert_error(api.get(f"/v1/jobs/{'0' * 32}/leaderboard"), 404, "?")


def test_the_schema_documents_the_route(api: Api) -> None:
    spec = api.get("/openapi.json").json()
    op = spec["paths"]["/v1/jobs/{job_id}/leaderboard"]["get"]
    assert {p["name"] for p in op["parameters"]} >= {"job_id", "format", "replicates"}
    assert "text/csv" in op["responses"]["200"]["content"]
    assert "409" in op["responses"]
    assert "JobLeaderboard" in json.dumps(op["responses"]["200"])
