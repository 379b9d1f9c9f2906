"""The HTTP service in-process: every endpoint and error path over httpx's ASGI transport.

The app runs with its real lifespan (backends loaded, job store and worker started) on an
event loop in a helper thread (an anyio blocking portal), so tests stay plain functions.
"""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal

from leakage.transcripts import input_formats
from leakage_service import Settings, create_app
from leakage_service.inputs import InputFormat

from .conftest import EXAMPLES
from .test_adapters import ck_record

SPORTS = (EXAMPLES / "chameleon_sports.json").read_bytes()
BATCH = (EXAMPLES / "chameleon_batch.jsonl").read_bytes()
SPY = (EXAMPLES / "spygame_fruit.json").read_bytes()


class Api:
    """A running app and a client for it, usable from synchronous tests."""

    def __init__(self, settings: Settings) -> None:
        self.app = create_app(settings)
        self.state = self.app.state.service
        self._portal_cm = start_blocking_portal()
        self.portal: BlockingPortal = self._portal_cm.__enter__()
        self._life = self.portal.wrap_async_context_manager(
            self.app.router.lifespan_context(self.app)
        )
        self._life.__enter__()
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=self.app), base_url="http://test", timeout=60
        )

    def request(self, method: str, url: str, **kw: Any) -> httpx.Response:
        return self.portal.call(partial(self.client.request, method, url, **kw))

    def post(self, url: str, **kw: Any) -> httpx.Response:
        return self.request("POST", url, **kw)

    def get(self, url: str, **kw: Any) -> httpx.Response:
        return self.request("GET", url, **kw)

    def close(self) -> None:
        self.portal.call(self.client.aclose)
        self._life.__exit__(None, None, None)
        self._portal_cm.__exit__(None, None, None)

    def __enter__(self) -> Api:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def settings_for(home: Path, index: Path, **kw: Any) -> Settings:
    """A backend not preloaded is waited for as long as it takes to load (an embedding model
    on a busy machine can take longer than the 5 s a request waits by default):
    tests/test_service_backend_load.py sets the wait it tests."""
    kw.setdefault("backend_load_wait", 300.0)
    return Settings(home=home, index=index, preload=["cooccurrence"], **kw)


@pytest.fixture(scope="module")
def plain_api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    """A service of the tests' settings and no others, one per module that takes it
    (``api = plain_api`` in the module)."""
    with Api(settings_for(tmp_path_factory.mktemp("api"), default_index)) as a:
        yield a


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    home = tmp_path_factory.mktemp("svc")
    allowed = home / "allowed"
    allowed.mkdir()
    (allowed / "games.jsonl").write_bytes(BATCH)
    a = Api(settings_for(home, default_index, allowed_paths=[allowed], max_body_bytes=64 * 1024))
    yield a
    a.close()


def assert_error(r: httpx.Response, status: int, type_: str, field: str | None = "?") -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "request_id"}
    err = body["error"]
    assert type_ == "?" or err["type"] == type_, err
    assert err["message"]
    if field != "?":
        assert err["field"] == field, err
    assert "Traceback" not in r.text and 'File "' not in r.text
    assert body["request_id"] == r.headers["x-request-id"]
    return err


def ndjson(r: httpx.Response) -> list[dict]:
    # lines end at "\n" only: splitlines would also cut at a U+2028 inside a JSON string
    return [json.loads(line) for line in r.text.split("\n") if line.strip()]


# -- POST /v1/score -----------------------------------------------------------------------


def test_score_returns_the_report_with_posteriors(api: Api):
    r = api.post("/v1/score", content=SPORTS)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    rep = r.json()
    assert rep["format"] == "leakage.report/1" and rep["game_id"] == "example-chameleon-sports"
    assert rep["backend"] == "cooccurrence"
    assert len(rep["steps"]) == 4
    for step in rep["steps"]:
        assert sum(step["posterior"].values()) == pytest.approx(1.0)
    assert [s["counted"] for s in rep["steps"]] == [True, True, False, True]
    assert rep["summary"]["final_secret_rank"] == 1  # racket, court, serve -> Tennis


