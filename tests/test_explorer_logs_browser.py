"""The explorer (``/ui``) with the logs the project reads besides its own transcripts: a raw
CK-Arena log and Liang's SpyGame log, uploaded and pasted, drawn in every view (heat maps, the
spy posterior with the real spies marked, votes, the turn table, a second backend, the clue
preview) as the project's own format is; and the game view's failures, each said and the
game taken off the page.

The same headless Chromium and ``leakage serve`` as ``test_explorer_browser.py`` (its
fixtures); the logs are read in place from ``../shared/data`` (``shared_data``: skipped
without it). Screenshots at 1400x900 and 390x844 go to ``$EXPLORER_SCREENSHOTS``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
import pytest

from . import test_explorer_browser as page
from .browser_support import TIMEOUT, WINDOW, js, png, sized
from .test_explorer_browser import (
    SPORTS,
    act,
    assert_grid_is,
    by_id,
    cells,
    choose,
    grid,
    load_example,
    open_page,
    options,
    posterior_grid,
    status_text,
    submit_job,
)
from .test_service_server import Server

# test_explorer_browser's browser and its console check (no error, no CSP violation)
browser_paths, driver, console_clean = page.browser_paths, page.driver, page.console_clean
server_start, server = page.server_start, page.server  # its server too

CK_ARENA = Path("ck-arena-dev") / "logs"
LIANG = Path("spygame-liang") / "benchmark" / "gpt-3.5-turbo-0613" / "gpt-4-0613" / "Durian.json"


def ck_arena_logs(shared_data: Path, n: int) -> list[Path]:
    logs = sorted((shared_data / CK_ARENA).glob("*.json"))
    if len(logs) < n:
        pytest.skip(f"needs {n} CK-Arena logs in {shared_data / CK_ARENA}")
    return logs[:n]


def score_raw(server: Server, body: bytes, backend: str = "cooccurrence", **params: str) -> Any:
    """What ``POST /v1/score`` answers for the log as it is (its adapter, found by content)."""
    r = httpx.post(
        server.url + "/v1/score",
        params={"backend": backend, **params},
        content=body,
        headers={"content-type": "application/json"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text
    return r.json()


def read_log(server: Server, body: bytes, name: str) -> list[dict[str, Any]]:
    """The games ``POST /v1/transcripts`` reads from the file ``name``."""
    r = httpx.post(
        server.url + "/v1/transcripts", params={"filename": name}, content=body, timeout=TIMEOUT
    )
    assert r.status_code == 200, r.text
    return list(r.json()["games"])


def paste(driver: Any, text: str) -> None:
    box = by_id(driver, "transcript-input")
    box.clear()
    box.click()
    driver.execute_cdp_cmd("Input.insertText", {"text": text})
    act(driver, by_id(driver, "score-button").click)


def upload(driver: Any, path: Path, *, expect: str = "ready") -> None:
    act(driver, lambda: by_id(driver, "file-input").send_keys(str(path)), expect=expect)


def spy_cells(driver: Any) -> dict[tuple[int, str], float]:
    rows = js(
        driver,
        "return Array.from(document.querySelectorAll('#spy-heatmap rect.cell'),"
        " c => [+c.dataset.turn, c.dataset.player, +c.dataset.p])",
    )
    return {(t, who): p for t, who, p in rows}


def starred_players(driver: Any) -> set[str]:
    """The spy map's columns marked as real spies."""
    labels = js(
        driver,
        "return Array.from(document.querySelectorAll('#spy-heatmap text.col-label.secret'),"
        " t => t.textContent)",
    )
    return {str(t).removeprefix("★ ") for t in labels}


def view_shown(driver: Any) -> bool:
    return bool(js(driver, "return !document.getElementById('view').hidden"))


def shot(driver: Any, name: str, size: tuple[int, int]) -> Path:
    """A PNG of the window at ``size`` (the viewport as a person sees it, not the whole
    page), then the window set back."""
    with sized(driver, *size):
        return png(driver, name)


def assert_spygame_drawn(driver: Any, game: Mapping[str, Any], report: Mapping[str, Any]) -> None:
    """The heat map, the spy posterior (its real spies starred), the votes and the clue
    preview's players of ``game`` (a transcript) are those of ``report`` (the API's)."""
    assert view_shown(driver)
    assert_grid_is(grid(cells(driver)), posterior_grid(report))
    assert_grid_is(spy_cells(driver), posterior_grid(report, "spy_posterior"))
    spies = {p["id"] for p in game["players"] if p["role"] == "spy"}
    assert spies and starred_players(driver) == spies
    votes = by_id(driver, "votes").text
    assert "No votes" not in votes and game["votes"]
    for v in game["votes"]:
        assert v["voter"] in votes and v["target"] in votes
    rows = js(driver, "return document.querySelectorAll('#turns .turn').length")
    assert rows == len(report["steps"]) == len(game["turns"])
    assert options(driver, "clue-player") == [p["id"] for p in game["players"]]


