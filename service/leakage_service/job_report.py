"""What a job's results give besides its curves: ``leakage report``'s HTML page
(``GET /v1/jobs/{id}/report.html``) and one line per record (``GET /v1/jobs/{id}/records``),
the explorer's table of a job's games and failed records. Blocking: run on a thread.

The page is the library's own (:func:`leakage.curves.build_site`), drawn from the job's step
table (``leakage.steps/1``, the Parquet parts ``leakage.batch``'s engine committed in the
job's results folder): exactly what ``leakage report`` draws from a batch.
"""

from __future__ import annotations

import base64
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from leakage.curves import build_site
from leakage_service.errors import ServiceError
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
        rep = build_site(
            steps, Path(tmp) / "site", by=by, replicates=replicates, max_clues=max_clues
        )
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


def job_records(state: ServiceState, job: Job) -> list[dict[str, Any]]:
    """One line per record stored (scored or failed), in record order: what the page's
    table of a job's games shows and sorts."""
    assert state.store is not None
    out = []
    for idx, ok, body in state.store.results(job.id):
        doc = json.loads(body)
        summary = doc.get("summary") or {} if ok else {}
        err = {} if ok else doc.get("error") or {}
        meta = doc.get("meta") or {} if ok else {}
        out.append(
            {
                "record": idx, "ok": ok, "game_id": doc.get("game_id"), "game": doc.get("game"),
                "turns": len(doc.get("steps") or []) if ok else None,
                "counted": summary.get("counted_turns"),
                "final_entropy_bits": summary.get("final_entropy_bits"),
                "final_secret_probability": summary.get("final_secret_probability"),
                "final_secret_rank": summary.get("final_secret_rank"),
                "matchup": _text(meta.get("matchup")),
                "difficulty": _text(meta.get("difficulty")),
                "error_type": err.get("type"), "error_message": err.get("message"),
                "error_field": err.get("field"),
            }
        )  # fmt: skip
    return out
