"""What a job's results give besides its curves: ``leakage report``'s HTML page
(``GET /v1/jobs/{id}/report.html``) and one line per record (``GET /v1/jobs/{id}/records``,
the explorer's table of a job's games and failed records, and the rows of
``results?format=parquet``), each drawn from the job's step table. Blocking: run on a thread.

The page is the library's own (:func:`leakage.curves.build_site`), drawn from the job's step
table (``leakage.steps/1``, the Parquet parts ``leakage.batch``'s engine committed in the
job's results folder): exactly what ``leakage report`` draws from a batch.
"""

from __future__ import annotations

import base64
import json
import math
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from leakage.batch import game_records
from leakage.curves import build_site
from leakage_service.errors import ServiceError
from leakage_service.job_steps import JobSteps
from leakage_service.jobs import Job
from leakage_service.state import ServiceState


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def job_report_html(
    state: ServiceState, job: Job, by: str, *, replicates: int = 1000, max_clues: int = 16
) -> tuple[str, int]:
    """``leakage report --by BY``'s ``report.html`` of the rows committed so far, and the
    number of games in it. A job with no scored game is a 409 ``job_not_ready``."""
    assert state.store is not None
    steps = state.store.results_dir(job.id) / "steps"
    held = state.steps.get(job.id, steps.parent)
    if not held.table.num_rows:  # the request is right; the job has nothing to report yet
        raise ServiceError(
            409, "job_not_ready",
            f"job {job.id} has no scored game with turns yet ({job.state}): nothing to report",
            field="id",
        )  # fmt: skip
    with (
        state.steps.holding(job.id),  # no compaction while the folder is read
        tempfile.TemporaryDirectory(prefix=f"leakage-report-{job.id}-") as tmp,
    ):
        # Win rates by the library's one rule: the table's winner_role, else (a table
        # written before it) the job's stored reports.
        reports = (json.loads(body) for _, ok, body in state.store.results(job.id) if ok)
        rep = build_site(
            steps, Path(tmp) / "site", by=by, replicates=replicates, max_clues=max_clues,
            reports=reports, reports_source="the job's stored reports' meta.winner_role",
        )  # fmt: skip
        html = (Path(tmp) / "site" / "report.html").read_text(encoding="utf-8")
        html = _with_csvs(html, Path(tmp) / "site")
    return html.replace(str(steps), f"job {job.id}"), rep.games


def _with_csvs(html: str, site: Path) -> str:
    """The page names the CSVs ``build_site`` writes beside it ("Data: curves.csv"), but is
    served alone: each name becomes a link holding that CSV (a ``data:`` URL), so that the
    numbers it promises come with it. One pass, whole names only (``pairs.csv`` never
    matches inside ``leaderboard_pairs.csv``)."""
    links = {}
    for csv in site.glob("*.csv"):
        data = base64.b64encode(csv.read_bytes()).decode("ascii")
        href = f"data:text/csv;base64,{data}"
        links[csv.name] = f'<a download="{csv.name}" href="{href}">{csv.name}</a>'
    if not links:
        return html
    names = "|".join(re.escape(n) for n in sorted(links, key=len, reverse=True))
    whole = rf"(?<![\w.-])({names})(?![\w-])(?!\.\w)"  # a sentence's full stop may follow
    return re.sub(whole, lambda m: links[m.group(1)], html)


RECORD_FIELDS = (
    "record", "ok", "game_id", "game", "turns", "counted", "final_entropy_bits",
    "final_secret_probability", "final_secret_rank", "matchup", "difficulty", "error_type",
    "error_message", "error_field",
)  # fmt: skip
"""The fields of a line of ``GET /v1/jobs/{id}/records`` (:class:`JobRecord`)."""


def job_records(state: ServiceState, job: Job) -> list[dict[str, Any]]:
    """One line per record stored (scored or failed), in record order: what the page's
    table of a job's games shows and sorts (:func:`record_lines`, without the reports)."""
    assert state.store is not None
    lines = record_lines(state, job, state.store.outcomes(job.id))
    return [{k: line[k] for k in RECORD_FIELDS} for line in lines]


def record_lines(
    state: ServiceState, job: Job, stored: Iterable[tuple[int, bool, str | None]]
) -> Iterator[dict[str, Any]]:
    """A line per record of ``stored`` ((index, ok, stored JSON or None), in record order):
    :data:`RECORD_FIELDS` and ``backend``.

    A game's line is its row of :func:`leakage.batch.game_records` on the job's step table
    (the figures of its last step, as its report's ``summary`` gives them, under the job's
    seat; a non-finite number null, as a report writes it). A failed record has no step row:
    its line comes from its stored error line. A game without a step row (no turns, or
    stored a moment before its chunk was committed; or a job whose reports could not be laid
    out as a table) falls back to its stored report, ``stored``'s JSON or read then.
    """
    assert state.store is not None
    held = state.steps.get(job.id, state.store.results_dir(job.id))
    seat = job.params.seat
    games = held.view(("games", seat), lambda: _games_by_record(held, seat))
    for idx, ok, body in stored:
        if ok:
            found = games.get(idx)
            if found is None:
                found = _stored_game(json.loads(body) if body else _stored(state, job, idx))
            yield {"record": idx, "ok": True, **found, **_NO_ERROR}
            continue
        doc = json.loads(body) if body else {}
        err = doc.get("error") or {}
        yield {
            "record": idx, "ok": False, "game_id": doc.get("game_id"), "game": doc.get("game"),
            "backend": doc.get("backend"), **_NO_GAME, "error_type": err.get("type"),
            "error_message": err.get("message"), "error_field": err.get("field"),
        }  # fmt: skip


_NO_ERROR = dict.fromkeys(("error_type", "error_message", "error_field"))
_NO_GAME = dict.fromkeys(
    ("turns", "counted", "final_entropy_bits", "final_secret_probability", "final_secret_rank",
     "matchup", "difficulty")
)  # fmt: skip


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _games_by_record(held: JobSteps, seat: str | None) -> dict[int, dict[str, Any]]:
    """Each game's line but for its record and error, by its record's number in the job."""
    out = {}
    for r in game_records(held.table, seat=seat).to_pylist():
        out[held.index(r["source"], r["record"])] = {
            "game_id": r["game_id"], "game": r["game"], "backend": r["backend"],
            "turns": r["turns"], "counted": r["counted"],
            "final_entropy_bits": _finite(r["final_entropy_bits"]),
            "final_secret_probability": _finite(r["final_secret_probability"]),
            "final_secret_rank": r["final_secret_rank"], "matchup": r["matchup"],
            "difficulty": r["difficulty"],
        }  # fmt: skip
    return out


def _stored(state: ServiceState, job: Job, idx: int) -> dict[str, Any]:
    assert state.store is not None
    rows = [r for r in state.store.results_page(job.id, idx - 1, 1) if r[0] == idx]
    return json.loads(rows[0][2]) if rows else {}


def _stored_game(doc: dict[str, Any]) -> dict[str, Any]:
    """A game's line from its stored report (a game without a step row)."""
    summary = doc.get("summary") or {}
    meta = doc.get("meta") or {}
    return {
        "game_id": doc.get("game_id"), "game": doc.get("game"), "backend": doc.get("backend"),
        "turns": len(doc.get("steps") or []), "counted": summary.get("counted_turns"),
        "final_entropy_bits": summary.get("final_entropy_bits"),
        "final_secret_probability": summary.get("final_secret_probability"),
        "final_secret_rank": summary.get("final_secret_rank"),
        "matchup": _text(meta.get("matchup")), "difficulty": _text(meta.get("difficulty")),
    }  # fmt: skip
