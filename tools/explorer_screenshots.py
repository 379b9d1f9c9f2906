"""The explorer's pictures in docs/explorer.md (and the README's), made from a real server.

Offline: ``leakage serve`` on 127.0.0.1 in a temporary ``LEAKAGE_HOME`` (co-occurrence and
embedding, both loaded at start), reading the co-occurrence index ``--index`` names (default:
``$LEAKAGE_INDEX``, else the default home's ``~/.cache/leakage/corpus/default.sqlite``, else
one ``leakage corpus build`` makes in the temporary home); headless Chromium (Selenium,
driver and browser by path, so nothing is downloaded) drives the page as a person does and
writes small PNGs (reduced to 128 colours) into ``--out``:

- ``explorer.png``: a Chameleon example game (the instruments card of
  ``chameleon_batch``) scored by two backends side by side: heat maps, where they disagree,
  the turn table and the curves (the README's picture too);
- ``explorer-ck-arena.png``: a raw CK-Arena log (``--ck-arena``, read in place) uploaded:
  the word posterior, who is the spy, the votes and the turns (skipped, saying so, when the
  folder holds no log);
- ``explorer-phone-jobs.png`` and ``explorer-phone-job.png``: at a phone's 390x844, the jobs
  list (``chameleon_batch.jsonl`` uploaded from the page, and the CK-Arena logs by path) and
  a job's view (``chameleon_batch``'s: its short model names leave room for a curve on the
  screen, where the CK-Arena logs' '+'-joined model groups fill it);
- ``explorer-three-models.png``: the CK-Arena job by speaker with the three models that gave
  the most clues picked (the model check boxes and their curves);
- ``explorer-leaderboard.png``: the CK-Arena job's first view, its leaderboard: the reader's
  sentence and the civilians' table;
- ``explorer-seat.png``: the options row with a seat picked (``non-chameleon``: each
  non-chameleon's own seat, its words from ``GET /v1/seats``) and the Sports card scored
  from it, the game's seat named under its title.

Each picture is checked before it is written: the page is ready (not an error), and at the
phone's width the page does not scroll sideways.

    python tools/explorer_screenshots.py --out docs/img
    python tools/explorer_screenshots.py --only leaderboard   # one picture (and its job)
    python tools/explorer_screenshots.py --only seat
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.common import SHARED_DATA, Server  # noqa: E402  (the repository's own)

EXAMPLES = REPO / "corpora" / "examples"
CK_ARENA = SHARED_DATA / "ck-arena-dev" / "logs"
DESKTOP = (1280, 900)
PHONE = (390, 844)
TIMEOUT = 120.0  # the embedding model's first load on a busy machine
MAX_BYTES = 150_000


def default_index(home: Path) -> Path:
    """The index to read: ``$LEAKAGE_INDEX``, the default home's, or one built in ``home``."""
    named = os.environ.get("LEAKAGE_INDEX")
    if named:
        return Path(named)
    cached = Path.home() / ".cache" / "leakage" / "corpus" / "default.sqlite"
    if cached.is_file():
        return cached
    out = home / "corpus" / "default.sqlite"
    print(f"building the default co-occurrence index in {out} (a minute or two)")
    subprocess.run(
        [sys.executable, "-m", "leakage", "corpus", "build", "--out", str(out)],
        env={**os.environ, "LEAKAGE_HOME": str(home)},
        check=True,
    )
    return out


