"""The explorer's defects of issue 41, each reproduced in a real headless Chromium against a
real ``leakage serve`` (test_explorer_browser's browser and console check) and kept fixed:
exports after a pick and the groups unticked in the address, the by-speaker counts, the
options row sent with a job, the SpyGame preview's "before" and its ties, one colour per
model within a job, exports without CSP violations and with a title and legend, the records
table of a SpyGame job, what the game view shows of a CK-Arena log, and the page's words.

The CK-Arena logs are read in place from ``../shared/data`` (``shared_data``: skipped
without them). Screenshots at 1400 px and 390 px go to ``$EXPLORER_SCREENSHOTS``.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from . import browser_support as support
from . import test_explorer_browser as page
from .browser_support import CK_ARENA, TIMEOUT, ck_arena_job, get, js, wait_done, wait_until
from .conftest import EXAMPLES
from .test_explorer_browser import (
    _downloaded,
    _downloads,
    act,
    by_id,
    cells,
    load_example,
    open_page,
    status_text,
)
from .test_explorer_models_browser import shot
from .test_service_server import Server

# test_explorer_browser's browser and its console check (no error, no CSP violation)
browser_paths, driver, console_clean = page.browser_paths, page.driver, page.console_clean
server_start, server = support.shared_data_server_start, support.server

TABLE_DESK = "logs__en__different_llm_standard__en__artifacts__20250509-002508_table_desk.json"
"""A log with an empty statement (id 9), an abstaining vote and a judges' elimination."""
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def ck_job(server: Server, shared_data: Path) -> str:
    """A job of 12 CK-Arena logs (the first ten and the table/desk game), read by path."""
    logs = sorted(CK_ARENA.glob("*.json"))
    if len(logs) < 12 or not (CK_ARENA / TABLE_DESK).is_file():
        pytest.skip(f"needs the CK-Arena dev logs in {CK_ARENA}")
    paths = [str(p) for p in logs[:10]] + [str(CK_ARENA / TABLE_DESK), str(logs[10])]
    return ck_arena_job(server, paths=paths)


def pick(driver: Any, id_: str, value: str) -> None:
    """Choose ``value`` in the select ``#id_`` (a change that redraws without a request)."""
    from selenium.webdriver.support.ui import Select

    Select(by_id(driver, id_)).select_by_value(value)


def query(driver: Any) -> dict[str, list[str]]:
    return parse_qs(urlsplit(driver.current_url).query)


def curve_exports(driver: Any) -> list[tuple[str, bool]]:
    """Each curve figure's id and whether its PNG / SVG buttons show."""
    return [
        (str(i), bool(shown))
        for i, shown in js(
            driver,
            "return Array.from(document.querySelectorAll('#curves figure'), f => {"
            " const b = f.querySelector('.exports');"
            " return [f.dataset.metric,"
            " !!b && !b.hidden && b.querySelectorAll('button').length === 2]; })",
        )
    ]


# -- 1. curve exports after a pick; the groups unticked in the address ----------------------


def test_curve_exports_stay_after_a_pick_and_unticked_groups_are_in_the_address(
    driver: Any, server: Server, ck_job: str
):
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=speaker")
    assert curve_exports(driver) and all(shown for _, shown in curve_exports(driver))
    pick(driver, "speaker-model", "gpt-4o")
    wait_until("the curves of gpt-4o", lambda: "model=gpt-4o" in driver.current_url)
    assert all(shown for _, shown in curve_exports(driver)), curve_exports(driver)
    pick(driver, "speaker-role", "civilian")
    wait_until("the role in the address", lambda: "role=civilian" in driver.current_url)
    assert all(shown for _, shown in curve_exports(driver)), curve_exports(driver)
    pick(driver, "speaker-model", "")
    pick(driver, "speaker-role", "")
    wait_until("every group", lambda: "role=" not in driver.current_url)
    # a group unticked: kept in the address, and there again when the address is opened
    groups = get(server, f"/v1/jobs/{ck_job}/curves", by="speaker")["groups"]
    gone = groups[1]
    js(
        driver,
        "Array.from(document.querySelectorAll('#curve-filter input'))"
        ".find(i => i.value === arguments[0]).click()",
        gone,
    )
    wait_until("the group in the address", lambda: query(driver).get("hide") == [gone])
    assert all(shown for _, shown in curve_exports(driver)), curve_exports(driver)
    open_page(driver, driver.current_url)
    ticked = dict(
        js(
            driver,
            "return Array.from(document.querySelectorAll('#curve-filter input'),"
            " i => [i.value, i.checked])",
        )
    )
    assert ticked == {g: g != gone for g in groups}
    drawn = set(
        js(
            driver,
            "return Array.from(document.querySelectorAll('#curves circle.point'),"
            " c => c.dataset.group)",
        )
    )
    assert gone not in drawn and drawn == set(groups) - {gone}


