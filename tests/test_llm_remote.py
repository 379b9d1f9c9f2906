"""The OpenAI-compatible client against a local fake that speaks the real JSON over HTTP."""

from __future__ import annotations

import asyncio
import math
import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from leakage.cli._errors import EXIT_COUNT_SOURCE, exit_code
from leakage.errors import BackendUnavailable, BudgetExhausted, LeakageError, LLMError
from leakage.llm import LLMClient, Message, OpenAICompatibleClient
from tests.fakes.openai_api import (
    CHAT_PREFIX,
    COMPLETION,
    MODEL,
    FakeOpenAI,
    alternatives,
    chat_prompt_tokens,
    token_logprob,
    tokenize,
)

FAST = {"backoff": 0.01, "max_wait": 2.0}
CHAT = [Message("system", "You are the judge."), Message("user", "Is it Paris?")]


@pytest.fixture
def fake():
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "llm.sqlite"


def client(fake: FakeOpenAI, cache: Path | None = None, **kw: Any) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        fake.url, kw.pop("model", MODEL), kw.pop("api_key", None), cache_path=cache, **FAST | kw
    )


def lp(text: str) -> float:
    """What the fake model gives a text: the sum over its tokens."""
    return sum(token_logprob(t) for t, _ in tokenize(text))


# -- generate ---------------------------------------------------------------------------


def test_generate_a_chat(fake):
    gen = client(fake).generate(CHAT, max_tokens=50)
    assert gen.text == CHAT_PREFIX + "Is it Paris?"
    assert gen.completion_tokens == len(tokenize(gen.text))
    assert gen.prompt_tokens == chat_prompt_tokens(
        [{"content": m.content, "role": m.role} for m in CHAT]
    )
    assert gen.top_logprobs is None and not gen.cached
    (request,) = fake.requests
    assert request.path == "/v1/chat/completions"
    assert request.body == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You are the judge."},
            {"role": "user", "content": "Is it Paris?"},
        ],
        "max_tokens": 50,
        "temperature": 0.0,
    }
    assert request.authorization is None  # no key, no header


def test_generate_a_plain_prompt_with_stop_and_max_tokens(fake):
    llm = client(fake)
    gen = llm.generate("The secret is", max_tokens=3, stop=["\n"])
    assert gen.text == "".join(t for t, _ in tokenize(COMPLETION)[:3])  # " and the secret"
    assert gen.completion_tokens == 3 and gen.prompt_tokens == 3
    cut = llm.generate("The secret is", stop=[" stays"], temperature=0.7)
    assert cut.text == " and the secret"
    first, second = fake.requests
    assert first.path == second.path == "/v1/completions"
    assert first.body == {
        "model": MODEL,
        "prompt": "The secret is",
        "max_tokens": 3,
        "temperature": 0.0,
        "stop": ["\n"],
    }
    assert second.body["temperature"] == 0.7 and "logprobs" not in second.body


def test_top_logprobs_in_the_chat_format(fake):
    gen = client(fake).generate([Message("user", "Paris")], max_tokens=4, top_logprobs=3)
    assert fake.requests[0].body["logprobs"] is True
    assert fake.requests[0].body["top_logprobs"] == 3
    tokens = [t for t, _ in tokenize(gen.text)]
    assert tokens == ["You", " said", ":", " Paris"]
    assert gen.top_logprobs == [dict(alternatives(t, 3)) for t in tokens]
    assert gen.top_logprobs[1] == {" said": -0.5, "alt1": -1.0, "alt2": -1.5}


def test_top_logprobs_in_the_completions_format(fake):
    gen = client(fake).generate("The secret is", max_tokens=2, top_logprobs=2)
    assert fake.requests[0].body["logprobs"] == 2 and "top_logprobs" not in fake.requests[0].body
    assert gen.top_logprobs == [
        {" and": -0.4, "alt1": -0.9},
        {" the": -0.4, "alt1": -0.9},
    ]