def test_a_raw_ck_arena_log_uploaded_or_pasted_is_drawn_in_every_view(
    driver: Any, server: Server, shared_data: Path
):
    (path,) = ck_arena_logs(shared_data, 1)
    body = path.read_bytes()
    report = score_raw(server, body)
    (game,) = read_log(server, body, path.name)
    # its id is the command line's: the game's own and the file's name
    assert game["id"] == f"{json.loads(body)['game_record']['game_id']}@{path.stem}"
    assert report["game"] == "spygame"

    # after another game, so that nothing of it may stay (the preview's players were kept)
    load_example(driver, server, SPORTS)
    upload(driver, path)
    assert_spygame_drawn(driver, game, report)
    assert path.name in status_text(driver) and "undefined" not in status_text(driver)
    shot(driver, "logs-1-ck-arena-1400", (1400, 900))
    shot(driver, "logs-1-ck-arena-390", (390, 844))

    # the clue preview: said by the next player, scored like the rest
    by_id(driver, "clue-input").clear()
    by_id(driver, "clue-input").send_keys("a hoop on a pole")
    act(driver, by_id(driver, "clue-button").click)
    assert js(driver, "return document.getElementById('clue-result').dataset.state") == "done"

    # a second backend: its map beside the first, as for the project's own transcripts
    choose(driver, "compare-select", "embedding")
    other = score_raw(server, body, "embedding")
    assert_grid_is(grid(cells(driver, "heatmap-compare")), posterior_grid(other))
    choose(driver, "compare-select", "")

    # pasted, the same
    load_example(driver, server, SPORTS)
    paste(driver, body.decode())
    assert_spygame_drawn(driver, {**game}, report)

    # the options: the spy posterior marginalised over both words
    choose(driver, "spy-assignment", "marginalise")
    marg = score_raw(server, body, spy_assignment="marginalise")
    assert_grid_is(spy_cells(driver), posterior_grid(marg, "spy_posterior"))
    assert posterior_grid(marg, "spy_posterior") != posterior_grid(report, "spy_posterior")
    choose(driver, "spy-assignment", "known")


def test_a_file_of_several_raw_logs_names_each_game_in_the_picker(
    driver: Any, server: Server, shared_data: Path, tmp_path: Path
):
    logs = ck_arena_logs(shared_data, 3)
    many = tmp_path / "three-games.jsonl"
    many.write_text("".join(json.dumps(json.loads(p.read_text())) + "\n" for p in logs))
    games = read_log(server, many.read_bytes(), many.name)
    open_page(driver, server.url + "/ui")
    upload(driver, many)
    labels = js(
        driver,
        "return Array.from(document.getElementById('game-select').options, o => o.text)",
    )
    assert len(labels) == len(games) == 3
    for i, (label, g) in enumerate(zip(labels, games, strict=True), start=1):
        words = g["words"]
        assert label == f"{i}. {g['id']} ({words['civilian']} / {words['spy']})", label
    assert len({g["id"] for g in games}) == 3
    choose(driver, "game-select", options(driver, "game-select")[2])
    report = score_raw(server, json.dumps(games[2]).encode())
    assert_spygame_drawn(driver, games[2], report)


def test_a_liang_spygame_log_is_drawn_in_every_view(driver: Any, server: Server, shared_data: Path):
    path = shared_data / LIANG
    if not path.is_file():
        pytest.skip(f"needs {path}")
    body = path.read_bytes()
    (game,) = read_log(server, body, path.name)
    assert game["id"] == "Durian"
    open_page(driver, server.url + "/ui")
    upload(driver, path)
    assert_spygame_drawn(driver, game, score_raw(server, body))
    shot(driver, "logs-2-liang-1400", (1400, 900))


