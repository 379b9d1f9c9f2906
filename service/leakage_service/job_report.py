"""What a job's results give besides its curves: ``leakage report``'s HTML page
(``GET /v1/jobs/{id}/report.html``) and one line per record (``GET /v1/jobs/{id}/records``),
the explorer's table of a job's games and failed records. Blocking: run on a thread.

The page is the library's own (:func:`leakage.curves.build_site`): the job's stored reports
are written out as a ``leakage.steps/1`` table (one row per turn, the columns ``leakage
batch`` writes, the models read again from the job's input) into a temporary folder, and
``build_site`` draws from it exactly what ``leakage report`` draws from a batch.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from leakage.batch import COLUMN_NAMES, steps_schema
from leakage.curves import build_site
from leakage_service.errors import ServiceError
from leakage_service.job_views import _player_models, job_files
from leakage_service.jobs import Job
from leakage_service.state import ServiceState


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _step_rows(idx: int, rep: dict[str, Any], models: dict[str, str]) -> list[dict[str, Any]]:
    """One report's rows of the step table."""
    steps = rep.get("steps") or []
    meta = rep.get("meta") or {}
    game_model = "+".join(
        sorted({name for s in steps if s["counted"] and (name := models.get(s["player"]))})
    )
    candidates = list(rep.get("candidates") or [])
    words = meta.get("words") if isinstance(meta.get("words"), dict) else None
    pair = f"{words.get('civilian')}|{words.get('spy')}" if words else None
    rows = []
    m = 0
    for i, s in enumerate(steps):
        m += bool(s["counted"])
        post = s.get("posterior") or {}
        rows.append(
            {
                "source": "job", "record": idx, "game_id": rep.get("game_id") or "",
                "game": rep.get("game") or "", "backend": rep.get("backend") or "",
                "step": s.get("index", i), "clues_so_far": m, "player": s["player"],
                "role": s.get("role") or "", "model": models.get(s["player"]),
                "game_model": game_model or None, "round": s.get("round"),
                "text": s.get("text") or "", "counted": bool(s["counted"]),
                "candidates": candidates,
                "probabilities": [float(post.get(c, 0.0)) for c in candidates],
                "entropy_bits": s["entropy_bits"],
                "prior_entropy_bits": rep["summary"]["prior_entropy_bits"],
                "information_gain_bits": s["information_gain_bits"],
                "kl_bits": s.get("kl_bits", 0.0), "secret": rep.get("secret"),
                "secret_probability": s.get("secret_probability"),
                "secret_rank": s.get("secret_rank"), "speaker_word": s.get("speaker_word"),
                "category": rep.get("category"), "matchup": _text(meta.get("matchup")),
                "difficulty": _text(meta.get("difficulty")), "pair": pair,
            }
        )  # fmt: skip
    return rows


def job_report_html(
    state: ServiceState, job: Job, by: str, *, replicates: int = 1000, max_clues: int = 16
) -> tuple[str, int]:
    """``leakage report --by BY``'s ``report.html`` of the results stored so far, and the
    number of games in it. A job with no scored game is a 409 ``job_not_ready``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    assert state.store is not None
    files, why = job_files(state, job)
    models = (
        {} if why else _player_models(files, job.params.input_format, state.settings.read_limits())
    )
    rows: list[dict[str, Any]] = []
    games = 0
    for idx, ok, body in state.store.results(job.id):
        if ok:
            games += 1
            rows += _step_rows(idx, json.loads(body), models.get(idx, {}))
    if not rows:  # the request is right; the job has nothing to report yet
        raise ServiceError(
            409, "job_not_ready",
            f"job {job.id} has no scored game with turns yet ({job.state}): nothing to report",
            field="id",
        )  # fmt: skip
    schema = steps_schema()
    with tempfile.TemporaryDirectory(prefix=f"leakage-report-{job.id}-") as tmp:
        steps = Path(tmp) / "steps.parquet"
        table = pa.Table.from_pylist(rows, schema=schema)
        pq.write_table(table.select(list(COLUMN_NAMES)), steps)
        build_site(steps, Path(tmp) / "site", by=by, replicates=replicates, max_clues=max_clues)
        html = (Path(tmp) / "site" / "report.html").read_text(encoding="utf-8")
        html = _with_csvs(html, Path(tmp) / "site")
    return html.replace(str(steps), f"job {job.id}"), games


def _with_csvs(html: str, site: Path) -> str:
    """The page names the CSVs ``build_site`` writes beside it ("Data: curves.csv"), but is
    served alone: each name becomes a link holding that CSV (a ``data:`` URL), so that the
    numbers it promises come with it."""
    import base64

    for csv in sorted(site.glob("*.csv")):
        data = base64.b64encode(csv.read_bytes()).decode("ascii")
        link = f'<a download="{csv.name}" href="data:text/csv;base64,{data}">{csv.name}</a>'
        html = html.replace(csv.name, link)
    return html


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
