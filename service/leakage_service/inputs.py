"""Request inputs: the scoring options (query parameters) and the records in a body.

Everything here runs on a worker thread: decoding and validating a large body would
otherwise hold the event loop.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import Request, Response
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field

from leakage.backends import SupportsTokenCount, cost_factor
from leakage.errors import InvalidInput, InvalidTranscript, LeakageError
from leakage.scoring import ReportShape, ScoreOptions
from leakage.seats import canonical_seat, check_seat
from leakage.transcripts import (
    TOO_DEEP,
    AnyTranscript,
    ChameleonTranscript,
    array_elements,
    convert_record,
    deeper_than,
    input_formats,
    json_problems,
    jsonl_lines,
    loads,
    parse_transcript,
)
from leakage_service.errors import GameTooLarge, ServiceError
from leakage_service.patterns import NOT_BLANK
from leakage_service.redact import redact_paths

if TYPE_CHECKING:
    from leakage_service.settings import Settings

JSONL_TYPES = ("application/x-ndjson", "application/jsonl", "application/json-lines")
"""Content types of a body read as JSONL (one record per line)."""

if TYPE_CHECKING:
    InputFormat = str
else:
    InputFormat = Literal[input_formats()]
    """``leakage.transcripts.input_formats()``, read when the service is imported, as the
    OpenAPI schema's choices: the shipped formats and those of adapters installed
    distributions add (``leakage.adapters``)."""


class ScoreParams(BaseModel):
    """How to score: the same query parameters for ``/v1/score``, ``/v1/score/batch`` and
    ``/v1/jobs``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    backend: str = Field(default="cooccurrence", min_length=1, max_length=64)
    """Likelihood backend (``GET /v1/backends`` lists what this server has)."""
    input_format: InputFormat = "auto"
    """``auto`` (native records carry ``"format": "leakage.transcript/1"``; third-party logs
    are recognised by shape), ``leakage``, ``ck-arena``, ``inspect``, ``spygame-liang``,
    ``textarena-taboo``, ``clembench-guesswhat``, ``clembench-taboo`` or the name of an
    adapter an installed distribution adds."""
    include_chameleon: bool = False
    """Chameleon: let the chameleon's own turns update the posterior too."""
    spy_assignment: Literal["known", "marginalise"] = "known"
    """SpyGame spy posterior: the civilians' word is ``known``, or ``marginalise`` over both
    (the seats ``outside-known`` and ``outside-pair``)."""
    seat: (
        Literal[
            "outside-known",
            "outside-pair",
            "civilian",
            "spy",
            "chameleon",
            "non-chameleon",
            "known",
            "marginalise",
        ]
        | None
    ) = None
    """Whose posterior the figures are (docs/games.md, "Seats"): SpyGame ``outside-known``,
    ``outside-pair``, ``civilian``, ``spy``; The Chameleon ``chameleon``, ``non-chameleon``
    (``known`` / ``marginalise``: the outside seats' old names). Unset: the game's default
    seat, and the report as before. A seat that is not the game's is a 422 naming the field
    ``seat``; a seat decides over a ``spy_assignment`` or ``include_chameleon`` that
    contradicts it. ``spy`` and ``civilian`` rank words of the server's open vocabulary
    (wordfreq:50000)."""
    top_k: Annotated[int | None, Field(ge=1, le=1000)] = None
    """Keep only the k most probable candidates in each step's ``posterior`` (smaller
    reports; ``secret_rank`` and the summary still use every candidate)."""
    distractors: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=200, pattern=NOT_BLANK)]],
        Field(max_length=200),
    ] = Field(default_factory=list)
    """Extra candidate words: SpyGame distractors, added to a Chameleon card."""

    def options(self) -> ScoreOptions:
        """The library's options. A seat, when given, decides: a ``spy_assignment`` or an
        ``include_chameleon`` that contradicts it (``outside-known`` with ``marginalise``,
        ``chameleon`` with ``include_chameleon``) is not used, so that every request the
        schema allows is scored (the report's ``settings`` say what was used)."""
        spy, include = self.spy_assignment, self.include_chameleon
        if self.seat in ("outside-known", "known"):
            spy = "known"
        elif self.seat == "chameleon":
            include = False
        return ScoreOptions(include_chameleon=include, spy_assignment=spy, seat=self.seat)

    def shape(self) -> ReportShape:
        """How this request's reports are written: trimmed to ``top_k``, the distractors
        recorded in ``settings``, no server file path in ``backend_info`` (``redact_paths``)."""
        extra = {"distractors": list(self.distractors)} if self.distractors else {}
        return ReportShape(top_k=self.top_k, extra_settings=extra, redact=redact_paths)

    def key(self) -> bytes:
        return self.model_dump_json().encode()