# -- 2. the by-speaker counts ----------------------------------------------------------------


def test_every_by_speaker_group_counts_its_games(driver: Any, server: Server, ck_job: str):
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=speaker")
    data = get(server, f"/v1/jobs/{ck_job}/curves", by="speaker")
    want = {g: sum(g in x["speakers"] for x in data["game_list"]) for g in data["groups"]}
    assert all(want.values())
    labels = js(
        driver,
        "return Array.from(document.querySelectorAll('#curve-filter label'), l => l.textContent)",
    )
    assert sorted(labels) == sorted(f"{g} ({n})" for g, n in want.items())


# -- 3. the options row goes with a job submitted from the page -----------------------------


def test_a_job_submitted_from_the_page_keeps_the_options_row(
    driver: Any, server: Server, shared_data: Path
):
    logs = sorted(CK_ARENA.glob("*.json"))[:2]
    open_page(driver, server.url + "/ui")
    pick(driver, "input-format", "ck-arena")
    js(driver, "document.getElementById('include-chameleon').checked = true")
    pick(driver, "spy-assignment", "marginalise")
    by_id(driver, "job-paths").send_keys(", ".join(map(str, logs)))
    act(driver, by_id(driver, "job-submit").click)
    job_id = wait_until(
        "the job listed",
        lambda: js(
            driver,
            "const r = document.querySelector('#job-list tr[data-job]'); return r && r.dataset.job",
        ),
    )
    params = get(server, f"/v1/jobs/{job_id}")["params"]
    assert params["input_format"] == "ck-arena"
    assert params["spy_assignment"] == "marginalise"
    assert params["include_chameleon"] is True


# -- 4. several files uploaded are one job, each keeping its name --------------------------


def test_several_files_uploaded_from_the_page_are_one_job_with_their_names(
    driver: Any, server: Server, shared_data: Path
):
    logs = sorted(CK_ARENA.glob("*.json"))[:3]
    open_page(driver, server.url + "/ui")
    pick(driver, "input-format", "ck-arena")
    before = {j["id"] for j in get(server, "/v1/jobs")["jobs"]}
    by_id(driver, "job-file").send_keys("\n".join(map(str, logs)))
    act(driver, by_id(driver, "job-submit").click)
    assert "Submitted 1 job:" in status_text(driver), status_text(driver)
    job = get(server, "/v1/jobs")["jobs"][0]
    assert job["id"] not in before and job["files"] == [p.name for p in logs]
    assert job["params"]["input_format"] == "ck-arena"
    wait_done(server, job["id"])
    games = [r["game_id"] for r in get(server, f"/v1/jobs/{job['id']}/records")["records"]]
    assert [g.split("@")[1] for g in games] == [p.stem for p in logs]  # the names kept
    source = wait_until(
        "the job's files in the list",
        lambda: js(
            driver,
            "const r = document.querySelector("
            "`#job-list tr[data-job='${arguments[0]}'] td.source`);"
            " return r && r.textContent",
            job["id"],
        ),
    )
    assert source == ", ".join(p.name for p in logs)


# -- 5. the SpyGame preview: "before" of the new speaker's word; a tie is rank 1 -------------


def test_the_spygame_preview_starts_from_the_new_speakers_word(driver: Any, server: Server):
    load_example(driver, server, "spygame_fruit")
    # the last statement is p4's (the spy, Papaya); the next speaker p1 holds Mango
    assert by_id(driver, "clue-player").get_attribute("value") == "p1"
    by_id(driver, "clue-input").send_keys("It is sweet and yellow inside.")
    act(driver, by_id(driver, "clue-button").click)
    shown = cells(driver)
    last = max(c.turn for c in shown)
    on_map = next(c.p for c in shown if c.turn == last and c.candidate == "Mango")
    before = float(js(driver, "return document.querySelector('#clue-result li').dataset.before"))
    assert before == pytest.approx(on_map, abs=1e-9)
    assert f"P(Mango) {on_map:.3f} →" in by_id(driver, "clue-result").text