def test_no_logprobs_from_the_server_is_none():
    with FakeOpenAI(logprobs_supported=False) as fake:
        llm = client(fake)
        assert llm.generate(CHAT, top_logprobs=5).top_logprobs is None
        assert llm.generate("prompt", top_logprobs=5).top_logprobs is None
        assert llm.generate("prompt").text == COMPLETION


def test_null_chat_content_is_an_empty_answer(fake):
    async def run() -> str:
        def handler(request: httpx.Request) -> httpx.Response:
            message = {"role": "assistant", "content": None, "refusal": "I can't."}
            return httpx.Response(200, json={"choices": [{"index": 0, "message": message}]})

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            llm = OpenAICompatibleClient("http://llm.test/v1", MODEL, client=http)
            return (await llm.agenerate(CHAT)).text

    assert asyncio.run(run()) == ""


# -- score --------------------------------------------------------------------------------


def test_score_sums_exactly_the_continuation_tokens(fake):
    llm = client(fake)
    continuations = [" Paris", " the Eiffel Tower", "!", ""]
    got = llm.score("The secret is", continuations)
    assert got == pytest.approx([-0.6, -0.4 - 0.7 - 0.6, -0.1, 0.0])
    assert got[:3] == pytest.approx([lp(c) for c in continuations[:3]])
    assert fake.hits() == 3  # the empty continuation needs no request
    bodies = [r.body for r in fake.requests]  # sent concurrently: in no particular order
    assert all(b["echo"] is True and b["max_tokens"] == 0 and b["logprobs"] == 1 for b in bodies)
    assert sorted(b["prompt"] for b in bodies) == sorted(
        ["The secret is Paris", "The secret is the Eiffel Tower", "The secret is!"]
    )


def test_score_keeps_a_token_that_straddles_the_boundary(fake):
    # "is " + "Paris" is tokenised " is", " Paris": the word must not be lost.
    assert client(fake).score("The secret is ", ["Paris"]) == pytest.approx([lp(" Paris")])


def test_score_falls_back_to_max_tokens_1_and_ignores_the_generated_token():
    words = [" Paris", " Rome", " London", " Oslo"]
    with FakeOpenAI(min_max_tokens=1, delay=0.05) as fake:
        # Concurrent requests all sent 0 before the first refusal came back.
        assert client(fake).score("The secret is", words) == pytest.approx([lp(w) for w in words])
        assert 5 <= fake.hits() <= 8  # at least two refusals raced
    with FakeOpenAI(min_max_tokens=1) as fake:
        llm = client(fake, concurrency=1)
        assert llm.score("The secret is", [" Paris", " Rome"]) == pytest.approx([-0.6, -0.5])
        sent = [r.body["max_tokens"] for r in fake.requests]
        # One refusal of 0, then 1 for the rest of the client's life.
        assert sent == [0, 1, 1]
        assert llm.score("A", [" b"]) == pytest.approx([-0.2])
        assert fake.requests[-1].body["max_tokens"] == 1


def test_score_many_shape_and_async_concurrency_limit(cache):
    prompts = ["The secret is", "My word:"]
    continuations = [" Paris", " Rome", " London"]
    with FakeOpenAI(delay=0.05) as fake:
        llm = client(fake, cache, concurrency=2)
        got = asyncio.run(llm.ascore_many(prompts, continuations))
        assert fake.max_in_flight == 2
        assert fake.hits() == 6
    assert isinstance(got, np.ndarray) and got.shape == (2, 3)
    want = np.array([[lp(c) for c in continuations]] * 2)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(llm.score_many(prompts, continuations), want)  # cached now


def test_concurrent_calls_on_one_loop_share_the_limit():
    async def run(llm: OpenAICompatibleClient) -> list[Any]:
        return await asyncio.gather(
            *(llm.agenerate(f"prompt {i}", max_tokens=1) for i in range(4)),
            llm.ascore_many(["a"], [" b", " c"]),
        )

    with FakeOpenAI(delay=0.05) as fake:
        llm = client(fake, concurrency=3)
        asyncio.run(run(llm))
        assert fake.max_in_flight == 3 and fake.hits() == 6


