"""What every fake API here shares: a threaded HTTP server on a loopback port.

A fake subclasses :class:`LoopbackFake` and gives it a handler class (a subclass of
:class:`JsonHandler`); the base keeps the request log, the most requests in flight at once
and the queue of scripted faults, under one lock, as the handler threads report them.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Self, TypeVar

RequestT = TypeVar("RequestT")
FaultT = TypeVar("FaultT")


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 handler that answers JSON."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle's algorithm and
    # the client's delayed ACK add ~40 ms to every request.
    disable_nagle_algorithm = True
    content_type = "application/json"

    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", self.content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
            self.close_connection = True


class LoopbackFake(Generic[RequestT, FaultT]):
    """A fake server's lifecycle and bookkeeping; use the subclass as a context manager."""

    def __init__(self, handler: Callable[[Any], type[BaseHTTPRequestHandler]]) -> None:
        self.requests: list[RequestT] = []
        self.max_in_flight = 0
        self._in_flight = 0
        self._faults: deque[FaultT] = deque()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()  # joins the handler threads
        self._thread.join(timeout=5)

    @property
    def root(self) -> str:
        """``http://host:port`` of the server."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def _queue(self, faults: list[FaultT]) -> None:
        with self._lock:
            self._faults.extend(faults)

    def _count(self, keep: Callable[[RequestT], bool]) -> int:
        with self._lock:
            return sum(1 for r in self.requests if keep(r))

    # -- used by the handler -------------------------------------------------------------

    def _record(self, request: RequestT) -> FaultT | None:
        with self._lock:
            self.requests.append(request)
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return self._faults.popleft() if self._faults else None

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1