def test_a_tie_for_the_top_is_rank_1_in_the_preview(driver: Any, server: Server):
    load_example(driver, server, "spygame_fruit")
    # the server's answer for a clue that leaves both words as probable
    js(
        driver,
        """const real = window.fetch;
        window.fetch = async (url, init) => {
          const r = await real(url, init);
          if (!String(url).includes('/v1/score/preview')) return r;
          const res = await r.json();
          res.after.posterior = {Mango: 0.5, Papaya: 0.5};
          Object.assign(res.after, {secret_probability: 0.5, secret_rank: 2,
            top_candidate: 'Papaya', top_probability: 0.5});
          return new Response(JSON.stringify(res),
            {status: 200, headers: {'Content-Type': 'application/json'}});
        };""",
    )
    by_id(driver, "clue-input").send_keys("a fruit")
    act(driver, by_id(driver, "clue-button").click)
    text = by_id(driver, "clue-result").text
    assert "rank 1, tied with 1 other of 5" in text and "rank 2" not in text
    assert "Mango and Papaya (0.500 each, a tie)" in text


# -- 6. one colour per model within a job, the same in every view ----------------------------


def _rgb(css: str) -> tuple[int, ...]:
    return tuple(int(x) for x in css[css.index("(") + 1 : css.index(")")].split(",")[:3])


def test_each_model_has_its_own_colour_in_every_view_of_a_job(
    driver: Any, server: Server, ck_job: str
):
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=speaker")
    swatches = js(
        driver,
        "return Array.from(document.querySelectorAll('#curve-filter label'), l =>"
        " [l.querySelector('input').value,"
        " getComputedStyle(l.querySelector('.swatch')).backgroundColor])",
    )
    colour = {}
    for group, css in swatches:
        model = group.split(" · ")[0]
        assert colour.setdefault(model, _rgb(css)) == _rgb(css), group  # a model's, every role
    models = sorted(colour)
    # distinct: no two models' colours nearer than 60 in RGB (gpt-4o #3955d0 and
    # llama-3.3-70b-instruct #396cd0 were 23 apart)
    near = [
        (a, b)
        for i, a in enumerate(models)
        for b in models[i + 1 :]
        if sum((x - y) ** 2 for x, y in zip(colour[a], colour[b], strict=True)) ** 0.5 < 60
    ]
    assert not near, near
    # the same colour in the plane's means and the comparison
    means = js(
        driver,
        "return Array.from(document.querySelectorAll('#plane-chart .point.mean'),"
        " m => [m.dataset.group, getComputedStyle(m).fill])",
    )
    assert means
    for group, css in means:
        assert _rgb(css) == colour[group.split(" · ")[0]], group
    side = js(
        driver,
        "return Array.from(document.querySelectorAll('#compare-side .estimate'),"
        " c => [c.dataset.model, getComputedStyle(c).fill])",
    )
    assert side
    for model, css in side:
        assert _rgb(css) == colour[model], model


# -- 7. exports: no CSP violation, a title and a legend, labels of what they download now ----


