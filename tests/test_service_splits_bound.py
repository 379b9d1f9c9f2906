"""``POST /v1/splits`` is bounded as scoring is: a cost limit checked before any work
(``LEAKAGE_MAX_SPLITS_COST``), the scoring deadline (``LEAKAGE_SCORE_TIMEOUT``) after which
the work stops, and the embedding model held one chunk of descriptions at a time, so that
scoring requests on it are served while a splits request runs.

Each test failed before the bound: a splits request took the model for its whole build, with
no limit and no deadline. The model here is a fake encoder (deterministic vectors) that can
hold a chunk until the test lets it go, so nothing depends on timing.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from numpy.typing import NDArray

from leakage.backends.embedding import EmbeddingBackend
from leakage.splits import PairTable, WordNetDescriber, read_pairs
from leakage_service import Settings
from leakage_service.routes.splits import (
    CHUNK_TEXTS,
    CHUNK_UNITS,
    DESCRIPTION_COST,
    SplitsCost,
    SuppliedDescriber,
    _chunks,
)
from leakage_service.runtime import BackendSlot

from .test_service import SPORTS, Api, assert_error, settings_for


class FakeEncoder:
    """Deterministic unit vectors; records every call. A call holding splits descriptions
    (texts starting ``desc``) notes its thread and, with a ``gate``, waits for it."""

    name = "fake-encoder"
    dimension = 8

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.splits_thread: int | None = None
        self.splits_texts = 0
        self.entered = threading.Event()
        self.gate: threading.Event | None = None

    def encode_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        texts = list(texts)
        self.calls.append(texts)
        if any(t.startswith("desc") for t in texts):
            self.splits_thread = threading.get_ident()
            self.entered.set()
            if self.gate is not None:
                self.gate.wait(10)
            self.splits_texts += len(texts)
        rows = [
            np.random.default_rng(
                int.from_bytes(hashlib.sha256(t.encode()).digest()[:8])
            ).standard_normal(self.dimension)
            for t in texts
        ]
        vecs = np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dimension)
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)

    def info(self) -> dict[str, Any]:
        return {"model": self.name, "dimension": self.dimension}

    def splits_calls(self) -> list[list[str]]:
        return [c for c in self.calls if any(t.startswith("desc") for t in c)]


class CountingDescriber:
    """Stands for WordNet: ``size`` bytes of description per word, and counts the words."""

    name = "wordnet"
    version = "test"

    def __init__(self, size: int = 100) -> None:
        self.size = size
        self.asked: list[str] = []

    def describe(self, words: Sequence[str]) -> dict[str, str | None]:
        self.asked.extend(words)
        return {w: f"desc {w} ".ljust(self.size, "x") for w in dict.fromkeys(words)}


def pairs_and_descriptions(n: int, size: int) -> tuple[list[list[str]], dict[str, str]]:
    """``n`` pairs of distinct words, with a description of ``size`` bytes for each word."""
    pairs = [[f"w{i}a", f"w{i}b"] for i in range(n)]
    descriptions = {w: f"desc {w} ".ljust(size, "x") for p in pairs for w in p}
    return pairs, descriptions


@pytest.fixture
def fake_api(tmp_path: Path, default_index: Path) -> Iterator[Callable[..., Api]]:
    """``make(**settings)``: an app whose embedding backend runs a ``FakeEncoder``
    (``app.fake``) and whose WordNet is a ``CountingDescriber`` (``app.describer``)."""
    made: list[Api] = []

    def make(**settings: Any) -> Api:
        a = Api(settings_for(tmp_path / f"home{len(made)}", default_index, **settings))
        made.append(a)
        fake = FakeEncoder()
        a.state.backends.slots["embedding"] = BackendSlot("embedding", EmbeddingBackend(fake))
        a.state.describer = CountingDescriber()
        a.fake = fake  # type: ignore[attr-defined]
        return a

    yield make
    for a in made:
        a.close()


# -- the cost limit ------------------------------------------------------------------------


def test_a_splits_request_over_the_cost_is_refused_before_any_work(fake_api):
    """The issue's request (1,000 pairs, 2 MB of descriptions) is a 413 naming the
    descriptions and the sum, and neither the describer nor the model ever sees it."""
    a = fake_api()
    pairs, descriptions = pairs_and_descriptions(1000, 1024)
    r = a.post("/v1/splits", json={"pairs": pairs, "descriptions": descriptions})
    err = assert_error(r, 413, "splits_too_large", "body.descriptions")
    assert err["message"].startswith(
        "1,000 pairs: 2,000 words x 64 + 2,048,000 bytes of the descriptions supplied for them "
        "= 2,176,000 units; at most 250,000 per request (LEAKAGE_MAX_SPLITS_COST)"
    ), err
    assert "shorter descriptions" in err["message"] and "leakage splits build" in err["message"]

    # WordNet's words count their estimate before they are described: the pairs at fault
    many = [[f"w{i}a", f"w{i}b"] for i in range(1000)]
    err = assert_error(a.post("/v1/splits", json={"pairs": many}), 413, "splits_too_large")
    assert err["field"] == "body.pairs"
    assert "2,000 words x (64 + 128 bytes of a WordNet description" in err["message"]
    assert "= 384,000 units" in err["message"]
    assert a.fake.calls == [] and a.state.describer.asked == []

    # under the limit, the same server splits
    pairs, descriptions = pairs_and_descriptions(20, 200)
    r = a.post("/v1/splits", json={"pairs": pairs, "descriptions": descriptions})
    assert r.status_code == 200, r.text
    assert sum(len(v) for v in r.json()["splits"].values()) == 20


def test_wordnet_descriptions_over_the_cost_are_refused_before_any_is_embedded(fake_api):
    """WordNet is charged its mean before describing, and what it wrote before embedding."""
    a = fake_api(max_splits_cost=100_000)
    a.state.describer = CountingDescriber(size=1000)
    pairs = [[f"w{i}a", f"w{i}b"] for i in range(200)]  # 400 x 192 = 76,800: admitted
    err = assert_error(a.post("/v1/splits", json={"pairs": pairs}), 413, "splits_too_large")
    assert err["field"] == "body.pairs"
    assert err["message"].startswith(
        "200 pairs: 400 descriptions x 64 + 400,000 bytes of their wordnet descriptions = "
        "425,600 units; at most 100,000 per request"
    ), err
    assert len(a.state.describer.asked) == 400 and a.fake.calls == []


def test_the_default_admits_the_requests_of_the_tests_and_the_docs():
    limit = Settings().max_splits_cost
    for pairs, descriptions in [
        ([("sun", "moon"), ("cat", "dog"), ("piano", "guitar"), ("car", "bus")], None),
        ([("sun", "moon")], {"sun": "The star at the centre.", "moon": "The satellite."}),
        ([(f"w{i}a", f"w{i}b") for i in range(300)], None),  # a few hundred WordNet pairs
    ]:
        table = PairTable.from_pairs(pairs)
        supplied = SuppliedDescriber(descriptions) if descriptions else None
        assert SplitsCost.of_request(table, supplied).units <= limit


def test_the_default_admits_ck_arenas_pairs_with_wordnet(shared_data: Path):
    """527 pairs, 949 words: under the default before describing and once described."""
    limit = Settings().max_splits_cost
    table = read_pairs(shared_data / "ck-arena-dev" / "pairs_en.csv")
    before = SplitsCost.of_request(table, None)
    said = WordNetDescriber().describe([w for p in table.pairs for w in (p.a, p.b)])
    after = SplitsCost.of_texts(len(table.pairs), [d for d in said.values() if d], "wordnet")
    assert before.texts == 949 and before.units <= limit, before.explain()
    assert after.units <= limit, after.explain()


def test_descriptions_are_embedded_in_chunks_of_bounded_size():
    texts = [f"t{i}" for i in range(150)] + ["x" * 20_000] + ["y" * 9000] * 3
    chunks = list(_chunks(texts))
    assert [t for c in chunks for t in c] == texts
    assert [len(c) for c in chunks] == [CHUNK_TEXTS, CHUNK_TEXTS, 22, 1, 1, 1, 1]
    for c in chunks:
        assert len(c) == 1 or sum(DESCRIPTION_COST + len(t) for t in c) <= CHUNK_UNITS


# -- the deadline ---------------------------------------------------------------------------


def test_a_splits_request_past_its_deadline_gets_503_and_stops(fake_api):
    """The model is held by the first chunk past the deadline: the client gets its 503 at
    the deadline, and once the chunk in hand is done the build stops (no further chunk) and
    lets the model go."""
    a = fake_api(score_timeout=1.0)
    a.fake.gate = threading.Event()
    pairs, descriptions = pairs_and_descriptions(100, 100)  # 200 texts: 4 chunks
    start = time.monotonic()
    r = a.post("/v1/splits", json={"pairs": pairs, "descriptions": descriptions})
    err = assert_error(r, 503, "timeout", None)
    assert time.monotonic() - start < 8
    assert int(r.headers["retry-after"]) >= 1
    assert "splitting took longer than this server allows (1 s" in err["message"]
    a.fake.gate.set()
    for _ in range(200):
        if a.state.slow.in_flight == 0:
            break
        time.sleep(0.05)
    assert a.state.slow.in_flight == 0, "the build ran on past its deadline"
    assert len(a.fake.splits_calls()) == 1
    assert not a.state.backends.slots["embedding"].lock.locked()
    r = a.post("/v1/score?backend=embedding", content=SPORTS)
    assert r.status_code == 200, r.text


# -- small requests while a splits request runs --------------------------------------------


class PausingLock:
    """The embedding backend's lock, which lets the splits thread go on after it first gives
    the lock up mid-build only once ``resume`` is set (``paused`` says it is waiting)."""

    def __init__(self, fake: FakeEncoder, total: int) -> None:
        self._lock = threading.Lock()
        self._fake = fake
        self._total = total
        self.paused = threading.Event()
        self.resume = threading.Event()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        return self._lock.acquire(blocking, timeout)

    def release(self) -> None:
        self._lock.release()
        splits = threading.get_ident() == self._fake.splits_thread
        mid_build = 0 < self._fake.splits_texts < self._total
        if splits and mid_build and not self.paused.is_set():
            self.paused.set()
            self.resume.wait(20)

    def locked(self) -> bool:
        return self._lock.locked()

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def test_small_requests_are_served_while_a_splits_request_runs(fake_api):
    """Between two chunks of a splits request, with the rest of its descriptions still to
    embed, an embedding request and a co-occurrence request are answered (before: the
    splits request held the model for its whole build)."""
    a = fake_api()
    pairs, descriptions = pairs_and_descriptions(100, 100)  # 200 texts: 4 chunks
    slot = a.state.backends.slots["embedding"]
    lock = PausingLock(a.fake, total=200)
    slot.lock = lock  # type: ignore[assignment]
    answer: dict[str, Any] = {}

    def split() -> None:
        body = {"pairs": pairs, "descriptions": descriptions}
        answer["r"] = a.post("/v1/splits", json=body)

    thread = threading.Thread(target=split)
    thread.start()
    try:
        assert lock.paused.wait(20), "the splits request never let the model go mid-build"
        assert 0 < a.fake.splits_texts < 200
        r = a.post("/v1/score?backend=embedding", content=SPORTS)
        assert r.status_code == 200, r.text
        assert r.json()["backend"] == "embedding"
        r = a.post("/v1/score", content=SPORTS)
        assert r.status_code == 200, r.text
        assert thread.is_alive()  # the splits request is still running
    finally:
        lock.resume.set()
        thread.join(30)
    r = answer["r"]
    assert r.status_code == 200, r.text
    body = r.json()
    assert sum(len(v) for v in body["splits"].values()) == 100
    assert a.fake.splits_texts == 200
    assert len(a.fake.splits_calls()) == 4


def test_splits_through_the_real_model_match_the_unbounded_build(
    tmp_path: Path, default_index: Path, minilm, monkeypatch: pytest.MonkeyPatch
):
    """Chunked (three descriptions at a time here), the similarities are those of one
    ``build_splits`` over the whole list."""
    import leakage_service.routes.splits as route
    from leakage.splits import build_splits

    monkeypatch.setattr(route, "CHUNK_TEXTS", 3)
    pairs = [("sun", "moon"), ("cat", "dog"), ("apple", "banana"), ("piano", "guitar")]
    descriptions = {w: f"desc of {w}: " + " ".join([w] * (i + 3)) for i, w in
                    enumerate(w for p in pairs for w in p)}  # fmt: skip
    want = build_splits(PairTable.from_pairs(pairs), SuppliedDescriber(descriptions), minilm)
    a = Api(settings_for(tmp_path, default_index))
    try:
        a.state.backends.slots["embedding"] = BackendSlot("embedding", EmbeddingBackend(minilm))
        body = {"pairs": [list(p) for p in pairs], "descriptions": descriptions}
        r = a.post("/v1/splits", json=json.loads(json.dumps(body)))
        assert r.status_code == 200, r.text
        got = {(p["a"], p["b"]): p["similarity"] for s in r.json()["splits"].values() for p in s}
        for i, p in enumerate(want.known):
            assert got[(p.a, p.b)] == pytest.approx(float(want.similarities[i]), abs=1e-4)
    finally:
        a.close()
