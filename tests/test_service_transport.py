"""What the service says at the HTTP level, on a real uvicorn process on 127.0.0.1: which
client address a request counts as (forwarded headers believed from the proxies
``LEAKAGE_TRUSTED_PROXIES`` names only), the security headers of every kind of response (no
``server`` banner), and the Content-Type ``POST /v1/score`` accepts."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from leakage_service.settings import Settings

from .conftest import REPO
from .test_service_server import SPORTS, Server, server_env

KEY = "transport-key"


def access_lines(log: Path) -> list[dict]:
    """The access log's lines (one per request) in a server's log file."""
    lines = log.read_text().split("\n")
    return [json.loads(x) for x in lines if '"event": "request"' in x]


def wrong_key_statuses(url: str, forwarded: list[str]) -> list[int]:
    """The status of a wrong key sent once with each ``X-Forwarded-For`` value."""
    with httpx.Client(base_url=url, timeout=30) as client:
        return [
            client.get(
                "/v1/backends", headers={"x-api-key": f"guess-{i}", "x-forwarded-for": address}
            ).status_code
            for i, address in enumerate(forwarded)
        ]


# -- 1. forwarded headers ----------------------------------------------------------------------


def test_a_forwarded_address_is_not_believed_unless_its_proxy_is_named(
    tmp_path: Path, default_index: Path
):
    """uvicorn believes X-Forwarded-For from 127.0.0.1 by default: a local client that sent
    a new address with each wrong key was never limited (60 wrong keys, 60 401s), and the
    access log recorded whatever it sent. Now the peer's address counts."""
    burst = Settings().auth_failure_burst
    log = tmp_path / "server.log"
    server = Server(server_env(tmp_path, default_index, LEAKAGE_API_KEYS=KEY), log)
    try:
        rotating = [f"198.51.100.{i}" for i in range(burst + 5)]
        statuses = wrong_key_statuses(server.url, rotating)
        r = httpx.get(
            f"{server.url}/v1/backends",
            headers={"x-api-key": KEY, "x-forwarded-for": "198.51.100.250"},
            timeout=30,
        )
    finally:
        server.stop()
    assert statuses == [401] * burst + [429] * 5
    assert r.status_code == 429  # the address is spent, whatever it claims to be
    lines = [x for x in access_lines(log) if x["path"] == "/v1/backends"]
    assert len(lines) == burst + 6
    assert {x["client"] for x in lines} == {"127.0.0.1"}
    assert "198.51.100." not in log.read_text()


def test_a_named_proxy_forwards_the_client_address(tmp_path: Path, default_index: Path):
    burst = Settings().auth_failure_burst
    log = tmp_path / "server.log"
    env = server_env(
        tmp_path, default_index, LEAKAGE_API_KEYS=KEY, LEAKAGE_TRUSTED_PROXIES="10.9.8.7,127.0.0.1"
    )
    server = Server(env, log)
    try:
        # each client behind the proxy has its own allowance ...
        rotating = [f"198.51.100.{i}" for i in range(burst + 5)]
        assert wrong_key_statuses(server.url, rotating) == [401] * (burst + 5)
        # ... and one client is limited at the attempt the limit says
        one = ["203.0.113.7"] * (burst + 2)
        assert wrong_key_statuses(server.url, one) == [401] * burst + [429] * 2
        # the proxy's address itself (no header) and the other clients are not slowed
        ok = httpx.get(f"{server.url}/v1/backends", headers={"x-api-key": KEY}, timeout=30)
        assert ok.status_code == 200
        # the proxy appends the peer it saw; the client cannot choose what stands before it
        chained = wrong_key_statuses(server.url, ["192.0.2.1, 203.0.113.7"])
        assert chained == [429]
    finally:
        server.stop()
    lines = [x for x in access_lines(log) if x["path"] == "/v1/backends"]
    clients = [x["client"] for x in lines]
    assert clients[: burst + 5] == rotating
    assert clients[burst + 5 : 2 * burst + 7] == one
    assert clients[-2:] == ["127.0.0.1", "203.0.113.7"]


# -- 2. security headers -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("transport")
    s = Server(server_env(home, default_index), home / "server.log")
    yield s
    s.stop()


def assert_secured(r: httpx.Response) -> None:
    """The headers every response carries, and no banner."""
    assert "server" not in r.headers, r.headers
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"
    assert r.headers["x-frame-options"] == "DENY"
    assert "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert r.headers["x-request-id"]