def test_a_curve_export_has_its_title_and_legend_and_no_csp_violation(
    driver: Any, server: Server, ck_job: str, tmp_path: Path
):
    from selenium.webdriver.common.by import By

    folder = _downloads(driver, tmp_path / "dl")
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=speaker&role=spy")
    fig = driver.find_element(By.CSS_SELECTOR, '#curves figure[data-metric="entropy_bits"]')
    caption = js(
        driver, "return arguments[0].querySelector('figcaption').firstChild.textContent", fig
    )
    fig.find_element(By.CSS_SELECTOR, 'button[data-format="svg"]').click()
    svg = ET.fromstring(_downloaded(folder, "curve-entropy-bits.svg"))
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    assert texts[0] and caption.startswith(texts[0]), (texts[0], caption)
    spies = [
        g
        for g in get(server, f"/v1/jobs/{ck_job}/curves", by="speaker")["groups"]
        if g.endswith(" · spy")
    ]
    for g in spies:  # the legend: every group drawn, in the file itself
        assert g in texts, g
    assert all(not el.get("style") for el in svg.iter())
    fig.find_element(By.CSS_SELECTOR, 'button[data-format="png"]').click()
    png = _downloaded(folder, "curve-entropy-bits.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # (console_clean: no CSP violation while the files were made)
    # the comparison's buttons say the models compared now
    models = get(server, f"/v1/jobs/{ck_job}/compare")["models"]
    pick(
        driver,
        "model-b",
        next(
            m
            for m in models
            if m != by_id(driver, "model-a").get_attribute("value")
            and m != by_id(driver, "model-b").get_attribute("value")
        ),
    )
    b = by_id(driver, "model-b").get_attribute("value")
    label = (
        "return document.querySelector('#compare-diff-caption button[data-format=\"svg\"]')"
        ".getAttribute('aria-label')"
    )
    wait_until("the buttons named anew", lambda: b in js(driver, label))
    assert js(driver, label).startswith("Download Paired difference, ")


def test_the_job_report_page_ships_the_csvs_it_names(server: Server, ck_job: str):
    import base64
    import re

    r = httpx.get(f"{server.url}/v1/jobs/{ck_job}/report.html", timeout=120)
    assert r.status_code == 200, r.text
    link = r'<a download="([a-z_]+\.csv)" href="data:text/csv;base64,([^"]+)">\1</a>'
    links = dict(re.findall(link, r.text))
    assert {"curves.csv", "info_gain.csv", "leakage_by_group.csv"} <= set(links)
    # every CSV the page names is such a link (it named files it did not ship)
    assert not re.search(r"[a-z_]+\.csv", re.sub(link, "", r.text))
    head = base64.b64decode(links["curves.csv"]).decode().splitlines()[0]
    assert "metric" in head and "group" in head


# -- 8. the records table of a SpyGame job ---------------------------------------------------


def test_the_records_of_a_spygame_job_show_what_the_logs_have(
    driver: Any, server: Server, ck_job: str
):
    open_page(driver, f"{server.url}/ui?job={ck_job}")
    heads = js(
        driver,
        "return Array.from(document.querySelectorAll('#job-records-table thead th'),"
        " t => t.dataset.csv)",
    )
    for col in ("winner", "category", "models", "mean P(speaker's word)"):
        assert col in heads, heads
    # no column that is "–" in every row (a SpyGame has no final P(secret); CK-Arena no difficulty)
    empty = js(
        driver,
        """const t = document.getElementById('job-records-table');
        const n = t.tHead.rows[0].cells.length;
        return Array.from({length: n}, (_, i) => i).filter(i =>
          Array.from(t.tBodies[0].rows).every(r => r.cells[i].textContent === '–'))
          .map(i => t.tHead.rows[0].cells[i].dataset.csv);""",
    )
    assert not empty, empty
    reports = [
        json.loads(line)
        for line in httpx.get(
            f"{server.url}/v1/jobs/{ck_job}/results", timeout=TIMEOUT
        ).text.splitlines()
        if line.strip()
    ]
    rows = js(
        driver,
        """const t = document.getElementById('job-records-table');
        const heads = Array.from(t.tHead.rows[0].cells, c => c.dataset.csv);
        return Array.from(t.tBodies[0].rows, r => Object.fromEntries(
          Array.from(r.cells, (c, i) => [heads[i], c.dataset.csv ?? c.textContent])));""",
    )
    by_game = {r["game"]: r for r in rows}
    for rep in reports:
        row = by_game[rep["game_id"]]
        meta = rep["meta"]
        assert row["winner"] == {"civilian": "civilians", "spy": "spies"}[meta["winner_role"]]
        assert row["category"] == meta["topic_category"]
        assert row["models"] == ", ".join(sorted(set(meta["models"].values())))
        ps = [s["secret_probability"] for s in rep["steps"] if s["counted"]]
        assert float(row["mean P(speaker's word)"]) == pytest.approx(sum(ps) / len(ps))
    # one line a row at 1400 px (it wrapped to ~155 px)
    driver.set_window_size(1400, 900)
    heights = js(
        driver,
        "return Array.from(document.querySelectorAll('#job-records-table tbody tr'),"
        " r => r.getBoundingClientRect().height)",
    )
    assert max(heights) < 45, heights
    shot(driver, "records-1400", 1400, 900)
    shot(driver, "records-390", 390, 844)


# -- 9. the game view shows what the log has --------------------------------------------------


def test_a_ck_arena_game_shows_models_outcome_abstentions_and_how_players_left(
    driver: Any, server: Server, ck_job: str
):
    records = get(server, f"/v1/jobs/{ck_job}/records")["records"]
    rec = next(
        r for r in records if r["game_id"] and TABLE_DESK.removesuffix(".json") in r["game_id"]
    )
    game = get(server, f"/v1/jobs/{ck_job}/games", game_id=rec["game_id"], record=rec["record"])
    t = game["transcript"]
    raw = json.loads((CK_ARENA / TABLE_DESK).read_text())["game_record"]
    statements = raw["game_process"]["statements"]
    open_page(driver, f"{server.url}/ui?job={ck_job}&game={rec['game_id']}&record={rec['record']}")
    # every statement of the log is a row, the empty one said so, in its place
    rows = js(
        driver,
        "return Array.from(document.querySelectorAll('#turns tbody tr'),"
        " r => [r.dataset.turn || null, r.dataset.statement || null, r.textContent])",
    )
    assert len(rows) == len(statements) == len(t["turns"]) + 1
    (empty,) = [i for i, s in enumerate(statements) if not s["content"].strip()]
    assert rows[empty][1] == str(statements[empty]["statement_id"]) and "empty" in rows[empty][2]
    # the speaker's model on each turn
    heads = js(
        driver,
        "return Array.from(document.querySelectorAll('#turns thead th'), t => t.textContent)",
    )
    assert "model" in heads
    models = js(
        driver,
        "return Array.from(document.querySelectorAll('#turns tbody tr[data-turn] td.model'),"
        " c => c.textContent)",
    )
    spoken = [s for s in statements if s["content"].strip()]
    assert models == [s["llm_id"] for s in spoken]
    # the outcome
    winners = [str(p["player_id"]) for p in raw["players"] if p["is_winner"]]
    role = {"civilian": "civilians", "undercover": "spies"}[raw["game_summary"]["winner_role"]]
    outcome = by_id(driver, "outcome").text
    assert role in outcome and all(w in outcome for w in winners), outcome
    assert f"outcome: the {role} won" in by_id(driver, "game-meta").text
    assert "null" not in by_id(driver, "votes").text  # nothing left out written as "null"
    # the abstaining vote
    assert "1 abstaining vote" in by_id(driver, "abstentions").text
    # the judges' elimination is not a vote
    causes = t["meta"]["elimination_causes"]
    (judged,) = [p for p, c in causes.items() if c == "metric"]
    captions = js(
        driver, "return Array.from(document.querySelectorAll('#votes caption'), c => c.textContent)"
    )
    assert not any(f"{judged} (" in c for c in captions), captions
    listed = js(
        driver,
        "return Array.from(document.querySelectorAll('#votes li[data-cause=\"metric\"]'),"
        " l => l.dataset.player)",
    )
    assert listed == [judged]
    shot(driver, "ck-arena-game-1400", 1400, 900)
    shot(driver, "ck-arena-game-390", 390, 844)
    # a game without abstentions: nothing in their place (it once said "null")
    first = records[0]
    open_page(driver, f"{server.url}/ui?job={ck_job}&game={first['game_id']}&record=0")
    assert not js(driver, "return document.getElementById('abstentions')")
    assert "null" not in by_id(driver, "votes").text


# -- 10. the page's words ------------------------------------------------------------------------


def test_the_page_names_its_own_controls_not_flags_or_routes(
    driver: Any, server: Server, tmp_path: Path
):
    open_page(driver, server.url + "/ui")
    words = js(
        driver,
        """return import('./ui/assets/api.js').then(m => [
          m.pageWords('no adapter recognises it; pass --input-format (leakage, ck-arena)'),
          m.pageWords('unknown format; set the input_format query parameter'),
          m.pageWords('request body larger than 1 bytes; send fewer games per request'
            + ' or submit a job (POST /v1/jobs)'),
          m.pageWords('retry in 3 s, or submit a job (POST /v1/jobs), which has no deadline')]);""",
    )
    for w in words:
        assert "--" not in w and "/v1/" not in w and "query parameter" not in w, w
    assert "Input format" in words[0] and "Input format" in words[1]
    # a file no adapter reads: the message names the page's control
    odd = tmp_path / "odd.json"
    odd.write_text('{"foo": 1}')
    act(driver, lambda: by_id(driver, "file-input").send_keys(str(odd)), expect="error")
    assert "Input format" in status_text(driver) and "--input-format" not in status_text(driver)


def test_a_binary_job_upload_says_at_which_byte(driver: Any, server: Server, tmp_path: Path):
    blob = tmp_path / "binary.json"
    head = b'{"game": "chameleon", "id": "x'
    blob.write_bytes(head + bytes(range(128, 256)))
    open_page(driver, server.url + "/ui")
    by_id(driver, "job-file").send_keys(str(blob))
    act(driver, by_id(driver, "job-submit").click, expect="error")
    assert f"not UTF-8 text (byte {len(head)}:" in status_text(driver), status_text(driver)


def test_a_failed_upload_takes_pasted_off_the_address(driver: Any, server: Server, tmp_path: Path):
    from .test_explorer_logs_browser import paste

    open_page(driver, server.url + "/ui")
    paste(driver, (EXAMPLES / "chameleon_sports.json").read_text())
    assert "pasted" in query(driver)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    act(driver, lambda: by_id(driver, "file-input").send_keys(str(bad)), expect="error")
    assert "pasted" not in query(driver), driver.current_url


def test_one_group_is_one_group(driver: Any, server: Server):
    r = httpx.post(
        server.url + "/v1/jobs",
        content=(EXAMPLES / "chameleon_sports.json").read_bytes(),
        headers={"content-type": "application/json"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 202, r.text
    job_id = wait_done(server, r.json()["id"])
    open_page(driver, f"{server.url}/ui?job={job_id}&by=model")
    assert status_text(driver).endswith(": 1 group."), status_text(driver)


# -- item 2: several models at once --------------------------------------------------------------


def test_three_models_picked_drive_the_curves_plane_pairs_and_exports(
    driver: Any, server: Server, ck_job: str, tmp_path: Path
):
    import csv
    import io
    from itertools import combinations

    from selenium.webdriver.common.by import By

    folder = _downloads(driver, tmp_path / "dl")
    open_page(driver, f"{server.url}/ui?job={ck_job}&by=speaker")
    models = sorted(get(server, f"/v1/jobs/{ck_job}/compare")["models"])
    three = models[:3]
    for m in three:
        act(
            driver,
            lambda m=m: js(
                driver,
                "Array.from(document.querySelectorAll('#model-select input'))"
                ".find(i => i.value === arguments[0]).click()",
                m,
            ),
        )
    assert sorted(query(driver)["models"]) == three
    # the models picked take the palette first: each its own colour however many the job has
    swatch = dict(
        js(
            driver,
            "return Array.from(document.querySelectorAll('#model-select label'), l =>"
            " [l.querySelector('input').value,"
            " getComputedStyle(l.querySelector('.swatch')).backgroundColor])",
        )
    )
    palette = js(driver, "return import('./ui/assets/charts.js').then(m => m.PALETTE)")
    assert [_rgb(swatch[m]) for m in three] == [
        tuple(int(p[i : i + 2], 16) for i in (1, 3, 5)) for p in palette[:3]
    ]
    drawn = set(
        js(
            driver,
            "return Array.from(document.querySelectorAll('#curves circle.point'),"
            " c => c.dataset.group)",
        )
    )
    groups = get(server, f"/v1/jobs/{ck_job}/curves", by="speaker")["groups"]
    assert drawn == {g for g in groups if g.split(" · ")[0] in three}
    means = js(
        driver,
        "return Array.from(document.querySelectorAll('#plane-chart .point.mean'),"
        " m => m.dataset.group)",
    )
    assert means and {g.split(" · ")[0] for g in means} <= set(three)
    # every pair, per role, the API's numbers
    want = {}
    for a, b in combinations(three, 2):
        for r in get(server, f"/v1/jobs/{ck_job}/compare", a=a, b=b)["rows"]:
            if r["role"] != "(all roles)":
                want[(f"{a} − {b}", r["role"])] = r["difference_bits"]
    box = driver.find_element(By.CSS_SELECTOR, '.exports[data-for="pairs-table"] button')
    box.click()
    rows = list(csv.reader(io.StringIO(_downloaded(folder, "pairs-table.csv").decode())))
    assert rows[0][:2] == ["pair (A − B)", "role"]
    shown = {(r[0], r[1]): r[5] for r in rows[1:]}
    assert set(shown) == set(want)
    for k, v in want.items():
        assert shown[k] == ("–" if v is None else f"{v:.3f}"), k
    # the curves' export: the legend names the groups of the three models
    fig = driver.find_element(By.CSS_SELECTOR, '#curves figure[data-metric="entropy_bits"]')
    fig.find_element(By.CSS_SELECTOR, 'button[data-format="svg"]').click()
    svg = ET.fromstring(_downloaded(folder, "curve-entropy-bits.svg"))
    texts = {"".join(t.itertext()) for t in svg.iter(f"{SVG}text")}
    assert drawn <= texts
    shot(driver, "three-models-1400", 1400, 900)
    shot(driver, "three-models-390", 390, 844)
    # opened again from its address: the same three
    open_page(driver, driver.current_url)
    picked = js(
        driver,
        "return Array.from(document.querySelectorAll('#model-select input:checked'), i => i.value)",
    )
    assert sorted(picked) == three
