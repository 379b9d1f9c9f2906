"""A backend's first load that takes longer than a request may wait (a judge's model: 88 s on
a 2-core machine) is a 503 ``backend_loading`` with Retry-After and the time so far and the
last load's, while the load goes on on its own thread; the request after it is served with
the loaded backend, whose load time is remembered across restarts; a load that fails is
answered with its error, not with "loading" again."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from leakage.backends import base
from leakage.errors import BackendUnavailable

from .conftest import EXAMPLES
from .test_service import Api, assert_error, settings_for

GAME = json.loads((EXAMPLES / "chameleon_sports.json").read_text())


class Overlap:
    """Deterministic: log P(clue | w) is minus the letters the clue and the word do not
    share."""

    name = "fslow"

    def info(self) -> dict[str, str]:
        return {"backend": self.name}

    def loglik(
        self, clues: Sequence[str], candidates: Sequence[str], *, category: str | None = None
    ) -> Any:
        return np.array(
            [[-float(len(set(c) ^ set(w))) for w in candidates] for c in clues], dtype=np.float64
        )


class Gate:
    """What the fake factories wait for, and how often they were called."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.calls: list[str] = []
        self.delay = 0.0


@pytest.fixture
def gate() -> Iterator[Gate]:
    """``fslow`` loads once the gate opens (or after ``delay`` s); ``fbroken`` then fails as a
    missing extra does; ``fbug`` fails as a bug in a factory would."""
    g = Gate()

    def wait(name: str) -> None:
        g.calls.append(name)
        if g.delay:
            time.sleep(g.delay)
        elif not g.open.wait(30):
            raise AssertionError("the test never opened the gate")

    def fslow() -> Overlap:
        wait("fslow")
        return Overlap()

    def fbroken() -> Overlap:
        wait("fbroken")
        raise BackendUnavailable("the fbroken extra is missing: pip install 'leakage[fbroken]'")

    def fbug() -> Overlap:
        wait("fbug")
        raise RuntimeError("a bug in the factory")

    for name, f in [("fslow", fslow), ("fbroken", fbroken), ("fbug", fbug)]:
        base.register_backend(name)(f)
    yield g
    g.open.set()  # a load still waiting ends
    for name in ("fslow", "fbroken", "fbug"):
        base.BACKENDS.pop(name, None)


def _api(home: Path, index: Path, **kw: Any) -> Api:
    return Api(settings_for(home, index, **{"backend_load_wait": 0.2, **kw}))  # not 300 s


def _score(a: Api, backend: str) -> Any:
    return a.post("/v1/score", params={"backend": backend}, json=GAME)


def _until(what: str, check: Any, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _listed(a: Api, name: str) -> dict[str, Any]:
    r = a.get("/v1/backends")
    assert r.status_code == 200, r.text
    return next(b for b in r.json()["backends"] if b["name"] == name)


def test_a_slow_first_load_is_a_503_that_says_so_then_the_backend_serves(
    tmp_path: Path, default_index: Path, gate: Gate
):
    with _api(tmp_path, default_index) as a:
        r = _score(a, "fslow")
        err = assert_error(r, 503, "backend_loading", "backend")
        assert r.headers["retry-after"] == "5"  # no earlier load to go by
        assert err["message"].startswith("loading the fslow backend: 0 s so far, no earlier")
        assert "retry in 5 s" in err["message"]
        assert _listed(a, "fslow")["loading"] is True
        # every request path that uses a backend says the same, and none starts another load
        r = a.post(
            "/v1/score/preview", params={"backend": "fslow"}, json={"transcript": GAME, "clue": "x"}
        )
        assert_error(r, 503, "backend_loading", "backend")
        r = a.post("/v1/score/batch", params={"backend": "fslow"}, json=[GAME])
        assert_error(r, 503, "backend_loading", "backend")
        assert gate.calls == ["fslow"]

        gate.open.set()
        _until("the load to end", lambda: "fslow" in a.state.backends.slots)
        r = _score(a, "fslow")
        assert r.status_code == 200, r.text
        report = r.json()
        assert report["backend"] == "fslow" and len(report["steps"]) == len(GAME["turns"])
        assert gate.calls == ["fslow"]
        listed = _listed(a, "fslow")
        assert listed["loaded"] is True and listed["loading"] is False
        remembered = json.loads((tmp_path / "service" / "backend-loads.json").read_text())
        assert remembered["fslow"] == pytest.approx(listed["load_seconds"], abs=0.01)
        assert listed["last_load_seconds"] == remembered["fslow"]


def test_the_last_load_time_survives_a_restart_and_sets_retry_after(
    tmp_path: Path, default_index: Path, gate: Gate
):
    (tmp_path / "service").mkdir()
    (tmp_path / "service" / "backend-loads.json").write_text('{"fslow": 88.4, "judge": 3}')
    with _api(tmp_path, default_index) as a:
        assert _listed(a, "fslow")["last_load_seconds"] == 88.4
        r = _score(a, "fslow")
        err = assert_error(r, 503, "backend_loading", "backend")
        assert "0 s so far, about 88 s last time" in err["message"]
        assert r.headers["retry-after"] == "10"  # at most 10 s between tries
        gate.open.set()
        _until("the load to end", lambda: "fslow" in a.state.backends.slots)
        assert _score(a, "fslow").status_code == 200
        remembered = json.loads((tmp_path / "service" / "backend-loads.json").read_text())
        assert remembered["fslow"] < 30 and remembered["judge"] == 3  # the others are kept


def test_the_load_does_not_count_against_the_scoring_deadline(
    tmp_path: Path, default_index: Path, gate: Gate
):
    """A load of 1 s inside a request's wait of 5 s is served, though the deadline is 0.5 s:
    the load used to run inside the scoring task and time it out."""
    gate.delay = 1.0
    with _api(tmp_path, default_index, backend_load_wait=5.0, score_timeout=0.5) as a:
        r = _score(a, "fslow")
        assert r.status_code == 200, r.text
        assert r.json()["backend"] == "fslow"


def test_a_failed_load_is_reported_as_its_error_not_as_loading(
    tmp_path: Path, default_index: Path, gate: Gate
):
    with _api(tmp_path, default_index) as a:
        assert_error(_score(a, "fbroken"), 503, "backend_loading", "backend")
        gate.open.set()
        _until("the load to fail", lambda: "fbroken" in a.state.backends.failed)
        for _ in range(2):  # kept until restart: not loaded again
            err = assert_error(_score(a, "fbroken"), 503, "backend_unavailable")
            assert "pip install 'leakage[fbroken]'" in err["message"]
        assert gate.calls == ["fbroken"]
        listed = _listed(a, "fbroken")
        assert listed["available"] is False and listed["loading"] is False
        remembered = json.loads((tmp_path / "service" / "backend-loads.json").read_text())
        assert "fbroken" not in remembered and "cooccurrence" in remembered  # preloaded


def test_a_load_that_fails_unexpectedly_is_reported_once_then_tried_again(
    tmp_path: Path, default_index: Path, gate: Gate
):
    with _api(tmp_path, default_index) as a:
        assert_error(_score(a, "fbug"), 503, "backend_loading", "backend")
        gate.open.set()
        _until("the load to fail", lambda: not a.state.backends.is_loading("fbug"))
        r = _score(a, "fbug")
        assert_error(r, 500, "internal_error")
        assert "a bug in the factory" not in r.text
        assert gate.calls == ["fbug"]
        # the next request loads it again (it fails again, at once now that the gate is open)
        assert_error(_score(a, "fbug"), 500, "internal_error")
        assert gate.calls == ["fbug", "fbug"]
