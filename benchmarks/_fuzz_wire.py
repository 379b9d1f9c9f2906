"""Bad requests below the schema, sent over raw sockets after the schema fuzzer's run (issue
37, part B): what schemathesis cannot send, because its client always sends whole, well-formed
requests.

- a stalled body on every POST route that reads one (``Content-Length: 1000``, 5 bytes sent):
  503 ``timeout`` within ``LEAKAGE_BODY_TIMEOUT`` (plus ``SLACK``);
- a client that hangs up mid-body, and a malformed chunked body (uvicorn answers 400 itself):
  counted as 499 in ``/metrics``, never as a 5xx;
- a trailing slash with ``Host: evil.example``: no redirect there;
- ``HEAD`` on ``GET`` routes: the headers of ``GET``, no body.

``run_wire`` returns what it found, with a list of ``problems`` (empty when every answer was
as promised) and ``expected_5xx``: the 503s it caused on purpose, which the fuzzer's count of
server errors in the access log leaves out.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import time
from typing import Any

import httpx

POST_ROUTES = (
    "/v1/score",
    "/v1/score/batch",
    "/v1/score/preview",
    "/v1/jobs",
    "/v1/transcripts",
    "/v1/splits",
)
"""Every route that reads a request body."""
HEAD_ROUTES = ("/v1/jobs", "/v1/transcripts/formats", "/v1/backends", "/healthz")
SLACK = 3.0
"""Seconds past the deadline an answer may come on a loaded machine."""
STALLED = b'{"a":'


def _head(port: int, path: str, extra: bytes = b"") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        "Content-Type: application/json\r\n".encode()
        + extra
        + b"\r\n"
    )


def read_response(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one response (read until the server closes, or the
    declared length has come)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = {
        k.strip().lower(): v.strip() for k, v in (x.split(":", 1) for x in lines[1:] if ":" in x)
    }
    length = int(headers.get("content-length", "-1"))
    while length < 0 or len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return status, headers, body


def _counts(url: str) -> tuple[float, float]:
    """(499s, 5xx) counted so far in ``/metrics``."""
    text = httpx.get(url + "/metrics", timeout=30).text
    closed = errors = 0.0
    for line in text.split("\n"):
        if not line.startswith("leakage_http_requests_total"):
            continue
        n = float(line.rsplit(" ", 1)[1])
        if 'status="499"' in line:
            closed += n
        elif re.search(r'status="5\d\d"', line):
            errors += n
    return closed, errors


def _wait_for(url: str, closed: float, errors: float, seconds: float = 15.0) -> tuple[float, float]:
    deadline = time.monotonic() + seconds
    now = _counts(url)
    while now[0] < closed and time.monotonic() < deadline:
        time.sleep(0.1)
        now = _counts(url)
    return now


def run_wire(url: str, body_timeout: float) -> dict[str, Any]:
    port = int(url.rsplit(":", 1)[1])
    problems: list[str] = []
    stalled: dict[str, Any] = {}
    for path in POST_ROUTES:
        with socket.create_connection(("127.0.0.1", port), timeout=body_timeout + 30) as sock:
            sock.sendall(_head(port, path, b"Content-Length: 1000\r\n") + STALLED)
            start = time.monotonic()
            status, headers, body = read_response(sock)
            seconds = round(time.monotonic() - start, 2)
        kind = None
        with contextlib.suppress(ValueError, KeyError, TypeError):
            kind = json.loads(body)["error"]["type"]
        stalled[path] = {"status": status, "type": kind, "seconds": seconds}
        if (status, kind) != (503, "timeout") or "retry-after" not in headers:
            problems.append(f"stalled body on {path}: {status} {kind}")
        elif seconds > body_timeout + SLACK:
            problems.append(f"stalled body on {path}: answered after {seconds} s")
    closed, errors = _counts(url)
    for path in POST_ROUTES:  # hang up mid-body
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(_head(port, path, b"Content-Length: 1000\r\n") + STALLED)
            time.sleep(0.2)
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall(
            _head(port, "/v1/score", b"Transfer-Encoding: chunked\r\n")
            + b'5\r\n{"a":\r\nzz-not-a-size\r\n\r\n'
        )
        chunked_status, _, _ = read_response(sock)
    want = closed + len(POST_ROUTES) + 1
    now_closed, now_errors = _wait_for(url, want, errors)
    if now_closed < want:
        problems.append(f"hang-ups counted as 499: {now_closed - closed:g} of {want - closed:g}")
    if now_errors > errors:
        problems.append(f"hang-ups counted as 5xx: {now_errors - errors:g}")
    if chunked_status >= 500:
        problems.append(f"malformed chunked body answered {chunked_status}")
    redirect = httpx.get(
        url + "/v1/jobs/", headers={"Host": "evil.example"}, follow_redirects=False, timeout=30
    )
    if "evil.example" in redirect.headers.get("location", "") or redirect.status_code >= 500:
        problems.append(f"trailing slash: {redirect.status_code} {redirect.headers}")
    for path in HEAD_ROUTES:
        got = httpx.get(url + path, timeout=30)
        head = httpx.head(url + path, timeout=30)
        if head.status_code != got.status_code or head.content:
            problems.append(f"HEAD {path}: {head.status_code} ({len(head.content)} bytes)")
    return {
        "stalled_bodies": stalled,
        "hang_ups": len(POST_ROUTES),
        "malformed_chunked_status": chunked_status,
        "expected_5xx": len(POST_ROUTES),
        "problems": problems,
    }
