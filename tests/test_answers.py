"""The answers backend: clues read as attributes that hold or not (question + yes/no answer,
negated statements), P(answer | attribute, candidate) from WordNet senses with the bundled
MiniLM, the chain-rule rows, and the ``question_answer`` item type. No ``../shared``."""

from __future__ import annotations

import numpy as np
import pytest

from leakage.backends import create_backend
from leakage.backends.answers import (
    ANSWER_PROMPT,
    AnswersBackend,
    ask_question,
    is_question_answer,
    read_answer,
    sense_texts,
)
from leakage.backends.ensemble import item_type

CARD = ["Dog", "Chair", "Violin", "Carrot"]


@pytest.mark.parametrize(
    ("clue", "expected"),
    [
        ("Is the target word a type of beverage? Yes.", ("a type of beverage", True)),
        ("Does the target word typically live in water? no", ("typically live in water", False)),
        ("Is it alive?\nANSWER: NO", ("alive", False)),
        ("Can you eat it? Yes!", ("Can you eat it?", True)),
        ("It is not a metal.", ("It is a metal.", False)),
        ("It doesn't fly.", ("It does fly.", False)),
        ("It cannot swim.", ("It can swim.", False)),
        ("It's an island.", ("It's an island.", True)),
    ],
)
def test_read_answer(clue: str, expected: tuple[str, bool]) -> None:
    assert read_answer(clue) == expected


def test_question_answer_item_type() -> None:
    qa = "Is the target word a type of beverage? No."
    assert is_question_answer(qa) and item_type(qa, 8) == "question_answer"
    assert item_type(qa, 2) == "statement"  # a pair stays SpyGame's
    assert not is_question_answer("Is it a beverage?")  # a question alone says nothing
    assert item_type("Is it a beverage?", 8) == "sentence_card"
    assert item_type("It is not a metal.", 8) == "sentence_card"
    assert item_type("puck", 8) == "word"


def test_sense_texts_are_word_and_gloss() -> None:
    texts = sense_texts("Violin", 3)
    assert (
        texts[0]
        == "Violin: bowed stringed instrument that is the highest member of the violin family"
    )
    assert sense_texts("Qwzxv", 3) == ("Qwzxv",)  # not in WordNet: the bare word


@pytest.fixture(scope="module")
def answers(minilm) -> AnswersBackend:
    return AnswersBackend(minilm)


def test_no_counts_against_the_attribute(answers: AnswersBackend) -> None:
    yes = answers.loglik(["Is the target word an animal? Yes."], CARD)[0]
    no = answers.loglik(["Is the target word an animal? No."], CARD)[0]
    assert int(np.argmax(yes)) == 0
    assert int(np.argmin(no)) == 0  # the dog is the least likely once "No."
    # the same question, the other answer: the probabilities of yes and no add up to 1
    assert np.allclose(np.exp(yes) + np.exp(no), 1.0)


def test_answers_narrow_the_card(answers: AnswersBackend) -> None:
    clues = [
        "Is the target word an animal? No.",
        "Is the target word used to make music? Yes.",
    ]
    rows = answers.loglik(clues, CARD)
    assert int(np.argmax(rows.sum(axis=0))) == 2  # Violin


def test_a_negated_statement_reads_as_no(answers: AnswersBackend) -> None:
    plain = answers.loglik(["It is a vegetable."], CARD)[0]
    negated = answers.loglik(["It is not a vegetable."], CARD)[0]
    assert int(np.argmax(plain)) == 3 and int(np.argmin(negated)) == 3


def test_rows_are_the_chain_rule_of_one_sense_mixture(answers: AnswersBackend) -> None:
    clues = ["Is it alive? Yes.", "Is it a pet? Yes.", "Does it bark? No."]
    rows = answers.loglik(clues, CARD)
    logit, owner, holds = answers.yes_logits(clues, CARD)
    sign = np.where(holds, 1.0, -1.0)[:, None]
    per_sense = (-np.logaddexp(0.0, -sign * logit)).sum(axis=0)
    for j in range(len(CARD)):
        mine = per_sense[owner == j]
        joint = np.log(np.exp(mine).mean())
        assert rows[:, j].sum() == pytest.approx(joint)  # the rows add up to the joint
    # each clue's row alone is not the same as reading it first: the senses it agrees with
    # were already weighed by the earlier answers
    first = answers.loglik(clues[2:], CARD)[0]
    assert not np.allclose(first, rows[2])


