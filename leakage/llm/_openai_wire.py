"""The OpenAI wire format: one request (:class:`_Job`), and reading a 2xx answer back
(generations in the chat and completions formats, echoed prompt logprobs for scoring), with
the JSON path of whatever is missing or of the wrong type."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from leakage._http import error_message
from leakage.llm._base import Message

_SCORE_NEEDS = (
    "the likelihood judge needs an endpoint whose completions API echoes the prompt with its "
    "logprobs (echo + logprobs, e.g. vLLM); the elicitation judge works with any chat endpoint"
)

Kind = Literal["chat", "completions", "score"]


@dataclass(frozen=True)
class _Job:
    """One distinct request: its endpoint kind, cache key and body (without ``model``)."""

    kind: Kind
    key: str
    body: dict[str, Any]
    split: int = 0
    """score: where the continuation starts in ``body["prompt"]``."""


class _Malformed(Exception):
    """A 2xx answer lacks a field or has one of the wrong type."""

    def __init__(self, path: str, problem: str = "is missing") -> None:
        super().__init__(f"{path} {problem}")
        self.path = path


class _NoPromptLogprobs(Exception):
    """The server answered a score request without the prompt's token logprobs."""


def _json_at(node: Any, *steps: str | int, where: str = "") -> Any:
    """``node[steps[0]][steps[1]]...``, raising :class:`_Malformed` with the JSON path."""
    path = where
    for step in steps:
        if isinstance(step, int):
            path = f"{path}[{step}]"
            if not isinstance(node, list) or not -len(node) <= step < len(node):
                raise _Malformed(path)
        else:
            path = f"{path}.{step}" if path else step
            if not isinstance(node, dict) or step not in node:
                raise _Malformed(path)
        node = node[step]
    return node


