"""`leakage splits build --describer llm`: descriptions by the bundled local model and by an
OpenAI-compatible endpoint (a local fake that speaks the real JSON over HTTP)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from leakage.splits import DESCRIPTION_PROMPT, LLMDescriber
from leakage.splits._describers import whole_sentences
from tests.cli_support import invoke_leakage
from tests.fakes.openai_api import CHAT_PREFIX, MODEL, FakeOpenAI


def build(*args: str, home: Path) -> tuple[int, str]:
    r = invoke_leakage("splits", "build", *args, home=home)
    return r.exit_code, r.output


def pairs_file(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.csv"
    path.write_text("civilian,spy\ncat,dog\nsun,moon\n", encoding="utf-8")
    return path


def descriptions(out: Path) -> dict[str, str]:
    lines = (out / "descriptions.jsonl").read_text(encoding="utf-8").splitlines()
    return {d["word"]: d["description"] for d in map(json.loads, lines)}


def test_whole_sentences_keeps_three_and_drops_an_unfinished_one():
    text = 'A "cat" is a pet.  It purrs (softly). It weighs 3.5 kg! A fourth. And cut off as'
    assert whole_sentences(text) == 'A "cat" is a pet. It purrs (softly). It weighs 3.5 kg!'
    assert whole_sentences("One. Two, cut") == "One."
    assert whole_sentences("nothing whole here") == "nothing whole here"


class _CutOff:
    name = "cutoff"

    def generate(self, messages, **kw):
        from leakage.llm import Generation

        assert kw["max_tokens"] == LLMDescriber.max_tokens
        return Generation(text="A small pet that purrs. It hunts mice and sleeps in the")


def test_llm_describer_drops_a_sentence_cut_at_max_tokens():
    assert LLMDescriber(_CutOff()).describe(["cat"]) == {"cat": "A small pet that purrs."}


def test_describer_llm_through_an_openai_compatible_endpoint(tmp_path: Path):
    with FakeOpenAI() as fake:
        code, output = build(str(pairs_file(tmp_path)), "--out", str(tmp_path / "o"),
                             "--describer", "llm", "--llm-endpoint", fake.url,
                             "--llm-model", MODEL, home=tmp_path)  # fmt: skip
        assert code == 0, output
        chats = [r for r in fake.requests if r.path == "/v1/chat/completions"]
    assert len(chats) == len(fake.requests) == 4  # one per word, nothing else
    prompt = DESCRIPTION_PROMPT.format(word="cat")
    assert chats[0].body["model"] == MODEL
    assert chats[0].body["messages"] == [{"role": "user", "content": prompt}]
    assert chats[0].body["max_tokens"] == LLMDescriber.max_tokens
    # The fake answers "You said: <prompt>": two whole sentences, kept as they are.
    assert descriptions(tmp_path / "o") == {
        w: CHAT_PREFIX + DESCRIPTION_PROMPT.format(word=w) for w in ("cat", "dog", "sun", "moon")
    }
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["describer"] == f"llm:{MODEL}" and summary["counts"]["unknown"] == 0

    # Cached: a second run sends nothing (the server is gone) and writes the same files.
    code, output = build(str(pairs_file(tmp_path)), "--out", str(tmp_path / "o2"),
                         "--describer", "llm", "--llm-endpoint", "http://127.0.0.1:9/v1",
                         "--llm-model", MODEL, home=tmp_path)  # fmt: skip
    assert code == 0, output
    assert descriptions(tmp_path / "o2") == descriptions(tmp_path / "o")


def test_llm_options_belong_to_the_llm_describer(tmp_path: Path):
    code, output = build(str(pairs_file(tmp_path)), "--out", str(tmp_path / "o"),
                         "--llm-endpoint", "http://127.0.0.1:9/v1", home=tmp_path)  # fmt: skip
    assert code == 2 and "--llm-endpoint" in output and "wordnet" in output


def test_describer_llm_with_the_bundled_local_model(tmp_path: Path):
    pytest.importorskip("torch")
    # One pair: the model is converted into this LEAKAGE_HOME (about 15 s on an idle machine)
    # and writes up to 160 tokens per word (about 6 s each).
    pairs = tmp_path / "one.csv"
    pairs.write_text("civilian,spy\ncat,dog\n", encoding="utf-8")
    code, output = build(str(pairs), "--out", str(tmp_path / "o"), "--describer", "llm",
                         home=tmp_path)  # fmt: skip
    assert code == 0, output
    found = descriptions(tmp_path / "o")
    assert set(found) == {"cat", "dog"}
    for word, text in found.items():
        sentences = re.findall(r"[.!?][\"')\]]*(?=\s|$)", text)
        assert 1 <= len(sentences) <= 3 and text[-1] in ".!?\"')]", (word, text)
        assert len(text.split()) >= 3
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["describer"] == "llm:smollm2-135m"
    assert sum(summary["counts"][s] for s in ("hard", "medium", "easy")) == 1
