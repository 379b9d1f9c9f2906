"""Request and response models of the HTTP API (the transcript and report formats are the
library's own: ``leakage.transcript/1`` and ``leakage.report/1``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from leakage.curves import Leaderboard
from leakage.splits import GU_EASY_BELOW, GU_HARD_ABOVE, SplitSummary
from leakage_service.inputs import ScoreParams
from leakage_service.patterns import NOT_BLANK


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class _Out(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)


TRANSCRIPT_REF: dict[str, Any] = {"$ref": "#/components/schemas/Transcript"}
"""The request-body schema of one transcript (``app.py`` adds ``Transcript`` to the
components)."""

EXAMPLE_TRANSCRIPT: dict[str, Any] = {
    "format": "leakage.transcript/1",
    "game": "chameleon",
    "id": "example-sports",
    "category": "Sports",
    "candidates": [
        "Football", "Basketball", "Tennis", "Golf", "Swimming", "Boxing", "Cycling",
        "Ice Hockey", "Motor Racing", "Triathlon", "Table Tennis", "Rugby", "Cricket",
        "Skiing", "Volleyball", "Fencing",
    ],
    "secret": "Tennis",
    "players": [
        {"id": "p1", "role": "non-chameleon"},
        {"id": "p2", "role": "non-chameleon"},
        {"id": "p3", "role": "chameleon"},
        {"id": "p4", "role": "non-chameleon"},
    ],
    "turns": [
        {"player": "p1", "text": "racket"},
        {"player": "p2", "text": "court"},
        {"player": "p3", "text": "point"},
        {"player": "p4", "text": "serve"},
    ],
}  # fmt: skip
"""A 4-player Chameleon game: the example body in the OpenAPI description."""


# -- errors -----------------------------------------------------------------------------


class Problem(_Out):
    field: str | None
    message: str


class ErrorDetail(_Out):
    type: str
    """Machine-readable kind, e.g. ``invalid_transcript``, ``unknown_backend``, ``queue_full``."""
    message: str
    """What was wrong and how to fix it."""
    field: str | None = None
    """The request part at fault: a query parameter, ``body``, or a path in the transcript."""
    record: int | str | None = None
    """The record of a batch or job, from 0."""
    problems: list[Problem] | None = None
    """Every problem found, when there were several."""


class ErrorBody(_Out):
    error: ErrorDetail
    request_id: str | None = None


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for error statuses, all with the one error shape."""
    text = {
        401: "Missing or unknown API key.",
        403: "A server-side path outside LEAKAGE_ALLOWED_PATHS, or paths are disabled.",
        404: "No such job, game of a job, or example.",
        409: "The job has already finished.",
        413: "The body is larger than the server accepts.",
        422: "Bad input: the body, a query parameter or a path parameter.",
        429: "Rate limit reached (see Retry-After).",
        502: "A count source or LLM endpoint failed.",
        503: "Queue full or the backend's first load still under way (backend_loading; "
        "both with Retry-After), or the backend cannot run on this server.",
    }
    return {c: {"model": ErrorBody, "description": text[c]} for c in codes}


# -- backends ---------------------------------------------------------------------------


class BackendStatus(_Out):
    name: str
    enabled: bool
    """Whether requests may use it (``LEAKAGE_BACKENDS``)."""
    loaded: bool
    preload: bool
    """Loaded at start-up (else on first use)."""
    available: bool | None
    """False when it failed to load here; None when not tried yet."""
    reason: str | None = None
    load_seconds: float | None = None
    loading: bool = False
    """Its first load is under way (requests get 503 ``backend_loading`` until it ends)."""
    last_load_seconds: float | None = None
    """How long its last load took, on this server or an earlier one: about how long the
    next first use will wait."""
    info: dict[str, Any] | None = None
    """The backend's ``info()`` (model name and dimension, corpus, smoothing) once loaded."""


class CountSourceStatus(_Out):
    name: str
    kind: Literal["local", "web"]
    configured: bool
    """Local: the index exists. Web: its API keys are set (``needs``)."""
    needs: list[str]
    """Environment variables it reads its keys from."""


class BackendsResponse(_Out):
    backends: list[BackendStatus]
    count_sources: list[CountSourceStatus]


class Readiness(_Out):
    ready: bool
    problems: list[str]
    loaded: list[str]


