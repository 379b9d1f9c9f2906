"""Models compared and the reveal-vs-conceal plane in the explorer (a job's view), in a real
headless Chromium against a real ``leakage serve`` (test_explorer_browser's browser): the
curves by the speaker's model and role with the model and role picker and one colour per
model of the job, two models side by side with their paired difference (the numbers of ``GET
/v1/jobs/{id}/compare``), and the plane with its reference strategies (The Chameleon's; none
for SpyGame), its keyboard and its exports. One job reads the real CK-Arena dev logs in place
(``shared_data``: skipped without), one the bundled examples."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import pytest

from . import browser_support as support
from . import test_explorer_browser as page
from .browser_support import CK_ARENA, SHOTS, ck_arena_job, get, js, png, sized, wait_until
from .conftest import EXAMPLES
from .test_explorer_browser import (
    by_id,
    choose,
    open_page,
    options,
    submit_job,
)
from .test_service_server import Server

# test_explorer_browser's browser and its console check (no error, no CSP violation)
browser_paths, driver, console_clean = page.browser_paths, page.driver, page.console_clean
server_start, server = support.shared_data_server_start, support.server


def shot(driver: Any, name: str, width: int, height: int) -> Path:
    """The page at ``width`` x ``height`` (its whole length), in $EXPLORER_SCREENSHOTS."""
    with sized(driver, width, height):
        full = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(width, min(int(full) + 150, 8000))
        return png(driver, name)


def check_plane(driver: Any, plane: dict[str, Any], groups: list[str] | None = None) -> None:
    """The means of ``groups`` (default: the ten with the most clues) drawn where the API
    puts them, every reference a black diamond with its label, the clues as light dots (or
    counted outside the axes), every group in the table, one tab stop moved through with the
    arrows."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    means = js(
        driver,
        "return Array.from(document.querySelectorAll('#plane-chart .point.mean'),"
        " m => [m.dataset.group, +m.dataset.x, +m.dataset.y, m.style.fill])",
    )
    want_groups = groups if groups is not None else [g["group"] for g in plane["groups"][:10]]
    assert sorted(m[0] for m in means) == sorted(want_groups)
    want = {g["group"]: g for g in plane["groups"]}
    for group, x, y, _ in means:
        assert x == pytest.approx(want[group]["leakage_bits"])
        assert y == pytest.approx(want[group]["reveal_bits"])
    refs = js(
        driver,
        "return Array.from(document.querySelectorAll('#plane-chart path.reference'),"
        " m => [m.dataset.ref, +m.dataset.x, +m.dataset.y, getComputedStyle(m).stroke])",
    )
    assert {r[0] for r in refs} == {r["model"] for r in plane["references"]}
    assert all(r[3] == "rgb(0, 0, 0)" for r in refs)
    labels = js(
        driver,
        "return Array.from(document.querySelectorAll('#plane-chart text.ref-label'),"
        " t => t.textContent)",
    )
    # the Chameleon's references on a Chameleon job; none on a SpyGame one (said so)
    for name in ("trivial", "concealing", "revealing") if plane["references"] else ():
        assert any(name in t for t in labels), (name, labels)
    if not plane["references"]:
        assert not labels and plane["references_note"] in by_id(driver, "plane-note").text
    dots = js(driver, "return document.querySelectorAll('#plane-chart circle.clue').length")
    outside = int(js(driver, "return document.getElementById('plane-chart').dataset.outside"))
    assert dots > 0 and dots + outside == len(plane["points"])
    assert outside <= 0.03 * len(plane["points"])
    text = by_id(driver, "plane-chart").text
    assert "(bits)" in text
    # the legend is under the plot: below the x axis' label
    below = js(
        driver,
        """const svg = document.getElementById('plane-chart');
        const axis = Array.from(svg.querySelectorAll('text'))
            .find(t => t.textContent.startsWith('leakage'));  // the x axis' label
        const legend = Array.from(svg.querySelectorAll('text.legend-label'));
        return legend.length > 0 && legend.every(t => t.getBBox().y > axis.getBBox().y);""",
    )
    assert below
    # one tab stop; the arrow keys move through the means, then the references
    stops = js(driver, "return document.querySelectorAll('#plane-chart [tabindex=\"0\"]').length")
    assert stops == 1
    js(driver, "document.querySelector('#plane-chart [tabindex=\"0\"]').focus()")
    focused = (
        "const a = document.activeElement; return a.closest('#plane-chart') ? a.dataset.key : null"
    )
    first = js(driver, focused)
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    second = js(driver, focused)
    assert first and second and first != second
    ActionChains(driver).send_keys(Keys.END).perform()
    assert js(driver, focused).startswith("ref|" if plane["references"] else "g|")
    assert (
        js(driver, "return document.querySelectorAll('#plane-chart [tabindex=\"0\"]').length") == 1
    )
    # PNG / SVG of the figure, CSV of its table
    assert (
        js(
            driver,
            "return Array.from(document.querySelectorAll("
            "'.exports[data-for=\"plane-chart\"] button'), b => b.dataset.format).join(',')",
        )
        == "png,svg"
    )
    assert js(
        driver,
        "return !!document.querySelector("
        '\'.exports[data-for="plane-table"] button[data-format="csv"]\')',
    )
    rows = js(driver, "return document.querySelectorAll('#plane-table tbody tr').length")
    assert rows == len(plane["groups"]) + len(plane["references"])


