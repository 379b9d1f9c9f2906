"""Optional backend abilities declared as protocols, closing, and the option route of the CLI."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from leakage.backends import (
    CountPlan,
    LikelihoodBackend,
    SupportsCacheStats,
    SupportsClose,
    SupportsDryRun,
    SupportsEmbed,
    SupportsPrepare,
    create_backend,
    open_backend,
)
from leakage.backends.cooccurrence import CooccurrenceBackend, LocalIndexSource
from leakage.backends.embedding import EmbeddingBackend
from leakage.backends.ensemble import EnsembleBackend
from leakage.backends.judge import JudgeBackend
from leakage.encoders import CachedEncoder
from leakage.errors import InvalidInput
from leakage.llm import Generation, Message

from .conftest import EXAMPLES
from .test_cli import run

PROTOCOLS = (SupportsPrepare, SupportsEmbed, SupportsDryRun, SupportsClose, SupportsCacheStats)


def abilities(backend: object) -> set[str]:
    return {p.__name__ for p in PROTOCOLS if isinstance(backend, p)}


class HashEncoder:
    """A deterministic stand-in for a sentence-transformers model (no torch)."""

    name = "test/hash-encoder"
    dimension = 8

    def encode_batch(self, texts: Sequence[str]) -> NDArray[np.float32]:
        rows = [
            np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8) for t in texts
        ]
        vecs = np.array(rows, dtype=np.float32).reshape(len(texts), self.dimension) + 1.0
        return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


class EchoLLM:
    """An ``LLMClient`` that scores every continuation by its length (no model)."""

    name = "test/echo"

    def info(self) -> dict[str, str]:
        return {"model": self.name}

    def score(self, prompt: str, continuations: Sequence[str]) -> list[float]:
        return [-float(len(c)) for c in continuations]

    def generate(self, messages: Sequence[Message], **kw: object) -> Generation:
        raise AssertionError("not used")


@pytest.fixture
def hash_encoder(monkeypatch: pytest.MonkeyPatch) -> None:
    """``open_encoder`` (what the embedding factory calls) builds ``HashEncoder``s."""
    import leakage.encoders

    monkeypatch.setattr(
        leakage.encoders, "SentenceTransformerEncoder", lambda *a, **k: HashEncoder()
    )


def _closed(con: sqlite3.Connection) -> bool:
    try:
        con.execute("SELECT 1")
    except sqlite3.ProgrammingError:
        return True
    return False


# -- each shipped backend has the abilities it should -------------------------------------


def test_shipped_backends_declare_their_abilities(default_index: Path, tmp_path: Path):
    cooc = CooccurrenceBackend(LocalIndexSource(default_index))
    emb = EmbeddingBackend(CachedEncoder(HashEncoder(), cache_path=tmp_path / "e.sqlite"))
    judge = JudgeBackend(EchoLLM())
    for b in (cooc, emb, judge):
        assert isinstance(b, LikelihoodBackend)
    assert abilities(cooc) == {"SupportsDryRun", "SupportsClose"}
    assert abilities(emb) == {
        "SupportsPrepare",
        "SupportsEmbed",
        "SupportsClose",
        "SupportsCacheStats",
    }
    assert abilities(judge) == {"SupportsPrepare", "SupportsClose"}

    ens = EnsembleBackend({"c": cooc, "e": emb}, {"c": 1.0, "e": 1.0}, {"c": 1.0, "e": 1.0})
    assert abilities(ens) == set(abilities(cooc) | abilities(emb))
    alone = EnsembleBackend({"j": judge}, {"j": 1.0}, {"j": 1.0})
    assert abilities(alone) == {"SupportsPrepare", "SupportsClose"}  # no embed, no dry run
    for b in (cooc, emb, judge, ens):
        b.close()


def test_close_closes_what_the_factory_opened_and_is_idempotent(
    default_index, hash_encoder, tmp_path
):
    with open_backend("cooccurrence", index=default_index) as cooc:
        assert isinstance(cooc, CooccurrenceBackend)
        cooc.loglik(["racket"], ["tennis", "golf"])
    assert _closed(cooc.source._con)
    cooc.close()  # again: nothing happens

    mine = LocalIndexSource(default_index)  # a source passed in stays the caller's
    with open_backend("cooccurrence", source=mine) as cooc:
        cooc.loglik(["racket"], ["tennis", "golf"])
    assert not _closed(mine._con)
    mine.close()

    emb = create_backend("embedding", cache_path=str(tmp_path / "e.sqlite"))
    assert isinstance(emb, EmbeddingBackend)
    emb.loglik(["racket"], ["tennis", "golf"])
    con = emb.encoder._con
    assert con is not None and not _closed(con)
    emb.close()
    emb.close()
    assert _closed(con) and emb.encoder._con is None


def test_an_ensemble_closes_its_members_sqlite_connections(default_index, hash_encoder, tmp_path):
    ens = create_backend(
        "ensemble",
        members="cooccurrence,embedding",
        index=default_index,
        embedding={"cache_path": str(tmp_path / "e.sqlite")},
    )
    assert isinstance(ens, EnsembleBackend)
    ens.loglik(["racket"], ["tennis", "golf", "chess"])
    cooc, emb = ens.members["cooccurrence"], ens.members["embedding"]
    assert isinstance(cooc, CooccurrenceBackend) and isinstance(emb, EmbeddingBackend)
    index_con, cache_con = cooc.source._con, emb.encoder._con
    assert cache_con is not None and not _closed(index_con) and not _closed(cache_con)
    with ens:
        pass
    assert _closed(index_con) and _closed(cache_con)
    ens.close()  # idempotent


# -- the ensemble forwards its members' abilities ------------------------------------------


def test_ensemble_forwards_embed_prepare_dry_run_and_cache_misses(default_index, tmp_path):
    cooc = CooccurrenceBackend(LocalIndexSource(default_index), owns_source=True)
    emb = EmbeddingBackend(CachedEncoder(HashEncoder(), cache_path=tmp_path / "e.sqlite"))
    ens = EnsembleBackend({"c": cooc, "e": emb}, {"c": 1.0, "e": 1.0}, {"c": 1.0, "e": 1.0})
    assert isinstance(ens, SupportsEmbed)
    assert np.array_equal(ens.embed(["a b"]), emb.embed(["a b"]))

    assert isinstance(ens, SupportsPrepare) and isinstance(ens, SupportsCacheStats)
    before = ens.cache_misses()
    ens.prepare([(["racket", "net"], ["tennis", "golf", "chess"], None)])
    assert ens.cache_misses() - before == emb.cache_misses() - before == 5
    ens.loglik(["racket", "net"], ["tennis", "golf", "chess"])
    assert ens.cache_misses() - before == 5  # everything was embedded by prepare

    games = [(["racket", "net"], ["tennis", "golf", "chess"])]
    assert isinstance(ens, SupportsDryRun)
    (plan,) = ens.dry_run(games)
    assert plan == cooc.dry_run(games)[0]
    assert plan == CountPlan("local", 2 + 3 + 2 * 3, 0)  # local look-ups cost nothing
    zero = EnsembleBackend({"c": cooc, "e": emb}, {"c": 0.0, "e": 1.0}, {"c": 1.0, "e": 1.0})
    assert zero.dry_run(games) == []  # a member with no weight sends nothing
    ens.close()


def test_score_ensemble_dry_run_counts_a_web_members_queries(tmp_path: Path):
    from tests.fakes.web_apis import SERPAPI_KEY, FakeWebApis

    game = str(EXAMPLES / "chameleon_sports.json")
    env = {"SERPAPI_API_KEY": SERPAPI_KEY}
    with FakeWebApis() as fake:
        web = ("--source", "serpapi", "--endpoint", fake.serpapi_url, "--dry-run")
        single = run("score", game, *web, home=tmp_path, env_extra=env)
        assert single.returncode == 0, single.stderr
        pooled = run(
            "score", game, "-b", "ensemble", "--members", "cooccurrence", *web,
            home=tmp_path, env_extra=env,
        )  # fmt: skip
        assert pooled.returncode == 0, pooled.stderr
        assert "sends no count queries" not in pooled.stderr
        assert "would be sent to serpapi" in pooled.stdout
        assert pooled.stdout == single.stdout
        assert fake.hits() == 0


# -- one option route ------------------------------------------------------------------------


def test_score_ensemble_index_reaches_the_cooccurrence_member(default_index, tmp_path: Path):
    index = tmp_path / "mine.sqlite"
    shutil.copy(default_index, index)
    game = str(EXAMPLES / "chameleon_sports.json")
    args = ("score", game, "-b", "ensemble", "--members", "cooccurrence", "-f", "json")
    p = run(*args, "--index", str(index), home=tmp_path)
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    assert report["backend_info"]["members"]["cooccurrence"]["count_source"]["index"] == str(index)

    p = run(*args, "--index", str(tmp_path / "missing.sqlite"), home=tmp_path)
    assert p.returncode != 0 and "missing.sqlite" in p.stderr


def test_score_a_flag_the_backend_does_not_take_is_an_error(leakage_home: Path):
    game = str(EXAMPLES / "chameleon_sports.json")
    p = run("score", game, "-b", "ensemble", "--members", "cooccurrence", "--model", "x",
            home=leakage_home)  # fmt: skip
    assert p.returncode == 2 and "takes the option 'model'" in p.stderr
    p = run("score", game, "--llm-endpoint", "http://127.0.0.1:9", home=leakage_home)
    assert p.returncode == 2 and "--llm-endpoint" in p.stderr and "--endpoint" in p.stderr


def test_score_option_given_by_o(leakage_home: Path):
    game = str(EXAMPLES / "chameleon_sports.json")
    p = run("score", game, "-O", "beta=7", "-O", "pooling=sum", "-f", "json", home=leakage_home)
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    assert report["backend_info"]["beta"] == 7 and report["backend_info"]["pooling"] == "sum"
    p = run("score", game, "-O", "beta=7", "--beta", "8", home=leakage_home)
    assert p.returncode == 2 and "given twice" in p.stderr


@pytest.mark.parametrize("cmd", ["score", "batch"])
def test_a_bad_enumerated_option_is_a_usage_error(cmd: str, leakage_home: Path, tmp_path: Path):
    game = str(EXAMPLES / "chameleon_sports.json")
    extra = (
        ("--out", str(tmp_path / "o"), "--workers", "0", "--no-progress") if cmd == "batch" else ()
    )
    p = run(cmd, game, "-O", "estimator=foo", *extra, home=leakage_home)
    assert p.returncode == 2, p.stderr
    assert "estimator='foo'" in p.stderr and "'conditional', 'npmi' or 'ngd'" in p.stderr
    assert "Traceback" not in p.stderr


@pytest.mark.parametrize(
    ("name", "option", "allowed"),
    [
        ("cooccurrence", {"pooling": "max"}, "'mean' or 'sum'"),
        ("judge", {"mode": "chat", "client": EchoLLM()}, "'likelihood' or 'elicitation'"),
        ("judge", {"direction": "up", "client": EchoLLM()}, "'speaker' or 'listener'"),
        ("judge", {"normaliser": "x", "client": EchoLLM()}, "'exact' or 'shortlist'"),
        ("listener", {"precision": "fp16", "client": EchoLLM()}, "'auto', 'fp32' or 'bf16'"),
        ("embedding", {"precision": "fp16"}, "'auto', 'fp32' or 'bf16'"),
    ],
)
def test_enumerated_factory_options_are_checked(name, option, allowed):
    with pytest.raises(InvalidInput) as info:
        create_backend(name, **option)
    key = next(k for k in option if k != "client")
    assert f"option {key}=" in str(info.value) and allowed in str(info.value)


def test_enumerated_options_agree_with_the_library():
    from typing import get_args

    from leakage._runtime import resolve_precision
    from leakage.backends.base import Precision
    from leakage.backends.judge import Normaliser
    from leakage.llm._local import NORMALISERS

    assert get_args(Normaliser) == NORMALISERS
    for p in get_args(Precision):
        assert resolve_precision(p) in ("fp32", "bf16")


def test_calibrate_checks_o_options_against_the_members(leakage_home: Path, tmp_path: Path):
    games = [str(EXAMPLES / "chameleon_sports.json"), str(EXAMPLES / "spygame_fruit.json")]
    out = ("--members", "cooccurrence", "--out", str(tmp_path / "w.json"), "--resamples", "100")
    p = run("calibrate", *games, *out, "-O", "colour=red", home=leakage_home)
    assert p.returncode == 2 and "takes the option 'colour'" in p.stderr