def test_score_on_a_chat_only_endpoint_is_unavailable():
    with FakeOpenAI(chat_only=True) as fake:
        llm = client(fake)
        with pytest.raises(BackendUnavailable) as info:
            llm.score("The secret is", [" Paris"])
        msg = str(info.value)
        assert "echo" in msg and "logprobs" in msg and "completions" in msg
        assert "likelihood judge" in msg and "elicitation judge works with any chat" in msg
        assert "not supported for this model" in msg  # the server's own words
        assert fake.hits() == 1  # not retried
        assert llm.generate(CHAT).text.startswith(CHAT_PREFIX)  # chat still works


def test_score_on_a_chat_model_404_is_unavailable(fake):
    fake.fail(404, message="This is a chat model and not supported in the v1/completions endpoint.")
    with pytest.raises(BackendUnavailable, match=r"chat model.*likelihood judge"):
        client(fake).score("The secret is", [" Paris"])


def test_score_on_a_server_that_ignores_echo_is_unavailable_not_zero():
    # The llama.cpp server answers echo + logprobs with logprobs of the generated tokens only.
    with FakeOpenAI(echo_ignored=True) as fake, pytest.raises(BackendUnavailable) as info:
        client(fake).score("The secret is", [" Paris"])
    assert "did not echo the prompt" in str(info.value) and "vLLM" in str(info.value)
    with FakeOpenAI(logprobs_supported=False) as fake, pytest.raises(BackendUnavailable) as info:
        client(fake).score("The secret is", [" Paris"])
    assert "returned no logprobs" in str(info.value)


# -- cache --------------------------------------------------------------------------------


def test_a_cached_request_never_goes_out_twice(fake, cache):
    llm = client(fake, cache)
    first = llm.generate(CHAT, top_logprobs=2)
    again = llm.generate(CHAT, top_logprobs=2)
    assert fake.hits() == 1
    assert again.cached and not first.cached
    assert (again.text, again.top_logprobs, again.prompt_tokens) == (
        first.text,
        first.top_logprobs,
        first.prompt_tokens,
    )
    # Any parameter that changes the answer is a new request.
    llm.generate(CHAT, top_logprobs=2, max_tokens=3)
    llm.generate([Message("user", "Is it Paris?")], top_logprobs=2)
    assert fake.hits() == 3
    assert llm.usage.requests == 3 and llm.usage.cached == 1


def test_the_cache_survives_a_new_client_and_dedupes_a_batch(fake, cache):
    scores = client(fake, cache).score("The secret is", [" Paris", " Rome", " Paris"])
    assert fake.hits() == 2  # the repeated continuation went out once
    gens = client(fake, cache).generate_many(["p", "q", "p"], max_tokens=2)
    assert fake.hits() == 4
    fresh = client(fake, cache)
    assert fresh.score("The secret is", [" Rome", " Paris"]) == [scores[1], scores[0]]
    assert [g.text for g in fresh.generate_many(["q", "p"], max_tokens=2)] == [
        gens[1].text,
        gens[0].text,
    ]
    assert fake.hits() == 4
    assert fresh.usage.cached == 4 and fresh.usage.requests == 0


def test_the_cache_is_shared_with_another_process(fake, cache):
    script = (
        "import sys\n"
        "from leakage.llm import OpenAICompatibleClient\n"
        "llm = OpenAICompatibleClient(sys.argv[1], sys.argv[2], cache_path=sys.argv[3])\n"
        "print(llm.score('The secret is', [' Paris'])[0])\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script, fake.url, MODEL, str(cache)],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=Path(__file__).resolve().parents[1],
        check=True,
    )
    assert float(child.stdout) == pytest.approx(-0.6)
    assert client(fake, cache).score("The secret is", [" Paris"]) == pytest.approx([-0.6])
    assert fake.hits() == 1


