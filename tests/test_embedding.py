"""Encoders, the embedding backend and the SpyGame outlier score, with the real bundled model."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leakage import parse_transcript, score_transcript
from leakage.backends.embedding import EmbeddingBackend
from leakage.encoders import CachedEncoder, resolve_model
from leakage.errors import BackendUnavailable
from leakage.metrics import outlier_scores, outlier_trace

from .conftest import EXAMPLES
from .numerics import reorder_tolerance


class CountingEncoder:
    """A deterministic fake encoder that records what it was asked to embed."""

    name = "fake/hash-encoder"
    dimension = 8

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode_batch(self, texts):
        self.seen.extend(texts)
        out = np.stack(
            [np.random.default_rng(abs(hash(t)) % 2**32).normal(size=8) for t in texts]
        ).astype(np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_cache_embeds_each_string_once_and_persists(tmp_path: Path):
    inner = CountingEncoder()
    cache = CachedEncoder(inner, cache_path=tmp_path / "e.sqlite", batch_size=2)
    a = cache.encode(["x", "y", "x", "z"])
    assert a.shape == (4, 8) and np.allclose(a[0], a[2])
    assert sorted(inner.seen) == ["x", "y", "z"]  # de-duplicated, in batches of 2
    cache.encode(["y", "z"])
    assert len(inner.seen) == 3  # memory hit
    cache.close()
    inner2 = CountingEncoder()
    again = CachedEncoder(inner2, cache_path=tmp_path / "e.sqlite")
    assert np.allclose(again.encode(["x", "y", "z"]), a[[0, 1, 3]])
    assert inner2.seen == []  # disk hit: nothing re-embedded
    assert again.encode([]).shape == (0, 8)
    again.close()


def test_cache_is_keyed_by_model(tmp_path: Path):
    first = CountingEncoder()
    CachedEncoder(first, cache_path=tmp_path / "e.sqlite").encode(["x"])
    other = CountingEncoder()
    other.name = "fake/another-model"
    CachedEncoder(other, cache_path=tmp_path / "e.sqlite").encode(["x"])
    assert other.seen == ["x"]


def test_bundled_minilm_is_real(minilm):
    assert minilm.name == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.dimension == 384
    v = minilm.encode(["tennis", "badminton", "volcano"])
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-2)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.1


def test_backend_likelihood_is_a_softmax_over_candidates(minilm):
    backend = EmbeddingBackend(minilm, tau=0.05)
    cands = ["Tennis", "Golf", "Swimming", "Ice Hockey", "Cycling", "Triathlon", "Motor Racing"]
    L = backend.loglik(["racket", "puck", "swim", "wheel"], cands)
    assert np.allclose(np.exp(L).sum(axis=1), 1.0)
    assert [cands[i] for i in L.argmax(axis=1)] == ["Tennis", "Ice Hockey", "Swimming", "Cycling"]
    sims = backend.similarities(["racket"], cands)
    # One clue against seven candidates here, four clues in ``loglik``: matrix products of
    # other shapes, whose fp32 cosines (384 products of unit vectors' components) may round
    # differently; L = s/τ - logsumexp(s/τ) carries that twice, divided by τ.
    atol = 2 * reorder_tolerance("float32", [minilm.dimension], 1.0) / 0.05
    want = sims[0] / 0.05 - np.log(np.exp(sims[0] / 0.05).sum())
    np.testing.assert_allclose(L[0], want, rtol=0, atol=atol)
    info = backend.info()
    assert info["model"] == "sentence-transformers/all-MiniLM-L6-v2" and info["dimension"] == 384


def test_candidate_template(minilm):
    backend = EmbeddingBackend(minilm, candidate_template="{category}: {word}")
    assert backend.candidate_texts(["Tennis"], "Sports") == ["Sports: Tennis"]
    with pytest.raises(ValueError):
        EmbeddingBackend(minilm, candidate_template="{category}")
    with pytest.raises(ValueError):
        EmbeddingBackend(minilm, tau=0)


def test_prepare_embeds_in_bulk(minilm):
    inner = CountingEncoder()
    backend = EmbeddingBackend(CachedEncoder(inner))
    backend.prepare([(["a", "b"], ["X", "Y"], None), (["b"], ["X", "Z"], "Cat")])
    assert sorted(inner.seen) == ["X", "Y", "Z", "a", "b"]
    backend.loglik(["a"], ["X", "Y"])
    assert len(inner.seen) == 5


def test_outlier_scores():
    v = {"a": np.array([1.0, 0.0]), "b": np.array([0.9, 0.1]), "c": np.array([0.0, 1.0])}
    s = outlier_scores(v)
    assert max(s, key=s.get) == "c"
    assert outlier_scores({"a": np.array([1.0, 0.0])}) == {"a": 0.0}
    trace = outlier_trace(["a", "b", "a"], np.eye(2, dtype=np.float32)[[0, 1, 0]])
    assert [sorted(t) for t in trace] == [["a"], ["a", "b"], ["a", "b"]]


def test_spygame_report_has_outliers_and_spy_posterior(minilm):
    game = json.loads((EXAMPLES / "spygame_two_spies.json").read_text())
    r = score_transcript(parse_transcript(game), EmbeddingBackend(minilm))
    assert all(s.outlier_scores for s in r.steps)
    assert set(r.steps[-1].outlier_scores) == {t["player"] for t in game["turns"]}
    assert sum(r.steps[-1].spy_posterior.values()) == pytest.approx(2.0)
    assert len(r.summary.outlier_top_after_round1) == 2
    assert r.summary.outlier_hit_after_round1 is not None
    assert r.backend_info["dimension"] == 384


def test_resolve_model():
    name, path = resolve_model("minilm")
    assert name == "sentence-transformers/all-MiniLM-L6-v2" and Path(path).is_dir()
    assert resolve_model("BAAI/bge-m3") == ("BAAI/bge-m3", "BAAI/bge-m3")


def _run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=180,
    )


def test_hub_name_loads_from_the_local_hub_cache(tmp_path: Path):
    """BAAI/bge-m3 by hub name goes through the real hub-loading code: here a Hugging Face
    cache that holds the bundled MiniLM files under that name stands in for the weights."""
    _, bundled = resolve_model("minilm")
    snap = tmp_path / "hub" / "models--BAAI--bge-m3" / "snapshots" / ("0" * 40)
    shutil.copytree(bundled, snap)
    (tmp_path / "hub" / "models--BAAI--bge-m3" / "refs").mkdir()
    (tmp_path / "hub" / "models--BAAI--bge-m3" / "refs" / "main").write_text("0" * 40)
    code = (
        "from leakage.encoders import SentenceTransformerEncoder as E\n"
        "e = E('BAAI/bge-m3', precision='fp32')\n"
        "print(e.name, e.dimension, e.encode_batch(['puck']).shape)\n"
    )
    p = _run(code, {"HF_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"})
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["BAAI/bge-m3", "384", "(1,", "384)"]


def test_missing_hub_model_says_how_to_get_it(tmp_path: Path):
    code = (
        "from leakage.encoders import SentenceTransformerEncoder as E\n"
        "from leakage.errors import BackendUnavailable\n"
        "try:\n    E('BAAI/bge-m3')\n"
        "except BackendUnavailable as e:\n    print(e)\n"
    )
    p = _run(code, {"HF_HOME": str(tmp_path)})
    assert p.returncode == 0, p.stderr
    assert "hf download BAAI/bge-m3" in p.stdout and "--model DIR" in p.stdout


def test_not_a_model_folder(tmp_path: Path):
    with pytest.raises(BackendUnavailable, match="not a sentence-transformers model folder"):
        resolve_model(str(tmp_path))


def test_cli_scores_with_the_embedding_backend(tmp_path: Path):
    env = {**os.environ, "LEAKAGE_HOME": str(tmp_path), "COLUMNS": "200"}
    p = subprocess.run(
        [sys.executable, "-m", "leakage", "score", str(EXAMPLES), "-b", "embedding", "-f",
         "jsonl"],
        capture_output=True, text=True, env=env, timeout=180,
    )  # fmt: skip
    assert p.returncode == 2  # corpora/examples/bad holds the bad examples
    reports = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(reports) >= 9
    assert {r["backend"] for r in reports} == {"embedding"}
    assert all(r["backend_info"]["model"].endswith("all-MiniLM-L6-v2") for r in reports)
    assert (tmp_path / "embeddings.sqlite").is_file()