def test_score_options_change_the_report(api: Api):
    rep = api.post("/v1/score", params={"include_chameleon": "true"}, content=SPORTS).json()
    assert all(s["counted"] for s in rep["steps"])
    assert rep["settings"]["include_chameleon"] is True
    top = api.post("/v1/score", params={"top_k": 3}, content=SPORTS).json()
    assert all(len(s["posterior"]) == 3 for s in top["steps"])
    assert top["settings"]["top_k"] == 3
    assert next(iter(top["steps"][-1]["posterior"])) == "Tennis"
    more = api.post(
        "/v1/score",
        params=[("distractors", "Badminton"), ("distractors", "Squash")],
        content=SPORTS,
    ).json()
    assert more["candidates"][-2:] == ["Badminton", "Squash"]
    assert len(more["steps"][0]["posterior"]) == 18


def test_score_spygame_distractors_and_assignment(api: Api):
    r = api.post(
        "/v1/score",
        params={"distractors": "Cherry", "spy_assignment": "marginalise"},
        content=SPY,
    )
    assert r.status_code == 200, r.text
    rep = r.json()
    assert rep["game"] == "spygame" and rep["candidates"][-1] == "Cherry"
    assert rep["settings"]["spy_assignment"] == "marginalise"
    assert rep["steps"][0]["spy_posterior"]


def test_score_third_party_format(api: Api):
    body = json.dumps(ck_record()).encode()
    r = api.post("/v1/score", params={"input_format": "ck-arena"}, content=body)
    assert r.status_code == 200, r.text
    assert r.json()["candidates"][:2] == ["sun", "moon"]
    auto = api.post("/v1/score", content=body)
    assert auto.status_code == 200 and auto.json()["game_id"] == r.json()["game_id"]


def test_malformed_json_is_422_naming_the_body(api: Api):
    err = assert_error(
        api.post("/v1/score", content=b'{"game": '), 422, "invalid_transcript", "body"
    )
    assert "malformed JSON" in err["message"] and "line 1" in err["message"]


def test_wrong_schema_names_each_field(api: Api):
    doc = json.loads(SPORTS)
    doc["turns"][1]["player"] = "p9"
    doc["secret"] = "Chess"
    del doc["category"]
    err = assert_error(api.post("/v1/score", json=doc), 422, "invalid_transcript")
    fields = {p["field"] for p in err["problems"]}
    assert "category" in fields
    doc["category"] = "Sports"
    err = assert_error(api.post("/v1/score", json=doc), 422, "invalid_transcript")
    fields = {p["field"] for p in err["problems"]}
    assert {"turns[1].player", "secret"} <= fields


@pytest.mark.parametrize(
    "body",
    [b"[]", b"42", b'"text"', b"null", b'{"format": "leakage.transcript/1", "game": "chess"}'],
)
def test_non_transcript_bodies_are_422(api: Api, body: bytes):
    assert_error(api.post("/v1/score", content=body), 422, "?")


def test_not_utf8_is_422(api: Api):
    err = assert_error(api.post("/v1/score", content=b"\xff\xfe{}"), 422, "invalid_transcript")
    assert "UTF-8" in err["message"]


@pytest.mark.parametrize(
    ("params", "type_", "field", "in_message"),
    [
        ({"backend": "oracle"}, "unknown_backend", "backend", "cooccurrence"),
        ({"top_k": 0}, "invalid_request", "top_k", "greater than or equal to 1"),
        ({"input_format": "csv"}, "invalid_request", "input_format", "ck-arena"),
        ({"include_chameleon": "perhaps"}, "invalid_request", "include_chameleon", "boolean"),
        ({"bakend": "x"}, "invalid_request", "bakend", "unknown query parameter"),
        ({"distractors": "Golf"}, "invalid_transcript", "distractors", "Golf"),
    ],
)
def test_bad_options_are_422_naming_the_parameter(
    api: Api, params: dict, type_: str, field: str, in_message: str
):
    err = assert_error(api.post("/v1/score", params=params, content=SPORTS), 422, type_, field)
    assert in_message in err["message"]


