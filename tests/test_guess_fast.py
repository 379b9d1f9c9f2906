"""``guess`` without the model where it is not needed: clues that are vocabulary words take
their vectors from the index (the vectors the encoder gave them when it was built), torch is
imported only for the other clues, and the results are those of embedding every clue."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage._runtime import resolve_precision
from leakage.cli.vocab import guess_document
from leakage.errors import InvalidInput
from leakage.vocab import (
    LazyEncoder,
    OpenVocabulary,
    VectorIndex,
    build_vocabulary,
    merge_words,
    wordfreq_words,
)

from .numerics import reorder_tolerance

EXTRA = ["puck", "hockey", "goalie", "rink", "skating", "zebra", "stripes", "mane"]
EXTRA += ["racket", "rackets", "racquet", "tennis", "badminton", "net", "nets", "network"]
MODEL_RUNTIME = ("torch", "transformers", "sentence_transformers")

# One word's vector, embedded twice in batches of other shapes: all-MiniLM-L6-v2 has 6
# layers (hidden size 384, 12 heads of 32, feed-forward 1536; attention and mean pooling
# over a word's few tokens, at most 16), then the unit-length normalisation (384). Each
# component of a unit vector is at most 1.
# The encoder runs at the precision ``auto`` gives on this CPU (the fixture's and the CLI's):
# fp32, or bf16 where the CPU has it natively.
_LAYER = [384, 32, 16, 384, 384, 384, 1536, 384]
VECTOR_TOL = reorder_tolerance(resolve_precision("auto"), _LAYER * 6 + [16, 384], 1.0)


def _similarity_tol(clues: int, dimension: int = 384) -> float:
    """Σ_i cos(clue_i, w) when each clue vector differs by VECTOR_TOL per component:
    |Δ(q·w)| <= ||Δq||₂ (w is a unit vector) <= clues·√d·VECTOR_TOL, plus the product's own
    rounding."""
    return clues * math.sqrt(dimension) * VECTOR_TOL + reorder_tolerance(
        "float32", [dimension], clues
    )


def assert_same_result(got: dict[str, Any], want: dict[str, Any], clues: int) -> None:
    """Equal documents, up to rounding in the similarities and the probabilities computed
    from them (p = exp(s/τ - logsumexp(s/τ)): |Δ log p| <= 2·max|Δs|/τ)."""
    sim_tol = _similarity_tol(clues)
    prob_rtol = math.expm1(2 * sim_tol / want["tau"])

    def strip(doc: dict[str, Any]) -> dict[str, Any]:
        out = json.loads(json.dumps(doc))
        for item in [*out["guesses"], *([out["secret"]] if out.get("secret") else [])]:
            item.pop("similarity")
            item.pop("probability")
        return out

    assert strip(got) == strip(want)
    pairs = list(zip(got["guesses"], want["guesses"], strict=True))
    if want.get("secret"):
        pairs.append((got["secret"], want["secret"]))
    for a, b in pairs:
        assert a["similarity"] == pytest.approx(b["similarity"], rel=0, abs=sim_tol)
        assert a["probability"] == pytest.approx(b["probability"], rel=prob_rtol, abs=0)


class CountingEncoder:
    """Wraps a real encoder and records every text it is asked to embed."""

    def __init__(self, encoder: Any) -> None:
        self.inner = encoder
        self.name = encoder.name
        self.dimension = encoder.dimension
        self.seen: list[str] = []

    def encode_batch(self, texts):
        self.seen.extend(texts)
        return self.inner.encode_batch(texts)


@pytest.fixture(scope="module")
def index_dir(minilm, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A saved HNSW vocabulary (the default kind) of ~1,800 frequent words and a few more."""
    words = merge_words(wordfreq_words(2000), EXTRA)
    path = tmp_path_factory.mktemp("vocab") / "sports"
    build_vocabulary(words, minilm, kind="hnsw").save(path)
    return path


@pytest.fixture(scope="module")
def index(index_dir: Path, minilm) -> VectorIndex:
    return VectorIndex.load(index_dir, encoder=minilm)


# -- the library ---------------------------------------------------------------------------


def test_index_holds_the_unit_vectors_the_encoder_gives(index: VectorIndex, minilm):
    norms = np.linalg.norm(index.vectors.astype(np.float64), axis=1)
    np.testing.assert_allclose(norms, 1, rtol=0, atol=reorder_tolerance("float32", [384], 1))
    rng = np.random.default_rng(3)
    rows = sorted({*rng.choice(len(index), 200, replace=False).tolist(), index.position("puck")})
    words = [index.words[r] for r in rows]
    # Embedded now in batches of 256 (the cached encoder's), at build time in one of ~1,800.
    fresh = minilm.encoder.encode_batch(words)
    fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
    np.testing.assert_allclose(index.vectors[rows], fresh, rtol=0, atol=VECTOR_TOL)


def test_clues_in_the_vocabulary_are_not_embedded(index: VectorIndex, minilm):
    counting = CountingEncoder(minilm.encoder)
    vocab = OpenVocabulary(index, counting)
    result = vocab.guess(["puck", "ice"], secret="hockey", exclude=["goalie"], top=5)
    assert counting.seen == []
    assert result.secret is not None and result.secret.in_vocabulary
    vocab.rank_of("rink", ["puck"])
    vocab.similarities(["zebra", "stripes"])
    assert counting.seen == []
    # Only the clue that is not a vocabulary word is embedded; a word that differs in case
    # is embedded too (a cased model gives it another vector), and a secret outside the
    # vocabulary is embedded to be ranked.
    vocab.guess(["puck", "ice rink", "Hockey"], secret="zamboni")
    assert counting.seen == ["ice rink", "Hockey", "zamboni"]


