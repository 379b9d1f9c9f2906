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

import httpx
import pytest

from leakage.curves import NO_REFERENCES
from leakage.seats import SEATS

from . import browser_support as support
from . import test_explorer_browser as page
from .browser_support import CK_ARENA, TIMEOUT, ck_arena_job, get, js, wait_until
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


# -- seats: whose posterior each view's figures are ------------------------------------------

SEAT_VIEWS = ("leaderboard-seat", "curves-seat", "models-seat", "plane-seat")
"""The job views' seat sentences (beside the leaderboard's reader sentence, above the
curves, in the two models compared, under the plane's note)."""


def seats_of(server: Server) -> dict[str, Any]:
    """``GET /v1/seats`` by game kind."""
    return {g["game"]: g for g in get(server, "/v1/seats")["games"]}


def seat_texts(driver: Any, ids: tuple[str, ...]) -> dict[str, str]:
    """Each seat line's text, "" where it is not shown."""
    return {
        i: js(
            driver,
            "const e = document.getElementById(arguments[0]);"
            "return e && e.offsetParent !== null ? e.textContent : ''",
            i,
        )
        for i in ids
    }


def record_requests(driver: Any) -> None:
    """The page's requests from now on, in ``window.seenRequests`` (method and URL)."""
    js(
        driver,
        "window.seenRequests = []; const f = window.fetch;"
        "window.fetch = (u, o) => { window.seenRequests.push([(o && o.method) || 'GET',"
        " String(u)]); return f(u, o); };",
    )


def pick_seat(driver: Any, seat: str) -> None:
    """Choose ``seat`` in the options row as a person does (no game on show: no request)."""
    from selenium.webdriver.support.ui import Select

    Select(by_id(driver, "seat-select")).select_by_value(seat)


def panel_shots(driver: Any, name: str, panel: str = "source-title") -> None:
    """The panel holding ``#panel`` at 1400 and 390 px, to be looked at."""
    SEM_SHOTS.mkdir(parents=True, exist_ok=True)
    try:
        for width in (1400, 390):
            driver.set_window_size(width, 900)
            box = js(
                driver, "return document.getElementById(arguments[0]).closest('.panel')", panel
            )
            (SEM_SHOTS / f"{name}-{width}.png").write_bytes(box.screenshot_as_png)
            # the seat's long choices never widen the page (the select shrinks to the row)
            sideways = js(
                driver,
                "return document.documentElement.scrollWidth"
                " - document.documentElement.clientWidth",
            )
            assert sideways <= 0, f"the page scrolls sideways by {sideways} px at {width} px"
    finally:
        driver.set_window_size(*page.WINDOW)


def test_a_seat_picked_goes_with_the_job_and_every_view_names_it(
    driver: Any, server: Server, shared_data: Path
):
    logs = sorted(CK_ARENA.glob("*.json"))[:2]
    if len(logs) < 2:
        pytest.skip(f"needs the CK-Arena dev logs in {CK_ARENA}")
    spy = seats_of(server)["spygame"]
    sentence = next(s["sentence"] for s in spy["seats"] if s["seat"] == "outside-pair")
    open_page(driver, server.url + "/ui")
    # no game on show: every seat of both kinds, each saying what its observer knows
    offered = js(
        driver,
        "return Array.from(document.querySelectorAll('#seat-select option'),"
        " o => [o.value, o.textContent, o.disabled, o.parentElement.label || ''])",
    )
    assert [v for v, *_ in offered] == ["", *SEATS]  # the default, then every seat in order
    assert not any(d for _, _, d, _ in offered)
    assert offered[0][1] == (
        "each game's default seat (SpyGame / Undercover: outside-known; The Chameleon: chameleon)"
    )
    for s in spy["seats"]:
        row = next(o for o in offered if o[0] == s["seat"])
        assert row[1].startswith(f"{s['seat']}: {s['knows']}") and row[3] == "SpyGame / Undercover"
    from selenium.webdriver.support.ui import Select

    # no game on show: picking in the options row sends nothing (it goes with the job)
    Select(by_id(driver, "input-format")).select_by_value("ck-arena")
    pick_seat(driver, "outside-pair")
    # the seat decides the spy posterior: that control is off, and the line says the seat
    assert not by_id(driver, "spy-assignment").is_enabled()
    assert by_id(driver, "seat-note").text == sentence
    assert "seat=outside-pair" in driver.current_url
    panel_shots(driver, "seat-options")
    record_requests(driver)
    by_id(driver, "job-paths").send_keys(", ".join(map(str, logs)))
    page.act(driver, by_id(driver, "job-submit").click)
    posts = [u for m, u in js(driver, "return window.seenRequests") if m == "POST"]
    assert len(posts) == 1 and "/v1/jobs?" in posts[0], posts
    assert "seat=outside-pair" in posts[0] and "spy_assignment" not in posts[0], posts[0]
    job_id = get(server, "/v1/jobs")["jobs"][0]["id"]
    assert get(server, f"/v1/jobs/{job_id}")["params"]["seat"] == "outside-pair"
    wait_until(
        f"job {job_id} done",
        lambda: get(server, f"/v1/jobs/{job_id}")["state"] == "done",
        timeout=300,
    )
    # every view of the job names the seat, the leaderboard's beside the reader's sentence
    open_page(driver, f"{server.url}/ui?job={job_id}")
    assert seat_texts(driver, SEAT_VIEWS) == dict.fromkeys(SEAT_VIEWS, sentence)
    assert (
        js(
            driver,
            "return document.getElementById('leaderboard-reader').nextElementSibling.id",
        )
        == "leaderboard-seat"
    )
    shot(driver, "seat-job-1400", 1400, 900)
    shot(driver, "seat-job-390", 390, 844)
    # one game of the job: scored again as the job scored it, from its seat
    first = js(
        driver, "return document.querySelector('#job-records-table a[data-game]').dataset.game"
    )
    page.act(
        driver,
        lambda: js(driver, "document.querySelector('#job-records-table a[data-game]').click()"),
    )
    assert by_id(driver, "game-title").text == first
    assert seat_texts(driver, ("game-seat",)) == {"game-seat": sentence}
    assert by_id(driver, "seat-select").get_attribute("value") == "outside-pair"
    # a SpyGame on show: The Chameleon's seats are not offered
    disabled = js(
        driver,
        "return Array.from(document.querySelectorAll('#seat-select option:disabled'),"
        " o => o.value)",
    )
    assert disabled == ["chameleon", "non-chameleon"]
    shot(driver, "seat-game-1400", 1400, 900)
    shot(driver, "seat-game-390", 390, 844)


