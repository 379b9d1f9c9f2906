"""A vocabulary embedded as glosses (``texts="gloss"``, ``leakage vocab build --texts
gloss``): the texts, the index's record of them, and what a glossed index changes in
ranking, with the real bundled MiniLM and WordNet 3.0 (the ``wn`` package)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from leakage.errors import InvalidInput
from leakage.vocab import (
    OpenVocabulary,
    VectorIndex,
    build_vocabulary,
    default_vocab_dir,
    gloss_text,
    read_meta,
    word_texts,
)

WORDS = ["winter", "summer", "dog", "piano", "river", "bread", "Qwzxv"]


def test_gloss_texts() -> None:
    assert gloss_text("winter") == "winter: the coldest season of the year"
    assert gloss_text("Qwzxv") == "Qwzxv"  # not in WordNet: the bare word
    assert word_texts(["dog"], "word") == ["dog"]
    assert word_texts(["dog"], "gloss")[0].startswith("dog: a member of the genus Canis")
    with pytest.raises(InvalidInput, match="unknown vocabulary texts"):
        word_texts(["dog"], "definition")


def test_default_dir_of_a_glossed_vocabulary(tmp_path: Path) -> None:
    plain = default_vocab_dir("m", home=tmp_path)
    assert default_vocab_dir("m", home=tmp_path, texts="gloss") == plain.with_name(
        plain.name + "-gloss"
    )


@pytest.fixture(scope="module")
def glossed(minilm) -> VectorIndex:
    return build_vocabulary(WORDS, minilm, kind="numpy", texts="gloss")


def test_a_glossed_index_keeps_the_words_and_says_how_they_were_embedded(
    glossed: VectorIndex, minilm, tmp_path: Path
) -> None:
    assert glossed.words == WORDS and glossed.meta.texts == "gloss"
    want = minilm.encode(word_texts(WORDS, "gloss")).astype(np.float32)
    want /= np.linalg.norm(want, axis=1, keepdims=True)
    assert np.allclose(glossed.vectors, want, atol=1e-6)
    glossed.save(tmp_path / "g")
    assert read_meta(tmp_path / "g").texts == "gloss"
    assert VectorIndex.load(tmp_path / "g").meta.texts == "gloss"
    assert build_vocabulary(WORDS[:2], minilm, kind="numpy").meta.texts == "word"


def test_a_glossed_vocabulary_embeds_every_clue_and_glosses_an_outside_word(
    glossed: VectorIndex, minilm
) -> None:
    vocab = OpenVocabulary(glossed, minilm)
    assert vocab.from_index is False  # "dog" as a clue is not the gloss of "dog"
    clue = "the season when days are shortest and nights are longest"
    assert vocab.guess([clue], top=1).guesses[0].word == "winter"
    outside = vocab.rank_of("hockey", [clue])
    assert not outside.in_vocabulary
    vecs = minilm.encode([clue, gloss_text("hockey")])
    cos = float(vecs[0] @ vecs[1] / np.linalg.norm(vecs[0]) / np.linalg.norm(vecs[1]))
    assert outside.similarity == pytest.approx(cos, abs=1e-5)


def test_cli_builds_a_glossed_vocabulary(tmp_path: Path) -> None:
    home = tmp_path / "home"
    words = tmp_path / "few.txt"
    words.write_text("\n".join(WORDS), "utf-8")
    env = {**os.environ, "LEAKAGE_HOME": str(home), "COLUMNS": "200"}
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "leakage",
            "vocab",
            "build",
            "--words",
            str(words),
            "--texts",
            "gloss",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr
    out = home / "vocab" / "sentence-transformers-all-minilm-l6-v2-few-gloss"
    assert read_meta(out).texts == "gloss"
