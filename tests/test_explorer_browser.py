"""The explorer page (``/ui``) as a person uses it: a real headless Chromium, driven by
Selenium through the system's chromedriver, against a real ``leakage serve`` on 127.0.0.1.

The page's hooks are those of docs/explorer.md's contract (ids, ``body[data-state]``,
``rect.cell[data-turn][data-candidate][data-p]``); every number the page shows is checked
against the public HTTP API or the transcript files themselves. A screenshot of each state
goes to ``$EXPLORER_SCREENSHOTS`` (default ``build/explorer-screenshots/``), the README's
picture among them (not a ``LEAKAGE_*`` name: the service refuses a variable of its prefix
that is not one of its settings, and the servers here inherit the environment).

Needs Chromium and its driver (Debian: ``apt-get install chromium chromium-driver``, which
``make system-deps`` does where it can) and selenium (the dev extra); without them the browser
tests are skipped, saying what is missing (failed instead with ``EXPLORER_BROWSER_REQUIRED=1``,
for a machine that must run them). Selenium Manager never runs: the driver and the
browser are given by path, so nothing is downloaded.

docs/img/explorer.png (the README's picture) and the other explorer pictures of
docs/explorer.md are made by ``python tools/explorer_screenshots.py --out docs/img``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from . import browser_support as support
from .browser_support import TIMEOUT, WINDOW, png, serving, sized, wait_until
from .conftest import EXAMPLES
from .test_service_server import Server, server_env

# -- finding a browser (no browser needed for these) ----------------------------------------

BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
DRIVER_NAMES = ("chromedriver",)
# Debian's packages; looked at first, then PATH
BROWSER_PATHS = ("/usr/bin/chromium",)
DRIVER_PATHS = ("/usr/bin/chromedriver",)
INSTALL_HINT = (
    "install them with `make system-deps` (as root) or `apt-get install chromium chromium-driver`"
)


@dataclass(frozen=True)
class BrowserPaths:
    browser: str
    driver: str


def _first(paths: Sequence[str], names: Sequence[str], path_env: str | None) -> str | None:
    for p in paths:
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    for name in names:
        found = shutil.which(name, path=path_env)
        if found:
            return found
    return None


def find_browser(
    env: Mapping[str, str] = os.environ,
    browser_paths: Sequence[str] = BROWSER_PATHS,
    driver_paths: Sequence[str] = DRIVER_PATHS,
) -> BrowserPaths | str:
    """Chromium and chromedriver (the fixed Debian paths, then ``PATH``), or why not: a
    message naming what is missing and how to install it."""
    path_env = env.get("PATH", "")
    browser = _first(browser_paths, BROWSER_NAMES, path_env)
    driver = _first(driver_paths, DRIVER_NAMES, path_env)
    missing = []
    if browser is None:
        missing.append("Chromium (Debian package chromium: no chromium or chromium-browser)")
    if driver is None:
        missing.append("its driver (Debian package chromium-driver: no chromedriver)")
    if missing:
        return f"the explorer's browser tests need {' and '.join(missing)}; {INSTALL_HINT}"
    assert browser is not None and driver is not None
    return BrowserPaths(browser, driver)


def test_a_missing_browser_or_driver_is_named_with_how_to_install_it(tmp_path: Path):
    empty = {"PATH": str(tmp_path)}
    reason = find_browser(empty, browser_paths=(), driver_paths=())
    assert isinstance(reason, str)
    assert "chromium-driver" in reason and "Debian package chromium:" in reason
    assert "apt-get install chromium chromium-driver" in reason

    # a driver on PATH but no browser: only the browser is named
    driver = tmp_path / "chromedriver"
    driver.write_text("#!/bin/sh\n")
    driver.chmod(0o755)
    reason = find_browser(empty, browser_paths=(), driver_paths=())
    assert isinstance(reason, str)
    assert "Chromium" in reason and "chromedriver" not in reason.split(";")[0]

    browser = tmp_path / "chromium"
    browser.write_text("#!/bin/sh\n")
    browser.chmod(0o755)
    found = find_browser(empty, browser_paths=(), driver_paths=())
    assert found == BrowserPaths(str(browser), str(driver))
    # the fixed paths come first, and a file that is not executable is not a browser
    plain = tmp_path / "plain"
    plain.write_text("")
    found = find_browser(empty, browser_paths=(str(plain), str(browser)), driver_paths=())
    assert found == BrowserPaths(str(browser), str(driver))


def test_a_missing_browser_skips_the_tests_or_fails_them_where_required(
    monkeypatch: pytest.MonkeyPatch,
):
    monkeypatch.delenv("EXPLORER_BROWSER_REQUIRED", raising=False)
    with pytest.raises(pytest.skip.Exception, match="need Chromium"):
        _missing("the tests need Chromium")
    monkeypatch.setenv("EXPLORER_BROWSER_REQUIRED", "1")
    with pytest.raises(pytest.fail.Exception, match=r"need Chromium.*REQUIRED=1"):
        _missing("the tests need Chromium")


# -- the browser, the servers, the screenshots -----------------------------------------------

API_KEY = "explorer-test-key"


def _missing(reason: str) -> None:
    """Skip, or fail where the browser must be there (``EXPLORER_BROWSER_REQUIRED=1``), so
    that on such a machine a failed install is not a quiet skip."""
    if os.environ.get("EXPLORER_BROWSER_REQUIRED") == "1":
        pytest.fail(f"{reason} (EXPLORER_BROWSER_REQUIRED=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser_paths() -> BrowserPaths:
    found = find_browser()
    if isinstance(found, str):
        _missing(found)
    try:
        import selenium  # noqa: F401
    except ImportError:
        _missing("the explorer's browser tests need selenium: pip install -e '.[dev]'")
    assert isinstance(found, BrowserPaths)
    return found


@pytest.fixture(scope="module")
def server_start(
    tmp_path_factory: pytest.TempPathFactory, default_index: Path
) -> Iterator[Future[Server]]:
    """The server, starting in a thread (the embedding model takes a while to load), so that
    the browser starts meanwhile."""
    home = tmp_path_factory.mktemp("explorer")
    both = "cooccurrence,embedding"
    env = server_env(home, default_index, LEAKAGE_BACKENDS=both, LEAKAGE_PRELOAD=both)
    yield from serving(env, home / "server.log")


server = support.server


@pytest.fixture(scope="module")
def driver(browser_paths: BrowserPaths, server_start: Future[Server]) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.selenium_manager import SeleniumManager

    options = webdriver.ChromeOptions()
    options.binary_location = browser_paths.browser
    for arg in (
        "--headless=new",
        "--no-sandbox",  # as root (CI, containers) Chromium refuses to start without it
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--lang=en-GB",
        f"--window-size={WINDOW[0]},{WINDOW[1]}",
    ):
        options.add_argument(arg)
    # the console's every message, read by console_clean after each test
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})

    def no_manager(*args: Any, **kw: Any) -> Any:
        raise AssertionError("Selenium Manager was asked for a driver: it would download one")

    # the driver and browser are given by path; were Selenium to look for one all the same,
    # this fails the tests rather than letting it go to the network
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SeleniumManager, "binary_paths", no_manager)
        d = webdriver.Chrome(service=Service(browser_paths.driver), options=options)
    d.set_page_load_timeout(TIMEOUT)
    d.set_script_timeout(TIMEOUT)
    yield d
    d.quit()


def console_problems(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """The console messages that are faults of the page: errors (an uncaught exception, a
    console.error) and Content-Security-Policy violations, at any level. A response with an
    error status is not one: Chromium logs every 4xx and 5xx ("Failed to load resource"),
    and the page answers those in #status, which the tests read."""
    out = []
    for e in entries:
        msg = str(e.get("message", ""))
        csp = "Content Security Policy" in msg or "Content-Security-Policy" in msg
        error = e.get("level") == "SEVERE" and "Failed to load resource" not in msg
        if csp or error:
            out.append(msg)
    return out