def test_the_default_seat_is_named_in_every_view(driver: Any, server: Server, ck_job: str):
    spy = seats_of(server)["spygame"]
    knows = next(s["knows"] for s in spy["seats"] if s["seat"] == "outside-known")
    said = f"Figures from the default seat of SpyGame / Undercover, outside-known: {knows}."
    assert get(server, f"/v1/jobs/{ck_job}")["params"]["seat"] is None
    open_page(driver, f"{server.url}/ui?job={ck_job}")
    assert seat_texts(driver, SEAT_VIEWS) == dict.fromkeys(SEAT_VIEWS, said)
    page.act(
        driver,
        lambda: js(driver, "document.querySelector('#job-records-table a[data-game]').click()"),
    )
    assert seat_texts(driver, ("game-seat",)) == {"game-seat": said}
    assert by_id(driver, "seat-select").get_attribute("value") == ""


def test_a_chameleon_game_offers_its_seats_and_is_scored_from_the_one_picked(
    driver: Any, server: Server
):
    cham = seats_of(server)["chameleon"]
    by_seat = {s["seat"]: s for s in cham["seats"] + cham["outside"]}
    open_page(driver, f"{server.url}/ui?example=chameleon_sports")
    of = "Figures from the default seat of The Chameleon"
    assert by_id(driver, "game-seat").text == f"{of}, chameleon: {by_seat['chameleon']['knows']}."
    offered = js(
        driver,
        "return Array.from(document.querySelectorAll('#seat-select option:not(:disabled)'),"
        " o => o.value)",
    )
    assert offered == ["", "chameleon", "non-chameleon"]
    # counting the chameleon's clues makes the default an outside observer's: said so
    page.act(driver, by_id(driver, "include-chameleon").click)
    assert by_id(driver, "game-seat").text == (
        f"{of}, outside-card: {by_seat['outside-card']['knows']}."
    )
    page.act(driver, by_id(driver, "include-chameleon").click)
    record_requests(driver)
    page.choose(driver, "seat-select", "non-chameleon")
    scored = [u for m, u in js(driver, "return window.seenRequests") if "/v1/score" in u]
    assert scored and all("seat=non-chameleon" in u for u in scored), scored
    assert by_id(driver, "game-seat").text == by_seat["non-chameleon"]["sentence"]
    assert "seat=non-chameleon" in driver.current_url
    # the map is over what that seat's posterior is over: the players, the chameleon starred,
    # each cell the report's P(that player is the chameleon) as its first holder sees it
    game = page.example_games("chameleon_sports")[0]
    r = httpx.post(
        server.url + "/v1/score",
        params={"backend": "cooccurrence", "seat": "non-chameleon"},
        json=game,
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text
    report = r.json()
    shown = page.cells(driver)
    assert {c.candidate for c in shown} == {p["id"] for p in game["players"]}
    assert {c.candidate for c in shown if c.secret} == {
        p["id"] for p in game["players"] if p["role"] == "chameleon"
    }
    page.assert_grid_is(page.grid(shown), page.posterior_grid(report))
    holder = report["settings"]["seat_holders"][0]
    assert (
        f"P(each player is the chameleon) after each turn, as {holder} sees it"
        in by_id(driver, "heatmap-caption").text
    )
    assert "that the player is the chameleon" in by_id(driver, "legend").text
    # a clue tried from that seat says what its P is of
    by_id(driver, "clue-input").send_keys("net")
    page.act(driver, by_id(driver, "clue-button").click)
    tried = by_id(driver, "clue-result").text
    assert "P(the chameleon)" in tried and "most probable player then" in tried, tried
    # the address restores the seat
    open_page(driver, driver.current_url)
    assert by_id(driver, "seat-select").get_attribute("value") == "non-chameleon"
    assert by_id(driver, "game-seat").text == by_seat["non-chameleon"]["sentence"]
    # back to the default: the candidates' map and its words again
    page.choose(driver, "seat-select", "")
    assert {c.candidate for c in page.cells(driver)} == set(game["candidates"])
    assert "of that candidate" in by_id(driver, "legend").text
