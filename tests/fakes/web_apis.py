"""A fake of SerpApi, the Google Custom Search JSON API and infini-gram, on 127.0.0.1.

One ``http.server`` in a thread serves the three APIs at their real paths, in their real
JSON shapes, and computes counts from a tiny in-memory document list, so the numbers a
test checks are real counts rather than canned answers:

- ``GET /search.json`` (SerpApi, Google engine): documents containing every quoted phrase,
  case-insensitive; ``search_information.total_results`` is an int, left out (with an
  ``error`` message) when there are no results, as SerpApi does;
- ``GET /customsearch/v1`` (Custom Search): the same count as a *string* in
  ``searchInformation.totalResults``;
- ``POST /`` (infini-gram, ``query_type=count``): CNF queries, case-sensitive; one clause
  counts occurrences of any of its terms; several AND-ed clauses count the documents in
  which all occur (a stand-in for infini-gram's windowed co-occurrence count); the empty
  query counts the tokens of the corpus.

Faults are scripted with :meth:`FakeWebApis.fail` and consumed one per request, whatever
the API: an HTTP status (with an optional ``Retry-After``), ``"malformed"`` JSON, a
``"missing"`` count field, or an infini-gram ``"error_payload"`` (an error in a 200).
Every request is logged in :attr:`FakeWebApis.requests`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.fakes._loopback import JsonHandler, LoopbackFake

DOCUMENTS: tuple[str, ...] = (
    "The tennis racket hit the ball over the net.",
    "A racket and a shuttlecock are used in badminton.",
    "Squash is played with a racket in a walled court.",
    "Ice hockey players use a stick and a puck on the ice.",
    "Paris is the capital of France.",
    "The Eiffel Tower in Paris is made of iron.",
    "paris hilton watched the tennis final.",
    "Field hockey is played on grass with a stick.",
)

SERPAPI_KEY = "serp-test-key"
GOOGLE_KEY = "google-test-key"
CSE_ID = "cse-test-id"
INFINI_GRAM_INDEX = "v4_fake_llama"

_WORD = re.compile(r"\w+")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def _occurrences(tokens: list[str], phrase: list[str]) -> int:
    n = len(phrase)
    if n == 0:
        return 0
    return sum(tokens[i : i + n] == phrase for i in range(len(tokens) - n + 1))


@dataclass
class Fault:
    """One scripted failure: an HTTP status, or a kind of bad 200 answer."""

    kind: int | str
    retry_after: str | None = None
    message: str | None = None


@dataclass(frozen=True)
class Request:
    """A request the fake received: which API and the query text as sent."""

    api: str
    query: str
    params: dict[str, Any]


class FakeWebApis(LoopbackFake["Request", "Fault"]):
    """The three APIs on one loopback server; use as a context manager."""

    def __init__(self, documents: tuple[str, ...] = DOCUMENTS, *, delay: float = 0.0) -> None:
        self.documents = documents
        self.delay = delay
        super().__init__(_handler_for)

    @property
    def url(self) -> str:
        return self.root

    @property
    def serpapi_url(self) -> str:
        return self.url + "/search.json"

    @property
    def cse_url(self) -> str:
        return self.url + "/customsearch/v1"

    @property
    def infini_gram_url(self) -> str:
        return self.url + "/"

    # -- scripting ---------------------------------------------------------------------

    def fail(
        self,
        kind: int | str,
        *,
        times: int = 1,
        retry_after: str | None = None,
        message: str | None = None,
    ) -> None:
        """Answer the next ``times`` requests with this fault instead of a count."""
        self._queue([Fault(kind, retry_after, message) for _ in range(times)])

    def hits(self, api: str | None = None) -> int:
        """How many requests arrived (for one API, or all)."""
        return self._count(lambda r: api is None or r.api == api)

    # -- counting ------------------------------------------------------------------------

    def document_count(self, phrases: list[str]) -> int:
        """Documents containing every phrase, case-insensitive (the Google engines)."""
        wanted = [[t.casefold() for t in _tokens(p)] for p in phrases]
        return sum(
            all(_occurrences([t.casefold() for t in _tokens(doc)], w) > 0 for w in wanted)
            for doc in self.documents
        )

    def ngram_count(self, query: str) -> int:
        """infini-gram's count for a CNF query, case-sensitive (see module docstring)."""
        docs = [_tokens(doc) for doc in self.documents]
        if not query.strip():
            return sum(len(d) for d in docs)
        clauses = [
            [_tokens(term) for term in clause.split(" OR ")] for clause in query.split(" AND ")
        ]
        if len(clauses) == 1:
            return sum(_occurrences(d, term) for d in docs for term in clauses[0])
        return sum(
            all(any(_occurrences(d, term) for term in clause) for clause in clauses) for d in docs
        )