def test_oversize_body_is_413_with_and_without_content_length(api: Api):
    big = b'{"pad": "' + b"x" * 70_000 + b'"}'
    assert_error(api.post("/v1/score", content=big), 413, "payload_too_large", "body")

    async def chunks():  # no Content-Length: the limit applies while reading
        for _ in range(10):
            yield b"x" * 10_000

    r = api.post("/v1/score", content=chunks())
    assert_error(r, 413, "payload_too_large", "body")


def test_report_cache_hits_are_counted(api: Api):
    doc = json.loads(SPORTS)
    doc["id"] = "cache-me"
    body = json.dumps(doc).encode()
    first = api.post("/v1/score", content=body)
    second = api.post("/v1/score", content=body)
    assert first.content == second.content
    metrics = api.get("/metrics").text
    assert 'leakage_cache_requests_total{cache="report",result="hit"}' in metrics


def test_report_cache_is_bounded_by_bytes():
    from leakage_service.runtime import ReportCache
    from leakage_service.telemetry import Metrics

    cache = ReportCache(10_000, Metrics())
    for i in range(100):  # 100 reports of about 1 kB: ten fit
        cache.put(f"k{i:02d}".encode(), b"x" * 997)
    assert cache.bytes <= 10_000 and len(cache) == 10
    assert cache.get(b"k99") is not None and cache.get(b"k00") is None
    cache.put(b"big", b"x" * 20_000)  # larger than the whole budget: not kept
    assert cache.get(b"big") is None and len(cache) == 10
    cache.put(b"k99", b"y" * 10)  # replacing an entry frees its old size
    assert cache.bytes == 9 * 1000 + 13


# -- POST /v1/score/batch ----------------------------------------------------------------


def test_batch_jsonl_streams_a_line_per_game_with_error_lines(api: Api):
    body = BATCH + b"{oops\n" + SPORTS.replace(b"\n", b" ") + b"\n"
    r = api.post("/v1/score/batch", content=body, headers={"content-type": "application/x-ndjson"})
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("application/x-ndjson")
    lines = ndjson(r)
    assert len(lines) == 8
    assert [x.get("record") for x in lines if "error" in x] == [6]
    assert lines[6]["error"]["type"] == "invalid_transcript"
    assert lines[7]["game_id"] == "example-chameleon-sports"
    assert all(x["format"] == "leakage.report/1" for x in lines[:6])


def test_batch_json_array_with_a_bad_game(api: Api):
    games = [json.loads(line) for line in BATCH.splitlines()][:2]
    bad = dict(games[0], id="bad", secret="Nope")
    r = api.post("/v1/score/batch", json=[games[0], bad, games[1]])
    lines = ndjson(r)
    assert [x.get("game_id") for x in lines] == [games[0]["id"], None, games[1]["id"]]
    assert lines[1]["record"] == 1 and lines[1]["error"]["field"] == "secret"


def test_batch_body_errors(api: Api):
    assert_error(api.post("/v1/score/batch", content=b"  "), 422, "invalid_transcript", "body")
    assert_error(api.post("/v1/score/batch", content=b"[1,"), 422, "invalid_transcript", "body")
    r = api.post("/v1/score/batch", params={"backend": "nope"}, content=BATCH)
    assert_error(r, 422, "unknown_backend", "backend")


def test_batch_game_limit(tmp_path: Path, default_index: Path):
    a = Api(settings_for(tmp_path, default_index, max_batch_games=2))
    try:
        assert_error(a.post("/v1/score/batch", content=BATCH), 413, "too_many_games", "body")
    finally:
        a.close()


# -- jobs ----------------------------------------------------------------------------------


def wait_job(api: Api, job_id: str, timeout: float = 30) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = api.get(f"/v1/jobs/{job_id}").json()
        if job["state"] in ("done", "failed", "cancelled"):
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} did not finish: {job}")