def compared(driver: Any) -> dict[str, Any]:
    """What the page shows of two models compared: per role the side-by-side means and the
    difference (their data-value)."""
    return {
        "side": js(
            driver,
            "return Array.from(document.querySelectorAll('#compare-side .estimate'),"
            " c => [c.dataset.model, c.dataset.role, c.dataset.value])",
        ),
        "diff": js(
            driver,
            "return Array.from(document.querySelectorAll('#compare-diff .estimate'),"
            " c => [c.dataset.role, c.dataset.value])",
        ),
    }


def check_compare(driver: Any, api: dict[str, Any]) -> None:
    shown = compared(driver)
    rows = [r for r in api["rows"] if r["difference_bits"] is not None]
    diff = {role: float(v) for role, v in shown["diff"]}
    assert diff == {r["role"]: pytest.approx(r["difference_bits"]) for r in rows}
    side = {(m, role): float(v) for m, role, v in shown["side"]}
    want = {(r["model_a"], r["role"]): r["mean_gain_a"] for r in rows}
    want |= {(r["model_b"], r["role"]): r["mean_gain_b"] for r in rows}
    assert side == {k: pytest.approx(v) for k, v in want.items()}
    table = by_id(driver, "compare-table").text
    for r in rows:
        assert f"{r['difference_bits']:.3f}" in table


