"""Request inputs: the scoring options (query parameters) and the records in a body.

Everything here runs on a worker thread: decoding and validating a large body would
otherwise hold the event loop.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from leakage.errors import InvalidInput, InvalidTranscript
from leakage.reports import Report
from leakage.scoring import ScoreOptions
from leakage.transcripts import (
    AnyTranscript,
    ChameleonTranscript,
    convert_record,
    parse_transcript,
)

JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")
"""Content types of a body read as JSONL (one record per line)."""

InputFormat = Literal["auto", "leakage", "ck-arena", "spygame-liang"]
"""``leakage.transcripts.INPUT_FORMATS`` spelled out for the OpenAPI schema (a test keeps
the two in step)."""


class ScoreParams(BaseModel):
    """How to score: the same query parameters for ``/v1/score``, ``/v1/score/batch`` and
    ``/v1/jobs``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    backend: str = "cooccurrence"
    """Likelihood backend (``GET /v1/backends`` lists what this server has)."""
    input_format: InputFormat = "auto"
    """``auto`` (native records carry ``"format": "leakage.transcript/1"``; third-party logs
    are recognised by shape), ``leakage``, ``ck-arena`` or ``spygame-liang``."""
    include_chameleon: bool = False
    """Chameleon: let the chameleon's own turns update the posterior too."""
    spy_assignment: Literal["known", "marginalise"] = "known"
    """SpyGame spy posterior: the civilians' word is ``known``, or ``marginalise`` over both."""
    top_k: Annotated[int | None, Field(ge=1, le=1000)] = None
    """Keep only the k most probable candidates in each step's ``posterior`` (smaller
    reports; ``secret_rank`` and the summary still use every candidate)."""
    distractors: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=200)]], Field(max_length=200)
    ] = Field(default_factory=list)
    """Extra candidate words: SpyGame distractors, added to a Chameleon card."""

    def options(self) -> ScoreOptions:
        return ScoreOptions(
            include_chameleon=self.include_chameleon, spy_assignment=self.spy_assignment
        )

    def key(self) -> bytes:
        return self.model_dump_json().encode()


def request_key(params: ScoreParams, body: bytes) -> bytes:
    """A report cache key: the options and the exact body."""
    return hashlib.sha256(params.key() + b"\0" + body).digest()


def decode_text(body: bytes) -> str:
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InvalidTranscript(
            [("body", f"not UTF-8 text (byte {err.start}); send UTF-8 JSON")]
        ) from None


def parse_json(text: str, *, record: int | None = None) -> Any:
    """The JSON of a body (or, with ``record``, of one JSONL line of it)."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        where = (
            f"column {err.colno}" if record is not None else f"line {err.lineno} column {err.colno}"
        )
        field = "" if record is not None else "body"
        raise InvalidTranscript(
            [(field, f"malformed JSON: {err.msg} at {where}")], record=record
        ) from None


def split_records(body: bytes, *, jsonl: bool) -> list[Any]:
    """The records of a batch body: a JSON array (or one object) or JSONL lines. A line
    that is not JSON stays in the list as its ``InvalidTranscript``."""
    text = decode_text(body)
    if not text.strip():
        raise InvalidTranscript([("body", "empty body: send a JSON array or JSONL lines")])
    if not jsonl:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            lines = [line for line in text.splitlines() if line.strip()]
            if len(lines) < 2:
                return [parse_json(text)]
        else:
            return doc if isinstance(doc, list) else [doc]
    out: list[Any] = []
    for i, line in enumerate(line for line in text.splitlines() if line.strip()):
        try:
            out.append(parse_json(line, record=i))
        except InvalidTranscript as err:
            out.append(err)
    return out


def with_distractors(game: AnyTranscript, distractors: list[str]) -> AnyTranscript:
    """The game with extra candidates (validated again: duplicates are a 422)."""
    if not distractors:
        return game
    data = game.model_dump(mode="json")
    key = "candidates" if isinstance(game, ChameleonTranscript) else "distractors"
    data[key] = [*data[key], *distractors]
    try:
        return parse_transcript(data)
    except InvalidTranscript as err:
        raise InvalidTranscript(
            [("distractors", f"{f}: {m}" if f else m) for f, m in err.problems]
        ) from None


def to_game(record: Any, params: ScoreParams, *, index: int = 0) -> AnyTranscript:
    """A record of the body -> a validated game with the request's distractors."""
    if isinstance(record, InvalidInput):
        raise record
    return with_distractors(
        convert_record(record, input_format=params.input_format, index=index), params.distractors
    )


def finish(report: Report, params: ScoreParams) -> bytes:
    """The report as sent: trimmed to ``top_k`` and with the request's settings recorded."""
    if params.distractors:
        report.settings["distractors"] = list(params.distractors)
    if params.top_k is not None:
        report.settings["top_k"] = params.top_k
        for step in report.steps:
            ranked = sorted(step.posterior.items(), key=lambda kv: -kv[1])
            step.posterior = dict(ranked[: params.top_k])
    return report.model_dump_json().encode()