def test_job_upload_jsonl_results_jsonl_and_parquet(api: Api):
    body = BATCH + b"not json\n" + b'{"no": "format"}\n'
    r = api.post("/v1/jobs", params={"top_k": 2}, content=body)
    assert r.status_code == 202, r.text
    job = r.json()
    assert r.headers["location"] == f"/v1/jobs/{job['id']}"
    assert job["source"] == "upload" and job["paths"] is None
    job = wait_job(api, job["id"])
    assert (job["state"], job["total"], job["done"], job["ok"], job["failed"]) == (
        "done", 8, 8, 6, 2,
    )  # fmt: skip
    assert job["progress"] == 1.0 and job["runs"] == 1
    assert [e["record"] for e in job["errors"]] == [6, 7]
    assert "record line 8: not a leakage.transcript/1 record" in json.dumps(job["errors"])
    assert "uploads" not in json.dumps(job["errors"])  # no server path in the messages
    lines = ndjson(api.get(f"/v1/jobs/{job['id']}/results"))
    assert len(lines) == 8 and all(len(x["steps"][0]["posterior"]) == 2 for x in lines[:6])

    import pyarrow.parquet as pq

    r = api.get(f"/v1/jobs/{job['id']}/results", params={"format": "parquet"})
    assert r.status_code == 200 and r.headers["x-job-state"] == "done"
    table = pq.read_table(io.BytesIO(r.content))
    assert table.num_rows == 8
    rows = table.to_pylist()
    assert [x["ok"] for x in rows] == [True] * 6 + [False] * 2
    assert rows[0]["game_id"] == "example-chameleon-fruits" and rows[0]["final_entropy_bits"] > 0
    assert [x["error_type"] for x in rows[6:]] == ["invalid_transcript", "unknown_input_format"]


def test_job_upload_json_array_and_multipart(api: Api):
    games = [json.loads(line) for line in BATCH.splitlines()]
    r = api.post("/v1/jobs", json=games[:3])
    assert r.status_code == 202, r.text
    assert wait_job(api, r.json()["id"])["ok"] == 3
    files = {"file": ("games.jsonl", BATCH, "application/x-ndjson")}
    r = api.post("/v1/jobs", files=files)
    assert r.status_code == 202, r.text
    assert wait_job(api, r.json()["id"])["ok"] == 6
    r = api.post("/v1/jobs", content=SPORTS)  # one pretty-printed object
    assert wait_job(api, r.json()["id"])["ok"] == 1
    r = api.post("/v1/jobs", files={"other": ("x.jsonl", BATCH, "application/x-ndjson")})
    assert_error(r, 422, "invalid_request", "file")


def test_job_from_an_allowed_server_path(api: Api):
    allowed = api.state.settings.allowed_paths[0]
    r = api.post("/v1/jobs", json={"path": str(allowed)})
    assert r.status_code == 202, r.text
    job = wait_job(api, r.json()["id"])
    assert job["source"] == "path" and job["ok"] == 6
    err = assert_error(api.post("/v1/jobs", json={"path": "/etc"}), 403, "path_not_allowed", "path")
    assert "/etc" in err["message"]
    sneaky = str(allowed / ".." / "..")
    assert_error(api.post("/v1/jobs", json={"path": sneaky}), 403, "path_not_allowed", "path")
    assert_error(
        api.post("/v1/jobs", json={"path": str(allowed / "missing.jsonl")}), 422, "invalid_input"
    )
    assert_error(api.post("/v1/jobs", json={"path": 3}), 422, "invalid_request", "path")


def test_job_paths_disabled_without_allowed_paths(tmp_path: Path, default_index: Path):
    a = Api(settings_for(tmp_path, default_index))
    try:
        assert_error(a.post("/v1/jobs", json={"path": "/tmp"}), 403, "paths_disabled", "path")
    finally:
        a.close()


def test_job_bad_input(api: Api):
    assert_error(api.post("/v1/jobs", content=b""), 422, "invalid_transcript", "body")
    assert_error(api.post("/v1/jobs", content=b"\xff\xff"), 422, "invalid_transcript", "body")
    r = api.post("/v1/jobs", params={"backend": "nope"}, content=BATCH)
    assert_error(r, 422, "unknown_backend", "backend")