# -- jobs -------------------------------------------------------------------------------


def _no_nul(path: str) -> str:
    if "\x00" in path:
        raise PydanticCustomError("nul_in_path", "a path cannot hold a NUL character")
    return path


def _no_default(schema: dict[str, Any]) -> None:
    schema.pop("default", None)


ServerPath = Annotated[
    str,
    Field(min_length=1, max_length=4096, json_schema_extra={"pattern": "^[^\\u0000]*$"}),
    AfterValidator(_no_nul),
]
"""A server-side path: 1 to 4,096 characters, no NUL (the pattern says so to clients; the
validator gives the clear message)."""


class JobPathRequest(_In):
    """A job over files already on the server, inside a folder the operator allowed: exactly
    one of ``path`` and ``paths``."""

    model_config = ConfigDict(
        json_schema_extra={"oneOf": [{"required": ["path"]}, {"required": ["paths"]}]}
    )

    # absent, never null: the schema says one of the two keys, each a string / a list
    path: ServerPath | SkipJsonSchema[None] = Field(None, json_schema_extra=_no_default)
    paths: (
        Annotated[list[ServerPath], Field(min_length=1, max_length=1000)] | SkipJsonSchema[None]
    ) = Field(None, json_schema_extra=_no_default)

    @field_validator("path", "paths", mode="before")
    @classmethod
    def _not_null(cls, value: Any) -> Any:
        if value is None:
            raise PydanticCustomError("null_path", "give a path, not null (or leave the key out)")
        return value

    @model_validator(mode="after")
    def _one(self) -> JobPathRequest:
        if (self.path is None) == (self.paths is None):
            raise ValueError("give either path or paths")
        return self

    def named(self) -> list[tuple[str, str]]:
        """(request field, path) of each path: ``path``, or ``paths[0]``, ``paths[1]``..."""
        if self.path is not None:
            return [("path", self.path)]
        return [(f"paths[{i}]", p) for i, p in enumerate(self.paths or [])]


class JobStatus(_Out):
    id: str
    state: Literal["queued", "running", "done", "failed", "cancelled"]
    created_at: str
    started_at: str | None
    finished_at: str | None
    params: ScoreParams
    source: Literal["upload", "path"]
    paths: list[str] | None
    """Server-side paths (path jobs only)."""
    files: list[str] | None = None
    """The uploaded files' names, in the order read (a multipart upload; None for a body
    upload, which has no name, and for path jobs)."""
    total: int | None
    """Records in the input, once the worker has counted them."""
    done: int
    """Records finished (scored or failed)."""
    ok: int
    failed: int
    progress: float | None
    runs: int
    """How many times a worker has started the job (more than 1: resumed after a restart)."""
    error: str | None
    """Why the whole job failed."""
    errors: list[dict[str, Any]]
    """The first records that failed, each ``{"record", "error"}``."""
    links: dict[str, str]


# -- splits -----------------------------------------------------------------------------


Word = Annotated[str, Field(min_length=1, max_length=200, pattern=NOT_BLANK)]
"""A word of a pair: not blank."""


def _json_integer(value: Any) -> Any:
    if isinstance(value, bool | str):  # pydantic's lax mode reads true as 1 and "3" as 3
        raise ValueError("Input should be a valid integer")
    return value


JsonInt = Annotated[int, BeforeValidator(_json_integer)]
"""An integer as JSON Schema has it: ``3`` and ``3.0``, not ``true`` or ``"3"``."""