def test_console_problems_are_errors_and_csp_violations_not_error_statuses():
    entries = [
        {"level": "SEVERE", "message": "http://x/v1/score - Failed to load resource: 422"},
        {"level": "INFO", "message": "console-api 1:1 ready"},
        {"level": "SEVERE", "message": "http://x/ui/assets/app.js 3:4 Uncaught TypeError: x"},
        {"level": "WARNING", "message": "Refused to apply inline style because it violates "
         "the following Content Security Policy directive: style-src 'self'"},
    ]  # fmt: skip
    assert console_problems(entries) == [entries[2]["message"], entries[3]["message"]]


@pytest.fixture(autouse=True)
def console_clean(request: pytest.FixtureRequest) -> Iterator[None]:
    """A browser test leaves no error and no CSP violation in the console (of the tests
    using the ``driver``; a module that imports this fixture gets the check too)."""
    if "driver" not in request.fixturenames:
        yield
        return
    d = request.getfixturevalue("driver")
    d.get_log("browser")  # what came before this test
    yield
    problems = console_problems(d.get_log("browser"))
    assert not problems, f"the console has {len(problems)} problem(s): {problems[:5]}"


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Server]:
    home = tmp_path_factory.mktemp("explorer-keyed")
    s = Server(server_env(home, default_index, LEAKAGE_API_KEYS=API_KEY), home / "server.log")
    yield s
    s.stop()


def snap(driver: Any, name: str) -> Path:
    """A PNG of the whole page as it is: ``$EXPLORER_SCREENSHOTS/<name>.png``. The window is
    made as tall as the page for it, then set back (DevTools' captureBeyondViewport leaves
    the mouse's coordinates off from the layout's afterwards)."""
    inner, full = driver.execute_script(
        "return [window.innerHeight, document.documentElement.scrollHeight]"
    )
    frame = WINDOW[1] - int(inner)  # the window's own height beyond the page's
    with sized(driver, WINDOW[0], min(max(int(full) + frame, WINDOW[1]), 6000)):
        return png(driver, name)


# -- talking to the page -----------------------------------------------------------------------


def state(driver: Any) -> str:
    return str(driver.execute_script("return document.body ? document.body.dataset.state : ''"))


def wait_ready(driver: Any, timeout: float = TIMEOUT) -> None:
    """Until ``body[data-state]`` is ``ready``; ``error`` fails with the page's message."""
    now = wait_until(
        "body[data-state] ready or error",
        lambda: state(driver) in ("ready", "error") and state(driver),
        timeout,
    )
    if now == "error":
        raise AssertionError(f"the page reports an error: {status_text(driver)!r}")


def in_job_row(driver: Any, job_id: str, what: str) -> Callable[[], None]:
    """A click on ``what`` (a CSS selector) in a job's row of the list, found at the moment
    of the click: the list is redrawn every 2 s while any job runs, so an element found
    earlier can be gone by then (a stale element)."""
    selector = f'#job-list tr[data-job="{job_id}"] {what}'

    def click() -> None:
        driver.execute_script(
            "const el = document.querySelector(arguments[0]);"
            "if (!el) throw new Error('nothing matches ' + arguments[0]);"
            "el.click();",
            selector,
        )

    return click


def act(driver: Any, action: Callable[[], Any], *, expect: str = "ready") -> None:
    """Do something that makes the page work, and wait until it is done: the state is
    cleared first, so that the ``ready`` of the previous view does not count."""
    driver.execute_script("document.body.dataset.state = ''")
    action()
    if expect == "ready":
        wait_ready(driver)
    elif expect == "settled":
        wait_until("body[data-state] ready or error", lambda: state(driver) in ("ready", "error"))
    else:
        wait_until(f"body[data-state={expect}]", lambda: state(driver) == expect)


def status_text(driver: Any) -> str:
    return str(
        driver.execute_script(
            "const s = document.getElementById('status'); return s ? s.textContent : ''"
        )
    ).strip()


def open_page(driver: Any, url: str) -> None:
    driver.get(url)
    has_state = "return !!(document.body && 'state' in document.body.dataset)"
    try:  # a page that never says its state fails at once, not after TIMEOUT
        wait_until("body[data-state]", lambda: driver.execute_script(has_state), 10)
    except AssertionError:
        title = driver.execute_script("return document.title + ': ' + document.body.innerText")
        raise AssertionError(f"{url} shows no body[data-state]: {title[:200]!r}") from None
    wait_ready(driver)


def by_id(driver: Any, id_: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, id_)


def choose(driver: Any, id_: str, value: str) -> None:
    """Pick ``value`` in the select ``#id_`` as a person does, and wait for the page."""
    from selenium.webdriver.support.ui import Select

    act(driver, lambda: Select(by_id(driver, id_)).select_by_value(value))


def options(driver: Any, id_: str) -> list[str]:
    return list(
        driver.execute_script(
            "return Array.from(document.getElementById(arguments[0]).options, o => o.value)",
            id_,
        )
    )


@dataclass(frozen=True)
class Cell:
    turn: int
    candidate: str
    p: float
    secret: bool


def cells(driver: Any, svg: str = "heatmap") -> list[Cell]:
    rows = driver.execute_script(
        """return Array.from(document.querySelectorAll('#' + arguments[0] + ' rect.cell'),
            c => [c.dataset.turn, c.dataset.candidate, c.dataset.p,
                  c.classList.contains('secret')])""",
        svg,
    )
    return [Cell(int(t), str(c), float(p), bool(s)) for t, c, p, s in rows]


def grid(found: list[Cell]) -> dict[tuple[int, str], float]:
    out = {(c.turn, c.candidate): c.p for c in found}
    assert len(out) == len(found), "two cells for one (turn, candidate)"
    return out


# -- what the page should show, from the files and the API -----------------------------------


def example_games(name: str) -> list[dict[str, Any]]:
    path = next(p for p in EXAMPLES.iterdir() if p.stem == name and p.is_file())
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    return data if isinstance(data, list) else [data]


def score(server: Server, game: Mapping[str, Any], backend: str, **headers: str) -> Any:
    r = httpx.post(
        server.url + "/v1/score",
        params={"backend": backend},
        content=json.dumps(game),
        headers={"content-type": "application/json", **headers},
        timeout=TIMEOUT,
    )
    assert r.status_code == 200, r.text
    return r.json()


def posterior_grid(
    report: Mapping[str, Any], key: str = "posterior"
) -> dict[tuple[int, str], float]:
    return {
        (i, name): p
        for i, step in enumerate(report["steps"], start=1)
        for name, p in step[key].items()
    }


def assert_grid_is(shown: dict[tuple[int, str], float], expected: dict[tuple[int, str], float]):
    assert set(shown) == set(expected)
    wrong = {k: (shown[k], v) for k, v in expected.items() if abs(shown[k] - v) > 1e-3}
    assert not wrong, f"cells (turn, candidate): (shown, API) {sorted(wrong.items())[:5]}"


def top(report: Mapping[str, Any]) -> list[str]:
    return [max(s["posterior"], key=s["posterior"].get) for s in report["steps"]]


NUMBER = re.compile(r"(?<![\w.])[-+\u2212]?\d+(?:\.\d+)?(?:\s?%)?")


def shows_number(text: str, value: float) -> bool:
    """Whether ``text`` shows ``value`` to at least two decimals (or as a percentage to at
    least a whole per cent), at the precision shown."""
    for m in NUMBER.finditer(text):
        s = m.group(0).replace("\u2212", "-")
        scale = 100.0 if s.endswith("%") else 1.0
        s = s.rstrip("%").strip()
        decimals = len(s.split(".")[1]) if "." in s else 0
        tol = 0.5 * 10.0**-decimals / scale
        if tol <= 0.0051 and abs(float(s) / scale - value) <= tol + 1e-9:
            return True
    return False


def test_shows_number_reads_what_a_page_shows():
    assert shows_number("P(secret) 0.42, entropy 2.31 bits", 0.4213)
    assert shows_number("P(secret) 42%", 0.4213) and shows_number("42.1 %", 0.421)
    assert not shows_number("P(secret) 0.4", 0.4213)  # one decimal proves nothing
    assert not shows_number("P(secret) 0.43", 0.4213)
    assert shows_number("gain \u22120.12 bits", -0.12) and not shows_number("turn 3", 3.0)