def test_job_ids(api: Api):
    assert_error(api.get("/v1/jobs/not-a-job"), 422, "invalid_request", "job_id")
    assert_error(api.get("/v1/jobs/" + "0" * 32), 404, "job_not_found", "id")
    assert_error(api.get("/v1/jobs/" + "0" * 32 + "/results"), 404, "job_not_found", "id")
    assert_error(api.request("DELETE", "/v1/jobs/" + "0" * 32), 404, "job_not_found", "id")
    assert_error(api.post("/v1/jobs/" + "0" * 32 + "/cancel"), 404, "job_not_found", "id")
    r = api.get("/v1/jobs/" + "0" * 32 + "/results", params={"format": "csv"})
    assert_error(r, 422, "invalid_request", "format")


def test_cancel_a_queued_job_and_a_finished_one(tmp_path: Path, default_index: Path):
    a = Api(settings_for(tmp_path, default_index))
    try:
        a.state.worker.stop()  # nothing runs: the job stays queued until cancelled
        job = a.post("/v1/jobs", content=BATCH).json()
        assert job["state"] == "queued"
        assert job["links"]["cancel"] == f"/v1/jobs/{job['id']}/cancel"
        r = a.post(job["links"]["cancel"])
        assert r.status_code == 200 and r.json()["state"] == "cancelled"
        assert r.json()["finished_at"] is not None
        assert a.get(f"/v1/jobs/{job['id']}").json()["state"] == "cancelled"  # kept
        err = assert_error(a.post(job["links"]["cancel"]), 409, "job_finished", "id")
        assert f"DELETE /v1/jobs/{job['id']}" in err["message"]
        # readiness notices the stopped worker
        ready = a.get("/readyz")
        assert ready.status_code == 503 and "job worker" in " ".join(ready.json()["problems"])
    finally:
        a.close()


# -- splits, backends, probes, metrics ------------------------------------------------------


def test_splits(api: Api):
    pairs = [["sun", "moon"], ["cat", "dog"], ["apple", "banana"], ["piano", "guitar"],
             ["river", "lake"], ["car", "bus"], ["xqzvw", "moon"]]  # fmt: skip
    r = api.post("/v1/splits", json={"pairs": pairs, "seed": 1})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["summary"]["format"] == "leakage.splits/1"
    assert sum(len(v) for v in body["splits"].values()) == 6
    assert body["unknown"] == [{"a": "xqzvw", "b": "moon", "unknown_words": ["xqzvw"]}]
    sims = [p["similarity"] for s in ("hard", "medium", "easy") for p in body["splits"][s]]
    assert sims == sorted(sims, reverse=True)
    supplied = {"sun": "The star at the centre.", "moon": "The satellite of the Earth."}
    r = api.post("/v1/splits", json={"pairs": [["sun", "moon"]], "descriptions": supplied})
    assert r.status_code == 200 and r.json()["summary"]["describer"] == "supplied"


def test_splits_bad_input(api: Api):
    for body, field in [
        ({"pairs": []}, "body.pairs"),
        ({"pairs": [["sun"]]}, "body"),
        ({"pairs": [["sun", "SUN"]]}, "body"),
        ({"pairs": [["sun", "moon"]], "method": "halves"}, "body.method"),
        (
            {"pairs": [["a", "b"]], "method": "thresholds", "easy_below": 0.9, "hard_above": 0.1},
            "body",
        ),
        ({"pairs": [["a", "b"]], "colour": "red"}, "body.colour"),
    ]:
        err = assert_error(api.post("/v1/splits", json=body), 422, "invalid_request")
        assert err["field"].startswith(field), (body, err)
    assert_error(api.post("/v1/splits", content=b"{nope"), 422, "invalid_request", "body")


