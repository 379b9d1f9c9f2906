"""The picture of ``inspect view`` in docs/inspect.md: a scored leakage/chameleon game.

Offline: two Chameleon games played by scripted mockllm players (tests/inspect_tasks.py) on
the co-occurrence backend over the index ``--index`` names (``leakage index build`` makes
it), written to a log folder; ``inspect view`` serves that folder on 127.0.0.1, and headless
Chromium (Selenium, driver and browser by path) opens the first sample's Scoring tab, where
the leakage scorer's value and its turn-by-turn explanation are shown.

    python tools/inspect_view_screenshot.py --index ~/.leakage/corpus/default.sqlite \\
        --out docs/img/inspect-view.png
"""

from __future__ import annotations

import argparse
import gc
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def play(index: Path, log_dir: Path) -> Path:
    from inspect_ai import eval

    from tests.inspect_tasks import scripted_model

    model = scripted_model()
    (log,) = eval(
        "leakage/chameleon",
        model=model,
        model_roles={"chameleon": model, "non_chameleon": model},
        task_args={"games": 2, "seed": 3, "backend_options": {"index": str(index)}},
        log_dir=str(log_dir),
        display="none",
    )
    gc.collect()
    if log.status != "success":
        raise SystemExit(f"the eval did not succeed: {log.error}")
    return Path(log.location)


def _click_text(driver, text: str, timeout: float = 30) -> None:
    """Click the innermost visible element whose own text is ``text``."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + timeout
    xpath = f"//*[normalize-space(text())={text!r}]"
    while time.monotonic() < deadline:
        for el in driver.find_elements(By.XPATH, xpath):
            if el.is_displayed():
                el.click()
                return
        time.sleep(0.3)
    raise SystemExit(f"inspect view shows no {text!r} to click")


def _wait_text(driver, text: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in driver.execute_script("return document.body.innerText"):
            return
        time.sleep(0.3)
    raise SystemExit(f"inspect view never showed {text!r}")


def screenshot(log_dir: Path, out: Path, width: int, height: int) -> None:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    port = _free_port()
    inspect = Path(sys.executable).parent / "inspect"
    view = subprocess.Popen(
        [str(inspect), "view", "--log-dir", str(log_dir), "--host", "127.0.0.1",
         "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}", "--lang=en-GB"):  # fmt: skip
        options.add_argument(arg)
    driver = webdriver.Chrome(
        service=Service(shutil.which("chromedriver") or "chromedriver"), options=options
    )
    try:
        deadline = time.monotonic() + 60
        while True:  # inspect view takes a few seconds to serve
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or view.poll() is not None:
                    raise SystemExit("inspect view did not start") from None
                time.sleep(0.5)
        driver.get(f"http://127.0.0.1:{port}/")
        _click_text(driver, "leakage/chameleon")  # the log, in the list of logs
        _wait_text(driver, "chameleon-3-000")
        _click_text(driver, "chameleon-3-000")  # the first sample
        _click_text(driver, "Scoring")  # its scores and their explanations
        _wait_text(driver, "P(secret)")
        time.sleep(1)
        out.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(out))
    finally:
        driver.quit()
        view.terminate()
        view.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--index", type=Path, required=True, help="co-occurrence index (.sqlite)")
    ap.add_argument("--out", type=Path, default=REPO / "docs" / "img" / "inspect-view.png")
    ap.add_argument("--size", default="1280x900", help="browser window, WIDTHxHEIGHT")
    args = ap.parse_args()
    width, height = (int(x) for x in args.size.split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp) / "logs"
        log = play(args.index, logs)
        print(f"log: {log.name}")
        screenshot(logs, args.out, width, height)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
