"""A fake OpenAI-compatible server (vLLM-like by default) on 127.0.0.1.

One ``http.server`` in a thread serves ``POST /v1/chat/completions``,
``POST /v1/completions`` and ``GET /v1/models`` in the real JSON shapes, including
``usage``, logprobs in the chat format (``logprobs.content[i].top_logprobs[j]``) and in the
legacy completions format (``tokens``, ``token_logprobs``, ``top_logprobs``,
``text_offset``), and ``echo``. Its "model" is deterministic so that a test can check
numbers:

- text is split into tokens by :func:`tokenize` (a word with its leading whitespace, or one
  punctuation mark with its leading whitespace, like a GPT tokenizer);
- the log-probability of a token is ``-len(token) / 10`` whatever the context
  (:func:`token_logprob`); the first token of an echoed prompt has none (``null``);
- ``top_logprobs`` at a position are the chosen token then ``alt1``, ``alt2``, ... each
  0.5 less likely (:func:`alternatives`);
- a chat is answered ``"You said: " + <last user message>`` and a plain prompt with
  :data:`COMPLETION`, cut to ``max_tokens`` tokens and at the first ``stop`` string.

``chat_reply`` scripts the chat answer instead: a function of the request's ``messages``
(``[{"role": ..., "content": ...}, ...]`` as sent) returning the reply text, e.g. a game
player's move read off the prompt. The scripted reply is treated as the default one is:
tokenized for ``usage`` and logprobs, cut to ``max_tokens`` and at ``stop``. An exception
it raises answers the request with a 400 naming it (not retried: the client fails at
once with the message).

Server flavours: ``api_key`` (a bearer token is required), ``models`` (others get 404),
``chat_only`` (completions with ``echo`` + ``logprobs`` are refused with 400, as OpenAI
does), ``echo_ignored`` (``echo`` is silently ignored and logprobs cover the generated
tokens only, as the llama.cpp server does), ``logprobs_supported=False`` (logprobs are
never returned), ``min_max_tokens=1`` (``max_tokens: 0`` is refused) and ``delay`` (each
answer takes that long).

Faults are scripted with :meth:`FakeOpenAI.fail` and consumed one per request: an HTTP
status (with an optional ``Retry-After`` and message), ``"malformed"`` JSON, ``"missing"``
(a field removed from a good answer) or ``"slow"`` (a good answer after ``seconds``).
Every request is logged in :attr:`FakeOpenAI.requests`; :attr:`FakeOpenAI.max_in_flight`
is the most requests ever handled at once.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from tests.fakes._loopback import JsonHandler, LoopbackFake

MODEL = "fake-lm"
COMPLETION = " and the secret stays hidden."
CHAT_PREFIX = "You said: "

_TOKEN = re.compile(r"\s*\w+|\s*[^\w\s]|\s+")


def tokenize(text: str) -> list[tuple[str, int]]:
    """``(token, character offset)`` pairs that cover ``text`` exactly."""
    return [(m.group(), m.start()) for m in _TOKEN.finditer(text)]


def token_logprob(token: str) -> float:
    return -len(token) / 10


def alternatives(token: str, n: int) -> list[tuple[str, float]]:
    """The ``n`` most likely tokens at a position where ``token`` was chosen."""
    lp = token_logprob(token)
    return [(token, lp)] + [(f"alt{k}", lp - 0.5 * k) for k in range(1, n)]


def chat_prompt_tokens(messages: list[dict[str, str]]) -> int:
    """What the fake reports as ``usage.prompt_tokens`` for a chat (3 per message framing)."""
    return sum(len(tokenize(m["content"])) + 3 for m in messages)


@dataclass
class Fault:
    """One scripted failure."""

    kind: int | str
    retry_after: str | None = None
    message: str | None = None
    field: str | None = None
    seconds: float = 0.0


@dataclass(frozen=True)
class Request:
    """A request the fake received."""

    path: str
    body: Any
    authorization: str | None


class FakeOpenAI(LoopbackFake["Request", "Fault"]):
    """An OpenAI-compatible API on a loopback port; use as a context manager."""

    def __init__(
        self,
        *,
        models: tuple[str, ...] = (MODEL,),
        api_key: str | None = None,
        chat_only: bool = False,
        echo_ignored: bool = False,
        logprobs_supported: bool = True,
        min_max_tokens: int = 0,
        delay: float = 0.0,
        chat_reply: Callable[[list[dict[str, str]]], str] | None = None,
    ) -> None:
        self.models = models
        self.api_key = api_key
        self.chat_only = chat_only
        self.echo_ignored = echo_ignored
        self.logprobs_supported = logprobs_supported
        self.min_max_tokens = min_max_tokens
        self.delay = delay
        self.chat_reply = chat_reply
        super().__init__(_handler_for)

    @property
    def url(self) -> str:
        """The API root, as a client's ``base_url``."""
        return self.root + "/v1"

    def fail(
        self,
        kind: int | str,
        *,
        times: int = 1,
        retry_after: str | None = None,
        message: str | None = None,
        field: str | None = None,
        seconds: float = 0.0,
    ) -> None:
        """Answer the next ``times`` requests with this fault.

        ``field`` (for ``"missing"``) is a dotted path into the answer, e.g.
        ``"choices.0.logprobs.text_offset"``; by default the generated text.
        """
        self._queue([Fault(kind, retry_after, message, field, seconds) for _ in range(times)])

    def hits(self, path: str | None = None) -> int:
        """How many requests arrived (at one path, e.g. ``"/v1/completions"``, or all)."""
        return self._count(lambda r: path is None or r.path == path)