# -- accessibility, measured in the browser ----------------------------------------------------

UNLABELLED_JS = """
const out = [];
for (const el of document.querySelectorAll('input, select, textarea, button')) {
  if (el.type === 'hidden' || el.getClientRects().length === 0) continue;
  const labelled = (el.labels && el.labels.length > 0) || el.getAttribute('aria-label')
    || el.getAttribute('aria-labelledby') || el.getAttribute('title')
    || (el.tagName === 'BUTTON' && el.textContent.trim());
  if (!labelled) out.push(el.outerHTML.slice(0, 120));
}
return out;
"""

CONTRAST_JS = """
const canvas = document.createElement('canvas');
canvas.width = canvas.height = 1;
const ctx = canvas.getContext('2d', {willReadFrequently: true});
function rgba(css) {  // any CSS colour the browser computes, as [r, g, b, a]
  const m = /^rgba?\\(([^)]*)\\)$/.exec(css.trim());
  if (m) {
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(parseFloat);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  }
  ctx.clearRect(0, 0, 1, 1);
  ctx.fillStyle = '#000';
  ctx.fillStyle = css;
  ctx.fillRect(0, 0, 1, 1);
  const d = ctx.getImageData(0, 0, 1, 1).data;
  return [d[0], d[1], d[2], d[3] / 255];
}
function over(top, bottom) {  // alpha compositing of an opaque bottom
  const a = top[3];
  return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
}
function background(el) {  // the backgrounds from the root down to el, composited
  const layers = [];
  let image = null;
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
    if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
    const cs = getComputedStyle(e);
    if (cs.backgroundImage !== 'none' && !image) image = e;
    layers.push(rgba(cs.backgroundColor));
  }
  let bg = [255, 255, 255, 1];
  for (const layer of layers.reverse()) bg = over(layer, bg);
  return [bg, image];
}
function lum(c) {
  const f = v => {
    v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
}
function ratio(a, b) {
  const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
  return (x + 0.05) / (y + 0.05);
}
function visible(el) {
  if (el.getClientRects().length === 0) return false;
  for (let e = el; e; e = e.parentElement) {
    const cs = getComputedStyle(e);
    if (cs.visibility === 'hidden' || cs.display === 'none' || cs.opacity === '0') return false;
  }
  return true;
}
function name(el) {
  return el.tagName.toLowerCase() + (el.id ? '#' + el.id : '')
    + (el.classList.length ? '.' + Array.from(el.classList).join('.') : '');
}
const checked = [], failures = [];
function check(el, fg, bgInfo, what) {
  const [bg, image] = bgInfo;
  const c = over(fg, bg);
  const r = ratio(c, bg);
  const text = (what || '').trim().slice(0, 40);
  checked.push(name(el));
  if (image) failures.push({el: name(el), text, problem: 'text over a background image'});
  else if (r < 4.5) failures.push({el: name(el), text, ratio: Math.round(r * 100) / 100,
    colour: c.slice(0, 3), background: bg.slice(0, 3)});
}
const all = document.body.querySelectorAll('*');
for (const el of all) {
  if (['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEMPLATE', 'OPTION'].includes(el.tagName)) continue;
  if (!visible(el) || el.disabled) continue;
  const ownText = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
  if (el instanceof SVGElement) {
    if (!(el.tagName === 'text' || el.tagName === 'tspan') || !ownText) continue;
    // SVG text is painted with fill, over the topmost shape beneath its centre (one that
    // comes before it in the document) or the page; geometry, not elementsFromPoint, so
    // that text scrolled out of view counts too
    const box = el.getBoundingClientRect();
    const [cx, cy] = [box.x + box.width / 2, box.y + box.height / 2];
    const svg = el.ownerSVGElement;
    let bgInfo = background(svg);
    let beneath = null;
    for (const shape of svg.querySelectorAll('rect, circle, ellipse, path, polygon')) {
      if (!(shape.compareDocumentPosition(el) & Node.DOCUMENT_POSITION_FOLLOWING)) break;
      if (shape.contains(el) || !visible(shape)) continue;
      const r = shape.getBoundingClientRect();
      if (cx < r.left || cx > r.right || cy < r.top || cy > r.bottom) continue;
      const fill = getComputedStyle(shape).fill;
      if (!fill || fill === 'none' || fill.startsWith('url')) continue;
      beneath = shape;
    }
    if (beneath) {
      const f = rgba(getComputedStyle(beneath).fill);
      f[3] *= parseFloat(getComputedStyle(beneath).fillOpacity || '1');
      bgInfo = [over(f, bgInfo[0]), bgInfo[1]];
    }
    const fill = rgba(getComputedStyle(el).fill);
    fill[3] *= parseFloat(getComputedStyle(el).fillOpacity || '1');
    check(el, fill, bgInfo, el.textContent);
    continue;
  }
  const isField = ['INPUT', 'SELECT', 'TEXTAREA'].includes(el.tagName);
  if (!ownText && !isField) continue;
  const cs = getComputedStyle(el);
  check(el, rgba(cs.color), background(el), isField ? (el.value || el.tagName) : el.textContent);
  if (isField && el.placeholder && !el.value) {
    check(el, rgba(getComputedStyle(el, '::placeholder').color), background(el),
      'placeholder: ' + el.placeholder);
  }
}
return {checked: checked.length, failures};
"""


def assert_accessible(driver: Any, where: str) -> None:
    """Every visible form control has a label (a <label>, aria-label(ledby), title, or a
    button's text; a placeholder is not one), and every visible text's colour has a contrast
    of at least 4.5:1 against its background (WCAG AA), from the computed styles."""
    unlabelled = driver.execute_script(UNLABELLED_JS)
    assert not unlabelled, f"{where}: form controls without a label: {unlabelled}"
    for el in driver.execute_script(
        "return Array.from(document.querySelectorAll('input, select, textarea, button'))"
        ".filter(e => e.type !== 'hidden' && e.getClientRects().length)"
    ):
        assert el.accessible_name.strip(), f"{where}: no accessible name: {el.get_attribute('id')}"
    result = driver.execute_script(CONTRAST_JS)
    assert result["checked"] > 10, f"{where}: only {result['checked']} texts found"
    assert not result["failures"], f"{where}: contrast below 4.5:1: {result['failures'][:8]}"


def test_the_accessibility_checks_find_what_they_look_for(driver: Any):
    """The checks themselves, on a page made to fail them and one made to pass."""
    from urllib.parse import quote

    def page(body: str) -> None:
        style = "body{background:#fff;color:#111} .pale{color:#999} .dark{background:#222}"
        driver.get("data:text/html;charset=utf-8," + quote(f"<style>{style}</style>{body}"))

    words = "".join(f"<p>paragraph {i}</p>" for i in range(12))
    page(words + '<input id="x" placeholder="name"><p class="pale">grey on white</p>')
    with pytest.raises(AssertionError, match="without a label"):
        assert_accessible(driver, "bad")
    page(words + '<label>name <input></label><p class="pale">grey on white, 2.8:1</p>')
    with pytest.raises(AssertionError, match=r"contrast below 4\.5:1.*grey on white"):
        assert_accessible(driver, "bad")
    page(words + '<div class="dark"><span>dark on dark</span></div>')
    with pytest.raises(AssertionError, match="dark on dark"):
        assert_accessible(driver, "bad")
    svg = '<svg><rect width="90" height="30" fill="#003"/><text x="5" y="20" fill="#000">t</text>'
    page(words + svg + "</svg>")  # black SVG text on the navy rect beneath it
    with pytest.raises(AssertionError, match="'el': 'text'"):
        assert_accessible(driver, "bad")
    page(
        words
        + '<label for="y">name</label><input id="y"><button>Go</button>'
        + '<div class="dark" style="color:#fff">light on dark</div>'
        + svg.replace('fill="#000"', 'fill="#fff"')
        + "</svg>"
    )
    assert_accessible(driver, "good")


# -- the tests -----------------------------------------------------------------------------------

SPORTS = "chameleon_sports"


