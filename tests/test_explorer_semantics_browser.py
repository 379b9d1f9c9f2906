"""Each game's own semantics in the explorer (a job's view), in a real headless Chromium
against a real ``leakage serve`` (test_explorer_browser's browser): a SpyGame / CK-Arena
job's curves read each statement on its own (the curves API's ``per_statement``, the
library's decision) and open grouped by the speaker's model and role (``default_by``), and
its plane draws no Chameleon reference strategy and says why (``references_note``); a
Chameleon job keeps "after m clues", the models grouping and Karabag & Topcu's references.
The CK-Arena job reads 12 real dev logs in place (``shared_data``: skipped without)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from leakage.curves import NO_REFERENCES

from . import browser_support as support
from . import test_explorer_browser as page
from .browser_support import CK_ARENA, ck_arena_job, get, js
from .conftest import EXAMPLES
from .test_explorer_browser import by_id, open_page, submit_job
from .test_explorer_models_browser import shot
from .test_service_server import Server

# test_explorer_browser's browser and its console check (no error, no CSP violation)
browser_paths, driver, console_clean = page.browser_paths, page.driver, page.console_clean
server_start, server = support.shared_data_server_start, support.server
SEM_SHOTS = Path(os.environ.get("SEMANTICS_SCREENSHOTS") or support.SHOTS)
"""Where the curves and plane of the CK-Arena job are saved at 1400 px, to be looked at."""


@pytest.fixture(scope="module")
def ck_job(server: Server, shared_data: Path) -> str:
    """A job of the first 12 CK-Arena dev logs, read by path."""
    logs = sorted(CK_ARENA.glob("*.json"))[:12]
    if len(logs) < 12:
        pytest.skip(f"needs the CK-Arena dev logs in {CK_ARENA}")
    return ck_arena_job(server, paths=[str(p) for p in logs])


def curve_words(driver: Any) -> dict[str, Any]:
    """What the curves say: each figure's caption, x axis label (the svg's texts) and the
    names of its export buttons (what an exported PNG / SVG is titled)."""
    return {
        "captions": js(
            driver,
            "return Array.from(document.querySelectorAll('#curves figcaption'),"
            " c => c.firstChild.textContent)",
        ),
        "axes": js(
            driver,
            "return Array.from(document.querySelectorAll('#curves svg'), s =>"
            " Array.from(s.querySelectorAll('text'), t => t.textContent)"
            ".find(t => t.startsWith('m (')))",
        ),
        "exports": js(
            driver,
            "return Array.from(document.querySelectorAll('#curves .exports button'),"
            " b => b.getAttribute('aria-label'))",
        ),
    }


def plane_words(driver: Any) -> dict[str, Any]:
    return {
        "refs": js(
            driver, "return document.querySelectorAll('#plane-chart path.reference').length"
        ),
        "legend": js(
            driver,
            "return Array.from(document.querySelectorAll('#plane-chart text.legend-label'),"
            " t => t.textContent)",
        ),
        "note": by_id(driver, "plane-note").text,
        "caption": js(driver, "return document.querySelector('#plane-table caption').textContent"),
        "figure": js(
            driver, "return document.getElementById('plane-caption').firstChild.textContent"
        ),
        "exports": js(
            driver,
            "return Array.from(document.querySelectorAll("
            "'.exports[data-for=\"plane-chart\"] button'), b => b.getAttribute('aria-label'))",
        ),
        "rows": js(
            driver,
            "return Array.from(document.querySelectorAll('#plane-table tbody tr'),"
            " r => r.dataset.kind)",
        ),
    }


def test_a_ck_arena_job_opens_grouped_by_the_speakers_model_and_role(
    driver: Any, server: Server, ck_job: str
):
    curves = get(server, f"/v1/jobs/{ck_job}/curves")
    assert (curves["per_statement"], curves["default_by"]) == (True, "speaker")
    # opened without a grouping: the speaker's model and role, not six models joined by '+'
    open_page(driver, f"{server.url}/ui?job={ck_job}")
    assert by_id(driver, "curve-group").get_attribute("value") == "speaker"
    assert "by=speaker" in driver.current_url
    labels = js(
        driver,
        "return Array.from(document.querySelectorAll('#curve-filter input'), i => i.value)",
    )
    assert labels and all(" · " in g and "+" not in g for g in labels), labels
    # a grouping picked by hand is kept
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=model")
    assert by_id(driver, "curve-group").get_attribute("value") == "model"


def test_a_ck_arena_jobs_curves_read_each_statement_on_its_own(
    driver: Any, server: Server, ck_job: str
):
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=speaker")
    words = curve_words(driver)
    assert len(words["captions"]) == 2  # two words a game: entropy and top 1
    for text in words["captions"] + words["exports"]:
        assert "m-th statement, read on its own" in text, text
        assert "after m clues" not in text and "secret" not in text, text
    assert any("speaker's word is the top candidate" in c for c in words["captions"])
    assert words["axes"] == ["m (the m-th statement, read on its own)"] * 2
    # looked at: the curves at 1400 px
    driver.set_window_size(1400, 900)
    js(driver, "document.getElementById('curves').scrollIntoView()")
    SEM_SHOTS.mkdir(parents=True, exist_ok=True)
    (SEM_SHOTS / "sem-curves-1400.png").write_bytes(by_id(driver, "curves").screenshot_as_png)
    shot(driver, "semantics-ck-arena-1400", 1400, 900)


def test_a_ck_arena_jobs_plane_has_no_chameleon_references_and_says_so(
    driver: Any, server: Server, ck_job: str
):
    plane = get(server, f"/v1/jobs/{ck_job}/plane")
    assert plane["references"] == [] and plane["references_note"] == NO_REFERENCES
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=speaker")
    shown = plane_words(driver)
    assert shown["refs"] == 0
    assert not any("reference" in t for t in shown["legend"]), shown["legend"]
    assert NO_REFERENCES in shown["note"]
    assert "no reference strategy" in shown["caption"]
    assert not any("reference" in t for t in [shown["figure"], *shown["exports"]]), shown
    assert shown["rows"] == ["data"] * len(plane["groups"])
    driver.set_window_size(1400, 900)
    js(driver, "document.getElementById('plane-section').scrollIntoView()")
    SEM_SHOTS.mkdir(parents=True, exist_ok=True)
    png = by_id(driver, "plane-section").screenshot_as_png
    (SEM_SHOTS / "sem-plane-1400.png").write_bytes(png)


def test_a_chameleon_job_keeps_cumulative_curves_and_its_references(driver: Any, server: Server):
    job_id = submit_job(server, (EXAMPLES / "chameleon_batch.jsonl").read_bytes())
    open_page(driver, f"{server.url}/ui?job={job_id}")
    assert by_id(driver, "curve-group").get_attribute("value") == "model"
    words = curve_words(driver)
    assert words["captions"] and all("after m clues" in c for c in words["captions"])
    assert not any("statement" in c for c in words["captions"] + words["exports"])
    assert set(words["axes"]) == {"m (clues counted)"}
    plane = get(server, f"/v1/jobs/{job_id}/plane")
    shown = plane_words(driver)
    assert shown["refs"] > 0 and "reference strategy" in " ".join(shown["legend"])
    assert plane["references_note"] in shown["note"] and "The Chameleon" in shown["note"]
    assert "reference strategies of The Chameleon" in shown["caption"]
    assert all("reference strategies" in t for t in [shown["figure"], *shown["exports"]]), shown
    assert shown["rows"].count("reference") == len(plane["references"])