class SplitsRequest(_In):
    """Word pairs to cut into hard / medium / easy (the options of ``leakage splits build``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"pairs": [["sun", "moon"], ["cat", "dog"], ["piano", "guitar"], ["car", "bus"]]}
            ]
        }
    )

    pairs: list[Annotated[tuple[Word, Word], Field(json_schema_extra={"uniqueItems": True})]] = (
        Field(min_length=1, max_length=50_000)
    )
    """Each pair as a two-element list of different words, e.g. ``["sun", "moon"]``. The
    server bounds the work of a request (``LEAKAGE_MAX_SPLITS_COST``: 64 units per word plus
    the bytes of its description) and its time (``LEAKAGE_SCORE_TIMEOUT``)."""
    method: Literal["terciles", "thresholds"] = "terciles"
    hard_above: float = Field(default=GU_HARD_ABOVE, ge=-1, le=1, strict=True, allow_inf_nan=False)
    easy_below: float = Field(default=GU_EASY_BELOW, ge=-1, le=1, strict=True, allow_inf_nan=False)
    sample: JsonInt | None = Field(default=None, ge=1)
    seed: JsonInt = Field(default=0, ge=0)
    descriptions: dict[str, Annotated[str, Field(max_length=5000)]] | None = None
    """Descriptions to use instead of WordNet's (word -> two or three sentences); a word not
    here is unknown. Their bytes count towards the request's cost."""

    @model_validator(mode="after")
    def _pairs(self) -> SplitsRequest:
        problems = []
        for i, pair in enumerate(self.pairs):
            words = [" ".join(w.split()) for w in pair]
            if words[0].casefold() == words[1].casefold():
                problems.append(f"pairs[{i}]: both words are {words[0]!r}")
        if problems:
            raise ValueError("; ".join(problems[:20]))
        if self.method == "thresholds" and self.easy_below > self.hard_above:
            raise ValueError(
                f"easy_below ({self.easy_below}) exceeds hard_above ({self.hard_above})"
            )
        return self


class ScoredPair(_Out):
    a: str
    b: str
    similarity: float


class UnknownPair(_Out):
    a: str
    b: str
    unknown_words: list[str]


class SplitsResponse(_Out):
    summary: SplitSummary
    splits: dict[str, list[ScoredPair]]
    """``hard``, ``medium``, ``easy`` (the sample, when one was asked for), most similar first."""
    unknown: list[UnknownPair]
    descriptions: dict[str, str]


# -- examples and the explorer --------------------------------------------------------------


class ExampleGame(_Out):
    id: str
    game: str
    """``chameleon`` or ``spygame``."""
    label: str
    """The card's category (Chameleon) or the word pair ``civilian / spy`` (SpyGame)."""
    players: int
    turns: int
    matchup: str | None = None
    difficulty: str | None = None


class ExampleInfo(_Out):
    name: str
    """What ``GET /v1/examples/{name}`` takes (the file name without its extension)."""
    file: str
    media_type: str
    """``application/json`` (one transcript) or ``application/x-ndjson`` (one per line)."""
    games: list[ExampleGame]
    links: dict[str, str]


class ExamplesResponse(_Out):
    examples: list[ExampleInfo]


# -- clue preview -------------------------------------------------------------------------


class PreviewRequest(_In):
    """A game and a clue not said yet: what would the posterior be if ``player`` said
    ``clue`` after the first ``turns`` turns of ``transcript``?"""

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"transcript": EXAMPLE_TRANSCRIPT, "clue": "net"}]}
    )

    transcript: dict[str, Any]
    """One transcript: ``leakage.transcript/1`` or a third-party log (``input_format``)."""
    clue: str = Field(min_length=1, max_length=10_000, pattern=NOT_BLANK)
    """The clue (Chameleon) or statement (SpyGame) to try; the server's limit on a turn's text
    (``LEAKAGE_MAX_TEXT_CHARS``) applies."""
    player: str | None = Field(default=None, min_length=1, max_length=200)
    """Who says it; by default the next player after the last turn kept who is not the
    chameleon (with ``include_chameleon``, or in SpyGame, simply the next player)."""
    turns: JsonInt | None = Field(default=None, ge=0)
    """How many of the game's turns come before the clue (default: all of them)."""

    @field_validator("clue")
    @classmethod
    def _no_nul(cls, clue: str) -> str:
        """The transcript format's rule for a turn's text: no NUL (C libraries and indexes
        end a string there); the clue becomes a turn of the game."""
        at = clue.find("\x00")
        if at >= 0:
            raise PydanticCustomError(
                "value_error",
                "NUL character (U+0000) at character {at}: not allowed in a clue, as in a "
                "game's text; remove it",
                {"at": at},
            )
        return clue


class PreviewFigures(_Out):
    entropy_bits: float
    secret_probability: float | None
    """Chameleon: P(secret); SpyGame: P(the speaker's word). None without a secret."""
    secret_rank: int | None