def _error(status: int, message: str, kind: str, code: str | None = None) -> tuple[int, Any]:
    return status, {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _generate(reply: str, max_tokens: int, stop: Any) -> tuple[str, list[tuple[str, int]], str]:
    """``(text, tokens, finish_reason)`` of the fake model's answer."""
    tokens = tokenize(reply)[:max_tokens]
    finish = "length" if len(tokens) < len(tokenize(reply)) else "stop"
    text = "".join(t for t, _ in tokens)
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    cuts = [text.find(s) for s in stops if s and s in text]
    if cuts:
        text = text[: min(cuts)]
        tokens = tokenize(text)
        finish = "stop"
    return text, tokens, finish


def _check_common(fake: FakeOpenAI, body: Any, field: str) -> tuple[int, Any] | None:
    if not isinstance(body, dict):
        return _error(400, "The request body must be a JSON object.", "invalid_request_error")
    if body.get("model") not in fake.models:
        msg = f"The model `{body.get('model')}` does not exist."
        return _error(404, msg, "invalid_request_error", "model_not_found")
    if field not in body:
        return _error(400, f"'{field}' is a required property", "invalid_request_error")
    return None


def _chat(fake: FakeOpenAI, body: Any) -> tuple[int, Any]:
    refused = _check_common(fake, body, "messages")
    if refused:
        return refused
    messages = body["messages"]
    if fake.chat_reply is not None:
        try:
            reply = fake.chat_reply(messages)
        except Exception as err:  # a script that cannot answer shows at once
            return _error(400, f"chat_reply failed: {err!r}", "invalid_request_error")
    else:
        users = [m["content"] for m in messages if m.get("role") == "user"]
        reply = CHAT_PREFIX + (users[-1] if users else "")
    max_tokens = int(body.get("max_tokens") or 16)
    text, tokens, finish = _generate(reply, max_tokens, body.get("stop"))
    logprobs = None
    if body.get("logprobs") and fake.logprobs_supported:
        n = int(body.get("top_logprobs") or 0)
        logprobs = {
            "content": [
                {
                    "token": t,
                    "logprob": token_logprob(t),
                    "bytes": list(t.encode()),
                    "top_logprobs": [
                        {"token": a, "logprob": lp, "bytes": list(a.encode())}
                        for a, lp in (alternatives(t, n) if n else [])
                    ],
                }
                for t, _ in tokens
            ],
            "refusal": None,
        }
    prompt_tokens = chat_prompt_tokens(messages)
    return 200, {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": logprobs,
                "finish_reason": finish,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": len(tokens),
            "total_tokens": prompt_tokens + len(tokens),
        },
    }