def request_key(params: ScoreParams, body: bytes) -> bytes:
    """A report cache key: the options and the exact body."""
    return hashlib.sha256(params.key() + b"\0" + body).digest()


MAX_JSON_DEPTH = 64
"""How deeply a record of a body may nest (objects and arrays). A transcript needs four
levels and its ``meta`` at most ``MAX_META_DEPTH`` (32) more; anything deeper is refused
before the adapters and serialisers, which recurse, see it."""


def decode_text(body: bytes) -> str:
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InvalidTranscript(
            [("body", f"not UTF-8 text (byte {err.start}); send UTF-8 JSON")]
        ) from None


def checked_json(doc: Any, *, record: int | None = None, flagged: bool = True) -> Any:
    """``doc`` when it is plain JSON: not nested deeper than ``MAX_JSON_DEPTH``, no NaN or
    Infinity, no integer too long to write, no lone surrogate, no repeated key; else the
    ``InvalidTranscript`` naming the field. ``flagged``: what ``loads`` said of the text
    ``doc`` came from (False: only the depth is left to check)."""
    if flagged or deeper_than(doc, MAX_JSON_DEPTH):
        problems = json_problems(doc, max_depth=MAX_JSON_DEPTH)
        if problems:
            raise InvalidTranscript(problems, record=record)
    return doc


def _in_body(path: str) -> str:
    """A ``json_problems`` path put under ``body`` (``body.meta``, ``body["x y"]``)."""
    if not path:
        return "body"
    return f"body{path}" if path.startswith("[") else f"body.{path}"