class PreviewAfter(PreviewFigures):
    information_gain_bits: float
    """How much the clue lowers the entropy (bits): ``before.entropy_bits - entropy_bits``."""
    kl_bits: float
    counted: bool
    """Whether the clue updates the posterior (a chameleon's does not, unless
    ``include_chameleon``)."""
    top_candidate: str
    top_probability: float
    posterior: dict[str, float]
    """After the clue (the ``top_k`` most probable when asked)."""


class PreviewResponse(_Out):
    game_id: str
    game: Literal["chameleon", "spygame"]
    backend: str
    clue: str
    player: str
    role: str
    turn: int
    """The clue's place in the game, from 1."""
    secret: str | None
    speaker_word: str | None
    """SpyGame: the word the speaker holds, whose probability ``secret_probability`` is."""
    candidates: list[str]
    before: PreviewFigures
    """After the turns kept, before the clue (with no turn kept, the uniform prior)."""
    after: PreviewAfter


# -- a job's curves and games (the explorer) ------------------------------------------------


class CurvePoint(_Out):
    group: str
    metric: Literal["entropy_bits", "top1", "top3", "top5"]
    """Mean entropy (bits) after m clues, or the share of games whose secret is among the
    k most probable candidates after m clues."""
    m: int
    """Counted clues (0: the prior, for the entropy)."""
    value: float
    low: float
    """95% bootstrap interval over games."""
    high: float
    games: int
    """Games with at least m counted clues (those the point averages)."""


class CurveGame(_Out):
    record: int
    game_id: str | None
    game: str | None
    group: str
    clues: int
    """Counted clues in the game: it is in every point of its group with m up to this."""
    speakers: list[str] | None = None
    """``by=speaker``: the groups (``model · role``) of the game's counted clues; the game is
    in a point (group, m) of one of them when its m-th counted clue is that group's."""


class JobCurves(_Out):
    job: str
    state: str
    """The job's state: the curves use the results stored so far."""
    by: Literal["model", "matchup", "difficulty", "speaker"]
    games: int
    """Games scored (the failed ones are not in the curves)."""
    failed: int
    groups: list[str]
    """Largest first, as ``leakage report`` orders them."""
    colours: dict[str, str] = {}
    """Group -> ``#rrggbb``, from the name alone (``by=speaker``: the model's), so a model
    keeps its colour across jobs and while a job runs (``leakage.curves._colours``)."""
    per_statement: bool = False
    """True when every game is SpyGame (CK-Arena, SpyGame logs): each statement is scored on
    its own, so ``m`` numbers the statements and a point is the m-th statement read alone
    (nothing accumulates); False when clues accumulate (The Chameleon: the posterior after m
    clues). ``leakage.curves.per_statement``, the decision ``leakage report`` words its
    figures by."""
    default_by: Literal["model", "matchup", "difficulty", "speaker"] = "model"
    """The grouping a viewer shows first (``leakage.curves.default_grouping``): ``speaker``
    (each statement by its speaker's model and role) for SpyGame, ``model`` otherwise."""
    curves: list[CurvePoint]
    game_list: list[CurveGame]
    notes: list[str]


class JobGame(_Out):
    job: str
    record: int
    """The record's position in the job's input, from 0."""
    game_id: str | None
    ok: bool
    report: dict[str, Any] | None
    """The stored report (``leakage.report/1``) when the game was scored."""
    error: dict[str, Any] | None
    """Why the game failed, when it did."""
    transcript: dict[str, Any] | None
    """The game as ``leakage.transcript/1``, read again from the job's input (None when the
    input is gone; see ``transcript_note``)."""
    transcript_note: str | None = None
    params: ScoreParams
    """How the job scored it: send these with the transcript to ``/v1/score`` to score it
    again."""


# -- games of an uploaded log -------------------------------------------------------------


class RecordError(_Out):
    record: int | str
    """The record: its position, ``line 3``, or an Inspect sample (``sample 2 (epoch 1)``)."""
    message: str


class LogGamesResponse(_Out):
    """The games of an uploaded log file, as ``leakage.transcript/1`` records."""

    games: list[dict[str, Any]]
    """The transcripts, in file order."""
    errors: list[RecordError]
    """Records that are not a game (each names the record and what is wrong)."""
    left_out: int
    """Games past the server's limit (``LEAKAGE_MAX_BATCH_GAMES``), not returned: submit the
    file as a job to score them all."""