def test_no_cache_path_means_no_cache(fake):
    llm = client(fake)
    llm.generate("p")
    llm.generate("p")
    assert fake.hits() == 2 and llm.info()["cache"] is None


# -- retries and errors -------------------------------------------------------------------


def test_429_honours_retry_after_seconds(fake):
    fake.fail(429, retry_after="1")
    start = time.monotonic()
    assert client(fake).generate("p").text == COMPLETION
    elapsed = time.monotonic() - start
    assert fake.hits() == 2
    assert 0.9 <= elapsed < 1.8  # waited for Retry-After, not the 0.01 s backoff


def test_429_honours_retry_after_as_an_http_date(fake):
    when = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
    fake.fail(429, retry_after=format_datetime(when, usegmt=True))
    start = time.monotonic()
    client(fake).score("a", [" b"])
    assert 0.5 <= time.monotonic() - start < 2.8 and fake.hits() == 2


def test_retry_after_is_capped_by_max_wait(fake):
    fake.fail(503, retry_after="3600")
    start = time.monotonic()
    assert client(fake, max_wait=0.2).generate(CHAT).text.startswith(CHAT_PREFIX)
    assert time.monotonic() - start < 1.0


def test_5xx_is_retried_then_reported(fake):
    fake.fail(500)
    assert client(fake).generate("p").text == COMPLETION
    fake.fail(502, times=3)
    with pytest.raises(LLMError) as info:
        client(fake, max_attempts=3).generate("p")
    msg = str(info.value)
    assert "3 attempts" in msg and "HTTP 502" in msg and f"{fake.url}/completions" in msg
    assert fake.hits() == 2 + 3


def test_a_timeout_is_retried(fake):
    fake.fail("slow", seconds=0.6)
    start = time.monotonic()
    assert client(fake, timeout=0.2).generate("p").text == COMPLETION
    assert fake.hits() == 2 and time.monotonic() - start < 0.6
    fake.fail("slow", times=2, seconds=0.5)
    with pytest.raises(LLMError, match=r"2 attempts.*ReadTimeout \(no answer within 0.2 s\)"):
        client(fake, timeout=0.2, max_attempts=2).generate("q")


def test_transport_errors_are_retried():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    llm = OpenAICompatibleClient(f"http://127.0.0.1:{port}/v1", MODEL, max_attempts=2, **FAST)
    with pytest.raises(LLMError, match=r"2 attempts.*ConnectError"):
        llm.generate("p")


def test_a_rejected_key_is_not_retried():
    with FakeOpenAI(api_key="sk-right-key") as fake:
        with pytest.raises(LLMError) as info:
            client(fake, api_key="sk-wrong-key").generate(CHAT)
        msg = str(info.value)
        assert "rejected the API key" in msg and "HTTP 401" in msg
        assert "LEAKAGE_LLM_API_KEY" in msg and "OPENAI_API_KEY" in msg
        assert "sk-wrong-key" not in msg and "sk-right-key" not in msg
        assert fake.hits() == 1
        assert client(fake, api_key="sk-right-key").generate(CHAT).text.startswith(CHAT_PREFIX)
        assert fake.requests[-1].authorization == "Bearer sk-right-key"


def test_the_key_is_never_in_info_or_repr(fake):
    llm = client(fake, api_key="sk-secret")
    assert "sk-secret" not in str(llm.info()) and "sk-secret" not in repr(llm)


def test_a_wrong_model_names_the_url_and_is_not_retried(fake):
    with pytest.raises(LLMError) as info:
        client(fake, model="no-such-model").generate(CHAT)
    msg = str(info.value)
    assert "HTTP 404" in msg and f"{fake.url}/chat/completions" in msg
    assert "'no-such-model'" in msg and "/models" in msg and "does not exist" in msg
    assert fake.hits() == 1


def test_other_4xx_are_not_retried(fake):
    fake.fail(400, message="This model's maximum context length is 4096 tokens.")
    with pytest.raises(LLMError, match=r"HTTP 400.*maximum context length.*not retried"):
        client(fake).generate("p")
    assert fake.hits() == 1


