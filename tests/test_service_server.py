"""The HTTP service as a real uvicorn process on 127.0.0.1, driven over HTTP: a job survives
a crash and a graceful restart, concurrent requests are all answered, /metrics parses as
Prometheus text, and a property-based run over the OpenAPI schema finds no 500."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from .conftest import EXAMPLES, REPO

SPORTS = (EXAMPLES / "chameleon_sports.json").read_bytes()
CARDS = REPO / "leakage" / "data" / "chameleon_cards.json"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``leakage serve`` (or another start command) in a child process on a free port."""

    def __init__(self, env: dict[str, str], log: Path, command: list[str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        cmd = command or [sys.executable, "-m", "leakage", "serve", "--host", "127.0.0.1"]
        self._fh = log.open("ab")
        self.proc = subprocess.Popen(
            [*cmd, "--port", str(self.port)],
            env={**os.environ, **env},
            stdout=self._fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.wait_ready()

    def wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(
                    f"server exited {self.proc.returncode}:\n{self.log.read_text()}"
                )
            try:
                if httpx.get(self.url + "/readyz", timeout=1).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.stop(signal.SIGKILL)
        raise AssertionError(f"server not ready in {timeout} s:\n{self.log.read_text()}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()
        return self.proc.returncode


def server_env(home: Path, index: Path, **extra: str) -> dict[str, str]:
    return {
        "LEAKAGE_HOME": str(home),
        "LEAKAGE_INDEX": str(index),
        "LEAKAGE_PRELOAD": "cooccurrence",
        "LEAKAGE_BACKENDS": "cooccurrence",
        # a backend loaded on first use is waited for however long it takes on a busy machine
        "LEAKAGE_BACKEND_LOAD_WAIT": "300",
        **extra,
    }


def many_games(n: int, seed: int = 7) -> bytes:
    """``n`` 4-player Chameleon games as JSONL: random cards, clues drawn from every card's
    words (so that the count caches stay cold for a while)."""
    rng = np.random.default_rng(seed)
    cards = json.loads(CARDS.read_text())
    vocab = sorted({w for c in cards for w in c["words"]})
    lines = []
    for g in range(n):
        card = cards[int(rng.integers(len(cards)))]
        words = card["words"]
        cham = int(rng.integers(4))
        lines.append(
            json.dumps(
                {
                    "format": "leakage.transcript/1",
                    "game": "chameleon",
                    "id": f"g{g}",
                    "category": card["category"],
                    "candidates": words,
                    "secret": words[int(rng.integers(len(words)))],
                    "players": [
                        {"id": f"p{i}", "role": "chameleon" if i == cham else "non-chameleon"}
                        for i in range(4)
                    ],
                    "turns": [
                        {"player": f"p{i}", "text": vocab[int(rng.integers(len(vocab)))]}
                        for i in range(4)
                    ],
                }
            )
        )
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("served")
    # embedding is enabled (loaded on first use) so that splits run for real
    env = server_env(home, default_index, LEAKAGE_BACKENDS="cooccurrence,embedding")
    s = Server(env, home / "server.log")
    yield s
    s.stop()


def _job(url: str, job_id: str) -> dict:
    return httpx.get(f"{url}/v1/jobs/{job_id}", timeout=10).json()


def _wait(url: str, job_id: str, until, timeout: float = 60) -> dict:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = _job(url, job_id)
        if until(job):
            return job
        time.sleep(0.02)
    raise AssertionError(f"job {job_id} never reached the state wanted: {job}")


def test_a_job_survives_a_crash_and_a_restart(tmp_path: Path, default_index: Path):
    env = server_env(tmp_path, default_index)
    log = tmp_path / "server.log"
    a = Server(env, log)
    n = 4000
    r = httpx.post(f"{a.url}/v1/jobs", content=many_games(n), timeout=30)
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    _wait(a.url, job_id, lambda j: j["done"] >= 50)
    a.stop(signal.SIGKILL)  # a crash: no shutdown code runs

    db = tmp_path / "service" / "jobs.sqlite"
    with sqlite3.connect(db) as con:
        (state,) = con.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
        (first_run,) = con.execute(
            "SELECT COUNT(*) FROM results WHERE job_id = ?", (job_id,)
        ).fetchone()
    assert state == "running" and 50 <= first_run < n

    b = Server(env, log)  # resumes the job
    job = _wait(b.url, job_id, lambda j: j["runs"] == 2 and j["done"] > first_run + 20)
    assert job["state"] == "running"
    # graceful (uvicorn re-raises the signal once shut down): the job goes back to the queue
    assert b.stop(signal.SIGTERM) in (0, -signal.SIGTERM)
    assert "Application shutdown complete" in log.read_text()
    with sqlite3.connect(db) as con:
        (state,) = con.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
    assert state == "queued"

    c = Server(env, log)
    job = _wait(c.url, job_id, lambda j: j["state"] == "done")
    assert (job["total"], job["done"], job["ok"], job["runs"]) == (n, n, n, 3)
    lines = httpx.get(f"{c.url}/v1/jobs/{job_id}/results", timeout=30).text.splitlines()
    assert [json.loads(x)["game_id"] for x in lines] == [f"g{i}" for i in range(n)]
    c.stop()
    with sqlite3.connect(db) as con:
        runs = dict(con.execute("SELECT run, COUNT(*) FROM results GROUP BY run"))
    # the rows the first server stored were kept, not scored again
    assert runs[1] == first_run and sum(runs.values()) == n and set(runs) == {1, 2, 3}
    # one structured line per request in the log
    access = [json.loads(x) for x in log.read_text().splitlines() if '"event": "request"' in x]
    assert any(x["route"] == "/v1/jobs" and x["status"] == 202 for x in access)


def test_concurrent_requests_are_all_answered(server: Server):
    games = [json.loads(line) for line in many_games(64, seed=3).splitlines()]

    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            return await asyncio.gather(*(client.post("/v1/score", json=g) for g in games))

    responses = asyncio.run(run())
    assert [r.status_code for r in responses] == [200] * len(games)
    assert [r.json()["game_id"] for r in responses] == [g["id"] for g in games]


def test_batch_streams_over_http(server: Server):
    body = many_games(200, seed=5) + b"{broken\n"
    headers = {"content-type": "application/x-ndjson"}
    lines = []
    with httpx.stream("POST", server.url + "/v1/score/batch", content=body, headers=headers) as r:
        assert r.status_code == 200 and r.headers.get("transfer-encoding") == "chunked"
        lines = [json.loads(x) for x in r.iter_lines() if x]
    assert [x.get("game_id") for x in lines[:200]] == [f"g{i}" for i in range(200)]
    assert lines[200]["record"] == 200 and lines[200]["error"]["type"] == "invalid_transcript"


def test_bad_settings_stop_the_server_with_exit_code_2(tmp_path: Path):
    env = {**os.environ, "LEAKAGE_HOME": str(tmp_path), "LEAKAGE_QUEUE_SIZE": "many"}
    p = subprocess.run(
        [sys.executable, "-m", "leakage", "serve", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "LEAKAGE_QUEUE_SIZE" in p.stderr


def test_metrics_parse_as_prometheus_text(server: Server):
    from prometheus_client.parser import text_string_to_metric_families

    assert httpx.post(server.url + "/v1/score", content=SPORTS).status_code == 200
    r = httpx.get(server.url + "/metrics")
    assert r.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(r.text)}
    scored = [
        s
        for s in families["leakage_http_requests"].samples
        if s.labels.get("route") == "/v1/score" and s.labels.get("status") == "200"
    ]
    assert scored and scored[0].value >= 1
    hist = families["leakage_http_request_duration_seconds"].samples
    assert any(s.name.endswith("_bucket") and s.labels.get("route") == "/v1/score" for s in hist)
    assert families["leakage_backend_score_seconds"].samples
    assert {s.labels["state"] for s in families["leakage_jobs"].samples} >= {"queued", "done"}


def test_no_server_errors_over_the_openapi_schema(server: Server):
    """Schemathesis: positive and negative examples for every operation; no 5xx, and the
    responses conform to the documented status codes, content types and schemas."""
    import requests
    import schemathesis
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import strategies as st
    from hypothesis.errors import Unsatisfiable
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_schema_conformance,
    ]
    session = requests.Session()
    seen: Counter[tuple[str, int]] = Counter()

    def fuzz(operation: schemathesis.APIOperation, mode: schemathesis.GenerationMode) -> None:
        strategy = operation.as_strategy(generation_mode=mode)
        if mode is schemathesis.GenerationMode.POSITIVE:
            # the documented examples too: a random transcript is rarely consistent enough
            # (players, turns, candidates) to score, so luck alone may never reach the scoring
            examples = operation.schema.get_strategies_from_examples(operation)
            strategy = st.one_of(strategy, *examples)

        @given(case=strategy)
        @settings(
            max_examples=20,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case: schemathesis.Case) -> None:
            response = case.call(base_url=server.url, session=session, timeout=30)
            seen[(operation.label, response.status_code)] += 1
            case.validate_response(response, checks=checks)

        try:
            run()
        except Unsatisfiable:
            # nothing to make invalid (no parameters, no body): only positive cases
            assert mode is schemathesis.GenerationMode.NEGATIVE, operation.label

    for result in schema.get_all_operations():
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            fuzz(result.ok(), mode)
    assert sum(seen.values()) > 200
    # the fuzzing reached the scoring and splitting code, not only the validation
    for label in ("POST /v1/score", "POST /v1/score/batch", "POST /v1/splits", "POST /v1/jobs"):
        assert seen[(label, 200 if "jobs" not in label else 202)] > 0, sorted(seen.items())