def _completions(fake: FakeOpenAI, body: Any) -> tuple[int, Any]:
    refused = _check_common(fake, body, "prompt")
    if refused:
        return refused
    prompt = body["prompt"]
    n = body.get("logprobs")
    echo = bool(body.get("echo")) and not fake.echo_ignored
    if fake.chat_only and body.get("echo") and n is not None:
        msg = "Setting 'echo' and 'logprobs' at the same time is not supported for this model."
        return _error(400, msg, "invalid_request_error")
    max_tokens = body.get("max_tokens", 16)
    if not isinstance(max_tokens, int) or max_tokens < fake.min_max_tokens:
        msg = f"max_tokens must be at least {fake.min_max_tokens}, got {max_tokens}."
        return _error(400, msg, "BadRequestError")
    text, generated, finish = _generate(COMPLETION, max_tokens, body.get("stop"))
    prompt_tokens = tokenize(prompt)
    logprobs = None
    if n is not None and fake.logprobs_supported:
        shown = [(t, o, i > 0) for i, (t, o) in enumerate(prompt_tokens)] if echo else []
        shown += [(t, len(prompt) + o, True) for t, o in generated]
        logprobs = {
            "tokens": [t for t, _, _ in shown],
            "token_logprobs": [token_logprob(t) if has else None for t, _, has in shown],
            "top_logprobs": [dict(alternatives(t, int(n))) if has else None for t, _, has in shown],
            "text_offset": [o for _, o, _ in shown],
        }
    return 200, {
        "id": "cmpl-fake",
        "object": "text_completion",
        "created": 1_700_000_000,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "text": (prompt + text) if echo else text,
                "logprobs": logprobs,
                "finish_reason": finish if max_tokens else "length",
            }
        ],
        "usage": {
            "prompt_tokens": len(prompt_tokens),
            "completion_tokens": len(generated),
            "total_tokens": len(prompt_tokens) + len(generated),
        },
    }


def _remove(payload: Any, dotted: str) -> None:
    *parents, last = dotted.split(".")
    node = payload
    for step in parents:
        node = node[int(step)] if isinstance(node, list) else node[step]
    if isinstance(node, list):
        del node[int(last)]
    else:
        del node[last]


def _handler_for(fake: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(JsonHandler):
        def do_GET(self) -> None:
            if urlsplit(self.path).path == "/v1/models":
                data = [{"id": m, "object": "model", "owned_by": "fake"} for m in fake.models]
                self._send(200, {}, json.dumps({"object": "list", "data": data}).encode())
            else:
                self._send(404, {}, b'{"error": {"message": "Not found"}}')

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            fault = fake._record(Request(path, body, self.headers.get("Authorization")))
            try:
                self._answer(path, body, fault)
            finally:
                fake._done()

        def _answer(self, path: str, body: Any, fault: Fault | None) -> None:
            if fake.delay:
                time.sleep(fake.delay)
            if fault is not None and fault.kind == "slow":
                time.sleep(fault.seconds)
                fault = None
            if fake.api_key is not None and self.headers.get("Authorization") != (
                f"Bearer {fake.api_key}"
            ):
                given = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                msg = f"Incorrect API key provided: {given[:2]}***{given[-2:]}."
                status, payload = _error(401, msg, "invalid_request_error", "invalid_api_key")
                self._send(status, {}, json.dumps(payload).encode())
                return
            if fault is not None and isinstance(fault.kind, int):
                headers = {"Retry-After": fault.retry_after} if fault.retry_after else {}
                message = fault.message or {429: "Rate limit reached", 401: "Unauthorized"}.get(
                    fault.kind, "The server had an error while processing your request."
                )
                status, payload = _error(fault.kind, message, "server_error")
                self._send(status, headers, json.dumps(payload).encode())
                return
            if fault is not None and fault.kind == "malformed":
                self._send(200, {}, b'{"id": "cmpl-fake", "choices": [{"text": "and the')
                return
            if path == "/v1/chat/completions":
                status, payload = _chat(fake, body)
            elif path == "/v1/completions":
                status, payload = _completions(fake, body)
            else:
                status, payload = _error(404, f"Unknown path {path}", "invalid_request_error")
            if fault is not None and fault.kind == "missing" and status == 200:
                default = "choices.0.message.content" if "chat" in path else "choices.0.text"
                _remove(payload, fault.field or default)
            self._send(status, {}, json.dumps(payload).encode())

    return Handler