class StrictJsonRequest(Request):
    """A request whose JSON body (read by FastAPI for a route's body model) is read by the
    library's reader (``loads``): an over-long integer, a lone surrogate, NaN or a repeated
    key is a 422 naming its field under ``body``, as a transcript's are, never a value
    silently dropped or a failure FastAPI can only call unreadable."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            doc, flagged = loads((await self.body()).decode("utf-8"))
            problems = json_problems(doc) if flagged else []
            if problems:
                located = [(_in_body(f), m) for f, m in problems]
                message = "; ".join(f"{f}: {m}" for f, m in located)
                raise ServiceError(422, "invalid_request", message, field=located[0][0])
            self._json = doc
        return self._json


class StrictJsonRoute(APIRoute):
    """A route whose JSON body is read as ``StrictJsonRequest`` reads it (what cannot be
    read at all, FastAPI's handlers and ``leakage_service.errors`` answer as before)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def strict(request: Request) -> Response:
            return await handler(StrictJsonRequest(request.scope, request.receive))

        return strict


def parse_json(text: str, *, record: int | None = None) -> Any:
    """The JSON of a body (or, with ``record``, of one JSONL line or array element of it),
    checked by ``checked_json``."""
    field = "" if record is not None else "body"
    try:
        doc, flagged = loads(text)
    except json.JSONDecodeError as err:
        where = (
            f"column {err.colno}" if record is not None else f"line {err.lineno} column {err.colno}"
        )
        raise InvalidTranscript(
            [(field, f"malformed JSON: {err.msg.removesuffix(' at')} at {where}")], record=record
        ) from None
    except RecursionError:
        raise InvalidTranscript([(field, TOO_DEEP)], record=record) from None
    return checked_json(doc, record=record, flagged=flagged)


def _each(texts: list[str]) -> list[Any]:
    """Each text parsed as a record of its own; one that fails stays as its error."""
    out: list[Any] = []
    for i, text in enumerate(texts):
        try:
            out.append(parse_json(text, record=i))
        except InvalidTranscript as err:
            out.append(err)
    return out


def split_records(body: bytes, *, jsonl: bool) -> list[Any]:
    """The records of a batch body: a JSON array (or one object) or JSONL lines. A record
    that is not JSON, nests too deeply or holds NaN stays in the list as its
    ``InvalidTranscript``: it fails alone."""
    text = decode_text(body)
    if not text.strip():
        raise InvalidTranscript([("body", "empty body: send a JSON array or JSONL lines")])
    if not jsonl:
        try:
            doc, flagged = loads(text)
        except json.JSONDecodeError:
            lines = [line for line in jsonl_lines(text) if line.strip()]
            if len(lines) < 2:
                return [parse_json(text)]
        except RecursionError:
            elements = array_elements(text)
            if elements is not None:
                return _each(elements)
            lines = [line for line in jsonl_lines(text) if line.strip()]
            if len(lines) < 2:
                raise InvalidTranscript([("body", TOO_DEEP)]) from None
        else:
            if not isinstance(doc, list | dict):
                raise InvalidTranscript(
                    [("body", f"a JSON {type(doc).__name__}: send a JSON array of transcripts, "
                      "one transcript object, or JSONL lines")]
                )  # fmt: skip
            records = doc if isinstance(doc, list) else [doc]
            out: list[Any] = []
            for i, record in enumerate(records):
                try:
                    out.append(checked_json(record, record=i, flagged=flagged))
                except InvalidTranscript as err:
                    out.append(err)
            return out
    return _each([line for line in jsonl_lines(text) if line.strip()])


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
    game = with_distractors(
        convert_record(record, input_format=params.input_format, index=index), params.distractors
    )
    if params.seat is not None:  # a 422 naming ``seat`` before any model loads
        check_seat(canonical_seat(params.seat), game.game, game.id)
    return game


PROMPT_COST = 32
"""Units of ``max_game_cost`` each candidate costs besides the turn text scored against it:
the LLM judge runs a prompt of about ten tokens through its model for every candidate, as
much work as 32 bytes of clue text against one candidate. Each candidate's own bytes count
once more (its word is in its prompt)."""

TOKEN_BYTES = 5
"""How many bytes of turn text one token counts as once a local language model (the LLM
judge, alone or in the ensemble) has counted the text with its tokenizer: real statements
hold about 5 bytes a Gemma-3 token (CK-Arena: 5.4), text made to cost most as little as one
(a digit and a letter alternating; emoji and rare scripts fall back to byte tokens), which
would take the judge five times as long as its bytes say."""

# How many units of ``max_game_cost`` one unit of work counts as on a backend is the cost
# factor its factory declares (``leakage.backends.costs``, read by ``cost_factor``; 1 when it
# declares none): 250 on the LLM judge, the listener and the ensemble (which runs them), so
# that the default limit admits 4,000 units there: every CK-Arena dev game (at most 3,971), a
# SpyGame of 15 statements of 60 characters on 4 candidates. A unit takes the judge 4 to 5 ms
# of CPU (Gemma-3-270M, fp32) and the co-occurrence backend about 4 us
# (``Settings.max_game_cost``; measured by ``python -m benchmarks.service_game_cost``). The
# listener (the judge read the other way) gets the judge's factor: it reads each clue once
# rather than once per candidate, so this overstates its cost, never understates it.


@dataclass(frozen=True)
class GameCost:
    """The work one game asks of a backend: ``candidates x (text units + PROMPT_COST) +
    candidate_bytes`` units, times the backend's cost factor (``cost_factor``). The text
    units are its UTF-8 bytes (no model reads more tokens than bytes; for English text, bytes
    are characters), or ``TOKEN_BYTES`` a token when a model's tokenizer has counted more."""

    candidates: int
    text_bytes: int
    """UTF-8 bytes of turn text, all turns together."""
    candidate_bytes: int
    """UTF-8 bytes of the candidate words, all together."""
    factor: int
    tokens: int | None = None
    """Tokens of turn text by the backend's language model, when it has one and is loaded."""

    @property
    def text_units(self) -> int:
        if self.tokens is None:
            return self.text_bytes
        return max(self.text_bytes, TOKEN_BYTES * self.tokens)

    @property
    def units(self) -> int:
        return self.candidates * (self.text_units + PROMPT_COST) + self.candidate_bytes

    @property
    def total(self) -> int:
        return self.units * self.factor

    def explain(self, backend: str) -> str:
        """How ``total`` came about, for an error message."""
        text = f"{self.text_bytes:,} bytes of turn text"
        if self.text_units > self.text_bytes:
            text = f"{self.tokens:,} tokens of turn text x {TOKEN_BYTES}"
        times = f" x {self.factor:,} on the {backend} backend" if self.factor > 1 else ""
        return (
            f"{self.candidates:,} candidates x ({text} + {PROMPT_COST}) + "
            f"{self.candidate_bytes:,} bytes of candidates = {self.units:,} units{times} = "
            f"{self.total:,}"
        )


def _cost_factor(backend: str) -> int:
    """The backend's cost factor; 1 for a name the registry cannot build (which the backend
    check refuses after the size check, as it always has)."""
    try:
        return cost_factor(backend)
    except LeakageError:
        return 1


def model_tokens(backend: object, texts: Sequence[str]) -> int | None:
    """How many tokens the local language model of a loaded backend (the LLM judge or the
    listener, alone or in the ensemble: ``SupportsTokenCount``) makes of ``texts``; None
    when it has none (other backends, a judge behind an HTTP endpoint)."""
    return backend.count_tokens(texts) if isinstance(backend, SupportsTokenCount) else None


def game_cost(game: AnyTranscript, backend: str, model: object | None = None) -> GameCost:
    """What scoring ``game`` on ``backend`` costs, in units of ``max_game_cost``; with the
    loaded backend as ``model``, its language model's tokens count too (``TOKEN_BYTES``)."""
    texts = [t.text for t in game.turns]
    return GameCost(
        candidates=len(game.candidates),
        text_bytes=sum(len(t.text.encode("utf-8", "surrogatepass")) for t in game.turns),
        candidate_bytes=sum(len(w.encode("utf-8", "surrogatepass")) for w in game.candidates),
        factor=_cost_factor(backend),
        tokens=None if model is None else model_tokens(model, texts),
    )


def check_size(
    game: AnyTranscript, settings: Settings, backend: str, model: object | None = None
) -> None:
    """``GameTooLarge`` naming the field when ``game`` is over this server's limits
    (``max_candidates``, ``max_turns``, ``max_text_chars``, ``max_game_chars``,
    ``max_game_cost``). Every path checks each game here before any backend sees it:
    ``/v1/score``, each record of ``/v1/score/batch`` and of a job (``score_records``).
    ``model``: the loaded backend, whose language model then counts the tokens
    (``game_cost``); ``/v1/score`` checks once before loading it and once after."""
    problems: list[tuple[str, str]] = []
    cands = game.candidates
    where = "candidates" if isinstance(game, ChameleonTranscript) else "distractors"
    if len(cands) > settings.max_candidates:
        problems.append(
            (where, f"{len(cands):,} candidates; at most {settings.max_candidates:,} per game")
        )
    if len(game.turns) > settings.max_turns:
        problems.append(
            ("turns", f"{len(game.turns):,} turns; at most {settings.max_turns:,} per game")
        )
    limit = settings.max_text_chars
    texts = [(f"turns[{i}].text", t.text) for i, t in enumerate(game.turns)]
    if isinstance(game, ChameleonTranscript):
        texts += [("category", game.category)]
        texts += [(f"candidates[{i}]", w) for i, w in enumerate(cands)]
    else:
        texts += [("words.civilian", game.words.civilian), ("words.spy", game.words.spy)]
        texts += [(f"distractors[{i}]", w) for i, w in enumerate(game.distractors)]
    long = [(f, len(t)) for f, t in texts if len(t) > limit]
    problems += [(f, f"{n:,} characters; at most {limit:,}") for f, n in long[:5]]
    chars = sum(len(t.text) for t in game.turns)
    if chars > settings.max_game_chars:
        problems.append(
            ("turns", f"{chars:,} characters of turn text; at most {settings.max_game_chars:,}"
             " per game")
        )  # fmt: skip
    cost = None if problems else game_cost(game, backend, model)
    if cost is not None and cost.total > settings.max_game_cost:
        problems.append(
            ("turns", f"{cost.explain(backend)}; at most {settings.max_game_cost:,} per game "
             "(max_game_cost)")
        )  # fmt: skip
    if problems:
        raise GameTooLarge(problems)