def test_backends_lists_loaded_and_lazy_backends(api: Api):
    r = api.get("/v1/backends")
    assert r.status_code == 200
    by_name = {b["name"]: b for b in r.json()["backends"]}
    assert by_name["cooccurrence"]["loaded"] and by_name["cooccurrence"]["info"]["count_source"]
    assert {"embedding", "judge", "ensemble"} <= set(by_name)
    sources = {s["name"]: s for s in r.json()["count_sources"]}
    assert sources["local"]["configured"] is True
    assert sources["serpapi"]["needs"] == ["SERPAPI_API_KEY"]
    # the embedding backend loads on first use
    rep = api.post("/v1/score", params={"backend": "embedding"}, content=SPORTS)
    assert rep.status_code == 200, rep.text
    assert rep.json()["backend_info"]["model"].endswith("all-MiniLM-L6-v2")
    emb = {b["name"]: b for b in api.get("/v1/backends").json()["backends"]}["embedding"]
    assert emb["loaded"] and emb["info"]["dimension"] == 384
    assert 'leakage_cache_requests_total{cache="embedding"' in api.get("/metrics").text


def test_the_ensemble_members_use_the_services_paths(api: Api):
    """The ensemble's co-occurrence member reads the service's index (``Settings.index_path``)
    and its embedding member caches under ``Settings.home``, the paths the service gives the
    single backends (not the library's defaults, which follow the process's LEAKAGE_HOME)."""
    from leakage.backends.ensemble import route_options

    backends = api.state.backends
    settings = api.state.settings
    routed = route_options(["cooccurrence", "embedding", "judge"], backends.options("ensemble"))
    assert routed["cooccurrence"]["index"] == settings.index_path
    assert routed["embedding"] == backends.options("embedding")
    assert routed["embedding"]["cache_path"] == str(settings.home / "embeddings.sqlite")


def test_probes_and_metrics(api: Api):
    assert api.get("/healthz").json() == {"status": "ok"}
    ready = api.get("/readyz")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    api.post("/v1/score", content=SPORTS)
    from prometheus_client.parser import text_string_to_metric_families

    text = api.get("/metrics").text
    families = {f.name: f for f in text_string_to_metric_families(text)}
    samples = families["leakage_http_requests"].samples
    assert any(
        s.labels == {"route": "/v1/score", "method": "POST", "status": "200"} and s.value >= 1
        for s in samples
    )
    assert "leakage_backend_score_seconds" in families and "leakage_queue_depth" in families
    assert any(s.labels.get("state") == "done" for s in families["leakage_jobs"].samples)


def test_unknown_route_and_method(api: Api):
    assert_error(api.get("/v1/nothing"), 404, "not_found")
    assert_error(api.get("/v1/score"), 405, "method_not_allowed")


def test_access_log_line(api: Api, caplog: pytest.LogCaptureFixture):
    with caplog.at_level(logging.INFO, logger="leakage.service.access"):
        r = api.post("/v1/score", content=SPORTS, headers={"x-request-id": "trace-123"})
    assert r.headers["x-request-id"] == "trace-123"
    lines = [json.loads(rec.getMessage()) for rec in caplog.records if rec.name.endswith("access")]
    line = next(x for x in lines if x["request_id"] == "trace-123")
    assert line["route"] == "/v1/score" and line["status"] == 200 and line["duration_ms"] > 0


def test_unexpected_error_is_a_generic_500(api: Api, monkeypatch: pytest.MonkeyPatch):
    backend = api.state.backends.slots["cooccurrence"].backend

    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(backend, "loglik", boom)
    doc = json.loads(SPORTS)
    doc["id"] = "boom"
    r = api.post("/v1/score", json=doc)
    err = assert_error(r, 500, "internal_error")
    assert "secret internals" not in r.text
    lines = ndjson(api.post("/v1/score/batch", json=[doc]))
    assert lines[0]["error"]["type"] == "internal_error" and "secret" not in json.dumps(lines)
    assert err["field"] is None


# -- guards: queue, keys, rate limit, CORS ---------------------------------------------------