def test_api_answers_carry_the_security_headers_and_no_banner(server: Server):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        answers = {
            "json": client.post("/v1/score", content=SPORTS),
            "json get": client.get("/v1/backends"),
            "422": client.post("/v1/score", content=b'{"game": '),
            "415": client.post("/v1/score", content=SPORTS, headers={"content-type": "text/plain"}),
            "404": client.get("/no/such/route"),
            "405": client.get("/v1/score"),
            "probe": client.get("/healthz"),
        }
        with client.stream(
            "POST", "/v1/score/batch", content=b"[" + SPORTS + b"," + SPORTS + b"]"
        ) as stream:
            answers["ndjson"] = stream
            # still a stream: sent in chunks, no length known up front
            assert stream.headers["transfer-encoding"] == "chunked"
            assert "content-length" not in stream.headers
            lines = [json.loads(x) for x in stream.iter_lines() if x]
    assert [x["format"] for x in lines] == ["leakage.report/1"] * 2
    expected = {"json": 200, "json get": 200, "422": 422, "415": 415, "404": 404, "405": 405}
    assert {k: answers[k].status_code for k in expected} == expected
    for name, r in answers.items():
        assert_secured(r)
        assert r.headers["cache-control"] == "no-store", name
        assert r.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"


def test_pages_keep_working_and_cannot_be_framed(server: Server):
    with httpx.Client(base_url=server.url, timeout=60) as client:
        docs = client.get("/docs")
        page = client.get("/ui")
        css = client.get("/docs/assets/swagger-ui.css")
        module = client.get("/ui/assets/app.js")
        again = client.get(
            "/docs/assets/swagger-ui.css", headers={"if-none-match": css.headers["etag"]}
        )
        spec = client.get("/openapi.json")
    for r in (docs, page, css, module, spec):
        assert r.status_code == 200, r.request.url
        assert_secured(r)
    # Swagger UI starts from an inline script: its policy forbids framing, not scripts
    assert "<script>" in docs.text
    policy = docs.headers["content-security-policy"]
    assert "script-src" not in policy and "default-src" not in policy
    # the explorer keeps its own policy (everything from this server) and caching
    assert page.headers["content-security-policy"].startswith("default-src 'self';")
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-cache"
    assert module.headers["cache-control"] == "no-cache"
    assert module.headers["content-type"].startswith("text/javascript")
    # static files stay cacheable (validated by their ETag)
    assert "no-store" not in css.headers.get("cache-control", "")
    assert again.status_code == 304 and "no-store" not in again.headers.get("cache-control", "")


# -- 3. the Content-Type of POST /v1/score -------------------------------------------------------


@pytest.mark.parametrize(
    ("ctype", "hint"),
    [
        ("application/x-www-form-urlencoded", "--data-binary alone declares a form"),
        ("text/plain;charset=UTF-8", ""),
        ("multipart/form-data; boundary=x", "POST /v1/jobs"),
        ("application/x-ndjson", "POST /v1/score/batch"),
        ("application/xml", ""),
    ],
)
def test_a_body_declared_as_something_else_than_json_is_415(server: Server, ctype: str, hint: str):
    r = httpx.post(
        f"{server.url}/v1/score", content=SPORTS, headers={"content-type": ctype}, timeout=60
    )
    assert r.status_code == 415, r.text
    err = r.json()["error"]
    assert (err["type"], err["field"]) == ("unsupported_media_type", "content-type")
    assert repr(ctype) in err["message"] and "'Content-Type: application/json'" in err["message"]
    assert hint in err["message"]


@pytest.mark.parametrize(
    "ctype",
    [None, "application/json", "Application/JSON; charset=utf-8", "application/vnd.game+json"],
)
def test_json_or_no_content_type_is_scored(server: Server, ctype: str | None):
    headers = {"content-type": ctype} if ctype else {}
    r = httpx.post(f"{server.url}/v1/score", content=SPORTS, headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    assert r.json()["format"] == "leakage.report/1"


def test_the_415_is_documented(server: Server):
    spec = httpx.get(f"{server.url}/openapi.json", timeout=30).json()
    responses = spec["paths"]["/v1/score"]["post"]["responses"]
    assert responses["415"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ErrorBody"
    }


def test_documented_score_commands_declare_json():
    """curl --data-binary declares a form unless told: every documented /v1/score command
    says the body is JSON (else it is a 415)."""
    found = []
    for doc in (REPO / "README.md", REPO / "docs" / "service.md"):
        for line in doc.read_text().splitlines():
            if re.search(r"curl .*/v1/score(\?|'| )", line) and "--data-binary" in line:
                found.append(line)
                assert "-H 'Content-Type: application/json'" in line, (doc.name, line)
    assert len(found) >= 5
