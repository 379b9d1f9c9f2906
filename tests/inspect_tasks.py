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


def scripted_player(messages: list[ChatMessage], tools, tool_choice, config: GenerateConfig):
    """A valid move for every phase: clues from ``CLUES`` in turn, a description that names
    no word, a reflection suspecting the first other player, a vote for the last one, the
    card's first word as the chameleon's guess."""
    text = messages[-1].text
    if "Say your one word" in text:
        said = text.split("Words said so far:")[1].split(". Say")[0]
        reply = CLUES[len(re.findall(r"p\d+: ", said))]
    elif "Describe your word" in text:
        reply = "It is something people often talk about."
    elif "Vote for" in text:
        reply = re.search(r"one of: (.*?)\. Reply", text).group(1).split(", ")[-1]
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


def scripted_model():
    return get_model("mockllm/model", custom_outputs=scripted_player, memoize=False)


@task
def scripted_spygame() -> Task:
    """leakage/spygame (two games, two rounds) with the scripted players in both roles."""
    from leakage.inspect import spygame

    index = os.environ["LEAKAGE_TEST_INDEX"]
    model = scripted_model()
    base = spygame(games=2, seed=5, max_rounds=2, backend_options={"index": index})
    return task_with(base, model_roles={"civilian": model, "spy": model})
