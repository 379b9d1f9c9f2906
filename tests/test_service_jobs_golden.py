"""A stored CK-Arena job's views, the same as when they were recorded (tests/golden/).

The job is 12 real CK-Arena logs (../shared/data/ck-arena-dev, sorted, the first 12) uploaded
as one JSONL file and scored with the co-occurrence backend on the default index. Its curves
(every grouping), plane, model comparison (the list and one pair), records and
``report.html`` (by model and by speaker; the logs' statements replaced by digests, as
:func:`redact` says) were recorded from main before the job views were
moved onto the step table (issue 40), so this file holds the views to what they answered
then: the comparison is exact but for floating-point numbers, which agree to 1e-9 relative.

One change was recorded on purpose, with the move: ``report.html``'s plane. The page was drawn
from step rows the service rebuilt from its reports without the SpyGame pair, so every
CK-Arena clue had "no reveal value" and the page's plane was empty while ``/plane`` (which
took the spy's word as ``candidates[1]``) drew it. Both now read the spy's word from the
pair in the one step table, and the page's plane is the endpoint's
(:func:`test_the_pages_plane_is_the_plane_view`).

To record again after a deliberate change, run this file with
``LEAKAGE_TEST_RECORD_GOLDEN=1`` and review the diff of tests/golden/ck_arena_job.json.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .test_report_golden import _same

GOLDEN = Path(__file__).parent / "golden" / "ck_arena_job.json"
RECORD = os.environ.get("LEAKAGE_TEST_RECORD_GOLDEN") == "1"
GAMES = 12
REPLICATES = {"replicates": 200}

pytest.importorskip("pyarrow")


def ck_arena_jsonl(shared_data: Path, n: int = GAMES) -> bytes:
    """The first ``n`` CK-Arena dev logs (sorted by name), one JSON line each."""
    logs = sorted((shared_data / "ck-arena-dev" / "logs").glob("*.json"))[:n]
    assert len(logs) == n
    lines = [json.dumps(json.loads(p.read_text(encoding="utf-8"))) for p in logs]
    return "".join(f"{line}\n" for line in lines).encode()


def _texts(doc: Any) -> set[str]:
    """Every string of a log that reads as a sentence (the players' statements, the judges'
    notes): what the golden file must not hold."""
    if isinstance(doc, dict):
        return set().union(*(_texts(v) for v in doc.values()))
    if isinstance(doc, list):
        return set().union(*(_texts(v) for v in doc))
    return {doc} if isinstance(doc, str) and " " in doc.strip() else set()


def redact(text: str, body: bytes) -> str:
    """``text`` with each sentence of the logs in ``body`` replaced by ``<text SHA1[:10]>``:
    CK-Arena's logs carry no redistribution licence (../shared/data/README.md), so their
    statements stay out of the repository; the digest still tells one from another."""
    found: set[str] = set()
    for line in body.splitlines():
        found |= _texts(json.loads(line))
    for t in sorted(found, key=len, reverse=True):
        mark = f"<text {hashlib.sha1(t.encode()).hexdigest()[:10]}>"
        escaped = (
            html.escape(t), html.escape(t, quote=False), json.dumps(t)[1:-1], t.replace('"', '""')
        )  # fmt: skip
        for form in {t, *escaped, json.dumps(t, ensure_ascii=False)[1:-1]}:
            text = text.replace(form, mark)
    return text


@pytest.fixture(scope="module")
def job(
    shared_data: Path, default_index: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, str, bytes]]:
    from .test_service import Api, settings_for, wait_job

    api = Api(settings_for(tmp_path_factory.mktemp("golden-job"), default_index))
    try:
        r = api.post(
            "/v1/jobs",
            params={"input_format": "ck-arena"},
            content=(body := ck_arena_jsonl(shared_data)),
            headers={"content-type": "application/x-ndjson"},
        )
        assert r.status_code == 202, r.text
        done = wait_job(api, r.json()["id"], timeout=600)
        assert done["state"] == "done", done
        yield api, str(done["id"]), body
    finally:
        api.close()


def _csv_links_as_text(page: str) -> str:
    """report.html's CSV links (``data:text/csv;base64,...``) with their CSVs as text, so that
    :func:`redact` reaches the statements in them and the numbers compare as numbers."""
    return re.sub(
        r"data:text/csv;base64,([A-Za-z0-9+/=]+)",
        lambda m: "data:text/csv," + base64.b64decode(m.group(1)).decode("utf-8"),
        page,
    )


def views(api: Any, job_id: str, body: bytes) -> dict[str, Any]:
    """Every view of the job the explorer and the API give, as JSON (report.html as text,
    the job's id replaced by ``JOB``, the logs' sentences by digests: :func:`redact`)."""
    out: dict[str, Any] = {}

    def get(url: str, **params: Any) -> Any:
        r = api.get(f"/v1/jobs/{job_id}/{url}", params=params)
        assert r.status_code == 200, r.text
        text = redact(_csv_links_as_text(r.text).replace(job_id, "JOB"), body)
        return text if url.endswith(".html") else json.loads(text)

    for by in ("model", "speaker", "matchup", "difficulty"):
        out[f"curves by {by}"] = get("curves", by=by, **REPLICATES)
    out["plane"] = get("plane", **REPLICATES)
    listed = get("compare")
    out["compare"] = listed
    a, b = listed["models"][:2]
    out["compare a b"] = get("compare", a=a, b=b, **REPLICATES)
    out["records"] = get("records")
    for by in ("model", "speaker"):
        out[f"report.html by {by}"] = get("report.html", by=by, **REPLICATES)
    return out


VARYING = (
    (r"\b[mp][0-9a-f]{10}\b", "ID"),
    (r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "WHEN"),
    (r"<dc:date>[^<]*</dc:date>", "<dc:date/>"),
)


def _html_same(got: str, want: str, where: str) -> None:
    """Two pages alike but for matplotlib's SVG ids (drawn afresh for every figure), the time it
    was written and the last bits of their numbers."""
    for varying, fixed in VARYING:
        got, want = re.sub(varying, fixed, got), re.sub(varying, fixed, want)
    number = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")
    assert number.sub("#", got) == number.sub("#", want), where
    for a, b in zip(number.findall(got), number.findall(want), strict=True):
        assert abs(float(a) - float(b)) <= 1e-9 * max(1.0, abs(float(b))), (where, a, b)


def test_a_stored_ck_arena_jobs_views_are_as_recorded(job: tuple[Any, str, bytes]):
    api, job_id, body = job
    got = views(api, job_id, body)
    if RECORD:
        GOLDEN.write_text(json.dumps(got, indent=1, sort_keys=False) + "\n", encoding="utf-8")
        pytest.skip(f"recorded {GOLDEN}")
    want = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert list(got) == list(want)
    for name, value in want.items():
        if name.startswith("report.html"):
            _html_same(got[name], value, name)
        else:
            _same(got[name], value, name)


def test_the_pages_plane_is_the_plane_view(job: tuple[Any, str, bytes]):
    api, job_id, _ = job
    want = api.get(f"/v1/jobs/{job_id}/plane", params=REPLICATES).json()["groups"]
    assert want, "the plane has no group"
    page = api.get(f"/v1/jobs/{job_id}/report.html", params=REPLICATES).text
    table = page[page.index("<h2>Reveal") :] if "<h2>Reveal" in page else page
    for g in want:
        row = f'<td>{g["group"]}</td><td class="n">{g["clues"]}</td><td class="n">{g["games"]}</td>'
        assert row in table, g["group"]