def test_ck_arena_models_compared_and_the_plane(driver: Any, server: Server, shared_data: Path):
    if not CK_ARENA.is_dir():
        pytest.skip(f"needs the CK-Arena dev logs in {CK_ARENA}")
    job_id = ck_arena_job(server, timeout=600, path=str(CK_ARENA))
    open_page(driver, f"{server.url}/ui?job={job_id}&by=speaker")
    curves = get(server, f"/v1/jobs/{job_id}/curves", by="speaker")
    assert all(" · " in g for g in curves["groups"])
    # two words a game: no top-3 or top-5 figure, and the page draws what there is
    metrics = js(
        driver,
        "return Array.from(document.querySelectorAll('#curves figure'), f => f.dataset.metric)",
    )
    assert sorted(metrics) == ["entropy_bits", "top1"]
    # the page's colours: one per model of the job, the palette's in the models' sorted
    # order (charts.js PALETTE), a model's in every one of its roles
    strokes = js(
        driver,
        "return Array.from(document.querySelectorAll('#curve-filter label'), l =>"
        " [l.querySelector('input').value,"
        " getComputedStyle(l.querySelector('.swatch')).backgroundColor])",
    )
    palette = js(driver, "return import('./ui/assets/charts.js').then(m => m.PALETTE)")

    def rgb(hex_: str) -> str:
        return f"rgb({int(hex_[1:3], 16)}, {int(hex_[3:5], 16)}, {int(hex_[5:7], 16)})"

    job_models = sorted(get(server, f"/v1/jobs/{job_id}/compare")["models"])
    want = {
        g: rgb(palette[job_models.index(g.split(" · ")[0]) % len(palette)])
        for g in curves["groups"]
    }
    assert {g: c for g, c in strokes} == want
    # the model and role picker
    models = sorted({g.split(" · ")[0] for g in curves["groups"]})
    assert options(driver, "speaker-model") == ["", *models]
    choose_quiet(driver, "speaker-model", "qwen2.5-72b")
    shown = js(
        driver,
        "return [...new Set(Array.from(document.querySelectorAll('#curves circle.point'),"
        " c => c.dataset.group))].sort()",
    )
    assert shown == sorted(g for g in curves["groups"] if g.startswith("qwen2.5-72b · "))
    choose_quiet(driver, "speaker-role", "spy")
    shown = js(
        driver,
        "return [...new Set(Array.from(document.querySelectorAll('#curves circle.point'),"
        " c => c.dataset.group))]",
    )
    assert shown == ["qwen2.5-72b · spy"]
    # the plane draws the mean of the model and role picked
    means = js(
        driver,
        "return Array.from(document.querySelectorAll('#plane-chart .point.mean'),"
        " m => m.dataset.group)",
    )
    assert means == ["qwen2.5-72b · spy"]
    assert "model=qwen2.5-72b" in driver.current_url and "role=spy" in driver.current_url
    choose_quiet(driver, "speaker-model", "")
    choose_quiet(driver, "speaker-role", "")

    # two models side by side and their paired difference, as the API (and so the library,
    # tests/test_jobs_compare.py) gives them
    listed = get(server, f"/v1/jobs/{job_id}/compare")["models"]
    assert options(driver, "model-a") == listed
    pick(driver, "model-a", "qwen2.5-72b")
    pick(driver, "model-b", "deepseek-v3")
    api = get(server, f"/v1/jobs/{job_id}/compare", a="qwen2.5-72b", b="deepseek-v3")
    check_compare(driver, api)
    civ = next(r for r in api["rows"] if r["role"] == "civilian")
    assert civ["shared_games"] > 20 and civ["difference_high"] < 0  # as docs/batch.md says
    # picking model A as B swaps them rather than comparing a model with itself
    choose(driver, "model-b", "qwen2.5-72b")
    assert by_id(driver, "model-a").get_attribute("value") == "deepseek-v3"
    check_compare(
        driver, get(server, f"/v1/jobs/{job_id}/compare", a="deepseek-v3", b="qwen2.5-72b")
    )
    pick(driver, "model-a", "qwen2.5-72b")
    pick(driver, "model-b", "deepseek-v3")

    check_plane(driver, get(server, f"/v1/jobs/{job_id}/plane"))
    shot(driver, "models-1400", 1400, 900)
    shot(driver, "models-390", 390, 844)
    # each view alone, at 1400 and 390 px (docs/img/explorer-models-compared.png and
    # explorer-plane.png are the 1400 px ones, reduced to 128 colours)
    for width, height in ((1400, 900), (390, 844)):
        with sized(driver, width, height):
            for id_ in ("models-compared", "plane-section"):
                js(driver, "document.getElementById(arguments[0]).scrollIntoView()", id_)
                js(driver, "document.activeElement.blur()")
                image = by_id(driver, id_).screenshot_as_png
                (SHOTS / f"{id_}-{width}.png").write_bytes(image)
    # the page does not scroll sideways at phone width, once the charts have redrawn at
    # their containers' new width (a ResizeObserver's callback, after the resize's layout:
    # late on a loaded machine)
    wide: list[str] = []

    def fits() -> bool:
        wide[:] = js(
            driver,
            """const w = document.documentElement.clientWidth;
            return Array.from(document.querySelectorAll('main *'))
                .filter(e => e.getBoundingClientRect().right > w + 1 && !e.closest('.scroll'))
                .slice(0, 5).map(e => e.tagName + ' in #' + (e.closest('[id]') || {}).id
                    + ': ' + e.textContent.slice(0, 40));""",
        )
        return not wide

    # (a timeout is let through: the assertion below names what sticks out)
    with sized(driver, 390, 844), contextlib.suppress(AssertionError):
        wait_until("nothing wider than the page at 390 px", fits, timeout=10)
    assert not wide, wide
    # the view's address, shared, shows the same two models
    url = driver.current_url
    assert "a=qwen2.5-72b" in url and "b=deepseek-v3" in url
    driver.get("about:blank")
    open_page(driver, url)
    check_compare(driver, api)


def pick(driver: Any, id_: str, value: str) -> None:
    """Pick ``value`` (a change, and so a request, only when it is not already picked)."""
    if by_id(driver, id_).get_attribute("value") != value:
        choose(driver, id_, value)


def choose_quiet(driver: Any, id_: str, value: str) -> None:
    """Pick in a select that redraws at once (no request)."""
    from selenium.webdriver.support.ui import Select

    Select(by_id(driver, id_)).select_by_value(value)


def test_an_examples_job_by_speaker_compared_and_its_plane(driver: Any, server: Server):
    job_id = submit_job(server, (EXAMPLES / "chameleon_batch.jsonl").read_bytes())
    open_page(driver, f"{server.url}/ui?job={job_id}&by=speaker&a=claude&b=gpt-4o")
    assert by_id(driver, "models-compared").is_displayed()
    check_compare(driver, get(server, f"/v1/jobs/{job_id}/compare", a="claude", b="gpt-4o"))
    plane = get(server, f"/v1/jobs/{job_id}/plane")
    check_plane(driver, plane)
    # sixteen candidates: pi_amb is among the references
    assert "pi_amb" in {r["model"] for r in plane["references"]}
    # the grouping picker offers the speaker's model and role
    assert "speaker" in options(driver, "curve-group")
    choose(driver, "curve-group", "model")
    assert by_id(driver, "speaker-picker").is_displayed() is False
