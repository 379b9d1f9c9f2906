"""The leaderboard, a job's first view in the explorer, in a real headless Chromium against a
real ``leakage serve`` (test_explorer_browser's browser and console check): a job of the real
CK-Arena dev logs (co-occurrence, read in place: ``shared_data``, skipped without) shows one
table per game kind and role before anything else of the job, with the reader's sentence
above it, the numbers of ``GET /v1/jobs/{id}/leaderboard``, the rows of too few games
unranked and labelled, the job's colour per model, headers that sort by click and by
keyboard, and a CSV download; screenshots at 1400 and 390 px ($EXPLORER_SCREENSHOTS)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from . import browser_support as support
from . import test_explorer_browser as page
from .browser_support import CK_ARENA, SHOTS, TIMEOUT, ck_arena_job, get, js, sized, wait_done
from .test_explorer_browser import act, by_id, open_page
from .test_service_server import Server

# test_explorer_browser's browser and its console check (no error, no CSP violation)
browser_paths, driver, console_clean = page.browser_paths, page.driver, page.console_clean
server_start, server = support.shared_data_server_start, support.server

ROWS = """return Array.from(document.querySelectorAll(arguments[0] + ' tbody tr'), tr => {
    const cell = k => tr.querySelector(`td[data-key="${k}"]`);
    return {model: tr.dataset.model, cls: tr.className,
            rank: cell('rank').textContent, model_text: cell('model').textContent,
            leakage: cell('leakage_bits').dataset.value ?? null,
            leakage_text: cell('leakage_bits').textContent,
            games: +cell('games').dataset.value, clues: +cell('clues').dataset.value,
            own: cell('own_word_probability').dataset.value ?? null,
            win: cell('win_rate').dataset.value ?? null,
            apart: cell('not_separable_from').dataset.csv,
            fill: tr.querySelector('svg.swatch-mark rect').getAttribute('fill'),
            dashed: !!tr.querySelector('svg.swatch-mark rect.dash')};
})"""


def fnum(v: str | None) -> float | None:
    return None if v is None else float(v)


def shown(driver: Any, table_id: str) -> list[dict[str, Any]]:
    return list(js(driver, ROWS, f"#{table_id}"))


def check_table(driver: Any, table_id: str, rows: list[dict[str, Any]], board: dict) -> None:
    """The table shows exactly the API's rows: each figure its value (and as printed)."""
    got = {r["model"]: r for r in shown(driver, table_id)}
    assert sorted(got) == sorted(r["model"] for r in rows)
    for want in rows:
        g = got[want["model"]]
        assert fnum(g["leakage"]) == want["leakage_bits"]
        assert g["leakage_text"].startswith(f"{want['leakage_bits']:.3f}")
        if want["leakage_low"] is not None:
            assert f"[{want['leakage_low']:.3f}, {want['leakage_high']:.3f}]" in g["leakage_text"]
        assert fnum(g["own"]) == want["own_word_probability"]
        assert fnum(g["win"]) == want["win_rate"]
        assert (g["games"], g["clues"]) == (want["games"], want["clues"])
        if want["rank"] is None:  # too few games: unranked, and it says why
            assert g["rank"] == "unranked" and "unranked" in g["cls"]
            assert f"fewer than {board['min_games']} games" in g["model_text"]
        else:
            assert g["rank"] == str(want["rank"]) and "unranked" not in g["cls"]
        assert g["apart"] == "; ".join(want["not_separable_from"])


def order(driver: Any, table_id: str) -> list[str]:
    return [r["model"] for r in shown(driver, table_id)]


