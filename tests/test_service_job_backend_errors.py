"""What a backend failure does to a service job (docs/service.md, "Jobs"): the rule the
service had before its jobs ran on ``leakage.batch``'s engine, kept since (issue 40: no API
behaviour changes). A game the backend fails on while it is scored gets its own error line
(the error's type and message, as the service writes them everywhere: ``internal_error``
for a bug) and the job goes on to ``done``; a backend that fails on every game gives every
record its error line; a bulk ``prepare`` that fails fails the job, keeping what it stored.
``leakage batch`` keeps its own rule (the run stops, resumable): tests/test_batch.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from leakage.errors import CountSourceError

from .test_service import BATCH, Api, ndjson, settings_for, wait_job

pytest.importorskip("pyarrow")

GAMES = 6  # chameleon_batch.jsonl
KOALA = 2  # the record whose clues say "koala"


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    a = Api(settings_for(tmp_path_factory.mktemp("svc"), default_index))
    yield a
    a.close()


@pytest.fixture
def backend(api: Api, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The loaded co-occurrence backend the job worker scores with (patched per test)."""
    return api.state.backends.get("cooccurrence").backend


def _run(api: Api) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    r = api.post("/v1/jobs", content=BATCH)
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"], timeout=120)
    return job, ndjson(api.get(f"/v1/jobs/{job['id']}/results"))


def _failing_on(backend: Any, monkeypatch: pytest.MonkeyPatch, clue: str | None, err: Exception):
    real = backend.loglik

    def loglik(clues: list[str], candidates: list[str], **kw: Any) -> Any:
        if clue is None or clue in clues:
            raise err
        return real(clues, candidates, **kw)

    monkeypatch.setattr(backend, "loglik", loglik)


def test_a_game_the_backend_fails_on_fails_alone_and_the_job_goes_on(
    api: Api, backend: Any, monkeypatch: pytest.MonkeyPatch
):
    _failing_on(backend, monkeypatch, "koala", CountSourceError("the count source is down"))
    job, lines = _run(api)
    assert (job["state"], job["done"], job["ok"], job["failed"]) == ("done", GAMES, 5, 1), job
    assert len(lines) == GAMES
    failed = lines[KOALA]
    assert failed == {
        "record": KOALA,
        "error": {
            "type": "count_source_failed", "message": "the count source is down",
            "field": None, "record": KOALA,
        },
    }  # fmt: skip
    assert all("steps" in line for i, line in enumerate(lines) if i != KOALA)
    # the others are scored as they would be without the failure
    monkeypatch.undo()
    _, clean = _run(api)
    assert [line for i, line in enumerate(lines) if i != KOALA] == [
        line for i, line in enumerate(clean) if i != KOALA
    ]
    # and its views are of the five games scored
    r = api.get(f"/v1/jobs/{job['id']}/curves", params={"replicates": 100})
    assert r.status_code == 200 and r.json()["games"] == 5, r.text


def test_a_backend_that_fails_on_every_game_gives_every_record_its_error_line(
    api: Api, backend: Any, monkeypatch: pytest.MonkeyPatch
):
    _failing_on(backend, monkeypatch, None, RuntimeError("a bug in a backend"))
    job, lines = _run(api)
    assert (job["state"], job["done"], job["ok"], job["failed"]) == ("done", GAMES, 0, GAMES)
    internal = "internal error scoring this game; see the log"
    assert lines == [
        {"record": i, "error": {"type": "internal_error", "message": internal, "field": None,
                                "record": i}}
        for i in range(GAMES)
    ]  # fmt: skip


def test_a_failing_bulk_prepare_fails_the_job(
    api: Api, backend: Any, monkeypatch: pytest.MonkeyPatch
):
    def prepare(*args: Any, **kw: Any) -> None:
        raise CountSourceError("the count source is down")

    monkeypatch.setattr(backend, "prepare", prepare, raising=False)
    job, lines = _run(api)
    assert job["state"] == "failed" and "the count source is down" in job["error"], job
    assert (job["done"], lines) == (0, [])