def load_example(driver: Any, server: Server, name: str, backend: str = "cooccurrence") -> None:
    """The page fresh, then the example picked and the backend chosen, as a person does."""
    open_page(driver, server.url + "/ui")
    assert name in options(driver, "example-select")
    choose(driver, "example-select", name)
    if by_id(driver, "backend-select").get_attribute("value") != backend:
        choose(driver, "backend-select", backend)


def test_an_example_shows_its_heat_map_turns_and_curves(driver: Any, server: Server):
    load_example(driver, server, SPORTS)
    (game,) = example_games(SPORTS)
    report = score(server, game, "cooccurrence")
    # one cell per (turn, candidate), counted from the file and from the API alike
    found = cells(driver)
    assert len(found) == len(game["turns"]) * len(game["candidates"])
    assert len(found) == len(report["steps"]) * len(report["candidates"])
    assert {c.turn for c in found} == set(range(1, len(game["turns"]) + 1))
    assert {c.candidate for c in found} == set(game["candidates"])
    assert_grid_is(grid(found), posterior_grid(report))
    # the secret's column is marked, and only it
    assert {c.candidate for c in found if c.secret} == {game["secret"]}
    assert sum(c.secret for c in found) == len(game["turns"])

    rows = driver.execute_script(
        "return Array.from(document.querySelectorAll('#turns .turn'),"
        " r => [r.innerText, r.classList.contains('most-informative')])"
    )
    assert len(rows) == len(game["turns"])
    for (text, _), turn in zip(rows, game["turns"], strict=True):
        assert turn["text"] in text
    gains = [s["information_gain_bits"] for s in report["steps"]]
    best = gains.index(max(gains))
    assert [flag for _, flag in rows] == [i == best for i in range(len(rows))]
    for i, step in enumerate(report["steps"]):
        text = rows[i][0]
        assert shows_number(text, step["entropy_bits"]), (text, step["entropy_bits"])
        assert shows_number(text, step["information_gain_bits"]), text
        assert shows_number(text, step["secret_probability"]), text
    for chart in ("entropy-chart", "psecret-chart"):
        n = driver.execute_script(
            "return document.querySelectorAll('#' + arguments[0] + ' circle.point').length", chart
        )
        assert n == len(game["turns"]) + 1, chart  # and turn 0, the prior
    # offline: every file and request the page loaded came from this server
    loaded = driver.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)"
    )
    assert loaded and all(u.startswith(server.url + "/") for u in loaded), loaded
    snap(driver, "1-example-heatmap")


def test_the_service_serves_the_page_at_ui(server: Server):
    r = httpx.get(server.url + "/", timeout=TIMEOUT)
    assert r.status_code in (200, 307, 308) and (
        r.status_code == 200 or "/ui" in r.headers["location"]
    )
    page = httpx.get(server.url + "/ui", timeout=TIMEOUT)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    # offline: nothing is loaded from another host
    for url in re.findall(r"""(?:src|href)\s*=\s*["']([^"']+)""", page.text):
        assert not re.match(r"(?:[a-z]+:)?//", url), f"the page loads {url} from elsewhere"


def test_switching_the_backend_redraws_the_view(driver: Any, server: Server):
    load_example(driver, server, SPORTS)
    (game,) = example_games(SPORTS)
    before = grid(cells(driver))
    assert set(options(driver, "backend-select")) >= {"cooccurrence", "embedding"}
    choose(driver, "backend-select", "embedding")
    after = grid(cells(driver))
    assert_grid_is(after, posterior_grid(score(server, game, "embedding")))
    assert set(after) == set(before)
    assert max(abs(after[k] - before[k]) for k in before) > 0.01
    assert parse_qs(urlsplit(driver.current_url).query).get("backend") == ["embedding"]
    snap(driver, "2-embedding-backend")


def test_two_backends_side_by_side_with_their_disagreements(driver: Any, server: Server):
    # the instruments game: the two backends' top candidates differ after some turns only
    load_example(driver, server, "chameleon_batch")
    game = example_games("chameleon_batch")[1]
    choose(driver, "game-select", options(driver, "game-select")[1])
    compare = options(driver, "compare-select")
    assert compare[0] == "" and "embedding" in compare
    assert not cells(driver, "heatmap-compare")
    choose(driver, "compare-select", "embedding")
    co, emb = score(server, game, "cooccurrence"), score(server, game, "embedding")
    assert_grid_is(grid(cells(driver)), posterior_grid(co))
    assert_grid_is(grid(cells(driver, "heatmap-compare")), posterior_grid(emb))
    # the turns whose top candidate differs between the two, and only those
    pairs = list(zip(top(co), top(emb), strict=True))
    differ = [i for i, (a, b) in enumerate(pairs, start=1) if a != b]
    assert 0 < len(differ) < len(pairs)
    listed = driver.execute_script(
        "return Array.from(document.querySelectorAll('#disagreement [data-turn]'),"
        " e => [+e.dataset.turn, e.innerText])"
    )
    assert [turn for turn, _ in listed] == differ
    for turn, text in listed:
        a, b = pairs[turn - 1]
        assert game["turns"][turn - 1]["text"] in text and a in text and b in text, text
    snap(driver, "3-compare-backends")
    assert_accessible(driver, "two backends side by side")


def test_a_transcript_of_several_games_picks_one(driver: Any, server: Server):
    load_example(driver, server, "chameleon_batch")
    games = example_games("chameleon_batch")
    assert len(options(driver, "game-select")) == len(games)
    third = games[2]
    values = options(driver, "game-select")
    choose(driver, "game-select", values[2])
    found = cells(driver)
    assert len(found) == len(third["turns"]) * len(third["candidates"])
    assert_grid_is(grid(found), posterior_grid(score(server, third, "cooccurrence")))


def test_a_pasted_or_uploaded_transcript_is_scored(driver: Any, server: Server):
    open_page(driver, server.url + "/ui")
    (spy,) = example_games("spygame_two_spies")
    box = by_id(driver, "transcript-input")
    box.clear()
    box.click()
    # pasted: the text arrives at once, as from the clipboard (typing it key by key takes
    # seconds)
    driver.execute_cdp_cmd("Input.insertText", {"text": json.dumps(spy, indent=1)})
    assert json.loads(box.get_attribute("value")) == spy
    act(driver, by_id(driver, "score-button").click)
    found = driver.execute_script(
        "return Array.from(document.querySelectorAll('#spy-heatmap rect.cell'), c => +c.dataset.p)"
    )
    report = score(server, spy, "cooccurrence")
    assert sorted(found) == pytest.approx(
        sorted(posterior_grid(report, "spy_posterior").values()), abs=1e-3
    )
    assert len(found) == len(spy["turns"]) * len(spy["players"])

    games = example_games("chameleon_batch")
    act(
        driver,
        lambda: by_id(driver, "file-input").send_keys(str(EXAMPLES / "chameleon_batch.jsonl")),
    )
    assert len(options(driver, "game-select")) == len(games)
    assert_grid_is(grid(cells(driver)), posterior_grid(score(server, games[0], "cooccurrence")))


def test_a_spygame_shows_the_spy_posterior_beside_the_votes(driver: Any, server: Server):
    load_example(driver, server, "spygame_fruit")
    (game,) = example_games("spygame_fruit")
    report = score(server, game, "cooccurrence")
    # one cell per (statement, player); the contract names data-p only, so the cells are
    # placed by data-turn / data-player (or data-candidate) where the page gives them
    found = driver.execute_script(
        """return Array.from(document.querySelectorAll('#spy-heatmap rect.cell'), c => [
            c.dataset.turn || c.dataset.statement || null,
            c.dataset.player || c.dataset.candidate || null, +c.dataset.p])"""
    )
    assert len(found) == len(game["turns"]) * len(game["players"])
    expected = posterior_grid(report, "spy_posterior")
    if all(t is not None and who is not None for t, who, _ in found):
        assert_grid_is({(int(t), str(who)): float(p) for t, who, p in found}, expected)
    else:
        shown = sorted(float(p) for _, _, p in found)
        assert shown == pytest.approx(sorted(expected.values()), abs=1e-3)
    votes = by_id(driver, "votes").text
    for out in game["eliminations"]:
        assert out["player"] in votes
    snap(driver, "4-spygame")