@pytest.mark.parametrize(
    ("clues", "options"),
    [
        (["puck"], {"secret": "hockey"}),
        (["puck", "ice"], {"secret": "skating", "exclude": ["goalie"], "top": 5}),
        # Not two kept clues: each then scores 1 + cos(one, other), a tie that rounding breaks.
        (["zebra"], {"exclude_clues": False, "top": 20}),
        (["mane"], {"secret": "zamboni", "top": 3}),  # a secret outside the vocabulary
    ],
)
def test_index_vectors_give_the_results_of_embedding(index, minilm, clues, options):
    tau = 0.1 if "top" in options else 0.05
    fast = OpenVocabulary(index, minilm, tau=tau).guess(clues, **options)
    slow = OpenVocabulary(index, minilm, tau=tau, from_index=False).guess(clues, **options)
    assert_same_result(guess_document(index, fast), guess_document(index, slow), clues=len(clues))


def test_lazy_encoder_opens_the_model_once_and_checks_it(minilm):
    opened: list[int] = []

    def open_model():
        opened.append(1)
        return minilm.encoder

    lazy = LazyEncoder(minilm.name, minilm.dimension, open_model)
    assert not lazy.opened and opened == []
    vecs = lazy.encode_batch(["puck", "ice rink"])
    lazy.encode_batch(["hockey"])
    assert lazy.opened and opened == [1] and vecs.shape == (2, 384)

    wrong = LazyEncoder(minilm.name, 1024, lambda: minilm.encoder)
    with pytest.raises(InvalidInput, match=r"built with .*\(1024 dimensions\).*\(384\)"):
        wrong.encode_batch(["puck"])
    assert not wrong.opened


# -- the command line ----------------------------------------------------------------------

# Runs the CLI, then says on stderr which model runtimes the process imported.
_RUN = """
import json, sys
from leakage.cli import main
sys.argv = ["leakage", *sys.argv[1:]]
try:
    main()
finally:
    loaded = [m for m in MODEL_RUNTIME if m in sys.modules]
    sys.stderr.write("\\nMODULES " + json.dumps(loaded) + "\\n")
""".replace("MODEL_RUNTIME", repr(MODEL_RUNTIME))


def _guess(home: Path, *args: str) -> tuple[str, list[str]]:
    env = {**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200"}
    p = subprocess.run(
        [sys.executable, "-c", _RUN, "guess", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    modules = json.loads(p.stderr.rpartition("MODULES ")[2])
    return p.stdout, modules


def test_cli_answers_vocabulary_clues_without_the_model(index_dir, index, minilm, tmp_path):
    args = ["--secret", "skating", "--exclude", "goalie", "--tau", "0.1", "--top", "5"]
    args += ["--rerank", "none"]
    out, modules = _guess(tmp_path, "puck", "ice", "--vocab", str(index_dir), *args, "-f", "json")
    assert modules == []
    doc = json.loads(out)
    options = {"secret": "skating", "exclude": ["goalie"], "top": 5}
    # Exactly what the library gives from the same index vectors ...
    fast = OpenVocabulary(index, minilm, tau=0.1).guess(["puck", "ice"], **options)
    assert doc == guess_document(index, fast)
    # ... and, up to rounding, what embedding the clues gives.
    slow = OpenVocabulary(index, minilm, tau=0.1, from_index=False).guess(
        ["puck", "ice"], **options
    )
    assert_same_result(doc, guess_document(index, slow), clues=2)

    out, modules = _guess(
        tmp_path, "zebra", "--vocab", str(index_dir), "--keep-clues", "--keep-forms"
    )
    assert modules == []
    assert "│    1 │ zebra" in out and "left out" not in out
    assert not (tmp_path / "embeddings.sqlite").exists()  # nothing was embedded


def test_cli_embeds_other_clues_once_then_reads_the_cache(index_dir, index, minilm, tmp_path):
    args = ["ice rink", "puck", "--vocab", str(index_dir), "--secret", "zamboni", "-f", "json"]
    args += ["--rerank", "none"]
    first, modules = _guess(tmp_path, *args)
    assert modules == list(MODEL_RUNTIME)  # the model was needed ...
    slow = OpenVocabulary(index, minilm, from_index=False)
    want = guess_document(index, slow.guess(["ice rink", "puck"], secret="zamboni"))
    doc = json.loads(first)
    assert doc["secret"]["in_vocabulary"] is False
    assert_same_result(doc, want, clues=2)

    again, modules = _guess(tmp_path, *args)
    assert modules == []  # ... once: the embedding cache holds both texts now
    assert again == first


def test_cli_reranks_by_default_without_the_model(index_dir, index, shared_home):
    """The default re-rank (co-occurrence counts and the index's own vectors) opens no
    model either: ``racket`` + ``net`` put tennis in the top 5 (issue 39)."""
    out, modules = _guess(shared_home, "racket", "net", "--vocab", str(index_dir), "-f", "json")
    assert modules == []
    doc = json.loads(out)
    assert doc["reranked_by"] == "cooccurrence, embedding (shortlist of 200)"
    assert "rackets" in doc["forms"] and "nets" in doc["forms"]
    assert "tennis" in [g["word"] for g in doc["guesses"][:5]]
