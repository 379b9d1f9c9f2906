"""Web count sources against local fakes that speak each API's JSON over real HTTP."""

from __future__ import annotations

import asyncio
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
import pytest

from leakage.backends.cooccurrence._source import CountSource, query_key
from leakage.backends.cooccurrence.web import (
    GOOGLE_PAGES_ESTIMATE,
    WEB_SOURCES,
    GoogleCseSource,
    InfiniGramSource,
    SerpApiSource,
    WebCountSource,
    retry_after_seconds,
)
from leakage.errors import BackendUnavailable, BudgetExhausted, CountSourceError, InvalidInput
from tests.fakes.web_apis import (
    CSE_ID,
    GOOGLE_KEY,
    INFINI_GRAM_INDEX,
    SERPAPI_KEY,
    FakeWebApis,
)

FAST = {"backoff": 0.01, "max_wait": 2.0}


@pytest.fixture
def fake():
    with FakeWebApis() as server:
        yield server


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "web-counts.sqlite"


def serpapi(fake: FakeWebApis, cache: Path, **kw: Any) -> SerpApiSource:
    return SerpApiSource(
        kw.pop("api_key", SERPAPI_KEY),
        cache_path=cache,
        base_url=fake.serpapi_url,
        **{**FAST, **kw},
    )


def cse(fake: FakeWebApis, cache: Path, **kw: Any) -> GoogleCseSource:
    return GoogleCseSource(
        kw.pop("api_key", GOOGLE_KEY),
        CSE_ID,
        cache_path=cache,
        base_url=fake.cse_url,
        **{**FAST, **kw},
    )


def infini(fake: FakeWebApis, cache: Path, **kw: Any) -> InfiniGramSource:
    return InfiniGramSource(
        cache_path=cache, index=INFINI_GRAM_INDEX, base_url=fake.infini_gram_url, **{**FAST, **kw}
    )


BUILDERS = {"serpapi": serpapi, "google-cse": cse, "infini-gram": infini}


# -- counts -----------------------------------------------------------------------------


@pytest.mark.parametrize("build", [serpapi, cse], ids=["serpapi", "google-cse"])
def test_google_engines_count_documents(fake, cache, build):
    src = build(fake, cache)
    got = src.counts(
        [("racket",), ("tennis",), ("racket", "tennis"), ("ice hockey", "stick"), ("zebra",)]
    )
    assert got == [3, 2, 1, 1, 0]
    sent = sorted(r.query for r in fake.requests)  # concurrent: arrival order varies
    # Quoted phrases, implicit AND, in canonical (sorted, case-folded) order.
    assert sent == ['"ice hockey" "stick"', '"racket"', '"racket" "tennis"', '"tennis"', '"zebra"']


def test_google_engines_agree_and_send_their_parameters(fake, cache, tmp_path):
    a = serpapi(fake, cache, params={"hl": "en", "gl": "us"}).counts([("Paris", "TENNIS")])
    b = cse(fake, tmp_path / "other.sqlite").counts([("tennis", "paris")])
    assert a == b == [1]
    serp, google = fake.requests
    assert serp.params["engine"] == "google" and serp.params["hl"] == "en"
    assert serp.params["api_key"] == SERPAPI_KEY
    assert google.params["key"] == GOOGLE_KEY and google.params["cx"] == CSE_ID


def test_infini_gram_counts_occurrences_with_cnf_queries(fake, cache):
    exact = infini(fake, cache, fold_case=False, concurrency=1)
    assert exact.counts([("racket",), ("racket", "tennis"), ("paris",)]) == [3, 1, 1]
    assert [r.query for r in fake.requests] == ["racket", "racket AND tennis", "paris"]
    assert fake.requests[0].params == {
        "index": INFINI_GRAM_INDEX,
        "query_type": "count",
        "query": "racket",
    }


def test_infini_gram_folds_case_with_or_clauses(fake, tmp_path):
    src = infini(fake, tmp_path / "c.sqlite", concurrency=1)
    # "Paris" twice, "paris" once: case folding must find all three.
    assert src.counts([("paris",), ("ice hockey",)]) == [3, 1]
    assert fake.requests[0].query == "paris OR Paris"
    assert fake.requests[1].query == "ice hockey OR Ice hockey OR Ice Hockey"
    # Exact-case counts live under another cache endpoint, so they never mix.
    assert infini(fake, tmp_path / "c.sqlite", fold_case=False).uncached([("paris",)])


def test_infini_gram_total_is_the_token_count_from_the_api(fake, cache):
    src = infini(fake, cache)
    n_tokens = fake.ngram_count("")
    assert src.total() == n_tokens and n_tokens > 50
    assert fake.requests[0].query == ""
    assert src.total() == n_tokens and fake.hits() == 1  # cached
    assert infini(fake, cache, total=1e12).total() == 1e12


