"""What the explorer's browser test modules share besides test_explorer_browser's browser
(its ``driver``, ``browser_paths`` and ``console_clean`` fixtures): a real ``leakage serve``
started in a thread while the browser starts, the server fixtures a module takes by
assigning them (``server_start = support.shared_data_server_start``), and the calls they all
make of the API and the page.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from .conftest import REPO, SHARED_DATA
from .test_service_server import Server, server_env

SHOTS = Path(os.environ.get("EXPLORER_SCREENSHOTS") or REPO / "build" / "explorer-screenshots")
WINDOW = (1280, 900)
TIMEOUT = 45.0  # a request on the 2-core machine under load, the embedding model's first use
CK_ARENA = SHARED_DATA / "ck-arena-dev" / "logs"
"""The real CK-Arena dev logs, read in place by the servers of ``shared_data_server_start``."""


def serving(
    env: dict[str, str], log: Path, command: list[str] | None = None
) -> Iterator[Future[Server]]:
    """``Server(env, log, command)`` starting in a thread (the browser starts meanwhile), for
    a fixture to ``yield from``; stopped at the end when it started."""
    with ThreadPoolExecutor(1) as pool:
        future = pool.submit(Server, env, log, command)
        yield future
        if future.exception() is None:
            future.result().stop()


@pytest.fixture(scope="module")
def shared_data_server_start(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    default_index: Path,
) -> Iterator[Future[Server]]:
    """A co-occurrence server that may read the shared data in place (its jobs by path), its
    home named after the test module (``explorer-models`` for test_explorer_models_browser)."""
    module = request.module.__name__.rsplit(".", 1)[-1]
    name = module.removeprefix("test_").removesuffix("_browser").replace("_", "-")
    home = tmp_path_factory.mktemp(name)
    env = server_env(home, default_index, LEAKAGE_ALLOWED_PATHS=str(SHARED_DATA))
    yield from serving(env, home / "server.log")


@pytest.fixture(scope="module")
def server(server_start: Future[Server]) -> Server:
    """The module's server (its ``server_start`` fixture), once it has started."""
    return server_start.result()


def wait_until(what: str, check: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.05)


@contextmanager
def sized(driver: Any, width: int, height: int) -> Iterator[None]:
    """The browser's window at ``width`` x ``height`` for the block, then set back to
    ``WINDOW`` (whatever the block raised)."""
    driver.set_window_size(width, height)
    try:
        yield
    finally:
        driver.set_window_size(*WINDOW)


def png(driver: Any, name: str) -> Path:
    """The window as it is, as ``$EXPLORER_SCREENSHOTS/<name>.png``."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    path.write_bytes(driver.get_screenshot_as_png())
    return path


def get(server: Server, path: str, **params: Any) -> Any:
    """``GET path`` of the API: its JSON, after a 200."""
    r = httpx.get(server.url + path, params=params, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    return r.json()


def js(driver: Any, script: str, *args: Any) -> Any:
    return driver.execute_script(script, *args)


def wait_done(server: Server, job_id: str, timeout: float = 300) -> str:
    """``job_id`` once the job is done."""
    wait_until(
        f"job {job_id} done",
        lambda: get(server, f"/v1/jobs/{job_id}")["state"] == "done",
        timeout=timeout,
    )
    return job_id


def ck_arena_job(server: Server, timeout: float = 300, **paths: Any) -> str:
    """A job of CK-Arena logs read in place (``path=`` a folder or ``paths=`` a list of
    files), once done."""
    r = httpx.post(
        server.url + "/v1/jobs",
        params={"input_format": "ck-arena"},
        json=paths,
        timeout=TIMEOUT,
    )
    assert r.status_code == 202, r.text
    return wait_done(server, str(r.json()["id"]), timeout)