def test_a_typed_clue_shows_what_it_would_leak(driver: Any, server: Server):
    load_example(driver, server, SPORTS)
    (game,) = example_games(SPORTS)
    clue = "wimbledon"
    # what the page should say: the game so far plus the clue, said by the next player
    players = [p["id"] for p in game["players"]]
    nxt = players[(players.index(game["turns"][-1]["player"]) + 1) % len(players)]
    hypothetical = {**game, "turns": [*game["turns"], {"player": nxt, "text": clue}]}
    now = score(server, game, "cooccurrence")["steps"][-1]
    then = score(server, hypothetical, "cooccurrence")["steps"][-1]
    assert then["counted"] and abs(then["secret_probability"] - now["secret_probability"]) > 0.01

    # the example's next speaker (p1) is not the chameleon, so whoever the page lets speak
    # next, the clue counts
    assert by_id(driver, "clue-player").get_attribute("value") == nxt
    field = by_id(driver, "clue-input")
    field.clear()
    field.send_keys(clue)
    by_id(driver, "clue-button").click()
    result = wait_until(
        "#clue-result[data-state=done]",
        lambda: (r := by_id(driver, "clue-result")).get_attribute("data-state") == "done" and r,
    )
    text = result.text
    assert shows_number(text, then["secret_probability"]), (text, then)
    assert shows_number(text, then["entropy_bits"]), (text, then)
    assert shows_number(text, then["information_gain_bits"]), (text, then)
    snap(driver, "5-clue-preview")


def submit_job(server: Server, body: bytes) -> str:
    r = httpx.post(
        server.url + "/v1/jobs",
        content=body,
        headers={"content-type": "application/x-ndjson"},
        timeout=TIMEOUT,
    )
    assert r.status_code == 202, r.text
    job_id = str(r.json()["id"])
    wait_until(
        f"job {job_id} done",
        lambda: (
            httpx.get(f"{server.url}/v1/jobs/{job_id}", timeout=TIMEOUT).json()["state"] == "done"
        ),
    )
    return job_id


