"""Scripted Inspect players and a task file for ``inspect eval`` in a subprocess
(tests/test_inspect.py): the mockllm model answers each prompt of the project's LLM players
by rule, with a usage set so that mockllm counts no tokens (which would fetch a tokenizer)."""

from __future__ import annotations

import json
import os
import re

from inspect_ai import Task, task, task_with
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage, get_model

CLUES = ["ball", "team", "goal", "score", "play", "run", "jump", "swim"]


def _epoch() -> int:
    from inspect_ai.solver._task_state import sample_state  # the sample being played

    state = sample_state()
    return state.epoch if state is not None else 1


def scripted_player(messages: list[ChatMessage], tools, tool_choice, config: GenerateConfig):
    """A valid move for every phase: clues from ``CLUES`` in turn, a description that names
    no word, a reflection suspecting the first other player, a vote for the last one, the
    card's first word as the chameleon's guess."""
    return _reply(messages, vote_shift=0)


def epoch_player(messages: list[ChatMessage], tools, tool_choice, config: GenerateConfig):
    """``scripted_player`` voting for a different player in each epoch (so that the epochs
    of one game end differently)."""
    return _reply(messages, vote_shift=_epoch() - 1)


def _reply(messages: list[ChatMessage], vote_shift: int):
    text = messages[-1].text
    if "Say your one word" in text:
        said = text.split("Words said so far:")[1].split(". Say")[0]
        reply = CLUES[len(re.findall(r"p\d+: ", said))]
    elif "Describe your word" in text:
        reply = "It is something people often talk about."
    elif "Vote for" in text:
        others = re.search(r"one of: (.*?)\. Reply", text).group(1).split(", ")
        reply = others[(len(others) - 1 + vote_shift) % len(others)]
    elif "Which word of the card" in text:
        words = re.search(r"lists \d+ words: (.*?)\. One of", messages[0].text).group(1)
        reply = words.split(", ")[0]
    elif "among" in text:  # a reflection
        others = re.search(r"among (.*?)\?", text).group(1).split(", ")
        role = "non-chameleon" if "chameleon" in text else "civilian"
        reply = json.dumps({"self": role, "suspect": others[0]})
    else:  # a prompt of another task
        reply = "hello"
    out = ModelOutput.from_content(model="mockllm", content=f"Answer: {reply}")
    out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return out


def scripted_model(player=scripted_player):
    return get_model("mockllm/model", custom_outputs=player, memoize=False)


@task
def scripted_spygame() -> Task:
    """leakage/spygame (two games, two rounds) with the scripted players in both roles."""
    from leakage.inspect import spygame

    index = os.environ["LEAKAGE_TEST_INDEX"]
    model = scripted_model()
    base = spygame(games=2, seed=5, max_rounds=2, backend_options={"index": index})
    return task_with(base, model_roles={"civilian": model, "spy": model})