def test_an_exhausted_account_is_not_retried(fake):
    async def run() -> None:
        def handler(request: httpx.Request) -> httpx.Response:
            error = {"message": "You exceeded your current quota.", "code": "insufficient_quota"}
            return httpx.Response(429, json={"error": error})

        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
            llm = OpenAICompatibleClient("http://llm.test/v1", MODEL, client=http)
            await llm.agenerate("p")

    with pytest.raises(LLMError, match=r"quota is used up.*current quota"):
        asyncio.run(run())


def test_malformed_json_is_an_error(fake):
    fake.fail("malformed")
    with pytest.raises(LLMError, match=r"malformed JSON from POST .*/completions"):
        client(fake).generate("p")
    assert fake.hits() == 1


@pytest.mark.parametrize(
    ("call", "field", "named"),
    [
        ("chat", None, "choices[0].message.content is missing"),
        ("text", None, "choices[0].text is missing"),
        ("chat", "choices.0", "choices[0] is missing"),
        ("chat", "choices.0.logprobs.content.1.top_logprobs.0.logprob", "content[1].top_logprobs"),
        ("score", "choices.0.logprobs.token_logprobs.2", "has 3 entries but text_offset has 4"),
        ("score", "choices", "choices is missing"),
    ],
)
def test_a_missing_field_is_named(fake, call, field, named):
    fake.fail("missing", field=field)
    llm = client(fake)
    with pytest.raises(LLMError) as info:
        if call == "chat":
            llm.generate(CHAT, top_logprobs=2)
        elif call == "text":
            llm.generate("p")
        else:
            llm.score("The secret is", [" Paris"])
    assert named in str(info.value)
    assert fake.hits() == 1


def test_llm_error_is_a_leakage_error_with_the_count_source_exit_code():
    err = LLMError("x")
    assert isinstance(err, LeakageError) and exit_code(err) == EXIT_COUNT_SOURCE == 4


# -- budget and accounting ----------------------------------------------------------------


def test_request_budget_stops_cleanly_and_the_cache_keeps_the_answers(fake, cache):
    words = [" Paris", " Rome", " London", " Oslo", " Lima"]
    llm = client(fake, cache, budget_requests=3, concurrency=1)
    llm.score("The secret is", [" Paris"])  # one request of the budget spent earlier
    with pytest.raises(BudgetExhausted) as info:
        llm.score("The secret is", words)
    exc = info.value
    assert exc.budget == 3 and exc.done == 3  # Paris (cached) + two sent now
    msg = str(exc)
    assert "request budget of 3" in msg and "3 of 5" in msg and "2 remain" in msg
    assert str(cache) in msg
    assert fake.hits() == 3
    fresh = client(fake, cache)
    assert fresh.score("The secret is", words) == pytest.approx([lp(w) for w in words])
    assert fake.hits() == 5  # only Oslo and Lima were left


def test_token_budget(fake, cache):
    llm = client(fake, cache, budget_tokens=10, concurrency=1)
    # Each score request spends 4 prompt tokens ("The secret is" + one word).
    with pytest.raises(BudgetExhausted) as info:
        llm.score("The secret is", [" a", " b", " c", " d"])
    assert info.value.budget == 10 and info.value.done == 3
    assert "token budget of 10 is spent (12 tokens used)" in str(info.value)
    assert llm.tokens_spent == 12 and llm.usage.requests == 3
    with pytest.raises(BudgetExhausted, match="0 of 1"):
        llm.generate("p")
    assert llm.generate_many([]) == []
    assert llm.score("The secret is", [" a"]) == pytest.approx([-0.2])  # cached: free