def test_a_finished_jobs_curves_open_their_games(driver: Any, server: Server):
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    games = example_games("chameleon_batch")
    job_id = submit_job(server, (EXAMPLES / "chameleon_batch.jsonl").read_bytes())
    open_page(driver, f"{server.url}/ui?job={job_id}")
    assert set(options(driver, "curve-group")) >= {"model", "matchup", "difficulty"}

    def curves(by: str) -> Any:
        r = httpx.get(f"{server.url}/v1/jobs/{job_id}/curves", params={"by": by}, timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        return r.json()

    for by in ("model", "difficulty", "matchup"):
        if by_id(driver, "curve-group").get_attribute("value") != by:
            choose(driver, "curve-group", by)
        data = curves(by)
        if by != "model":  # the groups are the games' own (a game without one is a group too)
            assert {g["meta"][by] for g in games if by in g["meta"]} <= set(data["groups"])
        # one figure per metric (entropy, top-k), one point per (group, m) the API gives
        metrics = {row["metric"] for row in data["curves"]}
        assert {"entropy_bits", "top1"} <= metrics
        assert driver.execute_script(
            "return document.querySelectorAll('#curves svg').length"
        ) == len(metrics)
        drawn = driver.execute_script(
            "return Array.from(document.querySelectorAll('#curves circle.point'),"
            " c => [c.dataset.metric, c.dataset.group, +c.dataset.m])"
        )
        assert sorted(map(tuple, drawn)) == sorted(
            (r["metric"], r["group"], r["m"]) for r in data["curves"] if r["value"] is not None
        )
        shown = by_id(driver, "curve-filter").text + by_id(driver, "curves").text
        for group in data["groups"]:
            assert group in shown, (by, group)
    snap(driver, "6-job-curves")
    assert_accessible(driver, "a job's curves")

    # a point lists its games: those of its group with at least m counted clues; clicked
    # (one that nothing covers around its centre: points of several groups may share a place,
    # and a later group's line may cross a point), or from the keyboard (Enter on a point)
    data = curves("matchup")

    def listed_games() -> list[str]:
        links = by_id(driver, "curve-games").find_elements(By.TAG_NAME, "a")
        return sorted(a.get_attribute("data-game") or a.text.strip() for a in links)

    def games_of(point: Any) -> list[str]:
        group, m = point.get_attribute("data-group"), int(point.get_attribute("data-m"))
        return sorted(
            g["game_id"]
            for g in data["game_list"]
            if g["group"] == group and g["clues"] >= max(1, m)
        )

    points = driver.find_elements(By.CSS_SELECTOR, '#curves circle.point[data-m="1"]')
    found = driver.execute_script(
        """for (const p of arguments[0]) {
            p.scrollIntoView({block: 'center'});
            const b = p.getBoundingClientRect();
            const [x, y] = [Math.round(b.x + b.width / 2), Math.round(b.y + b.height / 2)];
            if (document.elementFromPoint(x, y) === p) return [p, x, y];
        }
        return null""",
        points,
    )
    assert found, "every point at m = 1 is covered by another or by a line"
    first, x, y = found
    mouse = ActionBuilder(driver)
    mouse.pointer_action.move_to_location(x, y).click()
    mouse.perform()
    want = games_of(first)
    assert want
    wait_until(
        f"#curve-games listing {want}, not {listed_games()}", lambda: listed_games() == want, 10
    )
    other = next(p for p in reversed(points) if games_of(p) != want)
    driver.execute_script("arguments[0].focus()", other)
    other.send_keys(Keys.ENTER)
    want = games_of(other)
    wait_until(
        f"#curve-games listing {want}, not {listed_games()}", lambda: listed_games() == want, 10
    )
    listed = listed_games()
    links = by_id(driver, "curve-games").find_elements(By.TAG_NAME, "a")
    ids = {g["id"]: g for g in games}
    assert set(listed) <= set(ids)
    # and a game opens in the transcript view, as the job scored it
    game = ids[listed[0]]
    link = next(a for a in links if (a.get_attribute("data-game") or a.text.strip()) == listed[0])
    act(driver, link.click)
    found = cells(driver)
    assert len(found) == len(game["turns"]) * len(game["candidates"])
    assert_grid_is(grid(found), posterior_grid(score(server, game, "cooccurrence")))
    query = parse_qs(urlsplit(driver.current_url).query)
    assert query.get("job") == [job_id] and query.get("game") == [game["id"]]
    snap(driver, "7-job-game")
    # the game's URL, shared, opens the same view
    url = driver.current_url
    driver.get("about:blank")
    open_page(driver, url)
    assert grid(cells(driver)) == grid(found)


def test_a_job_game_with_any_id_opens(driver: Any, server: Server):
    """Issue 37: game ids with "/", a quote, a backslash, a tab or Unicode, and the dot
    segments "." and "..", open in the job's game view from a shared URL (the page asks
    ``GET /v1/jobs/{id}/games?game_id=``: no URL parser rewrites a query)."""
    from urllib.parse import urlencode

    game = example_games(SPORTS)[0]
    ids = ["a/b", "..", ".", 'q"u\\o\tte é']
    body = "".join(json.dumps({**game, "id": gid}) + "\n" for gid in ids).encode()
    job_id = submit_job(server, body)
    want = posterior_grid(score(server, game, "cooccurrence"))
    for record, gid in enumerate(ids):
        query = urlencode({"job": job_id, "game": gid, "record": record})
        open_page(driver, f"{server.url}/ui?{query}")
        found = cells(driver)
        assert len(found) == len(game["turns"]) * len(game["candidates"]), gid
        assert_grid_is(grid(found), want)
        assert parse_qs(urlsplit(driver.current_url).query).get("game") == [gid]


def test_a_shared_url_restores_the_view(driver: Any, server: Server):
    load_example(driver, server, SPORTS, backend="embedding")
    choose(driver, "compare-select", "cooccurrence")
    url = driver.current_url
    query = parse_qs(urlsplit(url).query)
    assert query.get("example") == [SPORTS] and query.get("backend") == ["embedding"]
    shown = grid(cells(driver)), grid(cells(driver, "heatmap-compare"))

    driver.get("about:blank")
    open_page(driver, url)
    assert (grid(cells(driver)), grid(cells(driver, "heatmap-compare"))) == shown
    assert by_id(driver, "example-select").get_attribute("value") == SPORTS
    assert by_id(driver, "backend-select").get_attribute("value") == "embedding"
    assert by_id(driver, "compare-select").get_attribute("value") == "cooccurrence"

    # the contract's own form of the link, typed by hand
    open_page(driver, f"{server.url}/ui?example={SPORTS}&backend=embedding")
    assert grid(cells(driver)) == shown[0]
    snap(driver, "8-shared-url")


def test_back_and_forward_walk_through_the_views(driver: Any, server: Server):
    """Each view (an example, another game, a pasted transcript, a job's curves) is an entry
    of the browser's history; Back and Forward show it again, and a change within a view
    (the backend) is not one."""
    load_example(driver, server, SPORTS)
    sports = grid(cells(driver))
    choose(driver, "example-select", "chameleon_batch")
    batch = example_games("chameleon_batch")
    choose(driver, "game-select", options(driver, "game-select")[2])
    third = grid(cells(driver))
    assert_grid_is(third, posterior_grid(score(server, batch[2], "cooccurrence")))
    choose(driver, "backend-select", "embedding")  # replaces the entry, adds none
    by_embedding = grid(cells(driver))
    box = by_id(driver, "transcript-input")
    box.clear()
    box.click()
    (spy,) = example_games("spygame_two_spies")
    driver.execute_cdp_cmd("Input.insertText", {"text": json.dumps(spy)})
    act(driver, by_id(driver, "score-button").click)
    assert "example" not in parse_qs(urlsplit(driver.current_url).query)

    def query() -> dict[str, list[str]]:
        return parse_qs(urlsplit(driver.current_url).query)

    act(driver, driver.back)  # the third game of the batch, with the embedding backend
    assert query().get("example") == ["chameleon_batch"] and query().get("game") == [batch[2]["id"]]
    assert by_id(driver, "backend-select").get_attribute("value") == "embedding"
    assert grid(cells(driver)) == by_embedding
    act(driver, driver.back)  # its first game
    assert query().get("game") == [batch[0]["id"]]
    assert by_id(driver, "game-select").get_attribute("value") == "0"
    assert_grid_is(grid(cells(driver)), posterior_grid(score(server, batch[0], "embedding")))
    act(driver, driver.back)  # the first example
    assert query().get("example") == [SPORTS]
    assert by_id(driver, "example-select").get_attribute("value") == SPORTS
    choose(driver, "backend-select", "cooccurrence")
    assert grid(cells(driver)) == sports
    act(driver, driver.forward)
    act(driver, driver.forward)
    assert query().get("game") == [batch[2]["id"]]
    act(driver, driver.forward)  # the pasted transcript, kept by the page
    spy_cells = driver.execute_script(
        "return document.querySelectorAll('#spy-heatmap rect.cell').length"
    )
    assert spy_cells == len(spy["turns"]) * len(spy["players"])
    assert "Pasted" in status_text(driver)

    # a job's curves, then one of its games: Back shows the curves' URL again
    job_id = submit_job(server, (EXAMPLES / "chameleon_batch.jsonl").read_bytes())
    by_id(driver, "job-input").clear()
    by_id(driver, "job-input").send_keys(job_id)
    act(driver, by_id(driver, "job-open").click)
    assert query().get("job") == [job_id] and query().get("by") == ["model"]
    assert "example" not in query() and "game" not in query()
    act(driver, driver.back)
    assert "Pasted" in status_text(driver) and "job" not in query()
    act(driver, driver.forward)
    assert query().get("job") == [job_id] and "game" not in query()
    assert job_id in by_id(driver, "job-summary").text


def open_job_told_running(driver: Any, server: Server, *, always: bool) -> str:
    """Submit the batch example as a job, open the page, wrap its fetch so that the job's
    status says "running" (at its first reading, or at every one with ``always``), and open
    the job. The page counts its readings: ``window.__status`` of the job's status,
    ``window.__reads[what]`` of each ``/v1/jobs/{id}/<what>``. Returns the job's id."""
    job_id = submit_job(server, (EXAMPLES / "chameleon_batch.jsonl").read_bytes())
    open_page(driver, server.url + "/ui")
    driver.execute_script(
        """const real = window.fetch, job = arguments[0], always = arguments[1];
        window.__status = 0;
        window.__reads = {};
        window.fetch = async (input, init) => {
          const u = new URL(input instanceof Request ? input.url : String(input));
          const r = await real(input, init);
          if (u.pathname.endsWith(`/v1/jobs/${job}`)) {
            window.__status += 1;
            if (always || window.__status === 1) {
              const body = await r.json();
              body.state = "running";
              return new Response(JSON.stringify(body), {status: 200, headers: r.headers});
            }
          } else if (u.pathname.includes(`/v1/jobs/${job}/`)) {
            const what = u.pathname.split("/").pop();
            window.__reads[what] = (window.__reads[what] || 0) + 1;
          }
          return r;
        };""",
        job_id,
        always,
    )
    by_id(driver, "job-input").clear()
    by_id(driver, "job-input").send_keys(job_id)
    act(driver, by_id(driver, "job-open").click)
    return job_id


def test_a_running_jobs_curves_are_read_again_until_it_ends(driver: Any, server: Server):
    """While a job is queued or running its curves are read again every few seconds, with no
    action of the person's, and no more once it has ended. The job here is a real one that
    has finished; the page is told it is still running at its first reading (its fetch is
    wrapped, as a slow job would answer), so that the test does not depend on timing."""
    job_id = open_job_told_running(driver, server, always=False)
    summary = by_id(driver, "job-summary").text
    assert "running" in summary and "read again" in summary, summary
    games = len(example_games("chameleon_batch"))
    wait_until(
        "the summary saying the job is done",
        lambda: by_id(driver, "job-summary").text.startswith(f"Job {job_id}: done"),
        10,
    )
    assert state(driver) == "ready"  # read quietly: the page never went back to loading
    got = httpx.get(f"{server.url}/v1/jobs/{job_id}/curves", timeout=TIMEOUT).json()
    assert got["games"] + got["failed"] == games
    assert (
        f"{got['games']} games scored ({got['failed']} failed)" in by_id(driver, "job-summary").text
    )
    reads = driver.execute_script("return window.__reads.curves")
    assert reads == 2
    time.sleep(5)  # more than two periods: an ended job is not read again
    assert driver.execute_script("return window.__reads.curves") == reads


def test_a_running_job_with_nothing_new_is_not_read_in_full_again(driver: Any, server: Server):
    """While a job runs with no record finished since the last reading, each reading asks for
    the job's status alone: its curves, records, plane and comparison are not fetched again
    every 2 s. The job here has finished; the page is told it is still running at every
    reading of its status, with the same records done, as a stalled job would answer."""
    open_job_told_running(driver, server, always=True)
    assert "running" in by_id(driver, "job-summary").text
    first = driver.execute_script("return window.__reads")
    assert {"curves", "plane", "compare"} <= set(first), first
    status = driver.execute_script("return window.__status")
    wait_until(
        "two more readings of the job's status",
        lambda: driver.execute_script("return window.__status") >= status + 2,
        10,
    )
    assert driver.execute_script("return window.__reads") == first
    assert "running" in by_id(driver, "job-summary").text


def test_the_keyboard_reaches_a_cell_and_its_tooltip(driver: Any, server: Server):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    load_example(driver, server, SPORTS)
    found = {(c.turn, c.candidate): c for c in cells(driver)}
    (game,) = example_games(SPORTS)
    candidates = game["candidates"]
    driver.execute_script("document.activeElement && document.activeElement.blur()")
    body = driver.find_element("tag name", "body")
    body.click()

    def focused() -> Any:
        return driver.execute_script(
            "const a = document.activeElement;"
            " return a && a.matches('#heatmap rect.cell') ? [+a.dataset.turn, a.dataset.candidate]"
            " : null"
        )

    for _ in range(80):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        if focused():
            break
    start = focused()
    assert start, "Tab never reached a heat-map cell"

    def tooltip() -> str:
        return str(
            driver.execute_script(
                "const t = document.getElementById('tooltip');"
                " return t && t.getClientRects().length"
                " && getComputedStyle(t).visibility !== 'hidden' ? t.textContent : ''"
            )
        )

    def assert_tooltip_for(turn: int, candidate: str) -> None:
        text = wait_until(f"#tooltip for {candidate} after turn {turn}", tooltip, 5)
        assert candidate in text, text
        assert shows_number(text, found[(turn, candidate)].p), text

    assert_tooltip_for(*start)
    turn, candidate = start
    col = candidates.index(candidate)
    # arrow keys move along the row and down the column
    key, want = (
        (Keys.ARROW_RIGHT, (turn, candidates[col + 1]))
        if col + 1 < len(candidates)
        else (Keys.ARROW_LEFT, (turn, candidates[col - 1]))
    )
    ActionChains(driver).send_keys(key).perform()
    assert focused() == list(want)
    assert_tooltip_for(*want)
    down = (
        (Keys.ARROW_DOWN, want[0] + 1)
        if want[0] < len(game["turns"])
        else (Keys.ARROW_UP, want[0] - 1)
    )
    ActionChains(driver).send_keys(down[0]).perform()
    assert focused() == [down[1], want[1]]
    assert_tooltip_for(down[1], want[1])
    snap(driver, "9-keyboard-tooltip")
    assert_accessible(driver, "a cell's tooltip")

    # the mouse too
    last = driver.find_elements("css selector", "#heatmap rect.cell")[-1]
    ActionChains(driver).move_to_element(last).perform()
    c = cells(driver)[-1]
    assert_tooltip_for(c.turn, c.candidate)


def test_a_server_with_keys_asks_for_one(driver: Any, keyed_server: Server):
    assert httpx.get(keyed_server.url + "/v1/backends", timeout=TIMEOUT).status_code == 401
    driver.get(f"{keyed_server.url}/ui?example={SPORTS}")
    key = wait_until("#api-key shown", lambda: (k := by_id(driver, "api-key")).is_displayed() and k)
    assert key.accessible_name.strip()
    snap(driver, "10-api-key-prompt")

    key.clear()
    key.send_keys("not-the-key")
    act(driver, by_id(driver, "api-key-save").click, expect="settled")
    assert by_id(driver, "api-key").is_displayed()
    assert not cells(driver)

    key = by_id(driver, "api-key")
    key.clear()
    key.send_keys(API_KEY)
    act(driver, by_id(driver, "api-key-save").click)
    (game,) = example_games(SPORTS)
    report = score(keyed_server, game, "cooccurrence", authorization=f"Bearer {API_KEY}")
    assert_grid_is(grid(cells(driver)), posterior_grid(report))
    # kept for the session: a reload does not ask again
    open_page(driver, f"{keyed_server.url}/ui?example={SPORTS}")
    assert len(cells(driver)) == len(report["steps"]) * len(report["candidates"])


# inspect-ai leaves an anyio memory stream of its eval loop unclosed (tests/test_inspect.py)
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_uploaded_inspect_log_shows_its_games(
    driver: Any, server: Server, tmp_path: Path, default_index: Path
):
    """A .eval log is read by the server into its games, each scored as a pasted one; the
    log of another task is an error that names the sample and what is missing."""
    pytest.importorskip("inspect_ai")
    import gc

    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate

    from leakage.transcripts import iter_transcripts

    from .inspect_tasks import scripted_model

    model = scripted_model()
    args = {"games": 2, "seed": 3, "backend_options": {"index": str(default_index)}}
    roles = {"chameleon": model, "non_chameleon": model}
    other = Task(dataset=[Sample(input="Say hi.", id="q1")], solver=generate())
    logs = []
    for task, kw in (("leakage/chameleon", {"task_args": args, "model_roles": roles}), (other, {})):
        (log,) = eval(task, model=model, log_dir=str(tmp_path), display="none", **kw)
        gc.collect()
        assert log.status == "success", log.error
        logs.append(Path(log.location))
    games = [g.model_dump(mode="json", exclude_none=True) for g in iter_transcripts([logs[0]])]

    open_page(driver, server.url + "/ui")
    act(driver, lambda: by_id(driver, "file-input").send_keys(str(logs[0])))
    assert len(options(driver, "game-select")) == len(games) == 2
    assert_grid_is(grid(cells(driver)), posterior_grid(score(server, games[0], "cooccurrence")))
    act(driver, lambda: by_id(driver, "file-input").send_keys(str(logs[1])), expect="error")
    message = status_text(driver)
    assert "sample q1 (epoch 1)" in message and "store.leakage_transcript" in message, message


# -- jobs from the page, exports, the charts' keyboard and text size ------------------------


def _downloads(driver: Any, folder: Path) -> Path:
    """Let the page's downloads land in ``folder`` (DevTools' download behaviour)."""
    folder.mkdir(parents=True, exist_ok=True)
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)}
    )
    return folder


