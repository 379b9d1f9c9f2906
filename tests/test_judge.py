"""The judge backend with a scripted fake LLM (the real models are tested in test_llm_*)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from leakage import parse_transcript, score_transcript
from leakage.backends.judge import JudgeBackend, parse_distribution
from leakage.errors import LLMError
from leakage.llm import Generation


class ScriptedLLM:
    """score: +1 per occurrence of the secret's first letter in the clue; generate: scripted."""

    name = "scripted"

    def __init__(self, answers=(), top_logprobs=None):
        self.answers = list(answers)
        self.top = top_logprobs
        self.prompts: list[str] = []
        self.asked: list[object] = []

    def info(self):
        return {"model": self.name}

    def score(self, prompt, continuations):
        self.prompts.append(prompt)
        self.continuations = list(continuations)
        word = prompt.split("Secret word: ")[1].split(".")[0]
        return [float(c.lower().count(word[0].lower())) for c in continuations]

    def generate(self, messages, *, max_tokens=256, temperature=0.0, top_logprobs=0, stop=None):
        self.asked.append(messages)
        if top_logprobs:  # the lettered question; a server without logprobs returns None
            return Generation(text="A", top_logprobs=[self.top] if self.top else None)
        return Generation(text=self.answers.pop(0) if self.answers else "")


def test_likelihood_scores_every_clue_under_every_candidate():
    llm = ScriptedLLM()
    judge = JudgeBackend(llm)
    L = judge.loglik(["tt", "g"], ["Tennis", "Golf"], category="Sports")
    assert L.shape == (2, 2)
    assert L.tolist() == [[2.0, 0.0], [0.0, 1.0]]
    assert len(llm.prompts) == 2  # one prompt per candidate, all clues scored after it
    assert all(p.startswith("Category: Sports.") for p in llm.prompts)
    assert llm.prompts[1].endswith("Secret word: Tennis. First word that comes to mind:")
    # the clue follows after a space, so that it is tokenised as a word, with nothing after it
    assert llm.continuations == [" tt", " g"]


def test_candidates_are_asked_in_one_order_and_columns_follow_the_game():
    llm = ScriptedLLM()
    judge = JudgeBackend(llm)
    a = judge.loglik(["tt", "g"], ["Tennis", "Golf", "Polo"], category="Sports")
    b = judge.loglik(["tt", "g"], ["Polo", "Tennis", "Golf"], category="Sports")
    assert llm.prompts[:3] == llm.prompts[3:]  # the same prompts, whatever the game's order
    assert b.tolist() == a[:, [2, 0, 1]].tolist()


class GroupedLLM(ScriptedLLM):
    """ScriptedLLM with ``score_groups``: counts calls of each kind."""

    def __init__(self):
        super().__init__()
        self.group_calls = 0
        self.single_calls = 0

    def score_many(self, prompts, continuations):
        self.single_calls += 1
        return np.array([self.score(p, continuations) for p in prompts])

    def score_groups(self, groups):
        self.group_calls += 1
        return [np.array([self.score(p, c) for p in prompts]) for prompts, c in groups]


def test_prepare_scores_a_batch_of_games_in_one_call():
    games = [
        (["tt", "g"], ["Tennis", "Golf"], "Sports"),
        (["g"], ["Golf", "Tennis"], "Sports"),  # the same card in another order
        (["pp"], ["Polo", "Golf"], "Sports"),
        ([], ["Polo", "Golf"], "Sports"),
    ]
    plain = JudgeBackend(ScriptedLLM())
    want = [plain.loglik(c, w, category=k) for c, w, k in games]
    llm = GroupedLLM()
    judge = JudgeBackend(llm)
    judge.prepare(iter(games))
    got = [judge.loglik(c, w, category=k) for c, w, k in games]
    assert (llm.group_calls, llm.single_calls) == (1, 0)
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()
    assert judge.loglik(["new clue"], ["Tennis", "Golf"], category="Sports").shape == (1, 2)
    assert llm.single_calls == 1  # a clue that was not prepared is scored on its own
    judge.prepare([])  # answers are kept until the next prepare only
    judge.loglik(["tt"], ["Tennis", "Golf"], category="Sports")
    assert llm.single_calls == 2


