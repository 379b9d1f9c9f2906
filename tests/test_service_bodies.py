"""Request bodies that stall, clients that hang up, and bodies that cannot be read, against a
real uvicorn process on 127.0.0.1 over raw sockets (issue 37): a body that stops arriving
gets its 503 ``timeout`` within ``LEAKAGE_BODY_TIMEOUT`` on every POST route that reads one;
a client that goes away mid-body, or sends a malformed chunked body, is logged as a 499 on
one line without a traceback and is never counted as a 5xx in ``/metrics``. Also over the
wire: ``HEAD`` on ``GET`` routes, and no redirect built from the ``Host`` header."""

from __future__ import annotations

import json
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from benchmarks._fuzz_wire import POST_ROUTES, read_response

from .test_service_server import SPORTS, Server, server_env

BODY_TIMEOUT = 2.0
SLACK = 3.0  # a loaded 2-core machine: the answer may come a little after the deadline


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("bodies")
    env = server_env(home, default_index, LEAKAGE_BODY_TIMEOUT=str(BODY_TIMEOUT))
    s = Server(env, home / "server.log")
    yield s
    s.stop()


def _connect(server: Server) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    sock.settimeout(30)
    return sock


def _metrics(server: Server) -> str:
    return httpx.get(server.url + "/metrics", timeout=10).text


def _server_errors(text: str) -> float:
    """5xx answers counted so far (the stalled bodies' 503s among them)."""
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("leakage_http_requests_total") and re.search(r'status="5\d\d"', line)
    )


def _count(text: str, route: str, status: str) -> float:
    for line in text.splitlines():
        if (
            line.startswith("leakage_http_requests_total")
            and f'route="{route}"' in line
            and f'status="{status}"' in line
            and 'method="POST"' in line
        ):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


@pytest.mark.parametrize("path", POST_ROUTES)
def test_a_stalled_body_gets_its_503_within_the_deadline(server: Server, path: str):
    with _connect(server) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            'Content-Length: 1000\r\n\r\n{"a":'.encode()
        )
        start = time.monotonic()
        status, headers, body = read_response(sock)
        seconds = time.monotonic() - start
    assert status == 503, body
    error = json.loads(body)["error"]
    assert error["type"] == "timeout" and error["field"] == "body"
    assert "LEAKAGE_BODY_TIMEOUT" in error["message"]
    assert headers.get("retry-after") == "1"
    assert BODY_TIMEOUT - 0.5 <= seconds <= BODY_TIMEOUT + SLACK


def test_a_body_that_keeps_arriving_slowly_is_read(server: Server):
    """Each wait is bounded, not the whole body: a body sent in parts, each within the
    deadline, is scored."""
    with _connect(server) as sock:
        sock.sendall(
            b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(SPORTS)}\r\n\r\n".encode()
        )
        third = len(SPORTS) // 3
        for part in (SPORTS[:third], SPORTS[third : 2 * third], SPORTS[2 * third :]):
            time.sleep(BODY_TIMEOUT * 0.6)
            sock.sendall(part)
        status, _, body = read_response(sock)
    assert status == 200, body


@pytest.mark.parametrize("path", ["/v1/score", "/v1/jobs", "/v1/splits"])
def test_a_hang_up_mid_body_is_a_499_and_no_server_error(server: Server, path: str):
    first = _metrics(server)
    before, errors = _count(first, path, "499"), _server_errors(first)
    with _connect(server) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            'Content-Length: 1000\r\n\r\n{"a":'.encode()
        )
        time.sleep(0.3)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _count(_metrics(server), path, "499") == before:
        time.sleep(0.1)
    text = _metrics(server)
    assert _count(text, path, "499") == before + 1
    assert _server_errors(text) == errors
    log = server.log.read_text()
    assert "Traceback" not in log and "unhandled error" not in log
    lines = [json.loads(ln) for ln in log.splitlines() if ln.startswith("{")]
    closed = [d for d in lines if d.get("event") == "request" and d.get("status") == 499]
    assert any(d["route"] == path for d in closed)


def test_a_malformed_chunked_body_is_no_server_error(server: Server):
    first = _metrics(server)
    before, errors = _count(first, "/v1/score", "499"), _server_errors(first)
    with _connect(server) as sock:
        sock.sendall(
            b"POST /v1/score HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\nzz-not-a-size\r\n\r\n'
        )
        status, _, _ = read_response(sock)
    assert status == 400  # uvicorn's own answer, before it closes the connection
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _count(_metrics(server), "/v1/score", "499") == before:
        time.sleep(0.1)
    text = _metrics(server)
    assert _count(text, "/v1/score", "499") == before + 1
    assert _server_errors(text) == errors
    assert "Traceback" not in server.log.read_text()


def test_head_answers_as_get_without_a_body(server: Server):
    got = httpx.get(server.url + "/v1/jobs?limit=5", timeout=10)
    with _connect(server) as sock:
        sock.sendall(
            b"HEAD /v1/jobs?limit=5 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        )
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200")
    assert body == b""
    assert f"content-length: {len(got.content)}".encode() in head.lower()
    assert httpx.head(server.url + "/v1/score", timeout=10).status_code == 405  # POST only


def test_a_trailing_slash_is_no_redirect_to_the_host_header(server: Server):
    r = httpx.get(
        server.url + "/v1/jobs/", headers={"Host": "evil.example"}, follow_redirects=False
    )
    assert r.status_code == 404
    assert "location" not in r.headers
    assert "/v1/jobs" in r.json()["error"]["message"]


def test_the_fuzzers_wire_pass_finds_no_problem(server: Server):
    """``benchmarks/_fuzz_wire.py``, which ``benchmarks.service_fuzz`` runs after
    schemathesis, finds every answer as promised on this server; its routes (``POST_ROUTES``,
    which the tests above send to as well) are every route of the OpenAPI document that
    reads a body."""
    from benchmarks._fuzz_wire import run_wire

    spec = httpx.get(server.url + "/openapi.json", timeout=10).json()
    reads_a_body = {p for p, ops in spec["paths"].items() if "requestBody" in ops.get("post", {})}
    assert set(POST_ROUTES) == reads_a_body
    found = run_wire(server.url, BODY_TIMEOUT)
    assert found["problems"] == [], found
    assert all(v["status"] == 503 for v in found["stalled_bodies"].values()), found