def test_full_queue_is_503_with_retry_after(tmp_path: Path, default_index: Path):
    a = Api(settings_for(tmp_path, default_index, workers=1, queue_size=0, report_cache_bytes=0))
    try:
        lock = a.state.backends.slots["cooccurrence"].lock
        lock.acquire()  # the one worker thread will block on the backend
        try:
            first = a.portal.start_task_soon(partial(a.client.post, "/v1/score", content=SPORTS))
            deadline = time.monotonic() + 10
            while a.state.pool.in_flight < 1 and time.monotonic() < deadline:
                time.sleep(0.01)
            r = a.post("/v1/score", content=SPORTS)
            assert_error(r, 503, "queue_full")
            assert int(r.headers["retry-after"]) >= 1
            assert_error(a.post("/v1/score/batch", content=BATCH), 503, "queue_full")
            assert a.get("/healthz").status_code == 200  # the event loop is not blocked
        finally:
            lock.release()
        assert first.result(timeout=30).status_code == 200
        assert a.post("/v1/score", content=SPORTS).status_code == 200
        assert "leakage_queue_rejected_total 2.0" in a.get("/metrics").text
    finally:
        a.close()


def test_api_keys_and_rate_limit(tmp_path: Path, default_index: Path):
    a = Api(
        settings_for(
            tmp_path, default_index, api_keys=["k-one", "k-two"], rate_limit=60, rate_burst=2
        )
    )
    try:
        r = a.post("/v1/score", content=SPORTS)
        assert_error(r, 401, "unauthorized")
        assert r.headers["www-authenticate"] == "Bearer"
        assert_error(
            a.post("/v1/score", content=SPORTS, headers={"x-api-key": "k-on"}), 401, "unauthorized"
        )
        ok = a.post("/v1/score", content=SPORTS, headers={"authorization": "Bearer k-one"})
        assert ok.status_code == 200
        assert (
            a.post("/v1/score", content=SPORTS, headers={"x-api-key": "k-one"}).status_code == 200
        )
        limited = a.post("/v1/score", content=SPORTS, headers={"x-api-key": "k-one"})
        assert_error(limited, 429, "rate_limited")
        assert int(limited.headers["retry-after"]) >= 1
        # another key has its own bucket; probes need no key
        assert (
            a.post("/v1/score", content=SPORTS, headers={"x-api-key": "k-two"}).status_code == 200
        )
        assert a.get("/healthz").status_code == 200 and a.get("/metrics").status_code == 200
        assert a.get("/openapi.json").status_code == 200
    finally:
        a.close()


def test_cors(tmp_path: Path, default_index: Path):
    a = Api(settings_for(tmp_path, default_index, cors_origins=["https://app.example"]))
    try:
        r = a.request(
            "OPTIONS",
            "/v1/score",
            headers={"origin": "https://app.example", "access-control-request-method": "POST"},
        )
        assert r.status_code == 200
        assert r.headers["access-control-allow-origin"] == "https://app.example"
        r = a.post("/v1/score", content=SPORTS, headers={"origin": "https://evil.example"})
        assert "access-control-allow-origin" not in r.headers
    finally:
        a.close()


# -- settings and the OpenAPI schema -------------------------------------------------------


def test_settings_from_env(tmp_path: Path):
    import os

    env = {
        "LEAKAGE_HOME": str(tmp_path),
        "LEAKAGE_API_KEYS": "a, b",
        "LEAKAGE_ALLOWED_PATHS": os.pathsep.join(["/data", "/logs"]),
        "LEAKAGE_PRELOAD": "cooccurrence",
        "LEAKAGE_QUEUE_SIZE": "5",
        "LEAKAGE_RATE_LIMIT": "120",
        "LEAKAGE_ON_RESTART": "fail",
        "LEAKAGE_CORS_ORIGINS": "",
    }
    s = Settings.from_env(env, workers=3)
    assert s.api_keys == ["a", "b"] and s.allowed_paths == [Path("/data"), Path("/logs")]
    assert (s.queue_size, s.rate_limit, s.on_restart, s.workers) == (5, 120.0, "fail", 3)
    assert s.jobs_path == tmp_path / "service" / "jobs.sqlite"
    assert s.cors_origins == []
    from leakage.errors import InvalidInput

    with pytest.raises(InvalidInput, match="LEAKAGE_QUEUE_SIZE"):
        Settings.from_env({"LEAKAGE_QUEUE_SIZE": "many"})
    # A log level is one of four, in either case; another is refused when the settings are
    # read, not when the logger is first configured.
    assert Settings.from_env({"LEAKAGE_LOG_LEVEL": "WARNING"}).log_level == "warning"
    with pytest.raises(InvalidInput, match="LEAKAGE_LOG_LEVEL: Input should be 'debug'"):
        Settings.from_env({}, log_level="loud")


