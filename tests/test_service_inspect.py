"""Inspect AI logs uploaded to the service: a ``.eval`` archive or a JSON log as a job (the
body or a multipart file) and through ``POST /v1/transcripts`` (what the explorer calls for a
file it cannot read in the browser); the log of another task, a zip that is not a log and a
damaged log are 422s that say what is wrong, never 500s. The logs are made offline by
scripted mockllm players (tests/inspect_tasks.py)."""

from __future__ import annotations

import gc
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai")

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate

from leakage.scoring import score_transcript
from leakage.transcripts import iter_transcripts

from .inspect_tasks import scripted_model
from .test_service import Api, assert_error, ndjson, settings_for, wait_job

# inspect-ai leaves an anyio memory stream of its eval loop unclosed (tests/test_inspect.py)
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _eval(task, log_dir: Path, fmt: str, **kw) -> Path:
    model = scripted_model()
    (log,) = eval(task, model=model, log_dir=str(log_dir), display="none", log_format=fmt, **kw)
    gc.collect()
    assert log.status == "success", log.error
    return Path(log.location)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> dict[str, Path]:
    """Two Chameleon games as a .eval and as a JSON log, and a log of another task."""
    out = tmp_path_factory.mktemp("inspect-logs")
    model = scripted_model()
    args = {
        "task_args": {"games": 2, "seed": 3, "backend_options": {"index": str(default_index)}},
        "model_roles": {"chameleon": model, "non_chameleon": model},
    }
    other = Task(dataset=[Sample(input="Say hi.", id="q1")], solver=generate())
    return {
        "eval": _eval("leakage/chameleon", out / "eval", "eval", **args),
        "json": _eval("leakage/chameleon", out / "json", "json", **args),
        "other": _eval(other, out / "other", "eval"),
    }


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    a = Api(settings_for(tmp_path_factory.mktemp("svc"), default_index))
    yield a
    a.close()


def _uploads(api: Api) -> list[str]:
    folder = api.state.settings.uploads_dir
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def _expected(path: Path, cooccurrence) -> dict[str, dict]:
    """``leakage score``'s report of each game of the log, by game id."""
    games = list(iter_transcripts([path]))
    assert len(games) == 2
    return {g.id: score_transcript(g, cooccurrence).model_dump(mode="json") for g in games}


@pytest.mark.parametrize("fmt", ["eval", "json"])
@pytest.mark.parametrize("how", ["body", "multipart"])
def test_an_uploaded_inspect_log_is_a_job_scored_as_leakage_scores_it(
    api: Api, logs: dict[str, Path], cooccurrence, fmt: str, how: str
):
    data = logs[fmt].read_bytes()
    if how == "body":  # a zip declared as what it is; a JSON log as JSON
        ctype = "application/zip" if fmt == "eval" else "application/json"
        r = api.post("/v1/jobs", content=data, headers={"content-type": ctype})
    else:
        r = api.post("/v1/jobs", files={"file": (logs[fmt].name, data)})
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert job["state"] == "done" and job["total"] == 2 and job["failed"] == 0, job
    results = ndjson(api.get(f"/v1/jobs/{job['id']}/results"))
    expected = _expected(logs[fmt], cooccurrence)
    assert {r["game_id"] for r in results} == set(expected)
    for report in results:
        assert report["steps"] == expected[report["game_id"]]["steps"]
    # the explorer's view of a job's game: its transcript, read back from the saved log
    game = api.get(f"/v1/jobs/{job['id']}/games/{results[0]['game_id']}").json()
    assert game["transcript"]["id"] == results[0]["game_id"], game
    assert game["transcript"]["format"] == "leakage.transcript/1"


def test_the_log_of_another_task_is_refused_naming_the_sample_and_field(
    api: Api, logs: dict[str, Path]
):
    before = _uploads(api)
    data = logs["other"].read_bytes()
    for r in (
        api.post("/v1/jobs", content=data, headers={"content-type": "application/zip"}),
        api.post("/v1/jobs", files={"file": ("other.eval", data)}),
    ):
        err = assert_error(r, 422, "invalid_transcript", "store.leakage_transcript")
        assert err["record"] == "sample q1 (epoch 1)", err
        assert "carries no game" in err["message"] and "leakage/chameleon" in err["message"]
        assert str(api.state.settings.uploads_dir) not in r.text
    r = api.post("/v1/transcripts", content=data)
    err = assert_error(r, 422, "invalid_transcript", "store.leakage_transcript")
    assert err["record"] == "sample q1 (epoch 1)"
    assert _uploads(api) == before  # nothing left behind


def test_a_zip_that_is_no_log_and_a_damaged_log_are_422s(api: Api, logs: dict[str, Path]):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("notes.txt", "hello")
    cut = logs["eval"].read_bytes()[:3000]
    broken_json = logs["json"].read_bytes()[:2000]
    log = json.loads(logs["json"].read_bytes())
    log["samples"][1]["epoch"] = {"not": "a number"}  # a sample Inspect cannot read
    bad_sample = json.dumps(log).encode()
    for body in (buf.getvalue(), cut, broken_json):
        for path in ("/v1/jobs", "/v1/transcripts"):
            r = api.post(path, content=body, headers={"content-type": "application/zip"})
            err = assert_error(r, 422, "invalid_transcript", "body")
            assert "Inspect eval log" in err["message"], err
            assert str(api.state.settings.uploads_dir) not in r.text
        # the multipart file part carries it: the error names that part
        r = api.post("/v1/jobs", files={"file": ("run.eval", body)})
        assert_error(r, 422, "invalid_transcript", "file")
    # a sample that cannot be read fails alone: the other sample's game is read
    r = api.post("/v1/transcripts", content=bad_sample)
    assert r.status_code == 200, r.text
    (bad,) = r.json()["errors"]
    assert bad["record"] == "sample 2" and "epoch: expected an integer" in bad["message"], bad
    assert "Inspect eval log" in bad["message"] and len(r.json()["games"]) == 1
    r = api.post("/v1/jobs", content=bad_sample, headers={"content-type": "application/json"})
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert (job["total"], job["ok"], job["failed"]) == (2, 1, 1), job


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_the_explorer_reads_an_inspect_log_into_its_games(
    api: Api, logs: dict[str, Path], fmt: str
):
    r = api.post("/v1/transcripts", content=logs[fmt].read_bytes())
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["errors"] == [] and body["left_out"] == 0
    games = [g.model_dump(mode="json", exclude_none=True) for g in iter_transcripts([logs[fmt]])]
    assert body["games"] == games
    # each game is then scored as a pasted one is
    report = api.post("/v1/score", json=body["games"][0]).json()
    assert report["game_id"] == games[0]["id"]


def test_transcripts_reads_other_inputs_and_names_bad_records(api: Api):
    from .test_service import BATCH

    lines = BATCH.splitlines(keepends=True)
    body = lines[0] + b'{"no": "format"}\n' + lines[1]
    r = api.post("/v1/transcripts", content=body, headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200, r.text
    got = r.json()
    assert [g["id"] for g in got["games"]] == [json.loads(lines[i])["id"] for i in (0, 1)]
    (bad,) = got["errors"]
    assert bad["record"] == "line 2" and "format" in bad["message"]
    assert str(api.state.settings.uploads_dir) not in r.text
    err = assert_error(api.post("/v1/transcripts", content=b'{"no": "format"}'), 422, "?", "body")
    assert err["message"].startswith("no game in the upload: record 0")
    assert_error(api.post("/v1/transcripts", content=b"  "), 422, "?", "body")
