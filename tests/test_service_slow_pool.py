"""The slow pool (issue 37): ``/v1/splits`` and the report pages of jobs run on threads of
their own, bounded, with a 503 ``queue_full`` + Retry-After past the bound, while scoring
keeps its threads. The p99 target under load is measured in ``benchmarks/service_splits.py``
(``--scenarios slow_work``), not here."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from leakage_service.errors import QueueFull, SlowQueueFull
from leakage_service.runtime import ScoringPool
from leakage_service.telemetry import Metrics

from .test_service import SPORTS, Api, assert_error, settings_for
from .test_ui_explorer import _finished_job


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory, default_index: Path) -> Iterator[Api]:
    a = Api(settings_for(tmp_path_factory.mktemp("slow"), default_index, slow_queue=0))
    yield a
    a.close()


def test_the_slow_pool_refuses_past_its_bound_with_retry_after():
    metrics = Metrics()
    pool = ScoringPool(1, 1, metrics, slow=True)
    pool.in_flight = 2
    with pytest.raises(SlowQueueFull) as refused:
        pool._admit()
    assert refused.value.status_code == 503 and refused.value.type == "queue_full"
    assert int((refused.value.headers or {})["Retry-After"]) >= 1
    assert "LEAKAGE_SLOW_WORKERS" in refused.value.message
    assert metrics.slow_rejected._value.get() == 1 and metrics.queue_rejected._value.get() == 0
    scoring = ScoringPool(1, 1, metrics)
    scoring.in_flight = 2
    with pytest.raises(QueueFull):
        scoring._admit()
    assert metrics.queue_rejected._value.get() == 1
    names = []
    pool.in_flight = 0
    pool._executor.submit(lambda: names.append(threading.current_thread().name)).result()
    assert names[0].startswith("leakage-slow")
    pool.shutdown()
    scoring.shutdown()


def test_splits_and_report_pages_run_on_the_slow_pool_not_the_scoring_threads(api: Api):
    """With the slow pool full, every slow route is refused at once with Retry-After, and
    a score is still answered: they share no thread."""
    job = _finished_job(api, json.dumps(json.loads(SPORTS)).encode() + b"\n")
    slow = api.state.slow
    assert slow.workers == 1 and slow.limit == 1
    slow.in_flight = slow.limit  # as if a slow request held its one thread
    try:
        for method, url, kw in [
            ("POST", "/v1/splits", {"json": {"pairs": [["sun", "moon"]]}}),
            ("GET", f"/v1/jobs/{job}/report.html", {}),
            ("GET", f"/v1/jobs/{job}/curves", {}),
            ("GET", f"/v1/jobs/{job}/plane", {}),
            ("GET", f"/v1/jobs/{job}/compare", {}),
            ("GET", f"/v1/jobs/{job}/results", {"params": {"format": "parquet"}}),
        ]:
            r = api.request(method, url, **kw)
            err = assert_error(r, 503, "queue_full")
            assert int(r.headers["retry-after"]) >= 1 and "slow" in err["message"], url
        assert api.post("/v1/score", content=SPORTS).status_code == 200
        assert api.get(f"/v1/jobs/{job}/records").status_code == 200
    finally:
        slow.in_flight = 0
    assert api.get(f"/v1/jobs/{job}/report.html").status_code == 200
    metrics = api.get("/metrics").text
    assert "leakage_slow_rejected_total 6.0" in metrics