def test_infini_gram_total_falls_back_to_the_documented_count(fake, cache):
    src = InfiniGramSource(cache_path=cache, base_url=fake.infini_gram_url, max_attempts=1)
    # The fake does not know the real default index: the API answers with an error.
    assert src.total() == InfiniGramSource.INDEX_TOKENS["v4_rpj_llama_s4"]


def test_google_totals_are_a_configurable_estimate(fake, cache):
    assert serpapi(fake, cache).total() == GOOGLE_PAGES_ESTIMATE == 25e9
    assert cse(fake, cache, total=5e10).total() == 5e10
    assert fake.hits() == 0


def test_sources_satisfy_the_protocol_and_registry(fake, cache):
    for name, build in BUILDERS.items():
        src = build(fake, cache)
        assert isinstance(src, CountSource) and src.name == name
        assert "key" not in str(src.info()).casefold()
    assert set(WEB_SOURCES) == set(BUILDERS)


def test_empty_and_malformed_queries_are_refused_before_sending(fake, cache):
    src = serpapi(fake, cache)
    with pytest.raises(InvalidInput, match="at least one phrase"):
        src.counts([()])
    with pytest.raises(InvalidInput, match="empty phrase"):
        src.counts([("racket", "  ")])
    with pytest.raises(InvalidInput, match="at most 4"):
        infini(fake, cache).counts([("a", "b", "c", "d", "e")])
    assert fake.hits() == 0


# -- cache and dry run ----------------------------------------------------------------


def test_a_cached_query_never_goes_out_twice(fake, cache):
    src = serpapi(fake, cache)
    assert src.counts([("racket", "tennis"), ("tennis", "racket"), ("Racket",)]) == [1, 1, 3]
    assert fake.hits() == 2  # order and case do not make a new query
    assert src.counts([("racket",), ("tennis", "racket")]) == [3, 1]
    assert fake.hits() == 2


def test_the_cache_persists_across_instances_and_sources_are_kept_apart(fake, cache):
    serpapi(fake, cache).counts([("racket",), ("paris",)])
    again = serpapi(fake, cache)
    assert again.uncached([("racket",), ("paris",)]) == []
    assert again.counts([("paris",), ("racket",)]) == [3, 3]
    assert fake.hits() == 2
    # Same file, another source: its own rows.
    assert cse(fake, cache).uncached([("racket",)]) == [("racket",)]


def test_the_cache_is_shared_with_another_process(fake, cache):
    script = (
        "import sys\n"
        "from leakage.backends.cooccurrence.web import SerpApiSource\n"
        "src = SerpApiSource(sys.argv[1], cache_path=sys.argv[2], base_url=sys.argv[3])\n"
        "print(src.counts([('racket', 'tennis'), ('stick',)]))\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script, SERPAPI_KEY, str(cache), fake.serpapi_url],
        capture_output=True,
        text=True,
        timeout=30,
        cwd=Path(__file__).resolve().parents[1],
        check=True,
    )
    assert child.stdout.strip() == "[1, 2]"
    assert serpapi(fake, cache).counts([("tennis", "racket"), ("stick",)]) == [1, 2]
    assert fake.hits() == 2  # both asked by the child only


def test_uncached_is_the_dry_run(fake, cache):
    src = cse(fake, cache)
    src.counts([("racket",)])
    batch = [("racket",), ("tennis",), ("Tennis",), ("racket", "tennis"), ("tennis", "racket")]
    todo = src.uncached(batch)
    assert [query_key(q) for q in todo] == [query_key(("tennis",)), query_key(("racket", "tennis"))]
    assert fake.hits() == 1  # the dry run itself sends nothing
    src.counts(batch)
    assert fake.hits() == 1 + len(todo)


def test_counts_from_a_worker_thread_and_from_inside_an_event_loop(fake, cache):
    src = serpapi(fake, cache)
    out: list[list[int]] = []
    worker = threading.Thread(target=lambda: out.append(src.counts([("racket",)])))
    worker.start()
    worker.join()
    assert out == [[3]]

    async def inside_a_loop() -> list[int]:
        return src.counts([("tennis",)])

    assert asyncio.run(inside_a_loop()) == [2]


def test_acounts_with_an_injected_client_and_bounded_concurrency(cache):
    async def run(fake: FakeWebApis) -> list[int]:
        async with httpx.AsyncClient() as client:
            src = SerpApiSource(
                SERPAPI_KEY,
                cache_path=cache,
                base_url=fake.serpapi_url,
                concurrency=2,
                client=client,
            )
            return await src.acounts([(w,) for w in ("racket", "tennis", "paris", "stick", "net")])

    with FakeWebApis(delay=0.05) as fake:
        assert asyncio.run(run(fake)) == [3, 2, 3, 2, 1]
        assert fake.max_in_flight == 2