def _serpapi(fake: FakeWebApis, params: dict[str, Any]) -> tuple[int, Any]:
    if params.get("api_key") != SERPAPI_KEY:
        msg = "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"
        return 401, {"error": msg}
    if params.get("engine") != "google":
        return 400, {"error": "Unsupported `engine` parameter."}
    q = params.get("q")
    if not q:
        return 400, {"error": "Missing query `q` parameter."}
    n = fake.document_count(re.findall(r'"([^"]*)"', q))
    body: dict[str, Any] = {
        "search_metadata": {"id": "fake", "status": "Success"},
        "search_parameters": {"engine": "google", "q": q},
        "search_information": {"query_displayed": q, "time_taken_displayed": 0.21},
    }
    if n:
        body["search_information"]["total_results"] = n
        body["search_information"]["organic_results_state"] = "Results for exact spelling"
        body["organic_results"] = [{"position": 1, "title": "a page", "link": "https://x.test"}]
    else:
        body["search_information"]["organic_results_state"] = "Fully empty"
        body["error"] = "Google hasn't returned any results for this query."
    return 200, body


def _google_error(code: int, message: str, status: str, reason: str) -> dict[str, Any]:
    return {
        "error": {
            "code": code,
            "message": message,
            "errors": [{"message": message, "domain": "global", "reason": reason}],
            "status": status,
        }
    }


def _cse(fake: FakeWebApis, params: dict[str, Any]) -> tuple[int, Any]:
    if params.get("key") != GOOGLE_KEY:
        msg = "API key not valid. Please pass a valid API key."
        return 400, _google_error(400, msg, "INVALID_ARGUMENT", "keyInvalid")
    if params.get("cx") != CSE_ID or not params.get("q"):
        msg = "Request contains an invalid argument."
        return 400, _google_error(400, msg, "INVALID_ARGUMENT", "badRequest")
    q = params["q"]
    n = fake.document_count(re.findall(r'"([^"]*)"', q))
    body: dict[str, Any] = {
        "kind": "customsearch#search",
        "queries": {"request": [{"searchTerms": q, "count": 1, "totalResults": str(n)}]},
        "searchInformation": {
            "searchTime": 0.18,
            "formattedSearchTime": "0.18",
            "totalResults": str(n),
            "formattedTotalResults": f"{n:,}",
        },
    }
    if n:
        body["items"] = [{"kind": "customsearch#result", "title": "a page"}]
    return 200, body


def _infini_gram(fake: FakeWebApis, payload: Any) -> tuple[int, Any]:
    if not isinstance(payload, dict) or payload.get("query_type") != "count":
        return 200, {"error": "Invalid query_type"}
    if payload.get("index") != INFINI_GRAM_INDEX:
        return 200, {"error": f"Invalid index: {payload.get('index')}"}
    query = payload.get("query")
    if not isinstance(query, str):
        return 200, {"error": "query must be a string"}
    toks = _tokens(query)
    return 200, {
        "count": fake.ngram_count(query),
        "approx": False,
        "latency": 0.42,
        "token_ids": list(range(len(toks))),
        "tokens": ["▁" + t for t in toks],
    }


def _fault_body(api: str, fault: Fault) -> tuple[int, dict[str, str], bytes]:
    headers = {"Retry-After": fault.retry_after} if fault.retry_after is not None else {}
    if fault.kind == "malformed":
        return 200, headers, b'{"search_information": {"total_results": 12'
    if fault.kind == "missing":
        missing = {
            "serpapi": {"search_metadata": {"status": "Success"}, "search_information": {}},
            "google-cse": {"kind": "customsearch#search", "queries": {}},
            "infini-gram": {"approx": False, "latency": 0.1},
        }[api]
        return 200, headers, json.dumps(missing).encode()
    if fault.kind == "error_payload":
        return 200, headers, json.dumps({"error": fault.message or "Server busy"}).encode()
    status = int(fault.kind)
    message = fault.message or {429: "Too Many Requests", 401: "Unauthorized"}.get(
        status, "Internal server error"
    )
    body: Any = (
        _google_error(status, message, "UNAVAILABLE", "backendError")
        if api == "google-cse"
        else {"error": message}
    )
    return status, headers, json.dumps(body).encode()


def _handler_for(fake: FakeWebApis) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        content_type = "application/json; charset=utf-8"

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            params = {k: v[-1] for k, v in parse_qs(parts.query).items()}
            if parts.path == "/search.json":
                self._serve("serpapi", params.get("q", ""), params, lambda: _serpapi(fake, params))
            elif parts.path == "/customsearch/v1":
                self._serve("google-cse", params.get("q", ""), params, lambda: _cse(fake, params))
            else:
                self._send(404, {}, b'{"error": "Not found"}')

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if urlsplit(self.path).path != "/":
                self._send(404, {}, b'{"error": "Not found"}')
                return
            try:
                payload = json.loads(raw)
            except ValueError:
                self._send(400, {}, b'{"error": "Request body is not JSON"}')
                return
            query = payload.get("query", "") if isinstance(payload, dict) else ""
            params = payload if isinstance(payload, dict) else {}
            self._serve("infini-gram", query, params, lambda: _infini_gram(fake, payload))

        def _serve(self, api: str, query: str, params: dict[str, Any], answer: Any) -> None:
            fault = fake._record(Request(api, query, dict(params)))
            try:
                if fake.delay:
                    time.sleep(fake.delay)
                if fault is not None:
                    self._send(*_fault_body(api, fault))
                else:
                    status, body = answer()
                    self._send(status, {}, json.dumps(body).encode())
            finally:
                fake._done()

    return Handler