def _downloaded(folder: Path, name: str) -> bytes:
    path = folder / name
    wait_until(f"{name} downloaded", lambda: path.is_file() and path.stat().st_size > 0, 20)
    time.sleep(0.2)
    return path.read_bytes()


def _job_rows(driver: Any) -> dict[str, str]:
    wait_until("the list of jobs read", lambda: by_id(driver, "job-list-note").text, 10)
    return dict(
        driver.execute_script(
            "return Array.from(document.querySelectorAll('#job-list tr[data-job]'),"
            " r => [r.dataset.job, r.dataset.state])"
        )
    )


def test_a_job_is_submitted_watched_downloaded_and_deleted_from_the_page(
    driver: Any, server: Server, tmp_path: Path
):
    from selenium.webdriver.common.by import By

    folder = _downloads(driver, tmp_path / "dl")
    upload = tmp_path / "games.jsonl"
    batch = (EXAMPLES / "chameleon_batch.jsonl").read_bytes()
    upload.write_bytes(batch + b'{"not": "a transcript"}\n')
    open_page(driver, server.url + "/ui")
    assert by_id(driver, "job-list-view").is_displayed()
    before = set(_job_rows(driver))
    by_id(driver, "job-file").send_keys(str(upload))
    act(driver, by_id(driver, "job-submit").click)
    assert "Submitted 1 job" in status_text(driver)
    new = set(_job_rows(driver)) - before
    assert len(new) == 1
    (job_id,) = new
    # the list is read again until the job has ended
    wait_until("the job done in the list", lambda: _job_rows(driver).get(job_id) == "done", 60)
    row = driver.find_element(By.CSS_SELECTOR, f'#job-list tr[data-job="{job_id}"]')
    assert "7 of 7 (1 failed)" in row.text
    assert not row.find_elements(By.CSS_SELECTOR, '[data-action="cancel"]')  # finished
    snap(driver, "7-jobs-list")
    # downloads: the bytes the API gives
    want = httpx.get(f"{server.url}/v1/jobs/{job_id}/results", timeout=TIMEOUT).content
    act(driver, in_job_row(driver, job_id, '[data-download="jsonl"]'))
    assert _downloaded(folder, f"{job_id}.jsonl") == want
    act(driver, in_job_row(driver, job_id, '[data-download="parquet"]'))
    assert _downloaded(folder, f"{job_id}.parquet")[:4] == b"PAR1"
    act(driver, in_job_row(driver, job_id, '[data-download="html"]'))
    html = _downloaded(folder, f"leakage-report-{job_id}.html").decode()
    assert (
        "<h2>Entropy after m clues</h2>" in html and html.count("<svg") == 6
    )  # the leaderboard, four figures and the reveal-vs-conceal plane
    # opened: its curves and the table of its games and failed records
    act(driver, in_job_row(driver, job_id, '[data-action="open"]'))
    assert parse_qs(urlsplit(driver.current_url).query)["job"] == [job_id]
    assert not by_id(driver, "job-list-view").is_displayed()
    records = driver.find_elements(By.CSS_SELECTOR, "#job-records-table tbody tr")
    assert len(records) == 7
    assert "1 failed" in by_id(driver, "records-count").text

    def column(i: int) -> list[str]:
        return [
            r.find_elements(By.TAG_NAME, "td")[i].text
            for r in driver.find_elements(By.CSS_SELECTOR, "#job-records-table tbody tr")
        ]

    driver.find_element(
        By.CSS_SELECTOR, '#job-records-table button[data-sort="final_entropy_bits"]'
    ).click()
    values = [float(v) for v in column(5) if v != "–"]
    assert values == sorted(values) and len(values) == 6
    driver.find_element(
        By.CSS_SELECTOR, '#job-records-table button[data-sort="final_entropy_bits"]'
    ).click()
    values = [float(v) for v in column(5) if v != "–"]
    assert values == sorted(values, reverse=True)
    from selenium.webdriver.support.ui import Select

    Select(by_id(driver, "records-show")).select_by_value("failed")
    # the last column: the error (the columns no record fills are left out)
    assert column(0) == ["6"] and "unknown_input_format" in column(-1)[0]
    Select(by_id(driver, "records-show")).select_by_value("all")
    by_id(driver, "records-filter").send_keys("kitchen")
    assert len(column(0)) == 1 and column(1) == ["example-chameleon-kitchen"]
    snap(driver, "8-job-records")
    # Back returns to the list
    driver.back()
    wait_ready(driver)
    assert by_id(driver, "job-list-view").is_displayed()
    assert not by_id(driver, "job-view").is_displayed()
    # deleted
    driver.execute_script("window.confirm = () => true")
    act(driver, in_job_row(driver, job_id, '[data-action="delete"]'))
    assert job_id not in _job_rows(driver)
    assert httpx.get(f"{server.url}/v1/jobs/{job_id}", timeout=TIMEOUT).status_code == 404


