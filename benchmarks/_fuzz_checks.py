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
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis

TRANSCRIPT_OPERATIONS = frozenset({"POST /v1/score", "POST /v1/score/batch", "POST /v1/jobs"})
RULE_TYPES = frozenset({"invalid_transcript", "game_too_large", "unknown_input_format"})
"""Error types of a transcript refused for a rule JSON Schema cannot express."""


@schemathesis.check
def transcript_rules_only(ctx: Any, response: Any, case: Any) -> bool | None:
    """A positive case on an operation that reads transcripts is refused (422) only for a
    rule inside the transcript (see the module docstring)."""
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
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