def test_the_factory_takes_the_embedding_options(minilm) -> None:
    b = create_backend("answers", encoder=minilm, slope=2.0, offset=0.0, senses=1)
    assert b.info()["slope"] == 2.0 and b.info()["senses"] == 1
    assert b.loglik([], CARD).shape == (0, 4)
    with pytest.raises(ValueError, match="slope"):
        AnswersBackend(minilm, slope=0)


# -- the LLM reader: any leakage.llm client, here an endpoint (the fake OpenAI server) -----


@pytest.mark.parametrize(
    ("clue", "candidate", "question"),
    [
        ("Is the target word a type of fish? Yes.", "Flounder", "Is Flounder a type of fish?"),
        (
            "Does the target word typically live in water? no",
            "Bass",
            "Does Bass typically live in water?",
        ),
        ("Can you eat it? Yes!", "Pear", "Can you eat it?"),  # no frame: asked as it was
        ("It is not a metal.", "Gold", "Is it true that it is a metal?"),
    ],
)
def test_a_clue_is_asked_about_the_candidate(clue: str, candidate: str, question: str) -> None:
    assert ask_question(clue, candidate) == question


def test_the_llm_reader_asks_an_endpoint_each_question_once(tmp_path) -> None:
    from leakage.llm import OpenAICompatibleClient
    from tests.fakes.openai_api import MODEL, FakeOpenAI, token_logprob

    clues = ["Is the target word an animal? Yes.", "Is the target word a pet? No."]
    with FakeOpenAI() as fake:
        client = OpenAICompatibleClient(
            fake.url, MODEL, cache_path=tmp_path / "llm.sqlite", backoff=0.01
        )
        backend = create_backend("answers", client=client, llm_slope=2.0, llm_offset=0.5)
        assert backend.reader == "llm" and backend.info()["model"] == MODEL
        rows = backend.loglik(clues, CARD[:2])
        asked = len(fake.requests)
        assert backend.loglik(clues, CARD[:2]).tolist() == rows.tolist()
        assert len(fake.requests) == asked  # each question asked once
        prompts = {r.body["prompt"] for r in fake.requests}
    assert fake.requests[0].path == "/v1/completions"
    assert ANSWER_PROMPT.format(candidate="Dog", question="Is Dog an animal?") + " yes" in prompts
    assert ANSWER_PROMPT.format(candidate="Chair", question="Is Chair a pet?") + " no" in prompts
    # by hand: the fake gives a token -len/10 whatever the context, so " yes" -0.4 and " no"
    # -0.3 after every prompt: log-odds -0.1, logit 2 * -0.1 + 0.5 = 0.3 for every candidate;
    # "Yes." reads log σ(0.3), "No." log σ(-0.3) (one reading per candidate: the chain rule
    # leaves each row its own answer's probability)
    assert token_logprob(" yes") - token_logprob(" no") == pytest.approx(-0.1)
    assert rows[0] == pytest.approx([-np.logaddexp(0, -0.3)] * 2)
    assert rows[1] == pytest.approx([-np.logaddexp(0, 0.3)] * 2)


def test_llm_endpoint_reaches_the_answers_member(tmp_path, monkeypatch) -> None:
    from leakage.cli._options import backend_options
    from tests.fakes.openai_api import FakeOpenAI

    url = "http://127.0.0.1:9/v1"
    assert backend_options("answers", None, {}, llm_endpoint=url) == {"endpoint": url}
    assert backend_options("ensemble", None, {}, llm_endpoint=url)["answers"] == {"endpoint": url}
    # an endpoint alone chooses the LLM reader; nothing is opened until a clue is read
    backend = create_backend("answers", endpoint=url, llm_model="m")
    assert backend.reader == "llm" and backend.info()["llm"] == {"opened": False}
    monkeypatch.setenv("LEAKAGE_HOME", str(tmp_path))  # its own LLM responses cache
    with FakeOpenAI(models=("big-model",)) as fake:  # --llm-endpoint URL --model NAME
        named = create_backend("answers", endpoint=fake.url, model="big-model", variables={})
        named.loglik(["Is it a dog? Yes."], CARD[:1])
        assert named.info()["model"] == "big-model"
        assert {r.body["model"] for r in fake.requests} == {"big-model"}
    kept = create_backend("answers", endpoint=url, reader="similarity")
    assert kept.reader == "similarity"
    with pytest.raises(ValueError, match="needs an LLM client"):
        AnswersBackend(lambda: None, reader="llm")  # type: ignore[arg-type,return-value]