def test_usage_and_cost_accounting(fake, cache):
    llm = client(fake, cache, prices=(2.0, 10.0))
    gen = llm.generate("The secret is", max_tokens=4)
    llm.generate("The secret is", max_tokens=4)  # cached
    llm.score("The secret is", [" Paris"])
    usage = llm.usage
    assert (usage.requests, usage.cached) == (2, 1)
    assert usage.prompt_tokens == 3 + 4 and usage.completion_tokens == 4
    cost = (7 * 2.0 + 4 * 10.0) / 1e6
    assert math.isclose(usage.cost_usd, cost)
    assert usage.by_model == {
        MODEL: {
            "requests": 2,
            "cached": 1,
            "prompt_tokens": 7,
            "completion_tokens": 4,
            "cost_usd": pytest.approx(cost),
        }
    }
    assert gen.prompt_tokens == 3 and gen.completion_tokens == 4
    assert llm.info()["prices_usd_per_1m_tokens"] == (2.0, 10.0)


# -- construction, protocol, threads ------------------------------------------------------


def test_from_env(monkeypatch, fake, cache):
    for var in ("LEAKAGE_LLM_BASE_URL", "LEAKAGE_LLM_MODEL", "LEAKAGE_LLM_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(BackendUnavailable, match="LEAKAGE_LLM_MODEL"):
        OpenAICompatibleClient.from_env()
    monkeypatch.setenv("LEAKAGE_LLM_MODEL", MODEL)
    with pytest.raises(BackendUnavailable, match=r"LEAKAGE_LLM_BASE_URL.*OPENAI_API_KEY"):
        OpenAICompatibleClient.from_env()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    assert OpenAICompatibleClient.from_env().base_url == "https://api.openai.com/v1"

    with FakeOpenAI(api_key="sk-leakage") as server:
        monkeypatch.setenv("LEAKAGE_LLM_BASE_URL", server.url + "/")
        monkeypatch.setenv("LEAKAGE_LLM_API_KEY", "sk-leakage")  # wins over OPENAI_API_KEY
        llm = OpenAICompatibleClient.from_env(cache_path=cache, budget_requests=5, **FAST)
        assert llm.base_url == server.url and llm.name == MODEL
        assert llm.generate("p").text == COMPLETION
        assert server.requests[0].authorization == "Bearer sk-leakage"
        assert llm.budget.limit == 5 and llm.info()["cache"] == str(cache)
        other = OpenAICompatibleClient.from_env(model="other", **FAST)
        assert other.model == "other"


def test_the_client_satisfies_the_protocol(fake):
    llm = client(fake)
    assert isinstance(llm, LLMClient)
    info = llm.info()
    assert info["model"] == MODEL and info["base_url"] == fake.url
    assert info["concurrency"] == 4


def test_sync_calls_from_a_worker_thread_and_from_inside_an_event_loop(fake):
    llm = client(fake)
    out: list[Any] = []
    worker = threading.Thread(target=lambda: out.append(llm.score("a", [" b"])))
    worker.start()
    worker.join()
    assert out == [pytest.approx([-0.2])]

    async def inside_a_loop() -> str:
        return llm.generate("p").text

    assert asyncio.run(inside_a_loop()) == COMPLETION


def test_bad_arguments_are_refused_before_sending(fake):
    with pytest.raises(ValueError, match="concurrency"):
        client(fake, concurrency=0)
    with pytest.raises(ValueError, match="prices"):
        client(fake, prices=(-1.0, 1.0))
    llm = client(fake)
    with pytest.raises(ValueError, match="max_tokens"):
        llm.generate("p", max_tokens=0)
    with pytest.raises(ValueError, match="at least one message"):
        llm.generate([])
    with pytest.raises(TypeError, match="sequences of strings"):
        llm.score_many("prompt", [" a"])
    assert fake.hits() == 0


def test_importing_leakage_llm_stays_light():
    script = (
        "import sys, leakage.llm\n"
        "assert 'leakage.llm._remote' not in sys.modules, 'the remote client loads eagerly'\n"
        "assert leakage.llm.OpenAICompatibleClient.__name__ == 'OpenAICompatibleClient'\n"
        "assert 'OpenAICompatibleClient' in leakage.llm.__all__\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=30)