def test_a_running_job_is_cancelled_from_the_page(driver: Any, server: Server, tmp_path: Path):

    upload = tmp_path / "many.jsonl"
    upload.write_bytes((EXAMPLES / "chameleon_batch.jsonl").read_bytes() * 400)
    open_page(driver, server.url + "/ui")
    before = set(_job_rows(driver))
    by_id(driver, "job-file").send_keys(str(upload))
    act(driver, by_id(driver, "job-submit").click)
    (job_id,) = set(_job_rows(driver)) - before
    act(driver, in_job_row(driver, job_id, '[data-action="cancel"]'))
    assert _job_rows(driver)[job_id] == "cancelled"
    got = httpx.get(f"{server.url}/v1/jobs/{job_id}", timeout=TIMEOUT).json()
    assert got["state"] == "cancelled"
    assert got["total"] is None or got["done"] < got["total"]  # cut short


def test_charts_and_tables_export_as_png_svg_and_csv(driver: Any, server: Server, tmp_path: Path):
    import csv
    import io
    import xml.etree.ElementTree as ET

    from selenium.webdriver.common.by import By

    folder = _downloads(driver, tmp_path / "dl")
    open_page(driver, server.url + "/ui?example=chameleon_sports&backend=cooccurrence")
    fig = driver.find_element(By.CSS_SELECTOR, "#entropy-chart").find_element(By.XPATH, "..")
    fig.find_element(By.CSS_SELECTOR, 'button[data-format="png"]').click()
    png = _downloaded(folder, "entropy-chart.png")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(png[16:20], "big")
    assert width >= 2 * 300  # twice the chart's size in CSS pixels
    fig.find_element(By.CSS_SELECTOR, 'button[data-format="svg"]').click()
    svg = ET.fromstring(_downloaded(folder, "entropy-chart.svg"))
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    circles = svg.findall(".//{http://www.w3.org/2000/svg}circle")
    game = example_games("chameleon_sports")[0]
    assert len(circles) == len(game["turns"]) + 1
    # styles written in as attributes (a style attribute is refused by the page's CSP)
    assert all(c.get("fill") and not c.get("style") for c in circles)
    box = driver.find_element(By.CSS_SELECTOR, '.exports[data-for="turns"] button')
    box.click()
    rows = list(csv.reader(io.StringIO(_downloaded(folder, "turns.csv").decode())))
    assert rows[0][:4] == ["turn", "player", "model", "clue"]  # the speaker's model
    assert len(rows) == len(game["turns"]) + 1
    assert [r[3].removesuffix(" (not counted)") for r in rows[1:]] == [
        t["text"] for t in game["turns"]
    ]


def test_a_chart_is_one_tab_stop_moved_through_with_the_arrow_keys(driver: Any, server: Server):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    open_page(driver, server.url + "/ui?example=chameleon_sports&backend=cooccurrence")
    stops = driver.execute_script(
        "return document.querySelectorAll('#entropy-chart [tabindex=\"0\"]').length"
    )
    assert stops == 1
    driver.execute_script("document.querySelector('#entropy-chart [tabindex=\"0\"]').focus()")

    def focused() -> Any:
        return driver.execute_script(
            "const a = document.activeElement; return a.closest('#entropy-chart') ?"
            " +a.dataset.turn : null"
        )

    assert focused() == 0
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    ActionChains(driver).send_keys(Keys.ARROW_RIGHT).perform()
    assert focused() == 2
    ActionChains(driver).send_keys(Keys.END).perform()
    n = len(example_games("chameleon_sports")[0]["turns"])
    assert focused() == n
    ActionChains(driver).send_keys(Keys.TAB).perform()
    assert focused() is None  # one Tab leaves the chart
    ActionChains(driver).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
    assert focused() == n  # and Shift+Tab comes back to the point it left


def test_nothing_sticks_out_of_its_box_at_phone_width(driver: Any, server: Server):
    """At 390 px every control lies inside its panel (a file input's padding once took it
    15 px past, the game picker a game's long name 190 px), and a heat map's leaning column
    labels inside the map (the last one, Xylophone, was cut at the map's edge)."""
    try:
        driver.set_window_size(390, 844)
        url = "/ui?example=chameleon_batch&game=example-chameleon-instruments&backend=cooccurrence"
        open_page(driver, server.url + url)
        out = driver.execute_script(
            """const out = [];
            for (const c of document.querySelectorAll('.panel input, .panel select')) {
              const p = c.closest('.panel'), r = c.getBoundingClientRect();
              if (!r.width) continue;
              const pad = parseFloat(getComputedStyle(p).paddingRight);
              const inner = p.getBoundingClientRect().right - pad;
              if (r.right > inner + 0.5) out.push([c.id || c.type, r.right, inner]);
            }
            const svg = document.getElementById('heatmap');
            const right = svg.getBoundingClientRect().right;
            for (const t of svg.querySelectorAll('text.col-label'))
              if (t.getBoundingClientRect().right > right + 0.5) out.push([t.textContent, right]);
            return out"""
        )
    finally:
        driver.set_window_size(*WINDOW)
    assert out == []


def test_chart_text_follows_the_browsers_font_size(driver: Any, server: Server):
    """At the phone's width too: the charts' text is the page's rem, not a fixed size that
    the chart's scaling shrinks."""
    sizes = {}
    try:
        for width, height in ((1400, 900), (390, 844)):
            driver.set_window_size(width, height)
            for root in (16, 24):
                open_page(driver, server.url + "/ui?example=chameleon_sports&backend=cooccurrence")
                driver.execute_script(f"document.documentElement.style.fontSize = '{root}px'")
                driver.execute_script("window.dispatchEvent(new Event('resize'))")
                time.sleep(0.5)
                sizes[width, root] = driver.execute_script(
                    "const t = document.querySelector('#entropy-chart text.tick');"
                    " return t.getBoundingClientRect().height"
                )
                if (width, root) == (390, 16):
                    snap(driver, "9-phone")
    finally:
        driver.set_window_size(*WINDOW)
    for width in (1400, 390):
        assert sizes[width, 16] >= 11, sizes  # 0.75rem of 16 px: 12 px, not shrunk
        assert sizes[width, 24] > sizes[width, 16] * 1.3, sizes