def test_a_failed_upload_names_the_file_and_takes_the_game_off_the_page(
    driver: Any, server: Server, shared_data: Path, tmp_path: Path
):
    load_example(driver, server, SPORTS)
    assert view_shown(driver)
    # Latin-1: refused, naming the file and the byte, as the command line does
    latin = tmp_path / "latin-1.json"
    game = json.loads(
        (Path(__file__).parents[1] / "corpora/examples/chameleon_sports.json").read_text()
    )
    game["turns"][0]["text"] = "crème brûlée"
    latin.write_bytes(json.dumps(game, ensure_ascii=False).encode("latin-1"))
    upload(driver, latin, expect="error")
    message = status_text(driver)
    assert "latin-1.json" in message and "not UTF-8" in message, message
    assert not view_shown(driver) and not cells(driver)

    # a truncated log: the line and column where it stops (its trailing blanks aside), not
    # line 1
    (path,) = ck_arena_logs(shared_data, 1)
    text = path.read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    try:
        json.loads(cut.read_text().strip())  # as the reader reads it
    except json.JSONDecodeError as err:
        where = f"line {err.lineno} column {err.colno}"
    load_example(driver, server, SPORTS)
    upload(driver, cut, expect="error")
    message = status_text(driver)
    assert "cut.json" in message and where in message and "line 1 " not in message, message
    assert not view_shown(driver)
    shot(driver, "logs-3-failed-upload-1400", (1400, 900))

    # pasted, the same
    load_example(driver, server, SPORTS)
    box = by_id(driver, "transcript-input")
    box.clear()
    box.click()
    driver.execute_cdp_cmd(
        "Input.insertText", {"text": '{"format": "leakage.transcript/1",\n "game": '}
    )
    act(driver, by_id(driver, "score-button").click, expect="error")
    message = status_text(driver)
    assert "pasted" in message and "line 2 column" in message, message
    assert not view_shown(driver)


def test_a_blank_clue_is_refused_in_words(driver: Any, server: Server):
    load_example(driver, server, SPORTS)
    by_id(driver, "clue-input").clear()
    by_id(driver, "clue-input").send_keys("   ")
    by_id(driver, "clue-button").click()
    text = by_id(driver, "clue-result").text
    assert "blank" in text and "[^" not in text and "pattern" not in text, text
    # the API says it in words too
    r = httpx.post(
        server.url + "/v1/score/preview",
        json={
            "transcript": json.loads(
                (Path(__file__).parents[1] / f"corpora/examples/{SPORTS}.json").read_text()
            ),
            "clue": " ",
        },
        timeout=TIMEOUT,
    )
    assert r.status_code == 422 and "blank" in r.json()["error"]["message"], r.text
    assert "[^" not in r.text


def test_two_heat_maps_show_every_column_at_1400_px(driver: Any, server: Server):
    driver.set_window_size(1400, 900)
    try:
        load_example(driver, server, SPORTS)
        choose(driver, "compare-select", "embedding")
        hidden = js(
            driver,
            """const out = [];
            for (const id of ['heatmap', 'heatmap-compare']) {
              const box = document.getElementById(id).parentElement.getBoundingClientRect();
              for (const c of document.querySelectorAll('#' + id + ' rect.cell[data-turn="1"]')) {
                const r = c.getBoundingClientRect();
                if (r.left < box.left - 0.5 || r.right > box.right + 0.5)
                  out.push(id + ':' + c.dataset.candidate);
              }
            }
            return [out, document.querySelectorAll('#heatmap rect.cell[data-turn="1"]').length];""",
        )
        assert hidden[1] == 16 and hidden[0] == [], hidden
        shot(driver, "logs-4-two-maps-1400", (1400, 900))
    finally:
        driver.set_window_size(*WINDOW)
        choose(driver, "compare-select", "")


def test_back_from_a_jobs_game_to_its_curves_takes_the_game_off(driver: Any, server: Server):
    from .conftest import EXAMPLES

    batch = EXAMPLES / "chameleon_batch.jsonl"
    first = json.loads(batch.read_text().splitlines()[0])
    job_id = submit_job(server, batch.read_bytes())
    open_page(driver, f"{server.url}/ui?job={job_id}")
    assert not view_shown(driver)
    # the game, as a link of a curve point opens it: a new entry of the history
    act(
        driver,
        lambda: js(
            driver,
            "history.pushState(null, '', arguments[0]);"
            " dispatchEvent(new PopStateEvent('popstate'))",
            f"?job={job_id}&game={first['id']}&record=0",
        ),
    )
    assert view_shown(driver) and cells(driver)
    act(driver, driver.back)  # the job's curves, and only them
    assert not view_shown(driver) and not cells(driver)
    assert js(driver, "return document.querySelectorAll('#curves svg').length") > 0