def test_the_leaderboard_is_a_ck_arena_jobs_first_view(
    driver: Any, server: Server, shared_data: Path
) -> None:
    from selenium.webdriver.common.keys import Keys

    if not CK_ARENA.is_dir():
        pytest.skip(f"needs the CK-Arena dev logs in {CK_ARENA}")
    job_id = ck_arena_job(server, timeout=600, path=str(CK_ARENA))
    open_page(driver, f"{server.url}/ui?job={job_id}")
    board = get(server, f"/v1/jobs/{job_id}/leaderboard")
    # first: visible, before the curves, the plane and the records
    first = js(
        driver,
        """const lb = document.getElementById('leaderboard');
        const later = ['speaker-picker', 'model-select', 'curves', 'plane-section',
                       'job-records-table'].map(id => document.getElementById(id));
        return !lb.hidden && later.every(
            e => lb.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING);""",
    )
    assert first
    # the reader's sentence, as the result says it, above the tables
    reader = by_id(driver, "leaderboard-reader")
    assert reader.text == board["reader_note"]
    assert reader.text.startswith("Leakage is a lower bound set by the reader")
    assert "cooccurrence" in reader.text
    # one table per game kind and role, in the result's order, each with its rows
    blocks: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in board["rows"]:
        blocks.setdefault((row["game"], row["role"]), []).append(row)
    tables = js(
        driver,
        "return Array.from(document.querySelectorAll('#leaderboard table.leaderboard'),"
        " t => [t.id, t.dataset.game, t.dataset.role, t.getBoundingClientRect().top])",
    )
    assert [(g, role) for _, g, role, _ in tables] == list(blocks)
    assert reader.rect["y"] < min(t[3] for t in tables) + js(driver, "return window.scrollY")
    ids = {(g, role): t for t, g, role, _ in tables}
    for key, rows in blocks.items():
        check_table(driver, ids[key], rows, board)
    assert any(r["rank"] is None for r in board["rows"]), "the job has unranked rows"
    # the statements are the unit CK-Arena's result names
    civ = ids[("spygame", "civilian")]
    heads = js(
        driver,
        "return Array.from(document.querySelectorAll(arguments[0] + ' thead th'),"
        " th => th.textContent)",
        f"#{civ}",
    )
    assert "statements" in heads and any("bits per statement" in h for h in heads)
    # the job's colours: the palette in the models' sorted order (no model picked)
    palette = js(driver, "return import('./ui/assets/charts.js').then(m => m.PALETTE)")
    job_models = sorted(get(server, f"/v1/jobs/{job_id}/compare")["models"])
    for row in shown(driver, civ):
        k = job_models.index(row["model"])
        assert row["fill"].lower() == palette[k % len(palette)].lower()
        assert row["dashed"] == (k >= len(palette))  # a colour come back: dashed, barred
    # default order: ranked by rank, then the unranked by leakage
    civ_rows = blocks[("spygame", "civilian")]
    ranked = sorted((r for r in civ_rows if r["rank"] is not None), key=lambda r: r["rank"])
    assert order(driver, civ)[: len(ranked)] == [r["model"] for r in ranked]

    # screenshots of the leaderboard (in its own order) at 1400 px and at phone width;
    # nothing sticks out of the page at 390 px (the tables scroll sideways in their box)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for width in (1400, 390):
        with sized(driver, width, 900):
            tall = js(driver, "return document.getElementById('leaderboard').scrollHeight")
            driver.set_window_size(width, min(int(tall) + 400, 8000))
            js(driver, "document.getElementById('leaderboard').scrollIntoView()")
            png = by_id(driver, "leaderboard").screenshot_as_png
            (SHOTS / f"leaderboard-{width}.png").write_bytes(png)
            if width == 390:
                wide = js(
                    driver,
                    """const w = document.documentElement.clientWidth;
                    return Array.from(document.querySelectorAll('#leaderboard *'))
                        .filter(e => e.getBoundingClientRect().right > w + 1
                                     && !e.closest('.scroll'))
                        .map(e => e.tagName + ': ' + e.textContent.slice(0, 40));""",
                )
                assert not wide, wide

    # sorting: a click on the leakage header sorts by it, again the other way
    def by_leakage(desc: bool) -> list[str]:
        rows = sorted(civ_rows, key=lambda r: r["leakage_bits"], reverse=desc)
        return [r["model"] for r in rows]

    header = f'#{civ} button[data-sort="leakage_bits"]'
    js(driver, "document.querySelector(arguments[0]).click()", header)
    assert order(driver, civ) == by_leakage(False)
    aria = "return document.querySelector(arguments[0]).closest('th').getAttribute('aria-sort')"
    assert js(driver, aria, header) == "ascending"
    js(driver, "document.querySelector(arguments[0]).click()", header)
    assert order(driver, civ) == by_leakage(True)
    assert js(driver, aria, header) == "descending"
    # and by keyboard: the focus stays on the header, Enter sorts by games
    games = f'#{civ} button[data-sort="games"]'
    js(driver, "document.querySelector(arguments[0]).focus()", games)
    driver.switch_to.active_element.send_keys(Keys.ENTER)
    got = shown(driver, civ)
    assert [r["games"] for r in got] == sorted(r["games"] for r in civ_rows)
    assert js(driver, "return document.activeElement.dataset.sort") == "games"
    check_table(driver, civ, civ_rows, board)  # the same numbers, in another order
    # the CSV: the API's (the whole leaderboard), downloaded from the page
    csv_button = by_id(driver, "leaderboard-csv")
    assert csv_button.is_displayed()
    act(driver, csv_button.click)
    assert by_id(driver, "status").text.startswith("Downloaded leakage-leaderboard-")
    # every table also has its own CSV button (export.js)
    for t in ids.values():
        assert js(
            driver,
            'return !!document.querySelector(`.exports[data-for="${arguments[0]}"] button`)',
            t,
        )


def test_a_job_with_nothing_to_rank_says_so_in_place_of_the_tables(
    driver: Any, server: Server
) -> None:
    """A job whose one record failed: the API's 409 job_not_ready becomes the leaderboard's
    note (the rest of the job's view opens as usual), no table, no CSV button."""
    r = httpx.post(server.url + "/v1/jobs", content=b'{"not": "a transcript"}\n', timeout=TIMEOUT)
    assert r.status_code == 202, r.text
    job_id = r.json()["id"]
    wait_done(server, job_id, timeout=TIMEOUT)
    assert httpx.get(f"{server.url}/v1/jobs/{job_id}/leaderboard").status_code == 409
    open_page(driver, f"{server.url}/ui?job={job_id}")
    assert by_id(driver, "leaderboard").is_displayed()
    assert by_id(driver, "leaderboard-note").text.startswith("No leaderboard yet: ")
    assert js(driver, "return document.querySelectorAll('#leaderboard table').length") == 0
    assert not by_id(driver, "leaderboard-csv").is_displayed()
