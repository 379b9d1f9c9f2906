"""The schemathesis check the fuzz run adds (``benchmarks/service_fuzz.py`` loads this module
through ``hooks`` in its config; importing it registers the check).

``positive_data_acceptance`` expects every request the schema allows to be accepted. JSON
Schema cannot say everything a transcript must be: a turn's player is one of the players,
the secret is one of the candidates, words are not repeated in another case, the roles fit
the game, the body matches the ``input_format`` asked for, the request's distractors are
not already candidates, and the per-game totals (``LEAKAGE_MAX_GAME_CHARS``,
``LEAKAGE_MAX_GAME_COST``). The fuzz config lets a schema-valid transcript body be refused
with a 422 on the three operations that read transcripts, and this check keeps that narrow:
the refusal must be for one of those rules, inside the transcript, never for a query
parameter or for the body as a whole (not UTF-8, not JSON, not an object). The one part
that is not a transcript field is a job's multipart ``file``: the schema declares it
binary with a UTF-8 ``encoding``, which schemathesis does not generate from, so its
refusal as not UTF-8 or empty names the field ``file`` and passes.

The schema never draws what it cannot describe, so the hooks here also mix bad records into
the bodies of the operations that read transcripts (``_fuzz_poison``: lone surrogates, huge
integers, deep nesting, repeated keys, NUL, look-alike candidates, ``true`` for a round; a
record of thousands of players, Inspect logs that are bombs or have a damaged sample):
``map_case`` poisons every second eligible case of the examples and coverage phases, the kinds
in turn, and ``flatmap_case`` lets hypothesis poison a third of the fuzzing and stateful
cases. ``bad_records_fail_alone`` checks their answers; ``transcript_rules_only`` leaves
them to it, and ``filter_failure`` drops the one built-in verdict that cannot apply to them:
a poisoned body is not what the schema describes, so schemathesis counts it negative and
``negative_data_rejection`` expects a 4xx, where a batch or an upload rightly answers 200 or
202 with the bad record as one error line.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from itertools import count
from typing import Any
from urllib.parse import urljoin

import requests
import schemathesis
from hypothesis import strategies as st

from benchmarks._fuzz_poison import (
    BODY_TYPES,
    GOOD_BY_ID,
    HEADER,
    KINDS,
    TRANSCRIPT_OPS,
    Draw,
    Poison,
    lookup,
    points_at,
    poison_body,
    remember,
)
from leakage.errors import InvalidInput, InvalidTranscript
from leakage.scoring import ScoreOptions, game_input
from leakage.transcripts import parse_transcript

TRANSCRIPT_OPERATIONS = frozenset({"POST /v1/score", "POST /v1/score/batch", "POST /v1/jobs"})
RULE_TYPES = frozenset({"invalid_transcript", "game_too_large", "unknown_input_format"})
"""Error types of a transcript refused for a rule JSON Schema cannot express."""


@schemathesis.check
def transcript_rules_only(ctx: Any, response: Any, case: Any) -> bool | None:
    """A positive case on an operation that reads transcripts is refused (422) only for a
    rule inside the transcript (see the module docstring)."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive or lookup(case.body) is not None:
        return None
    if case.operation.label not in TRANSCRIPT_OPERATIONS or response.status_code != 422:
        return None
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        error = {}
    kind, field = error.get("type"), error.get("field")
    if kind in RULE_TYPES and field not in (None, "body"):
        return None
    raise AssertionError(
        f"a schema-valid request was refused outside the transcript rules: 422 {kind} "
        f"(field {field!r}): {error.get('message', response.text[:300])}"
    )


# -- bad records the schema cannot describe (``_fuzz_poison``) -----------------------------

JOB_WAIT = 60.0
"""Seconds a poisoned job may take to end (a few small games; jobs run one at a time)."""
_eligible = count()


def _poisonable(case: Any) -> bool:
    meta = case.meta
    return (
        case.operation.label in TRANSCRIPT_OPS
        and case.media_type in BODY_TYPES
        and meta is not None
        and meta.generation.mode.is_positive
        and lookup(case.body) is None
    )


def _poison(case: Any, draw: Draw) -> Any:
    made = poison_body(case.operation.label, case.media_type, case.body, draw)
    if made is None:
        return case
    raw, poison = made
    remember(raw, poison)
    case.body = raw
    case.headers = {**(case.headers or {}), HEADER: poison.kind}
    return case