# -- retries and errors -----------------------------------------------------------------


def test_429_honours_retry_after(fake, cache):
    fake.fail(429, retry_after="1")
    src = serpapi(fake, cache)
    start = time.monotonic()
    assert src.counts([("racket",)]) == [3]
    elapsed = time.monotonic() - start
    assert fake.hits() == 2
    assert 0.9 <= elapsed < 1.8  # waited for Retry-After, not for the 0.01 s backoff


def test_retry_after_is_capped_by_max_wait(fake, cache):
    fake.fail(503, retry_after="3600")
    src = cse(fake, cache, max_wait=0.2)
    start = time.monotonic()
    assert src.counts([("stick",)]) == [2]
    assert time.monotonic() - start < 1.0


def test_retry_after_parsing():
    now = datetime(2025, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds(" 0 ") == 0.0
    assert (
        retry_after_seconds(format_datetime(now + timedelta(seconds=30), usegmt=True), now=now)
        == 30
    )
    assert (
        retry_after_seconds(format_datetime(now - timedelta(seconds=30), usegmt=True), now=now) == 0
    )
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_500_is_retried(fake, cache, name):
    fake.fail(500)
    src = BUILDERS[name](fake, cache)
    assert src.counts([("racket",)]) == [3]
    assert fake.hits() == 2


def test_infini_gram_error_payload_is_retried_then_reported(fake, cache):
    fake.fail("error_payload", message="Server overloaded")
    assert infini(fake, cache).counts([("stick",)]) == [2]
    fake.fail("error_payload", times=3, message="Server overloaded")
    with pytest.raises(CountSourceError, match="Server overloaded"):
        infini(fake, cache, max_attempts=3).counts([("puck",)])
    assert fake.hits() == 2 + 3


def test_retries_give_up_with_source_query_and_status(fake, cache):
    fake.fail(503, times=3)
    with pytest.raises(CountSourceError) as info:
        serpapi(fake, cache, max_attempts=3).counts([("racket", "tennis")])
    msg = str(info.value)
    assert "serpapi" in msg and '"racket" "tennis"' in msg and "HTTP 503" in msg
    assert "3 attempts" in msg
    assert not isinstance(info.value, BudgetExhausted)
    assert fake.hits() == 3


def test_transport_errors_are_retried(cache):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    src = SerpApiSource(
        SERPAPI_KEY,
        cache_path=cache,
        base_url=f"http://127.0.0.1:{port}/search.json",
        max_attempts=2,
        **FAST,
    )
    with pytest.raises(CountSourceError, match=r"2 attempts.*ConnectError"):
        src.counts([("racket",)])


def test_a_rejected_key_is_not_retried(fake, cache):
    with pytest.raises(CountSourceError) as info:
        serpapi(fake, cache, api_key="wrong").counts([("racket",)])
    assert "key is rejected" in str(info.value) and "SERPAPI_API_KEY" in str(info.value)
    assert "wrong" not in str(info.value)  # never echo a key
    assert fake.hits() == 1

    # Google says 400 "API key not valid"; also a rejected key.
    with pytest.raises(CountSourceError, match=r"key is rejected.*GOOGLE_API_KEY"):
        cse(fake, cache, api_key="wrong").counts([("racket",)])
    fake.fail(401)
    with pytest.raises(CountSourceError, match="key is rejected"):
        infini(fake, cache).counts([("racket",)])
    assert fake.hits() == 3


def test_other_4xx_are_not_retried(fake, cache):
    fake.fail(404, message="No such page")
    with pytest.raises(CountSourceError, match=r"HTTP 404.*No such page.*not retried"):
        cse(fake, cache).counts([("racket",)])
    assert fake.hits() == 1


def test_an_exhausted_account_is_not_retried(fake, cache):
    fake.fail(429, times=5, message="Your account has run out of searches.")
    with pytest.raises(CountSourceError, match=r"quota is used up.*run out of searches"):
        serpapi(fake, cache).counts([("racket",)])
    assert fake.hits() == 1


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_malformed_json_is_an_error(fake, cache, name):
    fake.fail("malformed")
    with pytest.raises(CountSourceError, match="malformed JSON"):
        BUILDERS[name](fake, cache).counts([("racket",)])
    assert fake.hits() == 1


def test_a_missing_count_field(fake, cache):
    fake.fail("missing")
    assert serpapi(fake, cache).counts([("racket",)]) == [0]  # SerpApi omits it for no results
    fake.fail("missing")
    with pytest.raises(CountSourceError, match=r"searchInformation\.totalResults"):
        cse(fake, cache).counts([("racket",)])
    fake.fail("missing")
    with pytest.raises(CountSourceError, match="no count"):
        infini(fake, cache).counts([("racket",)])


def test_a_failure_keeps_what_was_answered(fake, cache):
    src = serpapi(fake, cache, concurrency=1, max_attempts=1)
    batch = [("racket",), ("tennis",), ("paris",)]
    src.counts(batch[:1])
    fake.fail(500)
    with pytest.raises(CountSourceError):
        src.counts(batch)
    assert serpapi(fake, cache).uncached(batch) == batch[1:]


# -- budget -------------------------------------------------------------------------------


def test_budget_exhaustion_stops_cleanly_and_keeps_the_answers(fake, cache):
    words = ["racket", "tennis", "paris", "stick", "puck"]
    src = serpapi(fake, cache, budget=3, concurrency=1)
    src.counts([("racket",)])  # one query of the budget spent in an earlier batch
    with pytest.raises(BudgetExhausted) as info:
        src.counts([(w,) for w in words])
    exc = info.value
    assert exc.budget == 3
    assert exc.done == 3  # racket (cached) + two fetched now
    assert "3 of 5" in str(exc) and "2 remain" in str(exc)
    assert str(cache) in str(exc)
    assert fake.hits() == 3
    fresh = serpapi(fake, cache)
    assert [q[0] for q in fresh.uncached([(w,) for w in words])] == ["stick", "puck"]
    assert fresh.counts([(w,) for w in words]) == [3, 2, 3, 2, 1]
    assert fake.hits() == 5


def test_cache_hits_do_not_spend_the_budget(fake, cache):
    serpapi(fake, cache).counts([("racket",), ("tennis",)])
    src = serpapi(fake, cache, budget=0)
    assert src.counts([("tennis",), ("racket",)]) == [2, 3]
    with pytest.raises(BudgetExhausted, match="0 of 1"):
        src.counts([("paris",)])
    assert src.budget.spent == 0


def test_budget_with_concurrency_lets_in_flight_requests_finish(cache):
    words = ["racket", "tennis", "paris", "stick", "puck", "net", "iron"]
    with FakeWebApis(delay=0.02) as fake:
        src = infini(fake, cache, budget=4, concurrency=3)
        with pytest.raises(BudgetExhausted) as info:
            src.counts([(w,) for w in words])
        assert info.value.done == 4 and fake.hits() == 4
        assert len(src.uncached([(w,) for w in words])) == 3


# -- construction from the environment --------------------------------------------------


def test_from_env_names_the_missing_variable(monkeypatch, cache):
    monkeypatch.delenv("SERPAPI_API_KEY", raising=False)
    with pytest.raises(BackendUnavailable, match="SERPAPI_API_KEY"):
        WEB_SOURCES["serpapi"](cache_path=cache)
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    monkeypatch.delenv("GOOGLE_CSE_ID", raising=False)
    with pytest.raises(BackendUnavailable, match="GOOGLE_CSE_ID"):
        WEB_SOURCES["google-cse"](cache_path=cache)
    monkeypatch.setenv("GOOGLE_API_KEY", "  ")
    with pytest.raises(BackendUnavailable, match="GOOGLE_API_KEY"):
        WEB_SOURCES["google-cse"](cache_path=cache)


def test_from_env_builds_working_sources(monkeypatch, fake, cache):
    monkeypatch.setenv("SERPAPI_API_KEY", SERPAPI_KEY)
    monkeypatch.setenv("GOOGLE_API_KEY", GOOGLE_KEY)
    monkeypatch.setenv("GOOGLE_CSE_ID", CSE_ID)
    built: dict[str, WebCountSource] = {
        "serpapi": WEB_SOURCES["serpapi"](cache_path=cache, budget=5, base_url=fake.serpapi_url),
        "google-cse": WEB_SOURCES["google-cse"](cache_path=cache, base_url=fake.cse_url),
        "infini-gram": WEB_SOURCES["infini-gram"](
            cache_path=cache, base_url=fake.infini_gram_url, index=INFINI_GRAM_INDEX
        ),
    }
    for src in built.values():
        assert src.counts([("racket",)]) == [3]
    assert built["serpapi"].budget.limit == 5 and built["serpapi"].budget.spent == 1


def test_an_unexpected_error_propagates_unwrapped_and_keeps_the_answers(cache):
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.params["q"] == '"boom"':
            raise RuntimeError("a bug in the transport")
        return httpx.Response(200, json={"search_information": {"total_results": 7}})

    batch = [("a",), ("boom",), ("c",)]

    async def run() -> SerpApiSource:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            src = SerpApiSource("k", cache_path=cache, client=client, concurrency=1)
            with pytest.raises(RuntimeError, match="a bug in the transport"):
                await src.acounts(batch)
            return src

    src = asyncio.run(run())
    todo = src.uncached(batch)
    assert ("a",) not in todo and ("boom",) in todo