def _number(value: Any, path: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise _Malformed(path, f"is {value!r}, not a number")


def _list(value: Any, path: str) -> list[Any]:
    if isinstance(value, list):
        return value
    raise _Malformed(path, f"is {type(value).__name__}, not a list")


def _tokens_used(payload: Any) -> tuple[int, int]:
    """``(prompt_tokens, completion_tokens)``; 0 when the server sends no usage."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    if not isinstance(usage, dict):
        return 0, 0

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) else 0

    return count(usage.get("prompt_tokens")), count(usage.get("completion_tokens"))


def _chat_top_logprobs(logprobs: Any) -> list[dict[str, float]] | None:
    """Chat format: ``logprobs.content[i].top_logprobs[j].{token, logprob}``."""
    if not isinstance(logprobs, dict) or logprobs.get("content") is None:
        return None
    where = "choices[0].logprobs.content"
    out: list[dict[str, float]] = []
    for i, entry in enumerate(_list(logprobs["content"], where)):
        at = f"{where}[{i}]"
        if not isinstance(entry, dict):
            raise _Malformed(at, f"is {type(entry).__name__}, not an object")
        alternatives = _list(entry.get("top_logprobs") or [], f"{at}.top_logprobs")
        position: dict[str, float] = {}
        for j, alt in enumerate(alternatives):
            alt_at = f"{at}.top_logprobs[{j}]"
            position[str(_json_at(alt, "token", where=alt_at))] = _number(
                _json_at(alt, "logprob", where=alt_at), f"{alt_at}.logprob"
            )
        if not position:  # logprobs without alternatives: the chosen token only
            position[str(_json_at(entry, "token", where=at))] = _number(
                _json_at(entry, "logprob", where=at), f"{at}.logprob"
            )
        out.append(position)
    return out


def _legacy_top_logprobs(logprobs: Any) -> list[dict[str, float]] | None:
    """Completions format: ``logprobs.top_logprobs[i]`` is a ``{token: logprob}`` dict."""
    if not isinstance(logprobs, dict) or logprobs.get("top_logprobs") is None:
        return None
    where = "choices[0].logprobs.top_logprobs"
    out: list[dict[str, float]] = []
    for i, position in enumerate(_list(logprobs["top_logprobs"], where)):
        if position is None:  # the first echoed token has no logprob
            out.append({})
            continue
        if not isinstance(position, dict):
            raise _Malformed(f"{where}[{i}]", f"is {type(position).__name__}, not an object")
        out.append({str(t): _number(v, f"{where}[{i}][{t!r}]") for t, v in position.items()})
    return out


def _parse_generation(kind: Kind, payload: Any) -> dict[str, Any]:
    choice = _json_at(payload, "choices", 0)
    if kind == "chat":
        text = _json_at(choice, "message", "content", where="choices[0]")
        top = _chat_top_logprobs(choice.get("logprobs"))
        path = "choices[0].message.content"
    else:
        text = _json_at(choice, "text", where="choices[0]")
        top = _legacy_top_logprobs(choice.get("logprobs"))
        path = "choices[0].text"
    if text is None:  # the chat format allows null content (a refusal, a tool call)
        text = ""
    if not isinstance(text, str):
        raise _Malformed(path, f"is {type(text).__name__}, not a string")
    prompt_tokens, completion_tokens = _tokens_used(payload)
    return {
        "text": text,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "top_logprobs": top,
    }


def _parse_score(payload: Any, split: int, end: int) -> dict[str, Any]:
    """Σ logprob of the echoed tokens covering ``text[split:end]`` (legacy logprobs format).

    A token counts when it starts inside the continuation, or starts in the prompt and
    reaches into it (``"is " + "cat"`` is often tokenised ``" is", " cat"``: the
    continuation's first word must not be lost). Tokens at or after ``end`` were generated.
    """
    choice = _json_at(payload, "choices", 0)
    logprobs = choice.get("logprobs") if isinstance(choice, dict) else None
    if not isinstance(logprobs, dict):
        raise _NoPromptLogprobs("returned no logprobs (choices[0].logprobs is empty)")
    where = "choices[0].logprobs"
    for name in ("token_logprobs", "text_offset"):
        if name not in logprobs:
            raise _NoPromptLogprobs(f"returned no {where}.{name} (the completions format)")
    values = _list(logprobs["token_logprobs"], f"{where}.token_logprobs")
    offsets = _list(logprobs["text_offset"], f"{where}.text_offset")
    if len(values) != len(offsets):
        raise _Malformed(
            f"{where}.token_logprobs",
            f"has {len(values)} entries but text_offset has {len(offsets)}",
        )
    for i, offset in enumerate(offsets):
        if not isinstance(offset, int) or isinstance(offset, bool):
            raise _Malformed(f"{where}.text_offset[{i}]", f"is {offset!r}, not an integer")
    if not any(offset < end for offset in offsets):
        raise _NoPromptLogprobs(
            "did not echo the prompt: logprobs came back for generated tokens only"
        )
    total = 0.0
    for i, start in enumerate(offsets):
        if start >= end:
            continue
        stop = offsets[i + 1] if i + 1 < len(offsets) else end
        if start >= split or stop > split:
            if values[i] is None:
                raise _Malformed(f"{where}.token_logprobs[{i}]", "is null for a scored token")
            total += _number(values[i], f"{where}.token_logprobs[{i}]")
    prompt_tokens, completion_tokens = _tokens_used(payload)
    return {
        "logprob": total,
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
    }


def _refuses_zero(response: httpx.Response) -> bool:
    """The server refused ``max_tokens: 0`` (vLLM before echo-only support, others)."""
    return response.status_code in (400, 422) and "max_tokens" in error_message(response)


def _as_message(item: Any, index: int) -> dict[str, str]:
    if isinstance(item, Message):
        return {"role": item.role, "content": item.content}
    if isinstance(item, Mapping) and isinstance(item.get("content"), str) and item.get("role"):
        return {"role": str(item["role"]), "content": item["content"]}
    raise TypeError(f"messages[{index}] is {item!r}: expected a leakage.llm.Message")