@schemathesis.hook
def map_case(ctx: Any, case: Any) -> Any:
    """Examples and coverage: every second eligible case poisoned, the kinds in turn (so a
    short run sends each kind: twelve kinds since issue 37, one every third case left the
    last kinds unsent in the test's short run)."""
    meta = case.meta
    if meta is None or meta.phase.name not in ("examples", "coverage") or not _poisonable(case):
        return case
    n = next(_eligible)
    if n % 2:
        return case
    draw = Draw(seed=n)
    draw.choice = _first_kind(draw, KINDS[(n // 2) % len(KINDS)])  # type: ignore[method-assign]
    return _poison(case, draw)


def _first_kind(draw: Draw, kind: str) -> Any:
    """``draw.choice`` answering ``kind`` to the first choice (the kind) only."""
    plain = Draw.choice.__get__(draw)
    asked = False

    def choice(items: Any) -> Any:
        nonlocal asked
        if not asked and tuple(items) == KINDS:
            asked = True
            return kind
        return plain(items)

    return choice


@schemathesis.hook
def flatmap_case(ctx: Any, case: Any) -> Any:
    """Fuzzing and stateful: hypothesis poisons a third of the eligible cases."""
    meta = case.meta
    if meta is None or meta.phase.name not in ("fuzzing", "stateful") or not _poisonable(case):
        return st.just(case)

    @st.composite
    def maybe(draw: Any) -> Any:
        if draw(st.integers(0, 2)):
            return case
        return _poison(case, Draw(draw))

    return maybe()


@schemathesis.hook
def filter_failure(ctx: Any, failure: Any, case: Any, response: Any) -> bool:
    """A poisoned batch or upload is answered 200 / 202 with the bad record as an error
    line, which ``negative_data_rejection`` would count against it; so is a refusal with a
    4xx that check does not list (413, input too large); so is a "negative"
    multipart upload whose violation the serialisation lost (the service takes only 'file'
    parts, so what it accepted was valid as sent); every other check stands."""
    from schemathesis.core.failures import AcceptedNegativeData

    if (
        isinstance(failure, AcceptedNegativeData)
        and response is not None
        and 400 <= response.status_code < 500
    ):
        # refused, with a status schemathesis does not list as a refusal: 413 for an upload
        # past the size or read limits (an Inspect log that is a bomb, issue 37)
        return False
    if (
        isinstance(failure, AcceptedNegativeData)
        and case.operation.label == "POST /v1/jobs"
        and (case.media_type or "").startswith("multipart/")
    ):
        # the service refuses a multipart upload unless it is 'file' parts, each with a file
        # name of its own (422 naming the field), so one it accepted was sent valid: the generated
        # violation (a missing or extra part) was lost when the case was serialised
        return False
    poison = lookup(case.body)
    if poison is None or poison.records is None:
        return True
    return not isinstance(failure, AcceptedNegativeData)


@schemathesis.check
def bad_records_fail_alone(ctx: Any, response: Any, case: Any) -> bool | None:
    """A poisoned body: one transcript is a 4xx; a batch or an upload scores every other
    record, the known-good ones included, and the poisoned record is one error line whose
    field, if any, points at the poison."""
    poison = lookup(case.body)
    if poison is None:
        return None
    if not _examples_stay_good(case.query):
        poison = replace(poison, path=None, good={})
    elif (case.query or {}).get("seat"):
        poison = _under_seat(poison, str(case.query["seat"]))
    status = response.status_code
    if status >= 500:
        raise AssertionError(f"{poison.kind}: {status} (a server error) for a bad record")
    if poison.records is None:  # one transcript, or a job's paths
        if not 400 <= status < 500:
            raise AssertionError(f"{poison.kind}: {status}, not a 4xx, for a bad transcript")
        field = _error(response.content, poison.kind).get("field")
        elsewhere = poison.prefix and field and not field.startswith(poison.prefix.rstrip("."))
        if not elsewhere and not points_at(field, poison):  # (a drawn clue or player refused)
            raise AssertionError(
                f"{poison.kind}: the error names {field!r}, not where the poison is "
                f"({poison.prefix}{_spell(poison)})"
            )
        return None
    if case.operation.label == "POST /v1/score/batch":
        if status != 200:
            raise AssertionError(f"{poison.kind}: {status} for a batch with one bad record")
        _check_lines(response.content, poison, "the batch")
        return None
    if status != 202:  # POST /v1/jobs, an upload
        raise AssertionError(f"{poison.kind}: {status} for an upload with one bad record")
    _check_job(response, poison)
    return None


def _examples_stay_good(query: dict[str, Any] | None) -> bool:
    """Whether the shipped examples score under these options: read as leakage transcripts,
    no distractors added (one may already be a candidate)."""
    query = query or {}
    return query.get("input_format") in (None, "auto", "leakage") and not query.get("distractors")


def _under_seat(poison: Poison, seat: str) -> Poison:
    """What ``poison`` promises when the query asks for ``seat``: a known-good example that
    cannot be read from that seat (a game without it, or a Chameleon game with no secret for
    the non-chameleon's seat) is one error line naming ``seat``, so it is no longer promised
    a report; and the bad record, if such an example, may be refused for its seat before its
    poison is read, so any field it names is accepted."""
    try:
        options = ScoreOptions(seat=seat)
    except InvalidInput:  # an unknown seat is refused before a record is read
        return replace(poison, path=None, good={})
    good = {i: g for i, g in poison.good.items() if _seat_fits(g, options)}
    return replace(poison, path=None, good=good)


def _seat_fits(game_id: str, options: ScoreOptions) -> bool:
    try:
        game_input(parse_transcript(GOOD_BY_ID[game_id]), options)
    except InvalidTranscript:
        return False
    return True


def _error(content: bytes, kind: str) -> dict[str, Any]:
    try:
        error = json.loads(content)["error"]
    except (ValueError, KeyError, TypeError):
        error = None
    if not isinstance(error, dict) or not error.get("message"):
        raise AssertionError(f"{kind}: the refusal is not an error body: {content[:300]!r}")
    return error


def _spell(poison: Poison) -> str:
    path = poison.path or ()
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p!r}" for p in path).lstrip(".")


def _check_lines(content: bytes, poison: Poison, where: str) -> None:
    try:
        lines = [json.loads(x) for x in content.decode("utf-8").split("\n") if x.strip()]
    except ValueError as err:
        raise AssertionError(f"{poison.kind}: {where} is not UTF-8 NDJSON: {err}") from None
    if len(lines) != poison.records:
        raise AssertionError(
            f"{poison.kind}: {where} has {len(lines)} lines for {poison.records} records"
        )
    for i, game_id in poison.good.items():
        line = lines[i]
        if line.get("format") != "leakage.report/1" or line.get("game_id") != game_id:
            raise AssertionError(
                f"{poison.kind}: the good record {i} ({game_id}) beside record {poison.bad} "
                f"got no report in {where}: {json.dumps(line)[:300]}"
            )
    bad = lines[poison.bad or 0]
    error = bad.get("error")
    if bad.get("record") != poison.bad or not isinstance(error, dict):
        raise AssertionError(
            f"{poison.kind}: record {poison.bad} is not an error line in {where}: "
            f"{json.dumps(bad)[:300]}"
        )
    if not points_at(error.get("field"), poison):
        raise AssertionError(
            f"{poison.kind}: record {poison.bad}'s error names {error.get('field')!r}, not "
            f"where the poison is ({_spell(poison)})"
        )


def _check_job(response: Any, poison: Poison) -> None:
    location = response.headers.get("location")
    location = location[0] if isinstance(location, list) else location
    if not location:
        raise AssertionError(f"{poison.kind}: a job accepted without a Location")
    url = urljoin(response.request.url, location)
    deadline = time.monotonic() + JOB_WAIT
    while True:
        job = requests.get(url, timeout=30).json()
        if job.get("state") in ("done", "failed", "cancelled"):
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"{poison.kind}: the job did not end in {JOB_WAIT:g} s: {job}")
        time.sleep(0.1)
    if job["state"] == "cancelled":  # the stateful phase may cancel it meanwhile
        return
    if job["state"] != "done":
        raise AssertionError(f"{poison.kind}: a job with one bad record ended {job['state']}")
    results = requests.get(f"{url}/results", timeout=30)
    _check_lines(results.content, poison, "the job's results")


@schemathesis.check
def compare_pairing_only(ctx: Any, response: Any, case: Any) -> bool | None:
    """A positive case of ``GET /v1/jobs/{job_id}/compare`` is refused (422) only for how its
    two models go together (``a`` and ``b``: both or neither, not one model twice), which
    JSON Schema cannot say of two query parameters; never for anything else."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return None
    if case.operation.label != "GET /v1/jobs/{job_id}/compare" or response.status_code != 422:
        return None
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        error = {}
    query = case.query or {}
    pairing = ("a" in query) != ("b" in query) or query.get("a") == query.get("b")
    if error.get("type") == "invalid_input" and error.get("field") in ("a", "b") and pairing:
        return None
    raise AssertionError(
        f"a schema-valid comparison was refused for something other than its pairing: 422 "
        f"{error.get('type')} (field {error.get('field')!r}): "
        f"{error.get('message', response.text[:300])}"
    )