class Page:
    """Headless Chromium on the explorer, with the few moves the pictures need."""

    def __init__(self) -> None:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service

        browser = shutil.which("chromium") or shutil.which("chromium-browser")
        driver = shutil.which("chromedriver")
        if not browser or not driver:
            raise SystemExit(
                "needs Chromium and chromedriver: apt-get install chromium chromium-driver"
            )
        options = webdriver.ChromeOptions()
        options.binary_location = browser
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    "--no-first-run", "--disable-extensions", "--hide-scrollbars=false",
                    "--lang=en-GB", f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):  # fmt: skip
            options.add_argument(arg)
        self.d = webdriver.Chrome(service=Service(driver), options=options)
        self.d.set_page_load_timeout(TIMEOUT)
        self.viewport(*DESKTOP)

    def quit(self) -> None:
        self.d.quit()

    def js(self, script: str, *args: Any) -> Any:
        return self.d.execute_script(script, *args)

    def viewport(self, width: int, height: int, *, mobile: bool = False) -> None:
        """The page's viewport in CSS pixels, at one device pixel per CSS pixel."""
        self.d.execute_cdp_cmd(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
        )
        self.js("window.dispatchEvent(new Event('resize'))")
        time.sleep(0.5)  # the charts are drawn again at their new width

    def state(self) -> str:
        return str(self.js("return document.body ? document.body.dataset.state || '' : ''"))

    def status(self) -> str:
        return str(self.js("return document.getElementById('status').textContent")).strip()

    def wait(self, what: str, check: Any, timeout: float = TIMEOUT) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = check()
            if value:
                return value
            time.sleep(0.1)
        raise SystemExit(f"timed out after {timeout} s waiting for {what}")

    def wait_ready(self) -> None:
        self.wait("the page's state ready", lambda: self.state() in ("ready", "error"))
        if self.state() == "error":
            raise SystemExit(f"the page reports an error: {self.status()!r}")

    def act(self, action: Any) -> None:
        """Do something that makes the page work, and wait until it is drawn."""
        self.js("document.body.dataset.state = ''")
        action()
        self.wait_ready()

    def open(self, url: str) -> None:
        self.d.get(url)
        self.wait("body[data-state]", lambda: self.state(), 30)
        self.wait_ready()

    def el(self, id_: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.d.find_element(By.ID, id_)

    def top_of(self, id_: str) -> int:
        return int(
            self.js(
                f"return document.getElementById('{id_}').getBoundingClientRect().top + scrollY"
            )
        )

    def bottom_of(self, id_: str) -> int:
        return int(
            self.js(
                f"return document.getElementById('{id_}').getBoundingClientRect().bottom + scrollY"
            )
        )

    def sideways(self) -> int:
        """How far the page scrolls sideways (0: not at all)."""
        return int(
            self.js(
                "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
        )

    def whole_page(self, width: int, top: int, bottom: int) -> bytes:
        """The page from ``top`` to ``bottom`` (CSS pixels) at ``width``: the viewport is
        made as tall as the page for it (so that nothing is drawn again part-way), then set
        back."""
        full = int(self.js("return document.documentElement.scrollHeight"))
        self.viewport(width, full)
        try:
            png = self.d.get_screenshot_as_png()
        finally:
            self.viewport(*DESKTOP)
        return crop(png, (0, top, width, min(bottom, full)))

    def screen(self, scroll_to: str) -> bytes:
        """What a phone shows with ``#scroll_to`` at the top of its screen."""
        self.js(f"document.getElementById('{scroll_to}').scrollIntoView({{block: 'start'}})")
        time.sleep(0.3)
        return self.d.get_screenshot_as_png()


def crop(png: bytes, box: tuple[int, int, int, int]) -> bytes:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as im:
        out = io.BytesIO()
        im.crop(box).save(out, "PNG")
        return out.getvalue()


def save(png: bytes, path: Path, caption: str, *, octree: bool = False) -> None:
    """``png`` reduced to 128 colours (the charts and tables need no more), or 64 where that
    is still over MAX_BYTES. ``octree``: Pillow's fast octree instead of median cut, which
    keeps the few pixels of a table's colour swatches (median cut greys them)."""
    from PIL import Image

    method = Image.Quantize.FASTOCTREE if octree else Image.Quantize.MEDIANCUT
    for colours in (128, 64):
        with Image.open(io.BytesIO(png)) as im:
            small = im.convert("RGB").quantize(
                colors=colours, method=method, dither=Image.Dither.NONE
            )
            out = io.BytesIO()
            small.save(out, "PNG", optimize=True)
        data = out.getvalue()
        if len(data) <= MAX_BYTES:
            break
    else:
        raise SystemExit(f"{path.name} would be {len(data):,} bytes (more than {MAX_BYTES:,})")
    path.write_bytes(data)
    print(
        f"wrote {path} ({len(data):,} bytes, {small.width}x{small.height}, {colours} colours): "
        f"{caption}"
    )


def two_backends(page: Page, server: Server, out: Path) -> None:
    page.viewport(*DESKTOP)
    page.open(
        server.url + "/ui?example=chameleon_batch&game=example-chameleon-instruments"
        "&backend=cooccurrence&compare=embedding"
    )
    bottom = max(page.bottom_of("entropy-chart"), page.bottom_of("psecret-chart")) + 12
    png = page.whole_page(DESKTOP[0], 0, bottom)
    save(png, out / "explorer.png", "a Chameleon game scored by two backends side by side")


def ck_arena(page: Page, server: Server, logs: Path, out: Path) -> None:
    found = sorted(logs.glob("*.json")) if logs.is_dir() else []
    if not found:
        print(f"skipped explorer-ck-arena.png: no CK-Arena log (*.json) in {logs}")
        return
    page.viewport(*DESKTOP)
    page.open(server.url + "/ui")
    page.act(lambda: page.el("file-input").send_keys(str(found[0])))
    if found[0].name not in page.status():
        raise SystemExit(f"the page does not name the log uploaded: {page.status()!r}")
    top = page.top_of("status") - 4
    bottom = page.bottom_of("turns") + 4  # not the curves' captions under it
    png = page.whole_page(DESKTOP[0], top, bottom)
    save(png, out / "explorer-ck-arena.png", f"a raw CK-Arena log uploaded ({found[0].name})")


def submit_jobs(page: Page, logs: Path) -> None:
    """``chameleon_batch.jsonl`` uploaded, and the CK-Arena logs by path where there are
    any, from the page's jobs panel; until every job has ended."""
    page.el("job-file").send_keys(str(EXAMPLES / "chameleon_batch.jsonl"))
    page.act(page.el("job-submit").click)
    if logs.is_dir() and any(logs.glob("*.json")):
        page.el("job-paths").send_keys(str(logs))
        page.act(lambda: page.el("job-submit").click())
    page.wait(
        "every job to end",
        lambda: page.js(
            "const rows = document.querySelectorAll('#job-list tr[data-job]');"
            " return rows.length > 0 && Array.from(rows).every(r => r.dataset.state === 'done')"
        ),
        600,
    )


def phone(page: Page, server: Server, logs: Path, out: Path) -> None:
    page.viewport(*DESKTOP)
    page.open(server.url + "/ui")
    submit_jobs(page, logs)
    page.viewport(*PHONE, mobile=True)
    page.open(server.url + "/ui")
    check_phone(page, "the jobs list")
    save(page.screen("jobs-panel"), out / "explorer-phone-jobs.png", "the jobs list at 390x844")

    # chameleon_batch's job (uploaded): its short model names leave room for a curve on the
    # screen, where the CK-Arena logs' ten '+'-joined model groups fill it
    page.act(
        lambda: page.js(
            "Array.from(document.querySelectorAll('#job-list tr[data-job]'))"
            ".find(r => r.textContent.includes('chameleon_batch.jsonl'))"
            ".querySelector('[data-action=\"open\"]').click()"
        )
    )
    page.wait("the job's curves", lambda: page.js("return !!document.querySelector('#curves svg')"))
    time.sleep(0.5)
    check_phone(page, "a job's view")
    save(page.screen("job-view"), out / "explorer-phone-job.png", "a job's view at 390x844")


def three_models(page: Page, server: Server, out: Path) -> None:
    """The CK-Arena job (submitted by ``phone``) by speaker with the three models that gave
    the most clues picked: the model check boxes, the curves, and every pair per role."""
    import json
    import urllib.request
    from urllib.parse import urlencode

    def get(path: str) -> Any:
        with urllib.request.urlopen(server.url + path, timeout=TIMEOUT) as r:
            return json.load(r)

    jobs = [j for j in get("/v1/jobs")["jobs"] if j["source"] == "path"]
    if not jobs:
        print("skipped explorer-three-models.png: no CK-Arena job")
        return
    job = jobs[0]["id"]
    models = get(f"/v1/jobs/{job}/compare")["models"][:3]
    query = urlencode([("job", job), ("by", "speaker"), *(("models", m) for m in models)])
    page.viewport(*DESKTOP)
    page.open(f"{server.url}/ui?{query}")
    page.wait("the pairs", lambda: page.js("return !document.getElementById('pairs').hidden"))
    time.sleep(0.5)
    png = page.whole_page(DESKTOP[0], page.top_of("model-select") - 4, page.bottom_of("curves") + 8)
    save(png, out / "explorer-three-models.png", f"three models picked ({', '.join(models)})")


def leaderboard(page: Page, server: Server, logs: Path, out: Path) -> None:
    """The CK-Arena job's leaderboard (the job ``phone`` submitted, or one submitted here by
    path): the reader's sentence, the notes and the first table (the civilians')."""
    import json
    import urllib.request

    def call(path: str, body: bytes | None = None) -> Any:
        req = urllib.request.Request(server.url + path, data=body)
        if body is not None:
            req.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(req, timeout=TIMEOUT) as r:
            return json.load(r)

    jobs = [j for j in call("/v1/jobs")["jobs"] if j["source"] == "path"]
    if not jobs and not (logs.is_dir() and any(logs.glob("*.json"))):
        print(f"skipped explorer-leaderboard.png: no CK-Arena log (*.json) in {logs}")
        return
    job = jobs[0]["id"] if jobs else None
    if job is None:
        made = call("/v1/jobs?input_format=ck-arena", json.dumps({"path": str(logs)}).encode())
        job = made["id"]
    page.wait("the job to end", lambda: call(f"/v1/jobs/{job}")["state"] == "done", 600)
    page.viewport(*DESKTOP)
    page.open(f"{server.url}/ui?job={job}")
    page.wait(
        "the leaderboard", lambda: page.js("return !!document.querySelector('#leaderboard table')")
    )
    bottom = int(
        page.js(
            "return document.querySelector('#leaderboard .board').getBoundingClientRect().bottom"
            " + scrollY"
        )
    )
    png = page.whole_page(DESKTOP[0], page.top_of("leaderboard") - 4, bottom + 4)
    save(
        png, out / "explorer-leaderboard.png", "a CK-Arena job's leaderboard (civilians)",
        octree=True,
    )  # fmt: skip


def seat(page: Page, server: Server, out: Path) -> None:
    """The options row with the seat ``non-chameleon`` picked, as a person picks it, and the
    Sports card scored from that seat: from the options row to the heat map's last row."""
    from selenium.webdriver.support.ui import Select

    page.viewport(*DESKTOP)
    page.open(server.url + "/ui?example=chameleon_sports&backend=cooccurrence")
    page.act(lambda: Select(page.el("seat-select")).select_by_value("non-chameleon"))
    said = page.el("game-seat").text
    if "non-chameleon" not in said:
        raise SystemExit(f"the game does not name the seat picked: {said!r}")
    top = page.top_of("score-options") - 6
    png = page.whole_page(DESKTOP[0], top, page.bottom_of("heatmap") + 8)
    save(png, out / "explorer-seat.png", "a seat picked and the game scored from it")


def check_phone(page: Page, what: str) -> None:
    over = page.sideways()
    if over > 0:
        raise SystemExit(f"{what} scrolls sideways by {over} px at {PHONE[0]} px wide")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img", help="folder of the PNGs")
    ap.add_argument("--index", type=Path, help="co-occurrence index (.sqlite)")
    ap.add_argument("--ck-arena", type=Path, default=CK_ARENA, help="folder of CK-Arena logs")
    ap.add_argument(
        "--only",
        choices=["leaderboard", "seat"],
        help="draw only this picture (and its job, if any)",
    )
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="leakage-shots-") as tmp:
        home = Path(tmp)
        index = args.index or default_index(home)
        logs = args.ck_arena.resolve()
        both = "cooccurrence,embedding"
        settings = {
            "LEAKAGE_BACKENDS": both,
            "LEAKAGE_PRELOAD": both,
            "LEAKAGE_BACKEND_LOAD_WAIT": "300",
            "LEAKAGE_ALLOWED_PATHS": str(logs) if logs.is_dir() else None,
        }
        server = Server(home, index, settings, ready_seconds=300)
        try:
            page = Page()
            try:
                if args.only is None:
                    two_backends(page, server, args.out)
                    ck_arena(page, server, logs, args.out)
                    phone(page, server, logs, args.out)
                    three_models(page, server, args.out)
                if args.only in (None, "leaderboard"):
                    leaderboard(page, server, logs, args.out)
                if args.only in (None, "seat"):
                    seat(page, server, args.out)
            finally:
                page.quit()
        finally:
            server.stop()


if __name__ == "__main__":
    main()