class PlaneGroup(_Out):
    kind: Literal["data", "reference"]
    """``data``: a model and role of the job; ``reference``: one of Karabag & Topcu's
    strategies simulated with its own likelihood (``model`` is the strategy)."""
    group: str
    """``model · role``."""
    model: str
    role: str
    clues: int
    games: int
    leakage_bits: float
    """Mean information gain per clue (bits): what the player without the secret learns."""
    leakage_low: float
    leakage_high: float
    reveal_bits: float
    """Mean log2 likelihood ratio that the speaker knows the secret (bits): what the players
    with the secret learn about the speaker (``leakage.curves._plane``)."""
    reveal_low: float
    reveal_high: float
    """95% intervals: bootstrap over games (data), normal over simulated clues (reference)."""
    note: str


class PlanePoint(_Out):
    record: int
    game_id: str | None
    step: int
    group: str
    leakage_bits: float
    reveal_bits: float


class JobPlane(_Out):
    job: str
    state: str
    games: int
    failed: int
    groups: list[PlaneGroup]
    """Per model and role, most clues first."""
    references: list[PlaneGroup]
    """The reference strategies that belong to the job's games
    (``leakage.curves.plane_references``): Karabag & Topcu's for the Chameleon games, none
    for SpyGame."""
    references_note: str = ""
    """What the references are, or why there are none (a SpyGame job)."""
    points: list[PlanePoint]
    """The first ``max_points`` clues (in the order of the stored results)."""
    points_total: int
    colours: dict[str, str]
    notes: list[str]
    x_label: str = ""
    """What the x axis is (``leakage.curves.plane_axes``): leakage to the player without
    the secret, or from the spy's seat the spy's gain about the civilians' word."""
    y_label: str = ""
    """What the y axis is: the reveal value to those with the secret, or from the spy's seat
    the statement's value to the civilians."""


class CompareRow(_Out):
    """One role (or ``(all roles)``) of two models compared where they met: over the
    *shared games* (both gave a counted clue in that role), per game each model's mean
    information gain per clue, then the mean over those games (``leakage report --compare``;
    ``leakage.curves._compare``). Figures are null where no game is shared."""

    model_a: str
    model_b: str
    role: str
    shared_games: int
    clues_a: int
    clues_b: int
    mean_gain_a: float | None
    """A's mean gain per clue (bits) over the shared games."""
    mean_gain_a_low: float | None
    mean_gain_a_high: float | None
    mean_gain_b: float | None
    mean_gain_b_low: float | None
    mean_gain_b_high: float | None
    difference_bits: float | None
    """The paired difference, A minus B (bits per clue): positive when A's clues leaked
    more."""
    difference_low: float | None
    difference_high: float | None
    """95% bootstrap intervals over the shared games (each game's pair resampled together)."""


class JobCompare(_Out):
    job: str
    state: str
    games: int
    failed: int
    models: list[str]
    """The models that gave a counted clue, most clues first (what ``a`` and ``b`` may be)."""
    colours: dict[str, str]
    """Model -> ``#rrggbb``, as in the curves by speaker and the plane."""
    rows: list[CompareRow]
    """One per role both models spoke in, then ``(all roles)``; empty without ``a`` and
    ``b``."""
    notes: list[str]


class JobLeaderboard(Leaderboard):
    """``leakage.leaderboard/1`` of a job's results stored so far (the library's
    :class:`leakage.curves.Leaderboard`, field for field), with the job and its state."""

    job: str
    state: str


class JobList(_Out):
    jobs: list[JobStatus]
    """Newest first."""
    total: int
    """Jobs on the server (the list holds at most ``limit``)."""


class JobRecord(_Out):
    """One record of a job, scored or failed: a row of the explorer's table of its games."""

    record: int
    ok: bool
    game_id: str | None
    game: str | None
    turns: int | None
    counted: int | None
    final_entropy_bits: float | None
    final_secret_probability: float | None
    final_secret_rank: int | None
    matchup: str | None
    difficulty: str | None
    error_type: str | None
    error_message: str | None
    error_field: str | None


class JobRecords(_Out):
    job: str
    state: str
    records: list[JobRecord]
    """Every record stored so far, in record order."""
