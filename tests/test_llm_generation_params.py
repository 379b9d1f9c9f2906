"""``GenerationParams``: the generation keywords checked in one place for every client, the
keyword call style kept (``generate(messages, max_tokens=..., stop=...)``)."""

from __future__ import annotations

import re
import typing

import pytest

from leakage.llm import GenerationOptions, GenerationParams, OpenAICompatibleClient
from leakage.llm._base import GENERATION_KEYWORDS
from tests.fakes.openai_api import MODEL, FakeOpenAI


def test_the_keywords_are_the_fields():
    assert set(typing.get_type_hints(GenerationOptions)) == GENERATION_KEYWORDS
    assert {"max_tokens", "temperature", "top_logprobs", "stop", "seed"} == GENERATION_KEYWORDS


def test_defaults_and_a_stop_string():
    assert GenerationParams.of() == GenerationParams(256, 0.0, 0, (), None)
    assert GenerationParams.of(stop="\n").stop == ("\n",)  # one stop, not one per character
    assert GenerationParams.of(stop="END").stop == ("END",)
    assert GenerationParams.of(stop=["a", "b"]).stop == ("a", "b")
    assert GenerationParams.of(stop=None).stop == ()
    with pytest.raises(TypeError, match=r"unexpected keyword.*top_k"):
        GenerationParams.of(top_k=3)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_tokens": 0}, "max_tokens must be at least 1 (got 0)"),
        ({"temperature": -0.5}, "temperature must be 0 or more"),
        ({"temperature": float("nan")}, "temperature must be 0 or more"),
        ({"top_logprobs": -1}, "top_logprobs cannot be negative (got -1)"),
        ({"stop": ["ok", 3]}, "stop is a sequence of strings"),
    ],
)
def test_bad_values_are_refused(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        GenerationParams.of(**options)


def test_the_endpoint_sends_a_stop_string_whole_and_the_seed():
    with FakeOpenAI() as fake:
        llm = OpenAICompatibleClient(fake.url, MODEL)
        llm.generate("The secret is", max_tokens=3, stop="\n", seed=7)
        llm.generate("The secret is", max_tokens=3)
        with pytest.raises(ValueError, match="temperature"):
            llm.generate("p", temperature=-1.0)
        first, second = (r.body for r in fake.requests)
    assert first == {
        "model": MODEL,
        "prompt": "The secret is",
        "max_tokens": 3,
        "temperature": 0.0,
        "stop": ["\n"],
        "seed": 7,
    }
    # without a seed the request is what it was before (its cache key unchanged)
    assert second == {
        "model": MODEL,
        "prompt": "The secret is",
        "max_tokens": 3,
        "temperature": 0.0,
    }


def test_the_local_model_takes_a_stop_string_whole(tmp_path_factory: pytest.TempPathFactory):
    """A ``stop`` string was read character by character by the local model (any of its
    letters ended the answer); it is one stop, as for the endpoint."""
    pytest.importorskip("torch")
    from leakage.llm import LocalLM

    lm = LocalLM("smollm2-135m", cache_dir=tmp_path_factory.mktemp("models") / "smollm2")
    prompt = "Count: one, two, three,"
    full = lm.generate(prompt, max_tokens=12).text
    at = next(i for i in range(1, len(full) - 3) if full[i] == " " and full[i + 1].isalpha())
    stop = full[at : at + 3]  # " fo" in " four, five": its space comes earlier
    assert min(full.find(c) for c in stop) < full.find(stop), (full, stop)
    assert lm.generate(prompt, max_tokens=12, stop=stop).text == full[: full.find(stop)]