def test_clue_template_is_configurable_and_checked():
    llm = ScriptedLLM()
    JudgeBackend(llm, clue_template=' "{clue}"').loglik(["tt"], ["Tennis", "Golf"], category="x")
    assert llm.continuations == [' "tt"']
    with pytest.raises(ValueError, match="clue"):
        JudgeBackend(llm, clue_template="no placeholder")


def test_sentence_clues_use_the_description_prompt():
    llm = ScriptedLLM()
    JudgeBackend(llm).loglik(["a long sentence about it"], ["Violin", "Cello"])
    assert "describes it without saying it" in llm.prompts[0]


def test_parse_distribution_is_strict():
    cands = ["Tennis", "Golf", "Polo"]
    p = parse_distribution('```json\n{"tennis": 3, "Golf": 1}\n```', cands)
    assert p.tolist() == [0.75, 0.25, 0.0]
    for bad in ["nope", "[1, 2]", '{"Chess": 1}', '{"Golf": -1}', '{"Golf": 0}', '{"Golf": "x"}']:
        with pytest.raises(ValueError):
            parse_distribution(bad, cands)


def test_elicitation_reproduces_the_judges_posterior():
    answers = [json.dumps({"Tennis": 0.5, "Golf": 0.5}), json.dumps({"Tennis": 0.9, "Golf": 0.1})]
    judge = JudgeBackend(ScriptedLLM(answers), mode="elicitation")
    game = {
        "format": "leakage.transcript/1", "game": "chameleon", "id": "g", "category": "Sports",
        "candidates": ["Tennis", "Golf"], "secret": "Tennis",
        "players": [{"id": "a", "role": "non-chameleon"}, {"id": "b", "role": "chameleon"}],
        "turns": [{"player": "a", "text": "ball"}, {"player": "a", "text": "racket"}],
    }  # fmt: skip
    r = score_transcript(parse_transcript(game), judge)
    assert r.steps[0].posterior["Tennis"] == pytest.approx(0.5)
    assert r.steps[1].posterior["Tennis"] == pytest.approx(0.9)


def test_elicitation_retries_invalid_json_then_reports():
    judge = JudgeBackend(ScriptedLLM(["nonsense", '{"Tennis": 1}']), mode="elicitation")
    assert judge.loglik(["x"], ["Tennis", "Golf"])[0, 0] > 0
    judge = JudgeBackend(ScriptedLLM(["a", "b", "c"]), mode="elicitation", max_retries=2)
    with pytest.raises(LLMError, match="no valid probability JSON after 3 tries"):
        judge.loglik(["x"], ["Tennis", "Golf"])
    assert judge.failures == 1


def test_elicitation_reads_logprobs_of_option_letters():
    top = {"A": np.log(0.2), " B": np.log(0.6), "C.": np.log(0.2), "zz": 0.0}
    judge = JudgeBackend(ScriptedLLM(top_logprobs=top), mode="elicitation")
    L = judge.loglik(["clue"], ["Tennis", "Golf", "Polo"])
    p = np.exp(L[0]) / 3  # p_1 = uniform * exp(row)
    assert p.tolist() == pytest.approx([0.2, 0.6, 0.2])


def test_ratings():
    judge = JudgeBackend(ScriptedLLM(['{"relevance": 0.8, "revealing": 0.3}']))
    assert judge.rate("It is round", "ball") == {"relevance": 0.8, "revealing": 0.3}
    judge = JudgeBackend(ScriptedLLM(["x", '{"relevance": 2, "revealing": 0}', "{}"]))
    with pytest.raises(LLMError):
        judge.rate("It is round", "ball")


def test_bad_mode():
    with pytest.raises(ValueError):
        JudgeBackend(ScriptedLLM(), mode="vibes")