def test_input_formats_in_step():
    assert set(get_args(InputFormat)) == set(input_formats())


def test_openapi_describes_the_transcript_body(api: Api):
    schema = api.get("/openapi.json").json()
    body = schema["paths"]["/v1/score"]["post"]["requestBody"]["content"]["application/json"]
    assert body["schema"] == {"$ref": "#/components/schemas/Transcript"}
    comps = schema["components"]["schemas"]
    assert {"Transcript", "ChameleonTranscript", "SpyGameTranscript", "Report", "ErrorBody"} <= set(
        comps
    )
    assert api.get("/docs").status_code == 200


def test_a_game_logged_before_anyone_spoke_is_scored_not_a_server_error(api: Api):
    """A Chameleon game without turns (and without a secret), trimmed to one candidate per
    step: a report without steps (the schema fuzzer found this as a 500)."""
    game = {k: v for k, v in json.loads(SPORTS).items() if k not in ("turns", "secret")}
    r = api.post("/v1/score", params={"top_k": 1, "include_chameleon": "true"}, json=game)
    assert r.status_code == 200, r.text
    assert r.json()["steps"] == []


def test_a_query_parameter_given_twice_is_422_unless_it_is_a_list(api: Api):
    """FastAPI keeps the last of a repeated one-value parameter (``?top_k=x&top_k=9`` was read
    as 9, a schema-violating request accepted, which the fuzzer found); lists repeat."""
    r = api.post("/v1/score?top_k=x&top_k=9", content=SPORTS)
    err = assert_error(r, 422, "invalid_request", "top_k")
    assert "given more than once" in err["message"]
    r = api.post(
        "/v1/score/batch?backend=cooccurrence&backend=embedding",
        content=BATCH,
        headers={"content-type": "application/x-ndjson"},
    )
    assert_error(r, 422, "invalid_request", "backend")
    r = api.post("/v1/score?top_k=3&distractors=Badminton&distractors=Squash", content=SPORTS)
    assert r.status_code == 200, r.text
    assert r.json()["settings"]["distractors"] == ["Badminton", "Squash"]


def test_a_jsonl_record_holding_a_raw_line_separator_is_scored_whole(api: Api):
    game = json.loads(SPORTS)
    game["turns"][0]["text"] = "racket\u2028net"
    body = "\n".join([json.dumps(game, ensure_ascii=False), BATCH.decode().splitlines()[0]])
    for ctype in ("application/json", "application/x-ndjson"):
        r = api.post("/v1/score/batch", content=body.encode(), headers={"content-type": ctype})
        lines = ndjson(r)
        assert [x.get("game_id") for x in lines][:1] == ["example-chameleon-sports"], lines
        assert len(lines) == 2 and not any("error" in x for x in lines)


@pytest.mark.parametrize("body", [b"[;", b"{;", b"\x16\x0c:\x19"])
def test_one_line_that_is_not_json_is_refused_at_once(api: Api, body: bytes):
    """A batch or a job body of one malformed line holds no record: 422 naming the body (a
    form feed is not a line break: JSONL lines end at \\n)."""
    r = api.post("/v1/score/batch", content=body, headers={"content-type": "application/json"})
    assert_error(r, 422, "?", "body")
    if body[:1] in b"[{":
        r = api.post("/v1/jobs", content=body, headers={"content-type": "application/json"})
        err = assert_error(r, 422, "invalid_input", "body")
        assert err["message"].startswith("malformed JSON")
