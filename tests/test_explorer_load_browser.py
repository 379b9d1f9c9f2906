"""The explorer (``/ui``) while a backend's first load takes longer than a request may wait:
the page says what the server says (the time so far and the last load's), asks again on
Retry-After, and draws the game once the load has ended, instead of failing.

The same headless Chromium as ``test_explorer_browser.py`` (its fixtures), against a real
``leakage serve`` with a slow backend registered before it starts: ``fslow`` loads once the
test creates a file, so that the page is seen waiting first.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from . import browser_support as support
from . import test_explorer_browser as page
from .browser_support import serving, wait_until
from .test_explorer_browser import (
    SPORTS,
    assert_grid_is,
    by_id,
    cells,
    example_games,
    grid,
    load_example,
    posterior_grid,
    score,
    snap,
    state,
    status_text,
    wait_ready,
)
from .test_service_server import Server, server_env

# test_explorer_browser's browser and its console check (no error, no CSP violation)
browser_paths, driver, console_clean = page.browser_paths, page.driver, page.console_clean

# ``leakage serve`` with ``fslow`` registered: it loads once the file EXPLORER_LOAD_GATE names
# exists. Deterministic: log P(clue | w) is minus the letters the clue and the word do not share.
SERVE_WITH_A_SLOW_BACKEND = """
import os, sys, time
from pathlib import Path
import numpy as np
from leakage.backends import base

class Overlap:
    name = "fslow"
    def info(self):
        return {"backend": self.name}
    def loglik(self, clues, candidates, *, category=None):
        return np.array([[-float(len(set(c) ^ set(w))) for w in candidates] for c in clues])

@base.register_backend("fslow")
def fslow():
    gate = Path(os.environ["EXPLORER_LOAD_GATE"])
    deadline = time.monotonic() + 120
    while not gate.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return Overlap()

from leakage.cli import main
sys.argv = ["leakage", "serve", "--host", "127.0.0.1", *sys.argv[1:]]
main()
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("explorer-load")


@pytest.fixture(scope="module")
def server_start(home: Path, default_index: Path) -> Iterator[Future[Server]]:
    """The server, starting in a thread while the browser starts. Its last load of
    ``fslow`` took 2 s (as a restarted server finds it), so that the page asks again
    every 2 s."""
    (home / "service").mkdir()
    (home / "service" / "backend-loads.json").write_text(json.dumps({"fslow": 2.0}))
    env = server_env(
        home,
        default_index,
        LEAKAGE_BACKENDS="cooccurrence,fslow",
        LEAKAGE_BACKEND_LOAD_WAIT="0.5",
        EXPLORER_LOAD_GATE=str(home / "gate"),
    )
    command = [sys.executable, "-c", SERVE_WITH_A_SLOW_BACKEND]
    yield from serving(env, home / "server.log", command)


server = support.server


def test_a_slow_first_load_is_shown_and_waited_for(driver: Any, server: Server, home: Path) -> None:
    from selenium.webdriver.support.ui import Select

    load_example(driver, server, SPORTS)
    assert "loads on first use" in by_id(driver, "backend-select").text
    driver.execute_script("document.body.dataset.state = ''")
    Select(by_id(driver, "backend-select")).select_by_value("fslow")
    shown = wait_until(
        "the page to say that the backend is loading",
        lambda: "loading the fslow backend" in (t := status_text(driver)) and t,
    )
    assert "about 2 s last time" in shown and "tries again" in shown, shown
    assert state(driver) == "loading"
    snap(driver, "backend-loading")
    # asked again on Retry-After: the time so far grows while the load goes on
    wait_until("a second answer", lambda: status_text(driver) != shown)
    assert state(driver) == "loading" and "loading the fslow backend" in status_text(driver)

    (home / "gate").touch()
    wait_ready(driver)
    assert "loading" not in status_text(driver)
    (game,) = example_games(SPORTS)
    found = cells(driver)
    assert len(found) == len(game["turns"]) * len(game["candidates"])
    assert_grid_is(grid(found), posterior_grid(score(server, game, "fslow")))
    snap(driver, "backend-loaded")