def test_cli_scores_with_the_local_judge(leakage_home):
    """`leakage score --backend judge` end to end with the real bundled Gemma-3-270M.

    In the session's LEAKAGE_HOME, so that Gemma is converted once for this test and
    tests/test_wheel.py (the ensemble's judge member)."""
    import os
    import subprocess
    import sys

    from .conftest import EXAMPLES

    env = {**os.environ, "LEAKAGE_HOME": str(leakage_home), "COLUMNS": "200"}
    p = subprocess.run(
        [sys.executable, "-m", "leakage", "score", str(EXAMPLES / "chameleon_sports.json"),
         "-b", "judge", "-f", "json"],
        capture_output=True, text=True, env=env, timeout=600,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    (report,) = json.loads(p.stdout)
    assert report["backend"] == "judge"
    assert report["backend_info"]["model"] == "gemma-3-270m"
    assert [s["counted"] for s in report["steps"]] == [True, True, False, True]
    for s in report["steps"]:
        assert sum(s["posterior"].values()) == pytest.approx(1.0)


LISTENER_TABLE = {  # description -> {continuation: log-probability}
    "": {" Tennis": -1.0, " Golf": -3.0},
    "racket": {" Tennis": -0.5, " Golf": -4.0},
    "green": {" Tennis": -2.0, " Golf": -1.0},
}


class ListenerLLM:
    """score: log P(word | prompt) from a table keyed by the description in the prompt."""

    name = "listener-table"

    def __init__(self):
        self.prompts: list[str] = []

    def info(self):
        return {"model": self.name}

    def score(self, prompt, continuations):
        self.prompts.append(prompt)
        clue = prompt.split("Description: ")[1].split("\n")[0]
        return [LISTENER_TABLE[clue][c] for c in continuations]


class ListenerManyLLM(ListenerLLM):
    def score_many(self, prompts, continuations):
        return np.array([self.score(p, continuations) for p in prompts])


@pytest.mark.parametrize("client", [ListenerLLM, ListenerManyLLM])
def test_listener_direction_is_the_pmi_against_an_empty_clue(client):
    """Worked by hand: racket: Tennis -0.5 - (-1) = 0.5, Golf -4 - (-3) = -1;
    green: Tennis -2 - (-1) = -1, Golf -1 - (-3) = 2."""
    llm = client()
    judge = JudgeBackend(llm, direction="listener")
    L = judge.loglik(["racket", "green"], ["Tennis", "Golf"], category="Sports")
    assert L.tolist() == [[0.5, -1.0], [-1.0, 2.0]]
    # one prompt per clue and one with an empty description, in that order
    assert llm.prompts == [
        "Description: racket\nThe word being described is:",
        "Description: green\nThe word being described is:",
        "Description: \nThe word being described is:",
    ]
    assert judge.info()["direction"] == "listener"
    # the posterior after both clues: rows summed, normalised (uniform prior)
    p = np.exp(L.sum(0) - L.sum(0).max())
    assert (p / p.sum()).tolist() == pytest.approx(
        [np.exp(-0.5) / (np.exp(-0.5) + np.exp(1.0)), np.exp(1.0) / (np.exp(-0.5) + np.exp(1.0))]
    )


def test_bad_direction_and_listener_prompt_without_clue():
    with pytest.raises(ValueError, match="direction"):
        JudgeBackend(ListenerLLM(), direction="sideways")
    with pytest.raises(ValueError, match="clue"):
        JudgeBackend(ListenerLLM(), direction="listener", prompt="Secret: {word}")


def test_factory_checks_the_direction_before_loading_a_model():
    from leakage.backends import create_backend
    from leakage.errors import InvalidInput

    with pytest.raises(InvalidInput, match="direction='sideways': Input should be"):
        create_backend("judge", model="no-such-model-here", direction="sideways")


def test_listener_backend_is_the_judge_read_the_other_way():
    """`-b listener` is `-b judge --direction listener` under its own name (an ensemble's
    members are backend names), with the same rows."""
    from leakage.backends import backend_names, create_backend

    assert "listener" in backend_names()
    listener = create_backend("listener", client=ListenerLLM())
    judge = create_backend("judge", client=ListenerLLM(), direction="listener")
    assert listener.name == "listener" and listener.info()["backend"] == "listener"
    assert listener.info()["direction"] == "listener"
    args = (["racket", "green"], ["Tennis", "Golf"])
    assert listener.loglik(*args).tolist() == judge.loglik(*args).tolist()


def test_backends_on_the_same_local_model_share_it(monkeypatch):
    """The judge and the listener of one ensemble load their model once; other settings, or
    a model nobody holds any more, load again."""
    import leakage.llm
    from leakage.backends import judge as judge_module
    from leakage.llm import _open

    loaded = []

    class CountingLM:
        def __init__(self, model, **options):
            loaded.append((model, options))

    monkeypatch.setattr(leakage.llm, "LocalLM", CountingLM)
    monkeypatch.setattr(_open, "_OPEN_MODELS", type(_open._OPEN_MODELS)())
    # torch's client by name: a CPU without bf16 would default to CTranslate2's, shared alike
    first = judge_module.open_llm("some-model", kind="local")
    assert judge_module.open_llm("some-model", kind="local") is first
    assert len(loaded) == 1
    other = judge_module.open_llm("some-model", kind="local", threads=1)
    assert other is not first and len(loaded) == 2
    del first, other
    judge_module.open_llm("some-model", kind="local")
    assert len(loaded) == 3


WIDER_TABLE = {
    "": {" Tennis": -1.0, " Golf": -3.0, " Polo": -2.5},
    "racket": {" Tennis": -0.5, " Golf": -4.0, " Polo": -6.0},
    "green": {" Tennis": -2.0, " Golf": -1.0, " Polo": -1.5},
    "net": {" Tennis": -0.2, " Golf": -5.0, " Polo": -3.0},
    "horse": {" Tennis": -6.0, " Golf": -5.0, " Polo": -0.1},
}


class ListenerEachLLM(ListenerManyLLM):
    """``score_many`` and ``score_each`` (each prompt with its own continuations) over
    WIDER_TABLE, counting the calls."""

    def __init__(self):
        super().__init__()
        self.each_calls: list[list[tuple[str, list[str]]]] = []
        self.many_calls = 0

    def score(self, prompt, continuations):
        self.prompts.append(prompt)
        clue = prompt.split("Description: ")[1].split("\n")[0]
        return [WIDER_TABLE[clue][c] for c in continuations]

    def score_many(self, prompts, continuations):
        self.many_calls += 1
        return super().score_many(prompts, continuations)

    def score_each(self, items):
        self.each_calls.append([(p, list(c)) for p, c in items])
        return [np.array(self.score(p, c)) for p, c in items]


def test_listener_prepare_scores_every_game_in_one_call():
    """The listener's prepare asks each prompt once over all games (the empty description
    once per category, with every candidate any game asks after it) and loglik then reads
    the same rows as game by game."""
    games = [
        (["racket", "green"], ["Tennis", "Golf"], "Sports"),
        (["net"], ["Golf", "Tennis", "Polo"], "Sports"),
        (["horse", "racket"], ["Polo", "Tennis"], "Sports"),
        ([], ["Polo", "Golf"], "Sports"),
    ]
    plain = JudgeBackend(ListenerEachLLM(), direction="listener")
    want = [plain.loglik(c, w, category=k) for c, w, k in games]
    llm = ListenerEachLLM()
    judge = JudgeBackend(llm, direction="listener")
    judge.prepare(iter(games))
    got = [judge.loglik(c, w, category=k) for c, w, k in games]
    for a, b in zip(got, want, strict=True):
        assert a.tolist() == b.tolist()
    assert llm.many_calls == 0 and len(llm.each_calls) == 1
    asked = dict(llm.each_calls[0])
    assert len(asked) == len(llm.each_calls[0]) == 5  # racket, green, net, horse, empty
    empty = "Description: \nThe word being described is:"
    assert sorted(asked[empty]) == [" Golf", " Polo", " Tennis"]
    assert sorted(asked["Description: racket\nThe word being described is:"]) == [
        " Golf",
        " Polo",
        " Tennis",
    ]
    assert asked["Description: green\nThe word being described is:"] == [" Tennis", " Golf"]
    judge.loglik(["green"], ["Tennis", "Polo"], category="Sports")  # Polo not asked after it
    assert llm.many_calls == 1
    judge.prepare([])  # kept until the next prepare only
    judge.loglik(["net"], ["Golf", "Tennis"], category="Sports")
    assert llm.many_calls == 2


def test_listener_prepare_without_score_each_leaves_loglik_to_score_many():
    llm = ListenerManyLLM()
    judge = JudgeBackend(llm, direction="listener")
    judge.prepare([(["racket"], ["Tennis", "Golf"], "Sports")])
    assert llm.prompts == [] and judge._prepared == {}
    assert judge.loglik(["racket"], ["Tennis", "Golf"]).tolist() == [[0.5, -1.0]]
